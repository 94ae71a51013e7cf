"""A GLORIA plan (or a SHARON plan as Q-sets) lowered to the arrays its kernel loops over.

The queries of a plan's Q-sets (*members*) run in :mod:`trendagg.kernels._gloria`, beside
the kernel's other queries: the lowering of :mod:`trendagg.kernels.program` lays them out
as queries (window, partitioning, registers, result blocks, their own weights and
extremes), binds none of their states, and adds these tables, read from the plan's
contexts (:func:`~trendagg.optimizer.contexts.contexts`; the readable executor,
:mod:`trendagg.reference.gloria`, runs the same ones):

- per event type its contexts (``ty_ptr``/``ty_x``), per context its partitioning, the
  filter of the events it binds, whether they take a snapshot (``x_ring``: its ring of
  snapshots, or -1), its total and, per query of it (``x_q_ptr``), the query, the state
  its variable of the type is, whether it starts or ends there, the block of values it
  keeps in the context's total, and where its trends come from: the blocks it reads
  (``xr_*``) and the coefficients it evaluates (``xe_*``: a pair of a total and a ring,
  and the query's place among the ring's queries);
- per context, the rings its events' coefficients may carry (``xc_*``: reused from the
  totals it arrives through) with the pair it adds them to (-1: not totalled) and, per
  query, its place among each ring's queries (``xcq``), to evaluate them;
- per block of values (a total's registers of one query): the query and its offsets in
  an instance row (window slots as the kernel's state classes have them);
- per ring (a snapshot context): its queries and their offsets in a slot;
- per pair (a total whose coefficients hold snapshots of a ring): its offsets;
- the *algebra* of coefficient entries: a register vector over event types (the trend
  count, then per (type, weight) and per (type, extreme column) a register), what an
  event of each type adds to it (``acnt``, ``asum``, ``aext``), and per query its *view*:
  which entry register meets each of its registers (``v_*``, ``ve_*``).

Offsets are of one slot (rings) or of lanes 1 (blocks); :func:`scaled_gloria` makes them
those of an instance row for the lanes and the ring size of a run.
"""

from __future__ import annotations

from collections import namedtuple
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from trendagg.optimizer.contexts import Context

Gloria = namedtuple(
    "Gloria",
    "ty_ptr ty_x x_g x_f x_ring x_tot x_q_ptr xq_q xq_s xq_start xq_res_ptr xq_res xq_blk "
    "xu_ptr xu_pair xr_ptr xr_blk xe_ptr xe_pair xe_rq xc_ptr xc_ring xc_pair xcq x_cqoff "
    "b_q b_A b_M b_NS b_toff b_eoff b_koff "
    "r_x r_q_ptr rq_q rq_aoff rq_eoff rq_koff r_aw r_ew r_kw r_aoff r_eoff r_koff r_xoff "
    "t_p_ptr t_p p_ring p_aoff p_eoff p_toff "
    "a_W a_M a_nmin acnt_ptr acnt asum_ptr asum_reg asum_w aext_ptr aext_reg aext_a "
    "v_ptr v_qreg v_areg ve_ptr ve_qreg ve_areg m_q r_merge r_spec br_ptr br "
    "xq_val x_any x_lazy x_spec lz_x lz_ring lz_NS lz_aoff lz_eoff lz_toff",
)


@dataclass
class QueryLayout:
    """What the lowering of :mod:`~trendagg.kernels.program` made of one member query:
    its index, window spec, partitioning, register sizes, window slots, and per state
    (by variable name) its index, filter and the registers its events add to (counts,
    (register, weight column), (register, extreme column))."""

    index: int
    spec: int
    part: int
    A: int
    M: int
    nmin: int
    NS: int
    states: dict[str, int]
    filters: dict[str, int]
    cnt: dict[str, list[int]]
    sums: dict[str, list[tuple[int, int]]]
    exts: dict[str, list[tuple[int, int]]]


@dataclass
class GloriaLowered:
    """The tables and the widths of the rows they lay out (in lanes 1 and one ring slot)."""

    program: Gloria
    widths: dict[str, int]  # tot, ext, keys (blocks); sa, se, sk, sx (a ring slot)...
    rings: int
    pairs: int
    contexts: int


