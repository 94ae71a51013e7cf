"""SHARON's sharing optimizer (Poppe et al., ICDE 2018): which sub-sequences to share.

SHARON shares *sub-sequences* of fixed-length sequence queries (``SEQ(A, B, C)``,
no Kleene plus, NOT or NEXT): a contiguous sub-pattern p of two or more event types
that appears in two or more queries is a *sharing candidate* (p, Q_p) (Def. 3,
Alg. 7). Sharing p costs a count combination per query (Eq. 4-7) and saves the
queries' own updates of p (Eq. 1-3); the difference is its benefit, BValue (Eq. 8),
from the event types' rates. Two candidates *conflict* when their occurrences overlap
in a query they both serve (Def. 6, read as the authors meant it: the position
intervals intersect), since the executor keeps a shared pattern's aggregates whole.
The best valid plan is then a maximum-weight independent set of the *SHARON graph*
(Def. 10: candidates weighted by BValue, conflicts as edges; Lemma 1), found by:

1. building the graph of the beneficial candidates (Alg. 1);
2. optionally expanding each candidate into options that leave out the queries
   causing its conflicts (section 7.1, Alg. 5/6);
3. per connected component, reducing the graph: conflict-free candidates join
   the plan, and candidates whose best possible plan scores below the GWMIN bound
   (Eq. 10) are pruned (Alg. 2, in the sound form of the specification: the bound
   of the input graph, and the best score counting the conflict-free ones);
4. searching the valid plans level by level (Alg. 3/4), or, past a time budget,
   taking GWMIN's greedy plan (Alg. 8).

A candidate is keyed by its pattern *and* a binding signature (window, partition
attributes, and per position the rule that binds an event: type, required
attributes, local predicates), so that a shared sub-sequence computes for every
query exactly what the query would compute alone.

This module is the optimizer alone, on :class:`SeqQuery` descriptions; the
specification is ``../shared/specs/sharon.md`` (sections 3-6 and 10.1), whose
worked examples are its tests.
"""

from __future__ import annotations

import itertools
import math
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from trendagg.io.batch import EventBatch
from trendagg.optimizer.rates import SAMPLE, Filter, narrowing_filters, sample_rates
from trendagg.plan.compile import QueryPlan, binding_rule

# the empty-side conventions of Eq. 5 (the paper leaves them open; spec section 4)
FACTOR_ONE = "factor-one"  # a missing prefix or suffix contributes the factor 1; none: 0
AUTHORS = "authors"  # the authors' code: the combination is counted only with both sides
# not the paper's: the work of trendagg's executors of such plans (see candidate_cost)
KERNEL = "kernel"
CONVENTIONS = (FACTOR_ONE, AUTHORS, KERNEL)
# the kernel model's costs per unit, against a non-shared register update of one query
# and window (1): a coefficient entry propagated, one applied to a snapshot's registers.
# Measured 2026-11-27 on a busy 2-core Xeon over 1,000,000 ecommerce events (60 queries,
# a shared 4-item sub-sequence after entry points, with and without a private item
# after it): GRETA's update 31-36 ns; a propagation about 110 ns, an evaluation about
# 430 ns (with its loop over the live snapshots that hold no prefix of the query)
PROPAGATION = 3.0
EVALUATION = 12.0
_MODELS = {  # what a BValue counts, per cost model (explain says it)
    FACTOR_ONE: "updates per window saved, Eq. 8",
    AUTHORS: "updates per window saved, Eq. 8 as the authors' code counts them",
    KERNEL: "register updates per window saved on trendagg's executors, the kernel model",
}


