"""GRETA: online trend aggregation for one query, without building trends.

One GRETA graph per query and partition (GRETA, Sections 4-7). Each matched
event becomes a vertex holding, per window it falls into, the registers of all
(partial) trends that end at it (Theorem 9.1); its registers are computed
from those of its predecessors and never recomputed. All sliding windows share
the one graph: a vertex keeps one register vector per window id, not one
graph per window.

Where a transition carries no edge predicate, predecessors are not scanned:
each state keeps running totals per window, so an event costs O(1) per
incoming transition and window. Where its one edge predicate reads
``key(x) op query(y)`` (:mod:`trendagg.plan.edge_index`) and no NOT lies on
it, the source vertices of each window are kept ordered by key with subtree
totals (:class:`~trendagg.reference.key_index.KeyIndex`): an event costs
O(log n) per window instead of a scan of every predecessor (``edge_index=False``
turns the scan back on, for comparison). Events of equal time are processed as one
batch (they are never adjacent): all are computed from the state before
that time, then inserted.

Negation (Section 5, Cases 1-3) runs a graph per negative sub-pattern that
propagates the latest start time of its matches, per window. A completed
match (start, end) then
  * between Pi and Pj: invalidates, for every later event of start(Pj), the
    events of end(Pi) older than its start (a per-transition frontier; totals
    drop that time prefix, minima/maxima through monotonic deques);
  * trailing: invalidates, in that window, trends ending before its start;
  * leading: stops events after its end from starting trends in that window.
Events are purged once every window they fall into has closed.

HAMLET (:mod:`trendagg.reference.hamlet`) runs each query's graphs through
this module's public pieces (:class:`QueryRuntime`, :class:`Partition`,
:class:`Graph` with its :class:`State` and :class:`Transition` objects,
:class:`Total`) and updates them itself where it shares a burst.
"""

from __future__ import annotations

import itertools
import operator
from collections import deque
from collections.abc import Collection, Iterable, Iterator, Mapping, Sequence
from typing import Any, Protocol

from trendagg.io.batch import EventBatch, Record
from trendagg.io.results import ResultRow
from trendagg.plan.compile import QueryPlan
from trendagg.plan.edge_index import UNDEFINED, EdgeIndex
from trendagg.plan.layout import before, result_row
from trendagg.plan.template import Template
from trendagg.plan.windows import WindowSpec
from trendagg.reference.key_index import KeyIndex
from trendagg.reference.registers import Registers

Vec = list[Any]
#: The attributes of no event: the first argument of a guard (an edge predicate from any
#: predecessor, ``* -> T``, which reads only the new event), and the event HAMLET collects
#: a burst's predecessors for when no pairwise predicate applies.
NO_ATTRIBUTES: Mapping[str, object] = {}


class _MaxStart:
    """Registers of a negative sub-pattern: the latest start time of its matches."""

    n_add = 0
    min_start = 0
    max_start = 0
    size = 1

    def zero(self) -> Vec:
        return [None]

    def add_into(self, acc: Vec, vec: Vec) -> None:
        v = vec[0]
        if v is not None and (acc[0] is None or v > acc[0]):
            acc[0] = v

    def extend(
        self, var: str, time: Any, attrs: Mapping[str, object], pred: Vec | None, start: int
    ) -> Vec | None:
        if start:
            return [time]
        if pred is None or pred[0] is None:
            return None
        return [pred[0]]


class _Positive:
    """Registers of the positive pattern: counts, sums, minima, maxima (Theorem 9.1)."""

    def __init__(self, regs: Registers):
        self.regs = regs
        self.n_add = regs.n_add
        self.min_start = regs.min_start
        self.max_start = regs.max_start
        self.size = regs.size
        self.zero = regs.zero
        self.add_into = regs.add_into

    def extend(
        self, var: str, time: Any, attrs: Mapping[str, object], pred: Vec | None, start: int
    ) -> Vec | None:
        return self.regs.extend(var, attrs, pred, start)


