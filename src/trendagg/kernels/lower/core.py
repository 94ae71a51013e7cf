"""Core states and registers: per query its window, partitioning, grouping, states,
registers and bindings; the state classes (states of different queries whose registers
are equal by construction, kept once) with their register blocks; the result blocks;
the bindings by event type; the roles of types per partitioning.

Per partition instance the state is one row of int64 residues: per state class, per
window slot, its additive registers times the lanes; minima and maxima are float64.

An attribute that holds integers and decimals both (``mixed``) gets hidden
registers, since an output shows its own kind (docs/semantics.md: integer sums are
exact integers): per SUM over it one more additive register, fed by the
hidden weight column ``a#decimals`` (1 where the value is a decimal, else
0), which counts the decimal occurrences in a window's trends (more than 0:
the sum is a decimal); per MIN or MAX over it one more extreme, fed by the
hidden extreme column ``a#integers`` (the value where it is an integer, NaN
where not), the extreme of its integers (equal to the extreme: it is an
integer). Minima come before maxima, hidden ones included; a query's
:class:`~trendagg.kernels.lower.builder.Readout` says where each register of its layout
and each hidden one lives. An attribute of one kind gets none.

A minimum or maximum register is a float64: the value itself, exact for
decimals and for integers up to 2**53. An attribute whose MIN/MAX values are
words or integers beyond 2**53 (any size) is read as order-preserving codes
instead: the executor keeps its sorted distinct values (those of the open
windows and of the chunk) and a register holds a value's rank, which the
kernel compares as it compares numbers; a chunk that brings new values
renumbers the live registers of that attribute (monotonically, so every
minimum stays a minimum), and a row reads the rank back as its value. Numbers
rank before words (a word never meets a number where the Python engines give a
result: they stop at such a comparison). The layout is the same: the codes
live in the registers the values would.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np

from trendagg.kernels.edges import edge_conditions
from trendagg.kernels.lower.builder import (
    NEGATION_FIELDS,
    Builder,
    Partitioning,
    Readout,
    blocks,
    csr,
    i64,
    index_of,
)
from trendagg.kernels.lower.edges import edge_keys
from trendagg.optimizer.plan import partition_layout
from trendagg.plan.compile import QueryPlan
from trendagg.plan.template import Template

if TYPE_CHECKING:
    from trendagg.kernels.lower.program import Lowered

HIDDEN = "#"  # joins an attribute and a hidden column's role; no attribute name has it
#: The extreme column of an event's time group (a global ordinal, exact as a float64): the
#: one register of a negative sub-pattern, the latest start of its matches
TIME_GROUP = HIDDEN + "tg"


def hidden(attr: str, role: str) -> str:
    """The name of a hidden column of ``attr``: role ``decimals`` or ``integers``."""
    return f"{attr}{HIDDEN}{role}"


def source(name: str) -> tuple[str, str]:
    """The attribute a weight or extreme column reads, and its hidden role ('' if none)."""
    attr, _, role = name.partition(HIDDEN)
    return attr, role


def queries(b: Builder) -> None:
    """Pass: the window, partitioning, grouping, states and registers of every query."""
    for qi, plan in enumerate(b.plans):
        add_query(b, qi, plan)


def add_query(b: Builder, qi: int, plan: QueryPlan) -> None:
    """Window, partitioning, grouping, states and registers of query ``qi``."""
    q = b.q
    spec = plan.window
    if spec not in b.specs:
        b.specs.append(spec)
    q["q_spec"].append(b.specs.index(spec))
    attrs, qualified = partition_layout(plan)
    g = next(
        (i for i, pt in enumerate(b.parts) if (pt.attrs, pt.qualified) == (attrs, qualified)),
        None,
    )
    if g is None:
        b.parts.append(Partitioning(attrs, qualified))
        g = len(b.parts) - 1
    b.parts[g].queries.append(qi)
    q["q_part"].append(g)
    positions = tuple(attrs.index(a.name) for a in plan.group_attrs)
    b.query_groups.append(positions)
    if positions not in b.parts[g].groupings:
        b.parts[g].groupings.append(positions)
        b.grouping_of.append((g, len(b.parts[g].groupings) - 1))
    q["q_gsel"].append(b.parts[g].groupings.index(positions))
    q["q_grouping"].append(b.grouping_of.index((g, q["q_gsel"][-1])))
    for name in NEGATION_FIELDS:
        q[name].append(-1)
    sums, exts, n_add, nmin = registers(b, plan)
    states(b, qi, plan, plan.template, sums, exts, (n_add, nmin))


def states(
    b: Builder,
    qi: int,
    plan: QueryPlan,
    template: Template,
    sums: list[tuple[str, int, int]],
    exts: list[tuple[str, int, int]],
    sizes: tuple[int, int],
) -> None:
    """The states of ``template`` (of ``plan``) as those of query ``qi``, with their
    predecessors, registers (sum and extreme registers per variable, the numbers of
    additive registers and of minima) and bindings."""
    q = b.q
    spec = b.specs[q["q_spec"][qi]]
    names = list(template.states)
    b.query_names.append(plan.name)
    b.state_names.append(names)
    q["q_soff"].append(len(b.preds))
    q["q_S"].append(len(names))
    q["q_A"].append(sizes[0])
    q["q_M"].append(len(exts))
    q["q_nmin"].append(sizes[1])
    q["q_NS"].append(math.ceil(spec.within / spec.slide) + 1)
    q["q_start"].append(names.index(template.start))
    q["q_end"].append(names.index(template.end))
    counted = plan.layout.count_vars
    edges, guards = edge_conditions(plan)
    for s, var in enumerate(names):
        gs = len(b.preds)
        for t in template.transitions:
            if t.dst == var and (t.src, var) in edges:
                b.edges.setdefault(gs, []).append((names.index(t.src), edges[(t.src, var)]))
                if (t.src, var) in plan.edge_indexes and t.negation is None:
                    b.indexable.add((gs, names.index(t.src)))
        if var in guards:
            b.guards[gs] = guards[var]
        b.preds.append(sorted({names.index(t.src) for t in template.transitions if t.dst == var}))
        b.cnt.append([1 + i for i, v in enumerate(counted) if v == var])
        b.sums.append([(reg, w) for v, reg, w in sums if v == var])
        b.exts.append([(reg, a) for v, reg, a in exts if v == var])
        b.bindings.append((qi, s, b.filter_of(plan, var), plan.vars[var].type))


def registers(
    b: Builder, plan: QueryPlan
) -> tuple[list[tuple[str, int, int]], list[tuple[str, int, int]], int, int]:
    """The sum registers (variable, register, weight) and the extremes (variable,
    register, extreme column) of a query, hidden ones included (see the module
    docstring), its number of additive registers and of minima; and its
    :class:`Readout`, in ``readouts``."""
    lay = plan.layout
    summed = {
        (o.aggregate.var, o.aggregate.attr)
        for o in plan.outputs
        if o.aggregate is not None and o.aggregate.func == "SUM"
    }  # an AVG is a decimal whatever the kind of its sum
    sums, readout_sums = [], []
    hidden_reg = lay.n_additive
    for j, (var, attr) in enumerate(lay.sums):
        reg, w, dec = 1 + len(lay.count_vars) + j, index_of(b.weights, attr), -1
        sums.append((var, reg, w))
        if attr in b.mixed and (var, attr) in summed:
            dec, hidden_reg = hidden_reg, hidden_reg + 1
            sums.append((var, dec, index_of(b.weights, hidden(attr, "decimals"))))
        readout_sums.append((reg, w, dec))
    exts: list[tuple[str, int, int]] = []
    readout_exts: list[tuple[int, int, int]] = []
    nmin = 0
    for i, block in enumerate((lay.mins, lay.maxs)):
        start = len(exts)
        exts += [(v, start + j, index_of(b.extremes, a)) for j, (v, a) in enumerate(block)]
        for j, (var, attr) in enumerate(block):
            ints = -1
            if attr in b.mixed:
                ints = len(exts)
                exts.append((var, ints, index_of(b.extremes, hidden(attr, "integers"))))
            readout_exts.append((start + j, exts[start + j][2], ints))
        if i == 0:
            nmin = len(exts)
    columns = [a for _, a in sorted((reg, a) for _, reg, a in exts)]
    b.readouts.append(Readout(tuple(readout_sums), tuple(readout_exts), tuple(columns)))
    return sums, exts, hidden_reg, nmin


def _state_classes(
    keys_of: list[tuple[object, ...]],
    q_S: list[int],
    q_soff: list[int],
    q_start: list[int],
    preds: list[list[int]],
    bindings: list[tuple[int, int, int, str]],
    cnt: list[list[int]],
    sums: list[list[tuple[int, int]]],
    exts: list[list[tuple[int, int]]],
    merge: bool,
    negs: dict[int, list[tuple[int, int, int]]] | None = None,
    edges: dict[int, list[tuple[int, str]]] | None = None,
) -> tuple[list[int], list[tuple[int, int]]]:
    """The class of every (query, state) (indexed like ``preds``) and each class's first member.

    Two states are merged when their registers are equal by construction: same
    window, partitioning and register layout, same event type and filter, both
    the start or neither, both with a self-loop or neither, what each of its
    events adds to its own registers the same, and predecessors (other than
    itself) of the same classes, recursively. A state on a cycle through other
    states (nested Kleene) is never merged. A state that a negation changes
    (``negs``, by global state index: the source state, in its query, that it
    reads through a queue, or -1 for a start that a leading NOT blocks; the
    negative query; its END state; see :func:`~trendagg.kernels.lower.negation.negations`)
    is merged only with states changed alike: the same sources through negative queries
    of the same classes. A state with NEXT conditions or guards (``edges``, by global
    state index: (source state, conditions as text; -1: the guards)) is merged only
    with states whose conditions are the same on transitions from the same classes,
    and a state whose vertices such a condition reads (a source, whose vertices are
    logged one by one) only with states that are sources too.
    """
    negs = negs or {}
    edges = edges or {}
    owner = [qi for qi in range(len(q_S)) for _ in range(q_S[qi])]
    logged = {
        q_soff[owner[gs]] + src for gs, items in edges.items() for src, _ in items if src >= 0
    }
    qs_c = [-1] * len(preds)
    reps: list[tuple[int, int]] = []
    index: dict[tuple[object, ...], int] = {}

    def visit(qi: int, s: int, path: frozenset[int]) -> int:
        gs = q_soff[qi] + s
        if qs_c[gs] >= 0:
            return qs_c[gs]
        others = [src for src in preds[gs] if src != s]
        key: tuple[object, ...]
        if not merge or any(q_soff[qi] + src in path for src in others):
            key = ("alone", qi, s)
        else:
            below = tuple(sorted(visit(qi, src, path | {gs}) for src in others))
            if any(qs_c[q_soff[qi] + src] < 0 for src in others):
                key = ("alone", qi, s)  # a cycle below: not settled
            else:
                f, typ = bindings[gs][2], bindings[gs][3]
                negated = tuple(
                    sorted(
                        (
                            visit(qi, src, path | {gs}) if src >= 0 else -1,
                            visit(n, n_end, path | {gs}),
                        )
                        for src, n, n_end in negs.get(gs, ())
                    )
                )
                edged = tuple(
                    sorted(
                        (
                            -2 if src < 0 else -1 if src == s else visit(qi, src, path | {gs}),
                            text,
                        )
                        for src, text in edges.get(gs, ())
                    )
                )
                key = (
                    edged,
                    gs in logged,
                    keys_of[qi],
                    typ,
                    f,
                    s == q_start[qi],
                    s in preds[gs],
                    tuple(cnt[gs]),
                    tuple(sums[gs]),
                    tuple(exts[gs]),
                    below,
                    negated,
                )
        c = index.get(key)
        if c is None:
            c = index[key] = len(reps)
            reps.append((qi, s))
        qs_c[gs] = c
        return c

    for qi in range(len(keys_of)):
        for s in range(q_S[qi]):
            visit(qi, s, frozenset())
    return qs_c, reps


def classes(b: Builder) -> None:
    """Pass: state classes with their register blocks in an instance row (NS window slots
    of A registers, times the lanes, M extremes and one window key each), the classes
    that emit each query's END, the classes some state reads, and the result blocks."""
    q = b.q
    n_all = len(q["q_spec"])
    keys_of: list[tuple[object, ...]] = [
        (q["q_spec"][qi], q["q_part"][qi], q["q_A"][qi], q["q_M"][qi], q["q_nmin"][qi])
        if qi not in b.on_gloria
        else ("member", qi)  # (its states are never bound here: merged with none)
        for qi in range(n_all)
    ]
    qs_c, reps = _state_classes(
        keys_of,
        q["q_S"],
        q["q_soff"],
        q["q_start"],
        b.preds,
        b.bindings,
        b.cnt,
        b.sums,
        b.exts,
        b.merge,
        b.negs,
        edge_keys(b),
    )
    b.qs_c, b.reps = qs_c, reps
    b.members = [[] for _ in reps]
    for qi in range(n_all):
        for s, var in enumerate(b.state_names[qi]):
            b.members[qs_c[q["q_soff"][qi] + s]].append((b.query_names[qi], var))
    c_A = [q["q_A"][qi] for qi, _ in reps]
    c_M = [q["q_M"][qi] for qi, _ in reps]
    c_NS = [q["q_NS"][qi] for qi, _ in reps]
    c_toff, c_eoff, c_koff, b.widths = blocks(
        [
            [c for c, (qi, _) in enumerate(reps) if q["q_part"][qi] == g]
            for g in range(len(b.parts))
        ],
        c_NS,
        c_A,
        c_M,
        ("tot", "ext", "keys"),
    )
    c_end_lists: list[list[int]] = [[] for _ in reps]
    for qi in range(n_all):
        c_end_lists[qs_c[q["q_soff"][qi] + q["q_end"][qi]]].append(qi)
    c_end_ptr, c_end_q = csr(c_end_lists)
    # a class no state reads (an END without successors) keeps no registers: its
    # vertices only add to the results. A negative query's END signals its parent
    # after the time group's inserts (a between-NOT's match ending at t still lets
    # an event at t read the vertices it prunes), so it is inserted, as read ones are.
    c_read = [0] * len(reps)
    for qi in range(n_all):
        if q["q_nkind"][qi] >= 0:
            c_read[qs_c[q["q_soff"][qi] + q["q_end"][qi]]] = 1
        for s in range(q["q_S"][qi]):
            for src in b.preds[q["q_soff"][qi] + s]:
                c_read[qs_c[q["q_soff"][qi] + src]] = 1
    # one binding per class: its representative's (the others would add twice)
    rep_of = set(reps)
    b.bindings = [bd if (bd[0], bd[1]) in rep_of else (-1, *bd[1:]) for bd in b.bindings]
    # per-grouping offsets of each query's result block in a group row
    q_roff, q_reoff, q_rkoff, b.group_widths = blocks(
        [[qi for qi in b.parts[g].queries if q["q_gsel"][qi] == sel] for g, sel in b.grouping_of],
        q["q_NS"],
        q["q_A"],
        q["q_M"],
        ("res", "ext", "keys"),
    )
    b.tables.update(
        qs_c=i64(qs_c),
        c_toff=i64(c_toff),  # scaled by the lanes in State
        c_eoff=i64(c_eoff),
        c_koff=i64(c_koff),
        c_A=i64(c_A),
        c_M=i64(c_M),
        c_NS=i64(c_NS),
        c_spec=i64([q["q_spec"][qi] for qi, _ in reps]),
        c_read=i64(c_read),
        c_end_ptr=c_end_ptr,
        c_end_q=c_end_q,
        q_roff=i64(q_roff),  # scaled by the lanes in State
        q_reoff=i64(q_reoff),
        q_rkoff=i64(q_rkoff),
    )