@dataclass(frozen=True)
class SeqQuery:
    """A query of SHARON's class as the optimizer sees it.

    ``types`` are its event types in pattern order (each at most once, as the
    language requires); ``rules`` the binding rule of each position (by default
    the type itself); ``signature`` what else a sharing query must agree on (its
    window and partition attributes)."""

    name: str
    types: tuple[str, ...]
    rules: tuple[object, ...] = ()
    signature: tuple[object, ...] = ()
    windows: int = 1  # the windows an event falls in (WITHIN over SLIDE, rounded up)

    def __post_init__(self) -> None:
        if not self.rules:
            object.__setattr__(self, "rules", self.types)
        if len(self.rules) != len(self.types):
            raise ValueError(f"{self.name}: {len(self.types)} types but {len(self.rules)} rules")

    def position(self, pattern: Sequence[str]) -> int:
        """Where ``pattern`` starts in this query (it appears, contiguously)."""
        return self.types.index(pattern[0])


def seq_query(plan: QueryPlan) -> SeqQuery | None:
    """The query as SHARON's optimizer sees it, or None when it is not of its class
    (see :func:`sharon_blocker`)."""
    if sharon_blocker(plan) is not None:
        return None
    types = plan.template.types
    window = plan.window
    signature = (
        ("within", str(window.within)),
        ("slide", str(window.slide)),
        ("partition", tuple(sorted(a.name for a in plan.partition_attrs))),
    )
    rules = tuple(binding_rule(plan, t) for t in types)
    windows = max(1, math.ceil(window.within / window.slide))
    return SeqQuery(plan.name, types, rules, signature, windows)


def sharon_blocker(plan: QueryPlan) -> str | None:
    """Why SHARON cannot share sub-sequences of this query, or None when it can."""
    template = plan.template
    if template.negations:
        return "a NOT in the pattern"
    if any(t.label != "SEQ" for t in template.transitions):
        return "a Kleene plus in the pattern"
    chain = {(a, b) for a, b in itertools.pairwise(template.states)}
    if {(t.src, t.dst) for t in template.transitions} != chain:
        return "a pattern that is not one sequence of events"
    if plan.edges or plan.guards:
        return "a NEXT condition"
    if any(a.var is not None for a in plan.partition_attrs):
        return "qualified partition attributes"
    return None


@dataclass(frozen=True, order=True)
class Candidate:
    """A sharing candidate (p, Q_p): ``pattern`` shared by the queries ``queries``
    (names, sorted); ``key`` is the binding signature that makes the sharing exact."""

    pattern: tuple[str, ...]
    queries: tuple[str, ...]
    key: tuple[object, ...] = field(default=(), compare=False)

    def label(self) -> str:
        return f"({', '.join(self.pattern)}) {{{', '.join(self.queries)}}}"


def sharable_patterns(queries: Sequence[SeqQuery]) -> list[Candidate]:
    """Every contiguous sub-pattern of two or more positions that two or more queries of
    one signature have, with all those queries (Alg. 7 with the binding signature),
    sorted by pattern and queries: the same list whatever the queries' order."""
    found: dict[tuple[object, ...], tuple[tuple[str, ...], set[str]]] = {}
    for q in queries:
        n = len(q.types)
        for start in range(n):
            for end in range(start + 2, n + 1):
                key = (q.signature, q.rules[start:end])
                found.setdefault(key, (q.types[start:end], set()))[1].add(q.name)
    return sorted(
        Candidate(pattern, tuple(sorted(names)), key)
        for key, (pattern, names) in found.items()
        if len(names) > 1
    )


# ----------------------------------------------------------------------------- cost model


@dataclass(frozen=True)
class Cost:
    """The terms of Eq. 1-8 for one candidate: what its queries cost alone (Eq. 3), what
    sharing costs (Eq. 7), and the benefit (Eq. 8)."""

    non_shared: float
    shared: float

    @property
    def benefit(self) -> float:
        return self.non_shared - self.shared


