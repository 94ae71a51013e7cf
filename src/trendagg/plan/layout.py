"""The aggregate registers of a query and their final values, for every engine.

A register vector holds, for a set of trends, the trend count, the occurrence
count of each counted variable, exact sums, minima and maxima (GRETA,
Theorem 9.1). :class:`AggLayout` fixes where each register lives; the final
values of a (query, group, window) are read from a vector of that layout in
one way here, whichever engine (the compiled kernel, the Python reference
engines, Spark's combine of partial rows) filled it. Sums of integers are
Python ints; a sum that saw a float is an exact Fraction, rounded once, here.
"""

from __future__ import annotations

import operator
from collections.abc import Callable
from dataclasses import dataclass
from decimal import Decimal
from fractions import Fraction
from typing import TYPE_CHECKING, Any

from trendagg.errors import ExecutionError
from trendagg.io.results import ResultRow, result_rows
from trendagg.io.values import shown
from trendagg.language import ast
from trendagg.plan.windows import as_number

if TYPE_CHECKING:
    from trendagg.plan.compile import QueryPlan

Vec = list[Any]  # register vector: [count, occurrence counts..., sums..., mins..., maxs...]


@dataclass(frozen=True)
class AggLayout:
    """Registers propagated per vertex (GRETA, Theorem 9.1): the trend count first, then
    occurrence counts per variable, sums, minima and maxima per (variable, attribute).
    The first ``n_additive`` registers add; minima follow from ``min_start``, maxima from
    ``max_start``."""

    count_vars: tuple[str, ...]
    sums: tuple[tuple[str, str], ...]
    mins: tuple[tuple[str, str], ...]
    maxs: tuple[tuple[str, str], ...]

    @property
    def size(self) -> int:
        return 1 + len(self.count_vars) + len(self.sums) + len(self.mins) + len(self.maxs)

    @property
    def n_additive(self) -> int:
        return 1 + len(self.count_vars) + len(self.sums)

    @property
    def min_start(self) -> int:
        return self.n_additive

    @property
    def max_start(self) -> int:
        return self.n_additive + len(self.mins)

    def count_index(self, var: str) -> int:
        return 1 + self.count_vars.index(var)

    def sum_index(self, var: str, attr: str) -> int:
        return 1 + len(self.count_vars) + self.sums.index((var, attr))

    def zero(self) -> Vec:
        """The registers of no trend."""
        return [0] * self.n_additive + [None] * (self.size - self.n_additive)


def not_a_number(value: object) -> ExecutionError:
    """The error of a SUM or AVG over a value that is not a number, the same from every
    engine (the Python engines meet it as they add the value, the compiled engine as it
    reads the events a summing variable binds)."""
    return ExecutionError(
        f"cannot sum {shown(repr(value))}: it is not a number. Read events with read_events(..., numeric=...) "
        f"or the CLI, which reject such rows and can write them out with --rejects."
    )


def before(a: object, b: object) -> bool:
    """``a < b`` in the order of MIN and MAX: numbers by value, words by code point, and
    every number before every word (the order of the compiled engine's ranks), so that
    an attribute holding both has a minimum and a maximum in every engine."""
    try:
        return bool(a < b)  # type: ignore[operator]
    except TypeError:
        return not isinstance(a, str)


def order_key(value: object) -> tuple[bool, object]:
    """The sort key of :func:`before`'s order (for ``min`` and ``max`` over values)."""
    return isinstance(value, str), value


def add_registers(acc: Vec, vec: Vec, n_add: int, max_start: int, size: int) -> None:
    """acc += vec for a layout of additive registers [0, n_add), minima [n_add, max_start)
    and maxima [max_start, size); None is the empty minimum or maximum."""
    for i in range(n_add):
        acc[i] += vec[i]
    for i in range(n_add, size):
        v = vec[i]
        if v is None:
            continue
        a = acc[i]
        if a is None:
            acc[i] = v
            continue
        try:  # (no call for values of one kind; a number and a word: before's order)
            better = v < a if i < max_start else a < v
        except TypeError:
            better = before(v, a) if i < max_start else before(a, v)
        if better:
            acc[i] = v


def _out_number(value: int | Fraction) -> int | float | Decimal:
    """An exact sum as output: an int stays exact; a sum that saw a float is rounded once."""
    if isinstance(value, int):
        return value
    try:
        return float(value)
    except OverflowError:
        # beyond the float range: a Decimal with 28 significant digits, never inf
        return Decimal(value.numerator) / Decimal(value.denominator)


def final_values(plan: QueryPlan, vec: Vec) -> dict[str, object]:
    """The output values of one (query, group, window) from its combined registers."""
    return {name: read(vec) for name, read in _readers(plan)}


def _readers(plan: QueryPlan) -> list[tuple[str, Callable[[Vec], object]]]:
    """Per aggregate output of ``plan``, its name and the function that reads its value
    from a register vector."""
    return [
        (out.name, _reader(out.aggregate, plan.layout))
        for out in plan.outputs
        if out.aggregate is not None
    ]


