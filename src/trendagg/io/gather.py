"""Chunks of events gathered into one :class:`~trendagg.io.batch.EventBatch`: a file
read in chunks, or a held-back time group and the chunk that goes on with it."""

from __future__ import annotations

from typing import Any

import numpy as np

from trendagg.io.batch import (
    Column,
    EventBatch,
    ReadResult,
    RejectedRow,
    Stamps,
    Time,
    column_of,
    rescaled,
    tick_seconds,
)


def concat(batches: list[EventBatch]) -> EventBatch:
    """The events of several batches, in order (type codes and dictionaries merged)."""
    if len(batches) == 1:
        return batches[0]
    gather = Gather(sum(map(len, batches)))
    for batch in batches:
        gather.add(ReadResult(batch))
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
        self.per_second = 1  # with int64 times: ticks of a second
        self.exact: list[Time] | None = None  # the exact times, where the floats are not
        self.columns: dict[str, _GatherColumn] = {}
        self.rejected: list[RejectedRow] = []
        self.stamps: Stamps | None = None  # (of the chunks with events)

    def add(self, chunk: ReadResult) -> None:
        batch = chunk.events
        self.rejected.extend(chunk.rejected)
        if chunk.stamps is not None:
            self.stamps = chunk.stamps.join(self.stamps)
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

    def _add_times(self, batch: EventBatch, start: int, end: int) -> None:
        """Times as they come (see :class:`EventBatch`): int64 while every time is an int
        count of a unit (the finest of the chunks' units); float64 with the mask of the
        ints where numbers with fractions come, if no time has a decimal fraction of a
        second (every time a reader gives is below 2**43, exact as a float); else the
        exact times beside the floats."""
        times, per_second = batch.times, batch.per_second
        floats = times.dtype == np.float64
        if self.exact is None and batch.exact_times is None:
            if self.time_ints is None and not floats:  # ticks to ticks
                finer = max(per_second, self.per_second)
                mine = rescaled(self.times[:start], self.per_second, finer)
                theirs = rescaled(times, per_second, finer)
                if mine is not None and theirs is not None:
                    self.times[:start], self.per_second = mine, finer
                    self.times[start:end] = theirs
                    return
            elif not _fractions(times, per_second) and (
                self.time_ints is not None or not _fractions(self.times[:start], self.per_second)
            ):  # float seconds, with the mask of the ints
                if self.time_ints is None:  # (untouched capacity stays untouched)
                    self._to_floats(start)
                assert self.time_ints is not None
                whole = batch.time_ints if floats else True
                if not floats and per_second != 1:
                    times, whole = tick_seconds(times, per_second)
                self.times[start:end] = times
                self.time_ints[start:end] = False if whole is None else whole
                return
        self._add_exact(batch, start, end)

    def _add_exact(self, batch: EventBatch, start: int, end: int) -> None:
        """Times as float64 with the exact times beside them (see EventBatch.exact_times)."""
        if self.exact is None:
            ints = None if self.time_ints is None else self.time_ints[:start]
            so_far = EventBatch(
                self.types[:start], [], self.times[:start], rows=self.rows[:start],
                time_ints=ints, per_second=self.per_second,
            )  # fmt: skip
            self.exact = so_far.time_values()
            if self.time_ints is None:
                self._to_floats(start)
        assert self.time_ints is not None
        exact = batch.time_values()
        self.exact.extend(exact)
        self.times[start:end] = [float(t) for t in exact]
        self.time_ints[start:end] = [type(t) is int for t in exact]

    def _to_floats(self, size: int) -> None:
        """The times gathered so far as float seconds, with the mask of whole ones."""
        ticks = self.times[:size]
        self.times = _grown(self.times, self.capacity, 0, np.float64)
        self.time_ints = np.zeros(self.capacity, np.bool_)
        if self.per_second == 1:
            self.times[:size], self.time_ints[:size] = ticks, True
        else:
            self.times[:size], self.time_ints[:size] = tick_seconds(ticks, self.per_second)
        self.per_second = 1

    def _grow(self, need: int) -> None:
        self.capacity = max(need, 2 * self.capacity)
        self.types = _grown(self.types, self.capacity, self.size)
        self.rows = _grown(self.rows, self.capacity, self.size)
        self.times = _grown(self.times, self.capacity, self.size)
        if self.time_ints is not None:
            self.time_ints = _grown(self.time_ints, self.capacity, self.size)
        for column in self.columns.values():
            column.grow(self.capacity, self.size)

    def result(self, source: str) -> ReadResult:
        n = self.size
        time_ints = self.time_ints
        batch = EventBatch(
            types=self.types[:n],
            type_names=list(self.type_ids),
            times=self.times[:n],
            columns={name: column.result(n) for name, column in self.columns.items()},
            rows=self.rows[:n],
            source=source,
            time_ints=time_ints[:n] if time_ints is not None and time_ints[:n].any() else None,
            exact_times=self.exact,
            per_second=self.per_second,
        )
        return ReadResult(batch, self.rejected, self.stamps)


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


def _fractions(ticks: np.ndarray, per_second: int) -> bool:
    """Whether some of these int64 ticks of ``1/per_second`` s are not whole seconds."""
    return ticks.dtype == np.int64 and per_second != 1 and bool(np.any(ticks % per_second))


def _grown(array: np.ndarray, capacity: int, size: int, dtype: Any = None) -> np.ndarray:
    bigger = np.zeros(capacity, array.dtype if dtype is None else dtype)
    bigger[:size] = array[:size]
    return bigger


__all__ = ["Gather", "concat"]