def _csr(lists: Sequence[Sequence[int]]) -> tuple[np.ndarray, np.ndarray]:
    ptr = np.zeros(len(lists) + 1, dtype=np.int64)
    for i, items in enumerate(lists):
        ptr[i + 1] = ptr[i] + len(items)
    flat = np.array([x for items in lists for x in items], dtype=np.int64)
    return ptr, flat


def _i64(values: Sequence[int]) -> np.ndarray:
    return np.array(list(values), dtype=np.int64)


def lower_gloria(
    at: dict[str, list[Context]],
    layouts: dict[str, QueryLayout],
    type_code: dict[str, int],
    n_types: int,
    types_of: dict[str, dict[str, str]],
) -> GloriaLowered:
    """The tables of the contexts ``at`` (per event type), for member queries laid out
    as ``layouts`` (by name); ``type_code``: the kernel's event type codes (``n_types``
    of them, the last for every other type); ``types_of``: per query, its variables'
    types."""
    # totals, and the blocks of values each keeps (one per query)
    totals: dict[tuple[str, object], int] = {}
    blocks: list[tuple[int, str]] = []  # (total, query)
    block_of: dict[tuple[int, str], int] = {}
    ctx_list: list[tuple[str, Context]] = [(e, x) for e in sorted(at) for x in at[e]]
    for e, x in ctx_list:
        if x.totalled:
            t = totals.setdefault((e, x.key), len(totals))
            for q in x.queries:
                if (t, q) not in block_of:
                    block_of[(t, q)] = len(blocks)
                    blocks.append((t, q))
    # rings (snapshot contexts) and which totals' coefficients hold each ring's snapshots
    rings: list[int] = []  # context index per ring
    ring_of: dict[int, int] = {}
    for xi, (_, x) in enumerate(ctx_list):
        if x.snapshot:
            ring_of[xi] = len(rings)
            rings.append(xi)
    carried: list[set[int]] = [set() for _ in ctx_list]  # rings an event's coefficients hold
    holds: dict[int, set[int]] = {}  # total -> rings
    changed = True
    while changed:
        changed = False
        for xi, (e, x) in enumerate(ctx_list):
            mine = set()
            if x.snapshot:
                mine.add(ring_of[xi])
            else:
                for inc in x.incoming:
                    if inc.reuse:
                        src = totals.get((inc.source, inc.qset))
                        if src is not None:
                            mine |= holds.get(src, set())
            if not mine <= carried[xi]:
                carried[xi] |= mine
                changed = True
            if x.totalled:
                t = totals[(e, x.key)]
                if not carried[xi] <= holds.setdefault(t, set()):
                    holds[t] |= carried[xi]
                    changed = True
    pairs: list[tuple[int, int]] = []  # (total, ring)
    pair_of: dict[tuple[int, int], int] = {}
    for t in range(len(totals)):
        for r in sorted(holds.get(t, ())):
            pair_of[(t, r)] = len(pairs)
            pairs.append((t, r))
    rep_of, block_rep = _equal_contexts(ctx_list, totals, block_of, holds, layouts, types_of)
    # the algebra: registers over event types
    areg: dict[tuple[object, ...], int] = {("count",): 0}
    amin: list[tuple[str, int]] = []
    amax: list[tuple[str, int]] = []
    for name, lay in layouts.items():
        for var in lay.states:
            typ = types_of[name][var]
            for _ in lay.cnt[var]:
                areg.setdefault(("cnt", typ), len(areg))
            for _, w in lay.sums[var]:
                areg.setdefault(("sum", typ, w), len(areg))
            for reg, a in lay.exts[var]:
                item = (typ, a)
                block = amin if reg < lay.nmin else amax
                if item not in block:
                    block.append(item)
    a_W = len(areg)
    aext = {("min", *m): i for i, m in enumerate(amin)}
    aext.update({("max", *m): len(amin) + i for i, m in enumerate(amax)})
    acnt_l: list[list[int]] = [[] for _ in range(n_types)]
    asum_l: list[list[tuple[int, int]]] = [[] for _ in range(n_types)]
    aext_l: list[list[tuple[int, int]]] = [[] for _ in range(n_types)]
    for key, reg in areg.items():
        if key[0] == "cnt":
            acnt_l[type_code[str(key[1])]].append(reg)
        elif key[0] == "sum":
            asum_l[type_code[str(key[1])]].append((reg, int(key[2])))  # type: ignore[call-overload]
    for key, reg in aext.items():
        aext_l[type_code[str(key[1])]].append((reg, int(key[2])))  # type: ignore[call-overload]
    # views: per member query, its registers against the algebra's
    n_q = 1 + max((lay.index for lay in layouts.values()), default=-1)
    view: list[list[tuple[int, int]]] = [[] for _ in range(n_q)]
    eview: list[list[tuple[int, int]]] = [[] for _ in range(n_q)]
    for name, lay in layouts.items():
        for var in lay.states:
            typ = types_of[name][var]
            view[lay.index] += [(reg, areg[("cnt", typ)]) for reg in lay.cnt[var]]
            view[lay.index] += [(reg, areg[("sum", typ, w)]) for reg, w in lay.sums[var]]
            eview[lay.index] += [
                (reg, aext[("min" if reg < lay.nmin else "max", typ, a)])
                for reg, a in lay.exts[var]
            ]
    # blocks' offsets, partitioning by partitioning (rows of one instance)
    b_toff, b_eoff, b_koff = [0] * len(blocks), [0] * len(blocks), [0] * len(blocks)
    widths = {"tot": 1, "ext": 1, "keys": 1}
    parts = sorted({lay.part for lay in layouts.values()})
    for g in parts:
        t_ = e_ = k_ = 0
        for b, (_, q) in enumerate(blocks):
            lay = layouts[q]
            if lay.part != g or block_rep[b] != b:  # (a block equal to another: none)
                continue
            b_toff[b], b_eoff[b], b_koff[b] = t_, e_, k_
            t_ += lay.NS * lay.A
            e_ += lay.NS * lay.M
            k_ += lay.NS
        for name, used in zip(("tot", "ext", "keys"), (t_, e_, k_), strict=True):
            widths[name] = max(widths[name], used)
    # rings: a slot holds per query of its context the values of each window slot and
    # the last window (expiry); rings and pairs laid out per partitioning too
    r_q: list[list[int]] = []
    rq_q: list[int] = []
    rq_aoff: list[int] = []
    rq_eoff: list[int] = []
    rq_koff: list[int] = []
    r_aw, r_ew, r_kw = [], [], []
    for xi in rings:
        _, x = ctx_list[xi]
        ids = []
        a_ = e_ = k_ = 0
        for q in x.queries:
            lay = layouts[q]
            ids.append(len(rq_q))
            rq_q.append(lay.index)
            rq_aoff.append(a_)
            rq_eoff.append(e_)
            rq_koff.append(k_)
            a_ += lay.NS * lay.A
            e_ += lay.NS * lay.M
            k_ += lay.NS
        r_q.append(ids)
        r_aw.append(a_)
        r_ew.append(e_)
        r_kw.append(k_)
    ring_part = [layouts[ctx_list[xi][1].queries[0]].part for xi in rings]
    # per-slot units of a ring: (adds, exts, keys, expiry words); per pair one slot is
    # a_W adds, the algebra's extremes and a tag
    r_units = [[0, 0, 0, 0] for _ in rings]
    p_units = [[0, 0, 0] for _ in pairs]
    ring_totals = {"sa": 1, "se": 1, "sk": 1, "sx": 1, "meta": 1, "ca": 1, "ce": 1, "ct": 1}
    for g in parts:
        a_ = e_ = k_ = x_ = 0
        for r in range(len(rings)):
            if ring_part[r] != g:
                continue
            r_units[r] = [a_, e_, k_, x_]
            a_ += r_aw[r]
            e_ += r_ew[r]
            k_ += r_kw[r]
            x_ += len(r_q[r])
        ring_totals["sa"] = max(ring_totals["sa"], a_)
        ring_totals["se"] = max(ring_totals["se"], e_)
        ring_totals["sk"] = max(ring_totals["sk"], k_)
        ring_totals["sx"] = max(ring_totals["sx"], x_)
        n_r = sum(1 for r in range(len(rings)) if ring_part[r] == g)
        ring_totals["meta"] = max(ring_totals["meta"], 2 * len(rings), 2 * n_r)
        c_ = 0
        for p, (_, r) in enumerate(pairs):
            if ring_part[r] != g:
                continue
            p_units[p] = [c_, c_, c_]
            c_ += 1
        ring_totals["ca"] = max(ring_totals["ca"], c_)
    widths.update(ring_totals)
    # contexts
    ty_lists: list[list[int]] = [[] for _ in range(n_types)]
    x_g, x_f, x_ring, x_tot = [], [], [], []
    xq: list[list[int]] = []
    xq_q, xq_s, xq_start, xq_blk = [], [], [], []
    xq_res: list[list[int]] = []
    aliases: dict[int, list[int]] = {}
    for xi, r in enumerate(rep_of):
        if r != xi:
            aliases.setdefault(r, []).append(xi)
    xr: list[list[int]] = []
    xe_pair_l: list[list[int]] = []
    xe_rq_l: list[list[int]] = []
    xc_ring_l: list[list[int]] = []
    xc_pair_l: list[list[int]] = []
    xcq: list[int] = []
    x_cqoff: list[int] = []
    xu_l: list[list[int]] = []
    for xi, (e, x) in enumerate(ctx_list):
        if rep_of[xi] == xi:  # (one equal to another is computed there)
            ty_lists[type_code[e]].append(xi)
        first = layouts[x.queries[0]]
        x_g.append(first.part)
        x_f.append(layouts[x.binder[0]].filters[x.binder[1]])
        x_ring.append(ring_of.get(xi, -1))
        t = totals[(e, x.key)] if x.totalled else -1
        x_tot.append(t)
        rings_here = sorted(carried[xi])
        xc_ring_l.append(rings_here)
        xc_pair_l.append([pair_of[(t, r)] if t >= 0 else -1 for r in rings_here])
        x_cqoff.append(len(xcq))
        reused = []
        for inc in x.incoming:
            src = totals.get((inc.source, inc.qset))
            if inc.reuse and src is not None:
                reused += [pair_of[(src, r)] for r in sorted(holds.get(src, ()))]
        xu_l.append(reused)
        ids = []
        for q in x.queries:
            lay = layouts[q]
            var = next(v for v, ty in types_of[q].items() if ty == e and v in lay.states)
            ids.append(len(xq_q))
            xq_q.append(lay.index)
            xq_s.append(lay.states[var])
            xq_start.append(1 if q in x.starts else 0)
            res = [lay.index] if q in x.ends else []
            for other in aliases.get(xi, ()):  # the equal contexts' ENDs take the same values
                _, y = ctx_list[other]
                res += [layouts[name].index for name in y.ends]
            xq_res.append(res)
            xq_blk.append(block_rep[block_of[(t, q)]] if t >= 0 else -1)
            reads, epairs, erq = [], [], []
            for inc in x.incoming:
                if q not in inc.queries:
                    continue
                src = totals.get((inc.source, inc.qset))
                if src is None:
                    continue
                reads.append(block_rep[block_of[(src, q)]])
                if inc.reuse:
                    continue
                for r in sorted(holds.get(src, ())):
                    epairs.append(pair_of[(src, r)])
                    erq.append(_ring_query(r_q[r], rq_q, lay.index))
            xr.append(reads)
            xe_pair_l.append(epairs)
            xe_rq_l.append(erq)
            for r in rings_here:
                xcq.append(_ring_query(r_q[r], rq_q, lay.index))
        xq.append(ids)
    # the per-query values that can be other than none (read by the loop's per-query
    # part; a block never written is read by no one)
    xq_val = _valued(ctx_list, rep_of, xq, x_ring, xq_blk, xq_start, xe_pair_l, xr)
    valued_blocks = {xq_blk[qi] for qi, v in enumerate(xq_val) if v and xq_blk[qi] >= 0}
    xr = [[b for b in reads if b in valued_blocks] for reads in xr]
    x_any = [
        int(x_ring[xi] >= 0 or any(xq_val[qi] or xq_res[qi] for qi in xq[xi]))
        for xi in range(len(ctx_list))
    ]
    lazy = _lazy_ends(ctx_list, layouts, xq, x_ring, x_tot, xq_val, xq_res, xc_ring_l)
    x_lazy = [-1] * len(ctx_list)
    x_spec = [layouts[x.queries[0]].spec for _, x in ctx_list]
    lz: list[tuple[int, int]] = []  # (context, ring) of each lazy pair
    for xi in lazy:
        x_lazy[xi] = len(lz)
        lz += [(xi, r) for r in xc_ring_l[xi]]
    lz_units: list[list[int]] = [[0, 0, 0] for _ in lz]
    widths.update({"la": 1, "le": 1, "lt": 1})
    for g in parts:
        a_ = 0
        for i, (xi, _) in enumerate(lz):
            if x_g[xi] != g:
                continue
            lz_units[i] = [a_, a_, a_]
            a_ += layouts[ctx_list[xi][1].queries[0]].NS
        widths["la"] = max(widths["la"], a_)
    r_merge, r_spec, br_l = _start_groups(
        ctx_list, rings, layouts, types_of, len(blocks), xq, x_tot, xu_l, xe_pair_l, xr, xq_res
    )
    ty_ptr, ty_x = _csr(ty_lists)
    x_q_ptr, _ = _csr(xq)
    xu_ptr, xu_pair = _csr(xu_l)
    xr_ptr, xr_blk = _csr(xr)
    xq_res_ptr, xq_res_flat = _csr(xq_res)
    xe_ptr, xe_pair = _csr(xe_pair_l)
    _, xe_rq = _csr(xe_rq_l)
    xc_ptr, xc_ring = _csr(xc_ring_l)
    _, xc_pair = _csr(xc_pair_l)
    r_q_ptr, _ = _csr(r_q)
    t_p_lists: list[list[int]] = [[] for _ in range(len(totals))]
    for p, (t, _) in enumerate(pairs):
        t_p_lists[t].append(p)
    t_p_ptr, t_p = _csr(t_p_lists)
    acnt_ptr, acnt = _csr(acnt_l)
    asum_ptr, asum_reg = _csr([[r for r, _ in row] for row in asum_l])
    _, asum_w = _csr([[w for _, w in row] for row in asum_l])
    aext_ptr, aext_reg = _csr([[r for r, _ in row] for row in aext_l])
    _, aext_a = _csr([[a for _, a in row] for row in aext_l])
    v_ptr, v_qreg = _csr([[i for i, _ in row] for row in view])
    _, v_areg = _csr([[j for _, j in row] for row in view])
    ve_ptr, ve_qreg = _csr([[i for i, _ in row] for row in eview])
    _, ve_areg = _csr([[j for _, j in row] for row in eview])
    br_ptr, br = _csr(br_l)
    program = Gloria(
        ty_ptr=ty_ptr,
        ty_x=ty_x,
        x_g=_i64(x_g),
        x_f=_i64(x_f),
        x_ring=_i64(x_ring),
        x_tot=_i64(x_tot),
        x_q_ptr=x_q_ptr,
        xq_q=_i64(xq_q),
        xq_s=_i64(xq_s),
        xq_start=_i64(xq_start),
        xq_res_ptr=xq_res_ptr,
        xq_res=xq_res_flat,
        xq_blk=_i64(xq_blk),
        xu_ptr=xu_ptr,
        xu_pair=xu_pair,
        xr_ptr=xr_ptr,
        xr_blk=xr_blk,
        xe_ptr=xe_ptr,
        xe_pair=xe_pair,
        xe_rq=xe_rq,
        xc_ptr=xc_ptr,
        xc_ring=xc_ring,
        xc_pair=xc_pair,
        xcq=_i64(xcq),
        x_cqoff=_i64(x_cqoff),
        b_q=_i64([layouts[q].index for _, q in blocks]),
        b_A=_i64([layouts[q].A for _, q in blocks]),
        b_M=_i64([layouts[q].M for _, q in blocks]),
        b_NS=_i64([layouts[q].NS for _, q in blocks]),
        b_toff=_i64(b_toff),
        b_eoff=_i64(b_eoff),
        b_koff=_i64(b_koff),
        r_x=_i64(rings),
        r_q_ptr=r_q_ptr,
        rq_q=_i64(rq_q),
        rq_aoff=_i64(rq_aoff),
        rq_eoff=_i64(rq_eoff),
        rq_koff=_i64(rq_koff),
        r_aw=_i64(r_aw),
        r_ew=_i64(r_ew),
        r_kw=_i64(r_kw),
        r_aoff=_i64([u[0] for u in r_units]),
        r_eoff=_i64([u[1] for u in r_units]),
        r_koff=_i64([u[2] for u in r_units]),
        r_xoff=_i64([u[3] for u in r_units]),
        t_p_ptr=t_p_ptr,
        t_p=t_p,
        p_ring=_i64([r for _, r in pairs]),
        p_aoff=_i64([u[0] for u in p_units]),
        p_eoff=_i64([u[1] for u in p_units]),
        p_toff=_i64([u[2] for u in p_units]),
        a_W=_i64([a_W]),
        a_M=_i64([len(amin) + len(amax)]),
        a_nmin=_i64([len(amin)]),
        acnt_ptr=acnt_ptr,
        acnt=acnt,
        asum_ptr=asum_ptr,
        asum_reg=asum_reg,
        asum_w=asum_w,
        aext_ptr=aext_ptr,
        aext_reg=aext_reg,
        aext_a=aext_a,
        v_ptr=v_ptr,
        v_qreg=v_qreg,
        v_areg=v_areg,
        ve_ptr=ve_ptr,
        ve_qreg=ve_qreg,
        ve_areg=ve_areg,
        m_q=_i64(sorted(lay.index for lay in layouts.values())),
        r_merge=_i64(r_merge),
        r_spec=_i64(r_spec),
        br_ptr=br_ptr,
        br=br,
        xq_val=_i64(xq_val),
        x_any=_i64(x_any),
        x_lazy=_i64(x_lazy),
        x_spec=_i64(x_spec),
        lz_x=_i64([xi for xi, _ in lz]),
        lz_ring=_i64([r for _, r in lz]),
        lz_NS=_i64([layouts[ctx_list[xi][1].queries[0]].NS for xi, _ in lz]),
        lz_aoff=_i64([u[0] for u in lz_units]),
        lz_eoff=_i64([u[1] for u in lz_units]),
        lz_toff=_i64([u[2] for u in lz_units]),
    )
    return GloriaLowered(program, widths, len(rings), len(pairs), len(ctx_list))


