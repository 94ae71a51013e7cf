"""Compiled hot loops (numba) behind the ``hamlet``, ``greta``, ``gloria`` and ``sharon``
strategies, in three sublayers: :mod:`.lower` (plans to tables, pure Python),
:mod:`.loop` (the loops, numba only, a module per construct) and :mod:`.runtime` (the
executor).

The per-event loops of GRETA and HAMLET run as numba kernels over arrays (and
GLORIA's snapshots and coefficients, which also run SHARON's plans: ``loop.snapshots``):
integer-coded event types, time-group ordinals, window ids, partition
instance ids, vertex predicates evaluated vectorised before the loop. Counts
and sums are exact at any size through multi-modular (residue number system)
arithmetic: every register is kept modulo a few primes below 2**50 and
rebuilt with the Chinese remainder theorem when a window closes; the number
of primes follows a proven bound on the values (see :mod:`._rns`), and grows
(replaying the events of the open windows) when the data needs more.

Options in one place: :data:`JIT_OPTIONS` for the roots, the functions Python calls
(``cache=True``, so a kernel is compiled once per machine); :data:`JIT_INNER` for
the functions only the kernels call, and :data:`JIT_INLINE` for the helpers of the
per-event loops, which LLVM inlines (``forceinline``): a call passes the
program and state tuples, dozens of arrays of seven words each, and that
cost more than the helpers' work (profiled: 7x on GRETA, 50 queries).
The inner ones are compiled without the wrappers that let Python call them
(``no_cpython_wrapper``, ``no_cfunc_wrapper``) and are not cached on their own (a
root's cache holds the code of everything it calls): numba compiles every function
that a compiled one calls as a library of its own, wrapper included, and the wrapper
of a function that takes the program and the state unboxes every array of them, so
that each helper, however small, cost 2-5 s of LLVM (profiled 2026-12-02, the plain
``run_chunk`` from an empty cache: 217 s, 193 s of them LLVM's and 25 s of those for
``run_chunk``'s own library; 97 s without the wrappers). What remains is numba's
library per function: each is optimised with all it calls linked in, again in every
caller (see ``docs/engine.md``, First-run compile).
``error_model="numpy"``, so no division checks for zero (every divisor in the
kernels is a prime or a positive count; measured 3% faster).
``NUMBA_DISABLE_JIT=1`` runs the very same code as Python, for tests and
debugging. The compiled modules take ``njit`` from :mod:`trendagg.jit`, whose cache is
keyed by every kernel source (numba's own notices only the defining file).
"""

from __future__ import annotations

JIT_OPTIONS = {"cache": True, "nogil": True, "error_model": "numpy"}
JIT_INNER = {
    "nogil": True,
    "error_model": "numpy",
    "no_cpython_wrapper": True,
    "no_cfunc_wrapper": True,
}
JIT_INLINE = {**JIT_INNER, "forceinline": True}


__all__ = ["JIT_INLINE", "JIT_INNER", "JIT_OPTIONS"]
