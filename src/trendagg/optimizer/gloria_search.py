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
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from trendagg.optimizer.gloria_graph import INF, Edge, Graph, Node, distance_from_starts


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
        pick = min(nodes, key=lambda n: _local(graph, n, chosen))
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
    links: dict[int, list[Edge]] = {}
    for e in graph.edges.values():
        if e.source.pruned is None and e.target.pruned is None:
            links.setdefault(e.source.index, []).append(e)
            links.setdefault(e.target.index, []).append(e)
    cut = _cut(graph, free)
    rest = [p for p in free if p not in cut]
    combinations = 1
    for p in cut:
        combinations *= len(alive[p])
    if combinations > CUT_LIMIT:
        chosen = dict(fixed)
        roots = _tree_search(graph, free, chosen, links)
        _improve(graph, chosen, free)
        return chosen, roots, False
    best: dict[int, Node] = {}
    best_cost = INF
    roots = 0
    for combo in itertools.product(*(alive[p] for p in cut)):
        chosen = dict(fixed)
        chosen.update(zip(cut, combo, strict=True))
        roots += _tree_search(graph, rest, chosen, links)
        for p in part:  # (a pool no edge reaches: its lightest node)
            if p not in chosen:
                chosen[p] = min(alive[p], key=lambda n: _local(graph, n, chosen))
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


def _tree_search(
    graph: Graph, pools: Sequence[int], chosen: dict[int, Node], links: Mapping[int, list[Edge]]
) -> int:
    """The rooted DP over each connected group of ``pools`` (a forest, given the nodes
    already ``chosen`` around it), adding its choices to ``chosen``; returns the root
    nodes weighed. A pool reached twice (not a forest) keeps its first way."""
    inside = set(pools)
    seen: set[int] = set()
    roots = 0
    for start in pools:
        if start in seen:
            continue
        parent: dict[int, int | None] = {start: None}
        order = [start]
        seen.add(start)
        for p in order:
            for q in graph.pools[p].preds + graph.pools[p].succs:
                if q in inside and q not in parent:
                    parent[q] = p
                    seen.add(q)
                    order.append(q)
        value: dict[int, float] = {}
        down: dict[int, dict[int, Node]] = {}
        for p in reversed(order):
            children = sum(1 for q in parent if parent[q] == p)
            for x in graph.pools[p].alive():
                best: dict[int, tuple[float, Node]] = {}
                for e in links.get(x.index, ()):
                    graph.operations += 1
                    y = e.target if e.source is x else e.source
                    if y.pool == p or parent.get(y.pool) != p or y.index not in value:
                        continue
                    v = e.weight + value[y.index]
                    if y.pool not in best or v < best[y.pool][0]:
                        best[y.pool] = (v, y)
                value[x.index] = _local(graph, x, chosen)
                value[x.index] += sum(v for v, _ in best.values())
                if len(best) < children:
                    value[x.index] = INF
                down[x.index] = {q: y for q, (_, y) in best.items()}
        top = min(graph.pools[start].alive(), key=lambda n: value[n.index])
        roots += len(graph.pools[start].alive())
        chosen.update(closure(graph, top, order, down))
    return roots


def _local(graph: Graph, x: Node, chosen: Mapping[int, Node]) -> float:
    """The node's own weight and its edges to the nodes chosen in neighbouring pools; a
    missing edge weighs infinity: no path goes that way (two plans that no node
    generation joins need not even fit: a label reused that the query never had)."""
    pool = graph.pools[x.pool]

    def weight(a: Node, b: Node) -> float:
        edge = graph.edges.get((a.index, b.index))
        return INF if edge is None else edge.weight

    w = x.own + sum(weight(chosen[q], x) for q in pool.preds if q in chosen)
    return w + sum(weight(x, chosen[q]) for q in pool.succs if q in chosen)


def _improve(graph: Graph, chosen: dict[int, Node], pools: Sequence[int]) -> None:
    """Replace one pool's node at a time by the one that lowers the plan's cost most,
    until none does."""
    changed = True
    while changed:
        changed = False
        for p in pools:
            now = _local(graph, chosen[p], chosen)
            best = min(graph.pools[p].alive(), key=lambda x: _local(graph, x, chosen))
            if _local(graph, best, chosen) < now - 1e-9 * max(1.0, abs(now)):
                chosen[p] = best
                changed = True


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
            for node in graph.pools[p].alive():
                distance_from_starts(graph, node)
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
    return sum(
        1 for e in graph.incoming.get(node.index, ()) if not e.pruned and e.source.pruned is None
    )


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
                edge = graph.edges.get((chosen[p].index, node.index))
                if edge is None:
                    ok = False
                    break
                step += edge.weight
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