def _equal_contexts(
    ctx_list: list[tuple[str, Context]],
    totals: dict[tuple[str, object], int],
    block_of: dict[tuple[int, str], int],
    holds: dict[int, set[int]],
    layouts: dict[str, QueryLayout],
    types_of: dict[str, dict[str, str]],
) -> tuple[list[int], list[int]]:
    """Contexts whose values are equal by construction, computed once (as the kernel's
    classes of states are, HAMLET's prefix sharing): per context the one that computes
    it (itself, or the first of its class that keeps a total), and per block the block
    that holds its values.

    Two contexts are equal when each is one query's non-shared Q-set (no label, no
    snapshot) whose trends arrive as values only (no total it reads holds
    coefficients), and they bind the same type with the same filter, in the same
    window spec and partitioning, with the same registers and own contributions, both
    start a trend there or neither, and read totals of equal contexts (their own:
    a self-loop), recursively; a context on a cycle through other types is alone."""
    maker: dict[int, int] = {}  # block -> the context that adds to it
    for xi, (e, x) in enumerate(ctx_list):
        if x.totalled:
            t = totals[(e, x.key)]
            for q in x.queries:
                maker[block_of[(t, q)]] = xi
    cls = [-1] * len(ctx_list)
    index: dict[tuple[object, ...], int] = {}

    def visit(xi: int, path: frozenset[int]) -> int:
        if cls[xi] >= 0:
            return cls[xi]
        e, x = ctx_list[xi]
        key: tuple[object, ...] = ("alone", xi)
        if not x.snapshot and x.label is None and len(x.queries) == 1:
            q = x.queries[0]
            lay = layouts[q]
            var = next(v for v, ty in types_of[q].items() if ty == e and v in lay.states)
            own = totals.get((e, x.key)) if x.totalled else None
            reads: list[object] = []
            for inc in x.incoming:
                src = totals.get((inc.source, inc.qset))
                if src is None:
                    continue
                if holds.get(src):  # coefficients evaluated here: alone
                    reads = ["alone"]
                    break
                m = maker.get(block_of[(src, q)])
                if src == own:
                    reads.append(-1)  # (its self-loop)
                elif m is None or m in path or m == xi:
                    reads = ["alone"]
                    break
                else:
                    reads.append(visit(m, path | {xi}))
            if "alone" not in reads and cls[xi] < 0:
                key = (
                    e,
                    lay.filters[var],
                    lay.spec,
                    lay.part,
                    lay.A,
                    lay.M,
                    lay.nmin,
                    lay.NS,
                    q in x.starts,
                    tuple(lay.cnt[var]),
                    tuple(lay.sums[var]),
                    tuple(lay.exts[var]),
                    tuple(sorted(int(r) for r in reads)),  # type: ignore[call-overload]
                )
        if cls[xi] >= 0:  # (settled while its reads were visited)
            return cls[xi]
        c = index.setdefault(key, len(index))
        cls[xi] = c
        return c

    for xi in range(len(ctx_list)):
        visit(xi, frozenset())
    first: dict[int, int] = {}
    for xi, (_, x) in enumerate(ctx_list):  # a class's first context with a total
        if x.totalled:
            first.setdefault(cls[xi], xi)
    for xi in range(len(ctx_list)):
        first.setdefault(cls[xi], xi)
    rep_of = [first[cls[xi]] for xi in range(len(ctx_list))]
    block_rep = list(range(len(block_of)))
    for xi, (e, x) in enumerate(ctx_list):
        r = rep_of[xi]
        if r != xi and x.totalled:
            re, rx = ctx_list[r]
            mine = block_of[(totals[(e, x.key)], x.queries[0])]
            block_rep[mine] = block_of[(totals[(re, rx.key)], rx.queries[0])]
    return rep_of, block_rep


