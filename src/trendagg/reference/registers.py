"""Aggregate registers of the Python reference engines: how an event extends them.

The layout of a register vector and its final values are :mod:`trendagg.plan.layout`'s
(one reading for every engine). Here are the update rules of the readable
engines: sums of integers stay Python ints; a float attribute enters a sum as
the exact Fraction of its binary value, so a sum over 2**300 trends is exact
and strategies that add in different orders agree to the last bit.
"""

from __future__ import annotations

from collections.abc import Mapping
from fractions import Fraction

from trendagg.plan.layout import AggLayout, Vec, add_registers, before, not_a_number


def exact(value: object) -> int | Fraction:
    """A numeric attribute value as an exact number (readers reject non-numbers earlier)."""
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    if isinstance(value, float):
        return Fraction(value)
    raise not_a_number(value)


class Registers:
    """Register kinds of a layout and the per-variable update rule."""

    def __init__(self, layout: AggLayout):
        self.layout = layout
        self.size = layout.size
        self.n_add = layout.n_additive
        self.min_start = layout.min_start
        self.max_start = layout.max_start
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
            if vec[i] is None or before(v, vec[i]):
                vec[i] = v
        for i, a in maxs:
            v = attrs[a]
            if vec[i] is None or before(vec[i], v):
                vec[i] = v
        return vec

    def zero(self) -> Vec:
        return self.layout.zero()

    def add_into(self, acc: Vec, vec: Vec) -> None:
        """acc += vec, register by register (sum, min or max)."""
        add_registers(acc, vec, self.n_add, self.max_start, self.size)
