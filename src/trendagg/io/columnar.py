"""Events as arrays: what the compiled engine reads.

A :class:`ColumnarBatch` holds the same events as an
:class:`~trendagg.io.batch.EventBatch`, in numpy arrays instead of Python
lists: integer-coded event types, times, and per attribute a typed column
(``int``, ``float`` or ``text`` with a validity mask, or ``mixed`` when one
column holds several kinds of values). The compiled kernels
(:mod:`trendagg.kernels`) take their arrays from it without touching one
Python object per event.
"""

from __future__ import annotations

import itertools
import operator
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from trendagg.io.batch import EventBatch, RejectedRow

_INT64_MIN, _INT64_MAX = -(2**63), 2**63 - 1
_EXACT_FLOAT_INT = 2**53  # every integer of at most this size is exactly a float64


@dataclass
class Column:
    """One attribute column.

    Attributes
    ----------
    kind
        ``int`` (int64 values), ``float`` (float64 values), ``text`` (int32
        codes into ``dictionary``) or ``mixed`` (a Python list of values of the
        value model, for columns that hold several kinds).
    values
        The values; where ``valid`` is False the value is a placeholder.
    valid
        True where the event has the attribute.
    dictionary
        The strings of a ``text`` column, indexed by its codes.
    """

    kind: str
    values: Any
    valid: np.ndarray
    dictionary: list[str] | None = None

    def python_values(self) -> list[object]:
        """The column as the value model's Python values (None where missing)."""
        if self.kind == "mixed":
            return list(self.values)
        if self.kind == "text":
            assert self.dictionary is not None
            words = np.array([*self.dictionary, None], dtype=object)
            picked: list[object] = words[np.where(self.valid, self.values, len(words) - 1)].tolist()
            return picked
        values: list[object] = self.values.tolist()
        for i in np.flatnonzero(~self.valid).tolist():
            values[i] = None
        return values

    def take(self, index: np.ndarray | slice) -> Column:
        """The values at ``index`` (a slice gives views, no copy)."""
        if self.kind == "mixed" and not isinstance(index, slice):
            return Column("mixed", [self.values[i] for i in index.tolist()], self.valid[index])
        return Column(self.kind, self.values[index], self.valid[index], self.dictionary)


def column_of(values: Sequence[object]) -> Column:
    """The typed column of a list of value-model values (None = missing)."""
    n = len(values)
    kinds = set(map(type, values))
    if type(None) in kinds:
        kinds.discard(type(None))
        valid = np.fromiter(map(operator.is_not, values, itertools.repeat(None)), np.bool_, n)
        filled = [0 if v is None else v for v in values] if kinds <= {int, float} else values
    else:
        valid, filled = np.ones(n, np.bool_), values
    if kinds <= {int}:
        try:
            return Column("int", np.array(filled, dtype=np.int64), valid)
        except OverflowError:
            pass  # beyond int64: mixed
    elif kinds == {float}:
        return Column("float", np.array(filled, dtype=np.float64), valid)
    elif kinds == {str}:
        codes: dict[object, int] = {None: -1}  # (a missing value: code 0)
        data = np.array([codes.setdefault(v, len(codes) - 1) for v in values], dtype=np.int32)
        data[~valid] = 0
        return Column("text", data, valid, [w for w in codes if w is not None])  # type: ignore[misc]
    return Column("mixed", list(values), valid)


