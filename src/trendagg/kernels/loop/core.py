"""States and registers, per binding of an event: a state class's slot per window
(``claim``), what enters a state from its predecessors (``gather``), an event's own
registers (``own``), phase 1 (``compute``) and phase 2 (``insert``, ``insert_all``)
of a time group, and the results of the END states (``end_results``). The tables:
:mod:`trendagg.kernels.lower.core`.
"""

from __future__ import annotations

import numpy as np

from trendagg.jit import njit
from trendagg.kernels import JIT_INLINE
from trendagg.kernels._rns import mulmod
from trendagg.kernels.loop.arith import add_block, addmod, better, read_block
from trendagg.kernels.loop.edges import add_log, holds
from trendagg.kernels.loop.indexes import ix_collect, ix_insert
from trendagg.kernels.loop.negation import add_queue, blocked, nq_append, signal
from trendagg.kernels.loop.results import add_result

NO_PREDECESSORS = -2  # gather's skip: only the start (a guard failed)


@njit(**JIT_INLINE)
def claim(prog, st, c, inst, k):  # type: ignore[no-untyped-def]
    """The slot of state class c for window k, cleared first when it held another window."""
    L = st.P.shape[0]
    slot = k % prog.c_NS[c]
    kidx = prog.c_koff[c] + slot
    if st.keys[inst, kidx] != k:
        A = prog.c_A[c]
        M = prog.c_M[c]
        base = prog.c_toff[c] + slot * A * L
        for r in range(A * L):
            st.tot[inst, base + r] = 0
        ebase = prog.c_eoff[c] + slot * M
        for r in range(M):
            st.ext[inst, ebase + r] = np.nan
        st.keys[inst, kidx] = k
    return slot


@njit(**JIT_INLINE)
def add_class(prog, st, q, c, inst, k, vec, vext):  # type: ignore[no-untyped-def]
    """vec/vext += the registers of state class c in window k (if it has that window)."""
    L = st.P.shape[0]
    P = st.P
    A = prog.c_A[c]
    M = prog.c_M[c]
    slot = k % prog.c_NS[c]
    if st.keys[inst, prog.c_koff[c] + slot] != k:
        return
    base = prog.c_toff[c] + slot * A * L
    ebase = prog.c_eoff[c] + slot * M
    read_block(st.tot[inst], st.ext[inst], base, ebase, vec, vext, A, M, prog.q_nmin[q], P)


@njit(**JIT_INLINE)
def gather(prog, st, ev, sc, q, s, inst, k, e, tgv, vec, vext, skip, qs):  # type: ignore[no-untyped-def]
    """vec/vext = start + registers entering state s of query q in window k, for event e
    (-1: a burst's, which has no NEXT conditions) of time group tgv, but for the
    predecessor state ``skip`` (-1: none; NO_PREDECESSORS: all); True if any trend. A
    leading NOT's match in window k that ended before tgv blocks the start; a negated
    transition is read from its queue; a transition with NEXT conditions from the log
    of its source, vertex by vertex."""
    L = st.P.shape[0]
    A = prog.q_A[q]
    M = prog.q_M[q]
    for r in range(A * L):
        vec[r] = 0
    for r in range(M):
        vext[r] = np.nan
    if s == prog.q_start[q] and not (
        qs.ndim == 1 and prog.q_blk[q] >= 0 and blocked(prog, st, q, inst, k, tgv)
    ):
        for lane in range(L):
            vec[lane] = 1
    gs = prog.q_soff[q] + s
    if skip != NO_PREDECESSORS:
        for j in range(prog.pred_ptr[gs], prog.pred_ptr[gs + 1]):
            src = prog.pred_src[j]
            if src != skip:
                add_class(prog, st, q, prog.qs_c[prog.q_soff[q] + src], inst, k, vec, vext)
        for j in range(prog.tpred_ptr[gs], prog.tpred_ptr[gs + 1]):  # (see other_instances)
            src = prog.tpred_src[j]
            at = st.itmpl[inst, 0]
            if src != skip and at >= 0:
                add_class(prog, st, q, prog.qs_c[prog.q_soff[q] + src], at, k, vec, vext)
        if qs.ndim == 1:  # negated transitions (never the burst's own loop): their queues
            for j in range(prog.npred_ptr[gs], prog.npred_ptr[gs + 1]):
                add_queue(prog, st, prog.npred_nt[j], inst, k, vec, vext)
            if e >= 0:
                for j in range(prog.ipred_ptr[gs], prog.ipred_ptr[gs + 1]):
                    ix_collect(
                        prog,
                        st,
                        ev,
                        sc,
                        prog.ipred_ix[j],
                        prog.ipred_op[j],
                        prog.ipred_pr[j],
                        inst,
                        k,
                        e,
                        vec,
                        vext,
                    )
                for j in range(prog.epred_ptr[gs], prog.epred_ptr[gs + 1]):
                    add_log(
                        prog,
                        st,
                        ev,
                        sc,
                        q,
                        prog.epred_nt[j],
                        prog.epred_pr[j],
                        inst,
                        k,
                        e,
                        vec,
                        vext,
                    )
    for lane in range(L):  # noqa: SIM110 (numba compiles no generator)
        if vec[lane] != 0:
            return True
    return False


