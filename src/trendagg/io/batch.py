"""Events as arrays, the one event model, and the rows that could not become events.

An :class:`EventBatch` is what every reader returns and what every engine
consumes: integer-coded event types, times, and per attribute a typed
:class:`Column` (``int``, ``float`` or ``text`` with a validity mask, or ``mixed``
when one column holds several kinds of values), so that a million events cost a
few arrays and not a million dicts. Python values appear only at the edges:
:meth:`EventBatch.of` makes a batch of lists, :meth:`EventBatch.records` gives
the events one by one to the readable reference engines. Rows that cannot be
used are never dropped silently: they come back as :class:`RejectedRow` next to
the batch, in a :class:`ReadResult`.
"""

from __future__ import annotations

import itertools
import math
import operator
from collections.abc import Collection, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

import numpy as np

_INT64_MIN, _INT64_MAX = -(2**63), 2**63 - 1
_EXACT_FLOAT_INT = 2**53  # every integer of at most this size is exactly a float64

_SAFE = 2**62  # scaled times stay below this
Time = int | float | Fraction  # a time in the value model: seconds, exactly this number
Record = tuple[str, Time, dict[str, object]]  # (type, time, attributes) of one event
# Units of the times of a batch whose times have decimal fractions of a second (ISO-8601
# text, Arrow timestamps): the coarsest that holds every one of them exactly.
TICKS = (10**3, 10**6, 10**9)


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
class EventBatch:
    """Events of one source, as arrays.

    Attributes
    ----------
    types
        int32 code of each event's type, indexing ``type_names``.
    type_names
        The event type names.
    times
        Epoch seconds, exactly (docs/semantics.md, "Events"): int64 counts of
        ``1/per_second`` seconds (whole seconds, or ticks of a millisecond,
        microsecond or nanosecond for timestamps with fractions of a second), or
        float64 seconds for numbers with a fraction (each float the binary fraction it
        is). :meth:`time_at` and :meth:`time_values` give them as the value model's
        numbers; :meth:`ticks_before` compares them with a time in seconds.
    columns
        Attribute name -> :class:`Column` (type and time columns excluded).
    rows
        1-based data-row number of each event in its source (int64; CSV: data
        row, header excluded; JSON Lines: line number; Parquet: row in its
        file), so that messages can point back at the input.
    source
        Where the events come from (a path, or ``<records>``).
    time_ints
        Only with float64 ``times`` that mix kinds: True where the value
        model's time is an ``int`` (a whole number written without a
        fraction, ``5`` beside ``1.5``), so that :meth:`time_values` gives back
        ``5`` and not ``5.0``; None when every time is a float.
    exact_times
        The value model's times, for the rare batches whose times no array
        holds exactly (integers beyond 2**53 beside fractions, or beyond
        int64; timestamps with fractions of a second beside numbers with
        fractions, or whose ticks would pass 2**62); ``times`` then holds the
        nearest floats, which order the events but for ties, and the engines
        read these where times must be exact (:meth:`order`, :meth:`time_at`,
        :meth:`ticks_before`, the kernel's time groups and windows). None otherwise.
    per_second
        With int64 ``times``: how many of them make a second (1, 10**3, 10**6 or
        10**9); 1 with float64 ``times``.
    """

    types: np.ndarray
    type_names: list[str]
    times: np.ndarray
    columns: dict[str, Column] = field(default_factory=dict)
    rows: np.ndarray | None = None
    source: str = ""
    time_ints: np.ndarray | None = None
    exact_times: list[Time] | None = None
    per_second: int = 1

    def __post_init__(self) -> None:
        if self.rows is None:
            self.rows = np.arange(1, len(self.types) + 1, dtype=np.int64)
        size = len(self.types)
        lengths = {len(self.times), len(self.rows), *(len(c.valid) for c in self.columns.values())}
        if lengths - {size}:
            raise ValueError(
                f"EventBatch columns differ in length: {size} types, {len(self.times)} times, "
                f"{len(self.rows)} rows, columns "
                f"{ {name: len(c.valid) for name, c in self.columns.items()} }"
            )

    def __len__(self) -> int:
        return len(self.types)

    @staticmethod
    def of(
        types: Sequence[str],
        times: Sequence[Time],
        columns: Mapping[str, Sequence[object]] | None = None,
        rows: Sequence[int] | None = None,
        source: str = "",
    ) -> EventBatch:
        """The batch of events given as lists: a type and a time per event, and per
        attribute one value of the value model per event (None: the event lacks it)."""
        names: dict[str, int] = {}
        n = len(types)
        codes = np.fromiter((names.setdefault(t, len(names)) for t in types), np.int32, n)
        times_, time_ints, exact_times, per_second = times_of(times)
        return EventBatch(
            types=codes,
            type_names=list(names),
            times=times_,
            columns={name: column_of(values) for name, values in (columns or {}).items()},
            rows=None if rows is None else np.asarray(rows, dtype=np.int64),
            source=source,
            time_ints=time_ints,
            exact_times=exact_times,
            per_second=per_second,
        )

    def type_values(self) -> list[str]:
        """Each event's type name."""
        names = self.type_names
        return [names[code] for code in self.types.tolist()]

    def time_values(self) -> list[Time]:
        """The times as the value model's Python numbers (int, float or, for a fraction
        of a second in ticks, Fraction per event)."""
        if self.exact_times is not None:
            return list(self.exact_times)
        times = self.times.tolist()
        if self.per_second != 1:
            return [tick_time(t, self.per_second) for t in times]
        if self.time_ints is None:
            return times  # type: ignore[no-any-return]
        return [
            int(t) if whole else t for t, whole in zip(times, self.time_ints.tolist(), strict=True)
        ]

    def time_at(self, i: int) -> Time:
        """The time of event ``i`` (negative counts from the end), in seconds, exactly."""
        if self.exact_times is not None:
            return self.exact_times[i]
        t = self.times[i].item()
        return t if self.per_second == 1 else tick_time(t, self.per_second)

    def ticks_before(self, t: Time) -> np.ndarray:
        """Which events are earlier than ``t`` seconds (exactly, whatever the unit)."""
        if self.exact_times is not None:
            return np.fromiter((x < t for x in self.exact_times), np.bool_, len(self))
        if self.per_second == 1 or isinstance(t, float) and not math.isfinite(t):
            return self.times < t  # type: ignore[no-any-return]
        return self.times < math.ceil(Fraction(t) * self.per_second)

    def order(self) -> np.ndarray | None:
        """The stable permutation that sorts the events by time, exactly; None when they
        are sorted already."""
        if self.exact_times is not None:
            exact = self.exact_times
            if all(a <= b for a, b in itertools.pairwise(exact)):
                return None
            return np.array(sorted(range(len(exact)), key=exact.__getitem__), dtype=np.int64)
        times = self.times
        if np.all(times[:-1] <= times[1:]):
            return None
        return np.argsort(times, kind="stable")

    def records(self, names: Collection[str] | None = None) -> list[Record]:
        """The events one by one, as the reference engines read them: (type, time,
        attributes the event has), of the columns in ``names`` (None: every column)."""
        return list(self.iter_records(names))

    def iter_records(self, names: Collection[str] | None = None) -> Iterator[Record]:
        """The records of :meth:`records`, each made as it is asked for (a chunk's events
        are not all held as Python objects at once)."""
        columns = [
            (name, column.python_values())
            for name, column in self.columns.items()
            if names is None or name in names
        ]
        for i, (kind, time) in enumerate(zip(self.type_values(), self.time_values(), strict=True)):
            yield kind, time, {name: values[i] for name, values in columns if values[i] is not None}

    def take(self, index: np.ndarray | slice) -> EventBatch:
        """The events at ``index`` (in that order; a slice gives views, no copy)."""
        assert self.rows is not None
        return EventBatch(
            types=self.types[index],
            type_names=self.type_names,
            times=self.times[index],
            columns={name: col.take(index) for name, col in self.columns.items()},
            rows=self.rows[index],
            source=self.source,
            time_ints=None if self.time_ints is None else self.time_ints[index],
            per_second=self.per_second,
            exact_times=None
            if self.exact_times is None
            else self.exact_times[index]
            if isinstance(index, slice)
            else [self.exact_times[i] for i in index.tolist()],
        )