def candidate_cost(
    candidate: Candidate,
    queries: Mapping[str, SeqQuery],
    rates: Mapping[Any, float],
    convention: str = FACTOR_ONE,
) -> Cost:
    """Eq. 1-8 for (p, Q_p), with the event types' ``rates`` (events per window).

    A position's rate is its binding rule's where ``rates`` has one (keyed ``(type,
    rule)``, as :func:`estimate_rates` counts the events that pass a query's filter),
    else its type's. ``convention`` settles the combination cost of a query whose
    prefix or suffix around p is empty (Eq. 5, undefined in the paper): ``factor-one``
    (the missing side contributes the factor 1, nothing is combined when both are
    missing) or ``authors`` (combined only when both sides exist, as in the authors'
    code)."""
    if convention not in CONVENTIONS:
        raise ValueError(f"unknown convention '{convention}': use {' or '.join(CONVENTIONS)}")

    def rate_at(q: SeqQuery, i: int) -> float:
        t = q.types[i]
        return rates.get((t, q.rules[i]), rates[t])

    def rate(q: SeqQuery, positions: range) -> float:  # Eq. 1
        return sum(rate_at(q, i) for i in positions)

    if convention == KERNEL:
        return _kernel_cost(candidate, queries, rate_at)
    p = candidate.pattern
    # (p binds its events alike in every query of the candidate: its key)
    q0 = queries[candidate.queries[0]]
    at = q0.position(p)
    first_of_p = rate_at(q0, at)
    non_shared = 0.0
    shared = first_of_p * rate(q0, range(at, at + len(p)))  # Eq. 7's own term: p once
    for name in candidate.queries:
        q = queries[name]
        start, n = q.position(p), len(q.types)
        end = start + len(p)
        has_prefix, has_suffix = start > 0, end < n
        first = rate_at(q, 0)
        non_shared += first * rate(q, range(n))  # Eq. 2
        after = rate_at(q, end) if has_suffix else 0.0
        computed = first * rate(q, range(start)) + after * rate(q, range(end, n))  # Eq. 4
        if convention == AUTHORS:
            combined = first * first_of_p * after if has_prefix and has_suffix else 0.0
        elif has_prefix or has_suffix:  # Eq. 5, a missing side as the factor 1
            combined = (first if has_prefix else 1.0) * first_of_p * (after if has_suffix else 1.0)
        else:
            combined = 0.0
        shared += computed + combined  # Eq. 6
    return Cost(non_shared, shared)


def _kernel_cost(
    candidate: Candidate,
    queries: Mapping[str, SeqQuery],
    rate_at: Callable[[SeqQuery, int], float],
) -> Cost:
    """What (p, Q_p) costs trendagg's executors, per window, alone and shared (the
    ``kernel`` convention), in register updates of one query and window.

    Alone (GRETA's running totals, spec section 2.3), an event of p's types updates
    each query once per window it falls in (``windows``, w), and so does the event
    after p in a query (its suffix's first: it reads the values at p's end); queries
    whose patterns are equal up to p's end update one set of registers (the compiled
    kernel's classes of states equal by construction, HAMLET's prefix sharing).

    Shared (spec section 3.4, ``trendagg.kernels.loop.snapshots``): an event of p's first
    type joins the last START group (an entry added: PROPAGATION), or opens one (a
    snapshot: a register update per query and window) when a prefix that its queries
    end before p has changed since, or a slide has passed; so a window holds g = w +
    (the events that end a prefix, per distinct binding) groups, at most one per START
    event. An event of p's later types propagates each live group's coefficients once
    for all queries (PROPAGATION each); the event after p in a query evaluates each
    group of each of its windows for that query (EVALUATION each), and a query that p
    ends evaluates them once at the window's end."""
    p = candidate.pattern
    q0 = queries[candidate.queries[0]]
    at = q0.position(p)
    w = q0.windows
    first = rate_at(q0, at)
    ends: dict[object, float] = {}  # per binding, the rate of the events ending a prefix
    for name in candidate.queries:
        q = queries[name]
        start = q.position(p)
        if start > 0:
            ends[(q.types[start - 1], q.rules[start - 1])] = rate_at(q, start - 1)
    groups = min(w + sum(ends.values()), first)
    inner = sum(rate_at(q0, i) for i in range(at + 1, at + len(p)))
    alone = 0.0
    shared = (first + inner * groups) * PROPAGATION + groups * len(candidate.queries) * w
    classes = set()  # queries equal up to p's end: one set of registers for p already
    for name in candidate.queries:
        q = queries[name]
        end = q.position(p) + len(p)
        after = rate_at(q, end) if end < len(q.types) else 0.0
        alone += w * after
        if (q.types[:end], q.rules[:end]) not in classes:
            classes.add((q.types[:end], q.rules[:end]))
            alone += w * (first + inner)
        shared += EVALUATION * groups * (w * after if end < len(q.types) else 1.0)
    return Cost(alone, shared)


