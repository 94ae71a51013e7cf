"""GLORIA's view of a workload: the merged template as pools, and the cost model.

GLORIA (Ma, Lei, Poppe, Rundensteiner: *Gloria: Graph-based Sharing Optimizer for
Event Trend Aggregation*) represents a workload as one automaton, the *GLORIA
template* (section 2.2, Table 2): event types as nodes, and per transition
``tran(Ei, Ej)`` the queries that contain it. Its optimizer chooses, per transition,
a *transition sharing plan* (Def. 2.6): a partition of the transition's queries into
Q-sets, each shared Q-set labelled with its *snapshot type* (the event type whose
events hold the snapshots its expressions are written in; section 2.3).

This module builds what the optimizer (:mod:`trendagg.optimizer.gloria_graph`) plans
over:

- :class:`GloriaQuery`, a query as GLORIA sees it: its pattern (the paper's examples
  are written directly, ``GloriaQuery.of("q1", "SEQ(C, SEQ(A, B)+, D)")``), the
  binding rule of each type and a signature (window, partition attributes), from
  a compiled :class:`~trendagg.plan.compile.QueryPlan` by :func:`gloria_query`;
- :class:`GloriaTemplate`, the merged template as *pools* (a pool is the set of
  candidate plans of one transition, ``Pool(Ei, Ej)``): one pool per SEQ
  transition, and one per *Kleene unit* (spec A12: an outermost ``P+`` of a
  query; its transitions, the feedback ``Ek -> E0`` included, are planned as one
  cycle, all or nothing, section 6 and Lemma 6.1). Pools are keyed by the
  transition *and* a sharability key (the signature and the binding rules of
  both ends; a transition with a NEXT condition, a query with a NOT or a
  qualified partition attribute are private to their query), so that sharing
  never changes a result (spec sections 1.6 and 3.4);
- :class:`PaperCost`, the cost model of section 3.2 (Eqs. 2-4) in the exact
  instantiation that reproduces Tables 3 and 4 (spec section 2.1): with ``len(E, L)``
  the length of an expression at an E event whose snapshots are of type L (1 when
  E is L, else ``|L|``), a non-shared query pays ``|Ej| * |Ei|`` per transition
  (Eq. 2), a shared Q-set ``|Ei| * len(Ei, L)`` once (Eq. 3, no ``|Ej|`` factor), a
  query whose label changes at Ej ``|Ej| * |L|`` (Eq. 4), a start ``|E|``, and a
  shared Kleene cycle ``sum |Ei| * len(Ei, L) + |Q| * |L| * |L|`` (spec 2.6);
- :func:`estimate_rates`, the frequencies ``|E|`` (events per window and partition,
  per binding filter) from the start of a stream, deterministically, and
  :func:`pool_rates`, the frequencies a pool is weighed with.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, Protocol

from trendagg.io.batch import EventBatch
from trendagg.language import ast
from trendagg.language.analysis import pattern_variables
from trendagg.optimizer.rates import SAMPLE, Filter, narrowing_filters, sample_rates
from trendagg.plan.compile import QueryPlan, binding_rule
from trendagg.plan.template import build_template

SEQ = "seq"
KLEENE = "kleene"

# ----------------------------------------------------------------------------- queries


def shape(pattern: ast.Pattern) -> str:
    """The pattern's text over event types only (variable names left out): the key
    under which queries share a Kleene unit (spec A12)."""
    if isinstance(pattern, ast.EventPattern):
        return pattern.type
    if isinstance(pattern, ast.Plus):
        return shape(pattern.inner) + "+"
    if isinstance(pattern, ast.Not):
        return "NOT " + shape(pattern.inner)
    return "SEQ(" + ", ".join(shape(p) for p in pattern.items) + ")"


@dataclass(frozen=True)
class Unit:
    """A Kleene unit of one query: an outermost ``P+`` (spec A12), its types in pattern
    order, its transitions (the feedback ``exit -> entry`` among them), where trends
    enter it and where they leave it."""

    shape: str
    types: tuple[str, ...]
    transitions: tuple[tuple[str, str], ...]
    entry: str
    exit: str


@dataclass(frozen=True)
class GloriaQuery:
    """A query as GLORIA's optimizer sees it.

    ``pattern`` is its pattern; ``rules`` the binding rule of each type (by default the
    type itself), ``signature`` what else a sharing query must agree on (window and
    partition attributes), ``edged`` the transitions (type pairs) with a NEXT condition,
    which are never shared, and ``private`` why the query shares nothing (None when it
    may share)."""

    name: str
    pattern: ast.Pattern
    rules: tuple[tuple[str, object], ...] = ()
    signature: tuple[object, ...] = ()
    edged: frozenset[tuple[str, str]] = frozenset()
    private: str | None = None

    @staticmethod
    def of(name: str, pattern: str, signature: tuple[object, ...] = ()) -> GloriaQuery:
        """A query from its pattern's text, ``SEQ(A, B)+`` (trendagg's syntax)."""
        from trendagg.language import parse

        query = parse(f"{name}: RETURN COUNT(*) PATTERN {pattern} WITHIN 1 s").queries[0]
        return GloriaQuery(name, query.pattern, signature=signature)

    def rule(self, type_: str) -> object:
        return dict(self.rules).get(type_, type_)


def gloria_query(plan: QueryPlan, same_window: bool = True) -> GloriaQuery:
    """The compiled query as GLORIA's optimizer sees it. Queries share only with the
    same partition attributes and, with ``same_window``, the same window (spec 3.4
    argues that windows may differ; the executor decides that in a later step)."""
    window = plan.window
    signature: tuple[object, ...] = (
        ("partition", tuple(sorted(a.name for a in plan.partition_attrs))),
    )
    if same_window:
        signature += (("within", str(window.within)), ("slide", str(window.slide)))
    types = plan.template.types
    private = None
    if plan.template.negations:
        private = "a NOT in the pattern (spec A13: runs non-shared)"
    elif any(a.var is not None for a in plan.partition_attrs):
        private = "qualified partition attributes"
    var_type = {v: info.type for v, info in plan.vars.items()}
    edged = {(var_type[a], var_type[b]) for a, b in plan.edges}
    for var in plan.guards:
        edged |= {(var_type[t.src], var_type[t.dst]) for t in plan.template.predecessors(var)}
    return GloriaQuery(
        plan.name,
        plan.query.pattern,
        tuple((t, binding_rule(plan, t)) for t in types),
        signature,
        frozenset(edged),
        private,
    )


@dataclass(frozen=True)
class Shape:
    """What the template needs of one query: its positive types, transitions (type
    pairs), start and end types and Kleene units."""

    types: tuple[str, ...]
    transitions: tuple[tuple[str, str], ...]
    start: str
    end: str
    units: tuple[Unit, ...]


def query_shape(query: GloriaQuery) -> Shape:
    """GRETA's template of the query (trendagg's :func:`build_template`) over types."""
    template = build_template(query.pattern)
    leaves = pattern_variables(query.pattern)
    type_of = {v: leaf.type for v, leaf in leaves.items()}
    pairs = tuple((type_of[t.src], type_of[t.dst]) for t in template.transitions)
    units: list[Unit] = []

    def walk(p: ast.Pattern) -> None:
        if isinstance(p, ast.Plus):
            inner = build_template(p)
            kinds = tuple(inner.types)
            local = tuple((type_of[t.src], type_of[t.dst]) for t in inner.transitions)
            units.append(Unit(shape(p), kinds, local, type_of[inner.start], type_of[inner.end]))
        elif isinstance(p, ast.Seq):
            for item in p.items:
                walk(item)

    walk(query.pattern)
    return Shape(
        tuple(template.types), pairs, type_of[template.start], type_of[template.end], tuple(units)
    )


# ----------------------------------------------------------------------------- the template


@dataclass(frozen=True)
class Pool:
    """The candidate plans of one transition, ``Pool(source, target)``, or of one Kleene
    unit (``kind`` KLEENE: ``source`` its entry, ``target`` its exit type).

    ``queries`` are the queries on it; ``starts`` those that start at ``source`` (their
    start node connects here), ``ends`` those that end at ``target``; ``preds`` and
    ``succs`` the pools (indices) their trends come from and go to; ``key`` the
    sharability key and ``signature`` the queries' signature (for the rates)."""

    index: int
    kind: str
    source: str
    target: str
    queries: frozenset[str]
    starts: frozenset[str]
    ends: frozenset[str]
    preds: tuple[int, ...]
    succs: tuple[int, ...]
    key: tuple[object, ...]
    signature: tuple[object, ...]
    unit: Unit | None = None

    @property
    def transitions(self) -> tuple[tuple[str, str], ...]:
        return self.unit.transitions if self.unit is not None else ((self.source, self.target),)

    def name(self) -> str:
        if self.unit is not None:
            return f"Kleene {self.unit.shape}"
        return f"Pool({self.source},{self.target})"