class Total:
    """Combined registers of a growing set of vertices (appended in time order).

    With ``frontier`` it can also drop every vertex older than a time
    (negation, Case 1/2): sums are subtracted, minima and maxima are kept
    in monotonic deques so the extreme of what remains is known in O(1)."""

    __slots__ = ("alg", "vec", "entries", "extremes")

    def __init__(self, alg: Any, frontier: bool):
        self.alg = alg
        self.vec = alg.zero()
        self.entries: deque[tuple[Any, Vec]] | None = deque() if frontier else None
        self.extremes: list[deque[tuple[Any, Any]]] | None = (
            [deque() for _ in range(alg.n_add, alg.size)] if frontier else None
        )

    def add(self, time: Any, vec: Vec) -> None:
        alg = self.alg
        if self.entries is None:
            alg.add_into(self.vec, vec)
            return
        acc = self.vec
        for i in range(alg.n_add):
            acc[i] += vec[i]
        self.entries.append((time, vec))
        assert self.extremes is not None
        for j, i in enumerate(range(alg.n_add, alg.size)):
            v = vec[i]
            if v is None:
                continue
            dq = self.extremes[j]
            if i < alg.max_start:
                while dq and not before(dq[-1][1], v):
                    dq.pop()
            else:
                while dq and not before(v, dq[-1][1]):
                    dq.pop()
            dq.append((time, v))

    def advance(self, frontier: Any) -> None:
        """Forget every vertex whose time is < frontier."""
        if self.entries is None:
            raise AssertionError("advance on a total without frontier")
        acc = self.vec
        n = self.alg.n_add
        entries = self.entries
        while entries and entries[0][0] < frontier:
            _, vec = entries.popleft()
            for i in range(n):
                acc[i] -= vec[i]
        assert self.extremes is not None
        for dq in self.extremes:
            while dq and dq[0][0] < frontier:
                dq.popleft()

    def value(self) -> Vec:
        if self.extremes is None:
            return self.vec  # type: ignore[no-any-return]
        out = list(self.vec)
        for j, dq in enumerate(self.extremes):
            out[self.alg.n_add + j] = dq[0][1] if dq else None
        return out


class Transition:
    """A template transition ``src -> dst`` in one graph, with what answers it.

    ``preds`` are its edge predicates (scanned pair by pair, or answered from
    ``indexes``, one :class:`KeyIndex` per window, when ``index`` is set);
    ``negation`` is the index of the NOT that lies on it, whose matches move
    ``frontier`` (source vertices older than it are no predecessors) and prune
    ``totals``, the per-window totals of a negated transition without a scan."""

    __slots__ = ("src", "dst", "negation", "preds", "frontier", "totals", "index", "indexes")

    def __init__(
        self,
        src: str,
        dst: str,
        negation: int | None,
        preds: tuple[Any, ...],
        index: EdgeIndex | None = None,
    ):
        self.src = src
        self.dst = dst
        self.negation = negation
        self.preds = preds
        self.frontier: Any = None
        # per-window totals that can drop a prefix: only for a negated transition without a scan
        self.totals: dict[int, Total] | None = {} if negation is not None and not preds else None
        # one indexable edge predicate and no frontier: source vertices by key, per window
        self.index = index if negation is None and len(preds) == 1 else None
        self.indexes: dict[int, KeyIndex] = {}


class State:
    """The vertices of one template state in one graph: per-window ``totals`` (when an
    outgoing transition reads them whole), every vertex (when one scans or indexes
    them), and the outgoing transitions that keep totals or indexes of their own."""

    __slots__ = ("totals", "vertices", "negated_out", "indexed_out")

    def __init__(self, plain: bool, scanned: bool):
        self.totals: dict[int, Total] | None = {} if plain else None
        # every vertex, when an outgoing transition has an edge predicate (indexed or not:
        # HAMLET reads them to decide how a burst is shared)
        self.vertices: deque[tuple[Any, Mapping[str, object], dict[int, Vec]]] | None = (
            deque() if scanned else None
        )
        self.negated_out: list[Transition] = []
        self.indexed_out: list[Transition] = []


