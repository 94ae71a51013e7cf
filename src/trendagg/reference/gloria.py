"""GLORIA's shared execution of a workload sharing plan (Ma, Lei, Poppe, Rundensteiner), readable.

A plan of GLORIA's optimizer (:mod:`trendagg.optimizer.gloria`) gives every transition
``Ei -> Ej`` of its queries a partition of them into *Q-sets*
(:class:`~trendagg.optimizer.plan.GloriaQSet`); a shared Q-set carries a *label*, the
event type whose events hold the *snapshots* its expressions are written in (section
2.3), a non-shared one (label None) holds one query's plain registers (GRETA). This
module runs such a plan exactly (spec ``../shared/specs/gloria.md``, section 3).

Per partition key, every event e of type E holds one *representation* per *context*: a
Q-set S of a transition that leaves E (or, where a query ends at E and nothing leaves
it, the Q-set it arrived with). A representation is ``(vals, coef)``: per query of S and
window its registers (values), and a coefficient *entry* per snapshot id, computed once
for all of S, so that (spec 3.2)

    v(e, q, k) = vals[q][k] + sum over s of apply_q(coef[s], SP[s][q][k]).

An entry is a register vector over event types (the union, over the workload, of what
its queries aggregate on each type: ``_Algebra``): the trend count c of the paths from
the snapshot's event to e and, per type, their occurrence counts, sums, minima and
maxima, so every aggregate is carried (spec 3.3): ``apply_q`` combines a query's
registers at the snapshot with them as the registers of the concatenated trends.

For each time batch (events of equal time are computed from the state before that
time, then applied: matches need strictly increasing times), an event's representation
in context S is:

1. per incoming transition ``Ei -> E``, ``TOT[Ei, S_in]``, the running total of the
   representations of earlier Ei events in the Q-set ``S_in`` of that transition, is
   either *reused* (every query of S arrives through ``S_in``, with S's label, which is
   not E): its coefficients are added once for all of S (a *shared propagation*), or
   *evaluated* per query into values (an *evaluation*; free where ``S_in`` is
   non-shared: those are values already);
2. a query that starts at E adds one trend (a value insertion); the event's own
   contribution is applied to the values and to every coefficient entry;
3. if S's label is E, the event stores a *local snapshot*: ``SP[s_e][q][k] = v(e, q, k)``,
   and its representation becomes ``({}, {s_e: identity})``;
4. a query that ends at E adds ``v(e, q, k)`` to its result in window k.

Coefficients do not depend on the window: windows are intervals, so if a snapshot and
e lie in window k, every event between them does too, and a snapshot outside k has no
value there (spec 3.4). Queries of a Q-set may thus differ in window; they must agree
on partition attributes and on how they bind the transition's events (the plan is
checked: :func:`~trendagg.optimizer.plan.check_qsets`). A snapshot is dropped when
every window of its queries has closed, and with it its entries.

The queries the plan does not route here run in the executor's HAMLET part, exactly
as under the hamlet plan (NOT, NEXT conditions and qualified partition attributes stay
there: GLORIA's class has none of them, spec 1.6).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from trendagg.io.results import ResultRow
from trendagg.optimizer.contexts import Context, QKey, contexts
from trendagg.optimizer.plan import GloriaQSet, SharingPlan
from trendagg.plan.compile import QueryPlan
from trendagg.plan.layout import AggLayout, Vec, before
from trendagg.reference.greta import group_rows
from trendagg.reference.hamlet import HamletExecutor
from trendagg.reference.registers import Registers, exact

Entry = list[Any]  # a register vector of _Algebra's layout: [c, occurrences..., sums..., ...]


def _unique(items: list[Any]) -> tuple[Any, ...]:
    return tuple(dict.fromkeys(items))


class _Algebra:
    """Coefficient entries: register vectors whose variables are event types, holding
    what any query of the runtime aggregates on each type (spec 3.3)."""

    def __init__(self, plans: Sequence[QueryPlan]):
        counts: list[str] = []
        sums: list[tuple[str, str]] = []
        mins: list[tuple[str, str]] = []
        maxs: list[tuple[str, str]] = []
        for plan in plans:
            lay = plan.layout
            counts += [plan.vars[v].type for v in lay.count_vars]
            sums += [(plan.vars[v].type, a) for v, a in lay.sums]
            mins += [(plan.vars[v].type, a) for v, a in lay.mins]
            maxs += [(plan.vars[v].type, a) for v, a in lay.maxs]
        self.layout = AggLayout(_unique(counts), _unique(sums), _unique(mins), _unique(maxs))
        self.regs = Registers(self.layout)

    def identity(self) -> Entry:
        """The entry of the empty path from a snapshot's event to itself."""
        entry = self.layout.zero()
        entry[0] = 1
        return entry

    def own(self, type_: str, attrs: Mapping[str, object], entry: Entry) -> Entry:
        """``entry`` extended by an event of ``type_``: each of its c paths counts the
        event and its values. An attribute the event lacks is read by no query of the
        entry's Q-set (such a query would not bind the event): it is skipped."""
        c = entry[0]
        out = list(entry)
        cnt, sums, mins, maxs = self.regs.rules(type_)
        for i in cnt:
            out[i] += c
        for i, a in sums:
            v = attrs.get(a)
            if v is not None:
                out[i] += exact(v) * c
        for i, a in mins:
            v = attrs.get(a)
            if v is not None and (out[i] is None or before(v, out[i])):
                out[i] = v
        for i, a in maxs:
            v = attrs.get(a)
            if v is not None and (out[i] is None or before(out[i], v)):
                out[i] = v
        return out

    def add_into(self, acc: Entry, entry: Entry) -> None:
        self.regs.add_into(acc, entry)


