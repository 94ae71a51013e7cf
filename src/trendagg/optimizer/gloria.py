"""GLORIA's sharing optimizer (Ma, Lei, Poppe, Rundensteiner): which queries share which
transition, and with snapshots of which event type.

GLORIA generalises HAMLET's sharing of one Kleene type ``E+`` to every transition of a
workload, SEQ and Kleene alike (``SEQ(A, B)+``, nested ``SEQ(C, SEQ(A, B)+, D)+``).
The workload is one automaton, the GLORIA template; a *workload sharing plan* (Def.
2.7) gives every transition a partition of its queries into Q-sets, and every shared
Q-set a *snapshot type* (its label): the type whose events store the intermediate
aggregates that the Q-set's expressions are written in. The plan space grows as the
Bell numbers to the number of transitions (Eq. 1), so GLORIA searches a graph:

1. the template as pools of candidate plans, one per transition or Kleene unit, keyed
   so that sharing never changes a result (:mod:`~trendagg.optimizer.gloria_template`);
2. the GLORIA graph (Def. 4.1): a node per candidate plan, an edge between plans of
   consecutive pools weighted by the cost of the type they meet at (Eqs. 2-4), so a
   path's weight is its plan's cost (Lemma 4.4) and the lightest path is the best plan
   (Lemma 4.6);
3. built pool by pool with the three node generation principles (Reuse, Local
   snapshots, Merging; section 5.1) and pruned as it grows (edge and node pruning,
   section 5.2), a Kleene unit as its k + 2 whole cycles (section 6);
4. searched with Algorithm 1 (section 5.3) (:mod:`~trendagg.optimizer.gloria_graph`,
   :mod:`~trendagg.optimizer.gloria_search`).

:func:`optimize` runs it and returns a :class:`GloriaPlan`: per transition its Q-sets
and labels, the plan's modelled cost and a ``describe()`` that prints the graph as
Table 3 does. The baselines of section 8.1 are modes of the same call: ``greedy`` (one
node per pool), ``noprune`` (the whole graph, searched) and, for the tests, ``none``
(every query alone: GRETA) and ``exhaustive`` (every plan of Def. 2.6 per transition,
Kleene units all or nothing).

This is the optimizer alone; the specification is ``../shared/specs/gloria.md``
(sections 1, 2, 4, 6 and 8.1-8.2), whose worked examples are its tests. Its plan, as
Q-sets per transition (:func:`~trendagg.optimizer.plan.qsets_of`), is executed by
:mod:`trendagg.reference.gloria` (``strategy="gloria"``).
"""

from __future__ import annotations

import gc
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass

from trendagg.optimizer.gloria_graph import (
    INF,
    Graph,
    Node,
    OverBudget,
    QSet,
    build_graph,
    plan_text,
)
from trendagg.optimizer.gloria_search import brute_force, path_search, plan_cost
from trendagg.optimizer.gloria_template import (
    KLEENE,
    CostModel,
    GloriaQuery,
    GloriaTemplate,
    PaperCost,
    Pool,
    gloria_query,
    gloria_template,
    query_shape,
)
from trendagg.plan.compile import QueryPlan

CASES = {
    1: "Case 1, one end node",
    2: "Case 2, several end nodes, one path",
    3: "Case 3, several end nodes, several paths",
}