def _valued(
    ctx_list: list[tuple[str, Context]],
    rep_of: list[int],
    xq: list[list[int]],
    x_ring: list[int],
    xq_blk: list[int],
    xq_start: list[int],
    xe_pair_l: list[list[int]],
    xr: list[list[int]],
) -> list[int]:
    """Per query of a context, whether its values (the trends that arrive as values,
    not coefficients) can be other than none: it starts a trend there, evaluates
    coefficients, or reads a block that some context writes such values to (a
    context's blocks, unless it takes snapshots: those go to its ring). A labelled
    Q-set's trends travel as coefficients only: its blocks stay empty."""
    val = [0] * len(xq_start)
    written: set[int] = set()
    changed = True
    while changed:
        changed = False
        for xi in range(len(ctx_list)):
            if rep_of[xi] != xi:
                continue
            for qi in xq[xi]:
                if val[qi]:
                    continue
                if xq_start[qi] or xe_pair_l[qi] or any(b in written for b in xr[qi]):
                    val[qi] = 1
                    changed = True
                    if x_ring[xi] < 0 and xq_blk[qi] >= 0:
                        written.add(xq_blk[qi])
    return val


def _lazy_ends(
    ctx_list: list[tuple[str, Context]],
    layouts: dict[str, QueryLayout],
    xq: list[list[int]],
    x_ring: list[int],
    x_tot: list[int],
    xq_val: list[int],
    xq_res: list[list[int]],
    xc_ring_l: list[list[int]],
) -> list[int]:
    """The contexts whose results wait for their windows to close: every query ends
    there and its trends arrive only as coefficients (no values, no snapshot, no
    total), in one window spec. Their events add their coefficients, per snapshot and
    window, to an accumulator, and a window's close evaluates each accumulator once per
    query (SHARON's count combination at the window's end, spec ``sharon.md`` section
    3.4), instead of each event evaluating its coefficients per query."""
    out = []
    for xi, (_, x) in enumerate(ctx_list):
        ids = xq[xi]
        if x_ring[xi] >= 0 or x_tot[xi] >= 0 or not xc_ring_l[xi]:
            continue
        if any(xq_val[qi] or not xq_res[qi] for qi in ids):
            continue
        if len({layouts[q].spec for q in x.queries}) != 1:
            continue
        out.append(xi)
    return out


