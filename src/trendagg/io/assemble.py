"""Turn converted columns into events, rejecting the rows that cannot be events.

Every reader brings its source into columns of values of the value model
(see :mod:`trendagg.io.values`) and hands them here, so that the rules on
types, times and numeric attributes are written once and hold for CSV, JSON
Lines, Parquet and Python records alike (SEMANTICS.md, "Events").
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping
from typing import cast

from trendagg.errors import InputError
from trendagg.io.batch import EventBatch, ReadResult, RejectedRow
from trendagg.io.values import (
    iso_column,
    json_text,
    normalize_value,
    shown,
    time_value,
    type_text,
)
from trendagg.limits import time_in_range

_MAX_LISTED_COLUMNS = 20
_VECTOR_MIN = 32  # fewer ISO texts than this are parsed in Python (no pyarrow import)


def column_list(names: Iterable[str]) -> str:
    """Column names as shown in messages: ``[type, time, ...]``."""
    names = list(names)
    listed = ", ".join(names[:_MAX_LISTED_COLUMNS])
    if len(names) > _MAX_LISTED_COLUMNS:
        listed += f", ... ({len(names)} columns)"
    return f"[{listed}]"


def check_event_type(event_type: str | None) -> None:
    """Raise :class:`InputError` unless ``event_type`` is None or a non-blank name."""
    if event_type is None:
        return
    if not isinstance(event_type, str) or not event_type.strip():
        raise InputError(
            f"the event type given for every row must be a non-empty name, not {event_type!r}; "
            "pass one such as --event-type Stock, or leave it out to read types from a column"
        )


def check_columns(
    names: Iterable[str], *, source: str, type_col: str, time_col: str, event_type: str | None
) -> None:
    """Raise :class:`InputError` unless the columns the events need are present.

    The time column always; the type column only when ``event_type`` is None
    (with an event type for every row, ``type_col`` is not used).
    """
    names = list(names)
    if event_type is None:
        if type_col == time_col:
            raise InputError(
                f"the type and time columns are both '{type_col}'; pass different "
                "--type-col and --time-col"
            )
        if type_col not in names:
            raise InputError(
                f"type column '{type_col}' not found in {source}; columns are "
                f"{column_list(names)}; pass --type-col, or pass --event-type NAME if every "
                "row has the same type"
            )
    if time_col not in names:
        raise InputError(
            f"time column '{time_col}' not found in {source}; columns are "
            f"{column_list(names)}; pass --time-col"
        )


def assemble(
    *,
    source: str,
    names: list[str],
    columns: Mapping[str, list[object]],
    rows: list[int],
    record_of: Callable[[int], dict[str, object]],
    type_col: str,
    time_col: str,
    event_type: str | None,
    numeric: Mapping[str, Iterable[str]] | None,
    rejected: Iterable[RejectedRow] = (),
) -> ReadResult:
    """Validate converted columns and split them into events and rejected rows.

    Parameters
    ----------
    source
        Name of the source, for messages and rejected rows.
    names
        All column names of the source, in order (type and time included).
    columns
        Name -> converted values, one per row; the type column may hold any
        value (it is turned into text), the time column numbers or text.
        With ``event_type`` given, the column named ``type_col`` (if any) is
        an attribute like the others.
    rows
        1-based source row of each value position.
    record_of
        Returns the raw record of a value position, for rejected rows.
    type_col, time_col
        Names of the type and time columns.
    event_type
        The event type of every row, or None to take it from ``type_col``
        (rows without one are then rejected).
    numeric
        Event type -> attributes read numerically by the queries.
    rejected
        Rows the reader already rejected while parsing (merged in row order).

    Returns
    -------
    ReadResult
        The events, and the rejected rows sorted by row number.
    """
    check_event_type(event_type)
    if names or rows:
        check_columns(
            names, source=source, type_col=type_col, time_col=time_col, event_type=event_type
        )
    size = len(rows)
    bad: dict[int, str] = {}
    types: list[str | None]
    if event_type is None:
        types = _types(columns.get(type_col, [None] * size))
        if None in types:
            for i, kind in enumerate(types):
                if kind is None:
                    bad[i] = f"no event type in column '{type_col}'"
        not_attributes = {type_col, time_col}
    else:
        types = [event_type] * size
        not_attributes = {time_col}
    times = list(columns.get(time_col, [None] * size))
    if not _all_numbers(times):
        _parse_times(times, time_col, bad)
    attributes = {name: values for name, values in columns.items() if name not in not_attributes}
    if numeric:
        _check_numeric(attributes, types, numeric, bad)
    found = [RejectedRow(source, rows[i], bad[i], record_of(i)) for i in sorted(bad)]
    earlier = list(rejected)
    if earlier:
        found = sorted(earlier + found, key=lambda rejected_row: rejected_row.row)
    if bad:
        keep = [i for i in range(size) if i not in bad]
        types = [types[i] for i in keep]
        times = [times[i] for i in keep]
        attributes = {name: [values[i] for i in keep] for name, values in attributes.items()}
        rows = [rows[i] for i in keep]
    else:
        attributes = {name: list(values) for name, values in attributes.items()}
        rows = list(rows)
    batch = EventBatch(
        cast(list[str], types), cast(list[int | float], times), attributes, rows, source
    )
    return ReadResult(batch, found)


def _types(values: list[object]) -> list[str | None]:
    """Event types as text; None for missing or blank ones."""
    if set(map(type, values)) == {str}:
        texts = cast(list[str], values)
        if all(map(str.strip, texts)):
            return list(texts)
    return [
        value if isinstance(value, str) and value.strip() else type_text(value) for value in values
    ]


def _all_numbers(values: list[object]) -> bool:
    """True when every value is an int or a finite float, each a time in range (the
    common case)."""
    if not values:
        return True
    kinds = set(map(type, values))
    if not kinds <= {int, float}:
        return False
    numbers = cast(list[float], values)
    if float in kinds and not all(map(math.isfinite, numbers)):
        return False
    return time_in_range(min(numbers)) and time_in_range(max(numbers))


def _parse_times(times: list[object], time_col: str, bad: dict[int, str]) -> None:
    """Convert times in place to epoch seconds; record a reason for each bad one.

    Columns of ISO-8601 text are converted by pyarrow in one go when they all
    have a plain shape; the rest, value by value.
    """
    texts = [(i, value) for i, value in enumerate(times) if isinstance(value, str) and i not in bad]
    if len(texts) >= _VECTOR_MIN:
        converted = iso_column([text for _, text in texts])
        if converted is not None:
            for (i, _), seconds in zip(texts, converted, strict=True):
                times[i] = seconds
    for i, value in enumerate(times):
        kind = type(value)
        if (kind is int or (isinstance(value, float) and math.isfinite(value))) and time_in_range(
            value
        ):
            continue
        if i in bad:
            continue
        if value is None or (isinstance(value, str) and not value.strip()):
            bad[i] = f"no time in column '{time_col}'"
            continue
        try:
            times[i] = time_value(value)
        except ValueError as error:
            bad[i] = str(error)


def _check_numeric(
    attributes: Mapping[str, list[object]],
    types: list[str | None],
    numeric: Mapping[str, Iterable[str]],
    bad: dict[int, str],
) -> None:
    """Reject rows whose numerically-read attributes hold text.

    Missing values are fine: the engine does not bind such an event to the
    variable (SEMANTICS.md, "Predicates"), which is the query's meaning, not
    an input error.
    """
    readers: dict[str, set[str]] = {}
    for event_type, names in numeric.items():
        for name in names:
            readers.setdefault(name, set()).add(str(event_type))
    for name, event_types in readers.items():
        values = attributes.get(name)
        if values is None or set(map(type, values)) <= {int, float, type(None)}:
            continue
        for i, value in enumerate(values):
            kind = type(value)
            if value is None or kind is int or kind is float:
                continue
            if i in bad or types[i] not in event_types:
                continue
            bad[i] = (
                f"attribute '{name}' is '{shown(value)}', not a number "
                "(the queries read it numerically)"
            )


def from_mappings(
    numbered: Iterable[tuple[int, object]],
    *,
    source: str,
    type_col: str,
    time_col: str,
    event_type: str | None,
    numeric: Mapping[str, Iterable[str]] | None,
    what: str,
    rejected: Iterable[RejectedRow] = (),
    parsed_json: bool = False,
) -> ReadResult:
    """Events from (row number, mapping) pairs: JSON Lines and Python records.

    Columns are the union of the keys in first-appearance order; a key absent
    from a record is a missing value. An item that is not a mapping is
    rejected ("line is an array, not an object"). ``parsed_json`` says that
    the mappings are dicts with text keys (fresh from ``json``). With
    ``event_type`` given every mapping is an event of that type and
    ``type_col`` is an ordinary key.
    """
    check_event_type(event_type)
    earlier = list(rejected)
    records: list[dict[str, object]] = []
    rows: list[int] = []
    names: dict[str, None] = {}
    last_keys: object = None
    for row, record in numbered:
        if type(record) is not dict and not isinstance(record, Mapping):
            earlier.append(
                RejectedRow(
                    source,
                    row,
                    f"{what} is {_kind(record)}, not an object",
                    {"_text": json_text(record, compact=True, ensure_ascii=False)},
                )
            )
            continue
        if not parsed_json and (
            type(record) is not dict or not all(type(key) is str for key in record)
        ):
            record = {str(key): value for key, value in record.items()}
        keys = record.keys()
        if keys != last_keys:
            names.update(dict.fromkeys(keys))
            last_keys = keys
        records.append(cast(dict[str, object], record))
        rows.append(row)
    columns: dict[str, list[object]] = {}
    for name in names:
        values = [record.get(name) for record in records]
        if _needs_normalizing(values):
            values = [normalize_value(value) for value in values]
        columns[name] = values
    return assemble(
        source=source,
        names=list(names),
        columns=columns,
        rows=rows,
        record_of=records.__getitem__,
        type_col=type_col,
        time_col=time_col,
        event_type=event_type,
        numeric=numeric,
        rejected=earlier,
    )


def _needs_normalizing(values: list[object]) -> bool:
    kinds = set(map(type, values))
    if not kinds <= {str, int, float, type(None)}:
        return True
    if float not in kinds:
        return False
    floats = [value for value in values if isinstance(value, float)]
    return not all(map(math.isfinite, floats))


def _kind(value: object) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, list | tuple):
        return "an array"
    return f"a {type(value).__name__}"


def from_records(
    records: Iterable[Mapping[str, object]],
    *,
    type_col: str = "type",
    time_col: str = "time",
    event_type: str | None = None,
    source: str = "<records>",
    numeric: Mapping[str, Iterable[str]] | None = None,
) -> ReadResult:
    """Build events from Python mappings with the JSON Lines rules.

    Values are brought into the value model as JSON values are (booleans
    become ``'true'``/``'false'``, nested values their JSON text), times
    may be numbers, ISO-8601 strings, or ``datetime``/``date`` objects.
    Rows are numbered from 1 in iteration order.

    Parameters
    ----------
    records
        One mapping per event.
    type_col, time_col
        Keys that hold the event type and time.
    event_type
        When given, every record is an event of this type: no type key
        is needed, and ``type_col``, if present, is an attribute like
        any other key.
    source
        Name used in messages and rejected rows.
    numeric
        Event type -> attributes that the queries read numerically; a
        present non-number value of such an attribute rejects the row.

    Returns
    -------
    ReadResult
        The events and the rejected records.

    Raises
    ------
    InputError
        When there are records but none has the type key (unless
        ``event_type`` is given) or the time key, or when ``event_type``
        is empty.
    """
    return from_mappings(
        enumerate(records, start=1),
        source=source,
        type_col=type_col,
        time_col=time_col,
        event_type=event_type,
        numeric=numeric,
        what="record",
    )
