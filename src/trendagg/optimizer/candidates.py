"""Workload analysis for shared execution (HAMLET, Section 3.1).

A Kleene sub-pattern ``E+`` (a plus applied to one event type) that appears in
several queries is *sharable* by them (Def. 3.1). Queries are *sharable*
(Def. 3.2) when they contain the same sharable ``E+`` and partition the stream
the same way (the same equivalence and GROUP-BY attributes, so a burst of E
events belongs to the same partition for all of them). Windows may differ:
bursts are cut at panes of the gcd of all window lengths and slides, so every
event of a burst lies in the same windows of each query. Every aggregate can
be shared (the shared propagation carries all registers).

Edge predicates on E's variable (``E.a < NEXT(E).a``, ``A.a < NEXT(E).b``,
``E.a < NEXT(D).b``) do not prevent sharing: where they make an event's
predecessors differ between queries, the executor gives that event an
event-level snapshot (HAMLET, Def. 3.11). What is not shared today, and runs
non-shared inside the same executor: a query with qualified partition
attributes (``[T.district]``), whose events may belong to several partitions.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction

from trendagg.language import ast
from trendagg.language.analysis import negated_variables
from trendagg.plan.compile import QueryPlan
from trendagg.plan.windows import pane_length


def kleene_types(plan: QueryPlan) -> list[str]:
    """Event types E with a positive ``E+`` (plus over one event pattern) in the query."""
    negated = negated_variables(plan.query.pattern)
    found: list[str] = []

    def walk(p: ast.Pattern) -> None:
        if isinstance(p, ast.Plus):
            inner = p.inner
            if (
                isinstance(inner, ast.EventPattern)
                and inner.var not in negated
                and inner.type not in found
            ):
                found.append(inner.type)
            walk(inner)
        elif isinstance(p, ast.Seq):
            for item in p.items:
                walk(item)
        elif isinstance(p, ast.Not):
            return

    walk(plan.query.pattern)
    return found


def sharing_blocker(plan: QueryPlan, type_: str) -> str | None:
    """Why ``type_+`` of this query cannot be shared today, or None when it can."""
    if any(a.var is not None for a in plan.partition_attrs):
        return "qualified partition attributes"
    return None


def partition_signature(plan: QueryPlan) -> tuple[str, ...]:
    return tuple(sorted(a.name for a in plan.partition_attrs))


@dataclass(frozen=True)
class SharableSet:
    """Queries (indices into the workload) that share ``type_+``, with their pane."""

    type_: str
    queries: tuple[int, ...]
    pane: Fraction


@dataclass
class Component:
    """Connected sharable sets: one partitioning, one executor."""

    queries: tuple[int, ...]
    partition_names: tuple[str, ...]
    sets: list[SharableSet] = field(default_factory=list)
    pane: Fraction = Fraction(0)


@dataclass
class SharingAnalysis:
    sets: list[SharableSet]
    components: list[Component]
    unshared: tuple[int, ...]
    blocked: dict[tuple[int, str], str]

    def describe(self, plans: list[QueryPlan]) -> str:
        """Sharable sets and the merged template of each component, as ``explain`` prints."""
        lines = ["merged template (each type once; transitions labelled by their queries):"]
        for (src, dst, label), qs in merged_template(plans).items():
            lines.append(f"  {src} -> {dst} ({label}): {{{', '.join(qs)}}}")
        if not self.sets:
            lines.append("no sharable Kleene sub-patterns: every query runs non-shared (GRETA)")
        for i, comp in enumerate(self.components):
            names = ", ".join(plans[q].name for q in comp.queries)
            part = ", ".join(comp.partition_names) or "none"
            lines.append(
                f"component {i + 1}: queries {names}; partition by [{part}]; pane {comp.pane} s"
            )
            for s in comp.sets:
                lines.append(
                    f"  sharable {s.type_}+ by {{{', '.join(plans[q].name for q in s.queries)}}}"
                )
        for (q, t), why in sorted(self.blocked.items()):
            lines.append(f"not shared: {t}+ of {plans[q].name} ({why})")
        if self.unshared:
            lines.append("non-shared queries: " + ", ".join(plans[q].name for q in self.unshared))
        return "\n".join(lines)


def merged_template(plans: list[QueryPlan]) -> dict[tuple[str, str, str], list[str]]:
    """HAMLET's merged template: each type once, each transition labelled by its queries."""
    merged: dict[tuple[str, str, str], list[str]] = {}
    for plan in plans:
        types = plan.vars
        for t in plan.template.transitions:
            key = (types[t.src].type, types[t.dst].type, t.label)
            merged.setdefault(key, []).append(plan.name)
    return merged


def analyze(plans: list[QueryPlan]) -> SharingAnalysis:
    """Split a workload into sharable sets and executor components (HAMLET, 3.1)."""
    candidates: dict[tuple[str, tuple[str, ...]], list[int]] = {}
    blocked: dict[tuple[int, str], str] = {}
    for i, plan in enumerate(plans):
        for t in kleene_types(plan):
            why = sharing_blocker(plan, t)
            if why is not None:
                blocked[(i, t)] = why
                continue
            candidates.setdefault((t, partition_signature(plan)), []).append(i)
    sets = [
        SharableSet(
            t,
            tuple(qs),
            pane_length([d for q in qs for d in (plans[q].window.within, plans[q].window.slide)]),
        )
        for (t, _), qs in candidates.items()
        if len(qs) > 1
    ]
    # components: queries connected through sets
    parent = list(range(len(plans)))

    def find(x: int) -> int:
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    for s in sets:
        for q in s.queries[1:]:
            parent[find(q)] = find(s.queries[0])
    by_root: dict[int, Component] = {}
    for s in sets:
        root = find(s.queries[0])
        comp = by_root.get(root)
        if comp is None:
            comp = by_root[root] = Component((), partition_signature(plans[s.queries[0]]))
        comp.sets.append(s)
    for comp in by_root.values():
        members = sorted({q for s in comp.sets for q in s.queries})
        comp.queries = tuple(members)
        comp.pane = pane_length(
            [d for q in members for d in (plans[q].window.within, plans[q].window.slide)]
        )
        # a burst must lie in one pane of every member query: use the component's pane
        comp.sets = [SharableSet(s.type_, s.queries, comp.pane) for s in comp.sets]
    shared = {q for c in by_root.values() for q in c.queries}
    return SharingAnalysis(
        sets=[s for c in by_root.values() for s in c.sets],
        components=list(by_root.values()),
        unshared=tuple(i for i in range(len(plans)) if i not in shared),
        blocked=blocked,
    )