@dataclass
class GloriaPlan:
    """What the optimizer chose and why (for ``explain``, the benchmarks and the tests).

    ``chosen`` maps each pool of the graph to its chosen node; ``cost`` is the plan's
    modelled cost (its path's weight); ``cases`` Algorithm 1's case per connected part
    of the graph; ``candidates`` the distinct plans the search weighed (the paths tried,
    for ``exhaustive``); ``exact`` whether the search is proven optimal over the graph
    (its pools form a tree, spec A11); ``built`` the plan nodes generated;
    ``over_budget`` the pool whose construction passed the work budget (the plan is
    then Greedy's, or no sharing where that costs less), else None."""

    template: GloriaTemplate
    graph: Graph
    chosen: dict[int, Node]
    cost: float
    mode: str
    merge: str
    local: str
    end: str
    node_prune: str
    model: str
    cases: list[int]
    candidates: int
    operations: int
    exact: bool
    built: int
    seconds: float
    over_budget: str | None = None

    def pools(self) -> list[tuple[Pool, tuple[QSet, ...]]]:
        """Each template pool with the Q-sets chosen for it, in topological order (a pool
        without a chosen node is left out; :meth:`check` names it)."""
        out = []
        for gpool in self.graph.pools:
            if gpool.template is not None and gpool.index in self.chosen:
                out.append((gpool.template, self.chosen[gpool.index].qsets))
        return out

    def transitions(self) -> dict[tuple[str, str], list[QSet]]:
        """Per transition (type pair; a Kleene unit's every transition) its Q-sets and
        their snapshot labels, over all pools of the transition, sorted."""
        out: dict[tuple[str, str], list[QSet]] = {}
        for pool, qsets in self.pools():
            for t in pool.transitions:
                out.setdefault(t, []).extend(qsets)
        return {t: sorted(v) for t, v in out.items()}

    @property
    def nodes(self) -> int:
        """Plan nodes in the graph after pruning."""
        return sum(1 for n in self.graph.alive() if n.kind == "plan")

    def check(self) -> list[str]:
        """What makes the plan invalid (spec 8.2, P4), or nothing: one node per pool;
        each query of a pool in exactly one Q-set; only a single query non-shared; a
        label is a type at or before the transition's source on each member's trend (a
        unit's own type, or one before it, for a Kleene unit) and, unless it is the source
        itself or the unit's own (a local snapshot), the label its queries arrived with,
        all from one Q-set (a reuse, or a unit that carries its arriving labels)."""
        problems = []
        shapes = {q.name: query_shape(q) for q in self.template.queries}
        for gpool in self.graph.pools:
            if gpool.index not in self.chosen:
                problems.append(f"{gpool.name}: no node chosen")
        member = {
            pool.index: {q: s for s in qsets for q in s.queries} for pool, qsets in self.pools()
        }
        for pool, qsets in self.pools():
            names = [q for s in qsets for q in s.queries]
            if sorted(names) != sorted(pool.queries):
                problems.append(f"{pool.name()}: Q-sets {plan_text(qsets)} do not partition")
            for s in qsets:
                if s.label is None and len(s.queries) != 1:
                    problems.append(f"{pool.name()}: {s.text()} is not shared but not one query")
                if s.label is None:
                    continue
                for q in s.queries:
                    types = shapes[q].types
                    inside = pool.unit is not None and s.label in pool.unit.types
                    if pool.kind == KLEENE:  # its own type, or one before it (carried)
                        ok = inside or s.label in types[: types.index(pool.source)]
                    else:
                        ok = s.label in types[: types.index(pool.source) + 1]
                    if not ok:
                        problems.append(f"{pool.name()}: label {s.label} is not before it in {q}")
                        continue
                    if inside or s.label == pool.source:
                        continue  # (a local snapshot)
                    before = [p for p in pool.preds if q in self.template.pools[p].queries]
                    came = member[before[0]][q] if before else None
                    if (
                        came is None
                        or came.label != s.label
                        or not set(s.queries) <= set(came.queries)
                    ):
                        problems.append(
                            f"{pool.name()}: {s.text()} reuses {s.label} snapshots that {q} "
                            "did not arrive with"
                        )
        return problems

    def describe(self) -> str:
        """The graph as Table 3 prints it (every node built, its plan, d_s, kept or
        pruned and why, the edges pruned into it), the search (Algorithm 1's case) and
        the chosen plan per transition with its cost."""
        local = "to a rarer type only" if self.local == "rarer" else "to any type"
        lines = [
            f"GLORIA's optimizer (mode {self.mode}; cost model {self.model}; merge "
            f"{self.merge}; local snapshots {local}; node pruning {self.node_prune}; end "
            f"edges {self.end}):"
        ]
        chosen = {n.index for n in self.chosen.values()}
        for gpool in self.graph.pools:
            if gpool.kind == "start":
                continue
            pool = gpool.template
            queries = f" {{{','.join(sorted(pool.queries))}}}" if pool is not None else ""
            lines.append(f"  {gpool.name}{queries}:")
            for node in gpool.nodes:
                status = "keep" if node.pruned is None else f"pruned {node.pruned}"
                mark = "  <- chosen" if node.index in chosen else ""
                own = f" (cycle {_num(node.own)})" if node.own else ""
                what = node.text() if node.kind == "plan" else "end node"
                how = f" [{node.how}]" if node.how else ""
                lines.append(
                    f"    {node.name} {what}{how}: d_s {_num(node.d_s)}{own}, {status}{mark}"
                )
                for edge in self.graph.incoming.get(node.index, ()):
                    if edge.pruned and edge.source.pruned is None:
                        via = edge.source.d_s + edge.weight
                        lines.append(
                            f"      edge from {edge.source.name} pruned (Eq. 22: {_num(via)})"
                        )
        kept = self.nodes
        lines.append(f"  nodes: {self.built} built, {kept} kept")
        if self.over_budget is not None:
            instead = (
                "Greedy's plan (one node per pool)"
                if self.mode == "greedy"
                else "no sharing (cheaper than Greedy's plan)"
            )
            lines.append(
                f"  past the work budget building {self.over_budget} (combinations tried and "
                f"edges weighed): {instead} instead"
            )
        cases = ", ".join(CASES[c] for c in sorted(set(self.cases))) or "nothing to search"
        proof = "" if self.exact else "; the pools branch and join again: optimality not proven"
        lines.append(f"  path search: {cases}; {self.candidates} candidate plan(s) weighed{proof}")
        lines.append(f"  plan, cost {_num(self.cost)}:")
        for pool, qsets in self.pools():
            name = pool.name().replace("Pool", "tran")
            lines.append(f"    {name}: {plan_text(qsets)}")
        for name, why in sorted(self.template.private.items()):
            lines.append(f"  {name} shares nothing: {why}")
        return "\n".join(lines)


