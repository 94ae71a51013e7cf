"""SHARON's shared execution of fixed-length sequences (Poppe et al., ICDE 2018), readable.

A plan of SHARON's optimizer (:mod:`trendagg.optimizer.sharon`) names sub-sequences
that some queries compute once together (:class:`~trendagg.optimizer.plan.SharedSequence`).
A query ``SEQ(E1, ..., En)`` of the plan is cut into *segments* in pattern order:
each shared sub-sequence it takes part in is one, and each maximal run of its other
positions is a *private* one. Per partition (the queries of one runtime share their
window and partition attributes: the candidates' signature) and per window k, as in
the specification (``../shared/specs/sharon.md``, section 3.4):

- ``Out_j``, the registers of the matches of the first j segments that lie in window
  k, is what segment j+1 starts from; ``Out_0`` is one empty match (count 1);
- a private segment runs GRETA's prefix registers: the event at its first position
  extends ``Out_{j-1}`` as it is before the event's time; every other position
  extends the position before it;
- a shared sub-sequence keeps *START groups*: an event at its first position opens a
  group that holds one register vector per position (computed once for all its
  queries) and, per query, the snapshot of that query's ``Out`` before the
  sub-sequence, taken at the event's time. A START whose snapshots equal those of
  the latest group joins it (the vectors evolve by the same linear rules, so the
  sum is exact); the paper's per-START counts are the case of one START a group;
- a query reads a shared sub-sequence's end as the sum, over the groups, of its
  snapshot combined with the group's last vector (the paper's count combination,
  :meth:`_Sequence.combine`, for every aggregate);
- a query's result in window k is its ``Out`` over all its segments when k closes.

Events of equal time are one batch: every update is computed from the state before
that time, then applied (matches need strictly increasing times). The queries the
plan does not route here run in the executor's HAMLET part, exactly as under the
hamlet plan.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from trendagg.io.results import ResultRow
from trendagg.optimizer.plan import SharedSequence, SharingPlan
from trendagg.plan.compile import QueryPlan
from trendagg.plan.layout import AggLayout, Vec
from trendagg.reference.greta import group_rows
from trendagg.reference.hamlet import HamletExecutor
from trendagg.reference.registers import Registers


def _unique(items: list[Any]) -> tuple[Any, ...]:
    return tuple(dict.fromkeys(items))


class _Sequence:
    """A shared sub-sequence and its queries: its registers (a layout over the pattern's
    positions, named by their event types, holding what any of its queries reads on
    them) and, per query, how its registers follow from a snapshot and a group's."""

    def __init__(self, index: int, shared: SharedSequence, plans: Mapping[str, QueryPlan]):
        self.index = index
        self.pattern = shared.pattern
        self.queries = shared.queries
        counts: list[str] = []
        sums: list[tuple[str, str]] = []
        mins: list[tuple[str, str]] = []
        maxs: list[tuple[str, str]] = []
        for name in self.queries:
            lay = plans[name].layout
            var_type = {plans[name].type_to_var[t]: t for t in self.pattern}
            counts += [var_type[v] for v in lay.count_vars if v in var_type]
            sums += [(var_type[v], a) for v, a in lay.sums if v in var_type]
            mins += [(var_type[v], a) for v, a in lay.mins if v in var_type]
            maxs += [(var_type[v], a) for v, a in lay.maxs if v in var_type]
        self.layout = AggLayout(_unique(counts), _unique(sums), _unique(mins), _unique(maxs))
        self.regs = Registers(self.layout)
        # per query: (its register, the sub-sequence's register or None: from the snapshot)
        self.maps = {name: self._map(plans[name]) for name in self.queries}
        # the binding rule of each position (the same in every query: the signature), as
        # (plan, variable): a stream's state keeps plans by reference (trendagg.engine.state)
        first = plans[self.queries[0]]
        self.binders = [(first, first.type_to_var[t]) for t in self.pattern]

    def binds(self, i: int, attrs: Mapping[str, object]) -> bool:
        """Whether an event of position i's type with ``attrs`` is bound to it."""
        plan, var = self.binders[i]
        return plan.vars[var].accepts(attrs)

    def _map(self, plan: QueryPlan) -> tuple[list[tuple[int, int | None]], int, int]:
        lay, mine = plan.layout, self.layout
        var_type = {plan.type_to_var[t]: t for t in self.pattern}
        pairs: list[tuple[int, int | None]] = []
        for v in lay.count_vars:
            inside = v in var_type
            pairs.append((lay.count_index(v), mine.count_index(var_type[v]) if inside else None))
        for v, a in lay.sums:
            inside = v in var_type
            pairs.append((lay.sum_index(v, a), mine.sum_index(var_type[v], a) if inside else None))
        for i, (v, a) in enumerate(lay.mins):
            j = mine.mins.index((var_type[v], a)) if v in var_type else None
            pairs.append((lay.min_start + i, None if j is None else mine.min_start + j))
        for i, (v, a) in enumerate(lay.maxs):
            j = mine.maxs.index((var_type[v], a)) if v in var_type else None
            pairs.append((lay.max_start + i, None if j is None else mine.max_start + j))
        return pairs, lay.n_additive, lay.size

    def combine(self, query: str, snap: Vec, vec: Vec) -> Vec | None:
        """The registers, in the query's layout, of every match made of one before the
        sub-sequence (``snap``, the query's layout) and one of it (``vec``, its own):
        counts and sums multiply by the other side's count; minima and maxima come from
        the side their variable is on (spec section 3.4, the combination)."""
        count = snap[0] * vec[0]
        if not count:
            return None
        pairs, n_add, size = self.maps[query]
        out: Vec = [0] * n_add + [None] * (size - n_add)
        out[0] = count
        for mine, theirs in pairs:
            if mine < n_add:
                out[mine] = snap[mine] * vec[0] if theirs is None else snap[0] * vec[theirs]
            else:
                out[mine] = snap[mine] if theirs is None else vec[theirs]
        return out


