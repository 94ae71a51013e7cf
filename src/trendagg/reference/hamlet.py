"""HAMLET: shared online trend aggregation with a dynamic sharing optimizer.

Queries that share a Kleene sub-pattern ``E+`` (see :mod:`trendagg.optimizer.candidates`)
run in one executor per component. Each query keeps its GRETA graph per
partition for everything it does not share. Events of type E that arrive with
no other event type of the component in between, within one pane, form a
*burst* (HAMLET, Def. 4.1); a burst is buffered until complete and then
processed either non-shared (each query's GRETA graph, one event at a time) or
shared:

* A *graphlet-level snapshot* X (Def. 3.9, Eq. 5) holds, per query and window,
  the registers entering the burst: the trends that end before it in the
  predecessor states of E (including earlier E events) plus the trend an event
  of E starts where E is a start state of that query.
* Each burst event gets a *snapshot coefficient* table (the hash table of
  Algorithm 1): a linear map from each snapshot's registers to the event's
  registers, computed once for all sharing queries. The map carries every
  aggregate, not only COUNT(*): ``count -> c*count``, the occurrence count of
  E's variable ``-> c*cnt + v*count``, ``SUM(E.a) -> c*sum + w_a*count``, other
  registers ``-> c*r``, and MIN/MAX of E's attributes through the extreme of
  the events on the paths from the snapshot (the papers' simplifying
  assumptions 3.0 are dropped).
* An event that some sharing queries bind and others do not (local
  predicates, ``NEXT(E)`` conditions) gets an *event-level snapshot* Z
  (Def. 3.11): its registers are computed per query, and later events refer
  to Z.
* At the end of the burst the summed map is applied once per query and
  window: the totals of E, the results if E ends the query, the frontier
  totals of negated transitions. So a shared burst of b events costs about
  b times the number of live snapshots, plus k times the windows, instead of
  k times b.

The dynamic optimizer (Section 4) decides per burst which queries share it,
with the benefit model of Def. 4.2 / Eq. 7 fed with live statistics and the
snapshot-driven and benefit-driven pruning principles (Theorems 4.3, 4.5):
queries that introduce no event-level snapshot always share; every other
query is classified by one benefit test, so a decision costs O(m).
"""

from __future__ import annotations

import time as _time
from collections import deque
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from trendagg.io.results import ResultRow
from trendagg.optimizer.candidates import Component, SharableSet
from trendagg.optimizer.cost import benefit, nonshared_cost, shared_cost
from trendagg.optimizer.plan import SharingPlan
from trendagg.plan.compile import QueryPlan
from trendagg.plan.layout import add_registers, before
from trendagg.plan.windows import WindowSpec
from trendagg.reference.greta import (
    NO_ATTRIBUTES,
    Graph,
    GretaExecutor,
    Partition,
    QueryRuntime,
    Total,
    Transition,
)
from trendagg.reference.registers import Registers, exact

Vec = list[Any]
Entry = list[Any]  # [c, v, w_1..w_A, pmin_1..pmin_B, pmax_1..pmax_C]


# ----------------------------------------------------------------------------- shared maps