def _start_groups(
    ctx_list: list[tuple[str, Context]],
    rings: list[int],
    layouts: dict[str, QueryLayout],
    types_of: dict[str, dict[str, str]],
    n_blocks: int,
    xq: list[list[int]],
    x_tot: list[int],
    xu_l: list[list[int]],
    xe_pair_l: list[list[int]],
    xr: list[list[int]],
    xq_res: list[list[int]],
) -> tuple[list[int], list[int], list[list[int]]]:
    """Per ring, whether a START event may join the last snapshot instead of taking its
    own (SHARON's START groups, spec ``sharon.md`` section 3.4); per block, the rings
    whose snapshots read it.

    An event joins when the blocks its context reads are as they were when the last
    live snapshot was taken (a version per ring, bumped at each write of one of them)
    and it is in the same windows: its values per query are then that snapshot's, so
    its trends are the snapshot's entry plus the identity (an evaluation is linear in
    the entries). So the context's values must come from blocks only (no coefficients
    reused or evaluated: they change without a block written), no query may end there
    (its results need the values), its queries must share a window spec, and the event
    must add no value of its own (sums, minima, maxima: two STARTs' would differ)."""
    merge = [0] * len(rings)
    spec = [-1] * len(rings)
    readers: list[list[int]] = [[] for _ in range(n_blocks)]
    for r, xi in enumerate(rings):
        e, x = ctx_list[xi]
        ids = xq[xi]
        if x_tot[xi] < 0 or xu_l[xi] or any(xe_pair_l[qi] or xq_res[qi] for qi in ids):
            continue
        if len({layouts[q].spec for q in x.queries}) != 1:
            continue
        if any(_adds_values(layouts[q], types_of[q], e) for q in x.queries):
            continue
        merge[r] = 1
        spec[r] = layouts[x.queries[0]].spec
        for b in sorted({b for qi in ids for b in xr[qi]}):
            readers[b].append(r)
    return merge, spec, readers


