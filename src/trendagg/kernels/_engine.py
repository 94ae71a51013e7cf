"""The compiled per-event loop of GRETA and HAMLET (numba).

One call runs a chunk of events (sorted by time) through the workload's
program (see :mod:`trendagg.kernels.lower` for the array layout) and the
state arrays, which persist between calls. Per time group (events of equal
time are never adjacent, GRETA Section 4): windows that end by that time
are closed and their rows written out; bursts of partitions that see another
event type of their sharing set are flushed; events of a shared Kleene type
join their partition's burst; every other binding is computed from the state
before the time group (phase 1) and inserted after it (phase 2).

Negation (GRETA Section 5): a negative sub-pattern is a query of its own whose
one extreme register is the latest start (time group) of its matches; when
one of its END vertices is inserted it signals its parent (``_signal``): a
leading NOT blocks the parent's trend starts in that window, a trailing one
drops the parent's queued results of that window that end before the start,
one between Pi and Pj drops the vertices of end(Pi) older than the start from
the queue that start(Pj) reads.

NEXT conditions (SEMANTICS, Predicates): a transition with conditions reads the
log of its source class, a queue with one entry per vertex that keeps the
values the conditions read on it, and tests each entry against the new event
with the transition's stack program (``_holds``, :mod:`trendagg.kernels.edges`);
a guard (a condition on the next event alone) that fails leaves an event only
its start. Workloads without a NOT or a NEXT condition run a ``run_chunk``
compiled without the code of queues (``qs``, below).

An event is processed in its partition instance (``pid``) and, for a
partitioning with qualified attributes, in every instance that agrees with it
(``xptr``/``xinst``: an event that the qualified attributes do not apply to is a
wildcard for them). An instance made at a time group starts there as a copy of
its template (``cp_*``; see :mod:`trendagg.kernels.runtime.instances`). A class that only
wildcard events reach (``c_tmpl``) is the same in every instance as in the
template: it is processed in the template alone, and read there (``st.itmpl``).

A lazy window spec (many windows per event, see
:func:`~trendagg.kernels.lower.lazy.lazy_windows`) keeps no window slots:
its bindings are computed once per time group (``_lazy_phase1``) as rows of a
matrix per instance, inserted by ``_lazy_insert_all``, and its windows written
by ``_lazy_close`` (the comment block "lazy windows" below).

Registers are residues modulo the primes ``P`` (lane-minor: register r,
lane l at ``r * L + l``); minima and maxima are float64 (NaN = none: an
extreme column holds NaN where an event has no value for it, so a hidden
extreme of the integers skips the decimals, see :mod:`~trendagg.kernels.lower.core`).
A burst's own minima and maxima start at +inf and -inf instead, so that the
per-event update is two plain comparisons (a NaN compares false). A burst
without a value leaves an infinity only in a hidden extreme of the integers
(the other extremes bind events that have their value), which is only ever
compared with its query's extreme, a finite number. (Written with the NaN
test of ``_better``, the update, or an infinity test in the flush, made the
whole loop 8-15% slower at 10M events even in workloads without a MIN or MAX:
the generated code changes, not the work. Measured by run_chunk's time.)

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
from trendagg.kernels import JIT_INLINE, JIT_OPTIONS
from trendagg.kernels._borrow import borrow
from trendagg.kernels._rns import mulmod

SENT = -(2**62)  # an empty window slot


# Queues (a NOT or a NEXT condition in the workload): ``st.neg`` is one-dimensional
# then, two-dimensional if not. The functions with code of queues take it as ``qs``
# and test ``qs.ndim == 1``: numba reads an argument's ndim as a constant and prunes
# the dead branch before typing, so a kernel without queues neither holds nor
# compiles their code (its hooks on the per-event path cost every workload 25-35% of
# run_chunk's time when they were tested at run time; compiling them anyway cost a
# workload without them about a third of its compile time). The test must read an
# argument, not ``st.neg``: numba folds the ndim of arguments only.
#
# Calls pass ``np.int64(-1)`` (or a variable set from one), never a literal such as
# ``-1`` or ``0``: numba compiles a function once per literal value it is passed, and
# then once more for int64, and so does every function it calls with that argument
# (literals doubled the plain kernel's compile time).


@njit(**JIT_OPTIONS)
def _addmod(a: int, b: int, p: int) -> int:
    s = a + b
    return s - p if s >= p else s


@njit(**JIT_OPTIONS)
def _better(v: float, cur: float, is_min: bool) -> bool:
    """True when v replaces cur in a minimum (or maximum) register; NaN is no value."""
    return np.isnan(cur) or (v < cur if is_min else v > cur)


@njit(**JIT_INLINE)
def _claim(prog, st, c, inst, k):  # type: ignore[no-untyped-def]
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
def _add_class(prog, st, q, c, inst, k, vec, vext):  # type: ignore[no-untyped-def]
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
    _read_block(st.tot[inst], st.ext[inst], base, ebase, vec, vext, A, M, prog.q_nmin[q], P)


@njit(**JIT_INLINE)
def _read_block(add, ext, base, ebase, vec, vext, A, M, nmin, P):  # type: ignore[no-untyped-def]
    """vec += add[base:] (A registers of L lanes, modulo P); vext takes the better of its
    M extremes and ext[ebase:]'s (the first nmin minima). (See _add_block: the other way.)"""
    L = P.shape[0]
    for r in range(0, A * L, L):
        for lane in range(L):
            vec[r + lane] = _addmod(vec[r + lane], add[base + r + lane], P[lane])
    for r in range(M):
        v = ext[ebase + r]
        if not np.isnan(v) and _better(v, vext[r], r < nmin):
            vext[r] = v


NO_PREDECESSORS = -2  # _gather's skip: only the start (a guard failed)


