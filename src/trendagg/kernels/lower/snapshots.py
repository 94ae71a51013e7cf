"""Snapshots: a GLORIA plan (or a SHARON plan as Q-sets) lowered to the arrays its kernel
loops over.

The queries of a plan's Q-sets (*members*) run in :mod:`trendagg.kernels.loop.snapshots`, beside
the kernel's other queries: the core passes (:mod:`~trendagg.kernels.lower.core`) lay them
out as queries (window, partitioning, registers, result blocks, their own weights and
extremes), bind none of their states, and :func:`member_tables` adds these tables, read
from the plan's contexts (:func:`~trendagg.optimizer.contexts.contexts`; the readable
executor, :mod:`trendagg.reference.gloria`, runs the same ones):

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

What the kernel computes once or skips (contexts equal by construction, values that stay
none, lazy ENDs, START groups) is decided in :mod:`~trendagg.kernels.lower.snapshot_savings`.
Offsets are of one slot (rings) or of lanes 1 (blocks); :func:`scaled_gloria` makes them
those of an instance row for the lanes and the ring size of a run. The tables' type,
:class:`~trendagg.kernels.gloria_program.Gloria`, stays in that module for numba's cache.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from trendagg.kernels.gloria_program import Gloria
from trendagg.kernels.lower.builder import Builder, csr, i64
from trendagg.kernels.lower.snapshot_savings import equal_contexts, lazy_ends, start_groups, valued
from trendagg.optimizer.contexts import Context, contexts


@dataclass
class QueryLayout:
    """What the core passes made of one member query: its index, window spec,
    partitioning, register sizes, window slots, and per state (by variable name) its
    index, filter and the registers its events add to (counts, (register, weight
    column), (register, extreme column))."""

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


def member_tables(b: Builder) -> None:
    """Pass: the snapshot kernel's tables for the member queries (none without Q-sets)."""
    if not b.qsets:
        return
    q = b.q
    layouts = {}
    types_of = {}
    for qi in sorted(b.on_gloria):
        plan = b.plans[qi]
        off = q["q_soff"][qi]
        states = {var: s for s, var in enumerate(b.state_names[qi])}
        layouts[plan.name] = QueryLayout(
            qi,
            q["q_spec"][qi],
            q["q_part"][qi],
            q["q_A"][qi],
            q["q_M"][qi],
            q["q_nmin"][qi],
            q["q_NS"][qi],
            states,
            {var: b.rule(b.bindings[off + s][2]) for var, s in states.items()},
            {var: list(b.cnt[off + s]) for var, s in states.items()},
            {var: list(b.sums[off + s]) for var, s in states.items()},
            {var: list(b.exts[off + s]) for var, s in states.items()},
        )
        types_of[plan.name] = {v: info.type for v, info in plan.vars.items()}
    member_plans = [b.plans[qi] for qi in sorted(b.on_gloria)]
    b.gloria_low = lower_gloria(
        contexts(member_plans, b.qsets), layouts, b.tcode, b.n_types, types_of
    )


class _Snapshots:
    """The snapshot tables as :func:`lower_gloria`'s steps build them (``tables``: the
    fields of :class:`Gloria` made so far)."""

    def __init__(
        self,
        at: dict[str, list[Context]],
        layouts: dict[str, QueryLayout],
        type_code: dict[str, int],
        n_types: int,
        types_of: dict[str, dict[str, str]],
    ):
        self.layouts = layouts
        self.type_code = type_code
        self.n_types = n_types
        self.types_of = types_of
        self.ctx_list: list[tuple[str, Context]] = [(e, x) for e in sorted(at) for x in at[e]]
        self.tables: dict[str, np.ndarray] = {}
        self.widths: dict[str, int] = {}
        self.totals: dict[tuple[str, object], int] = {}
        self.blocks: list[tuple[int, str]] = []  # (total, query)
        self.block_of: dict[tuple[int, str], int] = {}
        self.rings: list[int] = []  # context index per ring
        self.ring_of: dict[int, int] = {}
        self.carried: list[set[int]] = []  # per context, the rings its coefficients hold
        self.holds: dict[int, set[int]] = {}  # total -> rings
        self.pairs: list[tuple[int, int]] = []  # (total, ring)
        self.pair_of: dict[tuple[int, int], int] = {}
        self.rep_of: list[int] = []  # per context, the one that computes it
        self.block_rep: list[int] = []  # per block, the one that holds its values
        self.parts: list[int] = []  # the partitionings of the member queries
        self.r_q: list[list[int]] = []  # per ring, its ring queries
        self.rq_q: list[int] = []  # per ring query, its query
        # per context (x_*) and per query of a context (xq_*), see _contexts
        self.x: dict[str, list[int]] = {}
        self.xq: list[list[int]] = []
        self.xq_res: list[list[int]] = []
        self.xr: list[list[int]] = []
        self.xe_pair: list[list[int]] = []
        self.xc_ring: list[list[int]] = []
        self.xu: list[list[int]] = []


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
    s = _Snapshots(at, layouts, type_code, n_types, types_of)
    for step in _STEPS:
        step(s)
    return GloriaLowered(Gloria(**s.tables), s.widths, len(s.rings), len(s.pairs), len(s.ctx_list))