class Graph:
    """One GRETA graph: a template instantiated for one partition."""

    def __init__(self, plan: QueryPlan, template: Template, alg: Any, partition: Partition):
        self.template = template
        self.alg = alg
        self.partition = partition
        self.window = plan.window
        self.guards = {v: plan.guards[v] for v in template.states if v in plan.guards}
        self.incoming: dict[str, list[Transition]] = {v: [] for v in template.states}
        self.transitions: list[Transition] = []
        plain_src: set[str] = set()
        scanned_src: set[str] = set()
        indexed = partition.runtime.edge_index
        for t in template.transitions:
            pair = (t.src, t.dst)
            index = plan.edge_indexes.get(pair) if indexed else None
            tr = Transition(t.src, t.dst, t.negation, plan.edges.get(pair, ()), index)
            self.transitions.append(tr)
            self.incoming[t.dst].append(tr)
            if tr.preds:
                scanned_src.add(t.src)
            elif t.negation is None:
                plain_src.add(t.src)
        self.states = {v: State(v in plain_src, v in scanned_src) for v in template.states}
        for tr in self.transitions:
            if tr.totals is not None:
                self.states[tr.src].negated_out.append(tr)
            if tr.index is not None:
                self.states[tr.src].indexed_out.append(tr)
        self.blocked: dict[int, Any] = {}  # leading negation: window -> end time of a match
        # a negative sub-pattern's graph signals its matches to (parent, index of its NOT)
        self.parent: tuple[Graph, int] | None = None
        self.children = [
            Graph(plan, neg.template, _MaxStart(), partition) for neg in template.negations
        ]
        for i, child in enumerate(self.children):
            child.parent = (self, i)

    # -- one batch of events with the same time -------------------------------------

    def compute(
        self, t: Any, items: Sequence[tuple[str, Mapping[str, object]]]
    ) -> list[tuple[str, Mapping[str, object], dict[int, Vec]]]:
        """Registers of the new vertices, from the state before time t."""
        out = []
        alg = self.alg
        start_var = self.template.start
        ks = self.window.windows_of(t)
        for var, attrs in items:
            preds: dict[int, Vec] = {}
            guards = self.guards.get(var)
            if guards is None or all(g(NO_ATTRIBUTES, attrs) for g in guards):
                for tr in self.incoming[var]:
                    self.collect(tr, ks, attrs, preds)
            aggs: dict[int, Vec] = {}
            is_start = var == start_var
            blocked = self.blocked
            for k in ks:
                start = 1 if is_start and (k not in blocked or t <= blocked[k]) else 0
                vec = alg.extend(var, t, attrs, preds.get(k), start)
                if vec is not None:
                    aggs[k] = vec
            if aggs:
                out.append((var, attrs, aggs))
        return out

    def collect(
        self, tr: Transition, ks: range, attrs: Mapping[str, object], preds: dict[int, Vec]
    ) -> None:
        """Add into ``preds`` (window -> registers) the registers of the predecessors through
        ``tr`` of an event with ``attrs``, in windows ``ks``: from the key index, by scanning
        the source vertices with the edge predicates, or from the running totals."""
        alg = self.alg
        index = tr.index
        if index is not None:  # O(log n) per window: the keys that satisfy key op query
            kind, q = index.query_of(attrs)
            if kind == UNDEFINED:
                return
            op = index.op
            indexes = tr.indexes
            for k in ks:
                idx = indexes.get(k)
                if idx is not None:
                    acc = idx.collect(op, kind, q, preds.get(k))
                    if acc is not None:
                        preds[k] = acc
            return
        if tr.preds:
            vertices = self.states[tr.src].vertices
            assert vertices is not None
            frontier = tr.frontier
            lo, hi = ks.start, ks.stop
            for xt, xattrs, xaggs in vertices:
                if frontier is not None and xt < frontier:
                    continue
                if not all(p(xattrs, attrs) for p in tr.preds):
                    continue
                for k, vec in xaggs.items():
                    if lo <= k < hi:
                        acc = preds.get(k)
                        if acc is None:
                            preds[k] = list(vec)
                        else:
                            alg.add_into(acc, vec)
            return
        totals = tr.totals if tr.totals is not None else self.states[tr.src].totals
        assert totals is not None
        for k in ks:
            total = totals.get(k)
            if total is None:
                continue
            vec = total.value()
            acc = preds.get(k)
            if acc is None:
                preds[k] = list(vec)
            else:
                alg.add_into(acc, vec)

    def insert(
        self, t: Any, new: list[tuple[str, Mapping[str, object], dict[int, Vec]]]
    ) -> list[tuple[int, Any]]:
        """Add the new vertices to the totals; return the END registers per window."""
        alg = self.alg
        ends: list[tuple[int, Any]] = []
        end_var = self.template.end
        for var, attrs, aggs in new:
            st = self.states[var]
            if st.totals is not None:
                for k, vec in aggs.items():
                    total = st.totals.get(k)
                    if total is None:
                        total = st.totals[k] = Total(alg, False)
                    total.add(t, vec)
            for tr in st.negated_out:
                assert tr.totals is not None
                for k, vec in aggs.items():
                    total = tr.totals.get(k)
                    if total is None:
                        total = tr.totals[k] = Total(alg, True)
                    total.add(t, vec)
            if st.vertices is not None:
                self.remember(st, t, attrs, aggs)
            if var == end_var:
                ends.extend(aggs.items())
        return ends

    def remember(
        self, st: State, t: Any, attrs: Mapping[str, object], aggs: dict[int, Vec]
    ) -> None:
        """Keep a vertex for the edge predicates of its state's outgoing transitions."""
        assert st.vertices is not None
        st.vertices.append((t, attrs, aggs))
        for tr in st.indexed_out:
            assert tr.index is not None
            kind, key = tr.index.key_of(attrs)
            if kind == UNDEFINED:  # the predicate is false for every next event
                continue
            indexes = tr.indexes
            for k, vec in aggs.items():
                idx = indexes.get(k)
                if idx is None:
                    idx = indexes[k] = KeyIndex(self.alg)
                idx.insert(kind, key, vec)

    def purge(self, closed: int) -> None:
        """Forget windows with id < closed and vertices that fall only into them."""
        window = self.window
        for st in self.states.values():
            if st.totals:
                for k in [k for k in st.totals if k < closed]:
                    del st.totals[k]
            if st.vertices:
                vs = st.vertices
                while vs and window.windows_of(vs[0][0]).stop <= closed:
                    vs.popleft()
        for tr in self.transitions:
            if tr.totals:
                for k in [k for k in tr.totals if k < closed]:
                    del tr.totals[k]
            if tr.indexes:
                for k in [k for k in tr.indexes if k < closed]:
                    del tr.indexes[k]
        for k in [k for k in self.blocked if k < closed]:
            del self.blocked[k]
        for child in self.children:
            child.purge(closed)

    def apply(self, index: int, signals: list[tuple[int, Any]], t: Any) -> None:
        """Matches of negative sub-pattern ``index`` completed at time t: (window, latest start)."""
        neg = self.template.negations[index]
        if neg.kind == "between":
            latest = max(ms for _, ms in signals)
            for tr in self.transitions:
                if tr.negation == index and (tr.frontier is None or latest > tr.frontier):
                    tr.frontier = latest
                    if tr.totals is not None:
                        for total in tr.totals.values():
                            total.advance(latest)
        elif neg.kind == "leading":
            for k, _ in signals:
                self.blocked.setdefault(k, t)
        else:  # trailing: only the outermost graph has one
            self.partition.invalidate_ends(signals)


