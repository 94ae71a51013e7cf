"""The compiled snapshot loop of GLORIA plans (and of SHARON plans as Q-sets): snapshots and
coefficients (spec ``../shared/specs/gloria.md``, section 3; the readable executor is
:mod:`trendagg.reference.gloria`, the tables :mod:`trendagg.kernels.lower.snapshots`).

It runs a chunk's events for the plan's member queries before
:func:`~trendagg.kernels.loop.chunk.run_chunk` runs them for the others: the two share the
events' arrays, the program's per-query layout (registers, weights, result blocks) and
the result rows of the state, and nothing else (a member's states bind nothing in
``run_chunk``, so its result slots are written and emitted here only).

Per time group: the windows that end by it are emitted (member queries) and the
snapshots that no open window needs leave their rings; then phase 1 computes, for every
event and context (``x``) it is bound in, from the state before the time group:

1. its coefficients: the entries of the totals it reuses (a shared propagation: one add
   per live snapshot for the whole context), each extended by the event (``_own_entry``);
2. per query of the context and window: the values that enter it (the blocks it reads,
   plus the coefficients it evaluates: ``_apply``, an entry times the snapshot's
   registers of that query and window), a trend start, the event's own registers; and
   where the event takes a snapshot or the query ends, ``v``: the values plus its own
   coefficients evaluated.

Phase 2 applies them: a snapshot takes the next slot of its ring (``v`` per query and
window, and the identity entry in its total), an END adds ``v`` to its results, and the
values and coefficients join the context's total (a block per query, an entry per live
snapshot, tagged with the snapshot's number so that a slot reused by a later snapshot is
never read as the earlier one).

A ring holds ``R`` snapshots per instance; when a snapshot finds it full the call returns
4 and the executor replays the open windows with twice the slots.

Two shortcuts of SHARON's (spec ``../shared/specs/sharon.md``, section 3.4), exact for
any plan they apply to (see :mod:`~trendagg.kernels.lower.snapshots`):

- *START groups*: an event that would take a snapshot joins the last one instead (its
  identity entry added to that snapshot's) while the blocks its context reads are at the
  version that snapshot saw and it falls in the same windows (``_joins``);
- *lazy ENDs*: a context whose queries all end there and whose trends arrive only as
  coefficients adds them, per live snapshot and window, to an accumulator; the window's
  close applies each accumulator once per query (``_flush``), not each event.
"""

from __future__ import annotations

import numpy as np

from trendagg.jit import njit
from trendagg.kernels import JIT_INLINE, JIT_INNER, JIT_OPTIONS
from trendagg.kernels._borrow import borrow
from trendagg.kernels._rns import mulmod
from trendagg.kernels.loop.arith import SENT, add_block, addmod, better, nonzero, read_block
from trendagg.kernels.loop.core import own
from trendagg.kernels.loop.results import add_result, emit_query

RING_FULL = 4  # run_gloria's status: a ring was full


@njit(**JIT_INLINE)
def _own_entry(gp, st, ev, ty, e, add, ext, row):  # type: ignore[no-untyped-def]
    """An entry (row ``row`` of add/ext) extended by event e of type code ty: each of
    its paths counts the event and its values."""
    L = st.P.shape[0]
    P = st.P
    PINV = st.PINV
    nmin = gp.a_nmin[0]
    for j in range(gp.acnt_ptr[ty], gp.acnt_ptr[ty + 1]):
        reg = gp.acnt[j]
        for lane in range(L):
            add[row, reg * L + lane] = addmod(add[row, reg * L + lane], add[row, lane], P[lane])
    for j in range(gp.asum_ptr[ty], gp.asum_ptr[ty + 1]):
        reg = gp.asum_reg[j]
        w = gp.asum_w[j]
        for lane in range(L):
            add[row, reg * L + lane] = addmod(
                add[row, reg * L + lane],
                mulmod(add[row, lane], ev.wres[w, e, lane], P[lane], PINV[lane]),
                P[lane],
            )
    for j in range(gp.aext_ptr[ty], gp.aext_ptr[ty + 1]):
        reg = gp.aext_reg[j]
        v = ev.aval[gp.aext_a[j], e]
        if not np.isnan(v) and better(v, ext[row, reg], reg < nmin):
            ext[row, reg] = v