def _totals_and_rings(s: _Snapshots) -> None:
    """Totals, and the blocks of values each keeps (one per query); rings (snapshot
    contexts) and which totals' coefficients hold each ring's snapshots (pairs); the
    contexts and blocks computed once (:func:`equal_contexts`)."""
    ctx_list, totals, block_of = s.ctx_list, s.totals, s.block_of
    for e, x in ctx_list:
        if x.totalled:
            t = totals.setdefault((e, x.key), len(totals))
            for q in x.queries:
                if (t, q) not in block_of:
                    block_of[(t, q)] = len(s.blocks)
                    s.blocks.append((t, q))
    for xi, (_, x) in enumerate(ctx_list):
        if x.snapshot:
            s.ring_of[xi] = len(s.rings)
            s.rings.append(xi)
    carried: list[set[int]] = [set() for _ in ctx_list]
    holds = s.holds
    changed = True
    while changed:
        changed = False
        for xi, (e, x) in enumerate(ctx_list):
            mine = set()
            if x.snapshot:
                mine.add(s.ring_of[xi])
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
    s.carried = carried
    for t in range(len(totals)):
        for r in sorted(holds.get(t, ())):
            s.pair_of[(t, r)] = len(s.pairs)
            s.pairs.append((t, r))
    s.rep_of, s.block_rep = equal_contexts(ctx_list, totals, block_of, holds, s.layouts, s.types_of)


def _algebra(s: _Snapshots) -> None:
    """The algebra: registers over event types, what an event of each type adds to
    them, and per member query its view (its registers against the algebra's)."""
    layouts, types_of, type_code = s.layouts, s.types_of, s.type_code
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
    aext = {("min", *m): i for i, m in enumerate(amin)}
    aext.update({("max", *m): len(amin) + i for i, m in enumerate(amax)})
    acnt_l: list[list[int]] = [[] for _ in range(s.n_types)]
    asum_l: list[list[tuple[int, int]]] = [[] for _ in range(s.n_types)]
    aext_l: list[list[tuple[int, int]]] = [[] for _ in range(s.n_types)]
    for key, reg in areg.items():
        if key[0] == "cnt":
            acnt_l[type_code[str(key[1])]].append(reg)
        elif key[0] == "sum":
            asum_l[type_code[str(key[1])]].append((reg, int(key[2])))  # type: ignore[call-overload]
    for key, reg in aext.items():
        aext_l[type_code[str(key[1])]].append((reg, int(key[2])))  # type: ignore[call-overload]
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
    t = s.tables
    t["a_W"] = i64([len(areg)])
    t["a_M"] = i64([len(amin) + len(amax)])
    t["a_nmin"] = i64([len(amin)])
    t["acnt_ptr"], t["acnt"] = csr(acnt_l)
    t["asum_ptr"], t["asum_reg"] = csr([[r for r, _ in row] for row in asum_l])
    t["asum_w"] = csr([[w for _, w in row] for row in asum_l])[1]
    t["aext_ptr"], t["aext_reg"] = csr([[r for r, _ in row] for row in aext_l])
    t["aext_a"] = csr([[a for _, a in row] for row in aext_l])[1]
    t["v_ptr"], t["v_qreg"] = csr([[i for i, _ in row] for row in view])
    t["v_areg"] = csr([[j for _, j in row] for row in view])[1]
    t["ve_ptr"], t["ve_qreg"] = csr([[i for i, _ in row] for row in eview])
    t["ve_areg"] = csr([[j for _, j in row] for row in eview])[1]
    t["m_q"] = i64(sorted(lay.index for lay in layouts.values()))


