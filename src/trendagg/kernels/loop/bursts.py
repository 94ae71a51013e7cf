"""HAMLET's shared Kleene bursts in the loop (HAMLET Def. 4.1 and 4.2; the tables:
:mod:`trendagg.kernels.lower.bursts`): a burst's coefficients extended per time group
(``burst_add``), and at its end either applied to every query and window of its
sharing set (``burst_apply``) or its events replayed query by query
(``burst_replay``), as the dynamic optimizer decides per burst (``burst_flush``).

A burst (HAMLET, Def. 4.1) is summarised by coefficients shared by all its
queries: after the burst, a query's registers of E are
``alpha * T0 + beta * X`` (+ ``gamma_w * count(T0) + delta_w * count(X)`` for
the registers E's own events add to, weight w), where T0 are its registers of
E before the burst and X what enters E from its other predecessors (plus one
trend start when E starts the pattern). A time group of g events with weight
sum W maps (alpha, beta, gamma, delta) to ((1+g) alpha, (1+g) beta + g,
(1+g) gamma + W alpha, (1+g) delta + W (beta + 1)). The dynamic optimizer
compares the cost of applying them to every query and window with replaying
the burst event by event (HAMLET, Def. 4.2), burst by burst.
"""

from __future__ import annotations

import numpy as np

from trendagg.jit import njit
from trendagg.kernels import JIT_INLINE, JIT_INNER
from trendagg.kernels._borrow import borrow
from trendagg.kernels._rns import mulmod
from trendagg.kernels.loop.arith import addmod, better
from trendagg.kernels.loop.core import claim, compute, end_results, gather, insert_all
from trendagg.kernels.loop.negation import nq_append


@njit(**JIT_INLINE)
def burst_reset(prog, st, b, inst):  # type: ignore[no-untyped-def]
    L = st.P.shape[0]
    off = prog.set_boff[b]
    nw = prog.set_nw[b]
    st.bur[inst, off + 0] = -1  # pane: no open burst
    st.bur[inst, off + 1] = 0  # events
    st.bur[inst, off + 2] = -1  # time group of the pending step
    st.bur[inst, off + 3] = 0  # events in the pending step
    st.bur[inst, off + 4] = -1  # first event (chunk index)
    st.bur[inst, off + 5] = -1  # last event
    c = off + 6
    for lane in range(L):
        st.bur[inst, c + lane] = 1  # alpha
        st.bur[inst, c + L + lane] = 0  # beta
    for r in range(3 * nw * L):  # gamma, delta, pending weight sums
        st.bur[inst, c + 2 * L + r] = 0
    foff = prog.set_bfoff[b]
    for j in range(prog.set_na[b]):  # minima (even) and maxima (odd): none yet
        st.burf[inst, foff + 2 * j] = np.inf
        st.burf[inst, foff + 2 * j + 1] = -np.inf


@njit(**JIT_INLINE)
def burst_step(prog, st, b, inst):  # type: ignore[no-untyped-def]
    """Fold the pending time group (g events, weight sums W) into the coefficients."""
    L = st.P.shape[0]
    P = st.P
    PINV = st.PINV
    off = prog.set_boff[b]
    g = st.bur[inst, off + 3]
    if g == 0:
        return
    nw = prog.set_nw[b]
    c = off + 6
    for lane in range(L):
        p = P[lane]
        pinv = PINV[lane]
        f = (1 + g) % p
        gg = g % p
        alpha = st.bur[inst, c + lane]
        beta = st.bur[inst, c + L + lane]
        for j in range(nw):
            gi = c + 2 * L + j * L + lane
            di = c + 2 * L + nw * L + j * L + lane
            wi = c + 2 * L + 2 * nw * L + j * L + lane
            w = st.bur[inst, wi]
            st.bur[inst, gi] = addmod(
                mulmod(f, st.bur[inst, gi], p, pinv), mulmod(w, alpha, p, pinv), p
            )
            st.bur[inst, di] = addmod(
                mulmod(f, st.bur[inst, di], p, pinv), mulmod(w, addmod(beta, 1, p), p, pinv), p
            )
            st.bur[inst, wi] = 0
        st.bur[inst, c + lane] = mulmod(f, alpha, p, pinv)
        st.bur[inst, c + L + lane] = addmod(mulmod(f, beta, p, pinv), gg, p)
    st.bur[inst, off + 3] = 0