def _registers(agg: ast.Aggregate, lay: AggLayout) -> tuple[str, int, int]:
    """What an aggregate's value is read from: ("item", its register, -1) for a value
    as it is held, ("sum", the sum's register, -1), or ("avg", the sum's register, the
    count's register)."""
    if agg.var is None:
        return "item", 0, -1
    if agg.func == "COUNT":
        return "item", lay.count_index(agg.var), -1
    assert agg.attr is not None
    key = (agg.var, agg.attr)
    if agg.func == "MIN":
        return "item", lay.min_start + lay.mins.index(key), -1
    if agg.func == "MAX":
        return "item", lay.max_start + lay.maxs.index(key), -1
    total = lay.sum_index(*key)
    if agg.func == "SUM":
        return "sum", total, -1
    return "avg", total, lay.count_index(agg.var)


def _reader(agg: ast.Aggregate, lay: AggLayout) -> Callable[[Vec], object]:
    kind, total, count = _registers(agg, lay)
    if kind == "item":
        return operator.itemgetter(total)
    if kind == "sum":
        return lambda vec: _out_number(vec[total])
    return lambda vec: None if vec[count] == 0 else float(Fraction(vec[total]) / vec[count])


def _column_reader(agg: ast.Aggregate, lay: AggLayout) -> Callable[[list[list[Any]]], list[Any]]:
    """:func:`_reader` for many vectors at once, given as columns (one list per register):
    the output's values, one per vector."""
    kind, total, count = _registers(agg, lay)
    if kind == "item":
        return operator.itemgetter(total)
    if kind == "sum":
        return lambda cols: list(map(_out_number, cols[total]))
    return lambda cols: [
        None if c == 0 else float(Fraction(t) / c)
        for t, c in zip(cols[total], cols[count], strict=True)
    ]


def result_row(plan: QueryPlan, k: int, group: tuple[object, ...], vec: Vec) -> ResultRow:
    """The output row of one (query, group, window k) from its combined registers."""
    return RowMaker(plan)(k, group, vec)


class RowMaker:
    """:func:`result_row` for many rows of one query: the readers of its values and the
    bounds of each window found once (for an engine that emits rows by the thousand)."""

    def __init__(self, plan: QueryPlan):
        self.plan = plan
        self.readers = _readers(plan)
        self.column_readers = [
            _column_reader(out.aggregate, plan.layout)
            for out in plan.outputs
            if out.aggregate is not None
        ]
        self.bounds: dict[int, tuple[int | float, int | float]] = {}

    def __call__(self, k: int, group: tuple[object, ...], vec: Vec) -> ResultRow:
        bounds = self.bounds.get(k)
        if bounds is None:
            w = self.plan.window
            bounds = self.bounds[k] = (as_number(w.start(k)), as_number(w.end(k)))
        return ResultRow(
            query=self.plan.name,
            window_start=bounds[0],
            window_end=bounds[1],
            group=dict(zip(self.plan.group_names, group, strict=True)),
            values={name: read(vec) for name, read in self.readers},
            registers=tuple(vec),
            window=k,
        )

    def rows(
        self, windows: list[int], groups: list[tuple[object, ...]], columns: list[list[Any]]
    ) -> list[ResultRow]:
        """The rows of many (window, group) pairs of the query, in their order, from their
        registers as columns (``columns[r][i]``: register r of row i): equal to calling
        the maker once per row, in a column at a time what can be done so."""
        plan = self.plan
        w = plan.window
        starts: list[int | float]
        ends: list[int | float]
        if w.integral:  # int bounds: no Fraction, no cache
            slide, within = w.slide.numerator, w.within.numerator
            starts = [k * slide for k in windows]
            ends = [s + within for s in starts]
        else:
            bounds = self.bounds
            for k in set(windows).difference(bounds):
                bounds[k] = (as_number(w.start(k)), as_number(w.end(k)))
            starts = [bounds[k][0] for k in windows]
            ends = [bounds[k][1] for k in windows]
        names = plan.group_names
        if names:
            group_dicts = [dict(zip(names, group, strict=True)) for group in groups]
        else:
            group_dicts = [{} for _ in groups]
        outputs = [name for name, _ in self.readers]
        read = [reader(columns) for reader in self.column_readers]
        if len(read) == 1:
            (name,), (column,) = outputs, read
            value_dicts = [{name: v} for v in column]
        elif read:
            value_dicts = [dict(zip(outputs, v, strict=True)) for v in zip(*read, strict=True)]
        else:
            value_dicts = [{} for _ in windows]
        registers = list(zip(*columns, strict=True))
        return result_rows(plan.name, starts, ends, group_dicts, value_dicts, registers, windows)


def combine_rows(plan: QueryPlan, rows: list[ResultRow]) -> ResultRow:
    """One row from partial rows of the same (query, group, window), exactly."""
    first = rows[0]
    assert first.registers is not None and first.window is not None
    lay = plan.layout
    vec = list(first.registers)
    for r in rows[1:]:
        assert r.registers is not None
        add_registers(vec, list(r.registers), lay.n_additive, lay.max_start, lay.size)
    group = tuple(first.group[n] for n in plan.group_names)
    return result_row(plan, first.window, group, vec)