def estimate_rates(
    plans: Sequence[QueryPlan], events: EventBatch, sample: int = SAMPLE
) -> dict[tuple[object, ...], dict[Any, float]]:
    """Per signature of SHARON's queries (see :func:`seq_query`), the rate of each
    event type they read: its events per window and partition, from the first
    ``sample`` events (deterministic: every process that plans the same stream gets
    the same rates, so Spark's workers agree on one plan).

    Rate(E) = (events of E) x WITHIN / (time the sample spans, at least WITHIN) /
    (partitions that E's events fall in), a partition being a value of the
    signature's partition attributes. A type without events in the sample has rate 0.
    Where a query binds E to only some of its events (required attributes beyond the
    partition's, local predicates), the rate of those that pass is also given, keyed
    ``(E, rule)`` (:func:`~trendagg.plan.compile.binding_rule`), and
    :func:`candidate_cost` weighs that query's position with it."""
    # per signature: one of its plans (the window and partition attributes) and its types
    signatures: dict[tuple[object, ...], tuple[QueryPlan, set[str]]] = {}
    filters: dict[tuple[object, ...], dict[tuple[str, object], Filter]] = {}
    for plan in plans:
        query = seq_query(plan)
        if query is None:
            continue
        signatures.setdefault(query.signature, (plan, set()))[1].update(query.types)
        narrow = narrowing_filters(plan, zip(query.types, query.rules, strict=True))
        filters.setdefault(query.signature, {}).update(narrow)
    groups = {
        signature: (plan.window.within, tuple(sorted(a.name for a in plan.partition_attrs)), wanted)
        for signature, (plan, wanted) in signatures.items()
    }
    return sample_rates(events, groups, sample, filters)


# ----------------------------------------------------------------------------- the graph


def conflict(a: Candidate, b: Candidate, queries: Mapping[str, SeqQuery]) -> bool:
    """Def. 6 as meant: in some query both serve, their occurrences share a position."""
    for name in set(a.queries) & set(b.queries):
        q = queries[name]
        a0, b0 = q.position(a.pattern), q.position(b.pattern)
        if a0 < b0 + len(b.pattern) and b0 < a0 + len(a.pattern):
            return True
    return False