@dataclass
class GloriaTemplate:
    """The merged template of a workload (section 2.2) as pools in topological order;
    ``private`` says why a query shares nothing, ``unplanned`` lists the queries without
    a transition (a single event type: nothing to share)."""

    queries: tuple[GloriaQuery, ...]
    pools: tuple[Pool, ...]
    private: dict[str, str] = field(default_factory=dict)
    unplanned: tuple[str, ...] = ()

    def starts(self) -> dict[str, list[int]]:
        """Start type -> the pools its start node connects to."""
        out: dict[str, list[int]] = {}
        for p in self.pools:
            if p.starts:
                out.setdefault(p.source, []).append(p.index)
        return out

    def ends(self) -> dict[str, list[int]]:
        """End type -> the pools that connect to its end node."""
        out: dict[str, list[int]] = {}
        for p in self.pools:
            if p.ends:
                out.setdefault(p.target, []).append(p.index)
        return out

    def query_sets(self) -> dict[tuple[str, str], frozenset[str]]:
        """Per transition (type pair; a unit's too), the queries that contain it, over
        all pools (Table 2's labels of the template)."""
        out: dict[tuple[str, str], frozenset[str]] = {}
        for p in self.pools:
            for t in p.transitions:
                out[t] = out.get(t, frozenset()) | p.queries
        return out