def times_of(
    times: Sequence[Time],
) -> tuple[np.ndarray, np.ndarray | None, list[Time] | None, int]:
    """``times``, ``time_ints``, ``exact_times`` and ``per_second`` of a list of
    value-model times."""
    n = len(times)
    kinds = set(map(type, times))
    if kinds <= {int} and all(_INT64_MIN <= t <= _INT64_MAX for t in times):
        return np.fromiter(times, dtype=np.int64, count=n), None, None, 1
    if Fraction in kinds and kinds <= {int, Fraction}:  # timestamps: ticks, else exact_times
        for p in TICKS:
            scaled = [Fraction(t) * p for t in times]
            if all(x.denominator == 1 for x in scaled):
                ticks = [int(x) for x in scaled]
                if all(abs(x) < _SAFE for x in ticks):
                    return np.array(ticks, dtype=np.int64), None, None, p
                break
    floats = np.fromiter(map(float, times), dtype=np.float64, count=n)
    if int not in kinds:
        return floats, None, None if Fraction not in kinds else list(times), 1
    whole = np.fromiter((type(t) is int for t in times), dtype=np.bool_, count=n)
    if Fraction not in kinds and all(abs(t) <= _EXACT_FLOAT_INT for t in times if type(t) is int):
        return floats, whole, None, 1
    return floats, whole, list(times), 1


