"""A validated query compiled to what every strategy executes.

``compile_query`` turns the AST into a :class:`QueryPlan`: the GRETA template
(with nested negative templates), per-variable binding rules (type, local
predicates, attributes that must be present, applicable partition
attributes), edge predicates per transition, partition and group attributes,
the window and the aggregate registers. Strategies never look at the AST
again; they share this one reading of docs/semantics.md.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from trendagg.io.values import shown
from trendagg.language import ast
from trendagg.language.analysis import negated_variables, pattern_variables
from trendagg.plan.edge_index import EdgeIndex, edge_index
from trendagg.plan.layout import AggLayout
from trendagg.plan.predicates import (
    LocalPredicate,
    PredFn,
    bool_refs,
    classify,
    numeric_attrs,
)
from trendagg.plan.template import Template, Transition, build_template
from trendagg.plan.windows import WindowSpec


@dataclass(frozen=True)
class VarInfo:
    """How an event gets bound to a variable (docs/semantics.md, Predicates and Partitions)."""

    var: str
    type: str
    positive: bool
    local: tuple[LocalPredicate, ...]
    required: frozenset[str]
    partition_positions: tuple[int, ...]

    def accepts(self, attrs: Mapping[str, object]) -> bool:
        """True when the event has every attribute read on this variable and passes its local predicates."""
        for name in self.required:
            if attrs.get(name) is None:
                return False
        return all(p(attrs) for p in self.local)


@dataclass(frozen=True)
class Output:
    """One output column: a group attribute or an aggregate."""

    name: str
    group_position: int | None  # index into QueryPlan.group_attrs, or None for an aggregate
    aggregate: ast.Aggregate | None


@dataclass(frozen=True)
class QueryPlan:
    """Everything a strategy needs to evaluate one query."""

    name: str
    query: ast.Query
    template: Template
    vars: dict[str, VarInfo]
    type_to_var: dict[str, str]
    edges: dict[tuple[str, str], tuple[PredFn, ...]]
    guards: dict[str, tuple[PredFn, ...]]
    partition_attrs: tuple[ast.PartAttr, ...]
    group_attrs: tuple[ast.PartAttr, ...]
    group_positions: tuple[int, ...]
    group_names: tuple[str, ...]
    window: WindowSpec
    layout: AggLayout
    outputs: tuple[Output, ...]
    numeric: dict[str, frozenset[str]] = field(default_factory=dict)
    edge_conditions: tuple[tuple[str, ast.BoolExpr], ...] = ()  # ("T -> T" or "* -> T", condition)
    # transitions whose edge predicates are one indexable condition: key(x) op query(y)
    edge_indexes: dict[tuple[str, str], EdgeIndex] = field(default_factory=dict)

    def describe(self) -> str:
        """The compiled template and rules, as ``trendagg check`` prints them."""
        from trendagg.language import to_text

        lines = [f"query {self.name}:", "  template:", self.template.describe("    ")]
        lines.append("  variables:")
        for v in self.vars.values():
            sign = "+" if v.positive else "-"
            local = "; ".join(to_text(p.condition) for p in v.local) or "none"
            parts = ", ".join(self.partition_attrs[i].text for i in v.partition_positions) or "none"
            lines.append(
                f"    {sign}{v.var}: type {v.type}; local: {local}; "
                f"partition by: {parts}; requires: {', '.join(sorted(v.required)) or 'nothing'}"
            )
        if self.edge_conditions:
            lines.append("  edge predicates:")
            indexable = [ix.condition for ix in self.edge_indexes.values()]
            for pair, condition in self.edge_conditions:
                # an ordered index answers it (unless a NOT lies on the transition)
                mark = " [indexable]" if any(c is condition for c in indexable) else ""
                lines.append(f"    {pair}: {to_text(condition)}{mark}")
        lines.append(
            f"  partition: [{', '.join(a.text for a in self.partition_attrs)}]"
            f"  group: [{', '.join(a.text for a in self.group_attrs)}]"
        )
        w = self.window
        lines.append(f"  window: within {w.within} s, slide {w.slide} s, pane {w.pane} s")
        lines.append(f"  outputs: {', '.join(o.name for o in self.outputs)}")
        return "\n".join(lines)


def compile_query(query: ast.Query) -> QueryPlan:
    """Compile one query that :func:`trendagg.language.validate` accepted."""
    template = build_template(query.pattern)
    negative = negated_variables(query.pattern)
    leaves = pattern_variables(query.pattern)
    partition = _partition_attrs(query)
    keys = [(a.var, a.name) for a in partition]
    rules = _where_rules(query, leaves)
    layout, outputs, group_names = _aggregates(query, leaves, rules)
    vars_info = _variables(leaves, negative, partition, rules)
    within = query.within.seconds
    slide = query.slide.seconds if query.slide is not None else within
    return QueryPlan(
        name=query.name,
        query=query,
        template=template,
        vars=vars_info,
        type_to_var={info.type: info.var for info in vars_info.values()},
        edges={k: tuple(v) for k, v in rules.edges.items()},
        guards={k: tuple(v) for k, v in rules.guards.items()},
        partition_attrs=tuple(partition),
        group_attrs=tuple(query.group_by),
        group_positions=tuple(keys.index((a.var, a.name)) for a in query.group_by),
        group_names=tuple(group_names.get(a.text, a.text) for a in query.group_by),
        window=WindowSpec(within, slide),
        layout=layout,
        outputs=tuple(outputs),
        numeric={t: frozenset(a) for t, a in rules.numeric.items()},
        edge_conditions=tuple(rules.edge_conditions),
        edge_indexes={
            pair: found[0]
            for pair, found in rules.indexable.items()
            if len(found) == 1 and found[0] is not None
        },
    )


# The aggregates that add their values, so read them as numbers. MIN and MAX do not:
# they rank numbers before words (plan.layout.before), so a word among the numbers is a
# value of theirs, the same from every reader and engine (README, "Semantics, in short").
_ADDING = ("SUM", "AVG")


@dataclass
class _Rules:
    """What WHERE and RETURN ask of the events of each variable, gathered clause by clause."""

    local: dict[str, list[LocalPredicate]]
    required: dict[str, set[str]]  # attributes an event must have to be bound
    numeric: dict[str, set[str]] = field(default_factory=dict)  # type -> attributes read as numbers
    edges: dict[tuple[str, str], list[PredFn]] = field(default_factory=dict)
    indexable: dict[tuple[str, str], list[EdgeIndex | None]] = field(default_factory=dict)
    guards: dict[str, list[PredFn]] = field(default_factory=dict)  # edge predicates "* -> T"
    edge_conditions: list[tuple[str, ast.BoolExpr]] = field(default_factory=list)


def _partition_attrs(query: ast.Query) -> list[ast.PartAttr]:
    """The partition attributes: the equivalence lists, then GROUP-BY, without repeats."""
    partition: list[ast.PartAttr] = []
    seen: set[tuple[str | None, str]] = set()
    for cond in query.where:
        if isinstance(cond, ast.Equivalence):
            for a in cond.attrs:
                if (a.var, a.name) not in seen:
                    seen.add((a.var, a.name))
                    partition.append(a)
    for a in query.group_by:
        if (a.var, a.name) not in seen:
            seen.add((a.var, a.name))
            partition.append(a)
    return partition


def _where_rules(query: ast.Query, leaves: Mapping[str, ast.EventPattern]) -> _Rules:
    """The conditions of WHERE (equivalences aside) as local predicates of one variable, edge
    predicates of a transition (and whether an ordered index answers them) or guards, with
    the attributes they require and read as numbers."""
    rules = _Rules(local={v: [] for v in leaves}, required={v: set() for v in leaves})
    for cond in query.where:
        if isinstance(cond, ast.Equivalence):
            continue
        for ref in bool_refs(cond):
            rules.required[ref.var].add(ref.name)
        for var, attr in numeric_attrs(cond):
            rules.numeric.setdefault(leaves[var].type, set()).add(attr)
        pred = classify(cond)
        if isinstance(pred, LocalPredicate):
            rules.local[pred.var].append(pred)
            continue
        # validate() already refused edge predicates between never-adjacent variables
        rules.edge_conditions.append((f"{pred.src or '*'} -> {pred.dst}", cond))
        if pred.src is None:
            rules.guards.setdefault(pred.dst, []).append(pred.fn)
            continue
        rules.edges.setdefault((pred.src, pred.dst), []).append(pred.fn)
        rules.indexable.setdefault((pred.src, pred.dst), []).append(edge_index(cond))
    return rules


def _aggregates(
    query: ast.Query, leaves: Mapping[str, ast.EventPattern], rules: _Rules
) -> tuple[AggLayout, list[Output], dict[str, str]]:
    """The register layout and output columns of RETURN, and the name each GROUP-BY attribute
    is returned under; the attributes that aggregates read are added to ``rules``."""
    count_vars: list[str] = []
    sums: list[tuple[str, str]] = []
    mins: list[tuple[str, str]] = []
    maxs: list[tuple[str, str]] = []
    outputs: list[Output] = []
    group_texts = [a.text for a in query.group_by]
    group_names: dict[str, str] = {}
    for item in query.returns:
        expr = item.expr
        if isinstance(expr, ast.PartAttr):
            outputs.append(Output(item.name, group_texts.index(expr.text), None))
            group_names.setdefault(expr.text, item.name)
            continue
        outputs.append(Output(item.name, None, expr))
        if expr.var is None:
            continue
        if expr.attr is not None:
            rules.required[expr.var].add(expr.attr)
        if expr.attr is not None and expr.func in _ADDING:
            rules.numeric.setdefault(leaves[expr.var].type, set()).add(expr.attr)
        if expr.func in ("COUNT", "AVG") and expr.var not in count_vars:
            count_vars.append(expr.var)
        if expr.attr is None:
            continue
        key = (expr.var, expr.attr)
        target = {"SUM": sums, "AVG": sums, "MIN": mins, "MAX": maxs}.get(expr.func)
        if target is not None and key not in target:
            target.append(key)
    layout = AggLayout(tuple(count_vars), tuple(sums), tuple(mins), tuple(maxs))
    return layout, outputs, group_names


def _variables(
    leaves: Mapping[str, ast.EventPattern],
    negative: set[str],
    partition: list[ast.PartAttr],
    rules: _Rules,
) -> dict[str, VarInfo]:
    """Each variable's binding rule; a partition attribute applies to (and is required of)
    every variable when unqualified, else to the variable that qualifies it."""
    vars_info: dict[str, VarInfo] = {}
    for var, leaf in leaves.items():
        positions = tuple(i for i, a in enumerate(partition) if a.var is None or a.var == var)
        vars_info[var] = VarInfo(
            var=var,
            type=leaf.type,
            positive=var not in negative,
            local=tuple(rules.local[var]),
            required=frozenset(rules.required[var] | {partition[i].name for i in positions}),
            partition_positions=positions,
        )
    return vars_info


def binding_rule(plan: QueryPlan, type_: str) -> tuple[object, ...]:
    """What binds an event of ``type_`` to its variable: type, required attributes and
    local predicates (as text), the key of one compiled filter."""
    from trendagg.language import to_text

    info = plan.vars[plan.type_to_var[type_]]
    texts = tuple(sorted(to_text(p.condition) for p in info.local))
    return (info.type, tuple(sorted(info.required)), texts)


def compile_workload(workload: ast.Workload) -> list[QueryPlan]:
    """Compile every query of a validated workload."""
    return [compile_query(q) for q in workload.queries]


def attributes_read(plans: list[QueryPlan]) -> set[str]:
    """Every attribute name some query reads (partitioning, WHERE, GROUP-BY, RETURN): what a
    reader must keep of the input's other columns."""
    names: set[str] = set()

    def visit(node: object) -> None:
        if isinstance(node, ast.Attr | ast.PartAttr):
            names.add(node.name)
        elif isinstance(node, ast.Aggregate):
            if node.attr is not None:
                names.add(node.attr)
        elif isinstance(node, tuple | list):
            for item in node:
                visit(item)
        elif dataclasses.is_dataclass(node) and not isinstance(node, ast.Span | type):
            for f in dataclasses.fields(node):
                visit(getattr(node, f.name))

    for plan in plans:
        visit(plan.query)
    return names


def unknown_attributes(plans: list[QueryPlan], columns: Iterable[str]) -> list[str]:
    """One warning per (query, attribute) that a query reads and no input column holds:
    per the contract its events are dropped, and a misspelt name is the usual cause."""
    have = set(columns)
    lines = []
    for plan in plans:
        for name in sorted(attributes_read([plan]) - have):
            lines.append(
                f"warning: query '{shown(plan.name)}' reads attribute '{shown(name)}', which no input row "
                f"has: the events that need it are dropped (a misspelt name?)"
            )
    return lines


def numeric_requirements(plans: list[QueryPlan]) -> dict[str, set[str]]:
    """Event type -> attributes some query reads as numbers (for rejecting input rows)."""
    out: dict[str, set[str]] = {}
    for plan in plans:
        for t, attrs in plan.numeric.items():
            out.setdefault(t, set()).update(attrs)
    return out


__all__ = [
    "Output",
    "QueryPlan",
    "Transition",
    "VarInfo",
    "attributes_read",
    "compile_query",
    "compile_workload",
    "numeric_requirements",
    "unknown_attributes",
]