@dataclass
class Graph:
    """A SHARON graph: candidates (vertices, in a fixed order), their weights (BValue)
    and their conflicts (``adjacent[i]``: the vertices vertex i conflicts with)."""

    vertices: list[Candidate]
    weights: list[float]
    adjacent: list[set[int]]

    @staticmethod
    def build(
        candidates: Iterable[Candidate],
        weight: Callable[[Candidate], float],
        conflicts: Callable[[Candidate, Candidate], bool] | Mapping[str, SeqQuery],
    ) -> Graph:
        """Alg. 1: a vertex per beneficial candidate (weight > 0), an edge per conflict:
        ``conflicts`` tells two candidates apart, or is the queries (Def. 6 on their
        positions, checked only between candidates of one query)."""
        vertices, weights = [], []
        for c in candidates:
            w = weight(c)
            if w > 0 and len(c.queries) > 1:
                vertices.append(c)
                weights.append(w)
        adjacent: list[set[int]] = [set() for _ in vertices]
        if callable(conflicts):
            for i, j in itertools.combinations(range(len(vertices)), 2):
                if conflicts(vertices[i], vertices[j]):
                    adjacent[i].add(j)
                    adjacent[j].add(i)
            return Graph(vertices, weights, adjacent)
        serving: dict[str, list[tuple[int, int, int]]] = {}  # query -> (vertex, start, end)
        for i, c in enumerate(vertices):
            for name in c.queries:
                start = conflicts[name].position(c.pattern)
                serving.setdefault(name, []).append((i, start, start + len(c.pattern)))
        for occurrences in serving.values():
            occurrences.sort(key=lambda o: o[1])
            for k, (i, _, end) in enumerate(occurrences):
                for j, start, _ in occurrences[k + 1 :]:
                    if start >= end:
                        break  # (sorted by start: the rest begin after i's end)
                    adjacent[i].add(j)
                    adjacent[j].add(i)
        return Graph(vertices, weights, adjacent)

    def edges(self) -> list[tuple[int, int]]:
        return [
            (i, j) for i in range(len(self.vertices)) for j in sorted(self.adjacent[i]) if i < j
        ]

    def components(self) -> list[list[int]]:
        """The connected components, each a sorted list of vertices, in vertex order."""
        seen: set[int] = set()
        out = []
        for v in range(len(self.vertices)):
            if v in seen:
                continue
            stack, part = [v], []
            seen.add(v)
            while stack:
                u = stack.pop()
                part.append(u)
                for x in self.adjacent[u] - seen:
                    seen.add(x)
                    stack.append(x)
            out.append(sorted(part))
        return out

    def score(self, plan: Iterable[int]) -> float:
        """Eq. 9: the sum of the plan's weights."""
        return sum(self.weights[v] for v in plan)

    def valid(self, plan: Sequence[int]) -> bool:
        """Def. 7: no two of the plan's candidates conflict."""
        return all(b not in self.adjacent[a] for a, b in itertools.combinations(plan, 2))


def gwmin_bound(graph: Graph, among: Iterable[int] | None = None) -> float:
    """Eq. 10: the sum of weight / (degree + 1), a lower bound of the best plan's score."""
    alive = set(range(len(graph.vertices)) if among is None else among)
    return sum(graph.weights[v] / (len(graph.adjacent[v] & alive) + 1) for v in alive)


def gwmin(graph: Graph, among: Iterable[int] | None = None) -> list[int]:
    """Alg. 8: take the vertex of largest weight / (degree + 1) in the remaining graph
    (the first in vertex order on ties), drop it and its neighbours; repeat."""
    alive = set(range(len(graph.vertices)) if among is None else among)
    plan = []
    while alive:
        v = max(
            sorted(alive), key=lambda u: graph.weights[u] / (len(graph.adjacent[u] & alive) + 1)
        )
        plan.append(v)
        alive -= graph.adjacent[v] | {v}
    return sorted(plan)


def score_max(graph: Graph, v: int, alive: set[int], free: Sequence[int] = ()) -> float:
    """Eq. 11: the best score a plan with ``v`` can reach, the weights of every vertex
    that does not conflict with it (itself included), conflict-free ones too."""
    return graph.score(alive - graph.adjacent[v]) + graph.score(free)


@dataclass
class Reduction:
    """What Alg. 2 left: the vertices to search, the conflict-free ones (in every optimal
    plan), and the pruned conflict-ridden ones; ``bound`` is Eq. 10 on the input."""

    remaining: list[int]
    free: list[int]
    pruned: list[int]
    bound: float


