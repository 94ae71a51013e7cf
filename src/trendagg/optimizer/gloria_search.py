"""The path search of a GLORIA graph (section 5.3, Algorithms 1-3), and brute force.

:func:`path_search` is Algorithm 1 (GLORIA PATHSEARCH) on every connected part of the
graph, as the specification writes it (2.5): the distances from the starts (Eq. 22)
with one back-pointer per preceding pool; Case 1 (one end node: EDGEPRUNE it and
follow the back-pointers), Case 2 (every end node with one way in: the one path) and
Case 3 (several paths: the edges reversed and pruned so that each node lies on one
path, then the lightest, :func:`forest_search`). A plan's weight is the sum of its
distinct edges and its nodes' own weights (:func:`plan_cost`, Lemma 4.4), never d_s
plus a distance to the ends, which would count twice a pool that two branches share
(spec A11). The back-pointers are exact on in-trees (each pool feeding at most one
other); elsewhere the search is exact too while the pools with a choice form a tree,
or become one once a few pools are fixed (up to ``CUT_LIMIT`` combinations of their
nodes); past that the result says that optimality is not proven.

:func:`brute_force` tries every path: the tests' oracle and the exhaustive baseline.
"""

from __future__ import annotations

import itertools
from collections import deque
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass

from trendagg.optimizer.gloria_graph import INF, Bundle, Graph, Node, distance_from_starts


@dataclass
class Search:
    """What the path search chose: a node per pool, its cost, Algorithm 1's case per
    connected part, the candidate plans (root nodes) it weighed, the nodes and edges it
    touched, and whether the result is the lightest path of the graph (spec A11)."""

    chosen: dict[int, Node]
    cost: float
    cases: list[int]
    candidates: int
    operations: int
    exact: bool


def closure(
    graph: Graph,
    node: Node,
    part: Sequence[int] = (),
    pointers: Mapping[int, Mapping[int, Node]] | None = None,
) -> dict[int, Node]:
    """GETPATHS for one node (Algorithm 3): the node, closed under its pointers (the
    back-pointers of Eq. 22, or ``pointers``: node index -> pool -> node); the first
    node chosen in a pool wins. A pool of ``part`` that no pointer reaches gets its node
    of least weight to the chosen neighbours, and the closure goes on from there."""
    chosen = {node.pool: node}
    queue = deque([node])
    while True:
        while queue:
            x = queue.popleft()
            graph.operations += 1
            follow = x.back if pointers is None else pointers.get(x.index, {})
            for p, y in follow.items():
                if p not in chosen:
                    chosen[p] = y
                    queue.append(y)
        missing = [p for p in part if p not in chosen]
        if not missing:
            return chosen
        nodes = graph.pools[missing[0]].alive()
        if not nodes:
            return chosen
        pick = _lightest_local(graph, nodes, chosen)
        chosen[pick.pool] = pick
        queue.append(pick)


CUT_LIMIT = 1024  # node combinations of the cut pools that forest_search tries