class _MapAlgebra:
    """Coefficient entries of one sharable set, over the attributes of E its queries read."""

    def __init__(self, sums: list[str], mins: list[str], maxs: list[str]):
        self.sums = sums
        self.mins = mins
        self.maxs = maxs
        self.w0 = 2
        self.m0 = 2 + len(sums)
        self.x0 = self.m0 + len(mins)
        self.size = self.x0 + len(maxs)

    def identity(self) -> Entry:
        return [1, 0] + [0] * len(self.sums) + [None] * (len(self.mins) + len(self.maxs))

    def own(self, entry: Entry, attrs: Mapping[str, object]) -> Entry:
        """Compose with an event of E: it counts itself and adds its attribute values.

        An attribute the event lacks is read by no query that shares it (such a
        query would not bind the event, making it an event-level snapshot): skip it.
        """
        c = entry[0]
        out = list(entry)
        out[1] = entry[1] + c
        for j, a in enumerate(self.sums):
            v = attrs.get(a)
            if v is not None:
                out[self.w0 + j] = entry[self.w0 + j] + exact(v) * c
        for j, a in enumerate(self.mins):
            v = attrs.get(a)
            cur = entry[self.m0 + j]
            if v is not None and (cur is None or before(v, cur)):
                out[self.m0 + j] = v
        for j, a in enumerate(self.maxs):
            v = attrs.get(a)
            cur = entry[self.x0 + j]
            if v is not None and (cur is None or before(cur, v)):
                out[self.x0 + j] = v
        return out

    def add_into(self, acc: Entry, entry: Entry) -> None:
        add_registers(acc, entry, self.m0, self.x0, self.size)

    def add_map(self, acc: dict[int, Entry], other: dict[int, Entry]) -> None:
        for sid, entry in other.items():
            mine = acc.get(sid)
            if mine is None:
                acc[sid] = list(entry)
            else:
                self.add_into(mine, entry)


@dataclass
class _View:
    """How a query's register layout meets the shared map of its set."""

    var: str
    regs: Registers
    cnt: list[int]
    sums: list[tuple[int, int]]
    mins: list[tuple[int, int]]
    maxs: list[tuple[int, int]]

    def apply(self, entry: Entry, vec: Vec, alg: _MapAlgebra) -> Vec | None:
        count = vec[0]
        if not count:
            return None
        c = entry[0]
        regs = self.regs
        out = [x * c for x in vec[: regs.n_add]] + list(vec[regs.n_add :])
        v = entry[1]
        for i in self.cnt:
            out[i] += v * count
        for i, j in self.sums:
            out[i] += entry[alg.w0 + j] * count
        for i, j in self.mins:
            m = entry[alg.m0 + j]
            if m is not None and (out[i] is None or before(m, out[i])):
                out[i] = m
        for i, j in self.maxs:
            m = entry[alg.x0 + j]
            if m is not None and (out[i] is None or before(out[i], m)):
                out[i] = m
        return out


def _view(plan: QueryPlan, type_: str, regs: Registers, alg: _MapAlgebra) -> _View:
    var = plan.type_to_var[type_]
    lay = plan.layout
    base = 1 + len(lay.count_vars)
    return _View(
        var=var,
        regs=regs,
        cnt=[1 + i for i, v in enumerate(lay.count_vars) if v == var],
        sums=[(base + i, alg.sums.index(a)) for i, (v, a) in enumerate(lay.sums) if v == var],
        mins=[
            (regs.min_start + i, alg.mins.index(a)) for i, (v, a) in enumerate(lay.mins) if v == var
        ],
        maxs=[
            (regs.max_start + i, alg.maxs.index(a)) for i, (v, a) in enumerate(lay.maxs) if v == var
        ],
    )


# ----------------------------------------------------------------------------- statistics


@dataclass
class HamletStats:
    """What a run did: bursts, sharing decisions, snapshots, time spent deciding."""

    bursts: int = 0
    shared_bursts: int = 0
    splits: int = 0
    merges: int = 0
    graphlet_snapshots: int = 0
    event_snapshots: int = 0
    snapshots_propagated: int = 0
    decision_seconds: float = 0.0
    decisions: list[dict[str, Any]] = field(default_factory=list)

    @property
    def snapshots(self) -> int:
        return self.graphlet_snapshots + self.event_snapshots

    def summary(self) -> str:
        return (
            f"{self.bursts:,} bursts, {self.shared_bursts:,} shared; {self.splits:,} splits, "
            f"{self.merges:,} merges; {self.snapshots:,} snapshots ({self.graphlet_snapshots:,} "
            f"graphlet-level, {self.event_snapshots:,} event-level), "
            f"{self.snapshots_propagated:,} propagated; "
            f"{self.decision_seconds * 1000:.1f} ms deciding"
        )