def _blocks(s: _Snapshots) -> None:
    """The blocks' offsets, partitioning by partitioning (rows of one instance)."""
    layouts, blocks = s.layouts, s.blocks
    b_toff, b_eoff, b_koff = [0] * len(blocks), [0] * len(blocks), [0] * len(blocks)
    s.widths.update({"tot": 1, "ext": 1, "keys": 1})
    s.parts = sorted({lay.part for lay in layouts.values()})
    for g in s.parts:
        t_ = e_ = k_ = 0
        for b, (_, q) in enumerate(blocks):
            lay = layouts[q]
            if lay.part != g or s.block_rep[b] != b:  # (a block equal to another: none)
                continue
            b_toff[b], b_eoff[b], b_koff[b] = t_, e_, k_
            t_ += lay.NS * lay.A
            e_ += lay.NS * lay.M
            k_ += lay.NS
        for name, used in zip(("tot", "ext", "keys"), (t_, e_, k_), strict=True):
            s.widths[name] = max(s.widths[name], used)
    s.tables.update(
        b_q=i64([layouts[q].index for _, q in blocks]),
        b_A=i64([layouts[q].A for _, q in blocks]),
        b_M=i64([layouts[q].M for _, q in blocks]),
        b_NS=i64([layouts[q].NS for _, q in blocks]),
        b_toff=i64(b_toff),
        b_eoff=i64(b_eoff),
        b_koff=i64(b_koff),
    )


def _ring_slots(s: _Snapshots) -> None:
    """Rings: a slot holds per query of its context the values of each window slot and
    the last window (expiry); rings and pairs laid out per partitioning too."""
    layouts, rings = s.layouts, s.rings
    rq_aoff: list[int] = []
    rq_eoff: list[int] = []
    rq_koff: list[int] = []
    r_aw, r_ew, r_kw = [], [], []
    for xi in rings:
        _, x = s.ctx_list[xi]
        ids = []
        a_ = e_ = k_ = 0
        for q in x.queries:
            lay = layouts[q]
            ids.append(len(s.rq_q))
            s.rq_q.append(lay.index)
            rq_aoff.append(a_)
            rq_eoff.append(e_)
            rq_koff.append(k_)
            a_ += lay.NS * lay.A
            e_ += lay.NS * lay.M
            k_ += lay.NS
        s.r_q.append(ids)
        r_aw.append(a_)
        r_ew.append(e_)
        r_kw.append(k_)
    ring_part = [layouts[s.ctx_list[xi][1].queries[0]].part for xi in rings]
    # per-slot units of a ring: (adds, exts, keys, expiry words); per pair one slot is
    # a_W adds, the algebra's extremes and a tag
    r_units = [[0, 0, 0, 0] for _ in rings]
    p_units = [[0, 0, 0] for _ in s.pairs]
    ring_totals = {"sa": 1, "se": 1, "sk": 1, "sx": 1, "meta": 1, "ca": 1, "ce": 1, "ct": 1}
    for g in s.parts:
        a_ = e_ = k_ = x_ = 0
        for r in range(len(rings)):
            if ring_part[r] != g:
                continue
            r_units[r] = [a_, e_, k_, x_]
            a_ += r_aw[r]
            e_ += r_ew[r]
            k_ += r_kw[r]
            x_ += len(s.r_q[r])
        ring_totals["sa"] = max(ring_totals["sa"], a_)
        ring_totals["se"] = max(ring_totals["se"], e_)
        ring_totals["sk"] = max(ring_totals["sk"], k_)
        ring_totals["sx"] = max(ring_totals["sx"], x_)
        n_r = sum(1 for r in range(len(rings)) if ring_part[r] == g)
        ring_totals["meta"] = max(ring_totals["meta"], 2 * len(rings), 2 * n_r)
        c_ = 0
        for p, (_, r) in enumerate(s.pairs):
            if ring_part[r] != g:
                continue
            p_units[p] = [c_, c_, c_]
            c_ += 1
        ring_totals["ca"] = max(ring_totals["ca"], c_)
    s.widths.update(ring_totals)
    t_p_lists: list[list[int]] = [[] for _ in range(len(s.totals))]
    for p, (t, _) in enumerate(s.pairs):
        t_p_lists[t].append(p)
    t_p_ptr, t_p = csr(t_p_lists)
    s.tables.update(
        r_x=i64(rings),
        r_q_ptr=csr(s.r_q)[0],
        rq_q=i64(s.rq_q),
        rq_aoff=i64(rq_aoff),
        rq_eoff=i64(rq_eoff),
        rq_koff=i64(rq_koff),
        r_aw=i64(r_aw),
        r_ew=i64(r_ew),
        r_kw=i64(r_kw),
        r_aoff=i64([u[0] for u in r_units]),
        r_eoff=i64([u[1] for u in r_units]),
        r_koff=i64([u[2] for u in r_units]),
        r_xoff=i64([u[3] for u in r_units]),
        t_p_ptr=t_p_ptr,
        t_p=t_p,
        p_ring=i64([r for _, r in s.pairs]),
        p_aoff=i64([u[0] for u in p_units]),
        p_eoff=i64([u[1] for u in p_units]),
        p_toff=i64([u[2] for u in p_units]),
    )