@njit(**JIT_INLINE)
def burst_add(prog, st, ev, b, inst, e):  # type: ignore[no-untyped-def]
    L = st.P.shape[0]
    P = st.P
    off = prog.set_boff[b]
    if st.bur[inst, off + 0] < 0:
        st.bur[inst, off + 0] = ev.pane[b, e]
        st.bur[inst, off + 4] = e
    else:
        ev.bnext[b, st.bur[inst, off + 5]] = e
    ev.bnext[b, e] = -1
    st.bur[inst, off + 5] = e
    st.bur[inst, off + 1] += 1
    tg = ev.tg[e]
    if st.bur[inst, off + 2] != tg:
        burst_step(prog, st, b, inst)
        st.bur[inst, off + 2] = tg
    st.bur[inst, off + 3] += 1
    nw = prog.set_nw[b]
    wbase = off + 6 + 2 * L + 2 * nw * L
    for lane in range(L):  # weight 0 is the constant 1 (occurrence counts)
        st.bur[inst, wbase + lane] = addmod(st.bur[inst, wbase + lane], 1, P[lane])
    for j in range(1, nw):
        w = prog.set_wcol[b, j]
        for lane in range(L):
            i = wbase + j * L + lane
            st.bur[inst, i] = addmod(st.bur[inst, i], ev.wres[w, e, lane], P[lane])
    foff = prog.set_bfoff[b]
    for j in range(prog.set_na[b]):  # (NaN, no value here, compares false: skipped)
        v = ev.aval[prog.set_acol[b, j], e]
        if v < st.burf[inst, foff + 2 * j]:
            st.burf[inst, foff + 2 * j] = v
        if v > st.burf[inst, foff + 2 * j + 1]:
            st.burf[inst, foff + 2 * j + 1] = v


@njit(**JIT_INLINE)
def log_decision(dlog, stats, b, inst, first, n, shared_cost, nonshared, shared):  # type: ignore[no-untyped-def]
    """One row of the decision log (for explain): set, partition, first event, events, the
    two costs, and whether the burst was shared, while the log has room (a run without a
    log has a log of no rows: one kernel for both, tested once per burst)."""
    d = stats[3]
    if d < dlog.shape[0]:
        dlog[d, 0] = b
        dlog[d, 1] = inst
        dlog[d, 2] = first
        dlog[d, 3] = n
        dlog[d, 4] = shared_cost
        dlog[d, 5] = nonshared
        dlog[d, 6] = 1 if shared else 0
        stats[3] = d + 1


@njit(**JIT_INLINE)
def burst_flush(prog, st, ev, sc, b, inst):  # type: ignore[no-untyped-def]
    off = prog.set_boff[b]
    if st.bur[inst, off + 0] < 0:
        return
    burst_step(prog, st, b, inst)
    n = st.bur[inst, off + 1]
    if n == 0:
        burst_reset(prog, st, b, inst)
        return
    first = st.bur[inst, off + 4]
    L = st.P.shape[0]
    k_total = 0
    a_total = 0
    for j in range(prog.set_q_ptr[b], prog.set_q_ptr[b + 1]):
        q = prog.set_q[j]
        sp = prog.q_spec[q]
        nk = ev.khi[sp, first] - max(ev.klo[sp, first], st.closed[sp])
        k_total += max(nk, 0)
        a_total += max(nk, 0) * (prog.q_A[q] + 1)
    # HAMLET Def. 4.2 in this kernel's units, with the parameters of
    # trendagg.optimizer.cost: replaying costs every query's registers per event
    # and window; sharing costs the coefficient updates per event, and applying
    # them per register, query and window
    shared = st.mode[0] == 2
    nonshared = shared_cost = 0
    if st.mode[0] == 1 or st.dlog.shape[0] > 0:
        nonshared = n * a_total * L
        shared_cost = (
            n * prog.set_eunits[b] * L + a_total * L * prog.cost_apply[0] // prog.cost_apply[1]
        )
        if st.mode[0] == 1:
            shared = shared_cost < nonshared
    log_decision(st.dlog, st.stats, b, inst, first, n, shared_cost, nonshared, shared)
    st.stats[0] += 1
    if shared:
        st.stats[1] += 1
        burst_apply(prog, st, ev, sc, b, inst, first, st.neg)
    else:
        burst_replay(prog, st, ev, sc, b, inst, first)
    burst_reset(prog, st, b, inst)