@njit(**JIT_INLINE)
def _apply(prog, gp, st, q, ea, ee, eb, eeb, sa, se, sb, seb, vec, vext):  # type: ignore[no-untyped-def]
    """vec/vext += the registers of the trends made of one that ends at a snapshot's
    event (its registers of query q at sa[sb:], se[seb:]) and one of an entry's paths
    on from it (ea[eb:], ee[eeb:]): counts and sums multiply by the other side's count,
    minima and maxima fold both sides."""
    L = st.P.shape[0]
    P = st.P
    PINV = st.PINV
    if not nonzero(ea, eb, L) or not nonzero(sa, sb, L):
        return
    for lane in range(L):
        vec[lane] = addmod(
            vec[lane], mulmod(ea[eb + lane], sa[sb + lane], P[lane], PINV[lane]), P[lane]
        )
    for j in range(gp.v_ptr[q], gp.v_ptr[q + 1]):
        i = gp.v_qreg[j] * L
        a = gp.v_areg[j] * L
        for lane in range(L):
            x = mulmod(sa[sb + i + lane], ea[eb + lane], P[lane], PINV[lane])
            y = mulmod(ea[eb + a + lane], sa[sb + lane], P[lane], PINV[lane])
            vec[i + lane] = addmod(vec[i + lane], addmod(x, y, P[lane]), P[lane])
    nmin = prog.q_nmin[q]
    for j in range(gp.ve_ptr[q], gp.ve_ptr[q + 1]):
        i = gp.ve_qreg[j]
        is_min = i < nmin
        best = se[seb + i]
        y = ee[eeb + gp.ve_areg[j]]
        if not np.isnan(y) and better(y, best, is_min):
            best = y
        if not np.isnan(best) and better(best, vext[i], is_min):
            vext[i] = best


@njit(**JIT_INLINE)
def _snap_at(prog, gp, gst, inst, r, slot, rqi, k):  # type: ignore[no-untyped-def]
    """(additive base, extreme base) of query rqi's registers for window k in slot
    ``slot`` of ring r, or (-1, -1) when the snapshot has no such window."""
    q = gp.rq_q[rqi]
    ns = prog.q_NS[q]
    ws = k % ns
    if gst.sk[inst, gp.r_koff[r] + slot * gp.r_kw[r] + gp.rq_koff[rqi] + ws] != k:
        return -1, -1
    L = gst.rs[1]
    A = prog.q_A[q]
    M = prog.q_M[q]
    base = gp.r_aoff[r] + slot * gp.r_aw[r] + gp.rq_aoff[rqi] + ws * A * L
    ebase = gp.r_eoff[r] + slot * gp.r_ew[r] + gp.rq_eoff[rqi] + ws * M
    return base, ebase


@njit(**JIT_INLINE)
def _claim(prog, gp, gst, b, inst, k):  # type: ignore[no-untyped-def]
    """The slot of block b for window k, cleared first when it held another window."""
    L = gst.rs[1]
    ns = gp.b_NS[b]
    slot = k % ns
    kidx = gp.b_koff[b] + slot
    if gst.keys[inst, kidx] != k:
        A = gp.b_A[b]
        M = gp.b_M[b]
        base = gp.b_toff[b] + slot * A * L
        for r in range(A * L):
            gst.tot[inst, base + r] = 0
        ebase = gp.b_eoff[b] + slot * M
        for r in range(M):
            gst.ext[inst, ebase + r] = np.nan
        gst.keys[inst, kidx] = k
    return slot