def _contexts(s: _Snapshots) -> None:
    """Per context and per query of a context, what its events do (see the module
    docstring): the lists of ``x_*`` and ``xq_*``, in ``s.x``, ``s.xq`` and the rest."""
    layouts, totals, holds, pair_of = s.layouts, s.totals, s.holds, s.pair_of
    ty_lists: list[list[int]] = [[] for _ in range(s.n_types)]
    x: dict[str, list[int]] = {name: [] for name in ("g", "f", "ring", "tot", "cqoff")}
    xq: dict[str, list[int]] = {name: [] for name in ("q", "s", "start", "blk", "cq")}
    aliases: dict[int, list[int]] = {}
    for xi, r in enumerate(s.rep_of):
        if r != xi:
            aliases.setdefault(r, []).append(xi)
    xe_rq_l: list[list[int]] = []
    xc_pair_l: list[list[int]] = []
    for xi, (e, ctx) in enumerate(s.ctx_list):
        if s.rep_of[xi] == xi:  # (one equal to another is computed there)
            ty_lists[s.type_code[e]].append(xi)
        x["g"].append(layouts[ctx.queries[0]].part)
        x["f"].append(layouts[ctx.binder[0]].filters[ctx.binder[1]])
        x["ring"].append(s.ring_of.get(xi, -1))
        t = totals[(e, ctx.key)] if ctx.totalled else -1
        x["tot"].append(t)
        rings_here = sorted(s.carried[xi])
        s.xc_ring.append(rings_here)
        xc_pair_l.append([pair_of[(t, r)] if t >= 0 else -1 for r in rings_here])
        x["cqoff"].append(len(xq["cq"]))
        reused = []
        for inc in ctx.incoming:
            src = totals.get((inc.source, inc.qset))
            if inc.reuse and src is not None:
                reused += [pair_of[(src, r)] for r in sorted(holds.get(src, ()))]
        s.xu.append(reused)
        ids = []
        for q in ctx.queries:
            lay = layouts[q]
            var = next(v for v, ty in s.types_of[q].items() if ty == e and v in lay.states)
            ids.append(len(xq["q"]))
            xq["q"].append(lay.index)
            xq["s"].append(lay.states[var])
            xq["start"].append(1 if q in ctx.starts else 0)
            res = [lay.index] if q in ctx.ends else []
            for other in aliases.get(xi, ()):  # the equal contexts' ENDs take the same values
                _, y = s.ctx_list[other]
                res += [layouts[name].index for name in y.ends]
            s.xq_res.append(res)
            xq["blk"].append(s.block_rep[s.block_of[(t, q)]] if t >= 0 else -1)
            reads, epairs, erq = [], [], []
            for inc in ctx.incoming:
                if q not in inc.queries:
                    continue
                src = totals.get((inc.source, inc.qset))
                if src is None:
                    continue
                reads.append(s.block_rep[s.block_of[(src, q)]])
                if inc.reuse:
                    continue
                for r in sorted(holds.get(src, ())):
                    epairs.append(pair_of[(src, r)])
                    erq.append(_ring_query(s.r_q[r], s.rq_q, lay.index))
            s.xr.append(reads)
            s.xe_pair.append(epairs)
            xe_rq_l.append(erq)
            for r in rings_here:
                xq["cq"].append(_ring_query(s.r_q[r], s.rq_q, lay.index))
        s.xq.append(ids)
    s.x = {**{f"x_{k}": v for k, v in x.items()}, **{f"xq_{k}": v for k, v in xq.items()}}
    t_ = s.tables
    t_["ty_ptr"], t_["ty_x"] = csr(ty_lists)
    t_["x_q_ptr"] = csr(s.xq)[0]
    t_["xu_ptr"], t_["xu_pair"] = csr(s.xu)
    t_["xq_res_ptr"], t_["xq_res"] = csr(s.xq_res)
    t_["xe_ptr"], t_["xe_pair"] = csr(s.xe_pair)
    t_["xe_rq"] = csr(xe_rq_l)[1]
    t_["xc_ptr"], t_["xc_ring"] = csr(s.xc_ring)
    t_["xc_pair"] = csr(xc_pair_l)[1]
    for name in ("x_g", "x_f", "x_ring", "x_tot", "xq_q", "xq_s", "xq_start", "xq_blk"):
        t_[name] = i64(s.x[name])
    t_["xcq"] = i64(s.x["xq_cq"])
    t_["x_cqoff"] = i64(s.x["x_cqoff"])


