"""Exact integers as residues modulo primes below 2**50 (a residue number system).

Trend counts grow like 2**n with the events of a window, so no fixed-width
integer holds them. Every register the engine adds and multiplies is a sum
of products of counts and attribute values: a ring computation, so it can be
done modulo primes p_1..p_L independently and rebuilt exactly by the Chinese
remainder theorem, as long as the true value v satisfies |v| < M/2 with
M = p_1 * ... * p_L (values rebuilt into (-M/2, M/2]).

The bound: a trend is a set of events of its partition and window, and a
type appears once per pattern, so an event's variable is fixed. A variable
that a trend binds at most once (not on a cycle of the template) takes one of
n + 1 choices among its type's n events; a Kleene variable any of 2**n
subsets. With m events in a (query, partition, window), r of them of types
that some query may bind repeatedly, and s the most once-bound variables of a
query, there are fewer than 2**(r + s * bitlen(m)) trends and partial
trends; occurrence counts add bitlen(m) bits, sums bitlen(m) and the
weights' bits; a group adds the bits of its number of partitions. The kernel
tracks need = r + (s + 1) * bitlen(m) per (partition, window) and reports
when it exceeds what the lanes hold (:func:`capacity`); :func:`lanes_for`
gives the primes.

:func:`mulmod` multiplies residues below 2**50 with a float estimate of the
quotient and an exact correction in wrapping int64 arithmetic (the true
remainder is small, so the wrapped result is exact); it runs unchanged as
Python (``NUMBA_DISABLE_JIT=1``), where the same expression is exact in
Python ints.
"""

from __future__ import annotations

import math

import numpy as np

from trendagg.jit import njit
from trendagg.kernels import JIT_OPTIONS

LANE_BITS = 49  # every prime is above 2**49: each lane holds 49 bits of the bound


def _is_prime(n: int) -> bool:
    if n < 2:
        return False
    for p in (2, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37):
        if n % p == 0:
            return n == p
    d, s = n - 1, 0
    while d % 2 == 0:
        d //= 2
        s += 1
    for a in (2, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37):  # deterministic below 3.3e24
        x = pow(a, d, n)
        if x in (1, n - 1):
            continue
        for _ in range(s - 1):
            x = x * x % n
            if x == n - 1:
                break
        else:
            return False
    return True


def primes(count: int) -> list[int]:
    """The ``count`` largest primes below 2**50, descending."""
    out: list[int] = []
    n = 2**50 - 1
    while len(out) < count:
        if _is_prime(n):
            out.append(n)
        n -= 2
    return out


def lanes_for(need: int, weight_bits: int, part_bits: int) -> int:
    """Primes for windows whose trends stay below 2**need (see the module docstring)
    with the weights' bits and a group's partitions' bits."""
    return max(1, math.ceil((need + weight_bits + part_bits + 2) / LANE_BITS))


def capacity(lanes: int, weight_bits: int, part_bits: int) -> int:
    """The largest need (see the module docstring) that ``lanes`` primes hold exactly."""
    return max(lanes * LANE_BITS - weight_bits - part_bits - 2, 0)


class Moduli:
    """The primes of one run, their float inverses, and reconstruction."""

    def __init__(self, lanes: int):
        self.lanes = lanes
        self.p = np.array(primes(lanes), dtype=np.int64)
        self.pinv = 1.0 / self.p.astype(np.float64)
        ps = [int(x) for x in self.p]
        self.modulus = math.prod(ps)
        # CRT basis: e_i = (M/p_i) * ((M/p_i)^-1 mod p_i)
        self._basis = [(self.modulus // q) * pow(self.modulus // q, -1, q) for q in ps]

    def residues(self, value: int) -> np.ndarray:
        return np.array([value % int(q) for q in self.p], dtype=np.int64)

    def value(self, residues: np.ndarray) -> int:
        """The integer in (-M/2, M/2] with these residues."""
        m = self.modulus
        v = sum(int(r) * e for r, e in zip(residues.tolist(), self._basis, strict=True)) % m
        return v - m if v > m // 2 else v

    def values(self, table: np.ndarray) -> list[int]:
        """Rebuild every row of a (rows, lanes) table of residues."""
        m = self.modulus
        half = m // 2
        if len(self.p) == 1:  # one prime below 2**50: the residue, in int64
            col = table[:, 0]
            return np.where(col > half, col - m, col).tolist()  # type: ignore[no-any-return]
        # a value within (-p0, p0) (most are) has one residue in every lane, or one
        # distance to the lane's prime: read it from lane 0, the rest by the CRT
        first = table[:, :1]
        same = (table == first).all(axis=1)
        below = ((self.p - table) == (self.p[0] - first)).all(axis=1)
        out: list[int] = np.where(same, first[:, 0], first[:, 0] - self.p[0]).tolist()
        basis = self._basis
        for i in np.flatnonzero(~(same | below)).tolist():
            v = sum(int(r) * e for r, e in zip(table[i].tolist(), basis, strict=True)) % m
            out[i] = v - m if v > half else v
        return out


@njit(**JIT_OPTIONS)
def mulmod(a: int, b: int, p: int, pinv: float) -> int:
    """a * b mod p for 0 <= a, b < p < 2**50.

    The float quotient is within 0.375 of a * b / p (three roundings of 2**-53
    on a value below 2**50), so q is off by at most one and r lies in
    [-p, 2p): one correction either way, which compiles to selects, not
    branches (a mispredicted loop branch cost more than the multiplication).
    """
    q = int(float(a) * float(b) * pinv)
    r = int(a) * int(b) - q * int(p)
    if r < 0:
        r += p
    elif r >= p:
        r -= p
    return r


@njit(**JIT_OPTIONS)
def residues_of(
    values: np.ndarray, scale: np.ndarray, p: np.ndarray, pinv: np.ndarray, out: np.ndarray
) -> None:
    """out[i, l] = values[i] * scale[l] mod p[l] for int64 values (any sign)."""
    for i in range(values.shape[0]):
        v = values[i]
        for lane in range(p.shape[0]):
            q = p[lane]
            # (attribute values are mostly small and unscaled: no division, no product)
            r = v if -q < v < q else v % q
            if r < 0:
                r += q
            out[i, lane] = r if scale[lane] == 1 else mulmod(r, scale[lane], q, pinv[lane])


@njit(**JIT_OPTIONS)
def mulmod_arrays(a: np.ndarray, b: np.ndarray, p: int, pinv: float, out: np.ndarray) -> None:
    """out[i] = a[i] * b[i] mod p for residues a, b."""
    for i in range(a.shape[0]):
        out[i] = mulmod(a[i], b[i], p, pinv)


__all__ = [
    "LANE_BITS",
    "Moduli",
    "capacity",
    "lanes_for",
    "mulmod",
    "mulmod_arrays",
    "primes",
    "residues_of",
]
