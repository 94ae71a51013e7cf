"""Negation in the loop (GRETA Section 5; the tables:
:mod:`trendagg.kernels.lower.negation`): blocked trend starts, the queues of negated
transitions and of results a trailing NOT may drop, and the signals a negative query's
match sends its parent.
"""

from __future__ import annotations

import numpy as np

from trendagg.jit import njit
from trendagg.kernels import JIT_INLINE, JIT_INNER
from trendagg.kernels._borrow import borrow
from trendagg.kernels.loop.arith import SENT, add_block, addmod, better, read_block
from trendagg.kernels.loop.indexes import t_copy
from trendagg.kernels.loop.results import add_result

# A queue (negated transition or trailing results, see lower/negation.py) per instance
# and window slot: four words in st.nq (window, first entry, last entry, entries), its
# running total in st.nqa/st.nqe, entries in the pool (pnext, ptg: the time group of the
# entry's first vertex, padd, pext); st.pool: free list, full (1), entries in use, most
# in use. Only a kernel compiled for queues (``qs``) holds calls to them; the ones on
# the per-vertex path (add_queue, nq_append) are inlined, the others (signal, once
# per match; fold_trailing, once per window close) are functions of their own.


@njit(**JIT_INLINE)
def blocked(prog, st, q, inst, k, tgv):  # type: ignore[no-untyped-def]
    """True when a match of q's leading NOT in window k ended before time group tgv."""
    b = prog.q_blk[q] + 2 * (k % prog.q_NS[q])
    return st.blk[inst, b] == k and tgv > st.blk[inst, b + 1]


@njit(**JIT_INLINE)
def add_queue(prog, st, nt, inst, k, vec, vext):  # type: ignore[no-untyped-def]
    """vec/vext += the running total of queue nt in window k (if it has that window)."""
    L = st.P.shape[0]
    P = st.P
    q = prog.nt_q[nt]
    A = prog.q_A[q]
    M = prog.q_M[q]
    slot = k % prog.nt_NS[nt]
    if st.nq[inst, 4 * (prog.nt_koff[nt] + slot)] != k:
        return
    base = prog.nt_aoff[nt] + slot * A * L
    ebase = prog.nt_eoff[nt] + slot * M
    read_block(st.nqa[inst], st.nqe[inst], base, ebase, vec, vext, A, M, prog.q_nmin[q], P)


@njit(**JIT_INLINE)
def nq_reset(st, inst, h, k):  # type: ignore[no-untyped-def]
    """Return the entries of the queue with header h to the pool; the slot then holds
    window k, empty (SENT: no window)."""
    head = st.nq[inst, h + 1]
    if head >= 0:
        st.pnext[st.nq[inst, h + 2]] = st.pool[0]
        st.pool[0] = head
        st.pool[2] -= st.nq[inst, h + 3]
    st.nq[inst, h] = k
    st.nq[inst, h + 1] = -1
    st.nq[inst, h + 2] = -1
    st.nq[inst, h + 3] = 0


@njit(**JIT_INLINE)
def nq_append(prog, st, ev, nt, inst, k, tg, e, vec, vext):  # type: ignore[no-untyped-def]
    """Add a vertex (or a burst's vertices) of time group tg to queue nt in window k: into
    its last entry when no event that starts the negative query came since that entry
    began (a match's start never falls inside an entry), else as a new entry. A log
    (of NEXT conditions) has an entry per vertex, with the values of event e that the
    conditions read."""
    L = st.P.shape[0]
    P = st.P
    q = prog.nt_q[nt]
    A = prog.q_A[q]
    M = prog.q_M[q]
    nmin = prog.q_nmin[q]
    slot = k % prog.nt_NS[nt]
    h = 4 * (prog.nt_koff[nt] + slot)
    base = prog.nt_aoff[nt] + slot * A * L
    ebase = prog.nt_eoff[nt] + slot * M
    if st.nq[inst, h] != k:
        nq_reset(st, inst, h, k)
        for r in range(A * L):
            st.nqa[inst, base + r] = 0
        for r in range(M):
            st.nqe[inst, ebase + r] = np.nan
    add_block(st.nqa[inst], st.nqe[inst], base, ebase, vec, vext, A, M, nmin, P)
    tail = st.nq[inst, h + 2]
    log = prog.nt_log[nt]
    if not log and tail >= 0 and st.ptg[tail] >= st.nstart[inst, prog.nt_neg[nt]]:
        entry = tail
    else:
        entry = nq_entry(st, inst, h, tg)
        if entry < 0:  # the pool is full: the executor runs the chunk again with a larger one
            return
        for r in range(A * L):
            st.padd[entry, r] = 0
        for r in range(M):
            st.pext[entry, r] = np.nan
        if log:
            a = prog.nt_col_ptr[nt]
            for j in range(a, prog.nt_col_ptr[nt + 1]):
                st.pkey[entry, j - a] = ev.xv[prog.nt_col[j], e]
                st.pknd[entry, j - a] = ev.xk[prog.nt_col[j], e]
    add_block(st.padd[entry], st.pext[entry], 0, 0, vec, vext, A, M, nmin, P)