class _View:
    """How one query's registers meet the algebra's entries: per register of the query,
    the entry's register of the same (type, attribute), or None (the trend count)."""

    def __init__(self, plan: QueryPlan, algebra: _Algebra):
        lay, mine = plan.layout, algebra.layout
        self.regs = Registers(lay)
        typ = {v: info.type for v, info in plan.vars.items()}
        self.additive = [(lay.count_index(v), mine.count_index(typ[v])) for v in lay.count_vars]
        self.additive += [(lay.sum_index(v, a), mine.sum_index(typ[v], a)) for v, a in lay.sums]
        self.extremes = [
            (lay.min_start + i, mine.min_start + mine.mins.index((typ[v], a)), True)
            for i, (v, a) in enumerate(lay.mins)
        ] + [
            (lay.max_start + i, mine.max_start + mine.maxs.index((typ[v], a)), False)
            for i, (v, a) in enumerate(lay.maxs)
        ]

    def apply(self, entry: Entry, snap: Vec) -> Vec | None:
        """The registers of every trend made of one that ends at the snapshot's event
        (``snap``) and one of the entry's paths on from it: counts and sums multiply by
        the other side's count; minima and maxima fold both sides."""
        c, count = entry[0], snap[0]
        if not (c and count):
            return None
        out = list(snap)
        out[0] = c * count
        for i, j in self.additive:
            out[i] = snap[i] * c + entry[j] * count
        for i, j, is_min in self.extremes:
            x, y = snap[i], entry[j]
            if y is not None and (x is None or (before(y, x) if is_min else before(x, y))):
                out[i] = y
        return out


@dataclass
class _Rep:
    """An event's representation in one context (or a running total of them): per
    query, per window its values; per snapshot id an entry; a total also counts its
    events per query and window (for the non-shared propagation counter)."""

    vals: dict[str, dict[int, Vec]]
    coef: dict[int, Entry]
    events: dict[str, dict[int, int]] = field(default_factory=dict)