class Partition:
    """The graphs of one query for one partition key, and its results per window.

    ``root`` is the query's graph (its negative sub-patterns' graphs are its
    children); ``pending`` holds, per open window, the total of the trends that
    end in it, which the :class:`QueryRuntime` folds into groups when it closes."""

    def __init__(self, runtime: QueryRuntime, key: tuple[object, ...]):
        self.key = key
        self.runtime = runtime
        self.root = Graph(runtime.plan, runtime.plan.template, runtime.alg, self)
        self.graph_of: dict[str, Graph] = {}
        self._index(self.root)
        self.trailing = any(n.kind == "trailing" for n in runtime.plan.template.negations)
        self.pending: dict[int, Total] = {}
        self.last_time: Any = None

    def _index(self, g: Graph) -> None:
        for v in g.template.states:
            self.graph_of[v] = g
        for c in g.children:
            self._index(c)

    def process(self, t: Any, items: list[tuple[str, Mapping[str, object]]]) -> None:
        """Add the events of time t, bound to their variables: compute every new vertex from
        the state before t, insert them, then signal negative matches to their parents."""
        self.last_time = t
        by_graph: dict[int, tuple[Graph, list[tuple[str, Mapping[str, object]]]]] = {}
        for var, attrs in items:
            g = self.graph_of[var]
            by_graph.setdefault(id(g), (g, []))[1].append((var, attrs))
        computed = [(g, g.compute(t, its)) for g, its in by_graph.values()]
        signals: list[tuple[Graph, list[tuple[int, Any]]]] = []
        for g, new in computed:
            ends = g.insert(t, new)
            if not ends:
                continue
            if g is self.root:
                self.add_results(t, ends)
            else:
                signals.append((g, ends))
        for g, ends in signals:
            assert g.parent is not None
            parent, index = g.parent
            parent.apply(index, [(k, vec[0]) for k, vec in ends], t)

    def add_results(self, t: Any, ends: list[tuple[int, Vec]]) -> None:
        """Add the registers of trends that end at time t, per window, to the results."""
        alg = self.runtime.alg
        for k, vec in ends:
            total = self.pending.get(k)
            if total is None:
                total = self.pending[k] = Total(alg, self.trailing)
                self.runtime.pending_windows.setdefault(k, set()).add(self.key)
            total.add(t, vec)

    def invalidate_ends(self, signals: list[tuple[int, Any]]) -> None:
        """A trailing negation matched: drop, per window, the results that end before
        its latest start."""
        for k, ms in signals:
            total = self.pending.get(k)
            if total is not None:
                total.advance(ms)