@dataclass
class _Group:
    """Events at a sub-sequence's first position whose queries' snapshots are equal:
    the snapshots (per query, None: no match before it) and a register vector per
    position of the sub-sequence (None: no match reaches it yet)."""

    snaps: dict[str, Vec | None]
    vecs: list[Vec | None]


@dataclass(frozen=True)
class _Segment:
    """Positions [first, last] of a query; shared by ``sequence`` or private (None)."""

    first: int
    last: int
    sequence: _Sequence | None


class _Window:
    """One partition's state in one window: per (query, private segment) its prefix
    registers, per shared sub-sequence its START groups."""

    __slots__ = ("groups", "private")

    def __init__(self) -> None:
        self.private: dict[tuple[str, int], list[Vec | None]] = {}
        self.groups: dict[int, list[_Group]] = {}


_EMPTY = _Window()  # (read where a partition has no state in a window; never written)


def _add(vecs: list[Vec | None], i: int, new: Vec, regs: Registers) -> None:
    """vecs[i] += new."""
    held = vecs[i]
    if held is None:
        vecs[i] = new
    else:
        regs.add_into(held, new)


class SharonRuntime:
    """The queries of one signature (window and partition attributes) that a SHARON
    plan shares sub-sequences among, per partition key and window."""

    def __init__(self, plans: Sequence[QueryPlan], sequences: Sequence[SharedSequence]):
        self.plans = list(plans)
        by_name = {p.name: p for p in self.plans}
        first = self.plans[0]
        self.window = first.window
        self.names = tuple(sorted(a.name for a in first.partition_attrs))
        self.regs = {p.name: Registers(p.layout) for p in self.plans}
        self.sequences = [_Sequence(i, s, by_name) for i, s in enumerate(sequences)]
        self.segments: dict[str, list[_Segment]] = {}
        # event type -> what binds it: private (query, segment, position) and shared
        # (sequence, position)
        self.private_at: dict[str, list[tuple[QueryPlan, int, int]]] = {}
        self.shared_at: dict[str, list[tuple[_Sequence, int]]] = {}
        for plan in self.plans:
            self.segments[plan.name] = segs = self._segments(plan)
            for j, seg in enumerate(segs):
                if seg.sequence is None:
                    for i in range(seg.first, seg.last + 1):
                        self.private_at.setdefault(plan.template.types[i], []).append((plan, j, i))
        for seq in self.sequences:
            for i, t in enumerate(seq.pattern):
                self.shared_at.setdefault(t, []).append((seq, i))
        # where each query's segment of a sub-sequence is
        self.position = {
            (plan.name, seg.sequence.index): j
            for plan in self.plans
            for j, seg in enumerate(self.segments[plan.name])
            if seg.sequence is not None
        }
        self.parts: dict[tuple[object, ...], dict[int, _Window]] = {}  # key -> window -> state
        self.closed: int | None = None
        self.groups = 0  # START groups opened
        self.starts = 0  # events at a shared sub-sequence's first position, in a group

    def _segments(self, plan: QueryPlan) -> list[_Segment]:
        types = plan.template.types
        shared = sorted(
            (types.index(seq.pattern[0]), seq) for seq in self.sequences if plan.name in seq.queries
        )
        segs: list[_Segment] = []
        at = 0
        for start, seq in shared:
            if start > at:
                segs.append(_Segment(at, start - 1, None))
            segs.append(_Segment(start, start + len(seq.pattern) - 1, seq))
            at = start + len(seq.pattern)
        if at < len(types):
            segs.append(_Segment(at, len(types) - 1, None))
        return segs

    # -- reading the state (before a time's events are applied)

    def out(self, window: _Window, query: str, j: int) -> Vec | None:
        """``Out_j`` of ``query``: the registers of the matches of its first j segments
        (j = 0: one empty match), None when there are none."""
        if j == 0:
            regs = self.regs[query]
            unit = regs.zero()
            unit[0] = 1
            return unit
        seg = self.segments[query][j - 1]
        if seg.sequence is None:
            vecs = window.private.get((query, j - 1))
            last = None if vecs is None else vecs[-1]
            return None if last is None else list(last)  # (a copy: the state changes in place)
        seq = seg.sequence
        acc: Vec | None = None
        for g in window.groups.get(seq.index, ()):
            snap, last = g.snaps[query], g.vecs[-1]
            if snap is None or last is None:
                continue
            part = seq.combine(query, snap, last)
            if part is None:
                continue
            if acc is None:
                acc = part
            else:
                self.regs[query].add_into(acc, part)
        return acc

    # -- the runtime interface (GretaExecutor steps it)

    def process(self, t: Any, events: list[tuple[str, Mapping[str, object]]]) -> None:
        """Add the events of time t: every update from the state before t, then applied."""
        updates: list[tuple[tuple[object, ...], int, Any, int, Vec, Any]] = []
        for typ, attrs in events:
            private = self.private_at.get(typ, ())
            shared = self.shared_at.get(typ, ())
            bound = [
                (plan, j, i)
                for plan, j, i in private
                if plan.vars[plan.type_to_var[typ]].accepts(attrs)
            ]
            starts = [(seq, i) for seq, i in shared if seq.binds(i, attrs)]
            if not bound and not starts:
                continue
            key = tuple(attrs[n] for n in self.names)
            windows = self.parts.get(key, {})
            for k in self.window.windows_of(t):
                window = windows.get(k, _EMPTY)
                for plan, j, i in bound:
                    seg = self.segments[plan.name][j]
                    if i == seg.first:
                        pred = None if j == 0 else self.out(window, plan.name, j)
                    else:
                        vecs = window.private.get((plan.name, j))
                        pred = None if vecs is None else vecs[i - 1 - seg.first]
                    start = 1 if (j == 0 and i == seg.first) else 0
                    new = self.regs[plan.name].extend(plan.type_to_var[typ], attrs, pred, start)
                    if new is not None:
                        updates.append((key, k, (plan.name, j), i - seg.first, new, None))
                for seq, i in starts:
                    if i == 0:
                        snaps = {
                            q: self.out(window, q, self.position[q, seq.index]) for q in seq.queries
                        }
                        if any(s is not None for s in snaps.values()):
                            new = seq.regs.extend(typ, attrs, None, 1)
                            updates.append((key, k, seq, 0, new, snaps))
                        continue
                    for g in window.groups.get(seq.index, ()):
                        pred = g.vecs[i - 1]
                        new = None if pred is None else seq.regs.extend(typ, attrs, pred, 0)
                        if new is not None:
                            updates.append((key, k, seq, i, new, g))
        for key, k, where, i, new, extra in updates:
            window = self._window(key, k)
            if isinstance(where, tuple):  # a private segment's position
                vecs = window.private.get(where)
                if vecs is None:
                    seg = self.segments[where[0]][where[1]]
                    vecs = window.private[where] = [None] * (seg.last - seg.first + 1)
                _add(vecs, i, new, self.regs[where[0]])
            elif i == 0:  # a START: it joins the latest group if the snapshots agree
                groups = window.groups.setdefault(where.index, [])
                self.starts += 1
                if groups and groups[-1].snaps == extra:
                    _add(groups[-1].vecs, 0, new, where.regs)
                else:
                    vecs = [None] * len(where.pattern)
                    vecs[0] = new
                    groups.append(_Group(extra, vecs))
                    self.groups += 1
            else:  # a later position of the group ``extra``
                _add(extra.vecs, i, new, where.regs)

    def _window(self, key: tuple[object, ...], k: int) -> _Window:
        windows = self.parts.get(key)
        if windows is None:
            windows = self.parts[key] = {}
        window = windows.get(k)
        if window is None:
            window = windows[k] = _Window()
        return window

    def advance_to(self, t: Any) -> list[ResultRow]:
        """Close every window that ends at or before t: its rows, then its state dropped."""
        closed = self.window.closed_before(t)
        if self.closed is not None and closed <= self.closed:
            return []
        self.closed = closed
        return self._close(closed)

    def finish(self) -> list[ResultRow]:
        return self._close(None)

    def _close(self, closed: int | None) -> list[ResultRow]:
        done = sorted(
            {k for windows in self.parts.values() for k in windows if closed is None or k < closed}
        )
        rows: list[ResultRow] = []
        for plan in self.plans:
            r = len(self.segments[plan.name])
            # (keys hold the sorted partition names' values: as the plan orders them)
            order = [self.names.index(a.name) for a in plan.partition_attrs]
            for k in done:
                totals = [
                    (tuple(key[i] for i in order), self.out(windows[k], plan.name, r))
                    for key, windows in self.parts.items()
                    if k in windows
                ]
                rows += group_rows(plan, self.regs[plan.name], k, totals)
        for key in list(self.parts):
            windows = self.parts[key]
            for k in [k for k in windows if closed is None or k < closed]:
                del windows[k]
            if not windows:
                del self.parts[key]
        return rows


