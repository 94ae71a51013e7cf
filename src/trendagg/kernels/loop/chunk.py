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
one of its END vertices is inserted it signals its parent (``signal``): a
leading NOT blocks the parent's trend starts in that window, a trailing one
drops the parent's queued results of that window that end before the start,
one between Pi and Pj drops the vertices of end(Pi) older than the start from
the queue that start(Pj) reads.

NEXT conditions (docs/semantics.md, Predicates): a transition with conditions reads the
log of its source class, a queue with one entry per vertex that keeps the
values the conditions read on it, and tests each entry against the new event
with the transition's stack program (``holds``, :mod:`trendagg.kernels.edges`);
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
its bindings are computed once per time group (``lazy_phase1``) as rows of a
matrix per instance, inserted by ``lazy_insert_all``, and its windows written
by ``lazy_close`` (see :mod:`trendagg.kernels.loop.lazy`).

Registers are residues modulo the primes ``P`` (lane-minor: register r,
lane l at ``r * L + l``); minima and maxima are float64 (NaN = none: an
extreme column holds NaN where an event has no value for it, so a hidden
extreme of the integers skips the decimals, see :mod:`~trendagg.kernels.lower.core`).
A burst's own minima and maxima start at +inf and -inf instead, so that the
per-event update is two plain comparisons (a NaN compares false). A burst
without a value leaves an infinity only in a hidden extreme of the integers
(the other extremes bind events that have their value), which is only ever
compared with its query's extreme, a finite number. (Written with the NaN
test of ``better``, the update, or an infinity test in the flush, made the
whole loop 8-15% slower at 10M events even in workloads without a MIN or MAX:
the generated code changes, not the work. Measured by run_chunk's time.)

Bursts (HAMLET's shared Kleene bursts, their coefficients and the per-burst decision):
:mod:`trendagg.kernels.loop.bursts`.
"""

from __future__ import annotations

import numpy as np

from trendagg.jit import njit
from trendagg.kernels import JIT_OPTIONS
from trendagg.kernels._borrow import borrow
from trendagg.kernels.loop.bursts import burst_add, burst_flush, flush_all
from trendagg.kernels.loop.core import compute, insert_all
from trendagg.kernels.loop.instances import copy_instance, other_instances
from trendagg.kernels.loop.lazy import lazy_close, lazy_insert_all, lazy_phase1
from trendagg.kernels.loop.negation import fold_trailing
from trendagg.kernels.loop.results import emit
from trendagg.kernels.loop.windows import count_window_events


@njit(**JIT_OPTIONS)
def run_chunk(prog, st, ev, sc, out, close_to, final, lim, qs):  # type: ignore[no-untyped-def]
    """Run the chunk's events; then close windows below close_to (all when final).

    Returns 0, or 1 when a window's trends outgrow what the lanes hold exactly
    (lim, see :func:`count_window_events`; the caller replays with more lanes,
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
                    flush_all(prog, st, ev, sc)
                    flushed = True
                if trailing:
                    fold_trailing(prog, st, sc, sp, c)
                emit(prog, st, out, sp, c)
                if prog.sp_lazy[sp]:
                    lazy_close(prog, st, out, sp, c)
                st.closed[sp] = c
        # new partition instances of this time group that start from a template
        while cp < ev.cp_tg.shape[0] and ev.cp_tg[cp] <= tg:
            copy_instance(st, ev.cp_new[cp], ev.cp_par[cp], qs)
            cp += 1
        # 2. count events per window; flush bursts that this time group interrupts
        for e in range(i, j):
            if not count_window_events(prog, st, ev, e, lim):
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
                    burst_flush(prog, st, ev, sc, b, inst)
                elif st.bur[inst, off] >= 0 and st.bur[inst, off] != ev.pane[b, e]:
                    burst_flush(prog, st, ev, sc, b, inst)
        if (
            others and other_instances(prog, st, ev, sc, i, j, tg, lim, np.int64(0), qs) < 0
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
                if inst < 0 or prog.q_lazy[q]:  # (lazy ones: lazy_phase1)
                    continue
                b = prog.b_set[bi]
                if b >= 0 and st.mode[0] > 0 and st.mixed[inst, b] != tg:
                    continue  # joins the burst below
                n_ent = compute(prog, st, ev, sc, q, prog.b_s[bi], inst, e, n_ent, qs)
        if others:
            n_ent = other_instances(prog, st, ev, sc, i, j, tg, no_lim, n_ent, qs)
        if lazy:
            lazy_phase1(prog, st, ev, sc, i, j)
        # 4. phase 2: insert; extend bursts
        insert_all(prog, st, ev, sc, n_ent, tg)
        if sc.ln[0] > 0:
            lazy_insert_all(prog, st, ev, sc, tg)
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
                    burst_add(prog, st, ev, b, inst, e)
        i = j
    # the chunk's bursts end with it (their event indices are the chunk's)
    flush_all(prog, st, ev, sc)
    if qs.ndim == 1 and st.pool[1]:
        return 2
    if st.lmeta[1]:
        return 3
    for sp in range(st.closed.shape[0]):
        c = close_to[sp]
        if final:
            if trailing:
                fold_trailing(prog, st, sc, sp, np.int64(2**62))
            emit(prog, st, out, sp, np.int64(2**62))
            if prog.sp_lazy[sp]:
                lazy_close(prog, st, out, sp, np.int64(2**62))
        elif c > st.closed[sp]:
            if trailing:
                fold_trailing(prog, st, sc, sp, c)
            emit(prog, st, out, sp, c)
            if prog.sp_lazy[sp]:
                lazy_close(prog, st, out, sp, c)
            st.closed[sp] = c
    return 0