class QueryRuntime:
    """Routes events of one query to partitions and folds partition results into groups.

    ``edge_index=False`` scans every predecessor for edge predicates that an
    ordered index could answer (the old way; benchmarks compare the two)."""

    def __init__(self, plan: QueryPlan, edge_index: bool = True):
        self.plan = plan
        self.edge_index = edge_index
        self.regs = Registers(plan.layout)
        self.alg = _Positive(self.regs)
        self.window: WindowSpec = plan.window
        self.width = len(plan.partition_attrs)
        self.names = [a.name for a in plan.partition_attrs]
        self.partitions: dict[tuple[object, ...], Partition] = {}
        full = [
            v for v in plan.vars.values() if v.positive and len(v.partition_positions) == self.width
        ]
        self.creators = (
            {v.var for v in full} if full else {v.var for v in plan.vars.values() if v.positive}
        )
        self.full_mode = bool(full)
        # events that are not routed by an exact key, kept for partitions created later
        self.store: deque[tuple[Any, str, Mapping[str, object], tuple[object, ...]]] = deque()
        # product mode: partition values seen on positive events, value -> last time seen
        self.seen: list[dict[object, Any]] = [{} for _ in range(self.width)]
        self.pending_windows: dict[int, set[tuple[object, ...]]] = {}
        self.results: dict[int, dict[tuple[object, ...], Vec]] = {}
        self.closed: int | None = None  # windows with id < closed are final

    def _keypart(self, var: str, attrs: Mapping[str, object]) -> tuple[object, ...]:
        key: list[object] = [_ANY] * self.width
        for pos in self.plan.vars[var].partition_positions:
            key[pos] = attrs[self.names[pos]]
        return tuple(key)

    @staticmethod
    def _agrees(part: tuple[object, ...], key: tuple[object, ...]) -> bool:
        return all(p is _ANY or p == k for p, k in zip(part, key, strict=True))

    def process(self, t: Any, events: list[tuple[str, Mapping[str, object]]]) -> None:
        plan = self.plan
        bound: list[tuple[str, Mapping[str, object], tuple[object, ...]]] = []
        for typ, attrs in events:
            var = plan.type_to_var.get(typ)
            if var is None or not plan.vars[var].accepts(attrs):
                continue
            bound.append((var, attrs, self._keypart(var, attrs)))
        if not bound:
            return
        # 1. partitions that this batch creates, replaying stored events into them
        for var, _attrs, part in bound:
            if var not in self.creators:
                continue
            if self.full_mode:
                candidates: Iterator[tuple[object, ...]] = iter((part,))
            else:
                for pos, v in enumerate(part):
                    if v is not _ANY:
                        self.seen[pos][v] = t
                choices = [
                    (v,) if v is not _ANY else tuple(self.seen[pos]) for pos, v in enumerate(part)
                ]
                candidates = itertools.product(*choices)
            for key in candidates:
                if key not in self.partitions:
                    self._create(key)
        # 2. route the batch
        routed: dict[tuple[object, ...], list[tuple[str, Mapping[str, object]]]] = {}
        for var, attrs, part in bound:
            exact = _ANY not in part
            if exact and var in self.creators and self.full_mode:
                routed.setdefault(part, []).append((var, attrs))
                continue
            self.store.append((t, var, attrs, part))
            if exact:
                if part in self.partitions:
                    routed.setdefault(part, []).append((var, attrs))
            else:
                for key in self.partitions:
                    if self._agrees(part, key):
                        routed.setdefault(key, []).append((var, attrs))
        for key, items in routed.items():
            self.partitions[key].process(t, items)

    def _create(self, key: tuple[object, ...]) -> None:
        part = Partition(self, key)
        self.partitions[key] = part
        replay = [(t, var, attrs) for t, var, attrs, kp in self.store if self._agrees(kp, key)]
        for t, group in itertools.groupby(replay, key=lambda e: e[0]):
            part.process(t, [(var, attrs) for _, var, attrs in group])

    def advance_to(self, t: Any) -> list[ResultRow]:
        """Close every window that ends at or before t; purge what no open window needs."""
        closed = self.window.closed_before(t)
        if self.closed is not None and closed <= self.closed:
            return []
        self.closed = closed
        rows = self._fold(closed)
        window = self.window
        while self.store and window.windows_of(self.store[0][0]).stop <= closed:
            self.store.popleft()
        for seen in self.seen:
            for v in [v for v, last in seen.items() if window.windows_of(last).stop <= closed]:
                del seen[v]
        for key in list(self.partitions):
            part = self.partitions[key]
            if part.last_time is None or window.windows_of(part.last_time).stop <= closed:
                del self.partitions[key]
            else:
                part.root.purge(closed)
        return rows

    def _fold(self, closed: int | None) -> list[ResultRow]:
        done = sorted(k for k in self.pending_windows if closed is None or k < closed)
        rows: list[ResultRow] = []
        for k in done:
            totals = []
            for key in self.pending_windows.pop(k):
                part = self.partitions.get(key)
                total = None if part is None else part.pending.pop(k, None)
                if total is not None:
                    totals.append((key, total.value()))
            rows += group_rows(self.plan, self.regs, k, totals)
        return rows

    def finish(self) -> list[ResultRow]:
        return self._fold(None)