class _Part:
    """One partition key's state: totals per (type, Q-set), snapshots per id (per query
    and window), results per query and window."""

    __slots__ = ("results", "snaps", "totals")

    def __init__(self) -> None:
        self.totals: dict[tuple[str, QKey], _Rep] = {}
        self.snaps: dict[int, dict[str, dict[int, Vec]]] = {}
        self.results: dict[str, dict[int, Vec]] = {}


@dataclass
class GloriaStats:
    """What a run did (spec 3.6): shared propagations (entries of a reused total, per
    target type), non-shared ones (predecessor events of a non-shared query, counted in
    the event's first window, per target type), evaluations (an expression with
    coefficients turned into one query's values), snapshots and value insertions."""

    shared: dict[str, int]
    nonshared: dict[str, int]
    evaluations: int = 0
    snapshots: int = 0
    insertions: int = 0

    def as_dict(self) -> dict[str, Any]:
        return {
            "shared_propagations": sum(self.shared.values()),
            "nonshared_propagations": sum(self.nonshared.values()),
            "shared_by_type": dict(sorted(self.shared.items())),
            "nonshared_by_type": dict(sorted(self.nonshared.items())),
            "evaluations": self.evaluations,
            "snapshots": self.snapshots,
            "insertions": self.insertions,
        }


def _add_vec(acc: dict[int, Vec], k: int, vec: Vec, regs: Registers) -> None:
    held = acc.get(k)
    if held is None:
        acc[k] = list(vec)
    else:
        regs.add_into(held, vec)