def _adds_values(lay: QueryLayout, types: dict[str, str], e: str) -> bool:
    """Whether the query's events of type e add values of their own (sums, extremes)."""
    var = next(v for v, ty in types.items() if ty == e and v in lay.states)
    return bool(lay.sums[var] or lay.exts[var])


def _ring_query(ids: list[int], rq_q: list[int], q: int) -> int:
    """The place of query ``q`` among a ring's queries ``ids`` (it is one of them: a
    ring's snapshots reach only Q-sets of its context's queries)."""
    for i in ids:
        if rq_q[i] == q:
            return i
    raise AssertionError(f"query {q} is not among the ring's queries")


def scaled_gloria(program: Gloria, lanes: int, ring: int) -> Gloria:
    """The tables with their offsets in the units of an instance row, for ``lanes``
    lanes and ``ring`` slots per ring: a ring's slots lie side by side (a slot of ring r
    at ``r_aoff[r] + slot * r_aw[r]``, in lanes), and so do a pair's."""
    W = int(program.a_W[0])
    M = int(program.a_M[0])
    return program._replace(
        b_toff=program.b_toff * lanes,
        rq_aoff=program.rq_aoff * lanes,
        r_aw=program.r_aw * lanes,
        r_aoff=program.r_aoff * lanes * ring,
        r_eoff=program.r_eoff * ring,
        r_koff=program.r_koff * ring,
        r_xoff=program.r_xoff * ring,
        p_aoff=program.p_aoff * ring * W * lanes,
        p_eoff=program.p_eoff * ring * max(M, 1),
        p_toff=program.p_toff * ring,
        lz_aoff=program.lz_aoff * ring * W * lanes,
        lz_eoff=program.lz_eoff * ring * max(M, 1),
        lz_toff=program.lz_toff * ring * 2,
    )


__all__ = ["Gloria", "GloriaLowered", "QueryLayout", "lower_gloria", "scaled_gloria"]