def reduce_graph(graph: Graph, among: Iterable[int] | None = None) -> Reduction:
    """Alg. 2, sound (the specification's variant A): with the bound of the input
    graph, until nothing changes, a vertex without conflicts goes to the plan and one
    whose :func:`score_max` (counting the conflict-free vertices) is below the bound
    is pruned. The literal reading, without the conflict-free weights, prunes optimal
    candidates (spec section 5.2)."""
    alive = set(range(len(graph.vertices)) if among is None else among)
    bound = gwmin_bound(graph, alive)
    free: list[int] = []
    pruned: list[int] = []
    # score_max(v) = (weight of alive and free vertices) - (weight of v's alive conflicts)
    reachable = graph.score(alive)
    changed = True
    while changed:
        changed = False
        for v in sorted(alive):
            conflicting = graph.adjacent[v] & alive
            if not conflicting:
                free.append(v)
                alive.discard(v)  # (its weight stays reachable: it is in every plan)
                changed = True
            elif reachable - graph.score(conflicting) < bound:
                pruned.append(v)
                alive.discard(v)
                reachable -= graph.weights[v]
                changed = True
    return Reduction(sorted(alive), sorted(free), sorted(pruned), bound)


class _OutOfTime(Exception):
    pass


def next_level(
    graph: Graph, parents: Sequence[tuple[int, ...]], deadline: float | None = None
) -> list[tuple[int, ...]]:
    """Alg. 3: the valid plans of one more candidate, from the valid plans of this level
    (sorted tuples in lexicographic order): two parents that differ in their last
    candidate only, those two not in conflict (Lemmas 5 and 6). Past ``deadline``
    (``time.perf_counter``), it stops with ``_OutOfTime``."""
    out = []
    for i, a in enumerate(parents):
        if deadline is not None and i % 256 == 0 and time.perf_counter() > deadline:
            raise _OutOfTime
        for b in parents[i + 1 :]:
            if a[:-1] != b[:-1]:
                break  # (sorted: the parents with a's head come right after it)
            if b[-1] not in graph.adjacent[a[-1]]:
                out.append((*a, b[-1]))
    return out


@dataclass
class Search:
    """The plan finder's result: the best plan, the valid plans it visited, and whether
    the time budget ran out (the plan is then GWMIN's)."""

    plan: list[int]
    visited: int
    timed_out: bool = False


def find_plan(
    graph: Graph, among: Sequence[int], budget: float | None = None, started: float = 0.0
) -> Search:
    """Alg. 4: the best valid plan of the vertices ``among``, level by level; past
    ``budget`` seconds (from ``started``), GWMIN's plan of them instead (section 6)."""
    deadline = None if budget is None else started + budget
    level: list[tuple[int, ...]] = [(v,) for v in sorted(among)]
    best: tuple[int, ...] = ()
    best_score = 0.0
    visited = 0
    try:
        while level:
            for plan in level:
                visited += 1
                s = graph.score(plan)
                if s > best_score:
                    best, best_score = plan, s
            level = next_level(graph, level, deadline)
    except _OutOfTime:
        return Search(gwmin(graph, among), visited, timed_out=True)
    return Search(list(best), visited)


def exhaustive(graph: Graph, among: Iterable[int] | None = None) -> list[int]:
    """The best valid plan by trying every subset (a baseline, and the tests' oracle);
    ties go to the first subset in size-then-lexicographic order."""
    vertices = sorted(range(len(graph.vertices)) if among is None else among)
    best: tuple[int, ...] = ()
    best_score = 0.0
    for size in range(1, len(vertices) + 1):
        for plan in itertools.combinations(vertices, size):
            if graph.valid(plan) and graph.score(plan) > best_score:
                best, best_score = plan, graph.score(plan)
    return list(best)


# ----------------------------------------------------------------------------- options


def options(
    graph: Graph, v: int, queries: Mapping[str, SeqQuery], limit: int = 64
) -> list[Candidate]:
    """Section 7.1 (the closure of Alg. 5): the candidate itself and every variant that
    leaves out some of the queries causing its conflicts, keeping at least two; at most
    ``limit`` of them, those that leave out fewest queries first (their number grows as
    2 to the number of such queries, Eq. 14: 120 queries gave a candidate 2**30)."""
    c = graph.vertices[v]
    mine = {name: queries[name].position(c.pattern) for name in c.queries}
    causing: set[str] = set()
    for u in graph.adjacent[v]:
        other = graph.vertices[u]
        for name in other.queries:
            if name in mine and name not in causing:
                start, theirs = mine[name], queries[name].position(other.pattern)
                if start < theirs + len(other.pattern) and theirs < start + len(c.pattern):
                    causing.add(name)
    out: list[Candidate] = []
    for size in range(len(causing) + 1):
        for dropped in itertools.combinations(sorted(causing), size):
            kept = tuple(q for q in c.queries if q not in dropped)
            if len(kept) >= 2:
                out.append(Candidate(c.pattern, kept, c.key))
                if len(out) == limit:
                    return out
    return out


