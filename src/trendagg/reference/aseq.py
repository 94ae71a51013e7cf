"""A-Seq (Qi et al., 2014): the non-shared online method SHARON builds on and is measured
against (SHARON section 3.2; spec section 2.2), readable.

For a fixed-length sequence query ``SEQ(E1, ..., En)`` and one partition, A-Seq keeps a
record per START event (an event bound to E1): its time and the registers of the
matches it starts, per prefix length (``c[1..n]``: counts, and here every aggregate's
registers). An event bound to Ej (j >= 2) extends prefix j-1 of every live record
older than it into prefix j; at Ej = En the matches it ends are added to each window
that holds both the START and it. A record expires once every window holding its
START has closed. So an event costs one update per live START, where GRETA's
per-window prefix registers (:mod:`trendagg.reference.greta`) cost one per window:
that difference is what SHARON's paper measures its sharing against.

Events of equal time are one batch: every update is computed from the records as they
were before that time (matches need strictly increasing times).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from trendagg.io.results import ResultRow
from trendagg.optimizer.plan import SharingPlan
from trendagg.plan.compile import QueryPlan
from trendagg.plan.layout import Vec
from trendagg.reference.greta import GretaExecutor, QueryRuntime, group_rows
from trendagg.reference.registers import Registers


class _Start:
    """A START event's record: its time and, per prefix length, the registers of the
    matches it starts (None: none yet)."""

    __slots__ = ("time", "vecs")

    def __init__(self, time: Any, first: Vec, n: int):
        self.time = time
        self.vecs: list[Vec | None] = [first] + [None] * (n - 1)


class ASeqRuntime:
    """One query of SHARON's class under A-Seq: START records per partition key,
    results per window."""

    def __init__(self, plan: QueryPlan):
        self.plan = plan
        self.regs = Registers(plan.layout)
        self.window = plan.window
        self.types = plan.template.types
        self.n = len(self.types)
        self.position = {t: i for i, t in enumerate(self.types)}
        self.names = tuple(a.name for a in plan.partition_attrs)
        self.live: dict[tuple[object, ...], list[_Start]] = {}
        self.results: dict[int, dict[tuple[object, ...], Vec]] = {}  # window -> key -> regs
        self.closed: int | None = None
        self.starts = 0  # START records made

    def process(self, t: Any, events: list[tuple[str, Mapping[str, object]]]) -> None:
        plan = self.plan
        starts: list[tuple[tuple[object, ...], _Start]] = []
        updates: list[tuple[_Start, int, Vec]] = []
        ends: list[tuple[tuple[object, ...], Any, Vec]] = []
        for typ, attrs in events:
            j = self.position.get(typ)
            if j is None:
                continue
            var = plan.type_to_var[typ]
            if not plan.vars[var].accepts(attrs):
                continue
            key = tuple(attrs[n] for n in self.names)
            if j == 0:
                first = self.regs.extend(var, attrs, None, 1)
                assert first is not None
                if self.n == 1:
                    ends.append((key, t, first))
                else:
                    starts.append((key, _Start(t, first, self.n)))
                    self.starts += 1
                continue
            for r in self.live.get(key, ()):
                pred = r.vecs[j - 1]
                if r.time >= t or pred is None:
                    continue
                new = self.regs.extend(var, attrs, pred, 0)
                if new is None:
                    continue
                updates.append((r, j, new))
                if j == self.n - 1:
                    ends.append((key, r.time, new))
        for r, j, new in updates:
            held = r.vecs[j]
            if held is None:
                r.vecs[j] = list(new)  # (a copy: an END's registers are added below too)
            else:
                self.regs.add_into(held, new)
        for key, start, new in ends:  # the windows holding both the START and the END
            for k in self.window.windows_of(start):
                if k in self.window.windows_of(t):
                    acc = self.results.setdefault(k, {}).get(key)
                    if acc is None:
                        self.results[k][key] = list(new)
                    else:
                        self.regs.add_into(acc, new)
        for key, r in starts:
            if key not in self.live:
                self.live[key] = []
            self.live[key].append(r)

    def advance_to(self, t: Any) -> list[ResultRow]:
        """Close every window that ends at or before t; expire the STARTs no open window holds."""
        closed = self.window.closed_before(t)
        if self.closed is not None and closed <= self.closed:
            return []
        self.closed = closed
        for key in list(self.live):
            kept = [r for r in self.live[key] if self.window.windows_of(r.time).stop > closed]
            if kept:
                self.live[key] = kept
            else:
                del self.live[key]
        return self._close(closed)

    def finish(self) -> list[ResultRow]:
        return self._close(None)

    def _close(self, closed: int | None) -> list[ResultRow]:
        rows: list[ResultRow] = []
        for k in sorted(k for k in self.results if closed is None or k < closed):
            rows += group_rows(self.plan, self.regs, k, self.results.pop(k).items())
        return rows


class ASeqExecutor(GretaExecutor):
    """A-Seq for the queries of SHARON's class that the plan routes to the Python engine,
    GRETA for its other Python queries."""

    def __init__(self, plans: list[QueryPlan], sharing: SharingPlan):
        from trendagg.optimizer.sharon import sharon_blocker

        python = [plans[q] for q in sharing.on("python")]
        self.aseq = [ASeqRuntime(p) for p in python if sharon_blocker(p) is None]
        self.queries = [QueryRuntime(p) for p in python if sharon_blocker(p) is not None]
        self.runtimes = [*self.aseq, *self.queries]

    def report(self, stats: dict[str, Any]) -> None:
        """A-Seq's START records made."""
        super().report(stats)
        stats["aseq"] = {"starts": sum(rt.starts for rt in self.aseq)}


__all__ = ["ASeqExecutor", "ASeqRuntime"]
