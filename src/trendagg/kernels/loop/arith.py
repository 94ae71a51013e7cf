"""The arithmetic leaves of the loops, the only functions every loop module inlines:
residues added modulo a lane's prime, extremes compared, register blocks added
(``add_block``: into a state's block; ``read_block``: out of one), and ``SENT``, the
window number of an empty slot. (``mulmod`` is :mod:`trendagg.kernels._rns`'s.)
"""

from __future__ import annotations

import numpy as np

from trendagg.jit import njit
from trendagg.kernels import JIT_INLINE

SENT = -(2**62)  # an empty window slot


@njit(**JIT_INLINE)
def addmod(a: int, b: int, p: int) -> int:
    s = a + b
    return s - p if s >= p else s


@njit(**JIT_INLINE)
def better(v: float, cur: float, is_min: bool) -> bool:
    """True when v replaces cur in a minimum (or maximum) register; NaN is no value."""
    return np.isnan(cur) or (v < cur if is_min else v > cur)


@njit(**JIT_INLINE)
def nonzero(vec, base, L):  # type: ignore[no-untyped-def]
    for lane in range(L):  # noqa: SIM110 (numba compiles no generator)
        if vec[base + lane] != 0:
            return True
    return False


@njit(**JIT_INLINE)
def read_block(add, ext, base, ebase, vec, vext, A, M, nmin, P):  # type: ignore[no-untyped-def]
    """vec += add[base:] (A registers of L lanes, modulo P); vext takes the better of its
    M extremes and ext[ebase:]'s (the first nmin minima). (See add_block: the other way.)"""
    L = P.shape[0]
    for r in range(0, A * L, L):
        for lane in range(L):
            vec[r + lane] = addmod(vec[r + lane], add[base + r + lane], P[lane])
    for r in range(M):
        v = ext[ebase + r]
        if not np.isnan(v) and better(v, vext[r], r < nmin):
            vext[r] = v


@njit(**JIT_INLINE)
def add_block(add, ext, base, ebase, vec, vext, A, M, nmin, P):  # type: ignore[no-untyped-def]
    """add[base:] += vec (A registers of L lanes, modulo P); ext[ebase:] takes the better
    of its M extremes and vext's (the first nmin minima)."""
    L = P.shape[0]
    for r in range(0, A * L, L):  # (no r % L: an integer division per register)
        for lane in range(L):
            i = base + r + lane
            add[i] = addmod(add[i], vec[r + lane], P[lane])
    for r in range(M):
        v = vext[r]
        if not np.isnan(v) and better(v, ext[ebase + r], r < nmin):
            ext[ebase + r] = v


@njit(**JIT_INLINE)
def bitlen(x: int) -> int:
    n = 0
    while x > 0:
        x >>= 1
        n += 1
    return n
