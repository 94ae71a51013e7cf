"""Aggregate registers and their final values, shared by every strategy.

A register vector holds, for a set of trends, the trend count, the occurrence
count of each counted variable, exact sums, minima and maxima (GRETA,
Theorem 9.1). Sums of integers stay Python ints; a float attribute enters a
sum as the exact Fraction of its binary value, so a sum over 2**300 trends is
exact and strategies that add in different orders agree to the last bit. The
result is rounded once, when it is output.
"""

from __future__ import annotations

from collections.abc import Mapping
from decimal import Decimal
from fractions import Fraction
from typing import Any

from trendagg.errors import ExecutionError
from trendagg.io.results import ResultRow
from trendagg.language import ast
from trendagg.plan.compile import AggLayout, QueryPlan
from trendagg.plan.windows import as_number

Vec = list[Any]  # register vector: [count, occurrence counts..., sums..., mins..., maxs...]


def exact(value: object) -> int | Fraction:
    """A numeric attribute value as an exact number (readers reject non-numbers earlier)."""
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    if isinstance(value, float):
        return Fraction(value)
    raise ExecutionError(
        f"cannot sum {value!r}: it is not a number. Read events with read_events(..., numeric=...) "
        f"or the CLI, which reject such rows and can write them out with --rejects."
    )


class Registers:
    """Register kinds of a layout and the per-variable update rule."""

    def __init__(self, layout: AggLayout):
        self.layout = layout
        n_add = 1 + len(layout.count_vars) + len(layout.sums)
        self.size = layout.size
        self.n_add = n_add
        self.min_start = n_add
        self.max_start = n_add + len(layout.mins)
        # kinds: 0 additive, 1 min, 2 max
        self.kinds = [0] * n_add + [1] * len(layout.mins) + [2] * len(layout.maxs)
        self._per_var: dict[
            str,
            tuple[list[int], list[tuple[int, str]], list[tuple[int, str]], list[tuple[int, str]]],
        ] = {}

    def rules(
        self, var: str
    ) -> tuple[list[int], list[tuple[int, str]], list[tuple[int, str]], list[tuple[int, str]]]:
        """Registers that an event bound to ``var`` updates: counts, sums, mins, maxs."""
        cached = self._per_var.get(var)
        if cached is None:
            lay = self.layout
            cnt = [1 + i for i, v in enumerate(lay.count_vars) if v == var]
            base = 1 + len(lay.count_vars)
            sums = [(base + i, a) for i, (v, a) in enumerate(lay.sums) if v == var]
            mins = [(self.min_start + i, a) for i, (v, a) in enumerate(lay.mins) if v == var]
            maxs = [(self.max_start + i, a) for i, (v, a) in enumerate(lay.maxs) if v == var]
            cached = (cnt, sums, mins, maxs)
            self._per_var[var] = cached
        return cached

    def extend(
        self, var: str, attrs: Mapping[str, object], pred: Vec | None, start: int
    ) -> Vec | None:
        """Registers of the trends ending at an event: the trends it starts (``start``)
        plus those it extends (``pred``, the combined registers of its predecessors)."""
        count = start + (pred[0] if pred is not None else 0)
        if count == 0:
            return None
        vec: Vec = list(pred) if pred is not None else self.zero()
        vec[0] = count
        cnt, sums, mins, maxs = self.rules(var)
        for i in cnt:
            vec[i] += count
        for i, a in sums:
            vec[i] += exact(attrs[a]) * count
        for i, a in mins:
            v = attrs[a]
            if vec[i] is None or v < vec[i]:  # type: ignore[operator]
                vec[i] = v
        for i, a in maxs:
            v = attrs[a]
            if vec[i] is None or v > vec[i]:  # type: ignore[operator]
                vec[i] = v
        return vec

    def zero(self) -> Vec:
        return [0] * self.n_add + [None] * (self.size - self.n_add)

    def add_into(self, acc: Vec, vec: Vec) -> None:
        """acc += vec, register by register (sum, min or max)."""
        add_registers(acc, vec, self.n_add, self.max_start, self.size)


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
        if a is None or (v < a if i < max_start else v > a):
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


def final_values(plan: QueryPlan, regs: Registers, vec: Vec) -> dict[str, object]:
    """The output values of one (query, group, window) from its combined registers."""
    lay = plan.layout
    base = 1 + len(lay.count_vars)
    return {
        out.name: _value(out.aggregate, lay, regs, vec, base)
        for out in plan.outputs
        if out.aggregate is not None
    }


def _value(agg: ast.Aggregate, lay: AggLayout, regs: Registers, vec: Vec, base: int) -> object:
    if agg.var is None:
        return vec[0]
    if agg.func == "COUNT":
        return vec[1 + lay.count_vars.index(agg.var)]
    assert agg.attr is not None
    key = (agg.var, agg.attr)
    if agg.func == "MIN":
        return vec[regs.min_start + lay.mins.index(key)]
    if agg.func == "MAX":
        return vec[regs.max_start + lay.maxs.index(key)]
    total = vec[base + lay.sums.index(key)]
    if agg.func == "SUM":
        return _out_number(total)
    count = vec[1 + lay.count_vars.index(agg.var)]
    if count == 0:
        return None
    return float(Fraction(total) / count)


def result_row(
    plan: QueryPlan, regs: Registers, k: int, group: tuple[object, ...], vec: Vec
) -> ResultRow:
    """The output row of one (query, group, window k) from its combined registers."""
    return ResultRow(
        query=plan.name,
        window_start=as_number(plan.window.start(k)),
        window_end=as_number(plan.window.end(k)),
        group=dict(zip(plan.group_names, group, strict=True)),
        values=final_values(plan, regs, vec),
        registers=tuple(vec),
        window=k,
    )


def combine_rows(plan: QueryPlan, regs: Registers, rows: list[ResultRow]) -> ResultRow:
    """One row from partial rows of the same (query, group, window), exactly."""
    first = rows[0]
    assert first.registers is not None and first.window is not None
    vec = list(first.registers)
    for r in rows[1:]:
        assert r.registers is not None
        regs.add_into(vec, list(r.registers))
    group = tuple(first.group[n] for n in plan.group_names)
    return result_row(plan, regs, first.window, group, vec)