def forest_search(graph: Graph, part: Sequence[int]) -> tuple[dict[int, Node], int, bool]:
    """Case 3 of Algorithm 1 (lines 17-24), as the spec recommends it (2.5): with the
    edges reversed, each node keeps per neighbouring pool only its lightest way on
    (EDGEPRUNE on every node), so that each node lies on one path, and the lightest of
    the root's paths wins (GETPATHS).

    A pool with one surviving node (a start or end node, a query alone) fixes its node
    and couples nothing, so the pools with a choice are searched per connected group,
    each rooted at its first pool: exact when the group is a tree. Where pools branch
    and join again (spec A11), a few pools are fixed first, each combination of their
    nodes in turn (the spec's "re-run the DP with that pool fixed"), so that the rest is
    a tree; past ``CUT_LIMIT`` combinations the plan of a spanning tree is improved one
    pool at a time instead, and the third value, whether the result is exact, is False.
    Only edges of the graph are ways on (the paths of Def. 4.3); those that edge pruning
    dropped count, since they lost as a way into their target, not as a way on."""
    alive = {p: graph.pools[p].alive() for p in part}
    fixed = {p: nodes[0] for p, nodes in alive.items() if len(nodes) == 1}
    free = [p for p in part if p not in fixed]
    cut = _cut(graph, free)
    rest = [p for p in free if p not in cut]
    combinations = 1
    for p in cut:
        combinations *= len(alive[p])
    if combinations > CUT_LIMIT:
        chosen = dict(fixed)
        roots = _tree_search(graph, _Forest(graph, free), chosen)
        _improve(graph, chosen, free)
        return chosen, roots, False
    best: dict[int, Node] = {}
    best_cost = INF
    roots = 0
    forest = _Forest(graph, rest)  # (the same trees for every combination)
    for combo in itertools.product(*(alive[p] for p in cut)):
        chosen = dict(fixed)
        chosen.update(zip(cut, combo, strict=True))
        roots += _tree_search(graph, forest, chosen)
        for p in part:  # (a pool no edge reaches: its lightest node)
            if p not in chosen:
                chosen[p] = _lightest_local(graph, alive[p], chosen)
        cost = plan_cost(graph, chosen)
        if cost < best_cost or not best:
            best, best_cost = chosen, cost
    return best, roots, True


def _cut(graph: Graph, pools: Sequence[int]) -> list[int]:
    """Pools whose removal leaves no cycle among the others (a feedback vertex set,
    greedily: the pool of most neighbours in what remains after dropping leaves)."""
    inside = set(pools)
    near = {
        p: {q for q in graph.pools[p].preds + graph.pools[p].succs if q in inside} for p in pools
    }
    cut: list[int] = []
    while True:
        core = set(inside)
        changed = True
        while changed:  # the 2-core: drop pools with at most one neighbour left
            changed = False
            for p in sorted(core):
                if len(near[p] & core) <= 1:
                    core.discard(p)
                    changed = True
        if not core:
            return cut
        pick = max(sorted(core), key=lambda p: len(near[p] & core))
        cut.append(pick)
        inside.discard(pick)


_Pointers = dict[int, dict[int, Node]]  # node index -> pool -> node (GETPATHS' pointers)
_Key = tuple[Node | None, ...]  # the nodes chosen in some pools (None: none yet)


_Way = tuple[Bundle, None] | tuple[list[Bundle], int]  # (see _Forest.ways)


