"""The query results of the loops: a result slot per query, window and result group
(``add_result``), and the rows written out when a window closes (``emit``); shared
by the per-event loop and the snapshot loop.
"""

from __future__ import annotations

import numpy as np

from trendagg.jit import njit
from trendagg.kernels import JIT_INLINE, JIT_INNER
from trendagg.kernels._borrow import borrow
from trendagg.kernels.loop.arith import SENT, add_block


@njit(**JIT_INLINE)
def add_result(prog, st, q, gi, k, vec, vext):  # type: ignore[no-untyped-def]
    L = st.P.shape[0]
    P = st.P
    A = prog.q_A[q]
    M = prog.q_M[q]
    nmin = prog.q_nmin[q]
    slot = k % prog.q_NS[q]
    kidx = prog.q_rkoff[q] + slot
    rbase = prog.q_roff[q] + slot * A * L
    rebase = prog.q_reoff[q] + slot * M
    if st.rkeys[gi, kidx] != k:
        for r in range(A * L):
            st.res[gi, rbase + r] = 0
        for r in range(M):
            st.rext[gi, rebase + r] = np.nan
        st.rkeys[gi, kidx] = k
    add_block(st.res[gi], st.rext[gi], rbase, rebase, vec, vext, A, M, nmin, P)


@njit(**JIT_INNER)
def emit(prog, st, out, sp, upto):  # type: ignore[no-untyped-def]
    """Write out and clear every result slot of a query with window spec sp and window < upto."""
    prog = borrow(prog)
    st = borrow(st)
    out = borrow(out)
    for q in range(prog.q_spec.shape[0]):
        if prog.q_spec[q] == sp:
            emit_query(prog, st, out, q, upto)


@njit(**JIT_INLINE)
def emit_query(prog, st, out, q, upto):  # type: ignore[no-untyped-def]
    """Write out and clear query q's result slots of a window < upto (the per-event loop's
    queries in ``emit``, the snapshot loop's members in its own)."""
    L = st.P.shape[0]
    A = prog.q_A[q]
    M = prog.q_M[q]
    gr = prog.q_grouping[q]
    for j in range(st.gr_ptr[gr], st.gr_ptr[gr + 1]):
        gi = st.gr_ginst[j]
        for slot in range(prog.q_NS[q]):
            kidx = prog.q_rkoff[q] + slot
            k = st.rkeys[gi, kidx]
            if k == SENT or k >= upto:
                continue
            n = out.n[0]
            out.key[n, 0] = q
            out.key[n, 1] = gi
            out.key[n, 2] = k
            rbase = prog.q_roff[q] + slot * A * L
            for r in range(A * L):
                out.add[n, r] = st.res[gi, rbase + r]
            rebase = prog.q_reoff[q] + slot * M
            for r in range(M):
                out.ext[n, r] = st.rext[gi, rebase + r]
            out.n[0] = n + 1
            st.rkeys[gi, kidx] = SENT