@njit(**JIT_INLINE)
def nq_entry(st, inst, h, tg):  # type: ignore[no-untyped-def]
    """A new last entry (of time group tg) for the queue with header h of instance inst,
    from the pool; -1 (and the pool marked full) when there is none left."""
    e = st.pool[0]
    if e < 0:
        st.pool[1] = 1
        return -1
    st.pool[0] = st.pnext[e]
    st.pnext[e] = -1
    st.ptg[e] = tg
    tail = st.nq[inst, h + 2]
    if tail >= 0:
        st.pnext[tail] = e
    else:
        st.nq[inst, h + 1] = e
    st.nq[inst, h + 2] = e
    st.nq[inst, h + 3] += 1
    st.pool[2] += 1
    if st.pool[2] > st.pool[3]:
        st.pool[3] = st.pool[2]
    return e


@njit(**JIT_INLINE)
def nq_advance(prog, st, nt, inst, slot, ms):  # type: ignore[no-untyped-def]
    """Drop the entries of queue nt's slot that began before time group ms from it and its
    total (sums subtracted; minima and maxima found again from what remains)."""
    L = st.P.shape[0]
    P = st.P
    q = prog.nt_q[nt]
    A = prog.q_A[q]
    M = prog.q_M[q]
    nmin = prog.q_nmin[q]
    h = 4 * (prog.nt_koff[nt] + slot)
    base = prog.nt_aoff[nt] + slot * A * L
    ebase = prog.nt_eoff[nt] + slot * M
    e = st.nq[inst, h + 1]
    if e < 0 or st.ptg[e] >= ms:
        return
    while e >= 0 and st.ptg[e] < ms:
        for r in range(0, A * L, L):
            for lane in range(L):
                i = base + r + lane
                st.nqa[inst, i] = addmod(st.nqa[inst, i], P[lane] - st.padd[e, r + lane], P[lane])
        nx = st.pnext[e]
        st.pnext[e] = st.pool[0]
        st.pool[0] = e
        st.pool[2] -= 1
        st.nq[inst, h + 3] -= 1
        e = nx
    st.nq[inst, h + 1] = e
    if e < 0:
        st.nq[inst, h + 2] = -1
    for r in range(M):
        st.nqe[inst, ebase + r] = np.nan
    while e >= 0:
        for r in range(M):
            v = st.pext[e, r]
            if not np.isnan(v) and better(v, st.nqe[inst, ebase + r], r < nmin):
                st.nqe[inst, ebase + r] = v
        e = st.pnext[e]


@njit(**JIT_INNER)
def signal(prog, st, n, inst, k, tg, latest):  # type: ignore[no-untyped-def]
    """A match of negative query n in window k ended at time group tg; ``latest``: the
    latest start of the matches that end there (GRETA Section 5; docs/semantics.md, Negation)."""
    prog = borrow(prog)
    st = borrow(st)
    kind = prog.q_nkind[n]
    if kind == 0:  # leading: no trend of the parent starts in window k after tg
        q = prog.q_nparent[n]
        b = prog.q_blk[q] + 2 * (k % prog.q_NS[q])
        if st.blk[inst, b] != k:
            st.blk[inst, b] = k
            st.blk[inst, b + 1] = tg
        return
    nt = prog.q_nnt[n]
    ms = np.int64(latest)
    if kind == 1:  # trailing: the parent's results in window k that end before ms
        slot = k % prog.nt_NS[nt]
        if st.nq[inst, 4 * (prog.nt_koff[nt] + slot)] == k:
            nq_advance(prog, st, nt, inst, slot, ms)
        return
    for slot in range(prog.nt_NS[nt]):  # between: its source vertices before ms, anywhere
        if st.nq[inst, 4 * (prog.nt_koff[nt] + slot)] != SENT:
            nq_advance(prog, st, nt, inst, slot, ms)