def gloria_template(queries: Sequence[GloriaQuery]) -> GloriaTemplate:
    """The pools of the workload's merged template (sections 2.2, 5.1 and 6), in a
    topological order. A query whose transitions would close a cycle of pools across
    queries (``SEQ(A, B, C)`` with ``SEQ(C, A, B)`` and ``SEQ(B, C, A)``: no order to
    build them in) runs non-shared (spec A12)."""
    queries = sorted(queries, key=lambda q: q.name)  # (any order: the same pools)
    names = [q.name for q in queries]
    if len(set(names)) != len(names):
        twice = sorted({n for n in names if names.count(n) > 1})
        raise ValueError(f"query names must be unique: {', '.join(twice)} appear twice")
    private: dict[str, str] = {q.name: q.private for q in queries if q.private is not None}
    while True:
        template = _template(queries, private)
        if isinstance(template, GloriaTemplate):
            return template
        for name in template:
            private[name] = "its transitions close a cycle of shared transitions (spec A12)"


def _template(
    queries: Sequence[GloriaQuery], private: Mapping[str, str]
) -> GloriaTemplate | set[str]:
    """The template, or the queries on a cycle of pools."""
    shapes = {q.name: query_shape(q) for q in queries}
    keys: dict[tuple[object, ...], int] = {}
    members: list[set[str]] = []
    Entry = tuple[str, str, str, tuple[object, ...], tuple[object, ...], Unit | None]
    info: list[Entry] = []
    route: dict[str, list[int]] = {}  # query -> its pools from start to end
    links: dict[str, list[tuple[int, int]]] = {}

    def pool_of(key: tuple[object, ...], entry: Entry, name: str) -> int:
        if key not in keys:
            keys[key] = len(members)
            members.append(set())
            info.append(entry)
        members[keys[key]].add(name)
        return keys[key]

    unplanned = []
    for q in queries:
        s = shapes[q.name]
        if not s.transitions:
            unplanned.append(q.name)
            continue
        mine: tuple[object, ...] | None = ("private", q.name) if q.name in private else None
        in_unit = {t: u for u in s.units for t in u.types}
        unit_pool: dict[str, int] = {}
        for u in s.units:
            edged = any(t in q.edged for t in u.transitions)
            unit_key = mine or (("private", q.name, u.shape) if edged else None)
            unit_key = unit_key or (q.signature, tuple(q.rule(t) for t in u.types))
            entry: Entry = (KLEENE, u.entry, u.exit, unit_key, q.signature, u)
            unit_pool[u.shape] = pool_of((KLEENE, u.shape, unit_key), entry, q.name)
        inside = {t for u in s.units for t in u.transitions}
        outside = [t for t in s.transitions if t not in inside]
        seq_pool: dict[tuple[str, str], int] = {}
        for a, b in outside:
            seq_key = mine or (("private", q.name) if (a, b) in q.edged else None)
            seq_key = seq_key or (q.signature, q.rule(a), q.rule(b))
            seq_pool[(a, b)] = pool_of(
                (SEQ, a, b, seq_key), (SEQ, a, b, seq_key, q.signature, None), q.name
            )
        order: list[int] = []  # the query's pools in trend order
        at = s.start
        while True:
            unit = in_unit.get(at)
            if unit is not None:
                order.append(unit_pool[unit.shape])
                at = unit.exit
            following = [b for a, b in outside if a == at]
            if not following:
                break
            order.append(seq_pool[(at, following[0])])  # (a type once per pattern: one way on)
            at = following[0]
        route[q.name] = order
        links[q.name] = list(zip(order, order[1:], strict=False))
    n = len(members)
    preds: list[set[int]] = [set() for _ in range(n)]
    succs: list[set[int]] = [set() for _ in range(n)]
    for pairs in links.values():
        for x, y in pairs:
            succs[x].add(y)
            preds[y].add(x)
    # Kahn's order; what remains lies on (or after) a cycle
    indegree = [len(p) for p in preds]
    ready = sorted(i for i in range(n) if indegree[i] == 0)
    topo: list[int] = []
    while ready:
        i = ready.pop(0)
        topo.append(i)
        for j in sorted(succs[i]):
            indegree[j] -= 1
            if indegree[j] == 0:
                ready.append(j)
        ready.sort()
    if len(topo) < n:
        stuck = set(range(n)) - set(topo)
        return {name for i in stuck for name in members[i]}
    position = {old: new for new, old in enumerate(topo)}
    pools = []
    for old in topo:
        kind, source, target, key, signature, unit = info[old]
        names = frozenset(members[old])
        starts = frozenset(q for q in names if route[q][0] == old)
        ends = frozenset(q for q in names if route[q][-1] == old)
        pools.append(
            Pool(
                index=position[old],
                kind=kind,
                source=source,
                target=target,
                queries=names,
                starts=starts,
                ends=ends,
                preds=tuple(sorted(position[p] for p in preds[old])),
                succs=tuple(sorted(position[s] for s in succs[old])),
                key=key,
                signature=signature,
                unit=unit,
            )
        )
    return GloriaTemplate(tuple(queries), tuple(pools), dict(private), tuple(unplanned))


