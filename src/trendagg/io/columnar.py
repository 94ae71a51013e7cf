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

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from trendagg.io.batch import EventBatch, RejectedRow

KINDS = ("int", "float", "text", "mixed")
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
            words = self.dictionary
            return [
                words[c] if ok else None
                for c, ok in zip(self.values.tolist(), self.valid.tolist(), strict=True)
            ]
        return [
            v if ok else None
            for v, ok in zip(self.values.tolist(), self.valid.tolist(), strict=True)
        ]

    def take(self, index: np.ndarray | slice) -> Column:
        """The values at ``index`` (a slice gives views, no copy)."""
        if self.kind == "mixed" and not isinstance(index, slice):
            return Column("mixed", [self.values[i] for i in index.tolist()], self.valid[index])
        return Column(self.kind, self.values[index], self.valid[index], self.dictionary)


def column_of(values: Sequence[object]) -> Column:
    """The typed column of a list of value-model values (None = missing)."""
    n = len(values)
    valid = np.fromiter((v is not None for v in values), dtype=np.bool_, count=n)
    kinds = {type(v) for v in values if v is not None}
    if kinds <= {int}:
        if all(-(2**63) <= v < 2**63 for v in values if v is not None):  # type: ignore[operator]
            data = np.fromiter((0 if v is None else v for v in values), dtype=np.int64, count=n)
            return Column("int", data, valid)
    elif kinds == {float}:
        data = np.fromiter((0.0 if v is None else v for v in values), dtype=np.float64, count=n)
        return Column("float", data, valid)
    elif kinds == {str}:
        codes: dict[str, int] = {}
        data = np.fromiter(
            (0 if v is None else codes.setdefault(v, len(codes)) for v in values),  # type: ignore[arg-type]
            dtype=np.int32,
            count=n,
        )
        return Column("text", data, valid, list(codes))
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


def _concat_columns(cols: list[Column | None], sizes: list[int]) -> Column:
    """One column from pieces (None: a piece without the attribute)."""
    kinds = {c.kind for c in cols if c is not None}
    valid = np.concatenate(
        [
            c.valid if c is not None else np.zeros(n, dtype=np.bool_)
            for c, n in zip(cols, sizes, strict=True)
        ]
    )
    if len(kinds) == 1 and kinds <= {"int", "float"}:
        kind = kinds.pop()
        dtype = np.int64 if kind == "int" else np.float64
        values = np.concatenate(
            [
                c.values if c is not None else np.zeros(n, dtype=dtype)
                for c, n in zip(cols, sizes, strict=True)
            ]
        )
        return Column(kind, values, valid)
    if kinds == {"text"}:
        words: dict[str, int] = {}
        parts = []
        for c, n in zip(cols, sizes, strict=True):
            if c is None:
                parts.append(np.zeros(n, dtype=np.int32))
                continue
            assert c.dictionary is not None
            remap = np.array(
                [words.setdefault(w, len(words)) for w in c.dictionary] or [0], dtype=np.int32
            )
            parts.append(remap[c.values] if len(c.values) else np.zeros(0, dtype=np.int32))
        return Column("text", np.concatenate(parts), valid, list(words))
    values: list[object] = []
    for c, n in zip(cols, sizes, strict=True):
        values.extend(c.python_values() if c is not None else [None] * n)
    return column_of(values)


def concat(batches: list[ColumnarBatch]) -> ColumnarBatch:
    """The events of several batches, in order (type codes and dictionaries merged)."""
    if len(batches) == 1:
        return batches[0]
    names: dict[str, int] = {}
    types = []
    for b in batches:
        remap = np.array(
            [names.setdefault(t, len(names)) for t in b.type_names] or [0], dtype=np.int32
        )
        types.append(remap[b.types] if len(b.types) else np.zeros(0, dtype=np.int32))
    if all(b.times.dtype.kind == "i" for b in batches):
        times = np.concatenate([b.times for b in batches])
    else:
        times = np.concatenate([b.times.astype(np.float64) for b in batches])
    sizes = [len(b) for b in batches]
    attrs: list[str] = []
    for b in batches:
        attrs.extend(a for a in b.columns if a not in attrs)
    return ColumnarBatch(
        types=np.concatenate(types),
        type_names=list(names),
        times=times,
        columns={a: _concat_columns([b.columns.get(a) for b in batches], sizes) for a in attrs},
        rows=np.concatenate([b.rows for b in batches if b.rows is not None]),
        source=batches[0].source,
    )


__all__ = [
    "KINDS",
    "Column",
    "ColumnarBatch",
    "ColumnarResult",
    "column_of",
    "concat",
    "times_of",
]
