"""Events in columns, and the rows that could not become events.

An :class:`EventBatch` is what every reader returns and what the engine
consumes: one list per column, so that a million events cost a few lists and
not a million dicts. Rows that cannot be used are never dropped silently: they
come back as :class:`RejectedRow` next to the batch, in a :class:`ReadResult`.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class EventBatch:
    """Events of one source, column by column.

    Attributes
    ----------
    types
        Event type of each event (always a string).
    times
        Epoch seconds of each event: ``int`` when integral in the source,
        else ``float`` (see SEMANTICS.md, "Events").
    columns
        Attribute name -> one value per event; ``None`` means the event lacks
        the attribute. The type and time columns are not included.
    rows
        1-based data-row number of each event in its source (CSV: data row,
        header excluded; JSON Lines: line number; Parquet: row in its file),
        so that messages can point back at the input.
    source
        Where the events come from (a path, or ``<records>``).
    """

    types: list[str]
    times: list[int | float]
    columns: dict[str, list[object]] = field(default_factory=dict)
    rows: list[int] = field(default_factory=list)
    source: str = ""

    def __post_init__(self) -> None:
        size = len(self.types)
        if not self.rows and size:
            self.rows = list(range(1, size + 1))
        lengths = {len(self.times), len(self.rows), *(len(v) for v in self.columns.values())}
        if lengths - {size}:
            raise ValueError(
                f"EventBatch columns differ in length: {size} types, {len(self.times)} times, "
                f"{len(self.rows)} rows, columns "
                f"{ {name: len(values) for name, values in self.columns.items()} }"
            )

    def __len__(self) -> int:
        return len(self.types)

    def attrs(self, i: int) -> dict[str, object]:
        """The attributes that event ``i`` has (its non-missing values)."""
        return {name: values[i] for name, values in self.columns.items() if values[i] is not None}


@dataclass(frozen=True)
class RejectedRow:
    """A source row that did not become an event, and why.

    Attributes
    ----------
    source
        File (or ``<records>``) the row comes from.
    row
        1-based data-row number (CSV data row, JSON Lines line, Parquet row).
    reason
        What is wrong, in words that say what to fix.
    record
        The row as it was read: raw cell texts for CSV, the parsed object for
        JSON (``{'_text': line}`` when the line is not a JSON object).
    """

    source: str
    row: int
    reason: str
    record: dict[str, object]


@dataclass
class ReadResult:
    """What a reader returns: the usable events and every rejected row."""

    events: EventBatch
    rejected: list[RejectedRow] = field(default_factory=list)