def shareable_patterns(queries: Sequence[GloriaQuery]) -> dict[str, frozenset[str]]:
    """Def. 2.3: every sub-pattern (a ``P+``, or a contiguous run of two or more items
    of a SEQ, over types only) that appears in two or more queries, with those queries."""
    found: dict[str, set[str]] = {}

    def visit(p: ast.Pattern, name: str) -> None:
        if isinstance(p, ast.Plus):
            found.setdefault(shape(p), set()).add(name)
            visit(p.inner, name)
        elif isinstance(p, ast.Seq):
            items = [shape(i) for i in p.items]
            for a in range(len(items)):
                for b in range(a + 2, len(items) + 1):
                    text = "SEQ(" + ", ".join(items[a:b]) + ")"
                    found.setdefault(text, set()).add(name)
            for item in p.items:
                visit(item, name)

    for q in queries:
        visit(q.pattern, q.name)
    return {k: frozenset(v) for k, v in sorted(found.items()) if len(v) > 1}


# ----------------------------------------------------------------------------- cost model


Rates = Mapping[str, float]


class CostModel(Protocol):
    """The terms an edge weight is made of (section 3.2; spec 2.1). The optimizer's
    search (edge pruning, path search) holds for any weights (section 7.3)."""

    @property
    def end(self) -> str: ...
    @property
    def name(self) -> str: ...
    @property
    def at_target(self) -> bool: ...

    def start(self, rates: Rates, type_: str) -> float: ...
    def nonshared(self, rates: Rates, source: str, target: str) -> float: ...
    def share(self, rates: Rates, source: str, label: str) -> float: ...
    def evaluate(self, rates: Rates, at: str, label: str) -> float: ...
    def finish(self, rates: Rates, at: str, label: str, queries: int) -> float: ...
    def cycle(self, rates: Rates, unit: Unit, label: str | None, queries: int) -> float: ...


