"""Counting each window's events, the bound that says whether the lanes hold a
window's values exactly (``count_window_events``; the executor replays with more
lanes when not, see :mod:`trendagg.kernels.runtime.ranks`).
"""

from __future__ import annotations

import numpy as np

from trendagg.jit import njit
from trendagg.kernels import JIT_INLINE
from trendagg.kernels.loop.arith import bitlen
from trendagg.kernels.loop.lazy import lz_cols, lz_entry


@njit(**JIT_INLINE)
def count_window_events(prog, st, ev, e, lim):  # type: ignore[no-untyped-def]
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
        if not count_in(prog, st, ev, e, g, inst, role, lim):
            return False
    return True


@njit(**JIT_INLINE)
def count_in(prog, st, ev, e, g, inst, role, lim):  # type: ignore[no-untyped-def]
    for j in range(prog.part_sp_ptr[g], prog.part_sp_ptr[g + 1]):
        sp = prog.part_sp[j]
        if prog.sp_lazy[sp]:
            if not count_lazy(prog, st, ev, e, sp, inst, role, lim):
                return False
        elif not count_spec(prog, st, ev, e, sp, inst, role, lim):
            return False
    return True


@njit(**JIT_INLINE)
def count_slots(prog, st, ev, e, g, inst, role, lim):  # type: ignore[no-untyped-def]
    """count_in for a partitioning without lazy specs (a qualified one: see other_instances)."""
    for j in range(prog.part_sp_ptr[g], prog.part_sp_ptr[g + 1]):
        if not count_spec(prog, st, ev, e, prog.part_sp[j], inst, role, lim):
            return False
    return True


@njit(**JIT_INLINE)
def count_spec(prog, st, ev, e, sp, inst, role, lim):  # type: ignore[no-untyped-def]
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
        need = st.mrep[inst, idx] + s1 * bitlen(st.mcnt[inst, idx])
        if need > st.stats[2]:
            st.stats[2] = need
        if need > cap:
            return False
    return True


@njit(**JIT_INLINE)
def count_lazy(prog, st, ev, e, sp, inst, role, lim):  # type: ignore[no-untyped-def]
    """Count event e in the open windows of lazy spec sp: one entry per instance and
    sixteenth of a window, counted until the last slide of its sixteenth leaves (a
    bound, never less; see lazy_close)."""
    _, _, _, counts, _ = lz_cols(prog)
    g16 = max(prog.sp_nwin[sp] // 16, 1)
    khi = -((-ev.khi[sp, e]) // g16) * g16
    x = lz_entry(prog, st, inst, np.int64(2), sp, sp, khi)
    if x < 0:
        return True  # (the pool is full: run_chunk returns 3)
    st.lval[x, 0] += 1
    st.lzi[inst, counts + 2 * sp] += 1
    if role == 2:
        st.lval[x, 1] += 1
        st.lzi[inst, counts + 2 * sp + 1] += 1
    need = st.lzi[inst, counts + 2 * sp + 1] + lim[1] * bitlen(st.lzi[inst, counts + 2 * sp])
    if need > st.stats[2]:
        st.stats[2] = need
    return need <= lim[0]