class _Forest:
    """What the rooted DP over ``pools`` (:func:`_tree_search`) reads that no choice of
    the nodes around them changes, so that :func:`forest_search` works it out once for
    every combination of the cut pools' nodes, not once per combination.

    ``groups``: the connected groups of ``pools``, each in breadth-first order from its
    root (its first pool), with ``parent`` (a pool reached twice keeps its first way);
    ``ways``: per surviving node, its edges to the nodes of its pool's child pools, in
    the order of the graph's edges (of two ways on as light, the first wins);
    ``touched``: per group, its nodes' edges to surviving nodes, the operations the DP
    counts (one per edge of a node, as when it looked at each).

    A node's value is its own part (:func:`_local`: its weight and its edges to the
    chosen nodes of the pools ``around`` it outside ``pools``) plus its children's part
    (per child pool its lightest way on), which reads only the chosen nodes next to the
    subtrees below it (``under``). Each part is worked out once per choice of what it
    reads (``own``, ``down``, and ``known`` for their sum): a combination that changes a
    cut pool's node redoes only the pools whose subtree touches that pool, and of them
    the ways on only above it."""

    def __init__(self, graph: Graph, pools: Sequence[int]) -> None:
        inside = set(pools)
        self.alive = {p: graph.pools[p].alive() for p in pools}
        self.groups: list[list[int]] = []
        self.parent: dict[int, int | None] = {}
        for start in pools:
            if start in self.parent:
                continue
            self.parent[start] = None
            order = [start]
            for p in order:
                for q in graph.pools[p].preds + graph.pools[p].succs:
                    if q in inside and q not in self.parent:
                        self.parent[q] = p
                        order.append(q)
            self.groups.append(order)
        self.children = {p: 0 for p in pools}
        for above in self.parent.values():
            if above is not None:
                self.children[above] += 1
        # per surviving node, its ways on in the order of the graph's edges: a bundle of
        # edges into it from a child pool (k None), or, as a source of kind k, the edges
        # of its class to the child pool (one list per class, shared by its nodes)
        self.ways: dict[int, list[_Way]] = {}
        width = len(graph.pools)  # (a pair of pools (p, q) as p * width + q)
        downward = {p * width + q for q, p in self.parent.items() if p is not None}
        links = [0] * width  # per pool: its surviving nodes' edges to such nodes
        living: dict[int, int] = {}  # per Sources: its surviving nodes
        outward: dict[int, list[Bundle]] = {}  # per Sources: its bundles to a child pool
        for bundle in graph.bundles:
            b = bundle.target
            if b.pruned is not None:
                continue
            sources = bundle.sources
            n = living.get(id(sources))
            if n is None:
                n = living[id(sources)] = sum(1 for a in sources.nodes if a.pruned is None)
            if not n:
                continue
            links[sources.pool] += n
            links[b.pool] += n
            if sources.pool * width + b.pool in downward:
                group = outward.get(id(sources))
                if group is None:
                    group = outward[id(sources)] = []
                    kind = sources.kind
                    for i, a in enumerate(sources.nodes):
                        if a.pruned is None:
                            way = (group, 0 if kind is None else kind[i])
                            self.ways.setdefault(a.index, []).append(way)
                group.append(bundle)
            elif b.pool * width + sources.pool in downward:
                self.ways.setdefault(b.index, []).append((bundle, None))
        self.touched = [sum(links[p] for p in order) for order in self.groups]
        self.around: dict[int, tuple[int, ...]] = {}
        self.under: dict[int, tuple[int, ...]] = {}
        near: dict[int, set[int]] = {p: set() for p in pools}  # next to the subtree
        for order in self.groups:
            for p in reversed(order):
                pool = graph.pools[p]
                self.around[p] = tuple(
                    sorted({q for q in pool.preds + pool.succs if q not in inside})
                )
                self.under[p] = tuple(sorted(near[p]))
                near[p].update(self.around[p])
                above = self.parent[p]
                if above is not None:
                    near[above] |= near[p]
        self.own: dict[int, dict[_Key, dict[int, float]]] = {p: {} for p in pools}
        self.down: dict[int, dict[_Key, tuple[dict[int, float | None], _Pointers]]]
        self.down = {p: {} for p in pools}
        self.known: dict[int, dict[tuple[_Key, _Key], tuple[dict[int, float], _Pointers]]]
        self.known = {p: {} for p in pools}


def _tree_search(graph: Graph, forest: _Forest, chosen: dict[int, Node]) -> int:
    """The rooted DP over each connected group of the ``forest``'s pools (a forest,
    given the nodes already ``chosen`` around it), adding its choices to ``chosen``;
    returns the root nodes weighed. A pool reached twice (not a forest) keeps its first
    way. What the ``forest`` already knows for these chosen nodes is not worked out
    again; the operations count every edge as if it were."""
    roots = 0
    for order, touched in zip(forest.groups, forest.touched, strict=True):
        graph.operations += touched
        values: dict[int, dict[int, float]] = {}
        pointers: dict[int, _Pointers] = {}
        for p in reversed(order):
            own = tuple(chosen.get(q) for q in forest.around[p])
            under = tuple(chosen.get(q) for q in forest.under[p])
            found = forest.known[p].get((own, under))
            if found is None:
                local = forest.own[p].get(own)
                if local is None:
                    nodes = forest.alive[p]
                    local = forest.own[p][own] = dict(
                        zip([x.index for x in nodes], _locals(graph, nodes, chosen), strict=True)
                    )
                ways = forest.down[p].get(under)
                if ways is None:
                    ways = forest.down[p][under] = _ways_on(forest, p, values)
                sums, down = ways
                value: dict[int, float] = {}
                for x in forest.alive[p]:
                    more = sums[x.index]
                    value[x.index] = INF if more is None else local[x.index] + more
                found = forest.known[p][(own, under)] = (value, down)
            values[p], pointers[p] = found
        top = min(forest.alive[order[0]], key=lambda n: values[order[0]][n.index])
        roots += len(forest.alive[order[0]])
        chosen.update(closure(graph, top, order, _PoolPointers(graph, pointers)))
    return roots


