"""The GLORIA graph (Def. 4.1), built pool by pool and pruned as it grows (section 5).

A *node* is a candidate plan of one pool (a tuple of :class:`QSet`), or a start or
end node; an *edge* joins nodes of consecutive pools and weighs the execution cost
of the type where they meet under both plans (section 4, Lemma 4.4: a path's
weight is its plan's cost). Construction goes pool by pool in topological order
(section 5.1) and prunes each pool as soon as it is built (section 5.2):

1. *node generation* from every combination of one surviving node per preceding
   pool: the Q-sets arriving, cut to the pool's queries, plus a non-shared singleton
   per query that starts here; then **Reuse** (NGP 1, Eq. 19: keep every Q-set and
   label), **Local snapshots** (NGP 2, Eq. 20: relabel any subset of the shared
   Q-sets to the pool's source type, only to a rarer type unless ``local="any"``)
   and **Merging** (NGP 3, Eq. 21: everything into one Q-set labelled with the source
   type). Splits and shuffles are never generated (Lemma 5.2). NGP 3 misses partial
   merges (spec A10), so ``merge="values"`` also merges the non-shared queries alone,
   and ``merge="subsets"`` every plan of Def. 2.6 (:func:`full_space`: any partition
   of the pool's queries, splits and a return to non-shared values included);
2. *distance from the starts* (Eq. 22) with one back-pointer per preceding pool,
   then **edge pruning** (only that argmin edge stays, Lemma 5.8) and **node
   pruning** (Def. 5.9, Lemma 5.11, spec A9: of two nodes with the same Q-sets, the
   one whose every label is at least as frequent, one differing, and whose d_s is
   strictly larger goes, with its edges; nothing it would have generated is built;
   :func:`prune_nodes` says how the default ``safe`` rule makes this hold outside
   the paper's examples);
3. a Kleene unit is one pool whose k + 2 nodes are whole cycles (Path Generation
   Principle, section 6): all queries in one Q-set labelled with one of the unit's
   types, or all non-shared; the cycle's weight is the node's own weight, added to
   its d_s (Eq. 24), and node pruning compares the shared cycles.

The graph is then searched by :mod:`trendagg.optimizer.gloria_search`.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import NamedTuple, TypeVar

from trendagg.optimizer.gloria_template import (
    KLEENE,
    SEQ,
    CostModel,
    GloriaTemplate,
    PaperCost,
    Pool,
    Rates,
    pool_rates,
    query_shape,
)

INF = float("inf")
T = TypeVar("T")
MODES = ("gloria", "noprune", "greedy", "none", "exhaustive")
MERGES = ("all", "values", "subsets")
LOCALS = ("rarer", "any")


class QSet(NamedTuple):
    """Queries that share one transition (section 2.2); ``label`` is the snapshot type
    (section 2.3), None for a non-shared query (then it is one query).

    A named tuple, compared, sorted and hashed as ``(queries, label)``: the graph's
    builder keys and sorts its candidate plans by their Q-sets hundreds of thousands
    of times, which a dataclass would do in Python."""

    queries: tuple[str, ...]
    label: str | None

    def text(self) -> str:
        body = "(" + ",".join(self.queries) + ")"
        return body if self.label is None else f"{body}^{self.label}"


def qset(queries: Iterable[str], label: str | None) -> QSet:
    return QSet(tuple(sorted(queries)), label)


def plan_text(qsets: Sequence[QSet]) -> str:
    return ",".join(s.text() for s in qsets)


@dataclass(eq=False, slots=True)
class Node:
    """A node of the graph: a candidate plan of pool ``pool`` (``kind`` "plan"), or a
    start or end node. ``own`` is its own weight (a Kleene cycle's, Eq. 24); ``kept``,
    once edge pruning has run on it, the back-pointers whose edges it kept."""

    index: int
    pool: int
    qsets: tuple[QSet, ...] = ()
    kind: str = "plan"
    own: float = 0.0
    how: str = ""
    d_s: float = INF
    back: dict[int, Node] = field(default_factory=dict)
    pruned: str | None = None  # why it was pruned
    name: str = ""  # n1, n2, ... for plans in the order they were made; start/end nodes by type
    member: dict[str, QSet] = field(init=False)  # query -> its Q-set
    kept: dict[int, Node] | None = None  # (edge pruning: the edges from these stay)

    def __post_init__(self) -> None:
        self.member = {q: s for s in self.qsets for q in s.queries}

    def text(self) -> str:
        return plan_text(self.qsets) if self.kind == "plan" else self.kind


@dataclass(eq=False, slots=True)
class Edge:
    """An edge as the graph reports it (:attr:`Graph.edges`, :attr:`Graph.incoming`): made
    when asked for, since the graph keeps its edges by :class:`Sources`, not one by one."""

    source: Node
    target: Node
    weight: float
    pruned: bool = False


class Sources:
    """Nodes of one pool that join their targets together (a class of
    :func:`_arrival_classes`, or one node), with per node the kind of its edges' weight
    (None: one weight for all). A node is in at most one :class:`Sources` per pool it
    has edges into, so that its edges there keep the order the graph made them in."""

    __slots__ = ("nodes", "kind", "pool", "at")

    def __init__(self, nodes: Sequence[Node], kind: Sequence[int] | None = None) -> None:
        self.nodes = nodes
        self.kind = kind
        self.pool = nodes[0].pool
        self.at: dict[int, int] | None = None  # node index -> position, once asked for

    def locate(self) -> dict[int, int]:
        """Per node index its position among :attr:`nodes`."""
        if self.at is None:
            self.at = {n.index: i for i, n in enumerate(self.nodes)}
        return self.at

    def position(self, index: int) -> int | None:
        """Where the node of that index is among :attr:`nodes` (None: not there)."""
        return self.locate().get(index)


_INDEXED = 4  # a node with more bundles into it than this has them by source pool too


class Bundle:
    """The edges from every node of ``sources`` to ``target``: ``weights`` per kind."""

    __slots__ = ("sources", "target", "weights")

    def __init__(self, sources: Sources, target: Node, weights: Sequence[float]) -> None:
        self.sources = sources
        self.target = target
        self.weights = weights

    def weight(self, i: int) -> float:
        kind = self.sources.kind
        return self.weights[0 if kind is None else kind[i]]

    def edges(self) -> Iterator[Edge]:
        target, kept = self.target, self.target.kept
        for i, source in enumerate(self.sources.nodes):
            pruned = kept is not None and kept.get(source.pool) is not source
            yield Edge(source, target, self.weight(i), pruned)


@dataclass(eq=False)
class GraphPool:
    """A pool of the graph; ``template`` is the template pool it plans (None for the
    start and end pools, named after their type)."""

    index: int
    name: str
    kind: str  # "start", "end", SEQ or KLEENE
    preds: list[int] = field(default_factory=list)
    succs: list[int] = field(default_factory=list)
    nodes: list[Node] = field(default_factory=list)
    template: Pool | None = None

    def alive(self) -> list[Node]:
        return [n for n in self.nodes if n.pruned is None]


@dataclass(eq=False)
class Graph:
    """A GLORIA graph: pools in topological order, nodes, edges, and ``weigh``, the
    weight of any two nodes of consecutive pools (the cost model), for plans whose
    edges were never built.

    The edges are kept as the builder makes them, a class of a preceding pool's nodes
    joining a node at once (:meth:`join`), with a weight per kind of node: the graph of
    200 rideshare queries has 400,000 edges and 70,000 joins. :attr:`edges` and
    :attr:`incoming` show them one by one, in the order they were made."""

    pools: list[GraphPool] = field(default_factory=list)
    nodes: list[Node] = field(default_factory=list)
    weigh: Callable[[Node, Node], float] | None = None
    operations: int = 0  # edges and nodes the path search touched
    plans: int = 0  # plan nodes made
    bundles: list[Bundle] = field(default_factory=list, repr=False)  # in the order made
    into: dict[int, list[Bundle]] = field(default_factory=dict, repr=False)  # per target
    # per target with many bundles (an end node), its bundles by source pool: to find one
    indexed: dict[int, dict[int, list[Bundle]]] = field(default_factory=dict, repr=False)
    count: int = 0  # edges

    def add_pool(self, name: str, kind: str, preds: Sequence[int] = ()) -> GraphPool:
        pool = GraphPool(len(self.pools), name, kind, list(preds))
        self.pools.append(pool)
        for p in preds:
            self.pools[p].succs.append(pool.index)
        return pool

    def add_node(
        self,
        pool: int,
        qsets: Sequence[QSet] = (),
        kind: str = "plan",
        own: float = 0.0,
        how: str = "",
        name: str = "",
    ) -> Node:
        node = Node(len(self.nodes), pool, tuple(qsets), kind, own, how)
        if kind == "plan":
            self.plans += 1
        node.name = name or (f"n{self.plans}" if kind == "plan" else self.pools[pool].name)
        self.nodes.append(node)
        self.pools[pool].nodes.append(node)
        return node

    def add_edge(self, source: Node, target: Node, weight: float) -> Edge:
        """The edge from ``source`` to ``target``, made with ``weight`` if it is new."""
        found = self.find(source, target)
        if found is None:
            self.join(Sources([source]), target, [weight])
            found = weight
        return Edge(source, target, found, Graph.pruned(source, target))

    def join(self, sources: Sources, target: Node, weights: Sequence[float]) -> None:
        """An edge from each of ``sources`` to ``target``, none of them in the graph yet,
        weighing ``weights[k]`` for a source of kind k (``weights[0]`` for all if the
        sources have no kinds)."""
        bundle = Bundle(sources, target, weights)
        self.bundles.append(bundle)
        into = self.into.get(target.index)
        if into is None:
            self.into[target.index] = [bundle]
        else:
            into.append(bundle)
            if len(into) > _INDEXED:
                self.indexed.pop(target.index, None)
        self.count += len(sources.nodes)

    def find(self, source: Node, target: Node) -> float | None:
        """The weight of the edge from ``source`` to ``target``; None: there is none."""
        bundles = self.into.get(target.index)
        if bundles is None:
            return None
        pool = source.pool
        if len(bundles) > _INDEXED:
            index = self.indexed.get(target.index)
            if index is None:
                index = self.indexed[target.index] = {}
                for bundle in bundles:
                    index.setdefault(bundle.sources.pool, []).append(bundle)
            bundles = index.get(pool, [])
        for bundle in bundles:
            sources = bundle.sources
            if sources.pool != pool:
                continue
            at = sources.at
            if at is None:
                at = sources.locate()
            i = at.get(source.index)
            if i is not None:
                kind = sources.kind
                return bundle.weights[0 if kind is None else kind[i]]
        return None

    @staticmethod
    def pruned(source: Node, target: Node) -> bool:
        """Whether edge pruning dropped the edge (Lemma 5.8)."""
        kept = target.kept
        return kept is not None and kept.get(source.pool) is not source

    def weight(self, source: Node, target: Node) -> float:
        found = self.find(source, target)
        if found is not None:
            return found
        return INF if self.weigh is None else self.weigh(source, target)

    @property
    def edges(self) -> _Edges:
        """Every edge, keyed by its ends' indices, in the order they were made."""
        return _Edges(self)

    @property
    def incoming(self) -> _Incoming:
        """Per node index, the edges into it, in the order they were made."""
        return _Incoming(self)

    def ways_in(self, node: Node) -> int:
        """The edges into the node."""
        return sum(len(b.sources.nodes) for b in self.into.get(node.index, ()))

    def alive(self) -> list[Node]:
        return [n for n in self.nodes if n.pruned is None]

    def alive_edges(self) -> list[Edge]:
        return [
            e
            for e in self.edges.values()
            if not e.pruned and e.source.pruned is None and e.target.pruned is None
        ]

    def components(self) -> list[list[int]]:
        """The connected parts (pool indices, sorted), in pool order."""
        seen: set[int] = set()
        out = []
        for p in range(len(self.pools)):
            if p in seen:
                continue
            part, stack = [], [p]
            seen.add(p)
            while stack:
                x = stack.pop()
                part.append(x)
                for y in self.pools[x].preds + self.pools[x].succs:
                    if y not in seen:
                        seen.add(y)
                        stack.append(y)
            out.append(sorted(part))
        return out


class _Edges(Mapping[tuple[int, int], Edge]):
    """The graph's edges as a mapping (source index, target index) -> :class:`Edge`."""

    def __init__(self, graph: Graph) -> None:
        self.graph = graph

    def __len__(self) -> int:
        return self.graph.count

    def __iter__(self) -> Iterator[tuple[int, int]]:
        for bundle in self.graph.bundles:
            b = bundle.target.index
            for source in bundle.sources.nodes:
                yield source.index, b

    def __getitem__(self, key: tuple[int, int]) -> Edge:
        nodes = self.graph.nodes
        a, b = key
        if not (0 <= a < len(nodes) and 0 <= b < len(nodes)):
            raise KeyError(key)
        weight = self.graph.find(nodes[a], nodes[b])
        if weight is None:
            raise KeyError(key)
        return Edge(nodes[a], nodes[b], weight, Graph.pruned(nodes[a], nodes[b]))

    def values(self) -> Iterator[Edge]:  # type: ignore[override]
        for bundle in self.graph.bundles:
            yield from bundle.edges()

    def items(self) -> Iterator[tuple[tuple[int, int], Edge]]:  # type: ignore[override]
        for edge in self.values():
            yield (edge.source.index, edge.target.index), edge


class _Incoming(Mapping[int, list[Edge]]):
    """The edges into each node, as a mapping node index -> its edges."""

    def __init__(self, graph: Graph) -> None:
        self.graph = graph

    def __len__(self) -> int:
        return len(self.graph.into)

    def __iter__(self) -> Iterator[int]:
        return iter(self.graph.into)

    def __getitem__(self, index: int) -> list[Edge]:
        return [e for bundle in self.graph.into[index] for e in bundle.edges()]


# ----------------------------------------------------------------------------- distances


def distance_from_starts(
    graph: Graph, node: Node, known: dict[tuple[int, int], tuple[float, int]] | None = None
) -> None:
    """Eq. 22 (plus the node's own weight, Eq. 24): per preceding pool the lightest
    way in over the surviving edges, with its back-pointer (of two as light, the edge
    made first). ``known``: the lightest way through each bundle's sources and weights
    already found, for nodes of one pool (their sources' d_s stay as they are)."""
    pool = graph.pools[node.pool]
    if pool.kind == "start":
        node.d_s = 0.0
        return
    best: dict[int, float] = {}
    back: dict[int, Node] = {}
    kept = node.kept
    touched = 0
    for bundle in graph.into.get(node.index, ()):
        sources = bundle.sources
        nodes = sources.nodes
        touched += len(nodes)
        p = sources.pool
        if kept is not None:  # (edge pruning left one edge per preceding pool)
            source = kept.get(p)
            if source is None or source.pruned is not None:
                continue
            at = sources.at
            i = (sources.locate() if at is None else at).get(source.index)
            if i is None:
                continue
            kind = sources.kind
            value = source.d_s + bundle.weights[0 if kind is None else kind[i]]
        elif len(nodes) == 1:  # (a start node's edge, or one made alone)
            source = nodes[0]
            if source.pruned is not None:
                continue
            value = source.d_s + bundle.weight(0)
        else:
            key = (id(sources), id(bundle.weights))
            found = None if known is None else known.get(key)
            if found is None:
                found = _lightest(bundle)
                if known is not None:
                    known[key] = found
            value, i = found
            if i < 0:
                continue  # (no surviving source)
            source = nodes[i]
        old = best.get(p)
        if old is None or value < old:
            best[p] = value
            back[p] = source
    graph.operations += touched
    if len(best) < len(pool.preds):
        node.d_s = INF  # (a preceding pool it has no way in from)
        node.back = {}
        return
    node.d_s = node.own + sum(best.values())
    node.back = back


def _lightest(bundle: Bundle) -> tuple[float, int]:
    """The least d_s + weight over the bundle's surviving sources and the first source
    that gives it (-1: none survives)."""
    nodes = bundle.sources.nodes
    kind = bundle.sources.kind
    weights = bundle.weights
    if kind is None:
        w = weights[0]
        values = [s.d_s + w if s.pruned is None else INF for s in nodes]
    else:
        values = [
            s.d_s + weights[k] if s.pruned is None else INF
            for s, k in zip(nodes, kind, strict=True)
        ]
    least = min(values)
    if least < INF:
        return least, values.index(least)
    for i, s in enumerate(nodes):
        if s.pruned is None:
            return INF, i
    return INF, -1


def prune_edges(graph: Graph, pool: GraphPool) -> None:
    """Edge Pruning Principle (Lemma 5.8): of a node's edges from one preceding pool,
    only the one that gives its d_s stays (the node keeps its back-pointers as
    :attr:`Node.kept`, and every other edge into it is pruned)."""
    for node in pool.nodes:
        node.kept = node.back


NODE_PRUNES = ("safe", "paper")


def prune_nodes(
    graph: Graph,
    pool: GraphPool,
    rates: Rates,
    cost: CostModel | None = None,
    rule: str = "safe",
    template: GloriaTemplate | None = None,
) -> None:
    """Node Pruning Principle (Def. 5.9, Lemma 5.11) as the spec resolves it (A9):
    n_m goes if a node with the same Q-sets uses, per Q-set, a label at most as frequent
    (non-shared only against non-shared), some label differs, and its d_s is strictly
    smaller. The all-non-shared node is comparable with no other node.

    ``rule="safe"`` (the default) also asks that n_k's d_s stay smaller with the next
    propagation's difference added: Lemma 5.11 argues that rarer labels make every later
    edge lighter, which fails for the next propagation when n_m's label is the type it
    propagates from, whose expressions have length 1 (spec A9). The difference is what
    ``cost`` charges, per Q-set, for propagating from the pool's source with n_k's label
    beyond n_m's; for a Kleene unit, from its exit, once per succeeding pool the Q-set's
    queries go on to (the ``template``'s pools), since a Q-set split there pays it in each.
    Tables 3-5 decide the same (n5: 70 + 40 < 165; n10: 159 + 48 < 279; Table 4's P2:
    115 + 40 < 270). ``rule="paper"`` is the spec's rule alone."""
    if rule not in NODE_PRUNES:
        raise ValueError(f"unknown node pruning '{rule}': use one of {', '.join(NODE_PRUNES)}")
    model: CostModel = cost or PaperCost()
    found = pool.template
    source: str | None = None
    if found is not None and rule == "safe":
        source = found.source if found.kind == SEQ else found.target
    groups: dict[tuple[tuple[str, ...], ...], list[Node]] = {}
    for node in pool.alive():
        groups.setdefault(tuple(s.queries for s in node.qsets), []).append(node)
    for group in groups.values():
        if len(group) < 2:
            continue
        for m in group:
            for k in group:
                if k is m:
                    continue
                extra = _margin(k, m, rates, model, source, found, template)
                if extra is not None and k.d_s + extra < m.d_s:
                    m.pruned = f"by {k.name} (node pruning)"
                    break


def _margin(
    k: Node,
    m: Node,
    rates: Rates,
    cost: CostModel,
    source: str | None,
    pool: Pool | None,
    template: GloriaTemplate | None,
) -> float | None:
    """None when k's labels are not all at most as frequent as m's (one differing);
    else how much more k's next propagation can cost (0 without ``source``)."""
    differ = False
    extra = 0.0
    for a, b in zip(k.qsets, m.qsets, strict=True):
        if (a.label is None) != (b.label is None):
            return None
        if a.label is None or b.label is None or a.label == b.label:
            continue
        if rates[a.label] > rates[b.label]:
            return None
        differ = True
        if source is None:
            continue
        more = max(0.0, cost.share(rates, source, a.label) - cost.share(rates, source, b.label))
        times = 1
        if pool is not None and pool.kind == KLEENE and template is not None:
            names = set(a.queries)
            times = sum(1 for p in pool.succs if names & template.pools[p].queries)
        extra += more * times
    return extra if differ else None


# ----------------------------------------------------------------------------- building


def bell(m: int) -> int:
    """Eq. 1: B_m, the number of partitions of m queries into Q-sets, as the sum of the
    Stirling numbers S(m, n) of the second kind."""
    stirling = [[0] * (m + 1) for _ in range(m + 1)]
    stirling[0][0] = 1
    for i in range(1, m + 1):
        for n in range(1, i + 1):
            stirling[i][n] = n * stirling[i - 1][n] + stirling[i - 1][n - 1]
    return sum(stirling[m][n] for n in range(m + 1)) if m else 1


def set_partitions(items: Sequence[T]) -> Iterator[list[list[T]]]:
    """Every partition of ``items`` into blocks (B_len(items) of them), in a fixed order."""
    if not items:
        yield []
        return
    first, rest = items[0], items[1:]
    for part in set_partitions(rest):
        yield [[first], *part]
        for i in range(len(part)):
            yield [*part[:i], [first, *part[i]], *part[i + 1 :]]


def generate(
    items: Sequence[QSet], at: str, rates: Rates, mode: str, merge: str, local: str
) -> Iterator[tuple[str, tuple[QSet, ...]]]:
    """The candidate plans of a pool from the Q-sets arriving at its source type ``at``
    (section 5.1, spec 2.9), each with how it was made: ``reuse`` (NGP 1), ``local``
    (NGP 2), ``merge`` (NGP 3) and ``merge values`` (spec A10)."""
    shared = [s for s in items if s.label is not None]
    values = [s for s in items if s.label is None]
    yield "reuse", tuple(sorted(items))
    if mode == "none":
        return
    eligible = [s for s in shared if local == "any" or rates[at] < rates[s.label or at]]
    variants: list[list[QSet]] = [[]]  # the relabelled choices of the shared Q-sets
    for size in range(1, len(eligible) + 1):
        for subset in itertools.combinations(eligible, size):
            variants.append(list(subset))
    for variant in variants[1:]:
        relabel = [QSet(s.queries, at) if s in variant else s for s in items]
        yield "local", tuple(sorted(relabel))
    if len(items) >= 2:
        yield "merge", (qset([q for s in items for q in s.queries], at),)
    if merge == "values" and len(values) >= 2 and shared:
        merged = qset([q for s in values for q in s.queries], at)
        for variant in variants:
            kept = [QSet(s.queries, at) if s in variant else s for s in shared]
            yield "merge values", tuple(sorted([*kept, merged]))


def full_space(pool: Pool, arriving: Mapping[str, QSet]) -> Iterator[tuple[str, tuple[QSet, ...]]]:
    """Every plan of Def. 2.6 for a SEQ pool (the exhaustive oracle): every partition of
    its queries, a block labelled with the source type, or with its arriving label when
    it lies inside one arriving Q-set; a single query also non-shared."""
    at = pool.source
    for blocks in set_partitions(sorted(pool.queries)):
        options = []
        for block in blocks:
            names = [str(q) for q in block]
            came = {arriving.get(q) for q in names}
            labels: list[str | None] = []
            if len(names) == 1:
                labels.append(None)
            inherit = next(iter(came)) if len(came) == 1 else None
            if inherit is not None and inherit.label is not None:
                labels.append(inherit.label)
            if len(names) > 1 or (inherit is not None and inherit.label is not None):
                labels.append(at)
            options.append([qset(names, lab) for lab in dict.fromkeys(labels)])
        for pick in itertools.product(*options):
            yield "any", tuple(sorted(pick))


@dataclass
class Built:
    """A built graph with what it was built from."""

    graph: Graph
    template: GloriaTemplate
    pool_of: dict[int, int]  # template pool -> graph pool
    mode: str
    built: int  # nodes generated in all


class OverBudget(Exception):
    """The graph's construction passed its work limit (in the pool it names)."""


def build_graph(
    template: GloriaTemplate,
    rates: Rates | Mapping[tuple[object, ...], Rates],
    cost: CostModel | None = None,
    *,
    mode: str = "gloria",
    merge: str = "values",
    local: str = "rarer",
    node_prune: str = "safe",
    limit: int | None = None,
) -> Built:
    """The GLORIA graph of the template (section 5), pruned progressively in mode
    ``gloria``; ``noprune`` builds everything NGP 1-3 give without NGP 2's frequency
    condition and prunes nothing; ``greedy`` keeps one node per pool (section 8.1, the
    authors' rule, spec A17: Reuse when the arriving plan has one shared Q-set, else the
    node of least d_s); ``none`` only the non-shared plans; ``exhaustive`` every plan
    (:func:`full_space`).

    ``node_prune``: ``paper`` applies node pruning in every pool as the spec resolves it
    (A9); ``safe`` (the default) adds the next propagation's margin
    (:func:`prune_nodes`) and prunes no nodes in a pool below a *branch point* (a pool
    with a choice whose trends go on more than one way): there the d_s of a pool's nodes
    assume different nodes of that pool, so node pruning could drop the one node that
    fits the choice best for the other branch (spec A11). On 1,500 random workloads with
    Kleene units and branches, GLORIA's plan cost more than NoPrune's 10 times with
    ``paper`` and never with ``safe``.

    ``limit``: raise :class:`OverBudget` once the construction has tried more than this
    many combinations of predecessor nodes and weighed more than this many edges
    together (a count, so every process that plans the same workload stops at the same
    place). A pool is built from every combination of what its predecessors' live nodes
    bring it, and where pools with many live nodes meet (below branch points, where
    ``safe`` prunes no nodes) those multiply. Every edge made counts as weighed, also
    where edges that read the same of their ends share one weighing (the kinds of
    :func:`_arrival_classes`)."""
    if mode not in MODES:
        raise ValueError(f"unknown mode '{mode}': use one of {', '.join(MODES)}")
    if merge not in MERGES:
        raise ValueError(f"unknown merge '{merge}': use one of {', '.join(MERGES)}")
    if node_prune not in NODE_PRUNES:
        raise ValueError(
            f"unknown node pruning '{node_prune}': use one of {', '.join(NODE_PRUNES)}"
        )
    if local not in LOCALS:
        raise ValueError(f"unknown local '{local}': use one of {', '.join(LOCALS)}")
    model: CostModel = cost or PaperCost()
    if mode == "noprune":
        local = "any"
    graph = Graph()
    pool_of: dict[int, int] = {}

    queries = {q.name: q for q in template.queries}
    weighed: dict[int, Rates] = {}

    def rates_of(pool: Pool) -> Rates:
        found = weighed.get(pool.index)
        if found is None:
            mine = rates.get(pool.signature)  # type: ignore[call-overload]
            given = mine if isinstance(mine, Mapping) else rates
            found = weighed[pool.index] = pool_rates(pool, queries, given, first_types)  # type: ignore[arg-type]
        return found

    first_types: dict[str, str] = {}  # each query's start type (the kernel's START groups)
    for q in template.queries:
        mine = rates.get(q.signature)  # type: ignore[call-overload]
        given = mine if isinstance(mine, Mapping) else rates
        found_shape = query_shape(q)
        first_types[q.name] = found_shape.start
        for t in found_shape.types:
            if t not in given:
                known = ", ".join(sorted(k for k in given if isinstance(k, str))) or "none"
                raise ValueError(
                    f"no rate for event type '{t}' of query {q.name}: rates are given for "
                    f"{known}; pass one per type (events per window and partition)"
                )
    starts: dict[str, Node] = {}
    for type_ in sorted(template.starts()):
        start_pool = graph.add_pool(f"start {type_}", "start")
        starts[type_] = graph.add_node(start_pool.index, kind="start")
        starts[type_].d_s = 0.0

    def weigh(a: Node, b: Node) -> float:
        pa, pb = graph.pools[a.pool], graph.pools[b.pool]
        if pa.kind == "start":
            assert pb.template is not None
            t = pb.template
            return len(t.starts) * model.start(rates_of(t), t.source)
        assert pa.template is not None
        return edge_weight(pa.template, a, pb.template, b, rates_of(pa.template), model)

    graph.weigh = weigh
    built = 0
    work = 0  # combinations tried and edges weighed (``limit``)
    below: dict[int, bool] = {}  # a pool below a branch point: node pruning is unsafe there
    for pool in template.pools:
        preds = [pool_of[p] for p in pool.preds]
        if pool.starts:
            preds.append(starts[pool.source].pool)
        gpool = graph.add_pool(pool.name(), pool.kind, sorted(preds))
        gpool.template = pool
        pool_of[pool.index] = gpool.index
        r = rates_of(pool)
        found: dict[tuple[QSet, ...], Node] = {}
        parents = [graph.pools[pool_of[p]].alive() for p in pool.preds]
        # predecessors' nodes that bring this pool the same Q-sets (cut to its queries)
        # give it the same candidates: one combination per class, edges from every member
        # (the queries each predecessor shares with this pool, sorted)
        common = [sorted(pool.queries & template.pools[p].queries) for p in pool.preds]
        amongs = [frozenset(names) for names in common]
        arrivals = [
            _arrival_classes(pool, nodes, names)
            for nodes, names in zip(parents, common, strict=True)
        ]
        classes = [[same for _, same, _, _ in c] for c in arrivals]
        joining = [
            [Sources(same, kind if len(firsts) > 1 else None) for _, same, kind, firsts in c]
            for c in arrivals
        ]
        # per class, its kinds' edge weights into a node, by what they read of the node
        # (per predecessor what a node reads, one object per value: keyed by identity)
        weighed_in: dict[tuple[int, int, int], list[float]] = {}
        reads: dict[int, list[tuple[QSet, ...]]] = {}  # per node, per predecessor
        same_reads: dict[tuple[QSet, ...], tuple[QSet, ...]] = {}
        joined: set[tuple[int, int, int]] = set()  # (node, predecessor, class)
        from_start = Sources([starts[pool.source]]) if pool.starts else None
        alone = [qset([q], None) for q in sorted(pool.starts)]  # (their singletons)
        for picked in itertools.product(*(range(len(c)) for c in classes)):
            work += 1
            if limit is not None and work > limit:
                raise OverBudget(pool.name())
            brought = [s for i, c in enumerate(picked) for s in arrivals[i][c][0]]
            for how, qsets in _candidates(pool, brought, r, mode, merge, local, alone):
                node = found.get(qsets)
                if node is None:
                    own = 0.0
                    if pool.kind == KLEENE and how == "carry":
                        assert pool.unit is not None
                        own = sum(model.cycle(r, pool.unit, x.label, len(x.queries)) for x in qsets)
                    elif pool.kind == KLEENE:
                        assert pool.unit is not None
                        label = qsets[0].label if qsets else None
                        own = model.cycle(r, pool.unit, label, len(pool.queries))
                    node = found[qsets] = graph.add_node(gpool.index, qsets, own=own, how=how)
                    built += 1
                    if from_start is not None:  # (a new node: no edge from it yet)
                        graph.join(from_start, node, [weigh(from_start.nodes[0], node)])
                sides = reads.get(node.index)
                if sides is None:
                    sides = reads[node.index] = [
                        same_reads.setdefault(side, side)
                        for side in map(_meeting, itertools.repeat(node), common, amongs)
                    ]
                for i, c in enumerate(picked):
                    # a class joins a node once, all its members at once: no edge twice
                    key = (node.index, i, c)
                    if key in joined:
                        continue
                    joined.add(key)
                    _, same, _, firsts = arrivals[i][c]
                    read = (i, c, id(sides[i]))
                    one = weighed_in.get(read)
                    if one is None:
                        one = weighed_in[read] = [weigh(x, node) for x in firsts]
                    graph.join(joining[i][c], node, one)
                    work += len(same)
            if mode == "greedy":
                break  # (one node per pool: one combination)
        lightest: dict[tuple[int, int], tuple[float, int]] = {}
        for node in gpool.nodes:
            distance_from_starts(graph, node, lightest)
        if mode == "greedy":
            _keep_one(gpool, combo_shared=_arriving_shared(pool, parents))
        elif mode == "gloria":
            prune_edges(graph, gpool)
            below[pool.index] = node_prune == "safe" and any(
                below[p]
                or (len(graph.pools[pool_of[p]].alive()) > 1 and _branches(template.pools[p]))
                for p in pool.preds
            )
            if not below[pool.index] or node_prune == "paper":
                prune_nodes(graph, gpool, r, model, node_prune, template)
    for type_, pools in sorted(template.ends().items()):
        end_pool = graph.add_pool(f"end {type_}", "end", sorted(pool_of[p] for p in pools))
        end = graph.add_node(end_pool.index, kind="end")
        for p in end_pool.preds:
            alive = graph.pools[p].alive()
            if alive:
                ends = [weigh(node, end) for node in alive]
                graph.join(Sources(alive, range(len(alive))), end, ends)
        distance_from_starts(graph, end)
    return Built(graph, template, pool_of, mode, built)


_Class = tuple[list[Node], list[int], list[Node]]  # nodes, their kinds, each kind's first


def _arrival_classes(
    pool: Pool, nodes: Sequence[Node], common: Sequence[str]
) -> list[tuple[tuple[QSet, ...], list[Node], list[int], list[Node]]]:
    """A predecessor's nodes grouped by what they bring the pool: their Q-sets cut to the
    pool's queries, in order, with their labels (what :func:`_candidates` reads).
    Classes in the order of their first node, each with those Q-sets and its nodes in
    their order. ``common``: the queries the predecessor shares with the pool, sorted.

    Each class also by what an edge into the pool weighs of its nodes (:func:`edge_weight`
    reads of its source only the Q-sets that meet the pool's queries, whole): per node
    the number of its kind, and the first node of each kind. The members of a class
    differ only outside the pool, or in how many queries their Q-sets hold, so one edge
    per kind is weighed where a class of thousands of nodes joins a node."""
    among = frozenset(common)
    if not nodes:
        return []
    if len(common) == len(nodes[0].member):  # (the pool has all the predecessor's queries)
        sides = [node.qsets for node in nodes]
    elif len(common) == 1:
        one = common[0]
        sides = [(node.member[one],) for node in nodes]
    elif len(common) == 2:  # (_meeting's, without a call per node)
        one, two = common
        pairs = [(m[one], m[two]) for m in [node.member for node in nodes]]
        sides = [
            (a,) if a is b else (a, b) if a.queries[0] < b.queries[0] else (b, a) for a, b in pairs
        ]
    else:
        sides = [_meeting(node, common, among) for node in nodes]
    # per class its nodes, their kinds and each kind's first node; per side its class
    # and kind (a side, the Q-sets a node brings whole, gives both)
    classes: dict[tuple[tuple[tuple[str, ...], str | None], ...], _Class] = {}
    seen: dict[tuple[QSet, ...], tuple[_Class, int]] = {}
    cuts: dict[tuple[str, ...], tuple[str, ...]] = {}  # (nodes share Q-sets' queries)
    for node, side in zip(nodes, sides, strict=True):
        got = seen.get(side)
        if got is None:
            key = []
            for s in side:
                mine = cuts.get(s.queries)
                if mine is None:
                    mine = cuts[s.queries] = tuple(q for q in s.queries if q in among)
                key.append((mine, s.label))
            found = classes.get(tuple(key))
            if found is None:
                found = classes[tuple(key)] = ([], [], [])
            got = (found, len(found[2]))
            seen[side] = got
            found[2].append(node)
        (same, kind, _), k = got
        same.append(node)
        kind.append(k)
    return [
        (tuple(QSet(mine, label) for mine, label in cut), same, kind, firsts)
        for cut, (same, kind, firsts) in classes.items()
    ]


def _meeting(node: Node, common: Sequence[str], among: frozenset[str]) -> tuple[QSet, ...]:
    """The node's Q-sets that hold a query of ``common`` (sorted; ``among`` as a set), in
    the node's order: all of them if ``common`` is all its queries; of one or two
    queries looked up (a node's Q-sets are sorted and hold no query twice: in the order
    of their first query); else the Q-sets scanned.

    As a key (:func:`_arrival_classes`' kinds, the weights of the edges into a node),
    what :func:`edge_weight` reads of the node on that side: those Q-sets, whole."""
    member = node.member
    if len(common) == len(member):
        return node.qsets
    if len(common) == 1:
        return (member[common[0]],)
    if len(common) == 2:
        a, b = member[common[0]], member[common[1]]
        if a is b:
            return (a,)
        return (a, b) if a.queries[0] < b.queries[0] else (b, a)
    return tuple(s for s in node.qsets if not among.isdisjoint(s.queries))


def _branches(pool: Pool) -> bool:
    """Trends leave the pool more than one way (several succeeding pools, or an end and
    a succeeding pool)."""
    return len(pool.succs) + (1 if pool.ends else 0) > 1


def _arriving_shared(pool: Pool, parents: Sequence[Sequence[Node]]) -> int:
    """How many shared Q-sets arrive at the pool from the (single) greedy parents."""
    count = 0
    for nodes in parents:
        for node in nodes[:1]:
            count += sum(
                1 for s in node.qsets if s.label is not None and set(s.queries) & pool.queries
            )
    return count


def _keep_one(pool: GraphPool, combo_shared: int) -> None:
    """Greedy: with one shared Q-set arriving, Reuse; otherwise the least d_s (ties to
    the plan with fewest Q-sets)."""
    nodes = pool.alive()
    if not nodes:
        return
    keep = nodes[0]  # (generated first: Reuse)
    if not (combo_shared == 1 and pool.kind == SEQ):
        # the least d_s; on a tie the plan that shares most (fewest Q-sets): at a start,
        # merging costs nothing yet, and Greedy shares aggressively (section 8.3)
        keep = min(nodes, key=lambda n: (n.d_s, len(n.qsets)))
    for n in nodes:
        if n is not keep:
            n.pruned = "greedy keeps one node"


def _candidates(
    pool: Pool,
    brought: Sequence[QSet],
    rates: Rates,
    mode: str,
    merge: str,
    local: str,
    alone: Sequence[QSet] = (),
) -> Iterator[tuple[str, tuple[QSet, ...]]]:
    """The pool's candidate plans from the Q-sets one combination of its predecessors'
    nodes brings it (cut to its queries, in their order: :func:`_arrival_classes`);
    ``alone``: the non-shared Q-sets of the queries that start at the pool, sorted, if
    the caller has them already.

    A Kleene unit's: its k + 2 cycles (section 6.1: every query shared with one of the
    unit's types as the label, or none), and, where Q-sets arrive with a label from
    before the unit, the ``carry`` cycle (trendagg's extension, spec A18): those Q-sets
    keep their labels round the cycle, the other queries non-shared. Lemma 6.1's
    all-or-nothing argument is about relabelling inside the cycle, which a carried label
    never does: the unit's events only propagate the arriving snapshots' entries. It is
    HAMLET's plan for a multi-type unit (Fig. 19's complex workload: the queries' values
    from their first types enter the unit at its frequent entry, per query, under any
    label of the unit's own). Not for a one-type unit ``E+``: a query left non-shared
    follows the hamlet plan, whose shared bursts are HAMLET's own for it (and faster on
    the compiled kernel: Fig. 19's simple workload)."""
    if pool.kind == KLEENE:
        assert pool.unit is not None
        if len(pool.queries) > 1 and mode != "none":
            for label in pool.unit.types:
                yield "cycle", (qset(pool.queries, label),)
        yield "cycle", tuple(qset([q], None) for q in sorted(pool.queries))
        carried = [x for x in brought if x.label is not None and x.label not in pool.unit.types]
        # (spec A18: the arriving snapshots, kept round it; not round a one-type E+, which
        # the hamlet plan that a query left non-shared follows shares in bursts)
        if carried and mode != "none" and len(pool.unit.types) > 1:
            kept = {q for x in carried for q in x.queries}
            rest = [qset([q], None) for q in sorted(pool.queries - kept)]
            yield "carry", tuple(sorted([*carried, *rest]))
        return
    if mode == "exhaustive" or merge == "subsets":
        yield from full_space(pool, {q: part for part in brought for q in part.queries})
    else:
        items = [*brought, *(alone or [qset([q], None) for q in sorted(pool.starts)])]
        yield from generate(items, pool.source, rates, mode, merge, local)


def edge_weight(
    pool: Pool, a: Node, succ: Pool | None, b: Node, rates: Rates, cost: CostModel
) -> float:
    """The cost of ``pool``'s target type for the queries ``a`` and ``b`` have in common
    (spec 2.1): propagation from the source type (a Kleene cycle already paid it), and
    an evaluation per shared query whose Q-set or label changes there. ``b`` may be an
    end node (``succ`` None): the queries that end here, weighed per ``cost.end``.

    A model that propagates where the kernel does (``cost.at_target``, the kernel's)
    charges a shared Q-set's propagation at the target instead, once for the Q-set
    however its queries split there (split among the edges by the queries that go on
    with its label; the kernel holds a shared Q-set's last type once), a snapshot
    where ``b`` takes one at the target, and a whole Q-set that ends here
    :meth:`~trendagg.optimizer.gloria_template.CostModel.finish`."""
    common = pool.ends if succ is None else pool.queries & succ.queries
    weight, shared = _nonshared(pool, a, common, rates, cost)
    if cost.at_target:
        return weight + _kernel_shared(pool, shared, common, succ, b, rates, cost)
    source, target = pool.source, pool.target
    for s, part in shared:
        assert s.label is not None
        if pool.kind == SEQ and (succ is not None or cost.end == "prop_eval"):
            weight += cost.share(rates, source, s.label) * len(part) / len(s.queries)
        for q in part:
            if not _goes_on(s, q, succ, b):
                weight += cost.evaluate(rates, target, s.label)
    return weight


def _nonshared(
    pool: Pool, a: Node, common: frozenset[str], rates: Rates, cost: CostModel
) -> tuple[float, list[tuple[QSet, list[str]]]]:
    """What :func:`edge_weight` charges ``a``'s non-shared queries among ``common``
    (those it has in common with the next pool, or that end here), and ``a``'s shared
    Q-sets with those of their queries."""
    weight = 0.0
    shared = []
    for s in a.qsets:
        part = [q for q in s.queries if q in common]
        if not part:
            continue
        if s.label is not None:
            shared.append((s, part))
        elif pool.kind == SEQ:
            weight += len(part) * cost.nonshared(rates, pool.source, pool.target)
    return weight, shared


def _goes_on(s: QSet, q: str, succ: Pool | None, b: Node) -> bool:
    """Whether query q of shared Q-set s goes on in ``b`` from s's snapshots (else it
    evaluates them at the pool's target)."""
    then = b.member.get(q) if succ is not None and _reads_on(succ, b) else None
    return then is not None and then.label == s.label and set(then.queries) <= set(s.queries)


def _reads_on(succ: Pool, b: Node) -> bool:
    """Whether ``b``'s Q-sets go on from the snapshots that arrive in them: a SEQ
    pool's, or a Kleene unit's that keeps its arriving labels (``carry``, spec A18); a
    unit shared with a label of its own relabels every query that enters it."""
    return succ.kind == SEQ or b.how == "carry"


def _kernel_shared(
    pool: Pool,
    shared: list[tuple[QSet, list[str]]],
    common: frozenset[str],
    succ: Pool | None,
    b: Node,
    rates: Rates,
    cost: CostModel,
) -> float:
    """:func:`edge_weight`'s shared part where propagation is charged at the target (see
    there)."""
    target = pool.target
    weight = 0.0
    for s, part in shared:
        assert s.label is not None
        if succ is None:
            if len(part) == len(s.queries):  # (the whole Q-set ends here)
                weight += cost.finish(rates, target, s.label, len(part))
            else:
                weight += len(part) * cost.evaluate(rates, target, s.label)
            continue
        on = 0
        for q in part:
            if _goes_on(s, q, succ, b):
                on += 1
            else:
                weight += cost.evaluate(rates, target, s.label)
        # (a cycle propagates its own types, the entry and the exit among them)
        if on and pool.kind == SEQ and succ.kind == SEQ and s.label != target:
            weight += cost.share(rates, target, s.label) * on / len(s.queries)
    if succ is not None and succ.kind == SEQ:
        for t in b.qsets:  # snapshots that b's Q-sets take at the target
            if t.label == target:
                mine = sum(1 for q in t.queries if q in common)
                weight += cost.share(rates, target, target) * mine / len(t.queries)
    return weight


__all__ = [
    "OverBudget",
    "INF",
    "LOCALS",
    "MERGES",
    "MODES",
    "NODE_PRUNES",
    "Built",
    "Bundle",
    "Edge",
    "Graph",
    "Sources",
    "GraphPool",
    "Node",
    "QSet",
    "bell",
    "build_graph",
    "distance_from_starts",
    "full_space",
    "edge_weight",
    "generate",
    "plan_text",
    "prune_edges",
    "prune_nodes",
    "qset",
    "set_partitions",
]