def expanded_candidates(
    graph: Graph, queries: Mapping[str, SeqQuery], most: int | None = None
) -> list[Candidate] | None:
    """Alg. 6's vertices: every option of every candidate (before the weights are
    computed again and the non-beneficial ones dropped), in candidate order; None as
    soon as there are more than ``most``."""
    found: set[Candidate] = set()
    for v in range(len(graph.vertices)):
        found.update(options(graph, v, queries))
        if most is not None and len(found) > most:
            return None
    return sorted(found)


# ----------------------------------------------------------------------------- the optimizer


@dataclass
class SharonPlan:
    """What the optimizer chose and why (for ``explain`` and the benchmarks)."""

    graph: Graph
    chosen: list[int]
    free: list[int]
    pruned: list[int]
    bound: float
    visited: int
    timed_out: bool
    greedy: list[int]
    non_beneficial: list[Candidate]
    expanded: bool
    seconds: float
    declined: list[float] = field(default_factory=list)  # the non-beneficial ones' BValues
    convention: str = FACTOR_ONE  # the cost model the BValues are of

    @property
    def candidates(self) -> list[Candidate]:
        return [self.graph.vertices[v] for v in self.chosen]

    @property
    def score(self) -> float:
        return self.graph.score(self.chosen)

    def describe(self) -> str:
        """What the optimizer weighed and chose, as ``trendagg explain`` prints it:
        the candidates with their BValue, the conflicts, what was pruned and why, the
        plan and its score beside GWMIN's. Vertices are named v1, v2, ... in graph order."""
        g = self.graph

        def names(vs: Iterable[int]) -> str:
            return ", ".join(f"v{v + 1}" for v in vs) or "none"

        lines = [
            "SHARON's optimizer"
            + (" (candidates expanded into options, section 7.1)" if self.expanded else "")
            + ":",
            f"  candidates in the SHARON graph ({len(g.vertices)}; BValue = {_MODELS[self.convention]}):",
        ]
        for v, (c, w) in enumerate(zip(g.vertices, g.weights, strict=True)):
            lines.append(f"    v{v + 1} {c.label()}: {w:g}")
        if self.non_beneficial:
            lines.append(
                f"  not beneficial, left out of the graph ({len(self.non_beneficial)}; "
                "BValue <= 0):"
            )
            weights = self.declined or [float("nan")] * len(self.non_beneficial)
            for c, w in zip(self.non_beneficial, weights, strict=True):
                lines.append(f"    {c.label()}: {w:g}")
        edges = g.edges()
        lines.append(
            "  conflicts (a query in both, their positions overlapping): "
            + (", ".join(f"v{i + 1}-v{j + 1}" for i, j in edges) if edges else "none")
        )
        lines.append(f"  conflict-free, in the plan without search: {names(self.free)}")
        lines.append(
            f"  pruned, their best plan below the GWMIN bound {self.bound:g} (Eq. 10): "
            f"{names(self.pruned)}"
        )
        search = f"{self.visited} valid plans searched"
        if self.timed_out:
            search += "; the time budget ran out: GWMIN's plan for the rest"
        lines.append(f"  plan: {names(self.chosen)}, score {self.score:g} ({search})")
        lines.append(f"  GWMIN's plan: {names(self.greedy)}, score {g.score(self.greedy):g}")
        return "\n".join(lines)