def _ways_on(
    forest: _Forest, p: int, values: Mapping[int, Mapping[int, float]]
) -> tuple[dict[int, float | None], _Pointers]:
    """Per node of pool ``p``, the children's part of its value (per child pool the
    lightest way on, summed; None when a child pool has no way on) and its pointers."""
    sums: dict[int, float | None] = {}
    down: _Pointers = {}
    # the lightest way on per class and kind (of a node's class), or per class and
    # weights (of the classes that join a node; () when none of them survives)
    shared: dict[tuple[int, int], tuple[float, Node] | tuple[()]] = {}
    ways, children = forest.ways, forest.children[p]
    for x in forest.alive[p]:
        best: dict[int, tuple[float, Node]] = {}
        for way, k in ways.get(x.index, ()):
            if k is None:  # (nodes joined by one class with the same weights share it)
                assert isinstance(way, Bundle)  # (and a list of them otherwise)
                key = (id(way.sources), id(way.weights))
                found = shared.get(key)
                if found is None:
                    found = shared[key] = _lightest_in(way, values[way.sources.pool])
            else:
                assert isinstance(way, list)
                found = shared.get((id(way), k))
                if found is None:
                    found = shared[(id(way), k)] = _lightest_out(way, k, values)
            if not found:
                continue
            v, y = found
            if y.pool not in best or v < best[y.pool][0]:
                best[y.pool] = (v, y)
        complete = len(best) >= children
        sums[x.index] = sum([v for v, _ in best.values()]) if complete else None
        down[x.index] = {q: y for q, (_, y) in best.items()}
    return sums, down


def _lightest_in(bundle: Bundle, values: Mapping[int, float]) -> tuple[float, Node] | tuple[()]:
    """The lightest way on through a bundle of edges into the node (the first of as
    light ones), over its surviving sources (``()``: none survives)."""
    sources = bundle.sources
    weights, kind = bundle.weights, sources.kind
    best: tuple[float, Node] | tuple[()] = ()
    for i, y in enumerate(sources.nodes):
        if y.pruned is None:
            v = weights[0 if kind is None else kind[i]] + values[y.index]
            if not best or v < best[0]:
                best = (v, y)
    return best


def _lightest_out(
    group: Sequence[Bundle], k: int, values: Mapping[int, Mapping[int, float]]
) -> tuple[float, Node]:
    """The lightest way on over a class's edges to surviving targets, from a source of
    kind k (the first of as light ones)."""
    first = group[0].target
    best = (group[0].weights[k] + values[first.pool][first.index], first)
    for bundle in group[1:]:
        y = bundle.target
        v = bundle.weights[k] + values[y.pool][y.index]
        if v < best[0]:
            best = (v, y)
    return best


class _PoolPointers(Mapping[int, Mapping[int, Node]]):
    """One combination's pointers (node index -> pool -> node), kept per pool as
    :func:`_tree_search` found them, without copying them into one table."""

    def __init__(self, graph: Graph, pools: Mapping[int, _Pointers]) -> None:
        self.graph = graph
        self.pools = pools

    def __getitem__(self, index: int) -> Mapping[int, Node]:
        return self.pools[self.graph.nodes[index].pool][index]

    def __iter__(self) -> Iterator[int]:
        return (index for down in self.pools.values() for index in down)

    def __len__(self) -> int:
        return sum(len(down) for down in self.pools.values())