# ----------------------------------------------------------------------------- executor


class _Burst:
    __slots__ = ("type_", "batches")

    def __init__(self, type_: str):
        self.type_ = type_
        self.batches: list[tuple[Any, list[Mapping[str, object]]]] = []


@dataclass
class _SharedBurst:
    """What the steps of one shared burst read and build (see ``_ComponentRuntime._shared``)."""

    queries: list[int]
    parts: dict[int, Partition]
    views: dict[int, _View]
    alg: _MapAlgebra
    # per query and event: 0 not bound, 1 only starts trends, 2 every predecessor, 3 some
    binds: dict[int, list[int]]
    events: list[tuple[Any, Mapping[str, object]]]
    # the snapshots: X (id 0), then one per event-level snapshot Z; query -> window -> registers
    snap: list[dict[int, dict[int, Vec]]]
    # query -> window -> 1 where an event of E starts a trend, else 0
    starts: dict[int, dict[int, int]]
    # per burst event, its coefficient map (snapshot id -> entry); None: no query binds it
    event_maps: list[dict[int, Entry] | None] = field(default_factory=list)
    # the maps of the events at earlier times than the current one, summed; and of all
    prefix: dict[int, Entry] = field(default_factory=dict)
    total: dict[int, Entry] = field(default_factory=dict)


class _ComponentPartition:
    __slots__ = ("burst", "shared_last", "recent")

    def __init__(self) -> None:
        self.burst: _Burst | None = None
        self.shared_last: dict[str, bool] = {}
        self.recent: deque[Any] = deque()  # times of recent events: the live n of Eq. 7