@njit(**JIT_INLINE)
def _gather(prog, st, ev, sc, q, s, inst, k, e, tgv, vec, vext, skip, qs):  # type: ignore[no-untyped-def]
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
        qs.ndim == 1 and prog.q_blk[q] >= 0 and _blocked(prog, st, q, inst, k, tgv)
    ):
        for lane in range(L):
            vec[lane] = 1
    gs = prog.q_soff[q] + s
    if skip != NO_PREDECESSORS:
        for j in range(prog.pred_ptr[gs], prog.pred_ptr[gs + 1]):
            src = prog.pred_src[j]
            if src != skip:
                _add_class(prog, st, q, prog.qs_c[prog.q_soff[q] + src], inst, k, vec, vext)
        for j in range(prog.tpred_ptr[gs], prog.tpred_ptr[gs + 1]):  # (see _others)
            src = prog.tpred_src[j]
            at = st.itmpl[inst, 0]
            if src != skip and at >= 0:
                _add_class(prog, st, q, prog.qs_c[prog.q_soff[q] + src], at, k, vec, vext)
        if qs.ndim == 1:  # negated transitions (never the burst's own loop): their queues
            for j in range(prog.npred_ptr[gs], prog.npred_ptr[gs + 1]):
                _add_queue(prog, st, prog.npred_nt[j], inst, k, vec, vext)
            if e >= 0:
                for j in range(prog.ipred_ptr[gs], prog.ipred_ptr[gs + 1]):
                    _ix_collect(
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
                    _add_log(
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
def _blocked(prog, st, q, inst, k, tgv):  # type: ignore[no-untyped-def]
    """True when a match of q's leading NOT in window k ended before time group tgv."""
    b = prog.q_blk[q] + 2 * (k % prog.q_NS[q])
    return st.blk[inst, b] == k and tgv > st.blk[inst, b + 1]


@njit(**JIT_INLINE)
def _own(prog, st, ev, q, s, e, vec, vext):  # type: ignore[no-untyped-def]
    """Add event e's own contribution (it is bound to state s) to the registers in vec."""
    L = st.P.shape[0]
    P = st.P
    PINV = st.PINV
    gs = prog.q_soff[q] + s
    for j in range(prog.cnt_ptr[gs], prog.cnt_ptr[gs + 1]):
        reg = prog.cnt_reg[j]
        for lane in range(L):
            vec[reg * L + lane] = _addmod(vec[reg * L + lane], vec[lane], P[lane])
    for j in range(prog.sum_ptr[gs], prog.sum_ptr[gs + 1]):
        reg = prog.sum_reg[j]
        w = prog.sum_w[j]
        for lane in range(L):
            vec[reg * L + lane] = _addmod(
                vec[reg * L + lane],
                mulmod(vec[lane], ev.wres[w, e, lane], P[lane], PINV[lane]),
                P[lane],
            )
    for j in range(prog.ext_ptr[gs], prog.ext_ptr[gs + 1]):
        reg = prog.ext_reg[j]
        v = ev.aval[prog.ext_a[j], e]
        cur = vext[reg]
        if _better(v, cur, reg < prog.q_nmin[q]):
            vext[reg] = v


@njit(**JIT_INLINE)
def _insert(prog, st, ev, sc, q, s, inst, k, tg, e, vec, vext, qs):  # type: ignore[no-untyped-def]
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
    slot = _claim(prog, st, c, inst, k)
    base = prog.c_toff[c] + slot * A * L
    ebase = prog.c_eoff[c] + slot * M
    _add_block(st.tot[inst], st.ext[inst], base, ebase, vec, vext, A, M, nmin, P)
    if qs.ndim == 1:
        for j in range(prog.c_nt_ptr[c], prog.c_nt_ptr[c + 1]):
            _nq_append(prog, st, ev, prog.c_nt[j], inst, k, tg, e, vec, vext)
        for j in range(prog.c_ix_ptr[c], prog.c_ix_ptr[c + 1]):
            _ix_insert(prog, st, ev, sc, prog.c_ix[j], inst, k, e, vec, vext)
    _end_results(prog, st, ev, c, inst, k, tg, vec, vext, qs)


# ----------------------------------------------------------------------------- negation
# A queue (negated transition or trailing results, see lower/negation.py) per instance
# and window slot: four words in st.nq (window, first entry, last entry, entries), its
# running total in st.nqa/st.nqe, entries in the pool (pnext, ptg: the time group of the
# entry's first vertex, padd, pext); st.pool: free list, full (1), entries in use, most
# in use. Only a kernel compiled for queues (``qs``) holds calls to them; the ones on
# the per-vertex path (_add_queue, _nq_append) are inlined, the others (_signal, once
# per match; _fold_trailing, once per window close) are functions of their own.


@njit(**JIT_INLINE)
def _add_queue(prog, st, nt, inst, k, vec, vext):  # type: ignore[no-untyped-def]
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
    _read_block(st.nqa[inst], st.nqe[inst], base, ebase, vec, vext, A, M, prog.q_nmin[q], P)


@njit(**JIT_INLINE)
def _nq_reset(st, inst, h, k):  # type: ignore[no-untyped-def]
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
def _nq_append(prog, st, ev, nt, inst, k, tg, e, vec, vext):  # type: ignore[no-untyped-def]
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
        _nq_reset(st, inst, h, k)
        for r in range(A * L):
            st.nqa[inst, base + r] = 0
        for r in range(M):
            st.nqe[inst, ebase + r] = np.nan
    _add_block(st.nqa[inst], st.nqe[inst], base, ebase, vec, vext, A, M, nmin, P)
    tail = st.nq[inst, h + 2]
    log = prog.nt_log[nt]
    if not log and tail >= 0 and st.ptg[tail] >= st.nstart[inst, prog.nt_neg[nt]]:
        entry = tail
    else:
        entry = _nq_entry(st, inst, h, tg)
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
    _add_block(st.padd[entry], st.pext[entry], 0, 0, vec, vext, A, M, nmin, P)


@njit(**JIT_INLINE)
def _nq_entry(st, inst, h, tg):  # type: ignore[no-untyped-def]
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
def _nq_advance(prog, st, nt, inst, slot, ms):  # type: ignore[no-untyped-def]
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
                st.nqa[inst, i] = _addmod(st.nqa[inst, i], P[lane] - st.padd[e, r + lane], P[lane])
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
            if not np.isnan(v) and _better(v, st.nqe[inst, ebase + r], r < nmin):
                st.nqe[inst, ebase + r] = v
        e = st.pnext[e]


# ----------------------------------------------------------------------------- NEXT
# A transition with NEXT conditions reads the log of its source (a queue whose entries
# are single vertices with the values the conditions read, see _nq_append) and tests
# each entry with the transition's stack program (trendagg.kernels.edges).


@njit(**JIT_OPTIONS)
def _add_log(prog, st, ev, sc, q, nt, pr, inst, k, e, vec, vext):  # type: ignore[no-untyped-def]
    """vec/vext += the registers of the vertices of log nt in window k for which program
    pr holds with event e as the next event. (This and the index functions are called,
    not inlined: inlined at each place _gather is, they made the kernel compiled for
    queues take minutes longer to compile, for a call's cost per transition.)"""
    prog = borrow(prog)
    st = borrow(st)
    ev = borrow(ev)
    sc = borrow(sc)
    P = st.P
    A = prog.q_A[q]
    M = prog.q_M[q]
    nmin = prog.q_nmin[q]
    h = 4 * (prog.nt_koff[nt] + k % prog.nt_NS[nt])
    if st.nq[inst, h] != k:
        return
    entry = st.nq[inst, h + 1]
    while entry >= 0:
        if _holds(prog, st, ev, sc, pr, entry, e):
            _read_block(st.padd[entry], st.pext[entry], 0, 0, vec, vext, A, M, nmin, P)
        entry = st.pnext[entry]


@njit(**JIT_INLINE)
def _holds(prog, st, ev, sc, pr, entry, e):  # type: ignore[no-untyped-def]
    """True when program pr holds for the logged vertex ``entry`` (x; -1 for a guard,
    which reads none) and event e (y)."""
    return _evaluate(prog, st, ev, sc, pr, entry, e)[1] != 0


@njit(**JIT_OPTIONS)
def _evaluate(prog, st, ev, sc, pr, entry, e):  # type: ignore[no-untyped-def]
    """(kind, value) of program pr for the logged vertex ``entry`` (x, or -1) and event
    e (y), with the value rules of trendagg.plan.predicates (see trendagg.kernels.edges
    for the kinds and opcodes): a condition's value is 1.0 (true) or 0.0."""
    prog = borrow(prog)
    st = borrow(st)
    ev = borrow(ev)
    sc = borrow(sc)
    sk = sc.sk
    sv = sc.sv
    top = 0
    for i in range(prog.pr_ptr[pr], prog.pr_ptr[pr + 1], 2):
        op = prog.pr_code[i]
        arg = prog.pr_code[i + 1]
        if op == 0:  # PUSH_X
            sk[top] = st.pknd[entry, arg]
            sv[top] = st.pkey[entry, arg]
            top += 1
        elif op == 1:  # PUSH_Y
            sk[top] = ev.xk[arg, e]
            sv[top] = ev.xv[arg, e]
            top += 1
        elif op == 2:  # PUSH_CONST
            sk[top] = prog.pr_ck[arg]
            sv[top] = prog.pr_cv[arg]
            top += 1
        elif op == 3:  # NEGATE
            if sk[top - 1] == 1 or sk[top - 1] == 2:
                sv[top - 1] = -sv[top - 1]
            else:
                sk[top - 1] = 0
        elif op <= 8:  # ADD SUB MUL DIV MOD: numbers only; x / 0 and x % 0 are undefined
            top -= 1
            ka = sk[top - 1]
            kb = sk[top]
            a = sv[top - 1]
            b = sv[top]
            if not (ka == 1 or ka == 2) or not (kb == 1 or kb == 2):
                sk[top - 1] = 0
                continue
            ints = ka == 1 and kb == 1
            if op == 4:
                r = a + b
            elif op == 5:
                r = a - b
            elif op == 6:
                r = a * b
            elif b == 0:
                sk[top - 1] = 0
                continue
            elif op == 7:
                r = a / b
                ints = False
            else:  # Python's modulo: the sign of the divisor
                r = np.fmod(a, b)
                if r != 0 and (b < 0) != (r < 0):
                    r += b
            if ints and abs(r) >= 2.0**53:  # no longer exact: the executor stops the run
                st.eflag[0] = 1
                st.eflag[1] = pr
                sk[top - 1] = 0
                continue
            sk[top - 1] = 1 if ints else 2
            sv[top - 1] = r
        elif op == 9:  # COMPARE: = != < <= > >=
            top -= 1
            ka = sk[top - 1]
            kb = sk[top]
            a = sv[top - 1]
            b = sv[top]
            if ka == 0 or kb == 0:
                res = False
            elif (ka == 1 or ka == 2) and (kb == 1 or kb == 2):
                res = _compare(arg, a, b)
            elif ka == 3 and kb == 3:
                if arg <= 1:
                    res = (a == b) == (arg == 0)
                else:
                    res = _compare(arg, ev.wrank[np.int64(a)], ev.wrank[np.int64(b)])
            else:  # a number and a word, or anything else: only unequal
                res = arg == 1
            sk[top - 1] = 5
            sv[top - 1] = 1.0 if res else 0.0
        else:  # ALL / ANY of the top arg booleans
            res = op == 10
            for j in range(top - arg, top):
                res = (res and sv[j] != 0) if op == 10 else (res or sv[j] != 0)
            top -= arg - 1
            sk[top - 1] = 5
            sv[top - 1] = 1.0 if res else 0.0
    return sk[0], sv[0]


# ----------------------------------------------------------------------------- indexes
# An indexable NEXT condition key(x) op query(y) (trendagg.plan.edge_index) on no NOT
# reads an ordered index of its source class per instance and window slot: a treap of
# the vertices' keys (numbers in one, words by rank in another), each node holding the
# registers of its key's vertices and of its subtree, so that the vertices of a range of
# keys add up from O(log n) nodes (as trendagg.reference.key_index does in Python); keys
# ordered with nothing (NaN, booleans) are one running total that only != reaches.
# st.ixh: per slot (window, root of the numbers, root of the words); st.ixa/ixe: the
# running totals; nodes in a pool of their own (tkey tleft tright tprio town towne ttot
# ttote; tpool: free list, -, in use, most, random state), free nodes linked by tleft;
# st.tstack: the path of an insert, or a walk's stack.


@njit(**JIT_INLINE)
def _value(prog, st, ev, sc, pr, e):  # type: ignore[no-untyped-def]
    """(kind, value) of the expression program pr on event e: read at once when it is one
    attribute (``T.speed``), the common key and query."""
    i = prog.pr_ptr[pr]
    if prog.pr_ptr[pr + 1] - i == 2 and prog.pr_code[i] == 1:  # PUSH_Y: one attribute
        return ev.xk[prog.pr_code[i + 1], e], ev.xv[prog.pr_code[i + 1], e]
    return _evaluate(prog, st, ev, sc, pr, np.int64(-1), e)


@njit(**JIT_INLINE)
def _t_cmp(ev, tree, a, b):  # type: ignore[no-untyped-def]
    """-1, 0 or 1 for key a against key b of tree 0 (numbers) or 1 (words, by rank)."""
    if tree == 1:
        a = ev.wrank[np.int64(a)]
        b = ev.wrank[np.int64(b)]
    if a < b:
        return -1
    return 1 if a > b else 0


@njit(**JIT_INLINE)
def _t_new(st, key, prio):  # type: ignore[no-untyped-def]
    """A node of the pool for key (registers empty, no children), or -1 (and the pool
    marked full) when there is none left."""
    n = st.tpool[0]
    if n < 0:
        st.pool[1] = 1
        return -1
    st.tpool[0] = st.tleft[n]
    st.tleft[n] = -1
    st.tright[n] = -1
    st.tkey[n] = key
    st.tprio[n] = prio
    for r in range(st.town.shape[1]):
        st.town[n, r] = 0
        st.ttot[n, r] = 0
    for r in range(st.towne.shape[1]):
        st.towne[n, r] = np.nan
        st.ttote[n, r] = np.nan
    st.tpool[2] += 1
    if st.tpool[2] > st.tpool[3]:
        st.tpool[3] = st.tpool[2]
    return n


@njit(**JIT_INLINE)
def _t_priority(st):  # type: ignore[no-untyped-def]
    """The next pseudo-random priority (an LCG modulo 2**31, no overflow: any source
    of random numbers keeps a treap balanced)."""
    x = (st.tpool[4] * 1103515245 + 12345) % 2147483648
    st.tpool[4] = x
    return x


@njit(**JIT_OPTIONS)
def _t_free(st, root):  # type: ignore[no-untyped-def]
    """Return the nodes of the tree at root to the pool."""
    st = borrow(st)
    if root < 0:
        return
    st.tstack[0] = root
    top = 1
    while top > 0:
        top -= 1
        n = st.tstack[top]
        if st.tleft[n] >= 0:
            st.tstack[top] = st.tleft[n]
            top += 1
        if st.tright[n] >= 0:
            st.tstack[top] = st.tright[n]
            top += 1
        st.tleft[n] = st.tpool[0]
        st.tpool[0] = n
        st.tpool[2] -= 1


@njit(**JIT_OPTIONS)
def _t_copy(st, root):  # type: ignore[no-untyped-def]
    """A copy of the tree at root (its root; -1 when the pool ran out, marked full)."""
    st = borrow(st)
    if root < 0:
        return -1
    top = 0
    new = -1
    src = root
    parent = -1
    side = 0
    while True:
        d = _t_new(st, st.tkey[src], st.tprio[src])
        if d < 0:
            return new
        for r in range(st.town.shape[1]):
            st.town[d, r] = st.town[src, r]
            st.ttot[d, r] = st.ttot[src, r]
        for r in range(st.towne.shape[1]):
            st.towne[d, r] = st.towne[src, r]
            st.ttote[d, r] = st.ttote[src, r]
        if parent < 0:
            new = d
        elif side == 0:
            st.tleft[parent] = d
        else:
            st.tright[parent] = d
        for c, sd in ((st.tright[src], 1), (st.tleft[src], 0)):
            if c >= 0:  # (child, its copy's parent, side) still to copy
                st.tstack[top] = c
                st.tstack[top + 1] = d
                st.tstack[top + 2] = sd
                top += 3
        if top == 0:
            return new
        top -= 3
        src = st.tstack[top]
        parent = st.tstack[top + 1]
        side = st.tstack[top + 2]


@njit(**JIT_INLINE)
def _ix_reset(prog, st, ix, inst, slot, k):  # type: ignore[no-untyped-def]
    """Free the trees of index ix's slot and empty its totals; the slot then holds k."""
    L = st.P.shape[0]
    q = prog.ix_q[ix]
    h = 3 * (prog.ix_koff[ix] + slot)
    _t_free(st, st.ixh[inst, h + 1])
    _t_free(st, st.ixh[inst, h + 2])
    st.ixh[inst, h] = k
    st.ixh[inst, h + 1] = -1
    st.ixh[inst, h + 2] = -1
    base = prog.ix_aoff[ix] + slot * prog.q_A[q] * L
    for r in range(prog.q_A[q] * L):
        st.ixa[inst, base + r] = 0
    ebase = prog.ix_eoff[ix] + slot * prog.q_M[q]
    for r in range(prog.q_M[q]):
        st.ixe[inst, ebase + r] = np.nan


@njit(**JIT_OPTIONS)
def _ix_insert(prog, st, ev, sc, ix, inst, k, e, vec, vext):  # type: ignore[no-untyped-def]
    """Add a vertex of event e (registers vec/vext) in window k to index ix under its key."""
    prog = borrow(prog)
    st = borrow(st)
    ev = borrow(ev)
    sc = borrow(sc)
    kind, key = _value(prog, st, ev, sc, prog.ix_key[ix], e)
    if kind == 0:  # no key (x / 0, 'a' + 1): the condition holds for no next event
        return
    P = st.P
    L = P.shape[0]
    q = prog.ix_q[ix]
    A = prog.q_A[q]
    M = prog.q_M[q]
    nmin = prog.q_nmin[q]
    slot = k % prog.ix_NS[ix]
    h = 3 * (prog.ix_koff[ix] + slot)
    if st.ixh[inst, h] != k:
        _ix_reset(prog, st, ix, inst, slot, k)
    if kind == 3:
        tree = 1
    elif (kind == 1 or kind == 2) and key == key:
        tree = 0
    else:  # NaN, a boolean: ordered with nothing
        base = prog.ix_aoff[ix] + slot * A * L
        ebase = prog.ix_eoff[ix] + slot * M
        _add_block(st.ixa[inst], st.ixe[inst], base, ebase, vec, vext, A, M, nmin, P)
        return
    node = st.ixh[inst, h + 1 + tree]
    depth = 0
    c = 0
    while node >= 0:
        c = _t_cmp(ev, tree, key, st.tkey[node])
        if c == 0:
            break
        st.tstack[depth] = node
        depth += 1
        node = st.tleft[node] if c < 0 else st.tright[node]
    new = -1
    if node < 0:
        new = _t_new(st, key, _t_priority(st))
        if new < 0:  # the pool is full: the chunk runs again with a larger one
            return
        node = new
    for j in range(depth):
        n = st.tstack[j]
        _add_block(st.ttot[n], st.ttote[n], 0, 0, vec, vext, A, M, nmin, P)
    _add_block(st.town[node], st.towne[node], 0, 0, vec, vext, A, M, nmin, P)
    _add_block(st.ttot[node], st.ttote[node], 0, 0, vec, vext, A, M, nmin, P)
    if new < 0:
        return
    if depth == 0:
        st.ixh[inst, h + 1 + tree] = new
        return
    if c < 0:
        st.tleft[st.tstack[depth - 1]] = new
    else:
        st.tright[st.tstack[depth - 1]] = new
    # rotate the new node up while its priority beats its parent's (heap order)
    while depth > 0 and st.tprio[st.tstack[depth - 1]] < st.tprio[new]:
        parent = st.tstack[depth - 1]
        depth -= 1
        if st.tleft[parent] == new:
            st.tleft[parent] = st.tright[new]
            st.tright[new] = parent
        else:
            st.tright[parent] = st.tleft[new]
            st.tleft[new] = parent
        for r in range(A * L):  # the new node's subtree: the parent's vertices
            st.ttot[new, r] = st.ttot[parent, r]
            st.ttot[parent, r] = st.town[parent, r]
        for r in range(M):
            st.ttote[new, r] = st.ttote[parent, r]
            st.ttote[parent, r] = st.towne[parent, r]
        for child in (st.tleft[parent], st.tright[parent]):
            if child >= 0:
                _read_block(
                    st.ttot[child],
                    st.ttote[child],
                    0,
                    0,
                    st.ttot[parent],
                    st.ttote[parent],
                    A,
                    M,
                    nmin,
                    P,
                )
        if depth == 0:
            st.ixh[inst, h + 1 + tree] = new
        elif st.tleft[st.tstack[depth - 1]] == parent:
            st.tleft[st.tstack[depth - 1]] = new
        else:
            st.tright[st.tstack[depth - 1]] = new


@njit(**JIT_INLINE)
def _t_range(st, ev, tree, root, qv, below, inclusive, vec, vext, A, M, nmin, P):  # type: ignore[no-untyped-def]
    """vec/vext += the registers of the keys below qv (or above; with inclusive, equal
    too) in the tree at root: O(depth) subtree totals."""
    node = root
    while node >= 0:
        c = _t_cmp(ev, tree, st.tkey[node], qv)
        inside = (c == 0 and inclusive) or (c < 0 if below else c > 0)
        if inside:  # the node, and its subtree on the far side from qv
            _read_block(st.town[node], st.towne[node], 0, 0, vec, vext, A, M, nmin, P)
            far = st.tleft[node] if below else st.tright[node]
            if far >= 0:
                _read_block(st.ttot[far], st.ttote[far], 0, 0, vec, vext, A, M, nmin, P)
            node = st.tright[node] if below else st.tleft[node]
        else:
            node = st.tleft[node] if below else st.tright[node]


@njit(**JIT_OPTIONS)
def _ix_collect(prog, st, ev, sc, ix, op, pr, inst, k, e, vec, vext):  # type: ignore[no-untyped-def]
    """vec/vext += the registers of the vertices of index ix in window k whose key
    satisfies ``key op query`` for event e's query value (program pr)."""
    prog = borrow(prog)
    st = borrow(st)
    ev = borrow(ev)
    sc = borrow(sc)
    kind, qv = _value(prog, st, ev, sc, pr, e)
    if kind == 0:
        return
    P = st.P
    L = P.shape[0]
    q = prog.ix_q[ix]
    A = prog.q_A[q]
    M = prog.q_M[q]
    nmin = prog.q_nmin[q]
    slot = k % prog.ix_NS[ix]
    h = 3 * (prog.ix_koff[ix] + slot)
    if st.ixh[inst, h] != k:
        return
    qtree = -1  # NaN, a boolean: only != holds, against every key
    if kind == 3:
        qtree = 1
    elif (kind == 1 or kind == 2) and qv == qv:
        qtree = 0
    if op == 1:  # !=: every key but the equal ones of the query's own kind
        for tree in range(2):
            root = st.ixh[inst, h + 1 + tree]
            if root < 0:
                continue
            if tree == qtree:  # (np.bool_: see the note on literals above)
                yes, no = np.bool_(True), np.bool_(False)
                _t_range(st, ev, tree, root, qv, yes, no, vec, vext, A, M, nmin, P)
                _t_range(st, ev, tree, root, qv, no, no, vec, vext, A, M, nmin, P)
            else:
                _read_block(st.ttot[root], st.ttote[root], 0, 0, vec, vext, A, M, nmin, P)
        base = prog.ix_aoff[ix] + slot * A * L
        ebase = prog.ix_eoff[ix] + slot * M
        _read_block(st.ixa[inst], st.ixe[inst], base, ebase, vec, vext, A, M, nmin, P)
        return
    if qtree < 0:
        return
    root = st.ixh[inst, h + 1 + qtree]
    if op == 0:  # =: the node of the key
        while root >= 0:
            c = _t_cmp(ev, qtree, st.tkey[root], qv)
            if c == 0:
                _read_block(st.town[root], st.towne[root], 0, 0, vec, vext, A, M, nmin, P)
                return
            root = st.tleft[root] if c > 0 else st.tright[root]
        return
    # < <= (below) and > >= (above)
    _t_range(st, ev, qtree, root, qv, op <= 3, op == 3 or op == 5, vec, vext, A, M, nmin, P)


@njit(**JIT_INLINE)
def _compare(c, a, b):  # type: ignore[no-untyped-def]
    if c == 0:
        return a == b
    if c == 1:
        return a != b
    if c == 2:
        return a < b
    if c == 3:
        return a <= b
    if c == 4:
        return a > b
    return a >= b


@njit(**JIT_OPTIONS)
def _signal(prog, st, n, inst, k, tg, latest):  # type: ignore[no-untyped-def]
    """A match of negative query n in window k ended at time group tg; ``latest``: the
    latest start of the matches that end there (GRETA Section 5, SEMANTICS Negation)."""
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
            _nq_advance(prog, st, nt, inst, slot, ms)
        return
    for slot in range(prog.nt_NS[nt]):  # between: its source vertices before ms, anywhere
        if st.nq[inst, 4 * (prog.nt_koff[nt] + slot)] != SENT:
            _nq_advance(prog, st, nt, inst, slot, ms)


@njit(**JIT_OPTIONS)
def _fold_trailing(prog, st, sc, sp, upto):  # type: ignore[no-untyped-def]
    """Add the results that no trailing NOT dropped, of windows < upto of spec sp, to their
    groups, and release their queues (before _emit writes the groups out)."""
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
                        _add_result(prog, st, q, gi, k, sc.vec, sc.vext)
                _nq_reset(st, inst, h, np.int64(SENT))


@njit(**JIT_OPTIONS)
def release_rows(prog, st, rows):  # type: ignore[no-untyped-def]
    """Return the queue entries and index nodes of instance rows ``rows`` (freed or
    reused) to their pools."""
    for inst in rows:
        for nt in range(prog.nt_q.shape[0]):
            for slot in range(prog.nt_NS[nt]):
                _nq_reset(st, inst, 4 * (prog.nt_koff[nt] + slot), np.int64(SENT))
        for ix in range(prog.ix_q.shape[0]):
            for slot in range(prog.ix_NS[ix]):
                _ix_reset(prog, st, ix, inst, slot, SENT)


@njit(**JIT_INLINE)
def _add_block(add, ext, base, ebase, vec, vext, A, M, nmin, P):  # type: ignore[no-untyped-def]
    """add[base:] += vec (A registers of L lanes, modulo P); ext[ebase:] takes the better
    of its M extremes and vext's (the first nmin minima)."""
    L = P.shape[0]
    for r in range(0, A * L, L):  # (no r % L: an integer division per register)
        for lane in range(L):
            i = base + r + lane
            add[i] = _addmod(add[i], vec[r + lane], P[lane])
    for r in range(M):
        v = vext[r]
        if not np.isnan(v) and _better(v, ext[ebase + r], r < nmin):
            ext[ebase + r] = v


@njit(**JIT_INLINE)
def _end_results(prog, st, ev, c, inst, k, tg, vec, vext, qs):  # type: ignore[no-untyped-def]
    for j in range(prog.c_end_ptr[c], prog.c_end_ptr[c + 1]):
        eq = prog.c_end_q[j]
        gi = st.inst_ginst[inst, prog.q_gsel[eq]]
        _add_result(prog, st, eq, gi, k, vec, vext)
    if qs.ndim == 1:
        for j in range(prog.c_sig_ptr[c], prog.c_sig_ptr[c + 1]):
            eq = prog.c_sig[j]
            if prog.q_nkind[eq] >= 0:  # a match of a negative query (latest start in vext)
                _signal(prog, st, eq, inst, k, tg, vext[0])
            else:  # results that a trailing NOT may still drop
                _nq_append(prog, st, ev, prog.q_trail[eq], inst, k, tg, np.int64(-1), vec, vext)


@njit(**JIT_INLINE)
def _add_result(prog, st, q, gi, k, vec, vext):  # type: ignore[no-untyped-def]
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
    _add_block(st.res[gi], st.rext[gi], rbase, rebase, vec, vext, A, M, nmin, P)


# ----------------------------------------------------------------------------- bursts


@njit(**JIT_INLINE)
def _burst_reset(prog, st, b, inst):  # type: ignore[no-untyped-def]
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
def _burst_step(prog, st, b, inst):  # type: ignore[no-untyped-def]
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
            st.bur[inst, gi] = _addmod(
                mulmod(f, st.bur[inst, gi], p, pinv), mulmod(w, alpha, p, pinv), p
            )
            st.bur[inst, di] = _addmod(
                mulmod(f, st.bur[inst, di], p, pinv), mulmod(w, _addmod(beta, 1, p), p, pinv), p
            )
            st.bur[inst, wi] = 0
        st.bur[inst, c + lane] = mulmod(f, alpha, p, pinv)
        st.bur[inst, c + L + lane] = _addmod(mulmod(f, beta, p, pinv), gg, p)
    st.bur[inst, off + 3] = 0


@njit(**JIT_INLINE)
def _burst_add(prog, st, ev, b, inst, e):  # type: ignore[no-untyped-def]
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
        _burst_step(prog, st, b, inst)
        st.bur[inst, off + 2] = tg
    st.bur[inst, off + 3] += 1
    nw = prog.set_nw[b]
    wbase = off + 6 + 2 * L + 2 * nw * L
    for lane in range(L):  # weight 0 is the constant 1 (occurrence counts)
        st.bur[inst, wbase + lane] = _addmod(st.bur[inst, wbase + lane], 1, P[lane])
    for j in range(1, nw):
        w = prog.set_wcol[b, j]
        for lane in range(L):
            i = wbase + j * L + lane
            st.bur[inst, i] = _addmod(st.bur[inst, i], ev.wres[w, e, lane], P[lane])
    foff = prog.set_bfoff[b]
    for j in range(prog.set_na[b]):  # (NaN, no value here, compares false: skipped)
        v = ev.aval[prog.set_acol[b, j], e]
        if v < st.burf[inst, foff + 2 * j]:
            st.burf[inst, foff + 2 * j] = v
        if v > st.burf[inst, foff + 2 * j + 1]:
            st.burf[inst, foff + 2 * j + 1] = v


@njit(**JIT_INLINE)
def _log_decision(dlog, stats, b, inst, first, n, shared_cost, nonshared, shared):  # type: ignore[no-untyped-def]
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
def _burst_flush(prog, st, ev, sc, b, inst):  # type: ignore[no-untyped-def]
    off = prog.set_boff[b]
    if st.bur[inst, off + 0] < 0:
        return
    _burst_step(prog, st, b, inst)
    n = st.bur[inst, off + 1]
    if n == 0:
        _burst_reset(prog, st, b, inst)
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
    _log_decision(st.dlog, st.stats, b, inst, first, n, shared_cost, nonshared, shared)
    st.stats[0] += 1
    if shared:
        st.stats[1] += 1
        _burst_apply(prog, st, ev, sc, b, inst, first, st.neg)
    else:
        _burst_replay(prog, st, ev, sc, b, inst, first)
    _burst_reset(prog, st, b, inst)


@njit(**JIT_INLINE)
def _burst_apply(prog, st, ev, sc, b, inst, first, qs):  # type: ignore[no-untyped-def]
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
            slot = _claim(prog, st, cls, inst, k)
            _gather(
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
                    new[r * L + lane] = _addmod(
                        mulmod(st.bur[inst, c + lane], st.tot[inst, tbase + r * L + lane], p, pinv),
                        mulmod(st.bur[inst, c + L + lane], x[r * L + lane], p, pinv),
                        p,
                    )
            for rj in range(prog.cnt_ptr[gs], prog.cnt_ptr[gs + 1]):
                _own_coef(prog, st, inst, c, nw, np.int64(0), prog.cnt_reg[rj], tbase, x, new)
            for rj in range(prog.sum_ptr[gs], prog.sum_ptr[gs + 1]):
                wj = prog.set_wmap[b, prog.sum_w[rj]]
                _own_coef(prog, st, inst, c, nw, wj, prog.sum_reg[rj], tbase, x, new)
            ebase = prog.c_eoff[cls] + slot * M
            newe = sc.vext2
            for r in range(M):
                cur = st.ext[inst, ebase + r]
                v = xe[r]
                if not np.isnan(v) and (_better(v, cur, r < nmin)):
                    cur = v
                newe[r] = cur
            for rj in range(prog.ext_ptr[gs], prog.ext_ptr[gs + 1]):
                reg = prog.ext_reg[rj]
                aj = prog.set_amap[b, prog.ext_a[rj]]
                v = st.burf[inst, foff + 2 * aj + (0 if reg < nmin else 1)]
                cur = newe[reg]
                if _better(v, cur, reg < nmin):
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
                        x[i] = _addmod(new[i], P[lane] - st.tot[inst, tbase + i], P[lane])
                if queued:
                    for rj in range(prog.c_nt_ptr[cls], prog.c_nt_ptr[cls + 1]):
                        _nq_append(prog, st, ev, prog.c_nt[rj], inst, k, tgf, np.int64(-1), x, newe)
                if ends:
                    _end_results(prog, st, ev, cls, inst, k, tgf, x, newe, qs)
            for r in range(A * L):
                st.tot[inst, tbase + r] = new[r]
            for r in range(M):
                st.ext[inst, ebase + r] = newe[r]


@njit(**JIT_INLINE)
def _own_coef(prog, st, inst, c, nw, wj, reg, tbase, x, new):  # type: ignore[no-untyped-def]
    """new[reg] += gamma_w * count(T0) + delta_w * count(X)."""
    L = st.P.shape[0]
    P = st.P
    PINV = st.PINV
    for lane in range(L):
        p = P[lane]
        pinv = PINV[lane]
        gamma = st.bur[inst, c + 2 * L + wj * L + lane]
        delta = st.bur[inst, c + 2 * L + nw * L + wj * L + lane]
        t = _addmod(
            mulmod(gamma, st.tot[inst, tbase + lane], p, pinv), mulmod(delta, x[lane], p, pinv), p
        )
        new[reg * L + lane] = _addmod(new[reg * L + lane], t, p)


@njit(**JIT_INLINE)
def _burst_replay(prog, st, ev, sc, b, inst, first):  # type: ignore[no-untyped-def]
    """Process a burst's events one time group at a time, query by query (non-shared)."""
    e = first
    while e >= 0:
        tg = ev.tg[e]
        group_end = e
        n_ent = np.int64(0)
        while group_end >= 0 and ev.tg[group_end] == tg:
            for j in range(prog.set_q_ptr[b], prog.set_q_ptr[b + 1]):
                n_ent = _compute(
                    prog, st, ev, sc, prog.set_q[j], prog.set_s[j], inst, group_end, n_ent, st.neg
                )
            group_end = ev.bnext[b, group_end]
        _insert_all(prog, st, ev, sc, n_ent, tg)
        e = group_end


# ----------------------------------------------------------------------------- lazy windows
# A lazy window spec (lower/lazy.py's lazy_windows) keeps, per partition instance, the
# registers of each state class split by the start slide of their trends: X[c][p] sums
# the registers of c's vertices over the trends that start in slide p (the slide of time
# t is khi(t), the end of the window numbers of t). A trend is in window k iff it starts
# in a slide after k (k < p) and ends before k closes, so at the close of window k its
# results are the END vertices' registers summed over the slides p > k. Every event maps
# X[.][p] by the same linear map for every p (its vertex adds the predecessors' registers,
# and its own weights times its count), and a trend start adds at its own slide only; so
# the kernel keeps X = G Y: a lower triangular matrix G per instance (row block c_lg of
# class c: its A registers times the A registers of each ancestor, ``c_anc``; stored
# minus the identity, so that a fresh row is zeros), which each vertex's row updates in
# O(ancestors), and the registers Y that starts add, kept only as per-slide deltas in a
# queue (entries: kind 0, class d: Y of d added at that slide). A start solves
# G dY = start (forward substitution over the start's class and those that read it; the
# diagonal of a Kleene class is prod(1 + g) over its time groups of g vertices, whose
# inverse ``c_ldi`` is kept with a table of inverses, ``ev.linv``).
#
# The results: per END of a lazy query (j) a row vector D_j, the sum of its END vertices'
# rows of G, so that the results over the live slides are D_j . TY + TZ_j, where TY sums
# the live slides' Y (``c_ly``) and TZ_j the live slides' corrections: a Y added at slide
# p after some END vertices must not count for them, so the Z entry of (j, p) (kind 1)
# gets -D_j . dY, and a start that is itself an END adds its own registers there. A
# group's total ``st.lres`` moves by D_j's change times TY when an END vertex comes, and
# by the expiring entries when a window closes (a start's entry: -(D_j now) . dY, so
# that the slide's Y counts for the END vertices after it; a Z entry: -Z). Entries of one
# instance, kind, class (or END) and slide are one entry. Kind 2 counts an instance's
# events in the open windows (the lanes' bound, see _count_in). Everything is modulo
# the lanes' primes: G's entries are huge numbers, the windows' results are not.
# (st.lzi per instance: stamps per class, last entries per class, END and spec, event
# counts and repeatable ones per spec, live entries; the pool: lnext lkhi linst lkind
# lidx lval, st.lmeta = [free list, full, in use, most], st.lq per spec: head, tail.)


@njit(**JIT_INLINE)
def _lz_cols(prog):  # type: ignore[no-untyped-def]
    """The first columns in st.lzi of: the last entries per class, END and spec; per
    spec, its events in the open windows and the repeatable ones; per instance, the time
    group of its starts, the first of them (linked through sc.lent[., 4]) and its live
    entries (its first columns: per class, a stamp and a count of its vertices in the
    stamped time group; the layout is ``prog.lz_off``, see program.lazy_tables)."""
    off = prog.lz_off
    return off[0], off[1], off[2], off[3], off[4]


@njit(**JIT_INLINE)
def _lz_dot(st, inst, at, A, lane, vec, off):  # type: ignore[no-untyped-def]
    """D_j's row r at one ancestor's block (its A columns from ``at``) times the A
    registers of vec from ``off``, at one lane: what a start's dY adds to an END."""
    L = st.P.shape[0]
    p = st.P[lane]
    acc = 0
    for r2 in range(A):
        v = mulmod(st.lz[inst, at + r2 * L + lane], vec[off + r2 * L + lane], p, st.PINV[lane])
        acc = _addmod(acc, v, p)
    return acc


@njit(**JIT_INLINE)
def _lz_entry(prog, st, inst, kind, idx, sp, khi):  # type: ignore[no-untyped-def]
    """The queue entry of (inst, kind, idx) at slide khi: the last one if it is that, else
    a new one at the queue's tail (-1, and the pool marked full, when there is none)."""
    c_last, j_last, sp_last, _, inst_tg = _lz_cols(prog)
    live = inst_tg + 2
    col = (c_last if kind == 0 else j_last if kind == 1 else sp_last) + idx
    x = st.lzi[inst, col]
    if (
        x >= 0
        and st.linst[x] == inst
        and st.lkind[x] == kind
        and st.lidx[x] == idx
        and st.lkhi[x] == khi
    ):
        return x
    x = st.lmeta[0]
    if x < 0:
        st.lmeta[1] = 1
        return np.int64(-1)
    st.lmeta[0] = st.lnext[x]
    st.lmeta[2] += 1
    if st.lmeta[2] > st.lmeta[3]:
        st.lmeta[3] = st.lmeta[2]
    st.linst[x] = inst
    st.lkind[x] = kind
    st.lidx[x] = idx
    st.lkhi[x] = khi
    st.lnext[x] = -1
    for r in range(st.lval.shape[1]):
        st.lval[x, r] = 0
    qi = 2 if kind == 2 else 0  # (counts: their slides are rounded up, see _count_in)
    tail = st.lq[sp, qi + 1]
    if tail < 0:
        st.lq[sp, qi] = x
    else:
        st.lnext[tail] = x
    st.lq[sp, qi + 1] = x
    st.lzi[inst, col] = x
    st.lzi[inst, live] += 1
    return x


@njit(**JIT_OPTIONS)
def _lazy_phase1(prog, st, ev, sc, i, j):  # type: ignore[no-untyped-def]
    """Phase 1 of the lazy bindings of events i..j (one time group; _compute leaves them
    out): once per time group, in a function of its own (see _others)."""
    prog = borrow(prog)
    st = borrow(st)
    ev = borrow(ev)
    sc = borrow(sc)
    for e in range(i, j):
        ty = ev.types[e]
        for bj in range(prog.ty_ptr[ty], prog.ty_ptr[ty + 1]):
            bi = prog.ty_bind[bj]
            q = prog.b_q[bi]
            if not prog.q_lazy[q]:
                continue
            f = prog.b_f[bi]
            if f >= 0 and not ev.filt[f, e]:
                continue
            inst = ev.pid[prog.q_part[q], e]
            if inst >= 0:
                _lazy_compute(prog, st, ev, sc, q, prog.b_s[bi], inst, e)


@njit(**JIT_INLINE)
def _lazy_compute(prog, st, ev, sc, q, s, inst, e):  # type: ignore[no-untyped-def]
    """Phase 1 of a lazy binding: event e's vertex as a row of G over its class's columns
    (the predecessors' rows, its own weights) and its start registers, into the scratch."""
    L = st.P.shape[0]
    P = st.P
    PINV = st.PINV
    A = prog.q_A[q]
    gs = prog.q_soff[q] + s
    c = prog.qs_c[gs]
    W = prog.c_lw[c]
    n = sc.ln[0]
    row = sc.lrow[n]
    sv = sc.lsv[n]
    for i in range(A * W * L):
        row[i] = 0
    for i in range(A * L):
        sv[i] = 0
    z = st.lz[inst]
    for j in range(prog.pred_ptr[gs], prog.pred_ptr[gs + 1]):
        pc = prog.qs_c[prog.q_soff[q] + prog.pred_src[j]]
        pw = prog.c_lw[pc]
        nb = prog.lpm_ptr[j + 1] - prog.lpm_ptr[j]
        g0 = prog.c_lg[pc]
        for r in range(A):
            for b in range(nb):
                m = prog.lpm[prog.lpm_ptr[j] + b]
                for r2 in range(A):
                    src = g0 + (r * pw + b * A + r2) * L
                    dst = (r * W + m * A + r2) * L
                    for lane in range(L):
                        row[dst + lane] = _addmod(row[dst + lane], z[src + lane], P[lane])
            # the identity: the predecessor's own column (its class comes last among its
            # ancestors)
            m = prog.lpm[prog.lpm_ptr[j + 1] - 1]
            dst = (r * W + m * A + r) * L
            for lane in range(L):
                row[dst + lane] = _addmod(row[dst + lane], 1, P[lane])
    if s == prog.q_start[q]:
        for lane in range(L):
            sv[lane] = 1
    # its own registers: count registers += the count, sums += weight * the count
    for jj in range(prog.cnt_ptr[gs], prog.cnt_ptr[gs + 1]):
        reg = prog.cnt_reg[jj]
        for col in range(W):
            for lane in range(L):
                i = (reg * W + col) * L + lane
                row[i] = _addmod(row[i], row[col * L + lane], P[lane])
        for lane in range(L):
            sv[reg * L + lane] = _addmod(sv[reg * L + lane], sv[lane], P[lane])
    for jj in range(prog.sum_ptr[gs], prog.sum_ptr[gs + 1]):
        reg = prog.sum_reg[jj]
        w = prog.sum_w[jj]
        for col in range(W):
            for lane in range(L):
                i = (reg * W + col) * L + lane
                row[i] = _addmod(
                    row[i],
                    mulmod(row[col * L + lane], ev.wres[w, e, lane], P[lane], PINV[lane]),
                    P[lane],
                )
        for lane in range(L):
            sv[reg * L + lane] = _addmod(
                sv[reg * L + lane],
                mulmod(sv[lane], ev.wres[w, e, lane], P[lane], PINV[lane]),
                P[lane],
            )
    sc.lent[n, 0] = q
    sc.lent[n, 1] = s
    sc.lent[n, 2] = inst
    sc.lent[n, 3] = e
    sc.ln[0] = n + 1


@njit(**JIT_OPTIONS)
def _lazy_insert_all(prog, st, ev, sc, tg):  # type: ignore[no-untyped-def]
    """Phase 2 of the lazy bindings of a time group: results of END vertices, rows of G,
    the Kleene diagonals, then per instance the starts (see the comment block above).
    A time group may hold many events (times in seconds): every pass is linear in its
    entries (counts per class and instance, starts linked per instance)."""
    prog = borrow(prog)
    st = borrow(st)
    ev = borrow(ev)
    sc = borrow(sc)
    L = st.P.shape[0]
    P = st.P
    PINV = st.PINV
    n = sc.ln[0]
    sc.ln[0] = 0
    n_c = prog.c_lazy.shape[0]
    _, _, _, _, inst_tg = _lz_cols(prog)
    for i in range(n):  # vertices per (instance, Kleene class); starts per instance
        q = sc.lent[i, 0]
        inst = sc.lent[i, 2]
        c = prog.qs_c[prog.q_soff[q] + sc.lent[i, 1]]
        if prog.c_lloop[c]:
            if st.lzi[inst, c] != tg:
                st.lzi[inst, c] = tg
                st.lzi[inst, n_c + c] = 0
            st.lzi[inst, n_c + c] += 1
        sc.lent[i, 4] = -2  # no start
        if prog.c_read[c]:
            sv = sc.lsv[i]
            for r in range(prog.q_A[q] * L):
                if sv[r] != 0:
                    sc.lent[i, 4] = -1  # a start, the last of its instance's so far
            if sc.lent[i, 4] == -1:
                if st.lzi[inst, inst_tg] != tg:
                    st.lzi[inst, inst_tg] = tg
                else:
                    sc.lent[st.lzi[inst, inst_tg + 1], 4] = i
                st.lzi[inst, inst_tg + 1] = i
    for i in range(n):
        q = sc.lent[i, 0]
        inst = sc.lent[i, 2]
        e = sc.lent[i, 3]
        A = prog.q_A[q]
        c = prog.qs_c[prog.q_soff[q] + sc.lent[i, 1]]
        W = prog.c_lw[c]
        row = sc.lrow[i]
        sv = sc.lsv[i]
        starts = False
        for r in range(A * L):
            if sv[r] != 0:
                starts = True
        for j in range(prog.c_end_ptr[c], prog.c_end_ptr[c + 1]):
            qj = prog.c_end_q[j]
            gi = st.inst_ginst[inst, prog.q_gsel[qj]]
            d0 = prog.j_ld[j]
            for r in range(A * W * L):
                st.lz[inst, d0 + r] = _addmod(st.lz[inst, d0 + r], row[r], P[r % L])
            res = prog.q_lroff[qj]
            nb = W // A
            for r in range(A):
                for lane in range(L):
                    p = P[lane]
                    acc = sv[r * L + lane]
                    for b in range(nb):
                        y0 = prog.c_ly[prog.c_anc[prog.c_anc_ptr[c] + b]]
                        for r2 in range(A):
                            acc = _addmod(
                                acc,
                                mulmod(
                                    row[(r * W + b * A + r2) * L + lane],
                                    st.lz[inst, y0 + r2 * L + lane],
                                    p,
                                    PINV[lane],
                                ),
                                p,
                            )
                    st.lres[gi, res + r * L + lane] = _addmod(
                        st.lres[gi, res + r * L + lane], acc, p
                    )
            if starts:  # a one-event trend: its own registers, at its own slide
                sp = prog.c_spec[c]
                x = _lz_entry(prog, st, inst, np.int64(1), j, sp, ev.khi[sp, e])
                if x < 0:
                    return
                for r in range(A * L):
                    st.lval[x, r] = _addmod(st.lval[x, r], sv[r], P[r % L])
        if prog.c_read[c]:
            g0 = prog.c_lg[c]
            for r in range(A * W * L):
                st.lz[inst, g0 + r] = _addmod(st.lz[inst, g0 + r], row[r], P[r % L])
            g = st.lzi[inst, n_c + c]
            if prog.c_lloop[c] and g > 0:  # the diagonal, once per time group: (1 + g)
                st.lzi[inst, n_c + c] = 0
                di = prog.c_ldi[c]
                for lane in range(L):
                    p = P[lane]
                    cur = _addmod(st.lz[inst, di + lane], 1, p)
                    st.lz[inst, di + lane] = _addmod(
                        mulmod(cur, ev.linv[1 + g, lane], p, PINV[lane]), p - 1, p
                    )
    for i in range(n):  # the starts, instance by instance (from its first)
        if sc.lent[i, 4] == -2:
            continue
        inst = sc.lent[i, 2]
        if st.lzi[inst, inst_tg] == tg:
            st.lzi[inst, inst_tg] = -1  # (solved)
            if not _lz_solve(prog, st, ev, sc, inst, i):
                return


@njit(**JIT_INLINE)
def _lz_solve(prog, st, ev, sc, inst, first):  # type: ignore[no-untyped-def]
    """G dY = the starts of instance inst in this time group (its entries from ``first``
    on, linked through sc.lent[., 4]): the classes they start in and the read classes that
    read those, each after the
    classes it reads (forward substitution); add dY to TY and to its slide's entries,
    and -D_j . dY to the Z entries of the ENDs that read it. False when the pool is
    full."""
    L = st.P.shape[0]
    P = st.P
    PINV = st.PINV
    sc.ln[1] += 1
    stamp = sc.ln[1]
    todo = sc.ltodo
    m = 0
    i = first
    while i >= 0:
        c = prog.qs_c[prog.q_soff[sc.lent[i, 0]] + sc.lent[i, 1]]
        i = sc.lent[i, 4]
        if sc.lmark[c] != stamp:
            sc.lmark[c] = stamp
            todo[m] = c
            m += 1
        for x in range(prog.c_desc_ptr[c], prog.c_desc_ptr[c + 1]):
            d = prog.c_desc[x]
            if sc.lmark[d] != stamp:
                sc.lmark[d] = stamp
                todo[m] = d
                m += 1
    for a in range(1, m):  # by rank (a handful of classes)
        v = todo[a]
        b = a - 1
        while b >= 0 and prog.c_rank[todo[b]] > prog.c_rank[v]:
            todo[b + 1] = todo[b]
            b -= 1
        todo[b + 1] = v
    AL = sc.vec.shape[0]
    e = sc.lent[first, 3]
    for t in range(m):
        d = todo[t]
        A = prog.c_A[d]
        W = prog.c_lw[d]
        nb = W // A
        a0 = prog.c_anc_ptr[d]
        inj = sc.vec2
        for r in range(A * L):
            inj[r] = 0
        i = first
        while i >= 0:
            if prog.qs_c[prog.q_soff[sc.lent[i, 0]] + sc.lent[i, 1]] == d:
                sv = sc.lsv[i]
                for r in range(A * L):
                    inj[r] = _addmod(inj[r], sv[r], P[r % L])
            i = sc.lent[i, 4]
        g0 = prog.c_lg[d]
        di = prog.c_ldi[d]
        dd = d * AL
        for r in range(A):
            for lane in range(L):
                p = P[lane]
                pinv = PINV[lane]
                acc = inj[r * L + lane]
                for b in range(nb):
                    a = prog.c_anc[a0 + b]
                    if sc.lst[a] != stamp and a != d:
                        continue  # (no dY in this solve)
                    top = A if a != d else r  # own block: the registers before r
                    for r2 in range(top):
                        gv = st.lz[inst, g0 + (r * W + b * A + r2) * L + lane]
                        dv = sc.ldel[a * AL + r2 * L + lane]
                        acc = _addmod(acc, p - mulmod(gv, dv, p, pinv), p)
                dinv = _addmod(st.lz[inst, di + lane], 1, p)
                sc.ldel[dd + r * L + lane] = mulmod(acc, dinv, p, pinv)
        sc.lst[d] = stamp
        nz = False
        for r in range(A * L):
            if sc.ldel[dd + r] != 0:
                nz = True
        if not nz:
            continue
        sp = prog.c_spec[d]
        khi = ev.khi[sp, e]
        x = _lz_entry(prog, st, inst, np.int64(0), d, sp, khi)
        if x < 0:
            return False
        y0 = prog.c_ly[d]
        for r in range(A * L):
            lane = r % L
            st.lval[x, r] = _addmod(st.lval[x, r], sc.ldel[dd + r], P[lane])
            st.lz[inst, y0 + r] = _addmod(st.lz[inst, y0 + r], sc.ldel[dd + r], P[lane])
        for jj in range(prog.ldj_ptr[d], prog.ldj_ptr[d + 1]):
            j = prog.ldj_j[jj]
            pos = prog.ldj_pos[jj]
            wj = prog.c_lw[prog.j_c[j]]
            d0 = prog.j_ld[j]
            xz = _lz_entry(prog, st, inst, np.int64(1), j, sp, khi)
            if xz < 0:
                return False
            for r in range(A):
                for lane in range(L):
                    p = P[lane]
                    acc = _lz_dot(st, inst, d0 + (r * wj + pos * A) * L, A, lane, sc.ldel, dd)
                    st.lval[xz, r * L + lane] = _addmod(st.lval[xz, r * L + lane], p - acc, p)
    return True


@njit(**JIT_INLINE)
def _lz_expire(prog, st, sp, qi, k):  # type: ignore[no-untyped-def]
    """Let go of the entries of queue qi (0: starts and corrections; 2: event counts) of
    lazy spec sp whose slides window k does not hold (khi <= k), undoing what they add."""
    L = st.P.shape[0]
    P = st.P
    _, _, _, counts, inst_tg = _lz_cols(prog)
    live = inst_tg + 2
    h = st.lq[sp, qi]
    while h >= 0 and st.lkhi[h] <= k:
        inst = st.linst[h]
        kind = st.lkind[h]
        idx = st.lidx[h]
        if kind == 0:  # TY -= dY; each END that reads it: its results -= D_j . dY
            d = idx
            A = prog.c_A[d]
            y0 = prog.c_ly[d]
            for r in range(A * L):
                st.lz[inst, y0 + r] = _addmod(
                    st.lz[inst, y0 + r], P[r % L] - st.lval[h, r], P[r % L]
                )
            for jj in range(prog.ldj_ptr[d], prog.ldj_ptr[d + 1]):
                j = prog.ldj_j[jj]
                pos = prog.ldj_pos[jj]
                qj = prog.j_q[j]
                wj = prog.c_lw[prog.j_c[j]]
                d0 = prog.j_ld[j]
                gi = st.inst_ginst[inst, prog.q_gsel[qj]]
                res = prog.q_lroff[qj]
                for r in range(A):
                    for lane in range(L):
                        p = P[lane]
                        acc = _lz_dot(
                            st, inst, d0 + (r * wj + pos * A) * L, A, lane, st.lval[h], np.int64(0)
                        )
                        i = res + r * L + lane
                        st.lres[gi, i] = _addmod(st.lres[gi, i], p - acc, p)
        elif kind == 1:  # the results -= Z
            qj = prog.j_q[idx]
            gi = st.inst_ginst[inst, prog.q_gsel[qj]]
            res = prog.q_lroff[qj]
            for r in range(prog.q_A[qj] * L):
                p = P[r % L]
                st.lres[gi, res + r] = _addmod(st.lres[gi, res + r], p - st.lval[h, r], p)
        else:
            st.lzi[inst, counts + 2 * idx] -= st.lval[h, 0]
            st.lzi[inst, counts + 2 * idx + 1] -= st.lval[h, 1]
        c_last, j_last, sp_last, _, _ = _lz_cols(prog)
        col = (c_last if kind == 0 else j_last if kind == 1 else sp_last) + idx
        if st.lzi[inst, col] == h:
            st.lzi[inst, col] = -1
        st.lzi[inst, live] -= 1
        nxt = st.lnext[h]
        st.lq[sp, qi] = nxt
        if nxt < 0:
            st.lq[sp, qi + 1] = -1
        st.lnext[h] = st.lmeta[0]
        st.lmeta[0] = h
        st.lmeta[2] -= 1
        h = nxt


@njit(**JIT_OPTIONS)
def _lazy_close(prog, st, out, sp, upto):  # type: ignore[no-untyped-def]
    """Write out the windows of lazy spec sp from st.closed[sp] up to (not) upto, each
    after the entries of the slides it does not hold expire; stop when none is left."""
    prog = borrow(prog)
    st = borrow(st)
    out = borrow(out)
    L = st.P.shape[0]
    k = st.closed[sp]
    while k < upto:
        _lz_expire(prog, st, sp, np.int64(2), k)
        _lz_expire(prog, st, sp, np.int64(0), k)
        if st.lq[sp, 0] < 0:  # no trend in any later window: what the closed ones held
            _lz_expire(prog, st, sp, np.int64(2), upto - 1)
            return
        for q in range(prog.q_spec.shape[0]):
            if prog.q_spec[q] != sp or not prog.q_lazy[q]:
                continue
            A = prog.q_A[q]
            gr = prog.q_grouping[q]
            res = prog.q_lroff[q]
            for jg in range(st.gr_ptr[gr], st.gr_ptr[gr + 1]):
                gi = st.gr_ginst[jg]
                any_trend = False
                for lane in range(L):
                    if st.lres[gi, res + lane] != 0:
                        any_trend = True
                if not any_trend:
                    continue
                nr = out.n[0]
                out.key[nr, 0] = q
                out.key[nr, 1] = gi
                out.key[nr, 2] = k
                for r in range(A * L):
                    out.add[nr, r] = st.lres[gi, res + r]
                out.n[0] = nr + 1
        k += 1


# ----------------------------------------------------------------------------- phases


@njit(**JIT_INLINE)
def _compute(prog, st, ev, sc, q, s, inst, e, n_ent, qs):  # type: ignore[no-untyped-def]
    """Phase 1 for one binding: the registers of event e's vertices, into the scratch."""
    sp = prog.q_spec[q]
    A = prog.q_A[q]
    M = prog.q_M[q]
    L = st.P.shape[0]
    skip = np.int64(-1)
    if qs.ndim == 1:  # a guard that fails leaves the event only its start
        pr = prog.g_pr[prog.q_soff[q] + s]
        if pr >= 0 and not _holds(prog, st, ev, sc, pr, np.int64(-1), e):
            skip = NO_PREDECESSORS
    for k in range(max(ev.klo[sp, e], st.closed[sp]), ev.khi[sp, e]):
        if not _gather(prog, st, ev, sc, q, s, inst, k, e, ev.tg[e], sc.vec, sc.vext, skip, qs):
            continue
        _own(prog, st, ev, q, s, e, sc.vec, sc.vext)
        c = prog.qs_c[prog.q_soff[q] + s]
        if not prog.c_read[c]:
            # no state reads the class (an END without successors): the vertex only adds
            # to results, which nothing reads before they are emitted, so at once and
            # without registers of its own (a seventh of the kernel's time with 50 queries)
            _end_results(prog, st, ev, c, inst, k, ev.tg[e], sc.vec, sc.vext, qs)
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
def _insert_all(prog, st, ev, sc, n_ent, tg):  # type: ignore[no-untyped-def]
    for j in range(n_ent):
        _insert(
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


@njit(**JIT_OPTIONS)
def _flush_all(prog, st, ev, sc):  # type: ignore[no-untyped-def]
    prog = borrow(prog)  # (a function of its own: see _others)
    st = borrow(st)
    ev = borrow(ev)
    sc = borrow(sc)
    for b in range(prog.set_boff.shape[0]):
        off = prog.set_boff[b]
        for inst in range(st.bur.shape[0]):
            if st.bur[inst, off] >= 0:
                _burst_flush(prog, st, ev, sc, b, inst)


@njit(**JIT_OPTIONS)
def _emit(prog, st, out, sp, upto):  # type: ignore[no-untyped-def]
    """Write out and clear every result slot of a query with window spec sp and window < upto."""
    prog = borrow(prog)
    st = borrow(st)
    out = borrow(out)
    L = st.P.shape[0]
    for q in range(prog.q_spec.shape[0]):
        if prog.q_spec[q] != sp:
            continue
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


@njit(**JIT_INLINE)
def _bitlen(x: int) -> int:
    n = 0
    while x > 0:
        x >>= 1
        n += 1
    return n


@njit(**JIT_INLINE)
def _count_window_events(prog, st, ev, e, lim):  # type: ignore[no-untyped-def]
    """Count event e in its partitions' windows; False when one outgrows the lanes.

    A window's need (see :mod:`trendagg.kernels._rns`) is r + s1 * bitlen(m) for
    its m events, r of them of repeatable types; lim = (capacity, s1). The
    largest need seen is kept in stats[2].
    """
    ty = ev.types[e]
    for g in range(prog.part_role.shape[0]):
        role = prog.part_role[g, ty]
        if role == 0:
            continue
        inst = ev.pid[g, e]
        if inst < 0:
            continue
        if not _count_in(prog, st, ev, e, g, inst, role, lim):
            return False
    return True


@njit(**JIT_INLINE)
def _count_in(prog, st, ev, e, g, inst, role, lim):  # type: ignore[no-untyped-def]
    for j in range(prog.part_sp_ptr[g], prog.part_sp_ptr[g + 1]):
        sp = prog.part_sp[j]
        if prog.sp_lazy[sp]:
            if not _count_lazy(prog, st, ev, e, sp, inst, role, lim):
                return False
        elif not _count_spec(prog, st, ev, e, sp, inst, role, lim):
            return False
    return True


@njit(**JIT_INLINE)
def _count_slots(prog, st, ev, e, g, inst, role, lim):  # type: ignore[no-untyped-def]
    """_count_in for a partitioning without lazy specs (a qualified one: see _others)."""
    for j in range(prog.part_sp_ptr[g], prog.part_sp_ptr[g + 1]):
        if not _count_spec(prog, st, ev, e, prog.part_sp[j], inst, role, lim):
            return False
    return True


@njit(**JIT_INLINE)
def _count_spec(prog, st, ev, e, sp, inst, role, lim):  # type: ignore[no-untyped-def]
    """Count event e in its windows of spec sp (slots)."""
    cap = lim[0]
    s1 = lim[1]
    ns = prog.sp_NS[sp]
    for k in range(max(ev.klo[sp, e], st.closed[sp]), ev.khi[sp, e]):
        idx = prog.sp_moff[sp] + k % ns
        if st.mkeys[inst, idx] != k:
            st.mkeys[inst, idx] = k
            st.mcnt[inst, idx] = 0
            st.mrep[inst, idx] = 0
        st.mcnt[inst, idx] += 1
        if role == 2:
            st.mrep[inst, idx] += 1
        need = st.mrep[inst, idx] + s1 * _bitlen(st.mcnt[inst, idx])
        if need > st.stats[2]:
            st.stats[2] = need
        if need > cap:
            return False
    return True


@njit(**JIT_INLINE)
def _count_lazy(prog, st, ev, e, sp, inst, role, lim):  # type: ignore[no-untyped-def]
    """Count event e in the open windows of lazy spec sp: one entry per instance and
    sixteenth of a window, counted until the last slide of its sixteenth leaves (a
    bound, never less; see _lazy_close)."""
    _, _, _, counts, _ = _lz_cols(prog)
    g16 = max(prog.sp_nwin[sp] // 16, 1)
    khi = -((-ev.khi[sp, e]) // g16) * g16
    x = _lz_entry(prog, st, inst, np.int64(2), sp, sp, khi)
    if x < 0:
        return True  # (the pool is full: run_chunk returns 3)
    st.lval[x, 0] += 1
    st.lzi[inst, counts + 2 * sp] += 1
    if role == 2:
        st.lval[x, 1] += 1
        st.lzi[inst, counts + 2 * sp + 1] += 1
    need = st.lzi[inst, counts + 2 * sp + 1] + lim[1] * _bitlen(st.lzi[inst, counts + 2 * sp])
    if need > st.stats[2]:
        st.stats[2] = need
    return need <= lim[0]


# The instances other than its own that an event is processed in (qualified partition
# attributes): one pass per time group, in a function of its own that borrows the
# tuples again (without, reference counting made GROUP-BY T.district 6x slower). Inlined
# into the loop per event and binding, the same code made every other workload's
# run_chunk 7% slower (1M events, 50 queries).


@njit(**JIT_OPTIONS)
def _others(prog, st, ev, sc, i, j, tg, lim, n_ent, qs):  # type: ignore[no-untyped-def]
    """Events i..j in the instances other than their own: with ``lim``, step 2 (count
    them in their windows, flush the bursts they interrupt; -1 when a window outgrows
    the lanes, else 0); without (``lim[0] < 0``), phase 1, returning ``n_ent``. Their
    bindings join no burst: a burst's type is one whose events go to their own
    instance only."""
    prog = borrow(prog)
    st = borrow(st)
    ev = borrow(ev)
    sc = borrow(sc)
    for e in range(i, j):
        ty = ev.types[e]
        if lim[0] >= 0:
            if qs.ndim == 1:
                for jn in range(prog.ty_ns_ptr[ty], prog.ty_ns_ptr[ty + 1]):
                    n_q = prog.ty_ns[jn]  # a new epoch in every instance it goes to
                    g = prog.q_part[n_q]
                    if prog.part_x[g] and ev.pid[g, e] >= 0:
                        for x in range(ev.xptr[g, e], ev.xptr[g, e + 1]):
                            st.nstart[ev.xinst[x], n_q] = tg
            for g in range(prog.part_role.shape[0]):
                role = prog.part_role[g, ty]
                if role == 0 or not prog.part_x[g] or ev.pid[g, e] < 0:
                    continue
                for x in range(ev.xptr[g, e], ev.xptr[g, e + 1]):  # (no lazy spec here)
                    if not _count_slots(prog, st, ev, e, g, ev.xinst[x], role, lim):
                        return -1
            for b in range(prog.set_boff.shape[0]):
                g = prog.set_part[b]
                if prog.set_role[b, ty] != 2 or not prog.part_x[g] or ev.pid[g, e] < 0:
                    continue
                for x in range(ev.xptr[g, e], ev.xptr[g, e + 1]):
                    inst = ev.xinst[x]
                    st.mixed[inst, b] = tg
                    _burst_flush(prog, st, ev, sc, b, inst)
            continue
        for bj in range(prog.ty_ptr[ty], prog.ty_ptr[ty + 1]):
            bi = prog.ty_bind[bj]
            q = prog.b_q[bi]
            g = prog.q_part[q]
            if not prog.part_x[g] or ev.pid[g, e] < 0:
                continue
            f = prog.b_f[bi]
            if f >= 0 and not ev.filt[f, e]:
                continue
            if prog.c_tmpl[prog.qs_c[prog.q_soff[q] + prog.b_s[bi]]]:
                continue  # the same vertex as in the template, which every instance reads
            for x in range(ev.xptr[g, e], ev.xptr[g, e + 1]):
                n_ent = _compute(prog, st, ev, sc, q, prog.b_s[bi], ev.xinst[x], e, n_ent, qs)
    return 0 if lim[0] >= 0 else n_ent


@njit(**JIT_OPTIONS)
def _copy_instance(st, new, parent, qs):  # type: ignore[no-untyped-def]
    """A new partition instance starts from a template's state: the events it has seen
    are those the new instance would have (qualified attributes, see executor). (Loops,
    not slices: no array views in the kernel.)"""
    for r in range(st.tot.shape[1]):
        st.tot[new, r] = st.tot[parent, r]
    for r in range(st.ext.shape[1]):
        st.ext[new, r] = st.ext[parent, r]
    for r in range(st.keys.shape[1]):
        st.keys[new, r] = st.keys[parent, r]
    for r in range(st.mkeys.shape[1]):
        st.mkeys[new, r] = st.mkeys[parent, r]
        st.mcnt[new, r] = st.mcnt[parent, r]
        st.mrep[new, r] = st.mrep[parent, r]
    if qs.ndim == 1:
        _copy_negations(st, new, parent)


@njit(**JIT_INLINE)
def _copy_negations(st, new, parent):  # type: ignore[no-untyped-def]
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
            c = _nq_entry(st, new, h, st.ptg[e])
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
        st.ixh[new, h + 1] = _t_copy(st, st.ixh[parent, h + 1])
        st.ixh[new, h + 2] = _t_copy(st, st.ixh[parent, h + 2])


@njit(**JIT_OPTIONS)
def run_chunk(prog, st, ev, sc, out, close_to, final, lim, qs):  # type: ignore[no-untyped-def]
    """Run the chunk's events; then close windows below close_to (all when final).

    Returns 0, or 1 when a window's trends outgrow what the lanes hold exactly
    (lim, see :func:`_count_window_events`; the caller replays with more lanes,
    nothing here is final then), or 2 when the negations' queues found their pool
    full (the caller replays with a larger one), or 3 when the lazy windows' queue
    did.
    """
    prog = borrow(prog)
    st = borrow(st)
    ev = borrow(ev)
    sc = borrow(sc)
    out = borrow(out)
    n = ev.types.shape[0]
    nsets = prog.set_boff.shape[0]
    cp = 0
    others = ev.xinst.shape[0] > 0  # some event is processed in other instances
    trailing = False  # some query's results wait for its trailing NOT
    if qs.ndim == 1:
        for q in range(prog.q_trail.shape[0]):
            if prog.q_trail[q] >= 0:
                trailing = True
    no_lim = np.full(2, -1, dtype=np.int64)
    lazy = False  # some window spec is lazy
    for sp in range(prog.sp_lazy.shape[0]):
        if prog.sp_lazy[sp]:
            lazy = True
    i = np.int64(0)
    while i < n:
        tg = ev.tg[i]
        j = i
        while j < n and ev.tg[j] == tg:
            j += 1
        if qs.ndim == 1 and st.pool[1]:  # a queue found the pool full: nothing is final
            return 2
        if st.lmeta[1]:  # so did the lazy windows' queue
            return 3
        # 1. close the windows that end by this time
        flushed = False
        for sp in range(st.closed.shape[0]):
            c = ev.klo[sp, i]
            if c > st.closed[sp]:
                if not flushed:
                    _flush_all(prog, st, ev, sc)
                    flushed = True
                if trailing:
                    _fold_trailing(prog, st, sc, sp, c)
                _emit(prog, st, out, sp, c)
                if prog.sp_lazy[sp]:
                    _lazy_close(prog, st, out, sp, c)
                st.closed[sp] = c
        # new partition instances of this time group that start from a template
        while cp < ev.cp_tg.shape[0] and ev.cp_tg[cp] <= tg:
            _copy_instance(st, ev.cp_new[cp], ev.cp_par[cp], qs)
            cp += 1
        # 2. count events per window; flush bursts that this time group interrupts
        for e in range(i, j):
            if not _count_window_events(prog, st, ev, e, lim):
                return 1
            ty = ev.types[e]
            if qs.ndim == 1:
                for jn in range(prog.ty_ns_ptr[ty], prog.ty_ns_ptr[ty + 1]):
                    n_q = prog.ty_ns[jn]  # a new epoch of the queues its matches prune
                    inst = ev.pid[prog.q_part[n_q], e]
                    if inst >= 0:
                        st.nstart[inst, n_q] = tg
            for b in range(nsets):
                role = prog.set_role[b, ty]
                if role == 0:
                    continue
                inst = ev.pid[prog.set_part[b], e]
                if inst < 0:
                    continue
                f = prog.set_f[b]
                if role == 1 and f >= 0 and not ev.filt[f, e]:
                    continue
                off = prog.set_boff[b]
                if role == 2:
                    st.mixed[inst, b] = tg
                    _burst_flush(prog, st, ev, sc, b, inst)
                elif st.bur[inst, off] >= 0 and st.bur[inst, off] != ev.pane[b, e]:
                    _burst_flush(prog, st, ev, sc, b, inst)
        if (
            others and _others(prog, st, ev, sc, i, j, tg, lim, np.int64(0), qs) < 0
        ):  # the same there
            return 1
        # 3. phase 1: every binding that no burst takes
        n_ent = np.int64(0)
        for e in range(i, j):
            ty = ev.types[e]
            for bj in range(prog.ty_ptr[ty], prog.ty_ptr[ty + 1]):
                bi = prog.ty_bind[bj]
                f = prog.b_f[bi]
                if f >= 0 and not ev.filt[f, e]:
                    continue
                q = prog.b_q[bi]
                inst = ev.pid[prog.q_part[q], e]
                if inst < 0 or prog.q_lazy[q]:  # (lazy ones: _lazy_phase1)
                    continue
                b = prog.b_set[bi]
                if b >= 0 and st.mode[0] > 0 and st.mixed[inst, b] != tg:
                    continue  # joins the burst below
                n_ent = _compute(prog, st, ev, sc, q, prog.b_s[bi], inst, e, n_ent, qs)
        if others:
            n_ent = _others(prog, st, ev, sc, i, j, tg, no_lim, n_ent, qs)
        if lazy:
            _lazy_phase1(prog, st, ev, sc, i, j)
        # 4. phase 2: insert; extend bursts
        _insert_all(prog, st, ev, sc, n_ent, tg)
        if sc.ln[0] > 0:
            _lazy_insert_all(prog, st, ev, sc, tg)
        if st.mode[0] > 0:
            for e in range(i, j):
                ty = ev.types[e]
                for b in range(nsets):
                    if prog.set_role[b, ty] != 1:
                        continue
                    inst = ev.pid[prog.set_part[b], e]
                    if inst < 0 or st.mixed[inst, b] == tg:
                        continue
                    f = prog.set_f[b]
                    if f >= 0 and not ev.filt[f, e]:
                        continue
                    _burst_add(prog, st, ev, b, inst, e)
        i = j
    # the chunk's bursts end with it (their event indices are the chunk's)
    _flush_all(prog, st, ev, sc)
    if qs.ndim == 1 and st.pool[1]:
        return 2
    if st.lmeta[1]:
        return 3
    for sp in range(st.closed.shape[0]):
        c = close_to[sp]
        if final:
            if trailing:
                _fold_trailing(prog, st, sc, sp, np.int64(2**62))
            _emit(prog, st, out, sp, np.int64(2**62))
            if prog.sp_lazy[sp]:
                _lazy_close(prog, st, out, sp, np.int64(2**62))
        elif c > st.closed[sp]:
            if trailing:
                _fold_trailing(prog, st, sc, sp, c)
            _emit(prog, st, out, sp, c)
            if prog.sp_lazy[sp]:
                _lazy_close(prog, st, out, sp, c)
            st.closed[sp] = c
    return 0