@njit(**JIT_INNER)
def fold_trailing(prog, st, sc, sp, upto):  # type: ignore[no-untyped-def]
    """Add the results that no trailing NOT dropped, of windows < upto of spec sp, to their
    groups, and release their queues (before emit writes the groups out)."""
    prog = borrow(prog)
    st = borrow(st)
    sc = borrow(sc)
    L = st.P.shape[0]
    for q in range(prog.q_trail.shape[0]):
        nt = prog.q_trail[q]
        if nt < 0 or prog.q_spec[q] != sp:
            continue
        A = prog.q_A[q]
        M = prog.q_M[q]
        for inst in range(st.nq.shape[0]):
            for slot in range(prog.nt_NS[nt]):
                h = 4 * (prog.nt_koff[nt] + slot)
                k = st.nq[inst, h]
                if k == SENT or k >= upto:
                    continue
                base = prog.nt_aoff[nt] + slot * A * L
                ebase = prog.nt_eoff[nt] + slot * M
                if st.nq[inst, h + 1] >= 0:
                    for r in range(A * L):
                        sc.vec[r] = st.nqa[inst, base + r]
                    for r in range(M):
                        sc.vext[r] = st.nqe[inst, ebase + r]
                    gi = st.inst_ginst[inst, prog.q_gsel[q]]
                    if gi >= 0:  # (a template has no group, and no trends)
                        add_result(prog, st, q, gi, k, sc.vec, sc.vext)
                nq_reset(st, inst, h, np.int64(SENT))


@njit(**JIT_INLINE)
def copy_negations(st, new, parent):  # type: ignore[no-untyped-def]
    """The template's blocked slots, epochs, queues (each entry copied: the two
    instances prune them apart from now on) and indexes (each tree copied)."""
    for r in range(st.blk.shape[1]):
        st.blk[new, r] = st.blk[parent, r]
    for r in range(st.nstart.shape[1]):
        st.nstart[new, r] = st.nstart[parent, r]
    for r in range(st.nqa.shape[1]):
        st.nqa[new, r] = st.nqa[parent, r]
    for r in range(st.nqe.shape[1]):
        st.nqe[new, r] = st.nqe[parent, r]
    for h in range(0, st.nq.shape[1], 4):
        st.nq[new, h] = st.nq[parent, h]
        st.nq[new, h + 1] = -1
        st.nq[new, h + 2] = -1
        st.nq[new, h + 3] = 0
        e = st.nq[parent, h + 1]
        while e >= 0:
            c = nq_entry(st, new, h, st.ptg[e])
            if c < 0:  # the pool is full: the chunk runs again with a larger one
                return
            for r in range(st.padd.shape[1]):
                st.padd[c, r] = st.padd[e, r]
            for r in range(st.pext.shape[1]):
                st.pext[c, r] = st.pext[e, r]
            for r in range(st.pkey.shape[1]):
                st.pkey[c, r] = st.pkey[e, r]
                st.pknd[c, r] = st.pknd[e, r]
            e = st.pnext[e]
    for r in range(st.ixa.shape[1]):
        st.ixa[new, r] = st.ixa[parent, r]
    for r in range(st.ixe.shape[1]):
        st.ixe[new, r] = st.ixe[parent, r]
    for h in range(0, st.ixh.shape[1], 3):
        st.ixh[new, h] = st.ixh[parent, h]
        st.ixh[new, h + 1] = t_copy(st, st.ixh[parent, h + 1])
        st.ixh[new, h + 2] = t_copy(st, st.ixh[parent, h + 2])