def type_bindings(b: Builder) -> None:
    """Pass: per event type the bindings (query, state, filter, sharing set) it makes."""
    set_of_binding = {(qi, s): k for k, (*_, members) in enumerate(b.sets) for qi, s in members}
    ty_lists: list[list[int]] = [[] for _ in range(b.n_types)]
    for bi, (qi, _, _, typ) in enumerate(b.bindings):
        if qi >= 0 and qi not in b.on_gloria:
            ty_lists[b.tcode[typ]].append(bi)
    ty_ptr, ty_bind = csr(ty_lists)
    b.tables.update(
        ty_ptr=ty_ptr,
        ty_bind=ty_bind,
        b_q=i64([qi for qi, _, _, _ in b.bindings]),
        b_s=i64([s for _, s, _, _ in b.bindings]),
        b_f=i64([b.rule(f) for _, _, f, _ in b.bindings]),
        b_set=i64([set_of_binding.get((qi, s), -1) for qi, s, _, _ in b.bindings]),
    )


def _repeatable(template: Template) -> set[str]:
    """The variables that one trend (or match of a negative sub-pattern) may bind more
    than once (on a cycle of the template)."""
    succ: dict[str, set[str]] = {}
    for t in template.transitions:
        succ.setdefault(t.src, set()).add(t.dst)
    out = set()
    for var in template.states:
        seen: set[str] = set()
        todo = list(succ.get(var, ()))
        while todo:
            x = todo.pop()
            if x == var:
                out.add(var)
                break
            if x not in seen:
                seen.add(x)
                todo.extend(succ.get(x, ()))
    return out