@njit(**JIT_INLINE)
def _accumulate(st, gp, gst, ev, sc, x, inst, e, ntouch, nc):  # type: ignore[no-untyped-def]
    """Event e's coefficients in lazy END context x (per live snapshot: the scratch's
    touched rows) added to the accumulators of its windows, each tagged (snapshot,
    window): a slot that held another is cleared first."""
    L = gst.rs[1]
    R = gst.rs[0]
    W = gp.a_W[0]
    MA = gp.a_M[0]
    sp = gp.x_spec[x]
    lo = max(ev.klo[sp, e], gst.closed[sp])
    hi = ev.khi[sp, e]
    for t in range(ntouch):
        r = sc.ctouch[t, 0]
        sid = sc.ctouch[t, 1]
        slot = sid % R
        row = r * R + slot
        lp = gp.x_lazy[x]
        for c in range(nc):
            if gp.xc_ring[gp.xc_ptr[x] + c] == r:
                lp = gp.x_lazy[x] + c
        ns = gp.lz_NS[lp]
        for k in range(lo, hi):
            cell = slot * ns + k % ns
            tb = gp.lz_toff[lp] + cell * 2
            base = gp.lz_aoff[lp] + cell * W * L
            ebase = gp.lz_eoff[lp] + cell * MA
            if gst.lt[inst, tb] != sid or gst.lt[inst, tb + 1] != k:
                for i in range(W * L):
                    gst.la[inst, base + i] = 0
                for i in range(MA):
                    gst.le[inst, ebase + i] = np.nan
                gst.lt[inst, tb] = sid
                gst.lt[inst, tb + 1] = k
            add_block(
                gst.la[inst],
                gst.le[inst],
                base,
                ebase,
                sc.cadd[row],
                sc.cext[row],
                W,
                MA,
                gp.a_nmin[0],
                st.P,
            )


@njit(**JIT_INNER)
def _flush(prog, st, gp, gst, sc, sp, upto):  # type: ignore[no-untyped-def]
    """The results of lazy END contexts of window spec sp for windows below upto: per
    live snapshot and window, its accumulator applied to each query's registers in
    the snapshot (SHARON's count combination once per window, not per event)."""
    prog = borrow(prog)
    st = borrow(st)
    gp = borrow(gp)
    gst = borrow(gst)
    sc = borrow(sc)
    L = gst.rs[1]
    R = gst.rs[0]
    W = gp.a_W[0]
    MA = gp.a_M[0]
    vec = sc.vec
    vext = sc.vx
    for lp in range(gp.lz_ring.shape[0]):
        x = gp.lz_x[lp]
        if gp.x_spec[x] != sp:
            continue
        r = gp.lz_ring[lp]
        ns = gp.lz_NS[lp]
        c = lp - gp.x_lazy[x]
        nc = gp.xc_ptr[x + 1] - gp.xc_ptr[x]
        for inst in range(gst.meta.shape[0]):  # (another partitioning's: none live)
            for sid in range(gst.meta[inst, 2 * r], gst.meta[inst, 2 * r + 1]):
                slot = sid % R
                for ws in range(ns):
                    cell = slot * ns + ws
                    tb = gp.lz_toff[lp] + cell * 2
                    k = gst.lt[inst, tb + 1]
                    if gst.lt[inst, tb] != sid or k >= upto:
                        continue
                    gst.lt[inst, tb] = -1
                    base = gp.lz_aoff[lp] + cell * W * L
                    ebase = gp.lz_eoff[lp] + cell * MA
                    for qi in range(gp.x_q_ptr[x], gp.x_q_ptr[x + 1]):
                        local = qi - gp.x_q_ptr[x]
                        rqi = gp.xcq[gp.x_cqoff[x] + local * nc + c]
                        sb, seb = _snap_at(prog, gp, gst, inst, r, slot, rqi, k)
                        if sb < 0:
                            continue
                        q = gp.xq_q[qi]
                        for i in range(prog.q_A[q] * L):
                            vec[i] = 0
                        for i in range(prog.q_M[q]):
                            vext[i] = np.nan
                        gst.stats[1] += 1
                        _apply(
                            prog,
                            gp,
                            st,
                            q,
                            gst.la[inst],
                            gst.le[inst],
                            base,
                            ebase,
                            gst.sa[inst],
                            gst.se[inst],
                            sb,
                            seb,
                            vec,
                            vext,
                        )
                        if not nonzero(vec, 0, L):
                            continue
                        for j in range(gp.xq_res_ptr[qi], gp.xq_res_ptr[qi + 1]):
                            rq = gp.xq_res[j]
                            gi = st.inst_ginst[inst, prog.q_gsel[rq]]
                            add_result(prog, st, rq, gi, k, vec, vext)