def _cycle(model: CostModel, rates: Rates, unit: Unit, label: str | None, queries: int) -> float:
    """A Kleene cycle's weight under ``model`` (spec 2.6): non-shared (None), every
    transition's Eq. 2 per query; shared with ``label``, each transition's propagation
    once, plus, for a label of the unit's own, the label's events evaluating their
    expression for every query on each iteration (a label carried from before the unit
    is never relabelled round it)."""
    if label is None:
        return queries * sum(model.nonshared(rates, a, b) for a, b in unit.transitions)
    moves = sum(model.share(rates, a, label) for a, _ in unit.transitions)
    if label not in unit.types:
        return moves
    return moves + queries * model.evaluate(rates, label, label)


END_OPTIONS = ("prop_eval", "eval_only")


@dataclass(frozen=True)
class PaperCost:
    """Eqs. 2-4 as Table 3 instantiates them (spec 2.1).

    ``end`` weighs an edge into an end node, which the paper never writes down (spec
    A5): ``prop_eval`` charges a shared Q-set its propagation into the end type and
    each query's evaluation, ``eval_only`` only the evaluations (the authors' code);
    a non-shared query pays Eq. 2 either way."""

    end: str = "prop_eval"
    name = "paper"
    at_target = False  # (see gloria_graph.edge_weight)

    def __post_init__(self) -> None:
        if self.end not in END_OPTIONS:
            raise ValueError(f"unknown end option '{self.end}': use {' or '.join(END_OPTIONS)}")

    def start(self, rates: Rates, type_: str) -> float:
        """Inserting a start value at every event of the start type."""
        return rates[type_]

    def nonshared(self, rates: Rates, source: str, target: str) -> float:
        """Eq. 2 for one query: every target event sums every source event's value."""
        return rates[target] * rates[source]

    def share(self, rates: Rates, source: str, label: str) -> float:
        """Eq. 3 for one Q-set: each source event's expression, of length
        ``len(source, label)``, propagates once for the whole Q-set."""
        return rates[source] * (1 if source == label else rates[label])

    def evaluate(self, rates: Rates, at: str, label: str) -> float:
        """Eq. 4 for one query: each event of ``at`` evaluates an expression over
        ``|label|`` snapshots."""
        return rates[at] * rates[label]

    def finish(self, rates: Rates, at: str, label: str, queries: int) -> float:
        """A shared Q-set's ``queries`` that all end at ``at``: Eq. 4 for each."""
        return queries * self.evaluate(rates, at, label)

    def cycle(self, rates: Rates, unit: Unit, label: str | None, queries: int) -> float:
        """A Kleene cycle's weight (spec 2.6): shared with ``label``, each transition's
        propagation once, plus the label's events evaluating their expression for every
        query on each iteration; non-shared (None), Eq. 2 per query and transition."""
        return _cycle(self, rates, unit, label, queries)


#: :class:`KernelCost`'s unit costs, in register updates of one query and window (the
#: compiled GRETA's work per event, query and window): a live snapshot's entry added
#: once for a Q-set (PROPAGATION), an entry evaluated against one query's snapshot
#: registers (EVALUATION), a snapshot's slot and identity entry (SNAPSHOT), an event's
#: pass through a shared context (CONTEXT)
PROPAGATION = 3.0
EVALUATION = 3.0
SNAPSHOT = 4.0
CONTEXT = 4.0