def _local(graph: Graph, x: Node, chosen: Mapping[int, Node]) -> float:
    """The node's own weight and its edges to the nodes chosen in neighbouring pools; a
    missing edge weighs infinity: no path goes that way (two plans that no node
    generation joins need not even fit: a label reused that the query never had)."""
    pool = graph.pools[x.pool]
    find = graph.find
    ins = [find(chosen[q], x) for q in pool.preds if q in chosen]
    w = x.own + sum([INF if f is None else f for f in ins])
    outs = [find(x, chosen[q]) for q in pool.succs if q in chosen]
    return w + sum([INF if f is None else f for f in outs])


def _locals(graph: Graph, nodes: Sequence[Node], chosen: Mapping[int, Node]) -> list[float]:
    """:func:`_local` of each of ``nodes`` (of one pool), summed the same way, with the
    weights of their edges to each chosen neighbour looked up for all of them at once."""
    if not nodes:
        return []
    pool = graph.pools[nodes[0].pool]
    into = graph.into
    ins: list[list[float]] = []
    for q in pool.preds:
        if q not in chosen:
            continue
        a = chosen[q]
        at: dict[int, int] = {}  # per Sources of the pool q: where a is (-1: not there)
        column = []
        for x in nodes:
            w = INF
            for bundle in into.get(x.index, ()):
                sources = bundle.sources
                if sources.pool != q:
                    continue
                i = at.get(id(sources))
                if i is None:
                    found = sources.position(a.index)
                    i = at[id(sources)] = -1 if found is None else found
                if i >= 0:
                    kind = sources.kind
                    w = bundle.weights[0 if kind is None else kind[i]]
                    break
            column.append(w)
        ins.append(column)
    outs: list[list[float]] = []
    for q in pool.succs:
        if q not in chosen:
            continue
        weights: dict[int, float] = {}  # node index -> its edge's weight (the first made)
        for bundle in into.get(chosen[q].index, ()):
            sources = bundle.sources
            if sources.pool != pool.index:
                continue
            kind = sources.kind
            if kind is None:
                w = bundle.weights[0]
                for n in sources.nodes:
                    weights.setdefault(n.index, w)
            else:
                ws = bundle.weights
                for n, k in zip(sources.nodes, kind, strict=True):
                    weights.setdefault(n.index, ws[k])
        outs.append([weights.get(x.index, INF) for x in nodes])
    before = list(zip(*ins, strict=True)) if ins else [()] * len(nodes)
    after = list(zip(*outs, strict=True)) if outs else [()] * len(nodes)
    return [(x.own + sum(b)) + sum(c) for x, b, c in zip(nodes, before, after, strict=True)]


def _lightest_local(graph: Graph, nodes: Sequence[Node], chosen: Mapping[int, Node]) -> Node:
    """The first of ``nodes`` (of one pool) of least :func:`_local`."""
    values = _locals(graph, nodes, chosen)
    return nodes[values.index(min(values))]


def _improve(graph: Graph, chosen: dict[int, Node], pools: Sequence[int]) -> None:
    """Replace one pool's node at a time by the one that lowers the plan's cost most,
    until none does. A pool whose node and neighbours' nodes are as when it last kept
    its node keeps it again (its nodes' weights read nothing else)."""
    kept: dict[int, tuple[Node | None, ...]] = {}
    changed = True
    while changed:
        changed = False
        for p in pools:
            pool = graph.pools[p]
            around = (chosen[p], *(chosen.get(q) for q in pool.preds + pool.succs))
            if kept.get(p) == around:
                continue
            now = _local(graph, chosen[p], chosen)
            nodes = pool.alive()
            values = _locals(graph, nodes, chosen)
            least = min(values)
            best = nodes[values.index(least)]
            if least < now - 1e-9 * max(1.0, abs(now)):
                chosen[p] = best
                changed = True
            else:
                kept[p] = around