@njit(**JIT_INLINE)
def _joins(gp, gst, ev, r, inst, e):  # type: ignore[no-untyped-def]
    """Whether START event e (in instance inst) joins the group of ring r's last
    snapshot: it is live, the blocks its context reads are at the version it saw, and
    e is in the same windows (``mg`` per ring: the blocks' version, the snapshot, the
    version it saw, its first window and the end of its windows)."""
    mb = 5 * r
    sid = gst.mg[inst, mb + 1]
    if sid < 0 or sid < gst.meta[inst, 2 * r] or gst.mg[inst, mb] != gst.mg[inst, mb + 2]:
        return False
    sp = gp.r_spec[r]
    lo = max(ev.klo[sp, e], gst.closed[sp])
    return gst.mg[inst, mb + 3] == lo and gst.mg[inst, mb + 4] == ev.khi[sp, e]


@njit(**JIT_INLINE)
def _context(prog, st, ev, gp, gst, sc, x, e, group, nrow, ncrow):  # type: ignore[no-untyped-def]
    """Phase 1 of event e in context x: its rows (values, and v where needed) and its
    coefficient rows, appended to the scratch; returns the new counts."""
    inst = ev.pid[gp.x_g[x], e]
    if inst < 0:
        return nrow, ncrow
    f = gp.x_f[x]
    if f >= 0 and not ev.filt[f, e]:
        return nrow, ncrow
    L = gst.rs[1]
    R = gst.rs[0]
    W = gp.a_W[0]
    MA = gp.a_M[0]
    ty = ev.types[e]
    P = st.P
    r0 = gp.x_ring[x]
    if r0 >= 0 and gp.r_merge[r0] and _joins(gp, gst, ev, r0, inst, e):
        # a START that joins the last snapshot's group: the identity joins its entry
        sc.crow[ncrow, 0] = gp.xc_pair[gp.xc_ptr[x]]
        sc.crow[ncrow, 1] = inst
        sc.crow[ncrow, 2] = gst.mg[inst, 5 * r0 + 1]
        for i in range(W * L):
            sc.crowa[ncrow, i] = 0
        for lane in range(L):
            sc.crowa[ncrow, lane] = 1
        for i in range(MA):
            sc.crowe[ncrow, i] = np.nan
        gst.stats[3] += 1
        return nrow, ncrow + 1
    # 1. the event's coefficients: the reused totals' entries, per live snapshot
    sc.n[2] += 1
    stamp = sc.n[2]
    ntouch = 0
    for pj in range(gp.xu_ptr[x], gp.xu_ptr[x + 1]):
        p = gp.xu_pair[pj]
        r = gp.p_ring[p]
        head = gst.meta[inst, 2 * r]
        nxt = gst.meta[inst, 2 * r + 1]
        for sid in range(head, nxt):
            slot = sid % R
            if gst.ct[inst, gp.p_toff[p] + slot] != sid:
                continue
            row = r * R + slot
            base = gp.p_aoff[p] + slot * W * L
            ebase = gp.p_eoff[p] + slot * MA
            if sc.cmark[row] != stamp:
                sc.cmark[row] = stamp
                sc.ctouch[ntouch, 0] = r
                sc.ctouch[ntouch, 1] = sid
                ntouch += 1
                for i in range(W * L):
                    sc.cadd[row, i] = gst.ca[inst, base + i]
                for i in range(MA):
                    sc.cext[row, i] = gst.ce[inst, ebase + i]
            else:
                read_block(
                    gst.ca[inst],
                    gst.ce[inst],
                    base,
                    ebase,
                    sc.cadd[row],
                    sc.cext[row],
                    W,
                    MA,
                    gp.a_nmin[0],
                    P,
                )
            gst.stats[0] += 1
    for t in range(ntouch):
        row = sc.ctouch[t, 0] * R + sc.ctouch[t, 1] % R
        _own_entry(gp, st, ev, ty, e, sc.cadd, sc.cext, row)
    nc = gp.xc_ptr[x + 1] - gp.xc_ptr[x]
    if gp.x_lazy[x] >= 0:  # results when the windows close (see _flush)
        _accumulate(st, gp, gst, ev, sc, x, inst, e, ntouch, nc)
        return nrow, ncrow
    # 2. per query and window: values, and v
    snap = gp.x_ring[x] >= 0
    vec = sc.vec
    vext = sc.vx
    qhi = gp.x_q_ptr[x + 1] if gp.x_any[x] else gp.x_q_ptr[x]
    for qi in range(gp.x_q_ptr[x], qhi):
        if not (gp.xq_val[qi] or snap or gp.xq_res_ptr[qi + 1] > gp.xq_res_ptr[qi]):
            continue  # (nothing to compute: its trends travel as coefficients only)
        q = gp.xq_q[qi]
        s = gp.xq_s[qi]
        sp = prog.q_spec[q]
        A = prog.q_A[q]
        M = prog.q_M[q]
        nmin = prog.q_nmin[q]
        local = qi - gp.x_q_ptr[x]
        for k in range(max(ev.klo[sp, e], gst.closed[sp]), ev.khi[sp, e]):
            for i in range(A * L):
                vec[i] = 0
            for i in range(M):
                vext[i] = np.nan
            if gp.xq_start[qi]:
                for lane in range(L):
                    vec[lane] = 1
            for j in range(gp.xr_ptr[qi], gp.xr_ptr[qi + 1]):
                b = gp.xr_blk[j]
                slot = k % gp.b_NS[b]
                if gst.keys[inst, gp.b_koff[b] + slot] == k:
                    read_block(
                        gst.tot[inst],
                        gst.ext[inst],
                        gp.b_toff[b] + slot * A * L,
                        gp.b_eoff[b] + slot * M,
                        vec,
                        vext,
                        A,
                        M,
                        nmin,
                        P,
                    )
            for j in range(gp.xe_ptr[qi], gp.xe_ptr[qi + 1]):
                p = gp.xe_pair[j]
                rqi = gp.xe_rq[j]
                r = gp.p_ring[p]
                for sid in range(gst.meta[inst, 2 * r], gst.meta[inst, 2 * r + 1]):
                    slot = sid % R
                    if gst.ct[inst, gp.p_toff[p] + slot] != sid:
                        continue
                    sb, seb = _snap_at(prog, gp, gst, inst, r, slot, rqi, k)
                    if sb < 0:
                        continue
                    gst.stats[1] += 1
                    _apply(
                        prog,
                        gp,
                        st,
                        q,
                        gst.ca[inst],
                        gst.ce[inst],
                        gp.p_aoff[p] + slot * W * L,
                        gp.p_eoff[p] + slot * MA,
                        gst.sa[inst],
                        gst.se[inst],
                        sb,
                        seb,
                        vec,
                        vext,
                    )
            has = nonzero(vec, 0, L)
            if has:
                own(prog, st, ev, q, s, e, vec, vext)
            for i in range(A * L):
                sc.radd[nrow, i] = vec[i]
                sc.vadd[nrow, i] = vec[i]
            for i in range(M):
                sc.rext[nrow, i] = vext[i]
                sc.vxt[nrow, i] = vext[i]
            ends = gp.xq_res_ptr[qi + 1] > gp.xq_res_ptr[qi]
            if (snap or ends) and ntouch:
                for c in range(nc):
                    r = gp.xc_ring[gp.xc_ptr[x] + c]
                    rqi = gp.xcq[gp.x_cqoff[x] + local * nc + c]
                    for sid in range(gst.meta[inst, 2 * r], gst.meta[inst, 2 * r + 1]):
                        slot = sid % R
                        row = r * R + slot
                        if sc.cmark[row] != stamp:
                            continue
                        sb, seb = _snap_at(prog, gp, gst, inst, r, slot, rqi, k)
                        if sb < 0:
                            continue
                        gst.stats[1] += 1
                        _apply(
                            prog,
                            gp,
                            st,
                            q,
                            sc.cadd[row],
                            sc.cext[row],
                            0,
                            0,
                            gst.sa[inst],
                            gst.se[inst],
                            sb,
                            seb,
                            sc.vadd[nrow],
                            sc.vxt[nrow],
                        )
                if not has and not nonzero(sc.vadd[nrow], 0, L):
                    continue
            elif not has:
                continue
            if not snap and gp.xq_blk[qi] < 0:
                # an END without a total: its values only add to results, which nothing
                # reads before they are emitted, so at once and without a row
                for j in range(gp.xq_res_ptr[qi], gp.xq_res_ptr[qi + 1]):
                    rq = gp.xq_res[j]
                    add_result(
                        prog,
                        st,
                        rq,
                        st.inst_ginst[inst, prog.q_gsel[rq]],
                        k,
                        sc.vadd[nrow],
                        sc.vxt[nrow],
                    )
                continue
            sc.rk[nrow, 0] = x
            sc.rk[nrow, 1] = inst
            sc.rk[nrow, 2] = qi
            sc.rk[nrow, 3] = k
            sc.rk[nrow, 4] = e
            sc.rk[nrow, 5] = group
            sc.rk[nrow, 6] = gst.mg[inst, 5 * r0] if snap else 0  # (the blocks' version)
            nrow += 1
    # 3. the coefficients that join the context's total
    if not snap and gp.x_tot[x] >= 0:
        for t in range(ntouch):
            r = sc.ctouch[t, 0]
            sid = sc.ctouch[t, 1]
            p = -1
            for c in range(nc):
                if gp.xc_ring[gp.xc_ptr[x] + c] == r:
                    p = gp.xc_pair[gp.xc_ptr[x] + c]
            row = r * R + sid % R
            sc.crow[ncrow, 0] = p
            sc.crow[ncrow, 1] = inst
            sc.crow[ncrow, 2] = sid
            for i in range(W * L):
                sc.crowa[ncrow, i] = sc.cadd[row, i]
            for i in range(MA):
                sc.crowe[ncrow, i] = sc.cext[row, i]
            ncrow += 1
    return nrow, ncrow