def optimize(
    queries: Sequence[SeqQuery],
    rates: Mapping[Any, Any],
    *,
    expand: bool = True,
    convention: str = FACTOR_ONE,
    budget: float | None = 0.5,
    max_vertices: int = 2_000,
) -> SharonPlan:
    """SHARON's four phases (section 8.3): the graph of the beneficial candidates, its
    expansion into options (``expand``; skipped when it would make more than
    ``max_vertices`` vertices), then per connected component the reduction
    and the plan finder (GWMIN's plan for a component the ``budget`` seconds, counted
    from the start, do not cover: the level search is exponential in the worst case,
    and 120 queries over shared routes gave a component of 895 candidates). The graph
    without options is searched first: where the options' search runs out of time, the
    better of the two plans is taken. ``rates``: the event types' rates, or such rates per signature (as
    :func:`estimate_rates` gives them). The same queries and rates give the same plan
    in any order."""
    started = time.perf_counter()
    by_name = {q.name: q for q in queries}

    def weight(c: Candidate) -> float:
        mine = rates.get(c.key[0]) if c.key else None  # (per signature, or one for all)
        flat: Mapping[Any, float] = mine if isinstance(mine, Mapping) else rates
        return candidate_cost(c, by_name, flat, convention).benefit

    candidates = sharable_patterns(queries)
    graph = Graph.build(candidates, weight, by_name)
    kept = set(graph.vertices)
    non_beneficial = [c for c in candidates if c not in kept]
    declined = [weight(c) for c in non_beneficial]
    found = _search(graph, budget, started)
    expanded = False
    if expand and graph.vertices:
        more = expanded_candidates(graph, by_name, max_vertices)
        if more is not None:
            wider = Graph.build(more, weight, by_name)
            again = _search(wider, budget, started)
            # the options' plan, unless its search ran out of time and GWMIN's fallback
            # scores below the plan without options (valid there too: a candidate is
            # its own widest option)
            if not again[5] or wider.score(again[0]) >= graph.score(found[0]):
                graph, found, expanded = wider, again, True
    chosen, free, pruned, bound, visited, timed_out = found
    return SharonPlan(
        graph=graph,
        chosen=sorted(chosen),
        free=sorted(free),
        pruned=sorted(pruned),
        bound=bound,
        visited=visited,
        timed_out=timed_out,
        greedy=gwmin(graph),
        non_beneficial=non_beneficial,
        expanded=expanded,
        seconds=time.perf_counter() - started,
        declined=declined,
        convention=convention,
    )


def _search(
    graph: Graph, budget: float | None, started: float
) -> tuple[list[int], list[int], list[int], float, int, bool]:
    """Per connected component, the reduction and the plan finder (GWMIN's plan for
    the components that the ``budget`` seconds from ``started`` do not cover): the plan,
    its conflict-free and pruned vertices, the GWMIN bound, the plans visited and
    whether the budget ran out."""
    chosen: list[int] = []
    free: list[int] = []
    pruned: list[int] = []
    bound = 0.0
    visited = 0
    timed_out = False
    for component in graph.components():
        reduction = reduce_graph(graph, component)
        search = find_plan(graph, reduction.remaining, budget, started)
        chosen += search.plan + reduction.free
        free += reduction.free
        pruned += reduction.pruned
        bound += reduction.bound
        visited += search.visited
        timed_out |= search.timed_out
    return chosen, free, pruned, bound, visited, timed_out


__all__ = [
    "AUTHORS",
    "KERNEL",
    "CONVENTIONS",
    "FACTOR_ONE",
    "Candidate",
    "Cost",
    "Graph",
    "Reduction",
    "Search",
    "SeqQuery",
    "SharonPlan",
    "candidate_cost",
    "conflict",
    "estimate_rates",
    "exhaustive",
    "expanded_candidates",
    "find_plan",
    "gwmin",
    "gwmin_bound",
    "next_level",
    "optimize",
    "options",
    "reduce_graph",
    "score_max",
    "seq_query",
    "sharable_patterns",
    "sharon_blocker",
]
