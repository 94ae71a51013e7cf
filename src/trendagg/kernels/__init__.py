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
debugging.
"""

from __future__ import annotations

import os
import sys
import tempfile

JIT_OPTIONS = {"cache": True, "nogil": True, "error_model": "numpy"}
JIT_INLINE = {**JIT_OPTIONS, "forceinline": True}


def numba_cache_dir() -> str | None:
    """Where numba's cache goes when neither of its own places can be written, else None.

    numba caches a compiled kernel beside its source (``__pycache__``) or, where the
    package cannot be written (an installation owned by another user), under the home
    directory; with neither writable (no HOME, a read-only one) its import of a cached
    kernel fails. Then the cache goes to a folder of this user in the temporary
    directory (``NUMBA_CACHE_DIR``, which a user may also set)."""
    if os.environ.get("NUMBA_CACHE_DIR"):
        return None
    here = os.path.dirname(os.path.abspath(__file__))
    home = os.path.expanduser("~")
    if os.access(here, os.W_OK) or (os.path.isdir(home) and os.access(home, os.W_OK)):
        return None
    uid = os.getuid() if hasattr(os, "getuid") else "user"
    return os.path.join(tempfile.gettempdir(), f"trendagg-numba-cache-{uid}")


def _use_cache_dir() -> None:
    folder = numba_cache_dir()
    if folder is None:
        return
    os.environ["NUMBA_CACHE_DIR"] = folder
    if "numba" in sys.modules:  # numba read its settings when it was imported
        from numba.core import config

        config.reload_config()


_use_cache_dir()  # before the kernel modules import numba and compile (cache=True)

__all__ = ["JIT_INLINE", "JIT_OPTIONS", "numba_cache_dir"]