@dataclass(frozen=True)
class KernelCost:
    """The work of trendagg's compiled executors (the ``kernel`` cost model, what a run
    plans with), per window and partition, in register updates of one query and window.

    The paper's model prices a non-shared query at ``|Ej| * |Ei|`` per transition (each
    event sums its predecessors); the compiled GRETA keeps running totals, so an event
    updates each query's register once per window it falls in (``w``, the pool's
    :attr:`PoolRates.windows`): ``|Ej| * w``. Shared (``trendagg.kernels.loop.snapshots``), an
    event of a Q-set's types adds each live snapshot's entry once for the whole Q-set
    (``|L|`` snapshots live per window: PROPAGATION each, plus CONTEXT per event); an
    event of the label takes a snapshot (SNAPSHOT; its queries' values there are their
    updates, which the transition into it pays); a query whose Q-set or label changes
    evaluates each live snapshot per window (EVALUATION each) besides its own update;
    and queries that all end in one context accumulate their entries once per event
    and evaluate them once per window (:meth:`finish`, the kernel's lazy ENDs).
    ``end`` only names the end-edge weighting (``prop_eval``: propagation at the end
    type too, as the kernel does)."""

    end: str = "prop_eval"
    name = "kernel"
    at_target = True  # (see gloria_graph.edge_weight)

    @staticmethod
    def _w(rates: Rates) -> float:
        return float(getattr(rates, "windows", 1))

    def _live(self, rates: Rates, label: str) -> float:
        """Snapshots of ``label`` live per window: one per event, or, where trends start
        at it (the kernel's START groups: a START joins the last snapshot while in the
        same windows), one per window an event falls in."""
        if label in getattr(rates, "starts", ()):
            return min(rates[label], self._w(rates))
        return rates[label]

    def start(self, rates: Rates, type_: str) -> float:
        """A start: each event of the type updates the query's register per window."""
        return rates[type_] * self._w(rates)

    def nonshared(self, rates: Rates, source: str, target: str) -> float:
        """One query: each target event reads the source's running total, per window."""
        return rates[target] * self._w(rates)

    def share(self, rates: Rates, source: str, label: str) -> float:
        """One Q-set: a snapshot at each label event, or each source event adding each
        live snapshot's entry once."""
        if source == label:
            return self._live(rates, label) * SNAPSHOT
        return rates[source] * (CONTEXT + PROPAGATION * self._live(rates, label))

    def evaluate(self, rates: Rates, at: str, label: str) -> float:
        """One query: each ``at`` event evaluates the live snapshots per window, and
        updates its register."""
        return rates[at] * self._w(rates) * (1.0 + EVALUATION * self._live(rates, label))

    def finish(self, rates: Rates, at: str, label: str, queries: int) -> float:
        """Queries that all end at ``at``: each event accumulates the live snapshots'
        entries per window once, each window's close evaluates them per query."""
        live = self._live(rates, label)
        return rates[at] * self._w(rates) * PROPAGATION * live + queries * EVALUATION * live

    def cycle(self, rates: Rates, unit: Unit, label: str | None, queries: int) -> float:
        """A Kleene cycle: non-shared, every transition's update per query; shared with
        ``label``, each transition's propagation (the label's: its snapshot) once, and
        the label's events evaluating the cycle's entries per query."""
        return _cycle(self, rates, unit, label, queries)


#: GLORIA's cost models by name: the kernel's work (what a run plans with) or the
#: paper's Eqs. 2-4 (spec 2.1; the worked examples')
GLORIA_MODELS = ("paper", "kernel")


def cost_model(name: str) -> CostModel:
    """The cost model called ``name`` (one of :data:`GLORIA_MODELS`)."""
    if name == "kernel":
        return KernelCost()
    if name == "paper":
        return PaperCost()
    raise ValueError(f"unknown GLORIA cost model '{name}': use {' or '.join(GLORIA_MODELS)}")


# ----------------------------------------------------------------------------- rates


