"""Compiled hot loops (numba) behind the ``hamlet``, ``greta``, ``gloria`` and ``sharon``
strategies.

The per-event loops of GRETA and HAMLET run as numba kernels over arrays (and
GLORIA's snapshots and coefficients, which also run SHARON's plans: ``_gloria``):
integer-coded event types, time-group ordinals, window ids, partition
instance ids, vertex predicates evaluated vectorised before the loop. Counts
and sums are exact at any size through multi-modular (residue number system)
arithmetic: every register is kept modulo a few primes below 2**50 and
rebuilt with the Chinese remainder theorem when a window closes; the number
of primes follows a proven bound on the values (see :mod:`._rns`), and grows
(replaying the events of the open windows) when the data needs more.

Options in one place: :data:`JIT_OPTIONS` (``cache=True``, so a kernel is
compiled once per machine) and :data:`JIT_INLINE` for the helpers of the
per-event loops, which LLVM inlines (``forceinline``): a call passes the
program and state tuples, dozens of arrays of seven words each, and that
cost more than the helpers' work (profiled: 7x on GRETA, 50 queries);
``error_model="numpy"``, so no division checks for zero (every divisor in the
kernels is a prime or a positive count; measured 3% faster).
``NUMBA_DISABLE_JIT=1`` runs the very same code as Python, for tests and
debugging. The compiled modules take ``njit`` from :mod:`trendagg.jit`, whose cache is
keyed by every kernel source (numba's own notices only the defining file).
"""

from __future__ import annotations

JIT_OPTIONS = {"cache": True, "nogil": True, "error_model": "numpy"}
JIT_INLINE = {**JIT_OPTIONS, "forceinline": True}


__all__ = ["JIT_INLINE", "JIT_OPTIONS"]