class GloriaRuntime:
    """The queries of one partitioning (partition attribute names) that a GLORIA plan
    runs, their contexts per event type, and their state per partition key."""

    def __init__(self, plans: Sequence[QueryPlan], qsets: Sequence[GloriaQSet], stats: GloriaStats):
        self.plans = list(plans)
        self.by_name = {p.name: p for p in self.plans}
        self.names = tuple(sorted(a.name for a in self.plans[0].partition_attrs))
        self.algebra = _Algebra(self.plans)
        self.views = {p.name: _View(p, self.algebra) for p in self.plans}
        self.stats = stats
        self.at = contexts(self.plans, qsets)
        self.parts: dict[tuple[object, ...], _Part] = {}
        self.closed: dict[str, int] = {}
        self.next_id = 0

    # -- evaluating a representation

    def evaluate(self, part: _Part | None, rep: _Rep, q: str, k: int) -> Vec | None:
        """v(e, q, k) of a representation: its values plus each entry applied to its
        snapshot's registers for (q, k) (none: the snapshot is not in window k)."""
        view = self.views[q]
        held = rep.vals.get(q, {}).get(k)
        acc = None if held is None else list(held)
        if part is None:
            return acc
        for sid, entry in rep.coef.items():
            snap = part.snaps.get(sid, {}).get(q, {}).get(k)
            if snap is None:
                continue
            vec = view.apply(entry, snap)
            if vec is None:
                continue
            if acc is None:
                acc = vec
            else:
                view.regs.add_into(acc, vec)
        return acc

    def _compute(
        self, ctx: Context, e: str, t: Any, attrs: Mapping[str, object], part: _Part | None
    ) -> _Rep | None:
        """The event's representation in ``ctx``, from the state before time t."""
        stats = self.stats
        vals: dict[str, dict[int, Vec]] = {q: {} for q in ctx.queries}
        coef: dict[int, Entry] = {}
        algebra = self.algebra
        for inc in ctx.incoming:
            total = None if part is None else part.totals.get((inc.source, inc.qset))
            if total is None:
                continue
            if inc.reuse:  # one propagation for the whole Q-set (Eq. 3)
                for sid, entry in total.coef.items():
                    mine = coef.get(sid)
                    if mine is None:
                        coef[sid] = list(entry)
                    else:
                        algebra.add_into(mine, entry)
                stats.shared[e] = stats.shared.get(e, 0) + len(total.coef)
                for q in inc.queries:
                    regs = self.views[q].regs
                    held = total.vals.get(q, {})
                    for k in self.by_name[q].window.windows_of(t):
                        if k in held:
                            _add_vec(vals[q], k, held[k], regs)
                continue
            for q in inc.queries:  # evaluated per query (Eq. 4), or plain values (Eq. 2)
                regs = self.views[q].regs
                ks = self.by_name[q].window.windows_of(t)
                if total.coef:
                    stats.evaluations += 1
                elif ks:
                    n = total.events.get(q, {}).get(ks[0], 0)
                    stats.nonshared[e] = stats.nonshared.get(e, 0) + n
                for k in ks:
                    vec = self.evaluate(part, total, q, k)
                    if vec is not None:
                        _add_vec(vals[q], k, vec, regs)
        # the event's own contribution, and the trends it starts
        out = _Rep({}, {sid: algebra.own(e, attrs, entry) for sid, entry in coef.items()})
        for q in ctx.queries:
            plan = self.by_name[q]
            view = self.views[q]
            var = plan.type_to_var[e]
            begins = 1 if q in ctx.starts else 0
            extended: dict[int, Vec] = {}
            for k in plan.window.windows_of(t):
                new = view.regs.extend(var, attrs, vals[q].get(k), begins)
                if new is not None:
                    extended[k] = new
            stats.insertions += begins
            if extended:
                out.vals[q] = extended
        if not out.vals and not out.coef:
            return None
        return out

    # -- the runtime interface (GretaExecutor steps it)

    def process(self, t: Any, events: list[tuple[str, Mapping[str, object]]]) -> None:
        """Add the events of time t: every representation from the state before t, then
        snapshots, results and totals."""
        updates: list[tuple[tuple[object, ...], str, Context, _Rep]] = []
        for e, attrs in events:
            contexts = self.at.get(e)
            if not contexts:
                continue
            key = tuple(attrs.get(n) for n in self.names)
            if None in key:
                continue
            part = self.parts.get(key)
            for ctx in contexts:
                name, var = ctx.binder
                if not self.by_name[name].vars[var].accepts(attrs):
                    continue
                rep = self._compute(ctx, e, t, attrs, part)
                if rep is not None:
                    updates.append((key, e, ctx, rep))
        for key, e, ctx, rep in updates:
            part = self._part(key)
            if ctx.snapshot or ctx.ends:
                wanted = ctx.queries if ctx.snapshot else ctx.ends
                values: dict[str, dict[int, Vec]] = {}
                for q in wanted:
                    if rep.coef:
                        self.stats.evaluations += 1
                    got = {}
                    for k in self.by_name[q].window.windows_of(t):
                        vec = self.evaluate(part, rep, q, k)
                        if vec is not None:
                            got[k] = vec
                    values[q] = got
                for q in ctx.ends:
                    results = part.results.setdefault(q, {})
                    for k, vec in values[q].items():
                        _add_vec(results, k, vec, self.views[q].regs)
                if ctx.snapshot:  # a local snapshot (spec 3.2, rule 5)
                    sid = self.next_id
                    self.next_id += 1
                    part.snaps[sid] = {q: v for q, v in values.items() if v}
                    self.stats.snapshots += 1
                    rep = _Rep({}, {sid: self.algebra.identity()})
            if ctx.totalled:
                self._insert(part, (e, ctx.key), rep)

    def _insert(self, part: _Part, where: tuple[str, QKey], rep: _Rep) -> None:
        """TOT[type, Q-set] += rep; per (query, window) also the events counted, after
        the registers (for the non-shared propagation counter)."""
        total = part.totals.get(where)
        if total is None:
            total = part.totals[where] = _Rep({}, {})
        for sid, entry in rep.coef.items():
            mine = total.coef.get(sid)
            if mine is None:
                total.coef[sid] = list(entry)
            else:
                self.algebra.add_into(mine, entry)
        for q, per_k in rep.vals.items():
            held = total.vals.setdefault(q, {})
            counts = total.events.setdefault(q, {})
            for k, vec in per_k.items():
                _add_vec(held, k, vec, self.views[q].regs)
                counts[k] = counts.get(k, 0) + 1

    def _part(self, key: tuple[object, ...]) -> _Part:
        part = self.parts.get(key)
        if part is None:
            part = self.parts[key] = _Part()
        return part

    def advance_to(self, t: Any) -> list[ResultRow]:
        """Close every window that ends at or before t: its rows, then what only closed
        windows need (values, snapshots and their entries)."""
        closed = {p.name: p.window.closed_before(t) for p in self.plans}
        if all(c <= self.closed.get(q, c - 1) for q, c in closed.items()):
            return []
        self.closed = closed
        return self._close(closed)

    def finish(self) -> list[ResultRow]:
        return self._close(None)

    def _close(self, closed: Mapping[str, int] | None) -> list[ResultRow]:
        def done(q: str, k: int) -> bool:
            return closed is None or k < closed[q]

        rows: list[ResultRow] = []
        for plan in self.plans:
            q = plan.name
            order = [self.names.index(a.name) for a in plan.partition_attrs]
            ks = sorted(
                {k for part in self.parts.values() for k in part.results.get(q, {}) if done(q, k)}
            )
            for k in ks:
                totals = [
                    (tuple(key[i] for i in order), part.results[q].get(k))
                    for key, part in self.parts.items()
                    if q in part.results
                ]
                rows += group_rows(plan, self.views[q].regs, k, totals)
        for key in list(self.parts):
            part = self.parts[key]
            for q, per_k in part.results.items():
                for k in [k for k in per_k if done(q, k)]:
                    del per_k[k]
            for sid in list(part.snaps):
                snap = part.snaps[sid]
                for q, per_k in snap.items():
                    for k in [k for k in per_k if done(q, k)]:
                        del per_k[k]
                if not any(snap.values()):
                    del part.snaps[sid]
            for where in list(part.totals):
                total = part.totals[where]
                for q, per_k in total.vals.items():
                    for k in [k for k in per_k if done(q, k)]:
                        del per_k[k]
                for q, counted in total.events.items():
                    for k in [k for k in counted if done(q, k)]:
                        del counted[k]
                for sid in [s for s in total.coef if s not in part.snaps]:
                    del total.coef[sid]
                if not total.coef and not any(total.vals.values()):
                    del part.totals[where]
            if not part.totals and not part.snaps and not any(part.results.values()):
                del self.parts[key]
        return rows