def estimate_rates(
    queries: Sequence[GloriaQuery],
    plans: Sequence[QueryPlan],
    events: EventBatch,
    sample: int = SAMPLE,
) -> dict[tuple[object, ...], dict[Any, float]]:
    """Per signature of the queries, ``|E|`` for each type they read: its events per
    window and partition in the first ``sample`` events (spec A16), as SHARON's
    :func:`~trendagg.optimizer.sharon.estimate_rates` does: events of E x WITHIN /
    (time the sample spans, at least WITHIN) / (partitions E's events fall in). With
    different windows in one signature (``same_window=False``) the longest is used.

    Frequencies are counted per binding filter (spec A14): where a query binds E only
    to some events (required attributes, local predicates), the signature's rates also
    hold, keyed ``(E, rule)`` (``rule`` as in :attr:`GloriaQuery.rules`), the rate of
    the events that pass, which the optimizer weighs E with in the pools of that rule
    (:func:`pool_rates`). Deterministic: every process that plans the same stream gets
    the same rates."""
    by_name = {p.name: p for p in plans}
    groups: dict[tuple[object, ...], tuple[Fraction, tuple[str, ...], set[str]]] = {}
    filters: dict[tuple[object, ...], dict[tuple[str, object], Filter]] = {}
    for q in queries:
        plan = by_name[q.name]
        within, names, wanted = groups.get(
            q.signature, (Fraction(0), tuple(sorted(a.name for a in plan.partition_attrs)), set())
        )
        wanted.update(plan.template.types)
        groups[q.signature] = (max(within, plan.window.within), names, wanted)
        narrow = narrowing_filters(plan, ((t, q.rule(t)) for t in plan.template.types))
        filters.setdefault(q.signature, {}).update(narrow)
    return sample_rates(events, groups, sample, filters)


class PoolRates(dict[Any, float]):
    """``|E|`` per type as a pool weighs them (:func:`pool_rates`); ``windows``: the
    windows an event of the pool's queries falls in; ``starts``: the types its queries'
    trends start at."""

    __slots__ = ("starts", "windows")

    def __init__(self, rates: Mapping[Any, float] = {}) -> None:  # noqa: B006 (read only)
        super().__init__(rates)
        self.windows = 1
        self.starts: frozenset[str] = frozenset()


def windows_per_event(signature: tuple[object, ...]) -> int:
    """The windows an event falls in under a signature's window (WITHIN / SLIDE, rounded
    up), or 1 where the signature has none (queries of different windows may share)."""
    found = dict(item for item in signature if isinstance(item, tuple) and len(item) == 2)
    if "within" not in found or "slide" not in found:
        return 1
    within, slide = Fraction(str(found["within"])), Fraction(str(found["slide"]))
    return max(1, math.ceil(within / slide)) if slide > 0 else 1


def pool_rates(
    pool: Pool,
    queries: Mapping[str, GloriaQuery],
    given: Mapping[Any, float],
    firsts: Mapping[str, str] | None = None,
) -> PoolRates:
    """``|E|`` per type as the pool weighs it: the rate of the events its queries bind to
    E where ``given`` has one for their binding rule (estimated rates, keyed ``(E,
    rule)``), else E's. The pool's queries bind its source and target alike (they are
    in its key); where they bind another type (a label) differently, the most frequent
    of their rules is used. Rates given per type name apply as they are."""
    out = PoolRates({k: v for k, v in given.items() if isinstance(k, str)})
    out.windows = windows_per_event(pool.signature)
    if firsts is None:
        firsts = {q: query_shape(queries[q]).start for q in pool.queries}
    out.starts = frozenset(firsts[q] for q in pool.queries)
    bound: dict[str, set[Any]] = {}  # (only the types some query binds by a rule)
    for q in pool.queries:
        for t, rule in dict(queries[q].rules).items():
            if rule is not None:
                bound.setdefault(t, set()).add(rule)
    for t, rules in bound.items():
        found = [given[(t, rule)] for rule in rules if (t, rule) in given]
        if t in out and len(found) == len(rules):
            out[t] = max(found)
    return out


__all__ = [
    "END_OPTIONS",
    "KLEENE",
    "SEQ",
    "CostModel",
    "GLORIA_MODELS",
    "GloriaQuery",
    "KernelCost",
    "GloriaTemplate",
    "PaperCost",
    "Pool",
    "PoolRates",
    "Rates",
    "Shape",
    "Unit",
    "cost_model",
    "estimate_rates",
    "gloria_query",
    "gloria_template",
    "pool_rates",
    "query_shape",
    "shape",
    "shareable_patterns",
    "windows_per_event",
]