class SharonExecutor(HamletExecutor):
    """Online SHARON over a workload: the queries of the plan's shared sub-sequences in a
    :class:`SharonRuntime` per signature, the Python engine's other queries as under the
    hamlet plan (HAMLET's components, GRETA for the rest)."""

    def __init__(self, plans: list[QueryPlan], sharing: SharingPlan, *, log: bool = False):
        super().__init__(plans, sharing, log=log)
        members = {name for seq in sharing.sequences for name in seq.queries}
        members &= {r.query for r in sharing.routes if r.executor == "python"}
        self.singles = [rt for rt in self.singles if rt.plan.name not in members]
        by_name = {p.name: p for p in plans}
        # one runtime per signature: the queries connected by shared sub-sequences
        # (a candidate's queries share window and partition attributes)
        signatures: dict[tuple[object, ...], list[SharedSequence]] = {}
        for seq in sharing.sequences:
            if not set(seq.queries) <= members:
                continue
            plan = by_name[seq.queries[0]]
            names = tuple(sorted(a.name for a in plan.partition_attrs))
            signatures.setdefault((plan.window.within, plan.window.slide, names), []).append(seq)
        self.sharon: list[SharonRuntime] = []
        for seqs in signatures.values():
            names = {q for s in seqs for q in s.queries}
            self.sharon.append(SharonRuntime([p for p in plans if p.name in names], seqs))
        self.runtimes = [*self.components, *self.sharon, *self.singles]

    def report(self, stats: dict[str, Any]) -> None:
        """HAMLET's counters, and SHARON's: the sub-sequences shared, the START
        groups opened (a group per window in which a START finds new snapshots) and the
        STARTs (one START event per window it falls in)."""
        super().report(stats)
        stats["sharon"] = {
            "sequences": sum(len(rt.sequences) for rt in self.sharon),
            "groups": sum(rt.groups for rt in self.sharon),
            "starts": sum(rt.starts for rt in self.sharon),
        }


__all__ = ["SharonExecutor", "SharonRuntime"]
