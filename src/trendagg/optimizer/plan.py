"""The sharing plan: what a run computes once for whom, decided before any event.

A strategy is a policy (:func:`sharing_plan`) that returns a :class:`SharingPlan`;
the executors run the plan they are given and discover no sharing themselves,
and ``trendagg explain`` prints the same plan (:meth:`SharingPlan.describe`).

The plan says, per query, which executor runs it and why (:class:`Route`), and
which Kleene bursts are shared (:class:`KleeneBurst`, HAMLET Def. 3.1/3.2) with
their decision: ``always`` (hamlet-static) or ``dynamic`` (hamlet: per burst,
the benefit of Eq. 7 in the executor's units, :mod:`trendagg.optimizer.cost`).
Both executors share ``E+`` among the queries of one partitioning whatever
their predicates on E (HAMLET Def. 3.1/3.2):

- the Python engine gives an event an event-level snapshot where its
  predecessors differ between queries (HAMLET Def. 3.11); its bursts are those
  of :func:`trendagg.optimizer.candidates.analyze`, grouped in components;
- the compiled kernel keeps the burst's coefficients once per binding rule
  for E among the members (:meth:`KleeneBurst.classes`: required attributes and
  local predicates; a coefficient counts the events its rule binds), so a
  member whose predicates differ gets its own coefficients where the Python
  engine would give events snapshots; each class of members decides per burst
  whether to share; a state that NEXT conditions constrain or read
  (:func:`edged_variables`) is never in its bursts, since coefficients treat a
  run of events alike. It stores registers once per class of states equal by
  construction (``merge_states``; ``trendagg.kernels.lower.core._state_classes``).

The ``sharon`` policy adds shared sub-sequences (:class:`SharedSequence`, SHARON's
optimizer: :mod:`trendagg.optimizer.sharon`): each is computed once for its queries
by the reference executor (:mod:`trendagg.reference.sharon`), which the plan routes
those queries to; the workload's other queries run under the hamlet plan.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import TYPE_CHECKING, Any

from trendagg.errors import InputError
from trendagg.optimizer.candidates import Component, analyze
from trendagg.optimizer.sharon import KERNEL, optimize, seq_query, sharon_blocker
from trendagg.plan.compile import binding_rule
from trendagg.plan.predicates import inexact_constant
from trendagg.plan.windows import pane_length

if TYPE_CHECKING:
    from trendagg.plan.compile import QueryPlan

STRATEGIES = ("hamlet", "hamlet-static", "greta", "twostep", "sharon", "aseq", "gloria")
ASEQ_ROUTE = "A-Seq, SHARON's non-shared baseline, runs on the reference engine"

#: What a compiled route of a shared query runs (explain prints it)
GLORIA_ROUTE = "GLORIA's Q-sets, with snapshots and coefficients"
SHARON_ROUTE = "SHARON's sub-sequences, with a snapshot per START"


@dataclass(frozen=True)
class Route:
    """The executor of one query, and why it is that one."""

    query: str
    executor: str  # "compiled" or "python"
    reason: str


@dataclass(frozen=True)
class KleeneBurst:
    """Bursts of ``type_`` events processed once for the states ``members`` (query name,
    variable) of one partitioning, on one executor."""

    type_: str
    members: tuple[tuple[str, str], ...]
    partition: tuple[str, ...]
    pane: Fraction
    decision: str  # "always" or "dynamic"
    executor: str
    rules: tuple[str, ...] = ()  # the compiled kernel's binding rule for E, per member

    def classes(self) -> list[tuple[tuple[str, str], ...]]:
        """The members grouped by their binding rule for E, in member order: the
        compiled kernel keeps one set of burst coefficients per group."""
        groups: dict[str, list[tuple[str, str]]] = {}
        for member, rule in zip(self.members, self.rules, strict=True):
            groups.setdefault(rule, []).append(member)
        return [tuple(g) for g in groups.values()]


@dataclass(frozen=True)
class SharedSequence:
    """A sub-sequence of event types, ``pattern``, that SHARON computes once for the
    queries ``queries`` (names, in workload order), with its benefit (Eq. 8, in the
    rates' units: updates per window saved)."""

    pattern: tuple[str, ...]
    queries: tuple[str, ...]
    benefit: float

    def label(self) -> str:
        return f"({', '.join(self.pattern)}) {{{', '.join(self.queries)}}}"


@dataclass(frozen=True)
class GloriaQSet:
    """A Q-set of a GLORIA plan on one transition ``source -> target`` (event types):
    its queries (names, sorted) and its snapshot type ``label`` (None: one query,
    non-shared). The executable part of the optimizer's plan."""

    source: str
    target: str
    queries: tuple[str, ...]
    label: str | None

    def text(self) -> str:
        body = "(" + ",".join(self.queries) + ")"
        return body if self.label is None else f"{body}^{self.label}"


@dataclass(frozen=True)
class SharingPlan:
    strategy: str
    routes: tuple[Route, ...]
    bursts: tuple[KleeneBurst, ...]
    components: tuple[Component, ...]  # the Python engine's, by query index
    merge_states: bool
    sequences: tuple[SharedSequence, ...] = ()  # sharon's
    # sharon: the optimizer's whole answer (candidates, graph, pruning), for explain
    sharon: Any = field(default=None, compare=False, repr=False)
    qsets: tuple[GloriaQSet, ...] = ()  # gloria's: every transition of its queries
    # gloria: the optimizer's whole answer (GloriaPlan: graph, pruning, path), for explain
    gloria: Any = field(default=None, compare=False, repr=False)

    def on(self, executor: str) -> list[int]:
        """Indices of the queries that ``executor`` runs."""
        return [i for i, r in enumerate(self.routes) if r.executor == executor]

    def describe(self) -> str:
        """The plan as ``trendagg explain`` prints it."""
        lines = [f"sharing plan ({self.strategy}):"]
        for r in self.routes:
            why = f" ({r.reason})" if r.reason else ""
            lines.append(f"  {r.query}: {r.executor} executor{why}")
        route = {r.query: r.executor for r in self.routes}
        if self.strategy == "sharon":
            for seq in self.sequences:
                lines.append(
                    f"  shared sub-sequence {seq.label()} on the {route[seq.queries[0]]} "
                    f"executor; benefit {seq.benefit:g}"
                )
            if not self.sequences:
                lines.append("  no shared sub-sequences: none of SHARON's candidates pays")
        if self.strategy == "gloria":
            for s in self.qsets:
                lines.append(
                    f"  GLORIA Q-set {s.text()} on {s.source}->{s.target} on the "
                    f"{route[s.queries[0]]} executor"
                )
            if not self.qsets:
                lines.append("  no GLORIA Q-sets: no transition is shared")
        if not self.bursts:
            lines.append("  no shared Kleene bursts: every query runs non-shared")
        for b in self.bursts:
            members = ", ".join(f"{q}.{v}" for q, v in b.members)
            part = ", ".join(b.partition) or "none"
            rule = ""
            if len(set(b.rules)) == 1:
                rule = f"; rule {b.rules[0]}"
            elif b.rules:
                each = "; ".join(
                    "{"
                    + ", ".join(f"{q}.{v}" for q, v in c)
                    + "}: "
                    + b.rules[b.members.index(c[0])]
                    for c in b.classes()
                )
                rule = f"; coefficients per binding rule: {each}"
            lines.append(
                f"  shared {b.type_}+ on the {b.executor} executor, {b.decision}: {{{members}}}; "
                f"partition by [{part}]; pane {b.pane} s{rule}"
            )
        if self.merge_states and self.on("compiled"):
            lines.append(
                "  compiled states equal by construction (window, partitioning, registers, "
                "type, rule, predecessors) keep one set of registers"
            )
        return "\n".join(lines)


def compiled_blocker(plan: QueryPlan) -> str | None:
    """Why the compiled kernel cannot run this query (the Python engine then does), or
    None: what the kernel does not implement yet."""
    conds = [cond for _, cond in plan.edge_conditions]
    if inexact_constant(conds):
        return "an integer constant beyond 2**53 in a NEXT condition (exact in Python only)"
    return _unnested(plan)


def edged_variables(plan: QueryPlan) -> set[str]:
    """The variables of a query that NEXT conditions or guards read or constrain: their
    states are never shared in a compiled burst, whose coefficients summarise a run of
    events alike, while such a condition tells each pair apart."""
    return {v for pair in plan.edges for v in pair} | set(plan.guards)


def _unnested(plan: QueryPlan) -> str | None:
    """Why the qualified partition attributes of ``plan`` are beyond the kernel, or None.

    The kernel keeps, for the attributes that apply to every variable, template
    partitions that the other variables' (wildcard) events update and that a new
    partition starts from (:mod:`trendagg.kernels.runtime.executor`). That needs one positive
    variable with every partition attribute (docs/semantics.md: the partitions are then its
    keys; else they are products of values): the qualified attributes, all of one
    positive variable, and no attribute name twice.
    """
    attrs = plan.partition_attrs
    qualified = {a.var for a in attrs if a.var is not None}
    if not qualified:
        return None
    if len({a.name for a in attrs}) < len(attrs):
        return "one partition attribute name for two variables (partitions are products)"
    if len(qualified) > 1:  # (the language refuses attributes of a negated variable)
        return "no positive variable has every partition attribute (partitions are products)"
    return None


def partition_layout(plan: QueryPlan) -> tuple[tuple[str, ...], tuple[object, ...]]:
    """The compiled kernel's partitioning of a query: its partition attribute names,
    sorted, and, when some are qualified, (the type of the one variable they apply to,
    the positions of the others; see :func:`_unnested`: the qualified ones belong to
    one variable); () when every attribute applies to every variable. Queries of one
    layout share partition instances (and may share bursts)."""
    names = tuple(sorted(a.name for a in plan.partition_attrs))
    qualified = {a.var for a in plan.partition_attrs if a.var is not None}
    if not qualified:
        return names, ()
    (var,) = qualified
    unqualified = {a.name for a in plan.partition_attrs if a.var is None}
    base = tuple(i for i, name in enumerate(names) if name in unqualified)
    return names, (plan.vars[var].type, base)


def sharing_plan(
    plans: list[QueryPlan],
    strategy: str,
    *,
    compiled: bool = True,
    rates: Mapping[Any, Any] | None = None,
    sequences: Sequence[SharedSequence] | None = None,
    qsets: Sequence[GloriaQSet] | None = None,
    cost_model: str = KERNEL,
) -> SharingPlan:
    """The plan of ``strategy`` for a workload: routes, shared bursts, state classes.

    ``compiled=False`` runs every query on the Python engine; otherwise a query runs
    compiled unless :func:`compiled_blocker` names what the kernel lacks for it (the
    route never depends on the events). ``rates`` (sharon): the event types' rates,
    flat or per signature as :func:`trendagg.optimizer.sharon.estimate_rates` gives
    them; None: every type at rate 1. ``sequences`` (sharon): run these shared
    sub-sequences instead of the optimizer's choice (checked: see :func:`check_sequences`).
    ``cost_model``: the cost model the optimizer weighs plans by: the work of trendagg's
    executors (``kernel``, the default, for both), or the paper's (sharon: Eq. 1-8 as
    ``factor-one`` or ``authors``, see :func:`trendagg.optimizer.sharon.candidate_cost`;
    gloria: Eqs. 2-4 as ``paper``, see :mod:`trendagg.optimizer.gloria_template`).
    ``rates`` (gloria): as sharon's, per type or per GLORIA signature
    (:func:`gloria_rates`). ``qsets`` (gloria): run these Q-sets instead of the
    optimizer's plan (checked: see :func:`check_qsets`); every query they name runs on
    GLORIA's executor. Under the optimizer's plan, the queries in a shared Q-set (one
    with a label) do; the others follow the hamlet plan. GLORIA's executor (and
    SHARON's, for the shared sub-sequences' queries) is the compiled kernel's snapshots
    (:func:`snapshot_qsets`), or with ``compiled=False`` the reference executor.
    """
    if strategy not in STRATEGIES:
        raise InputError(f"unknown strategy '{strategy}'; choose one of {', '.join(STRATEGIES)}")
    chosen, sequences = _given_or_planned(
        "sharon", strategy, sequences, plans, rates, "shared sub-sequences", cost_model
    )
    gloria, qsets = _given_or_planned("gloria", strategy, qsets, plans, rates, "Q-sets", cost_model)
    on_gloria = {name for s in qsets for name in s.queries}
    shared = {name for seq in sequences for name in seq.queries} | on_gloria
    routes = []
    for plan in plans:
        ran = ""
        if strategy == "twostep":
            why: str | None = "twostep enumerates trends"
        elif plan.name in shared and not compiled:
            why = "the reference engine was asked for"
        elif plan.name in shared:  # (the kernel's snapshots run both, see snapshot_qsets)
            why = None
            ran = GLORIA_ROUTE if plan.name in on_gloria else SHARON_ROUTE
        elif strategy == "aseq" and sharon_blocker(plan) is None:
            why = ASEQ_ROUTE
        elif not compiled:
            why = "the reference engine was asked for"
        else:
            why = compiled_blocker(plan)
        routes.append(Route(plan.name, "python" if why else "compiled", why or ran))
    shares = strategy.startswith("hamlet") or strategy in ("sharon", "gloria")
    plan_ = SharingPlan(
        strategy, tuple(routes), (), (), shares, tuple(sequences), chosen, qsets, gloria
    )
    if not shares:
        return plan_
    decision = "always" if strategy == "hamlet-static" else "dynamic"
    python = [q for q in plan_.on("python") if plans[q].name not in shared]
    analysis = analyze([plans[q] for q in python])
    components = []
    bursts = []
    for comp in analysis.components:
        queries = tuple(python[q] for q in comp.queries)
        sets = [type(s)(s.type_, tuple(python[q] for q in s.queries), s.pane) for s in comp.sets]
        components.append(Component(queries, comp.partition_names, sets, comp.pane))
        for s in sets:
            members = tuple((plans[q].name, plans[q].type_to_var[s.type_]) for q in s.queries)
            bursts.append(
                KleeneBurst(s.type_, members, comp.partition_names, s.pane, decision, "python")
            )
    unshared = [q for q in plan_.on("compiled") if plans[q].name not in shared]
    bursts += _compiled_bursts(plans, unshared, decision)
    return SharingPlan(
        strategy,
        plan_.routes,
        tuple(bursts),
        tuple(components),
        True,
        tuple(sequences),
        chosen,
        qsets,
        gloria,
    )


def unsharable(plans: list[QueryPlan], strategy: str) -> str | None:
    """Why a sharon or gloria plan of ``plans`` can share nothing whatever the rates (no
    query of the optimizer's class, or no two that have a sub-sequence or a transition
    alike), or None: it may share, or the strategy is another."""
    if strategy == "sharon":
        from trendagg.optimizer.sharon import sharable_patterns

        queries = [q for q in (seq_query(p) for p in plans) if q is not None]
        if not queries:
            return "no query is of SHARON's class (SEQ patterns without Kleene plus, NOT or NEXT)"
        if not sharable_patterns(queries):
            return (
                "no sequence of two or more event types is in two of its queries with the "
                "same window, partitioning and predicates on those events"
            )
    elif strategy == "gloria":
        from trendagg.optimizer.gloria_template import gloria_query, gloria_template

        eligible = [p for p in plans if gloria_blocker(p) is None]
        if not eligible:
            return "no query is of GLORIA's class (SEQ and Kleene patterns)"
        pools = gloria_template([gloria_query(p) for p in eligible]).pools
        if all(len(pool.queries) < 2 for pool in pools):
            return (
                "no transition between two event types is in two of its queries with the "
                "same window, partitioning and predicates on those events"
            )
    return None


def unshared_note(plans: list[QueryPlan], sharing: SharingPlan) -> str | None:
    """One line for a sharon or gloria plan that shares nothing (``run`` and ``explain``
    print it): why (:func:`unsharable`, else the rates made sharing not pay) and how its
    queries run instead; None for a plan that shares, or of another strategy."""
    strategy = sharing.strategy
    if strategy == "sharon" and not sharing.sequences:
        why = unsharable(plans, strategy) or (
            "none of its candidate sub-sequences saves work at the rates it weighed"
        )
    elif strategy == "gloria" and not sharing.qsets:
        why = unsharable(plans, strategy) or "its plan shares no transition at the rates it weighed"
    else:
        return None
    bursts = len(sharing.bursts)
    rest = (
        f"the queries run on the hamlet plan ({bursts} shared Kleene burst"
        f"{'' if bursts == 1 else 's'})"
        if bursts
        else "each query runs on its own"
    )
    return f"{strategy} shared nothing: {why}; {rest}"


def _given_or_planned(
    owner: str,
    strategy: str,
    given: Sequence[Any] | None,
    plans: list[QueryPlan],
    rates: Mapping[Any, Any] | None,
    what: str,
    model: str = KERNEL,
) -> tuple[Any, tuple[Any, ...]]:
    """The shared parts of the ``owner`` policy (sharon: sub-sequences, gloria: Q-sets)
    and its optimizer's detail (None when given): ``given`` checked, or planned from
    ``rates``; none for another strategy, which must not be given any."""
    if strategy != owner:
        if given:
            raise InputError(f"{what} are a {owner} plan's, not {strategy}'s")
        return None, ()
    if given is not None:
        given = tuple(given)
        (check_sequences if owner == "sharon" else check_qsets)(plans, given)
        return None, given
    return (_sharon if owner == "sharon" else _gloria)(plans, rates, model)


def check_sequences(plans: list[QueryPlan], sequences: Sequence[SharedSequence]) -> None:
    """Raise InputError unless SHARON can share each sub-sequence exactly: two or more
    event types, two or more queries of its class that have them contiguously, bind
    each position's events alike and agree on window and partition attributes, and no
    query in two sub-sequences that overlap in it (SHARON's valid plan)."""
    by_name = {p.name: p for p in plans}
    taken: dict[str, list[tuple[int, int, str]]] = {}
    for seq in sequences:
        label = seq.label()
        if len(seq.pattern) < 2 or len(set(seq.queries)) < 2:
            raise InputError(
                f"shared sub-sequence {label}: it needs two or more event types and queries"
            )
        keys = set()
        for name in seq.queries:
            plan = by_name.get(name)
            if plan is None:
                raise InputError(f"shared sub-sequence {label}: no query is named {name}")
            query = seq_query(plan)
            if query is None:
                raise InputError(
                    f"shared sub-sequence {label}: {name} is not of SHARON's class "
                    f"({sharon_blocker(plan)})"
                )
            n = len(seq.pattern)
            at = query.types.index(seq.pattern[0]) if seq.pattern[0] in query.types else -1
            if at < 0 or query.types[at : at + n] != seq.pattern:
                raise InputError(
                    f"shared sub-sequence {label}: {name}'s pattern "
                    f"({', '.join(query.types)}) does not have it, contiguously"
                )
            keys.add((query.signature, query.rules[at : at + n]))
            for start, end, other in taken.get(name, ()):
                if start < at + n and at < end:
                    raise InputError(
                        f"shared sub-sequences {label} and {other} overlap in {name}: "
                        f"a query shares each of its positions once"
                    )
            taken.setdefault(name, []).append((at, at + n, label))
        if len(keys) > 1:
            raise InputError(
                f"shared sub-sequence {label}: its queries differ in window, partition "
                f"attributes or how they bind its events (predicates, attributes read)"
            )


def gloria_blocker(plan: QueryPlan) -> str | None:
    """Why GLORIA's executor does not run this query (it then follows the hamlet plan),
    or None: GLORIA's class is SEQ and (nested) Kleene patterns (spec 1.6)."""
    if plan.template.negations:
        return "a NOT (spec A13: GLORIA shares no negation)"
    if plan.edges or plan.guards:
        return "a NEXT condition (spec 3.4: an edge predicate is never shared)"
    if any(a.var is not None for a in plan.partition_attrs):
        return "qualified partition attributes (spec 3.4)"
    if not plan.template.transitions:
        return "one event type and no Kleene plus: no transition to share"
    return None


def gloria_rates(plans: list[QueryPlan], events: Any) -> dict[tuple[object, ...], dict[Any, float]]:
    """``|E|`` per GLORIA signature, from the start of ``events`` (an EventBatch), for
    the queries of GLORIA's class (:func:`~trendagg.optimizer.gloria_template.estimate_rates`)."""
    from trendagg.optimizer.gloria_template import estimate_rates, gloria_query

    eligible = [p for p in plans if gloria_blocker(p) is None]
    return estimate_rates([gloria_query(p) for p in eligible], eligible, events)


def policy_rates(plans: list[QueryPlan], strategy: str, events: Any) -> dict[Any, Any]:
    """The rates that ``strategy``'s optimizer (sharon or gloria) weighs a plan by, from
    the start of ``events`` (an EventBatch), as a run estimates them."""
    if strategy == "gloria":
        return gloria_rates(plans, events)
    from trendagg.optimizer.sharon import estimate_rates

    return estimate_rates(plans, events)


def _gloria(
    plans: list[QueryPlan], rates: Mapping[Any, Any] | None, model: str = KERNEL
) -> tuple[Any, tuple[GloriaQSet, ...]]:
    """GLORIA's optimizer over the queries of its class, weighing plans by ``model``
    (see :func:`~trendagg.optimizer.gloria_template.cost_model`): its answer, and the
    Q-sets of the queries that share some transition (their every transition's)."""
    from trendagg.optimizer.gloria import BUDGET
    from trendagg.optimizer.gloria import optimize as gloria_optimize
    from trendagg.optimizer.gloria_template import cost_model, gloria_query

    try:
        cost = cost_model(model)
    except ValueError as e:
        raise InputError(f"{e} (the gloria strategy's cost models)") from None

    eligible = [p for p in plans if gloria_blocker(p) is None]
    if not eligible:
        return None, ()
    if rates is None:
        rates = {t: 1.0 for p in eligible for t in p.template.types}
    chosen = gloria_optimize([gloria_query(p) for p in eligible], rates, cost=cost, budget=BUDGET)
    return chosen, shared_qsets(eligible, chosen)


def shared_qsets(plans: list[QueryPlan], chosen: Any) -> tuple[GloriaQSet, ...]:
    """The Q-sets of an optimizer's plan (``chosen``, a
    :class:`~trendagg.optimizer.gloria.GloriaPlan`: GLORIA's or a baseline's, such as
    ``mode="greedy"``) that GLORIA's executor runs: those of the queries that share some
    transition, on each of their transitions (the others follow the hamlet plan)."""
    qsets = qsets_of(chosen)
    members = {q for s in qsets if s.label is not None for q in s.queries}
    # (a query runs on GLORIA's executor only with a Q-set on each of its transitions: a
    # plan that left one out would otherwise fail at run time; none is known to)
    by_name = {p.name: p for p in plans}
    kept = tuple(s for s in qsets if set(s.queries) <= members)
    while True:
        covered = {(q, (s.source, s.target)) for s in kept for q in s.queries}
        whole = {
            q for q in members if all((q, t) in covered for t in _type_transitions(by_name[q]))
        }
        if whole == members:
            return kept
        members = whole
        kept = tuple(s for s in kept if set(s.queries) <= members)


def qsets_of(chosen: Any) -> tuple[GloriaQSet, ...]:
    """A GLORIA plan's (:class:`~trendagg.optimizer.gloria.GloriaPlan`) Q-sets, per
    transition (a Kleene unit's every transition carries the unit's)."""
    return tuple(
        GloriaQSet(a, b, s.queries, s.label)
        for pool, qsets in chosen.pools()
        for a, b in pool.transitions
        for s in qsets
    )


def check_qsets(plans: list[QueryPlan], qsets: Sequence[GloriaQSet]) -> None:
    """Raise InputError unless GLORIA's executor runs the Q-sets exactly: each names
    queries of GLORIA's class that have its transition, bind both of its types alike
    and agree on partition attributes; only one query is non-shared (no label); a label
    is a type of its queries; each query named has a Q-set on each of its transitions,
    exactly one."""
    by_name = {p.name: p for p in plans}
    covered: dict[tuple[str, tuple[str, str]], str] = {}
    for s in qsets:
        text = f"Q-set {s.text()} on {s.source}->{s.target}"
        if not s.queries or (s.label is None and len(s.queries) != 1):
            raise InputError(f"{text}: a non-shared Q-set holds exactly one query")
        keys = set()
        for name in s.queries:
            plan = by_name.get(name)
            if plan is None:
                raise InputError(f"{text}: no query is named {name}")
            why = gloria_blocker(plan)
            if why is not None:
                raise InputError(f"{text}: {name} is not of GLORIA's class ({why})")
            if (s.source, s.target) not in _type_transitions(plan):
                raise InputError(f"{text}: {name} has no transition {s.source}->{s.target}")
            if s.label is not None and s.label not in plan.template.types:
                raise InputError(f"{text}: {s.label} is not a type of {name}")
            if (name, (s.source, s.target)) in covered:
                raise InputError(
                    f"{text}: {name} is already in {covered[name, (s.source, s.target)]}"
                )
            covered[name, (s.source, s.target)] = s.text()
            names = tuple(sorted(a.name for a in plan.partition_attrs))
            keys.add((names, binding_rule(plan, s.source), binding_rule(plan, s.target)))
        if len(keys) > 1:
            raise InputError(
                f"{text}: its queries differ in partition attributes or how they bind its "
                f"events (predicates, attributes read)"
            )
    for name in sorted({q for s in qsets for q in s.queries}):
        for pair in _type_transitions(by_name[name]):
            if (name, pair) not in covered:
                raise InputError(f"{name} has no Q-set on its transition {pair[0]}->{pair[1]}")


def sequence_qsets(
    plans: list[QueryPlan], sequences: Sequence[SharedSequence]
) -> tuple[GloriaQSet, ...]:
    """A SHARON plan as GLORIA's Q-sets, which GLORIA's executor runs exactly: a shared
    sub-sequence ``(T1, ..., Tm)`` of queries Q is the Q-set Q labelled T1 on each of
    its transitions ``Ti -> Ti+1`` (a snapshot at each START, SHARON's per-START counts
    of spec section 3.4); every other transition of those queries is non-shared. So one
    executor of snapshots and coefficients runs both policies' plans."""
    by_name = {p.name: p for p in plans}
    out: list[GloriaQSet] = []
    covered: set[tuple[str, tuple[str, str]]] = set()
    for seq in sequences:
        queries = tuple(sorted(seq.queries))
        for a, b in itertools.pairwise(seq.pattern):
            out.append(GloriaQSet(a, b, queries, seq.pattern[0]))
            covered.update((q, (a, b)) for q in queries)
    for name in sorted({q for seq in sequences for q in seq.queries}):
        for pair in sorted(_type_transitions(by_name[name])):
            if (name, pair) not in covered:
                out.append(GloriaQSet(pair[0], pair[1], (name,), None))
    return tuple(out)


def snapshot_qsets(plans: list[QueryPlan], sharing: SharingPlan) -> tuple[GloriaQSet, ...]:
    """The Q-sets that the compiled kernel runs with snapshots and coefficients (see
    :mod:`trendagg.kernels.lower.snapshots`): a gloria plan's, or a sharon plan's shared
    sub-sequences as Q-sets (:func:`sequence_qsets`), of the queries among ``plans``
    (the kernel's) that the plan routes to it; none for another strategy."""
    names = {p.name for p in plans}
    compiled = {r.query for r in sharing.routes if r.executor == "compiled"}
    if sharing.strategy == "gloria":
        qsets: tuple[GloriaQSet, ...] = sharing.qsets
    elif sharing.strategy == "sharon" and sharing.sequences:
        mine = [s for s in sharing.sequences if set(s.queries) <= names & compiled]
        qsets = sequence_qsets(plans, mine)
    else:
        return ()
    return tuple(s for s in qsets if set(s.queries) <= names & compiled)


def _type_transitions(plan: QueryPlan) -> set[tuple[str, str]]:
    typ = {v: info.type for v, info in plan.vars.items()}
    return {(typ[t.src], typ[t.dst]) for t in plan.template.transitions}


def _sharon(
    plans: list[QueryPlan], rates: Mapping[Any, Any] | None, model: str = KERNEL
) -> tuple[Any, tuple[SharedSequence, ...]]:
    """SHARON's optimizer over the queries of its class (cost ``model``): its answer
    and the chosen sub-sequences, in pattern order, each with its queries in workload
    order."""
    queries = [q for q in (seq_query(p) for p in plans) if q is not None]
    if rates is None:
        rates = {t: 1.0 for q in queries for t in q.types}
    chosen = optimize(queries, rates, convention=model)
    return chosen, sequences_of(plans, chosen.graph, chosen.chosen)


def sequences_of(
    plans: list[QueryPlan], graph: Any, vertices: Sequence[int]
) -> tuple[SharedSequence, ...]:
    """The candidates ``vertices`` of a SHARON graph (an optimizer's plan: SHARON's, or
    GWMIN's ``greedy``) as the plan's shared sub-sequences, each with its BValue and its
    queries in workload order."""
    order = {p.name: i for i, p in enumerate(plans)}
    return tuple(
        SharedSequence(
            graph.vertices[v].pattern,
            tuple(sorted(graph.vertices[v].queries, key=order.__getitem__)),
            graph.weights[v],
        )
        for v in vertices
    )


def _compiled_bursts(
    plans: list[QueryPlan], queries: list[int], decision: str
) -> list[KleeneBurst]:
    """The kernel's sharing sets: the states with a self-loop (E+) of queries of one
    partitioning, in the order the queries name them, with each member's binding rule."""
    groups: dict[tuple[str, object], list[int]] = {}
    for q in queries:
        plan = plans[q]
        layout = partition_layout(plan)
        for t in plan.template.transitions:
            # a burst is a list of one partition's events: not of a type that a template
            # partition's events join (qualified attributes, see _unnested)
            full = len(plan.vars[t.src].partition_positions) == len(plan.partition_attrs)
            if t.src == t.dst and full and t.src not in edged_variables(plan):
                groups.setdefault((plan.vars[t.src].type, layout), []).append(q)
    bursts = []
    for (kleene, _), qs in groups.items():
        if len(qs) < 2:
            continue
        part = tuple(sorted(a.text for a in plans[qs[0]].partition_attrs))
        members = tuple((plans[q].name, plans[q].type_to_var[kleene]) for q in qs)
        pane = pane_length([d for q in qs for d in (plans[q].window.within, plans[q].window.slide)])
        rules = tuple(_rule_text(binding_rule(plans[q], kleene)) for q in qs)
        bursts.append(KleeneBurst(kleene, members, part, pane, decision, "compiled", rules))
    return bursts


def _rule_text(rule: tuple[object, ...]) -> str:
    _, required, texts = rule
    parts = []
    if required:
        parts.append("has " + ", ".join(required))  # type: ignore[arg-type]
    parts += list(texts)  # type: ignore[call-overload]
    return " AND ".join(parts) or "every event"