@njit(**JIT_INLINE)
def _phase2(prog, st, ev, gp, gst, sc, nrow, ncrow):  # type: ignore[no-untyped-def]
    """Apply the time group's rows: snapshots, results, totals; RING_FULL when a
    snapshot finds its ring full (nothing of the chunk is final then), else 0."""
    L = gst.rs[1]
    R = gst.rs[0]
    W = gp.a_W[0]
    MA = gp.a_M[0]
    P = st.P
    group = np.int64(-1)
    slot = np.int64(0)
    for n in range(nrow):
        x = sc.rk[n, 0]
        inst = sc.rk[n, 1]
        qi = sc.rk[n, 2]
        k = sc.rk[n, 3]
        q = gp.xq_q[qi]
        A = prog.q_A[q]
        M = prog.q_M[q]
        nmin = prog.q_nmin[q]
        r = gp.x_ring[x]
        if r >= 0:
            nq = gp.r_q_ptr[r + 1] - gp.r_q_ptr[r]
            if sc.rk[n, 5] != group:  # the event's snapshot: the ring's next slot
                group = sc.rk[n, 5]
                head = gst.meta[inst, 2 * r]
                sid = gst.meta[inst, 2 * r + 1]
                if sid - head >= R:
                    return RING_FULL
                gst.meta[inst, 2 * r + 1] = sid + 1
                slot = sid % R
                kb = gp.r_koff[r] + slot * gp.r_kw[r]
                for i in range(gp.r_kw[r]):
                    gst.sk[inst, kb + i] = SENT
                for i in range(nq):
                    gst.sx[inst, gp.r_xoff[r] + slot * nq + i] = SENT
                gst.stats[2] += 1
                if gp.r_merge[r]:  # the group later STARTs may join (see _joins)
                    sp = gp.r_spec[r]
                    e = sc.rk[n, 4]
                    gst.mg[inst, 5 * r + 1] = sid
                    gst.mg[inst, 5 * r + 2] = sc.rk[n, 6]
                    gst.mg[inst, 5 * r + 3] = max(ev.klo[sp, e], gst.closed[sp])
                    gst.mg[inst, 5 * r + 4] = ev.khi[sp, e]
                if gp.x_tot[x] >= 0:  # the identity entry joins the total
                    p = gp.xc_pair[gp.xc_ptr[x]]
                    base = gp.p_aoff[p] + slot * W * L
                    for i in range(W * L):
                        gst.ca[inst, base + i] = 0
                    for lane in range(L):
                        gst.ca[inst, base + lane] = 1
                    for i in range(MA):
                        gst.ce[inst, gp.p_eoff[p] + slot * MA + i] = np.nan
                    gst.ct[inst, gp.p_toff[p] + slot] = sid
            local = qi - gp.x_q_ptr[x]
            rqi = gp.r_q_ptr[r] + local
            ws = k % prog.q_NS[q]
            gst.sk[inst, gp.r_koff[r] + slot * gp.r_kw[r] + gp.rq_koff[rqi] + ws] = k
            base = gp.r_aoff[r] + slot * gp.r_aw[r] + gp.rq_aoff[rqi] + ws * A * L
            ebase = gp.r_eoff[r] + slot * gp.r_ew[r] + gp.rq_eoff[rqi] + ws * M
            for i in range(A * L):
                gst.sa[inst, base + i] = sc.vadd[n, i]
            for i in range(M):
                gst.se[inst, ebase + i] = sc.vxt[n, i]
            xi = gp.r_xoff[r] + slot * nq + local
            if k > gst.sx[inst, xi]:
                gst.sx[inst, xi] = k
        for j in range(gp.xq_res_ptr[qi], gp.xq_res_ptr[qi + 1]):
            rq = gp.xq_res[j]  # (its query, and those of the contexts equal to it)
            add_result(prog, st, rq, st.inst_ginst[inst, prog.q_gsel[rq]], k, sc.vadd[n], sc.vxt[n])
        b = gp.xq_blk[qi]
        if r < 0 and b >= 0:
            bs = _claim(prog, gp, gst, b, inst, k)
            add_block(
                gst.tot[inst],
                gst.ext[inst],
                gp.b_toff[b] + bs * A * L,
                gp.b_eoff[b] + bs * M,
                sc.radd[n],
                sc.rext[n],
                A,
                M,
                nmin,
                P,
            )
            for j in range(gp.br_ptr[b], gp.br_ptr[b + 1]):  # a new version of its readers
                gst.mg[inst, 5 * gp.br[j]] += 1
    for n in range(ncrow):
        p = sc.crow[n, 0]
        inst = sc.crow[n, 1]
        sid = sc.crow[n, 2]
        cs = sid % R
        base = gp.p_aoff[p] + cs * W * L
        ebase = gp.p_eoff[p] + cs * MA
        tag = gp.p_toff[p] + cs
        if gst.ct[inst, tag] != sid:
            for i in range(W * L):
                gst.ca[inst, base + i] = 0
            for i in range(MA):
                gst.ce[inst, ebase + i] = np.nan
            gst.ct[inst, tag] = sid
        add_block(
            gst.ca[inst],
            gst.ce[inst],
            base,
            ebase,
            sc.crowa[n],
            sc.crowe[n],
            W,
            MA,
            gp.a_nmin[0],
            P,
        )
    return 0