def tick_time(tick: int, per_second: int) -> int | Fraction:
    """A tick of ``1/per_second`` s as the value model's time: an int when whole."""
    return tick // per_second if tick % per_second == 0 else Fraction(tick, per_second)


def rescaled(times: np.ndarray, per_second: int, to: int) -> np.ndarray | None:
    """Int64 ticks of ``1/per_second`` s as ticks of ``1/to`` s (``to`` a multiple of
    ``per_second``), or None where a product could pass 2**62."""
    factor = to // per_second
    if factor == 1:
        return times
    biggest = int(np.max(np.abs(times))) if len(times) else 0
    return None if biggest * factor >= _SAFE else times * factor


def float_below(t: Time) -> float:
    """The largest float at most ``t`` (``t`` itself when it is one): a bound that
    never passes the time it stands for."""
    f = float(t)
    return math.nextafter(f, -math.inf) if not isinstance(t, float) and f > t else f


def tick_seconds(ticks: np.ndarray, per_second: int) -> tuple[np.ndarray, np.ndarray]:
    """Ticks of ``1/per_second`` s as float seconds (each the nearest float: numpy's
    division rounds once while |tick| <= 2**53, Python's int division beyond), and which
    of them are whole seconds."""
    whole = ticks % per_second == 0
    floats = ticks / per_second
    for i in np.flatnonzero(np.abs(ticks) > _EXACT_FLOAT_INT).tolist():
        floats[i] = int(ticks[i]) / per_second
    return floats, whole


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
    text
        The row's JSON object as the input wrote it (a JSON Lines line), or None: the
        rejects file writes it as it is, so that every value comes back as written
        (``NaN``, ``1e309``, ``2.50``), which no parsed value keeps.
    """

    source: str
    row: int
    reason: str
    record: dict[str, object]
    text: str | None = None


@dataclass(frozen=True)
class Stamps:
    """What the times of some events were written as, so that results can give their
    window bounds the same type (:class:`~trendagg.io.results.Results`).

    Attributes
    ----------
    dated
        Every time was a timestamp: ISO-8601 text, a ``datetime`` or ``date``, an Arrow
        timestamp or date (numbers and durations are not).
    zone
        The time zone of an Arrow timestamp time column (a pandas or polars one too);
        None for naive timestamps and text, which the readers read as UTC.
    """

    dated: bool
    zone: str | None = None

    def join(self, other: Stamps | None) -> Stamps:
        """The stamps of these events and ``other``'s (None: no events): dated when both
        are, in their zone when they share it, else in UTC."""
        if other is None:
            return self
        zone = self.zone if self.zone == other.zone else "UTC"
        return Stamps(self.dated and other.dated, zone)


@dataclass
class ReadResult:
    """What a reader returns: the usable events, every rejected row, and what the events'
    times were written as (None without events, or when not known: see :class:`Stamps`)."""

    events: EventBatch
    rejected: list[RejectedRow] = field(default_factory=list)
    stamps: Stamps | None = None


__all__ = [
    "TICKS",
    "Column",
    "EventBatch",
    "ReadResult",
    "Record",
    "RejectedRow",
    "Stamps",
    "Time",
    "column_of",
    "float_below",
    "rescaled",
    "tick_seconds",
    "tick_time",
    "times_of",
]