@njit(**JIT_INLINE)
def burst_apply(prog, st, ev, sc, b, inst, first, qs):  # type: ignore[no-untyped-def]
    L = st.P.shape[0]
    P = st.P
    PINV = st.PINV
    off = prog.set_boff[b]
    nw = prog.set_nw[b]
    c = off + 6
    foff = prog.set_bfoff[b]
    x = sc.vec
    xe = sc.vext
    tgf = ev.tg[first]
    for j in range(prog.set_q_ptr[b], prog.set_q_ptr[b + 1]):
        q = prog.set_q[j]
        s = prog.set_s[j]
        sp = prog.q_spec[q]
        A = prog.q_A[q]
        M = prog.q_M[q]
        nmin = prog.q_nmin[q]
        gs = prog.q_soff[q] + s
        cls = prog.qs_c[gs]
        for k in range(max(ev.klo[sp, first], st.closed[sp]), ev.khi[sp, first]):
            slot = claim(prog, st, cls, inst, k)
            gather(
                prog, st, ev, sc, q, s, inst, k, np.int64(-1), tgf, x, xe, s, qs
            )  # X: start + E's others
            tbase = prog.c_toff[cls] + slot * A * L
            any_trend = False
            for lane in range(L):
                if x[lane] != 0 or st.tot[inst, tbase + lane] != 0:
                    any_trend = True
            if not any_trend:
                continue
            new = sc.vec2
            for r in range(A):
                for lane in range(L):
                    p = P[lane]
                    pinv = PINV[lane]
                    new[r * L + lane] = addmod(
                        mulmod(st.bur[inst, c + lane], st.tot[inst, tbase + r * L + lane], p, pinv),
                        mulmod(st.bur[inst, c + L + lane], x[r * L + lane], p, pinv),
                        p,
                    )
            for rj in range(prog.cnt_ptr[gs], prog.cnt_ptr[gs + 1]):
                own_coef(prog, st, inst, c, nw, np.int64(0), prog.cnt_reg[rj], tbase, x, new)
            for rj in range(prog.sum_ptr[gs], prog.sum_ptr[gs + 1]):
                wj = prog.set_wmap[b, prog.sum_w[rj]]
                own_coef(prog, st, inst, c, nw, wj, prog.sum_reg[rj], tbase, x, new)
            ebase = prog.c_eoff[cls] + slot * M
            newe = sc.vext2
            for r in range(M):
                cur = st.ext[inst, ebase + r]
                v = xe[r]
                if not np.isnan(v) and (better(v, cur, r < nmin)):
                    cur = v
                newe[r] = cur
            for rj in range(prog.ext_ptr[gs], prog.ext_ptr[gs + 1]):
                reg = prog.ext_reg[rj]
                aj = prog.set_amap[b, prog.ext_a[rj]]
                v = st.burf[inst, foff + 2 * aj + (0 if reg < nmin else 1)]
                cur = newe[reg]
                if better(v, cur, reg < nmin):
                    newe[reg] = v
            ends = prog.c_end_ptr[cls] < prog.c_end_ptr[cls + 1] or (
                qs.ndim == 1 and prog.c_sig_ptr[cls] < prog.c_sig_ptr[cls + 1]
            )
            queued = qs.ndim == 1 and prog.c_nt_ptr[cls] < prog.c_nt_ptr[cls + 1]
            if ends or queued:
                # the burst's vertices add up to new - T0 (their extremes are newe: each
                # extends T0 or X); no event of a negative query falls inside a burst
                # (its types interrupt it), so the burst's first time group stands for all
                for r in range(0, A * L, L):
                    for lane in range(L):
                        i = r + lane
                        x[i] = addmod(new[i], P[lane] - st.tot[inst, tbase + i], P[lane])
                if queued:
                    for rj in range(prog.c_nt_ptr[cls], prog.c_nt_ptr[cls + 1]):
                        nq_append(prog, st, ev, prog.c_nt[rj], inst, k, tgf, np.int64(-1), x, newe)
                if ends:
                    end_results(prog, st, ev, cls, inst, k, tgf, x, newe, qs)
            for r in range(A * L):
                st.tot[inst, tbase + r] = new[r]
            for r in range(M):
                st.ext[inst, ebase + r] = newe[r]


@njit(**JIT_INLINE)
def own_coef(prog, st, inst, c, nw, wj, reg, tbase, x, new):  # type: ignore[no-untyped-def]
    """new[reg] += gamma_w * count(T0) + delta_w * count(X)."""
    L = st.P.shape[0]
    P = st.P
    PINV = st.PINV
    for lane in range(L):
        p = P[lane]
        pinv = PINV[lane]
        gamma = st.bur[inst, c + 2 * L + wj * L + lane]
        delta = st.bur[inst, c + 2 * L + nw * L + wj * L + lane]
        t = addmod(
            mulmod(gamma, st.tot[inst, tbase + lane], p, pinv), mulmod(delta, x[lane], p, pinv), p
        )
        new[reg * L + lane] = addmod(new[reg * L + lane], t, p)


@njit(**JIT_INLINE)
def burst_replay(prog, st, ev, sc, b, inst, first):  # type: ignore[no-untyped-def]
    """Process a burst's events one time group at a time, query by query (non-shared)."""
    e = first
    while e >= 0:
        tg = ev.tg[e]
        group_end = e
        n_ent = np.int64(0)
        while group_end >= 0 and ev.tg[group_end] == tg:
            for j in range(prog.set_q_ptr[b], prog.set_q_ptr[b + 1]):
                n_ent = compute(
                    prog, st, ev, sc, prog.set_q[j], prog.set_s[j], inst, group_end, n_ent, st.neg
                )
            group_end = ev.bnext[b, group_end]
        insert_all(prog, st, ev, sc, n_ent, tg)
        e = group_end


@njit(**JIT_INNER)
def flush_all(prog, st, ev, sc):  # type: ignore[no-untyped-def]
    prog = borrow(prog)  # (a function of its own: see other_instances)
    st = borrow(st)
    ev = borrow(ev)
    sc = borrow(sc)
    for b in range(prog.set_boff.shape[0]):
        off = prog.set_boff[b]
        for inst in range(st.bur.shape[0]):
            if st.bur[inst, off] >= 0:
                burst_flush(prog, st, ev, sc, b, inst)
