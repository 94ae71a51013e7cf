"""How to read events: which columns hold the type and the time, what the queries need."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from trendagg.errors import InputError
from trendagg.io.values import shown

_MAX_LISTED_COLUMNS = 20


@dataclass(frozen=True)
class ReadOptions:
    """The options of every reader.

    ``type_col`` and ``time_col`` hold the event type and time. ``event_type`` is
    the type of every row, for sources of one kind of event (daily stock prices as
    ``'Stock'``): no type column is needed then, and a column named ``type_col`` is
    an attribute. ``numeric``: event type -> attributes the queries read numerically
    (sums, arithmetic): a present value there that is no number rejects the row,
    a missing one is kept. ``columns``: the names of the columns of a CSV file
    without a header row, in order (its first line is then data). ``attributes``:
    the attribute columns to convert and keep, with those of ``numeric`` (None
    keeps all); any iterables, kept as a tuple and a frozenset.
    """

    type_col: str = "type"
    time_col: str = "time"
    event_type: str | None = None
    numeric: Mapping[str, Iterable[str]] | None = None
    columns: Sequence[str] | None = None
    attributes: Iterable[str] | None = None

    def __post_init__(self) -> None:
        if self.columns is not None:
            object.__setattr__(self, "columns", tuple(self.columns))
        if self.attributes is not None:
            object.__setattr__(self, "attributes", frozenset(self.attributes))

    def check(self) -> None:
        """Raise :class:`InputError` unless ``event_type`` is None or a non-blank name."""
        kind = self.event_type
        if kind is not None and (not isinstance(kind, str) or not kind.strip()):
            raise InputError(
                f"the event type given for every row must be a non-empty name, not {shown(repr(kind))}; "
                "pass one such as --event-type Stock, or leave it out to read types from a column"
            )

    def check_columns(self, names: Iterable[str], source: str) -> None:
        """Raise :class:`InputError` unless the columns the events need are present:
        the time column always, the type column only without ``event_type``."""
        names = list(names)
        if self.event_type is None:
            if self.type_col == self.time_col:
                raise InputError(
                    f"the type and time columns are both '{shown(self.type_col)}'; pass different "
                    "--type-col and --time-col"
                )
            if self.type_col not in names:
                raise InputError(
                    f"type column '{shown(self.type_col)}' not found in {source}; columns are "
                    f"{column_list(names)}; pass --type-col, or pass --event-type NAME if "
                    "every row has the same type"
                )
        if self.time_col not in names:
            raise InputError(
                f"time column '{shown(self.time_col)}' not found in {source}; columns are "
                f"{column_list(names)}; pass --time-col"
            )

    def needed(self) -> set[str]:
        """The columns that are no attribute: the time column, and the type column
        without ``event_type``."""
        return {self.time_col} if self.event_type is not None else {self.type_col, self.time_col}

    def kept(self) -> frozenset[str] | None:
        """The attribute columns kept: ``attributes`` and those of ``numeric`` (None: all)."""
        if self.attributes is None:
            return None
        return frozenset(self.attributes).union(*(self.numeric or {}).values())


def column_list(names: Iterable[str]) -> str:
    """Column names as shown in messages: ``[type, time, ...]``."""
    names = list(names)
    listed = ", ".join(map(shown, names[:_MAX_LISTED_COLUMNS]))
    if len(names) > _MAX_LISTED_COLUMNS:
        listed += f", ... ({len(names)} columns)"
    return f"[{listed}]"