@njit(**JIT_INLINE)
def own(prog, st, ev, q, s, e, vec, vext):  # type: ignore[no-untyped-def]
    """Add event e's own contribution (it is bound to state s) to the registers in vec."""
    L = st.P.shape[0]
    P = st.P
    PINV = st.PINV
    gs = prog.q_soff[q] + s
    for j in range(prog.cnt_ptr[gs], prog.cnt_ptr[gs + 1]):
        reg = prog.cnt_reg[j]
        for lane in range(L):
            vec[reg * L + lane] = addmod(vec[reg * L + lane], vec[lane], P[lane])
    for j in range(prog.sum_ptr[gs], prog.sum_ptr[gs + 1]):
        reg = prog.sum_reg[j]
        w = prog.sum_w[j]
        for lane in range(L):
            vec[reg * L + lane] = addmod(
                vec[reg * L + lane],
                mulmod(vec[lane], ev.wres[w, e, lane], P[lane], PINV[lane]),
                P[lane],
            )
    for j in range(prog.ext_ptr[gs], prog.ext_ptr[gs + 1]):
        reg = prog.ext_reg[j]
        v = ev.aval[prog.ext_a[j], e]
        cur = vext[reg]
        if better(v, cur, reg < prog.q_nmin[q]):
            vext[reg] = v


@njit(**JIT_INLINE)
def insert(prog, st, ev, sc, q, s, inst, k, tg, e, vec, vext, qs):  # type: ignore[no-untyped-def]
    """Add a new vertex (event e, time group tg) to its state class's window total, to the
    queues of negated transitions and the logs of NEXT conditions from it, and to the
    results of every query whose END is in that class (or signal the parent of a
    negative query)."""
    L = st.P.shape[0]
    P = st.P
    A = prog.q_A[q]
    M = prog.q_M[q]
    nmin = prog.q_nmin[q]
    c = prog.qs_c[prog.q_soff[q] + s]
    slot = claim(prog, st, c, inst, k)
    base = prog.c_toff[c] + slot * A * L
    ebase = prog.c_eoff[c] + slot * M
    add_block(st.tot[inst], st.ext[inst], base, ebase, vec, vext, A, M, nmin, P)
    if qs.ndim == 1:
        for j in range(prog.c_nt_ptr[c], prog.c_nt_ptr[c + 1]):
            nq_append(prog, st, ev, prog.c_nt[j], inst, k, tg, e, vec, vext)
        for j in range(prog.c_ix_ptr[c], prog.c_ix_ptr[c + 1]):
            ix_insert(prog, st, ev, sc, prog.c_ix[j], inst, k, e, vec, vext)
    end_results(prog, st, ev, c, inst, k, tg, vec, vext, qs)


@njit(**JIT_INLINE)
def end_results(prog, st, ev, c, inst, k, tg, vec, vext, qs):  # type: ignore[no-untyped-def]
    for j in range(prog.c_end_ptr[c], prog.c_end_ptr[c + 1]):
        eq = prog.c_end_q[j]
        gi = st.inst_ginst[inst, prog.q_gsel[eq]]
        add_result(prog, st, eq, gi, k, vec, vext)
    if qs.ndim == 1:
        for j in range(prog.c_sig_ptr[c], prog.c_sig_ptr[c + 1]):
            eq = prog.c_sig[j]
            if prog.q_nkind[eq] >= 0:  # a match of a negative query (latest start in vext)
                signal(prog, st, eq, inst, k, tg, vext[0])
            else:  # results that a trailing NOT may still drop
                nq_append(prog, st, ev, prog.q_trail[eq], inst, k, tg, np.int64(-1), vec, vext)


@njit(**JIT_INLINE)
def compute(prog, st, ev, sc, q, s, inst, e, n_ent, qs):  # type: ignore[no-untyped-def]
    """Phase 1 for one binding: the registers of event e's vertices, into the scratch."""
    sp = prog.q_spec[q]
    A = prog.q_A[q]
    M = prog.q_M[q]
    L = st.P.shape[0]
    skip = np.int64(-1)
    if qs.ndim == 1:  # a guard that fails leaves the event only its start
        pr = prog.g_pr[prog.q_soff[q] + s]
        if pr >= 0 and not holds(prog, st, ev, sc, pr, np.int64(-1), e):
            skip = NO_PREDECESSORS
    for k in range(max(ev.klo[sp, e], st.closed[sp]), ev.khi[sp, e]):
        if not gather(prog, st, ev, sc, q, s, inst, k, e, ev.tg[e], sc.vec, sc.vext, skip, qs):
            continue
        own(prog, st, ev, q, s, e, sc.vec, sc.vext)
        c = prog.qs_c[prog.q_soff[q] + s]
        if not prog.c_read[c]:
            # no state reads the class (an END without successors): the vertex only adds
            # to results, which nothing reads before they are emitted, so at once and
            # without registers of its own (a seventh of the kernel's time with 50 queries)
            end_results(prog, st, ev, c, inst, k, ev.tg[e], sc.vec, sc.vext, qs)
            continue
        sc.ent[n_ent, 0] = q
        sc.ent[n_ent, 1] = s
        sc.ent[n_ent, 2] = inst
        sc.ent[n_ent, 3] = k
        sc.ent[n_ent, 4] = e
        for r in range(A * L):
            sc.eadd[n_ent, r] = sc.vec[r]
        for r in range(M):
            sc.eext[n_ent, r] = sc.vext[r]
        n_ent += 1
    return n_ent


@njit(**JIT_INLINE)
def insert_all(prog, st, ev, sc, n_ent, tg):  # type: ignore[no-untyped-def]
    for j in range(n_ent):
        insert(
            prog,
            st,
            ev,
            sc,
            sc.ent[j, 0],
            sc.ent[j, 1],
            sc.ent[j, 2],
            sc.ent[j, 3],
            tg,
            sc.ent[j, 4],
            sc.eadd[j],
            sc.eext[j],
            st.neg,
        )