class _ComponentRuntime:
    """One executor for the queries of a component, over shared partitions."""

    def __init__(
        self,
        plans: list[QueryPlan],
        comp: Component,
        dynamic: bool,
        stats: HamletStats,
        log: bool,
    ):
        self.plans = plans
        self.comp = comp
        self.dynamic = dynamic
        self.stats = stats
        self.log = log
        self.queries = list(comp.queries)
        self.rts = {q: QueryRuntime(plans[q]) for q in self.queries}
        self.names = comp.partition_names
        # each query's key lists its partition attributes in its own order
        self.key_order = {
            q: tuple(self.names.index(a.name) for a in plans[q].partition_attrs)
            for q in self.queries
        }
        self.types = {t for q in self.queries for t in plans[q].type_to_var}
        # the queries each event type concerns, so an event visits only those
        self.by_type: dict[str, list[int]] = {}
        for q in self.queries:
            for t in plans[q].type_to_var:
                self.by_type.setdefault(t, []).append(q)
        self.sets: dict[str, SharableSet] = {s.type_: s for s in comp.sets}
        self.window = WindowSpec(comp.pane, comp.pane)  # pane arithmetic
        self.span = max(plans[q].window.within for q in self.queries)
        self.partitions: dict[tuple[object, ...], _ComponentPartition] = {}
        self.pane: int | None = None
        self.algebras: dict[str, _MapAlgebra] = {}
        self.views: dict[tuple[int, str], _View] = {}
        self.n_types: dict[str, int] = {}
        for s in comp.sets:
            sums: list[str] = []
            mins: list[str] = []
            maxs: list[str] = []
            for q in s.queries:
                plan = plans[q]
                var = plan.type_to_var[s.type_]
                for src, target in (
                    (plan.layout.sums, sums),
                    (plan.layout.mins, mins),
                    (plan.layout.maxs, maxs),
                ):
                    for v, a in src:
                        if v == var and a not in target:
                            target.append(a)
            alg = _MapAlgebra(sums, mins, maxs)
            self.algebras[s.type_] = alg
            for q in s.queries:
                self.views[(q, s.type_)] = _view(plans[q], s.type_, self.rts[q].regs, alg)
            self.n_types[s.type_] = max(
                1,
                max(
                    len(
                        {
                            plans[q].vars[t.src].type
                            for t in plans[q].template.transitions
                            if t.dst == plans[q].type_to_var[s.type_]
                        }
                    )
                    for q in s.queries
                ),
            )

    # -- partitions of each query ---------------------------------------------------

    def _part(self, q: int, key: tuple[object, ...]) -> Partition:
        rt = self.rts[q]
        qkey = tuple(key[i] for i in self.key_order[q])
        part = rt.partitions.get(qkey)
        if part is None:
            part = rt.partitions[qkey] = Partition(rt, qkey)
        return part

    def _plain(
        self,
        q: int,
        key: tuple[object, ...],
        t: Any,
        events: list[tuple[str, Mapping[str, object]]],
    ) -> None:
        plan = self.plans[q]
        items = []
        for typ, attrs in events:
            var = plan.type_to_var.get(typ)
            if var is not None and plan.vars[var].accepts(attrs):
                items.append((var, attrs))
        if items:
            self._part(q, key).process(t, items)

    # -- the event loop --------------------------------------------------------------

    def advance_to(self, t: Any) -> list[ResultRow]:
        pane = self.window.pane_of(t)
        if self.pane is not None and pane != self.pane:
            self.flush_all(t)
        self.pane = pane
        rows: list[ResultRow] = []
        for q in self.queries:
            rows.extend(self.rts[q].advance_to(t))
        return rows

    def process(self, t: Any, events: list[tuple[str, Mapping[str, object]]]) -> None:
        groups: dict[tuple[object, ...], list[tuple[str, Mapping[str, object]]]] = {}
        for typ, attrs in events:
            if typ not in self.types:
                continue
            key = tuple(attrs.get(n) for n in self.names)
            if None in key:
                continue
            groups.setdefault(key, []).append((typ, attrs))
        for key, evs in groups.items():
            cp = self.partitions.get(key)
            if cp is None:
                cp = self.partitions[key] = _ComponentPartition()
            cp.recent.extend(t for _ in evs)
            while cp.recent and cp.recent[0] <= t - self.span:
                cp.recent.popleft()
            kinds = {typ for typ, _ in evs}
            kleene = next(iter(kinds)) if len(kinds) == 1 else None
            if kleene is not None and kleene in self.sets:
                if cp.burst is not None and cp.burst.type_ != kleene:
                    self._flush(key, cp)
                if cp.burst is None:
                    cp.burst = _Burst(kleene)
                cp.burst.batches.append((t, [a for _, a in evs]))
                continue
            if cp.burst is not None:
                self._flush(key, cp)
            concerned = sorted({q for typ in kinds for q in self.by_type[typ]})
            for q in concerned:
                self._plain(q, key, t, evs)

    def flush_all(self, t: Any = None) -> None:
        """Complete every buffered burst (a pane ended); forget partitions idle for a window."""
        dead = []
        for key, cp in self.partitions.items():
            if cp.burst is not None:
                self._flush(key, cp)
            if t is not None:
                while cp.recent and cp.recent[0] <= t - self.span:
                    cp.recent.popleft()
                if not cp.recent:
                    dead.append(key)
        for key in dead:
            del self.partitions[key]

    def finish(self) -> list[ResultRow]:
        self.flush_all()
        rows: list[ResultRow] = []
        for q in self.queries:
            rows.extend(self.rts[q].finish())
        return rows

    # -- one burst -------------------------------------------------------------------

    def _flush(self, key: tuple[object, ...], cp: _ComponentPartition) -> None:
        burst = cp.burst
        assert burst is not None
        cp.burst = None
        type_ = burst.type_
        sset = self.sets[type_]
        stats = self.stats
        stats.bursts += 1
        events = [(t, attrs) for t, batch in burst.batches for attrs in batch]
        # per query and event: 0 not bound, 1 bound but a NEXT(E) condition fails (it only
        # starts trends), 2 bound with every predecessor, 3 bound but an edge predicate
        # drops some predecessor (its registers are computed for that query alone)
        binds = {q: self._bind_flags(q, key, type_, events) for q in sset.queries}
        started = _time.perf_counter()
        shared = (
            self._choose(sset, binds, len(events), len(cp.recent), key)
            if len(sset.queries) > 1
            else []
        )
        stats.decision_seconds += _time.perf_counter() - started
        was = cp.shared_last.get(type_)
        now = len(shared) > 1
        if was is not None and was != now:
            if now:
                stats.merges += 1
            else:
                stats.splits += 1
        cp.shared_last[type_] = now
        if not now:
            shared = []
        for q in self.by_type[type_]:
            if q in shared:
                continue
            for t, batch in burst.batches:
                self._plain(q, key, t, [(type_, a) for a in batch])
        if shared:
            stats.shared_bursts += 1
            self._shared(key, sset, shared, burst, events, binds)

    def _bind_flags(
        self,
        q: int,
        key: tuple[object, ...],
        type_: str,
        events: list[tuple[Any, Mapping[str, object]]],
    ) -> list[int]:
        plan = self.plans[q]
        var = plan.type_to_var[type_]
        info = plan.vars[var]
        guards = plan.guards.get(var, ())
        g = self._part(q, key).root
        scanned = [tr for tr in g.incoming[var] if tr.preds]
        ks = plan.window.windows_of(events[0][0])
        earlier: list[tuple[Any, ...]] = []
        for tr in scanned:
            vertices = g.states[tr.src].vertices or ()
            for xt, xattrs, xaggs in vertices:
                if (tr.frontier is None or xt >= tr.frontier) and any(k in ks for k in xaggs):
                    earlier.append((tr.preds, xattrs))
        loop = next((tr.preds for tr in scanned if tr.src == var), None)
        flags: list[int] = []
        for i, (t, attrs) in enumerate(events):
            if not info.accepts(attrs):
                flags.append(0)
            elif guards and not all(gd(NO_ATTRIBUTES, attrs) for gd in guards):
                flags.append(1)
            elif any(not all(p(xattrs, attrs) for p in preds) for preds, xattrs in earlier) or (
                loop is not None
                and any(
                    flags[j] and events[j][0] < t and not all(p(events[j][1], attrs) for p in loop)
                    for j in range(i)
                )
            ):
                flags.append(3)
            else:
                flags.append(2)
        return flags

    def _choose(
        self,
        sset: SharableSet,
        binds: dict[int, list[int]],
        b: int,
        n: int,
        key: tuple[object, ...],
    ) -> list[int]:
        """The queries that share this burst (HAMLET, Section 4.3)."""
        queries = list(sset.queries)
        t = self.n_types[sset.type_]
        g = b
        n = max(n, 1)
        # hamlet-static always shares what is sharable
        chosen = self._prune(queries, binds, b, n, g, t) if self.dynamic else queries
        k = len(chosen)
        snaps = 1
        if k > 1:
            snaps += sum(
                1
                for i in range(b)
                if len({binds[q][i] for q in chosen}) > 1
                or any(binds[q][i] in (1, 3) for q in chosen)
            )
        gain = benefit(b, n, snaps, snaps, k, g, t)
        share = k > 1 and (gain > 0 or not self.dynamic)
        if self.log:
            self.stats.decisions.append(
                {
                    "partition": key,
                    "type": sset.type_,
                    "events": b,
                    "n": n,
                    "candidates": [self.plans[q].name for q in queries],
                    "shared": [self.plans[q].name for q in chosen] if share else [],
                    "snapshots": snaps,
                    "benefit": gain,
                }
            )
        return sorted(chosen) if share else []

    @staticmethod
    def _prune(
        queries: list[int], binds: dict[int, list[int]], b: int, n: int, g: int, t: int
    ) -> list[int]:
        """Snapshot-driven, then benefit-driven pruning (Theorems 4.3 and 4.5): O(m) tests."""
        groups: dict[tuple[int, ...], list[int]] = {}
        for q in queries:
            groups.setdefault(tuple(binds[q]), []).append(q)
        core_sig, core = max(groups.items(), key=lambda kv: len(kv[1]))
        chosen = list(core)  # they introduce no event-level snapshot among themselves
        k0 = len(core)
        for sig, members in groups.items():
            if sig == core_sig:
                continue
            extra = sum(1 for x, y in zip(sig, core_sig, strict=True) if x != y)
            with_q = shared_cost(b, n, 1 + extra, 1 + extra, k0 + 1, g, t)
            without = shared_cost(b, n, 1, 1, k0, g, t) + nonshared_cost(b, n, 1)
            if with_q <= without:  # Theorem 4.5: sharing q pays, with the others or not at all
                chosen.extend(members)
        return chosen

    def _shared(
        self,
        key: tuple[object, ...],
        sset: SharableSet,
        queries: list[int],
        burst: _Burst,
        events: list[tuple[Any, Mapping[str, object]]],
        binds: dict[int, list[int]],
    ) -> None:
        """Process a burst that ``queries`` share (HAMLET, Algorithm 1): the graphlet-level
        snapshot entering it, one coefficient map per event, then the summed map applied
        once per query and window."""
        type_ = sset.type_
        parts = {q: self._part(q, key) for q in queries}
        views = {q: self.views[(q, type_)] for q in queries}
        t1 = burst.batches[0][0]
        snapshot, starts = self._graphlet_snapshot(queries, parts, views, t1)
        run = _SharedBurst(
            queries=queries,
            parts=parts,
            views=views,
            alg=self.algebras[type_],
            binds=binds,
            events=events,
            snap=[snapshot],
            starts=starts,
        )
        self._propagate(run, burst)
        for q in queries:
            self._apply_burst(run, q, t1, burst.batches[-1][0])

    def _graphlet_snapshot(
        self, queries: list[int], parts: dict[int, Partition], views: dict[int, _View], t1: Any
    ) -> tuple[dict[int, dict[int, Vec]], dict[int, dict[int, int]]]:
        """The graphlet-level snapshot X (Def. 3.9, Eq. 5) of a burst that starts at t1: per
        query and window, the registers entering it (the trends that end before it in the
        predecessor states of E, plus the trend an event of E starts where E is a start
        state); and, per query and window, whether an event of E starts a trend (1) or not."""
        stats = self.stats
        snapshot: dict[int, dict[int, Vec]] = {}
        starts: dict[int, dict[int, int]] = {}
        for q in queries:
            g = parts[q].root
            var = views[q].var
            ks = self.plans[q].window.windows_of(t1)
            preds: dict[int, Vec] = {}
            for tr in g.incoming[var]:
                if tr.preds:  # every predecessor, as for an event whose pairs all pass
                    _full_sum(g, tr, ks, preds)
                else:
                    g.collect(tr, ks, NO_ATTRIBUTES, preds)
            is_start = var == g.template.start
            table: dict[int, Vec] = {}
            st: dict[int, int] = {}
            for k in ks:
                s = 1 if is_start and (k not in g.blocked or t1 <= g.blocked[k]) else 0
                st[k] = s
                vec = preds.get(k)
                if vec is None:
                    if not s:
                        continue
                    vec = views[q].regs.zero()
                vec = list(vec)
                vec[0] += s
                if vec[0]:
                    table[k] = vec
            snapshot[q] = table
            starts[q] = st
        stats.graphlet_snapshots += 1
        if self.log and stats.decisions:
            stats.decisions[-1]["snapshot"] = {
                self.plans[q].name: {k: vec[0] for k, vec in snapshot[q].items()} for q in queries
            }
        return snapshot, starts

    def _propagate(self, run: _SharedBurst, burst: _Burst) -> None:
        """The coefficient map of every event of the burst (None where no sharing query binds
        it), each from the sum of the maps of the events at earlier times; ``run.total``
        sums them all."""
        alg = run.alg
        pos = 0
        for bt, batch in burst.batches:
            made: list[dict[int, Entry]] = []
            for attrs in batch:
                flags = [run.binds[q][pos] for q in run.queries]
                pos += 1
                if not any(flags):
                    run.event_maps.append(None)
                    continue
                self.stats.snapshots_propagated += 1 + len(run.prefix)
                if all(f == 2 for f in flags):  # every query binds it with every predecessor
                    base = {0: alg.identity()}
                    alg.add_map(base, run.prefix)
                    made.append({sid: alg.own(e, attrs) for sid, e in base.items()})
                else:
                    made.append(self._event_snapshot(run, attrs, bt, flags))
                run.event_maps.append(made[-1])
            for m in made:
                alg.add_map(run.prefix, m)
                alg.add_map(run.total, m)

    def _event_snapshot(
        self, run: _SharedBurst, attrs: Mapping[str, object], t: Any, flags: list[int]
    ) -> dict[int, Entry]:
        """An event-level snapshot Z (Def. 3.11) for an event at t that the sharing queries
        bind differently (``flags``, one per query, as in ``_flush``): its registers computed
        per query, then shared onwards as a snapshot of its own. Returns the event's map."""
        stats = self.stats
        alg = run.alg
        table_z: dict[int, dict[int, Vec]] = {}
        for q, f in zip(run.queries, flags, strict=True):
            if not f:
                continue
            view = run.views[q]
            exact_preds = self._exact_preds(run, q, attrs, t) if f == 3 else {}
            per_k: dict[int, Vec] = {}
            for k, s in run.starts[q].items():
                if f == 2:  # every predecessor: X and the burst so far
                    pred = self._evaluate(
                        run.prefix, run.snap, q, k, view, alg, run.snap[0][q].get(k)
                    )
                    vec = view.regs.extend(view.var, attrs, pred, 0)
                else:  # 1: it only starts trends; 3: predecessors pair by pair
                    vec = view.regs.extend(view.var, attrs, exact_preds.get(k), s)
                if vec is not None:
                    per_k[k] = vec
            table_z[q] = per_k
        run.snap.append(table_z)
        stats.event_snapshots += 1
        if self.log and stats.decisions:
            stats.decisions[-1].setdefault("event_snapshot_values", []).append(
                {
                    self.plans[q].name: {k: v[0] for k, v in per.items()}
                    for q, per in table_z.items()
                }
            )
        return {len(run.snap) - 1: alg.identity()}

    def _apply_burst(self, run: _SharedBurst, q: int, t1: Any, t_last: Any) -> None:
        """Apply the burst's summed map to query q once per window: the totals of E and of
        its negated transitions, the results where E ends the query, and the vertices of E
        where an edge predicate of the query scans them."""
        part = run.parts[q]
        g = part.root
        view = run.views[q]
        alg = run.alg
        state = g.states[view.var]
        ends = []
        for k in run.starts[q]:
            delta = self._evaluate(run.total, run.snap, q, k, view, alg, None)
            if delta is None or not delta[0]:
                continue
            if state.totals is not None:
                tot = state.totals.get(k)
                if tot is None:
                    tot = state.totals[k] = Total(g.alg, False)
                tot.add(t1, delta)
            for tr in state.negated_out:
                assert tr.totals is not None
                tot = tr.totals.get(k)
                if tot is None:
                    tot = tr.totals[k] = Total(g.alg, True)
                tot.add(t1, list(delta))
            if view.var == g.template.end:
                ends.append((k, list(delta)))
        if ends:
            part.add_results(t1, ends)
        if state.vertices is not None:  # E is scanned by an edge predicate of this query
            for (t, attrs), em in zip(run.events, run.event_maps, strict=True):
                if em is None:
                    continue
                aggs = {}
                for k in run.starts[q]:
                    vec = self._evaluate(em, run.snap, q, k, view, alg, None)
                    if vec is not None and vec[0]:
                        aggs[k] = vec
                if aggs:  # into the key indexes of its transitions too
                    g.remember(state, t, attrs, aggs)
        part.last_time = t_last

    def _exact_preds(
        self, run: _SharedBurst, q: int, attrs: Mapping[str, object], t: Any
    ) -> dict[int, Vec]:
        """The predecessors of one burst event at t for query q, pair by pair (GRETA's way):
        the state before the burst, then the earlier burst events that q binds."""
        view = run.views[q]
        snap = run.snap
        alg = run.alg
        g = run.parts[q].root
        ks = self.plans[q].window.windows_of(t)
        preds: dict[int, Vec] = {}
        loop = None
        for tr in g.incoming[view.var]:
            g.collect(tr, ks, attrs, preds)  # the state before the burst
            if tr.src == view.var:
                loop = tr
        if loop is None:
            return preds
        # (the maps made so far: the events before this one)
        for (tj, aj), m, f in zip(run.events, run.event_maps, run.binds[q], strict=False):
            if m is None or not f or not tj < t:  # not an event of this query, or not earlier
                continue
            if loop.preds and not all(p(aj, attrs) for p in loop.preds):
                continue
            for k in ks:
                vec = self._evaluate(m, snap, q, k, view, alg, None)
                if vec is None:
                    continue
                acc = preds.get(k)
                if acc is None:
                    preds[k] = vec
                else:
                    view.regs.add_into(acc, vec)
        return preds

    @staticmethod
    def _evaluate(
        mapping: dict[int, Entry],
        snap: list[dict[int, dict[int, Vec]]],
        q: int,
        k: int,
        view: _View,
        alg: _MapAlgebra,
        plus: Vec | None,
    ) -> Vec | None:
        """Registers of a map for query q and window k, plus an optional vector."""
        acc = list(plus) if plus is not None else None
        for sid, entry in mapping.items():
            val = snap[sid].get(q, {}).get(k)
            if val is None:
                continue
            out = view.apply(entry, val, alg)
            if out is None:
                continue
            if acc is None:
                acc = out
            else:
                view.regs.add_into(acc, out)
        return acc