def roles(b: Builder) -> None:
    """Pass: part_role: 1 for a type some query of the partitioning binds, 2 when some
    query may bind several events of it in one trend (the lane bound, _rns); the window
    specs of each partitioning and their slots in the window-event counts."""
    plans, q = b.plans, b.q
    templates = [(p, t) for p in plans for t in p.template.all_templates()]
    reps = [_repeatable(t) for _, t in templates]
    repeatable = {p.vars[v].type for (p, _), r in zip(templates, reps, strict=True) for v in r}
    # a negative sub-pattern's matches are counted too (whether it has one is exact)
    b.singles = max(
        (len(t.states) - len(r) for (_, t), r in zip(templates, reps, strict=True)), default=0
    )
    part_role = np.zeros((len(b.parts), b.n_types), dtype=np.int64)
    part_sp_lists: list[list[int]] = []
    for g, pt in enumerate(b.parts):
        sps: list[int] = []
        for qi in pt.queries:
            for v in plans[qi].vars.values():
                part_role[g, b.tcode[v.type]] = 2 if v.type in repeatable else 1
            index_of(sps, q["q_spec"][qi])
        part_sp_lists.append(sps)
    part_sp_ptr, part_sp = csr(part_sp_lists)
    sp_NS = [
        0 if lazy else math.ceil(s.within / s.slide) + 1
        for s, lazy in zip(b.specs, b.lazy, strict=True)
    ]
    b.widths["m"] = max(sum(sp_NS), 1)
    b.tables.update(
        part_role=part_role,
        part_sp_ptr=part_sp_ptr,
        part_sp=part_sp,
        sp_NS=i64(sp_NS),
        sp_moff=i64([int(x) for x in np.cumsum([0] + sp_NS[:-1])]),
        # 1: an event may be processed in more instances than its own (qualified)
        part_x=i64([1 if pt.qualified else 0 for pt in b.parts]),
    )