def plan_cost(graph: Graph, chosen: Mapping[int, Node]) -> float:
    """A plan's weight (Lemma 4.4): its nodes' own weights and the weight of every pair
    of chosen nodes in consecutive pools, each counted once."""
    total = 0.0
    for p, node in chosen.items():
        total += node.own
        for q in graph.pools[p].succs:
            if q in chosen:
                total += graph.weight(node, chosen[q])
    return total


def _in_tree(graph: Graph, pools: Sequence[int]) -> bool:
    """Every pool but the start nodes' has at most one succeeding pool: the sub-paths
    Eq. 22 sums over share no pool with a choice, so d_s is exact (spec A11)."""
    return all(len(graph.pools[p].succs) <= 1 for p in pools if graph.pools[p].kind != "start")


def path_search(graph: Graph) -> Search:
    """Algorithm 1 (GLORIA PATHSEARCH) on every connected part of the graph."""
    graph.operations = 0
    chosen: dict[int, Node] = {}
    cases: list[int] = []
    candidates = 0
    exact = True
    for part in graph.components():
        for p in part:
            known: dict[tuple[int, int], tuple[float, int]] = {}
            for node in graph.pools[p].alive():
                distance_from_starts(graph, node, known)
        ends = [graph.pools[p] for p in part if graph.pools[p].kind == "end"]
        end_nodes = [n for pool in ends for n in pool.alive()]
        if len(end_nodes) == 1:
            cases.append(1)  # lines 2-6: EDGEPRUNE(endNode), its one path
        elif all(_ways_in(graph, n) == 1 for n in end_nodes):
            cases.append(2)  # lines 13-14: the one path
        else:
            cases.append(3)  # lines 17-24
        if cases[-1] < 3 and _in_tree(graph, part):
            # the back-pointers of Eq. 22 are one path, and the lightest (Lemma 5.8)
            found, weighed = closure(graph, end_nodes[0], part), 1
        else:
            found, weighed, tree = forest_search(graph, part)
            exact &= tree
        if len(found) != len(part):
            raise ValueError("the graph has no complete path (a pool without a way on)")
        chosen.update(found)
        candidates += weighed
    return Search(chosen, plan_cost(graph, chosen), cases, candidates, graph.operations, exact)


def _ways_in(graph: Graph, node: Node) -> int:
    """The node's surviving edges in: from a surviving source, not pruned."""
    count = 0
    for bundle in graph.into.get(node.index, ()):
        for a in bundle.sources.nodes:
            if a.pruned is None and not graph.pruned(a, node):
                count += 1
    return count


def brute_force(
    graph: Graph, limit: int = 1_000_000, bound: bool = True
) -> tuple[dict[int, Node], float, int]:
    """The lightest path by trying every one (the tests' oracle, and the exhaustive
    baseline over its graph): a surviving node per pool such that each has an edge
    (edge pruning's too, as in the search) from the node chosen in each preceding pool. Returns the path, its weight and the complete paths
    reached (all of them without ``bound``; with it, a partial path already as heavy
    as the best is dropped, which weights of at least 0 allow); ties go to the first
    path in pool and node order. More than ``limit`` paths raise ValueError."""
    pools = graph.pools
    best: dict[int, Node] = {}
    best_cost = INF
    tried = 0
    chosen: dict[int, Node] = {}

    def visit(i: int, cost: float) -> None:
        nonlocal best, best_cost, tried
        if i == len(pools):
            tried += 1
            if tried > limit:
                raise ValueError(f"more than {limit} paths: too large to enumerate")
            if cost < best_cost:
                best, best_cost = dict(chosen), cost
            return
        pool = pools[i]
        for node in pool.alive():
            step = node.own
            ok = True
            for p in pool.preds:
                weight = graph.find(chosen[p], node)
                if weight is None:
                    ok = False
                    break
                step += weight
            if ok and not (bound and cost + step >= best_cost):
                chosen[i] = node
                visit(i + 1, cost + step)
                del chosen[i]

    visit(0, 0.0)
    return best, best_cost, tried


__all__ = [
    "Search",
    "brute_force",
    "closure",
    "forest_search",
    "path_search",
    "plan_cost",
]