@njit(**JIT_INNER)
def _emit(prog, st, gp, out, sp, upto):  # type: ignore[no-untyped-def]
    """Write out and clear every result slot of a member query of window spec sp with
    window < upto."""
    prog = borrow(prog)
    st = borrow(st)
    gp = borrow(gp)
    out = borrow(out)
    for mj in range(gp.m_q.shape[0]):
        q = gp.m_q[mj]
        if prog.q_spec[q] == sp:
            emit_query(prog, st, out, q, upto)


@njit(**JIT_INNER)
def _expire(prog, gp, gst):  # type: ignore[no-untyped-def]
    """Drop, oldest first, the snapshots whose every window has closed."""
    prog = borrow(prog)
    gp = borrow(gp)
    gst = borrow(gst)
    R = gst.rs[0]
    for inst in range(gst.meta.shape[0]):
        for r in range(gp.r_x.shape[0]):
            head = gst.meta[inst, 2 * r]
            nxt = gst.meta[inst, 2 * r + 1]
            nq = gp.r_q_ptr[r + 1] - gp.r_q_ptr[r]
            while head < nxt:
                slot = head % R
                live = False
                for i in range(nq):
                    q = gp.rq_q[gp.r_q_ptr[r] + i]
                    if gst.sx[inst, gp.r_xoff[r] + slot * nq + i] >= gst.closed[prog.q_spec[q]]:
                        live = True
                        break
                if live:
                    break
                head += 1
            gst.meta[inst, 2 * r] = head