@dataclass
class ColumnarBatch:
    """Events of one source as arrays (see :class:`~trendagg.io.batch.EventBatch`).

    Attributes
    ----------
    types
        int32 code of each event's type, indexing ``type_names``.
    type_names
        The event type names.
    times
        Epoch seconds: int64 when every time is integral, else float64.
    columns
        Attribute name -> :class:`Column` (type and time columns excluded).
    rows
        1-based source row of each event (int64).
    source
        Where the events come from.
    time_ints
        Only with float64 ``times`` that mix kinds: True where the value
        model's time is an ``int`` (a whole number written without a
        fraction, ``5`` beside ``1.5``), so that :meth:`to_events` gives back
        ``5`` and not ``5.0``; None when every time is a float.
    exact_times
        The value model's times, for the rare batches whose times no array
        holds exactly (integers beyond 2**53 beside fractions, or beyond
        int64); ``times`` then holds the nearest floats. None otherwise.
    """

    types: np.ndarray
    type_names: list[str]
    times: np.ndarray
    columns: dict[str, Column] = field(default_factory=dict)
    rows: np.ndarray | None = None
    source: str = ""
    time_ints: np.ndarray | None = None
    exact_times: list[int | float] | None = None

    def __post_init__(self) -> None:
        if self.rows is None:
            self.rows = np.arange(1, len(self.types) + 1, dtype=np.int64)

    def __len__(self) -> int:
        return len(self.types)

    def time_values(self) -> list[int | float]:
        """The times as the value model's Python numbers (int or float per event)."""
        if self.exact_times is not None:
            return list(self.exact_times)
        times = self.times.tolist()
        if self.time_ints is None:
            return times  # type: ignore[no-any-return]
        return [
            int(t) if whole else t for t, whole in zip(times, self.time_ints.tolist(), strict=True)
        ]

    @staticmethod
    def from_events(events: EventBatch) -> ColumnarBatch:
        """The arrays of an :class:`EventBatch` (one pass over its lists)."""
        names: dict[str, int] = {}
        n = len(events)
        types = np.fromiter(
            (names.setdefault(t, len(names)) for t in events.types), dtype=np.int32, count=n
        )
        times, time_ints, exact_times = times_of(events.times)
        return ColumnarBatch(
            types=types,
            type_names=list(names),
            times=times,
            columns={name: column_of(values) for name, values in events.columns.items()},
            rows=np.asarray(events.rows, dtype=np.int64),
            source=events.source,
            time_ints=time_ints,
            exact_times=exact_times,
        )

    def to_events(self) -> EventBatch:
        """The same events as an :class:`EventBatch` of Python lists."""
        names = self.type_names
        assert self.rows is not None
        return EventBatch(
            types=[names[c] for c in self.types.tolist()],
            times=self.time_values(),
            columns={name: col.python_values() for name, col in self.columns.items()},
            rows=self.rows.tolist(),
            source=self.source,
        )

    def take(self, index: np.ndarray | slice) -> ColumnarBatch:
        """The events at ``index`` (in that order; a slice gives views, no copy)."""
        assert self.rows is not None
        return ColumnarBatch(
            types=self.types[index],
            type_names=self.type_names,
            times=self.times[index],
            columns={name: col.take(index) for name, col in self.columns.items()},
            rows=self.rows[index],
            source=self.source,
            time_ints=None if self.time_ints is None else self.time_ints[index],
            exact_times=None
            if self.exact_times is None
            else self.exact_times[index]
            if isinstance(index, slice)
            else [self.exact_times[i] for i in index.tolist()],
        )


def times_of(
    times: Sequence[int | float],
) -> tuple[np.ndarray, np.ndarray | None, list[int | float] | None]:
    """``times``, ``time_ints`` and ``exact_times`` of a list of value-model times."""
    n = len(times)
    kinds = set(map(type, times))
    if kinds <= {int} and all(_INT64_MIN <= t <= _INT64_MAX for t in times):
        return np.fromiter(times, dtype=np.int64, count=n), None, None
    floats = np.fromiter(times, dtype=np.float64, count=n)
    if int not in kinds:
        return floats, None, None
    whole = np.fromiter((type(t) is int for t in times), dtype=np.bool_, count=n)
    if all(abs(t) <= _EXACT_FLOAT_INT for t in times if type(t) is int):
        return floats, whole, None
    return floats, whole, list(times)


@dataclass
class ColumnarResult:
    """What the columnar readers return: the events as arrays and every rejected row."""

    events: ColumnarBatch
    rejected: list[RejectedRow] = field(default_factory=list)


def concat(batches: list[ColumnarBatch]) -> ColumnarBatch:
    """The events of several batches, in order (type codes and dictionaries merged)."""
    if len(batches) == 1:
        return batches[0]
    gather = Gather(sum(map(len, batches)))
    for batch in batches:
        gather.add(ColumnarResult(batch))
    return gather.result(batches[0].source).events


