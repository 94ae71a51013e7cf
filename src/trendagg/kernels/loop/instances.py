"""Partition instances in the loop: the events processed in the instances other than
their own (qualified attributes: ``other_instances``), a new instance copied from its
template (``copy_instance``; see :mod:`trendagg.kernels.runtime.instances`), and the
rows of released instances (``release_rows``, which Python calls).
"""

from __future__ import annotations

import numpy as np

from trendagg.jit import njit
from trendagg.kernels import JIT_INNER, JIT_OPTIONS
from trendagg.kernels._borrow import borrow
from trendagg.kernels.loop.arith import SENT
from trendagg.kernels.loop.bursts import burst_flush
from trendagg.kernels.loop.core import compute
from trendagg.kernels.loop.indexes import ix_reset
from trendagg.kernels.loop.negation import copy_negations, nq_reset
from trendagg.kernels.loop.windows import count_slots


@njit(**JIT_INNER)
def other_instances(prog, st, ev, sc, i, j, tg, lim, n_ent, qs):  # type: ignore[no-untyped-def]
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
                    if not count_slots(prog, st, ev, e, g, ev.xinst[x], role, lim):
                        return -1
            for b in range(prog.set_boff.shape[0]):
                g = prog.set_part[b]
                if prog.set_role[b, ty] != 2 or not prog.part_x[g] or ev.pid[g, e] < 0:
                    continue
                for x in range(ev.xptr[g, e], ev.xptr[g, e + 1]):
                    inst = ev.xinst[x]
                    st.mixed[inst, b] = tg
                    burst_flush(prog, st, ev, sc, b, inst)
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
                n_ent = compute(prog, st, ev, sc, q, prog.b_s[bi], ev.xinst[x], e, n_ent, qs)
    return 0 if lim[0] >= 0 else n_ent


@njit(**JIT_INNER)
def copy_instance(st, new, parent, qs):  # type: ignore[no-untyped-def]
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
        copy_negations(st, new, parent)


@njit(**JIT_OPTIONS)
def release_rows(prog, st, rows):  # type: ignore[no-untyped-def]
    """Return the queue entries and index nodes of instance rows ``rows`` (freed or
    reused) to their pools."""
    for inst in rows:
        for nt in range(prog.nt_q.shape[0]):
            for slot in range(prog.nt_NS[nt]):
                nq_reset(st, inst, 4 * (prog.nt_koff[nt] + slot), np.int64(SENT))
        for ix in range(prog.ix_q.shape[0]):
            for slot in range(prog.ix_NS[ix]):
                ix_reset(prog, st, ix, inst, slot, SENT)