class GloriaExecutor(HamletExecutor):
    """Online GLORIA over a workload: the queries of the plan's Q-sets in a
    :class:`GloriaRuntime` per partitioning, the Python engine's other queries as under
    the hamlet plan (HAMLET's components, GRETA for the rest)."""

    def __init__(self, plans: list[QueryPlan], sharing: SharingPlan, *, log: bool = False):
        super().__init__(plans, sharing, log=log)
        members = {name for s in sharing.qsets for name in s.queries}
        members &= {r.query for r in sharing.routes if r.executor == "python"}
        self.singles = [rt for rt in self.singles if rt.plan.name not in members]
        self.gloria_stats = GloriaStats({}, {})
        groups: dict[tuple[str, ...], list[QueryPlan]] = {}
        for p in plans:
            if p.name in members:
                names = tuple(sorted(a.name for a in p.partition_attrs))
                groups.setdefault(names, []).append(p)
        self.gloria = [
            GloriaRuntime(ps, sharing.qsets, self.gloria_stats) for ps in groups.values()
        ]
        self.runtimes = [*self.components, *self.gloria, *self.singles]

    def report(self, stats: dict[str, Any]) -> None:
        """HAMLET's counters, and GLORIA's (:class:`GloriaStats`) with the
        Q-sets run (shared: with a label)."""
        super().report(stats)
        counters = self.gloria_stats.as_dict()
        counters["runtimes"] = len(self.gloria)
        stats["gloria"] = counters


__all__ = ["GloriaExecutor", "GloriaRuntime", "GloriaStats"]