def _values(s: _Snapshots) -> None:
    """The per-query values that can be other than none (read by the loop's per-query
    part; a block never written is read by no one), and the contexts whose events do
    anything."""
    xq_val = valued(
        s.ctx_list,
        s.rep_of,
        s.xq,
        s.x["x_ring"],
        s.x["xq_blk"],
        s.x["xq_start"],
        s.xe_pair,
        s.xr,
    )
    xq_blk, x_ring = s.x["xq_blk"], s.x["x_ring"]
    valued_blocks = {xq_blk[qi] for qi, v in enumerate(xq_val) if v and xq_blk[qi] >= 0}
    s.xr = [[b for b in reads if b in valued_blocks] for reads in s.xr]
    x_any = [
        int(x_ring[xi] >= 0 or any(xq_val[qi] or s.xq_res[qi] for qi in s.xq[xi]))
        for xi in range(len(s.ctx_list))
    ]
    s.x["xq_val"] = xq_val
    s.tables["xr_ptr"], s.tables["xr_blk"] = csr(s.xr)
    s.tables["xq_val"] = i64(xq_val)
    s.tables["x_any"] = i64(x_any)


def _lazy_pairs(s: _Snapshots) -> None:
    """The contexts whose results wait for their windows to close (:func:`lazy_ends`),
    and per (such context, ring) its accumulator's offsets."""
    layouts, ctx_list = s.layouts, s.ctx_list
    lazy = lazy_ends(
        ctx_list, layouts, s.xq, s.x["x_ring"], s.x["x_tot"], s.x["xq_val"], s.xq_res, s.xc_ring
    )
    x_lazy = [-1] * len(ctx_list)
    x_spec = [layouts[x.queries[0]].spec for _, x in ctx_list]
    lz: list[tuple[int, int]] = []  # (context, ring) of each lazy pair
    for xi in lazy:
        x_lazy[xi] = len(lz)
        lz += [(xi, r) for r in s.xc_ring[xi]]
    lz_units: list[list[int]] = [[0, 0, 0] for _ in lz]
    s.widths.update({"la": 1, "le": 1, "lt": 1})
    for g in s.parts:
        a_ = 0
        for i, (xi, _) in enumerate(lz):
            if s.x["x_g"][xi] != g:
                continue
            lz_units[i] = [a_, a_, a_]
            a_ += layouts[ctx_list[xi][1].queries[0]].NS
        s.widths["la"] = max(s.widths["la"], a_)
    s.tables.update(
        x_lazy=i64(x_lazy),
        x_spec=i64(x_spec),
        lz_x=i64([xi for xi, _ in lz]),
        lz_ring=i64([r for _, r in lz]),
        lz_NS=i64([layouts[ctx_list[xi][1].queries[0]].NS for xi, _ in lz]),
        lz_aoff=i64([u[0] for u in lz_units]),
        lz_eoff=i64([u[1] for u in lz_units]),
        lz_toff=i64([u[2] for u in lz_units]),
    )


def _start_groups(s: _Snapshots) -> None:
    """Per ring, whether a START event may join the last snapshot (:func:`start_groups`);
    per block, the rings whose snapshots read it."""
    r_merge, r_spec, br_l = start_groups(
        s.ctx_list,
        s.rings,
        s.layouts,
        s.types_of,
        len(s.blocks),
        s.xq,
        s.x["x_tot"],
        s.xu,
        s.xe_pair,
        s.xr,
        s.xq_res,
    )
    s.tables["r_merge"] = i64(r_merge)
    s.tables["r_spec"] = i64(r_spec)
    s.tables["br_ptr"], s.tables["br"] = csr(br_l)


# lower_gloria's steps, in order: each reads what the ones before it made
_STEPS = (
    _totals_and_rings,
    _algebra,
    _blocks,
    _ring_slots,
    _contexts,
    _values,
    _lazy_pairs,
    _start_groups,
)


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
