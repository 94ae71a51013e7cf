"""The two-step reference: build every trend, then aggregate (the SASE/MCEP way).

Slow and obvious on purpose. It reads docs/semantics.md literally and shares no
execution code with the online strategies (only the compiled predicates and
the final rounding), so every other strategy is tested equal to it. Trends are
built by structural recursion over the pattern, per window, with partition
agreement checked as trends are concatenated; negative sub-patterns are
checked once a trend is complete, against every match of the negative
sub-pattern in the same window and partition.

The number of trends grows exponentially with the events per window; a trend
limit stops the enumeration with a clear error instead of hanging.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from trendagg.errors import ExecutionError
from trendagg.io.batch import EventBatch
from trendagg.io.results import ResultRow
from trendagg.io.values import shown
from trendagg.language import ast
from trendagg.plan.compile import QueryPlan
from trendagg.plan.layout import order_key, result_row
from trendagg.reference.registers import Registers, exact

DEFAULT_TREND_LIMIT = 1_000_000

_UNSET = object()


@dataclass(frozen=True)
class _Match:
    events: tuple[int, ...]  # indices into the window's event list, in time order
    binding: tuple[object, ...]  # partition values; _UNSET where no event fixed it yet
    negations: tuple[tuple[ast.Pattern, object, object], ...]  # (N, after time, before time)


class _Enumerator:
    def __init__(
        self,
        plan: QueryPlan,
        times: list[Any],
        types: list[str],
        attrs: list[Mapping[str, object]],
        limit: int,
    ):
        self.plan = plan
        self.times = times
        self.types = types
        self.attrs = attrs
        self.limit = limit
        self.built = 0
        self.width = len(plan.partition_attrs)
        self._cache: dict[int, list[_Match]] = {}

    def _count(self, n: int) -> None:
        self.built += n
        if self.built > self.limit:
            raise ExecutionError(
                f"the two-step strategy built more than {self.limit:,} trends for query "
                f"'{shown(self.plan.name)}' and stopped: its cost grows exponentially with the events "
                f"per window. Use --strategy greta, a smaller window, or raise --trend-limit."
            )

    def _merge(self, a: tuple[object, ...], b: tuple[object, ...]) -> tuple[object, ...] | None:
        out = list(a)
        for i, v in enumerate(b):
            if v is _UNSET:
                continue
            if out[i] is _UNSET:
                out[i] = v
            elif out[i] != v:
                return None
        return tuple(out)

    def _edge_ok(self, x: int, y: int) -> bool:
        plan = self.plan
        xv = plan.type_to_var[self.types[x]]
        yv = plan.type_to_var[self.types[y]]
        xa, ya = self.attrs[x], self.attrs[y]
        for fn in plan.guards.get(yv, ()):
            if not fn(xa, ya):
                return False
        return all(fn(xa, ya) for fn in plan.edges.get((xv, yv), ()))

    def _concat(self, left: _Match, right: _Match) -> _Match | None:
        x, y = left.events[-1], right.events[0]
        if not self.times[x] < self.times[y]:
            return None
        binding = self._merge(left.binding, right.binding)
        if binding is None or not self._edge_ok(x, y):
            return None
        return _Match(left.events + right.events, binding, left.negations + right.negations)

    def matches(self, p: ast.Pattern) -> list[_Match]:
        key = id(p)
        if key not in self._cache:
            self._cache[key] = self._matches(p)
        return self._cache[key]

    def _matches(self, p: ast.Pattern) -> list[_Match]:
        if isinstance(p, ast.EventPattern):
            info = self.plan.vars[p.var]
            out = []
            for i, t in enumerate(self.types):
                if t == info.type and info.accepts(self.attrs[i]):
                    binding = [_UNSET] * self.width
                    for pos in info.partition_positions:
                        binding[pos] = self.attrs[i][self.plan.partition_attrs[pos].name]
                    out.append(_Match((i,), tuple(binding), ()))
            self._count(len(out))
            return out
        if isinstance(p, ast.Plus):
            inner = self.matches(p.inner)
            result: dict[tuple[int, ...], _Match] = {m.events: m for m in inner}
            frontier = list(result.values())
            while frontier:
                grown: list[_Match] = []
                for f in frontier:
                    for m in inner:
                        c = self._concat(f, m)
                        if c is not None and c.events not in result:
                            result[c.events] = c
                            grown.append(c)
                self._count(len(grown))
                frontier = grown
            return list(result.values())
        if isinstance(p, ast.Seq):
            current: list[_Match] | None = None
            pending: ast.Pattern | None = None
            for item in p.items:
                if isinstance(item, ast.Not):
                    pending = item.inner
                    continue
                ms = self.matches(item)
                if current is None:
                    current = [
                        _Match(
                            m.events,
                            m.binding,
                            ((pending, None, self.times[m.events[0]]),) + m.negations,
                        )
                        if pending is not None
                        else m
                        for m in ms
                    ]
                else:
                    joined = []
                    for left in current:
                        for right in ms:
                            c = self._concat(left, right)
                            if c is None:
                                continue
                            if pending is not None:
                                neg = (
                                    pending,
                                    self.times[left.events[-1]],
                                    self.times[right.events[0]],
                                )
                                c = _Match(c.events, c.binding, c.negations + (neg,))
                            joined.append(c)
                    self._count(len(joined))
                    current = joined
                pending = None
            assert current is not None
            if pending is not None:
                current = [
                    _Match(
                        m.events,
                        m.binding,
                        m.negations + ((pending, self.times[m.events[-1]], None),),
                    )
                    for m in current
                ]
            return current
        raise ValueError("NOT outside SEQ")

    def valid(self, m: _Match, binding: tuple[object, ...]) -> bool:
        """No negative sub-pattern of ``m`` has a match where it must not."""
        for pattern, after, before in m.negations:
            for n in self.matches(pattern):
                if after is not None and not self.times[n.events[0]] > after:
                    continue
                if before is not None and not self.times[n.events[-1]] < before:
                    continue
                merged = self._merge(binding, n.binding)
                if merged is None:
                    continue
                if self.valid(n, merged):
                    return False
        return True


def _trend_registers(
    plan: QueryPlan,
    regs: Registers,
    events: Iterable[int],
    types: list[str],
    attrs: list[Mapping[str, object]],
) -> list[Any]:
    lay = plan.layout
    vec = regs.zero()
    vec[0] = 1
    bound = [(plan.type_to_var[types[i]], attrs[i]) for i in events]
    for j, var in enumerate(lay.count_vars):
        vec[1 + j] = sum(1 for v, _ in bound if v == var)
    base = 1 + len(lay.count_vars)
    for j, (var, a) in enumerate(lay.sums):
        vec[base + j] = sum((exact(at[a]) for v, at in bound if v == var), 0)
    for j, (var, a) in enumerate(lay.mins):
        vec[regs.min_start + j] = min(
            (at[a] for v, at in bound if v == var), key=order_key, default=None
        )
    for j, (var, a) in enumerate(lay.maxs):
        vec[regs.max_start + j] = max(
            (at[a] for v, at in bound if v == var), key=order_key, default=None
        )
    return vec


def run_twostep(
    plans: list[QueryPlan],
    events: EventBatch,
    trend_limit: int = DEFAULT_TREND_LIMIT,
) -> list[ResultRow]:
    """Every (query, group, window) row by enumerating trends window by window."""
    return _twostep_rows(plans, events.records(), trend_limit)


def _twostep_rows(
    plans: list[QueryPlan],
    events: Sequence[tuple[str, Any, Mapping[str, object]]],
    trend_limit: int,
) -> list[ResultRow]:
    """:func:`run_twostep` of events as (type, time, attributes) tuples, in any order."""
    records = sorted(events, key=lambda record: record[1])  # stable: time order
    rows: list[ResultRow] = []
    for plan in plans:
        regs = Registers(plan.layout)
        relevant = [record for record in records if record[0] in plan.type_to_var]
        windows: set[int] = set()
        for _, t, _ in relevant:
            windows.update(plan.window.windows_of(t))
        for k in sorted(windows):
            lo, hi = plan.window.start(k), plan.window.end(k)
            inside = [record for record in relevant if lo <= record[1] < hi]
            enum = _Enumerator(
                plan,
                [t for _, t, _ in inside],
                [kind for kind, _, _ in inside],
                [attrs for _, _, attrs in inside],
                trend_limit,
            )
            groups: dict[tuple[object, ...], list[Any]] = {}
            for m in enum.matches(plan.query.pattern):
                if not enum.valid(m, m.binding):
                    continue
                group = tuple(m.binding[p] for p in plan.group_positions)
                vec = _trend_registers(plan, regs, m.events, enum.types, enum.attrs)
                if group in groups:
                    regs.add_into(groups[group], vec)
                else:
                    groups[group] = vec
            for group, vec in sorted(groups.items(), key=lambda kv: repr(kv[0])):
                rows.append(result_row(plan, k, group, vec))
    return rows


class TwoStepExecutor:
    """Two-step as an executor the Runner steps: it keeps every event and enumerates
    at the end (the reference is not online), so ``advance`` and ``step`` return no row."""

    def __init__(self, plans: list[QueryPlan], trend_limit: int | None):
        self.plans = plans
        self.trend_limit = trend_limit
        self.records: list[tuple[str, Any, Mapping[str, object]]] = []

    def advance(self, t: Any) -> list[ResultRow]:
        return []

    def step(self, t: Any, batch: list[tuple[str, Mapping[str, object]]]) -> list[ResultRow]:
        self.records.extend((kind, t, attrs) for kind, attrs in batch)
        return []

    def finish(self) -> list[ResultRow]:
        limit = self.trend_limit or DEFAULT_TREND_LIMIT
        return _twostep_rows(self.plans, self.records, limit)

    def report(self, stats: dict[str, Any]) -> None:
        """No counters of its own (a run's partitions are counted from its events, see
        :class:`trendagg.plan.routing.KeysSeen`)."""