#: The work a run's plan may spend building the graph (:func:`optimize`'s ``budget``, as
#: :func:`~trendagg.optimizer.plan.sharing_plan` calls it): combinations of predecessor
#: nodes tried plus edges weighed, about 1-2 s here; past it the plan is Greedy's
BUDGET = 50_000


@contextmanager
def _collector_paused() -> Iterator[None]:
    """No cyclic garbage collection while the graph is built and searched: its hundreds
    of thousands of objects (rideshare, 200 queries: 330,000) are all kept, yet each
    batch of new ones sets off a collection, and every tenth or so scans all of them (a
    quarter of the planning time there).

    Afterwards they are moved to the oldest generation (``gc.freeze`` then
    ``gc.unfreeze``), as long-lived objects: else the first allocation after the
    collector is on again scans every one of them as young (0.13 s there), and a
    collection of the middle generation once more. Not when the process has frozen
    objects of its own (``gc.unfreeze`` would thaw them)."""
    collecting = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if collecting:
            if gc.get_freeze_count() == 0:
                gc.freeze()
                gc.unfreeze()
            gc.enable()


def _num(x: float) -> str:
    return "-" if x == INF else f"{x:g}"


def optimize(
    queries: Sequence[GloriaQuery | QueryPlan],
    rates: Mapping[str, float] | Mapping[tuple[object, ...], Mapping[str, float]],
    *,
    mode: str = "gloria",
    merge: str = "values",
    local: str = "rarer",
    end: str = "prop_eval",
    node_prune: str = "safe",
    cost: CostModel | None = None,
    limit: int = 1_000_000,
    budget: int | None = None,
) -> GloriaPlan:
    """GLORIA's plan for the workload (sections 5-6), or a baseline's (``mode``).

    ``rates``: ``|E|`` per event type (events per window and partition), or such rates
    per query signature (as :func:`~trendagg.optimizer.gloria_template.estimate_rates`
    gives them). ``merge``: ``all`` (NGP 3 as the paper states it), ``values`` (also
    merge only the non-shared queries; the default, spec A10) or ``subsets`` (every
    plan of Def. 2.6 per pool, pruned and searched as GLORIA's own).
    ``local``: ``rarer`` (NGP 2's frequency condition) or ``any`` (without it, as
    Fig. 7(a) draws the graph). ``end``: the end-edge weight of :class:`PaperCost`
    (ignored with an explicit ``cost``). ``node_prune``: ``safe`` or ``paper`` (see
    :func:`~trendagg.optimizer.gloria_graph.build_graph`). ``limit`` bounds the paths ``exhaustive``
    tries. ``budget``: the work the graph's construction may take, combinations of
    predecessor nodes tried plus edges weighed (None: no limit); past it the plan is
    Greedy's, or no sharing where that costs less (``over_budget`` says where it
    stopped, ``mode`` which). A count, not a time: the same queries and rates give the
    same plan in every process."""
    started = time.perf_counter()
    described = [q if isinstance(q, GloriaQuery) else gloria_query(q) for q in queries]
    template = gloria_template(described)
    model = cost or PaperCost(end)
    over: str | None = None
    with _collector_paused():  # (the edges are kept: no garbage to find)
        try:
            built = build_graph(
                template,
                rates,
                model,
                mode=mode,
                merge=merge,
                local=local,
                node_prune=node_prune,
                limit=budget,
            )
        except OverBudget as stopped:
            # Greedy's plan, or none where the model says sharing nothing costs less
            over, mode = str(stopped), "greedy"
            built = build_graph(template, rates, model, mode=mode, merge=merge, local=local)
            alone = build_graph(template, rates, model, mode="none", merge=merge, local=local)
            searched = path_search(built.graph)
            other = path_search(alone.graph)
            if other.cost < searched.cost:
                built, mode, searched = alone, "none", other
        graph = built.graph
        if mode == "exhaustive":
            found, weight, tried = brute_force(graph, limit)
            search_cases: list[int] = []
            candidates, operations, exact = tried, 0, True
            chosen = found
            total = plan_cost(graph, chosen) if chosen else 0.0
            assert abs(total - weight) <= 1e-6 * max(1.0, abs(weight))
        else:
            search = searched if over is not None else path_search(graph)
            chosen, total = search.chosen, search.cost
            search_cases, candidates = search.cases, search.candidates
            operations, exact = search.operations, search.exact
    return GloriaPlan(
        template=template,
        graph=graph,
        chosen=chosen,
        cost=total,
        mode=mode,
        merge=merge,
        local="any" if mode == "noprune" else local,
        end=getattr(model, "end", end),
        node_prune=node_prune,
        model=model.name,
        cases=search_cases,
        candidates=candidates,
        operations=operations,
        exact=exact,
        built=built.built,
        seconds=time.perf_counter() - started,
        over_budget=over,
    )


__all__ = ["BUDGET", "CASES", "GloriaPlan", "optimize"]