def register_tables(b: Builder) -> None:
    """Pass: per state, the registers its events add to (counts, sums with their weight
    column, extremes with their extreme column)."""
    cnt_ptr, cnt_reg = csr(b.cnt)
    sum_ptr, sum_reg = csr([[r for r, _ in row] for row in b.sums])
    _, sum_w = csr([[w for _, w in row] for row in b.sums])
    ext_ptr, ext_reg = csr([[r for r, _ in row] for row in b.exts])
    _, ext_a = csr([[a for _, a in row] for row in b.exts])
    b.tables.update(
        cnt_ptr=cnt_ptr,
        cnt_reg=cnt_reg,
        sum_ptr=sum_ptr,
        sum_reg=sum_reg,
        sum_w=sum_w,
        ext_ptr=ext_ptr,
        ext_reg=ext_reg,
        ext_a=ext_a,
    )


def shared_classes(low: Lowered) -> list[str]:
    """The state classes of several states (their registers kept once), as explain prints
    them: ``{q1.T, q2.T}``, in the order of their first member."""
    return [class_text(members) for members in low.class_members if len(members) > 1]


def class_text(members: list[tuple[str, str]]) -> str:
    """A state class as explain prints it: its (query, variable)s, ``{q1.T, q2.T}``."""
    return "{" + ", ".join(f"{q}.{v}" for q, v in members) + "}"
