"""A compiled workload lowered to the arrays the kernel loops over.

:func:`lower` takes the queries the kernel supports (:func:`supported`: no
negation, no edge predicates, unqualified partition attributes) and lays out
their templates, aggregate registers, bindings (event type -> (query, state,
filter)), sharing sets (HAMLET: queries with the same Kleene type E+, the
same partitioning and the same binding rule for E) and window specs as
integer arrays (a :class:`Program`). Per partition instance the state is
one row of int64 residues: per query, per window slot, per state, its
additive registers times the lanes; minima and maxima are float64.
"""

from __future__ import annotations

import math
from collections import namedtuple
from dataclasses import dataclass, field
from fractions import Fraction

import numpy as np

from trendagg.language import to_text
from trendagg.plan.compile import QueryPlan
from trendagg.plan.windows import WindowSpec, pane_length

Program = namedtuple(
    "Program",
    "q_spec q_part q_S q_A q_M q_nmin q_NS q_start q_end qs_c c_toff c_eoff c_koff c_A c_M c_NS "
    "c_spec c_read c_end_ptr c_end_q q_roff q_reoff q_rkoff q_gsel q_grouping q_soff pred_ptr pred_src cnt_ptr cnt_reg sum_ptr sum_reg sum_w "
    "ext_ptr ext_reg ext_a ty_ptr ty_bind b_q b_s b_f b_set set_part set_role set_f set_q_ptr "
    "set_q set_s set_nw set_wcol set_wmap set_na set_acol set_amap set_boff set_bfoff part_role "
    "part_sp_ptr part_sp sp_NS sp_moff",
)


def supported(plan: QueryPlan, events: object = None) -> str | None:
    """Why the kernel cannot run this query (it then runs in the Python engine), or None.

    With ``events`` (a ColumnarBatch), also refuse a query whose summed or
    compared-for-extremes attribute mixes integers and decimals there: the Python
    engine keeps each value's own kind in the output.
    """
    if events is not None:
        lay = plan.layout
        for _, attr in (*lay.sums, *lay.mins, *lay.maxs):
            col = events.columns.get(attr)  # type: ignore[attr-defined]
            if col is not None and col.kind not in ("int", "float"):
                return f"attribute {attr} mixes kinds of values"
    if plan.template.negations:
        return "negation"
    if plan.edges or plan.guards:
        return "edge predicates"
    if any(a.var is not None for a in plan.partition_attrs):
        return "qualified partition attributes"
    return None


@dataclass
class Filter:
    """The binding rule of a variable: its type, required attributes, local predicates."""

    type_: str
    required: tuple[str, ...]
    predicates: tuple[object, ...]  # LocalPredicate objects
    key: tuple[object, ...]


@dataclass
class Partitioning:
    attrs: tuple[str, ...]  # sorted partition attribute names
    queries: list[int] = field(default_factory=list)
    groupings: list[tuple[int, ...]] = field(default_factory=list)  # positions into attrs


@dataclass
class Lowered:
    """A program and what the Python side needs around it."""

    plans: list[QueryPlan]
    program: Program
    types: list[str]  # type code -> name (code len(types): every other type)
    specs: list[WindowSpec]
    panes: list[Fraction]  # per sharing set
    partitionings: list[Partitioning]
    grouping_of: list[tuple[int, int]]  # global grouping id -> (partitioning, index)
    filters: list[Filter]
    weights: list[str]  # weight column (sum attribute) names
    extremes: list[str]  # MIN/MAX attribute names
    widths: dict[str, int]
    group_widths: dict[str, int]
    query_groups: list[tuple[int, ...]]  # per query: positions of its group attrs in attrs
    singles: int  # the most variables a query binds at most once per trend
    max_additive: int
    max_extreme: int
    set_types: list[str]


def _repeatable(plan: QueryPlan) -> set[str]:
    """The variables that one trend may bind more than once (on a cycle of the template)."""
    succ: dict[str, set[str]] = {}
    for t in plan.template.transitions:
        succ.setdefault(t.src, set()).add(t.dst)
    out = set()
    for var in plan.template.states:
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