@njit(**JIT_OPTIONS)
def run_gloria(prog, st, ev, gp, gst, sc, out, close_to, final):  # type: ignore[no-untyped-def]
    """Run the chunk's events for the member queries; then close their windows below
    close_to (all when final). Returns 0, or RING_FULL (see the module docstring)."""
    prog = borrow(prog)  # (see _borrow: the helpers inlined below take these views)
    st = borrow(st)
    ev = borrow(ev)
    gp = borrow(gp)
    gst = borrow(gst)
    sc = borrow(sc)
    out = borrow(out)
    n = ev.types.shape[0]
    i = np.int64(0)
    group = np.int64(0)
    while i < n:
        tg = ev.tg[i]
        j = i
        while j < n and ev.tg[j] == tg:
            j += 1
        closed_any = False
        for sp in range(gst.closed.shape[0]):
            c = ev.klo[sp, i]
            if c > gst.closed[sp]:
                _flush(prog, st, gp, gst, sc, sp, c)
                _emit(prog, st, gp, out, sp, c)
                gst.closed[sp] = c
                closed_any = True
        if closed_any:
            _expire(prog, gp, gst)
        nrow = np.int64(0)
        ncrow = np.int64(0)
        for e in range(i, j):
            ty = ev.types[e]
            for xj in range(gp.ty_ptr[ty], gp.ty_ptr[ty + 1]):
                nrow, ncrow = _context(
                    prog, st, ev, gp, gst, sc, gp.ty_x[xj], e, group, nrow, ncrow
                )
                group += 1
        if _phase2(prog, st, ev, gp, gst, sc, nrow, ncrow):
            return RING_FULL
        i = j
    for sp in range(gst.closed.shape[0]):
        c = close_to[sp]
        if final:
            _flush(prog, st, gp, gst, sc, sp, np.int64(2**62))
            _emit(prog, st, gp, out, sp, np.int64(2**62))
        elif c > gst.closed[sp]:
            _flush(prog, st, gp, gst, sc, sp, c)
            _emit(prog, st, gp, out, sp, c)
            gst.closed[sp] = c
    _expire(prog, gp, gst)
    return 0