def group_rows(
    plan: QueryPlan,
    regs: Registers,
    k: int,
    totals: Iterable[tuple[tuple[object, ...], Vec | None]],
) -> list[ResultRow]:
    """The rows of window k: the registers of each partition key (positions of
    ``plan.partition_attrs``) added up per group, in the order of the groups' repr; a
    group without trends has no row."""
    groups: dict[tuple[object, ...], Vec] = {}
    for key, vec in totals:
        if vec is None or not vec[0]:
            continue
        group = tuple(key[p] for p in plan.group_positions)
        acc = groups.get(group)
        if acc is None:
            groups[group] = list(vec)
        else:
            regs.add_into(acc, vec)
    return [
        result_row(plan, k, group, vec)
        for group, vec in sorted(groups.items(), key=lambda kv: repr(kv[0]))
    ]


class _Any:
    """The wildcard of a partition key: an attribute that does not apply to the event."""

    def __repr__(self) -> str:
        return "*"

    def __reduce__(self) -> str:
        # compared by identity: a pickled engine (a stream's state) must get this very object
        return "_ANY"


_ANY: Any = _Any()


def time_batches(
    events: EventBatch, names: Collection[str] | None = None
) -> Iterator[tuple[Any, list[tuple[str, Mapping[str, object]]]]]:
    """The events in time order, one batch per distinct time (equal times are never
    adjacent, so a batch is computed from the state before it, then inserted), with the
    attributes in ``names`` (None: all). Each batch's events are made as it is asked for."""
    records: Iterable[Record] = events.iter_records(names)
    if events.order() is not None:
        records = sorted(records, key=operator.itemgetter(1))  # stable
    for t, group in itertools.groupby(records, key=operator.itemgetter(1)):
        yield t, [(kind, attrs) for kind, _, attrs in group]


class _Runtime(Protocol):
    """What an executor steps: one query (QueryRuntime) or a HAMLET component."""

    def advance_to(self, t: Any) -> list[ResultRow]: ...

    def process(self, t: Any, events: list[tuple[str, Mapping[str, object]]]) -> None: ...

    def finish(self) -> list[ResultRow]: ...


class GretaExecutor:
    """Online GRETA over a workload: one time batch at a time, rows as windows close.

    ``edge_index=False`` scans every predecessor vertex for each edge predicate,
    also where an ordered index would answer in O(log n): for benchmarks and tests."""

    def __init__(self, plans: list[QueryPlan], *, edge_index: bool = True):
        self.queries = [QueryRuntime(p, edge_index) for p in plans]
        self.runtimes: list[_Runtime] = list(self.queries)

    def advance(self, t: Any) -> list[ResultRow]:
        """Close the windows that end at or before t (no event before t can come)."""
        rows: list[ResultRow] = []
        for rt in self.runtimes:
            rows.extend(rt.advance_to(t))
        return rows

    def step(self, t: Any, batch: list[tuple[str, Mapping[str, object]]]) -> list[ResultRow]:
        rows = self.advance(t)
        for rt in self.runtimes:
            rt.process(t, batch)
        return rows

    def finish(self) -> list[ResultRow]:
        rows: list[ResultRow] = []
        for rt in self.runtimes:
            rows.extend(rt.finish())
        return rows

    def report(self, stats: dict[str, Any]) -> None:
        """No counters of its own (a run's partitions are counted from its events, see
        :class:`trendagg.plan.routing.KeysSeen`)."""