class Gather:
    """Chunks of events into one batch, in arrays allocated once for ``capacity`` rows
    (untouched capacity costs no memory) and doubled if that is not enough, so that a
    file read in chunks is never held twice."""

    def __init__(self, capacity: int) -> None:
        self.capacity = max(int(capacity), 16)
        self.size = 0
        self.type_ids: dict[str, int] = {}
        self.types = np.empty(self.capacity, np.int32)
        self.rows = np.empty(self.capacity, np.int64)
        self.times: np.ndarray = np.empty(self.capacity, np.int64)
        self.time_ints: np.ndarray | None = None  # with float64 times
        self.columns: dict[str, _GatherColumn] = {}
        self.rejected: list[RejectedRow] = []

    def add(self, chunk: ColumnarResult) -> None:
        batch = chunk.events
        self.rejected.extend(chunk.rejected)
        start, end = self.size, self.size + len(batch)
        if end > self.capacity:
            self._grow(end)
        remap = [self.type_ids.setdefault(name, len(self.type_ids)) for name in batch.type_names]
        self.types[start:end] = np.array(remap or [0], np.int32)[batch.types]
        assert batch.rows is not None
        self.rows[start:end] = batch.rows
        self._add_times(batch, start, end)
        for name in batch.columns:
            if name not in self.columns:
                self.columns[name] = _GatherColumn(self.capacity)
        for name, column in self.columns.items():
            column.add(batch.columns.get(name), start, end)
        self.size = end

    def _add_times(self, batch: ColumnarBatch, start: int, end: int) -> None:
        """Times as they come: int64 while every time is an int, else float64 with the
        mask of the ints (every time a reader gives is below 2**43, exact as a float)."""
        floats = batch.times.dtype == np.float64
        if floats and self.time_ints is None:  # (untouched capacity stays untouched)
            self.times = _grown(self.times, self.capacity, start, np.float64)
            self.time_ints = np.zeros(self.capacity, np.bool_)
            self.time_ints[:start] = True
        self.times[start:end] = batch.times
        if self.time_ints is not None:
            whole = batch.time_ints if floats else True
            self.time_ints[start:end] = False if whole is None else whole

    def _grow(self, need: int) -> None:
        self.capacity = max(need, 2 * self.capacity)
        self.types = _grown(self.types, self.capacity, self.size)
        self.rows = _grown(self.rows, self.capacity, self.size)
        self.times = _grown(self.times, self.capacity, self.size)
        if self.time_ints is not None:
            self.time_ints = _grown(self.time_ints, self.capacity, self.size)
        for column in self.columns.values():
            column.grow(self.capacity, self.size)

    def result(self, source: str) -> ColumnarResult:
        n = self.size
        time_ints = self.time_ints
        batch = ColumnarBatch(
            types=self.types[:n],
            type_names=list(self.type_ids),
            times=self.times[:n],
            columns={name: column.result(n) for name, column in self.columns.items()},
            rows=self.rows[:n],
            source=source,
            time_ints=time_ints[:n] if time_ints is not None and time_ints[:n].any() else None,
        )
        return ColumnarResult(batch, self.rejected)


class _GatherColumn:
    """One attribute column being gathered: arrays while the chunks agree on its kind,
    else the value model's list (``mixed``)."""

    def __init__(self, capacity: int) -> None:
        self.kind: str | None = None  # None until a chunk has the column
        self.values: Any = None
        self.valid = np.zeros(capacity, np.bool_)
        self.words: dict[str, int] = {}

    def add(self, column: Column | None, start: int, end: int) -> None:
        if column is None:  # missing for these rows (a file of a dataset without it)
            if self.kind == "mixed":
                self.values.extend([None] * (end - start))
            return
        self.valid[start:end] = column.valid
        if self.kind is None and column.kind != "mixed":
            self.kind = column.kind
            dtype = {"int": np.int64, "float": np.float64, "text": np.int32}[column.kind]
            self.values = np.zeros(len(self.valid), dtype)
        if self.kind == column.kind and column.kind in ("int", "float"):
            self.values[start:end] = column.values
        elif self.kind == column.kind == "text":
            assert column.dictionary is not None
            remap = [self.words.setdefault(word, len(self.words)) for word in column.dictionary]
            self.values[start:end] = np.array(remap or [0], np.int32)[column.values]
        else:
            if self.kind != "mixed":
                self.values = self._list(start)
                self.kind = "mixed"
            self.values.extend(column.python_values())

    def _list(self, size: int) -> list[object]:
        if self.kind is None:
            return [None] * size
        words = list(self.words) if self.kind == "text" else None
        return Column(self.kind, self.values[:size], self.valid[:size], words).python_values()

    def grow(self, capacity: int, size: int) -> None:
        self.valid = _grown(self.valid, capacity, size)
        if isinstance(self.values, np.ndarray):
            self.values = _grown(self.values, capacity, size)

    def result(self, n: int) -> Column:
        if self.kind == "mixed":
            return column_of(self.values)
        if self.kind == "text":
            return Column("text", self.values[:n], self.valid[:n], list(self.words))
        assert self.kind is not None
        return Column(self.kind, self.values[:n], self.valid[:n])


def _grown(array: np.ndarray, capacity: int, size: int, dtype: Any = None) -> np.ndarray:
    bigger = np.zeros(capacity, array.dtype if dtype is None else dtype)
    bigger[:size] = array[:size]
    return bigger


__all__ = [
    "Column",
    "ColumnarBatch",
    "ColumnarResult",
    "Gather",
    "column_of",
    "concat",
    "times_of",
]