def _full_sum(g: Graph, tr: Transition, ks: range, preds: dict[int, Vec]) -> None:
    """Registers of every live source vertex of a scanned transition, predicate aside."""
    vertices = g.states[tr.src].vertices or ()
    for xt, _attrs, xaggs in vertices:
        if tr.frontier is not None and xt < tr.frontier:
            continue
        for k, vec in xaggs.items():
            if k in ks:
                acc = preds.get(k)
                if acc is None:
                    preds[k] = list(vec)
                else:
                    g.alg.add_into(acc, vec)


class HamletExecutor(GretaExecutor):
    """Online HAMLET over a workload: components share, the other queries run GRETA.

    Components and single-query runtimes have the same interface, so stepping,
    closing windows and finishing are GretaExecutor's."""

    def __init__(self, plans: list[QueryPlan], sharing: SharingPlan, *, log: bool = False):
        """Run the queries of ``plans`` that ``sharing`` routes to the Python engine, its
        components shared (``dynamic`` per burst for hamlet, always for hamlet-static)."""
        dynamic = sharing.strategy != "hamlet-static"  # (sharon: its other queries)
        self.stats = HamletStats()
        self.components = [
            _ComponentRuntime(plans, c, dynamic, self.stats, log) for c in sharing.components
        ]
        shared = {q for c in sharing.components for q in c.queries}
        self.singles = [QueryRuntime(plans[q]) for q in sharing.on("python") if q not in shared]
        self.runtimes = [*self.components, *self.singles]

    def report(self, stats: dict[str, Any]) -> None:
        stats["hamlet"] = self.stats