def _blocks(
    rows: list[list[int]], ns: list[int], a: list[int], m: list[int], names: tuple[str, str, str]
) -> tuple[list[int], list[int], list[int], dict[str, int]]:
    """Offsets of blocks laid side by side in rows: each item i of a row takes ns[i] window
    slots of a[i] registers (times the lanes: scaled() multiplies), of m[i] extremes and of
    one key; and the widest row of each kind, under ``names``."""
    n = len(ns)
    add, ext, key = [0] * n, [0] * n, [0] * n
    widths = dict.fromkeys(names, 1)
    for items in rows:
        t = e = k = 0
        for i in items:
            add[i], ext[i], key[i] = t, e, k
            t += ns[i] * a[i]
            e += ns[i] * m[i]
            k += ns[i]
        for name, used in zip(names, (t, e, k), strict=True):
            widths[name] = max(widths[name], used)
    return add, ext, key, widths


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
) -> tuple[list[int], list[tuple[int, int]]]:
    """The class of every (query, state) (indexed like ``preds``) and each class's first member.

    Two states are merged when their registers are equal by construction: same
    window, partitioning and register layout, same event type and filter, both
    the start or neither, both with a self-loop or neither, what each of its
    events adds to its own registers the same, and predecessors (other than
    itself) of the same classes, recursively. A state on a cycle through other
    states (nested Kleene) is never merged.
    """
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
                key = (
                    keys_of[qi],
                    typ,
                    f,
                    s == q_start[qi],
                    s in preds[gs],
                    tuple(cnt[gs]),
                    tuple(sums[gs]),
                    tuple(exts[gs]),
                    below,
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


def _csr(lists: list[list[int]]) -> tuple[np.ndarray, np.ndarray]:
    ptr = np.zeros(len(lists) + 1, dtype=np.int64)
    for i, items in enumerate(lists):
        ptr[i + 1] = ptr[i] + len(items)
    flat = np.array([x for items in lists for x in items], dtype=np.int64)
    return ptr, flat


def _i64(values: list[int]) -> np.ndarray:
    return np.array(values, dtype=np.int64)


def lower(plans: list[QueryPlan], merge: bool = False) -> Lowered:
    """Lay out the supported queries ``plans`` (see :func:`supported`).

    Registers are stored per state class: with ``merge``, states of different
    queries whose registers are equal by construction share one class (see
    :func:`_state_classes`); without, every state of every query is its own.
    """
    types: list[str] = []
    for p in plans:
        for v in p.vars.values():
            if v.type not in types:
                types.append(v.type)
    tcode = {t: i for i, t in enumerate(types)}
    n_types = len(types) + 1

    specs: list[WindowSpec] = []
    parts: list[Partitioning] = []
    grouping_of: list[tuple[int, int]] = []
    filters: list[Filter] = []
    weights: list[str] = []
    extremes: list[str] = []
    q_spec, q_part, q_S, q_A, q_M, q_nmin, q_NS, q_start, q_end = ([] for _ in range(9))
    q_gsel, q_grouping, q_soff = [], [], []
    query_groups: list[tuple[int, ...]] = []
    preds: list[list[int]] = []
    cnt: list[list[int]] = []
    sums: list[list[tuple[int, int]]] = []
    exts: list[list[tuple[int, int]]] = []
    bindings: list[tuple[int, int, int, str]] = []  # (q, state, filter, type)
    state_names: list[list[str]] = []

    def filter_of(plan: QueryPlan, var: str) -> int:
        info = plan.vars[var]
        texts = tuple(sorted(to_text(p.condition) for p in info.local))  # type: ignore[attr-defined]
        key = (info.type, tuple(sorted(info.required)), texts)
        for i, f in enumerate(filters):
            if f.key == key:
                return i
        filters.append(Filter(info.type, tuple(sorted(info.required)), tuple(info.local), key))
        return len(filters) - 1

    for qi, plan in enumerate(plans):
        spec = plan.window
        if spec not in specs:
            specs.append(spec)
        q_spec.append(specs.index(spec))
        attrs = tuple(sorted(a.name for a in plan.partition_attrs))
        g = next((i for i, pt in enumerate(parts) if pt.attrs == attrs), None)
        if g is None:
            parts.append(Partitioning(attrs))
            g = len(parts) - 1
        parts[g].queries.append(qi)
        q_part.append(g)
        positions = tuple(attrs.index(a.name) for a in plan.group_attrs)
        query_groups.append(positions)
        if positions not in parts[g].groupings:
            parts[g].groupings.append(positions)
            grouping_of.append((g, len(parts[g].groupings) - 1))
        q_gsel.append(parts[g].groupings.index(positions))
        q_grouping.append(grouping_of.index((g, q_gsel[-1])))
        states = list(plan.template.states)
        state_names.append(states)
        q_soff.append(len(preds))
        q_S.append(len(states))
        lay = plan.layout
        q_A.append(1 + len(lay.count_vars) + len(lay.sums))
        q_M.append(len(lay.mins) + len(lay.maxs))
        q_nmin.append(len(lay.mins))
        q_NS.append(math.ceil(spec.within / spec.slide) + 1)
        q_start.append(states.index(plan.template.start))
        q_end.append(states.index(plan.template.end))
        base = 1 + len(lay.count_vars)
        for s, var in enumerate(states):
            preds.append(
                sorted({states.index(t.src) for t in plan.template.transitions if t.dst == var})
            )
            cnt.append([1 + i for i, v in enumerate(lay.count_vars) if v == var])
            row = []
            for i, (v, a) in enumerate(lay.sums):
                if v == var:
                    if a not in weights:
                        weights.append(a)
                    row.append((base + i, weights.index(a)))
            sums.append(row)
            erow = []
            for i, (v, a) in enumerate(lay.mins):
                if v == var:
                    if a not in extremes:
                        extremes.append(a)
                    erow.append((i, extremes.index(a)))
            for i, (v, a) in enumerate(lay.maxs):
                if v == var:
                    if a not in extremes:
                        extremes.append(a)
                    erow.append((len(lay.mins) + i, extremes.index(a)))
            exts.append(erow)
            info = plan.vars[var]
            bindings.append((qi, s, filter_of(plan, var), info.type))

    # state classes, and per-partitioning offsets of each class's block in an instance
    # row: NS window slots of A registers (times the lanes: scaled() multiplies), M
    # extremes and one window key
    keys_of = [(q_spec[qi], q_part[qi], q_A[qi], q_M[qi], q_nmin[qi]) for qi in range(len(plans))]
    qs_c, reps = _state_classes(
        keys_of, q_S, q_soff, q_start, preds, bindings, cnt, sums, exts, merge
    )
    nc = len(reps)
    c_A = [q_A[qi] for qi, _ in reps]
    c_M = [q_M[qi] for qi, _ in reps]
    c_NS = [q_NS[qi] for qi, _ in reps]
    c_spec = [q_spec[qi] for qi, _ in reps]
    c_toff, c_eoff, c_koff, widths = _blocks(
        [[c for c, (qi, _) in enumerate(reps) if q_part[qi] == g] for g in range(len(parts))],
        c_NS,
        c_A,
        c_M,
        ("tot", "ext", "keys"),
    )
    c_end_lists: list[list[int]] = [[] for _ in range(nc)]
    for qi in range(len(plans)):
        c_end_lists[qs_c[q_soff[qi] + q_end[qi]]].append(qi)
    c_end_ptr, c_end_q = _csr(c_end_lists)
    # a class no state reads (an END without successors) keeps no registers: its
    # vertices only add to the results
    c_read = [0] * nc
    for qi in range(len(plans)):
        for s in range(q_S[qi]):
            for src in preds[q_soff[qi] + s]:
                c_read[qs_c[q_soff[qi] + src]] = 1
    # one binding per class: its representative's (the others would add twice)
    rep_of = {(qi, s) for qi, s in reps}
    bindings = [bd if (bd[0], bd[1]) in rep_of else (-1, *bd[1:]) for bd in bindings]
    # per-grouping offsets of each query's result block in a group row
    q_roff, q_reoff, q_rkoff, group_widths = _blocks(
        [[qi for qi in parts[g].queries if q_gsel[qi] == sel] for g, sel in grouping_of],
        q_NS,
        q_A,
        q_M,
        ("res", "ext", "keys"),
    )

    # sharing sets: E+ (a state with a self-loop) in queries of one partitioning, one rule for E
    sets: list[tuple[str, int, int, list[tuple[int, int]]]] = []
    for qi, plan in enumerate(plans):
        states = state_names[qi]
        for t in plan.template.transitions:
            if t.src != t.dst:
                continue
            s = states.index(t.src)
            f = bindings[q_soff[qi] + s][2]
            typ = plan.vars[t.src].type
            for entry in sets:
                if entry[0] == typ and entry[1] == q_part[qi] and entry[2] == f:
                    entry[3].append((qi, s))
                    break
            else:
                sets.append((typ, q_part[qi], f, [(qi, s)]))
    sets = [s for s in sets if len(s[3]) >= 2]
    # a type in any member query's pattern interrupts the set's bursts (role 2)
    set_queries = [sorted({qi for qi, _ in entry[3]}) for entry in sets]
    for entry in sets:  # a class's registers are updated once, by its representative
        classes = []
        for qi, st_ in entry[3]:
            if qs_c[q_soff[qi] + st_] not in classes:
                classes.append(qs_c[q_soff[qi] + st_])
        entry[3][:] = [reps[c] for c in classes]
    set_of_binding: dict[tuple[int, int], int] = {}
    for b, (_, _, _, members) in enumerate(sets):
        for qi, s in members:
            set_of_binding[(qi, s)] = b

    ty_lists: list[list[int]] = [[] for _ in range(n_types)]
    b_q, b_s, b_f, b_set = [], [], [], []
    for bi, (qi, s, f, typ) in enumerate(bindings):
        if qi >= 0:
            ty_lists[tcode[typ]].append(bi)
        b_q.append(qi)
        b_s.append(s)
        b_f.append(f if filters[f].required or filters[f].predicates else -1)
        b_set.append(set_of_binding.get((qi, s), -1))
    ty_ptr, ty_bind = _csr(ty_lists)

    nsets = len(sets)
    set_role = np.zeros((max(nsets, 1), n_types), dtype=np.int64)
    set_part, set_f, set_nw, set_na = [], [], [], []
    set_q_lists: list[list[int]] = []
    set_s_lists: list[list[int]] = []
    max_w = 1 + len(weights)
    set_wcol = np.zeros((max(nsets, 1), max_w), dtype=np.int64)
    set_wmap = np.full((max(nsets, 1), max(len(weights), 1)), -1, dtype=np.int64)
    set_acol = np.zeros((max(nsets, 1), max(len(extremes), 1)), dtype=np.int64)
    set_amap = np.full((max(nsets, 1), max(len(extremes), 1)), -1, dtype=np.int64)
    set_boff, set_bfoff = [], []
    panes: list[Fraction] = []
    bw = bfw = 0
    for b, (typ, g, f, members) in enumerate(sets):
        set_part.append(g)
        set_f.append(f if filters[f].required or filters[f].predicates else -1)
        set_q_lists.append([qi for qi, _ in members])
        set_s_lists.append([s for _, s in members])
        for qi in set_queries[b]:
            for v in plans[qi].vars.values():
                set_role[b, tcode[v.type]] = 2
        set_role[b, tcode[typ]] = 1
        wl: list[int] = []
        al: list[int] = []
        for qi, s in members:
            gs = q_soff[qi] + s
            for _, w in sums[gs]:
                if w not in wl:
                    wl.append(w)
            for _, a in exts[gs]:
                if a not in al:
                    al.append(a)
        for j, w in enumerate(wl):
            set_wcol[b, 1 + j] = w
            set_wmap[b, w] = 1 + j
        for j, a in enumerate(al):
            set_acol[b, j] = a
            set_amap[b, a] = j
        set_nw.append(1 + len(wl))
        set_na.append(len(al))
        set_boff.append(bw)
        set_bfoff.append(bfw)
        bw += 6 + (2 + 3 * (1 + len(wl)))  # times the lanes, see State
        bfw += 2 * len(al)
        durations: list[Fraction] = []
        for qi, _ in members:
            durations += [plans[qi].window.within, plans[qi].window.slide]
        panes.append(pane_length(durations))
    set_q_ptr, set_q = _csr(set_q_lists)
    _, set_s = _csr(set_s_lists)

    # part_role: 1 for a type some query of the partitioning binds, 2 when some
    # query may bind several events of it in one trend (the lane bound, _rns)
    reps = [_repeatable(p) for p in plans]
    repeatable = {
        v.type for p, r in zip(plans, reps, strict=True) for v in p.vars.values() if v.var in r
    }
    singles = max(
        (len(p.template.states) - len(r) for p, r in zip(plans, reps, strict=True)), default=0
    )
    part_role = np.zeros((len(parts), n_types), dtype=np.int64)
    part_sp_lists: list[list[int]] = []
    for g, pt in enumerate(parts):
        sps: list[int] = []
        for qi in pt.queries:
            for v in plans[qi].vars.values():
                part_role[g, tcode[v.type]] = 2 if v.type in repeatable else 1
            if q_spec[qi] not in sps:
                sps.append(q_spec[qi])
        part_sp_lists.append(sps)
    part_sp_ptr, part_sp = _csr(part_sp_lists)
    sp_NS = [math.ceil(s.within / s.slide) + 1 for s in specs]
    sp_moff = list(np.cumsum([0] + sp_NS[:-1]))

    pred_ptr, pred_src = _csr(preds)
    cnt_ptr, cnt_reg = _csr(cnt)
    sum_ptr, sum_flat = _csr([[r for r, _ in row] for row in sums])
    _, sum_w = _csr([[w for _, w in row] for row in sums])
    ext_ptr, ext_reg = _csr([[r for r, _ in row] for row in exts])
    _, ext_a = _csr([[a for _, a in row] for row in exts])

    program = Program(
        q_spec=_i64(q_spec),
        q_part=_i64(q_part),
        q_S=_i64(q_S),
        q_A=_i64(q_A),
        q_M=_i64(q_M),
        q_nmin=_i64(q_nmin),
        q_NS=_i64(q_NS),
        q_start=_i64(q_start),
        q_end=_i64(q_end),
        qs_c=_i64(qs_c),
        c_toff=_i64(c_toff),  # scaled by the lanes in State
        c_eoff=_i64(c_eoff),
        c_koff=_i64(c_koff),
        c_A=_i64(c_A),
        c_M=_i64(c_M),
        c_NS=_i64(c_NS),
        c_spec=_i64(c_spec),
        c_read=_i64(c_read),
        c_end_ptr=c_end_ptr,
        c_end_q=c_end_q,
        q_roff=_i64(q_roff),  # scaled by the lanes in State
        q_reoff=_i64(q_reoff),
        q_rkoff=_i64(q_rkoff),
        q_gsel=_i64(q_gsel),
        q_grouping=_i64(q_grouping),
        q_soff=_i64(q_soff),
        pred_ptr=pred_ptr,
        pred_src=pred_src,
        cnt_ptr=cnt_ptr,
        cnt_reg=cnt_reg,
        sum_ptr=sum_ptr,
        sum_reg=sum_flat,
        sum_w=sum_w,
        ext_ptr=ext_ptr,
        ext_reg=ext_reg,
        ext_a=ext_a,
        ty_ptr=ty_ptr,
        ty_bind=ty_bind,
        b_q=_i64(b_q),
        b_s=_i64(b_s),
        b_f=_i64(b_f),
        b_set=_i64(b_set),
        set_part=_i64(set_part),
        set_role=set_role,
        set_f=_i64(set_f),
        set_q_ptr=set_q_ptr,
        set_q=set_q,
        set_s=set_s,
        set_nw=_i64(set_nw),
        set_wcol=set_wcol,
        set_wmap=set_wmap,
        set_na=_i64(set_na),
        set_acol=set_acol,
        set_amap=set_amap,
        set_boff=_i64(set_boff),  # scaled by the lanes in State
        set_bfoff=_i64(set_bfoff),
        part_role=part_role,
        part_sp_ptr=part_sp_ptr,
        part_sp=part_sp,
        sp_NS=_i64(sp_NS),
        sp_moff=_i64([int(x) for x in sp_moff]),
    )
    widths["bur"] = max(bw, 1)
    widths["burf"] = max(bfw, 1)
    widths["m"] = max(sum(sp_NS), 1)
    return Lowered(
        plans=plans,
        program=program,
        types=types,
        specs=specs,
        panes=panes,
        partitionings=parts,
        grouping_of=grouping_of,
        filters=filters,
        weights=weights,
        extremes=extremes,
        widths=widths,
        group_widths=group_widths,
        query_groups=query_groups,
        singles=singles,
        max_additive=max(q_A, default=1),
        max_extreme=max(max(q_M, default=0), 1),
        set_types=[s[0] for s in sets],
    )


def scaled(program: Program, lanes: int) -> Program:
    """The program with its additive offsets in int64 units for ``lanes`` lanes."""
    return program._replace(
        c_toff=program.c_toff * lanes,
        q_roff=program.q_roff * lanes,
        set_boff=_boff(program, lanes),
    )


def _boff(program: Program, lanes: int) -> np.ndarray:
    out = []
    off = 0
    for b in range(len(program.set_boff)):
        out.append(off)
        off += 6 + (2 + 3 * int(program.set_nw[b])) * lanes
    return np.array(out, dtype=np.int64)


def burst_width(program: Program, lanes: int) -> int:
    return max(sum(6 + (2 + 3 * int(nw)) * lanes for nw in program.set_nw), 1)
