"""Borrowed views of the kernel's arrays: the same memory without reference counting.

numba counts references to every array it passes around: each call of a
kernel helper with the program or the state (tuples of dozens of arrays)
costs an atomic increment and decrement per array, and profiling showed
those atomics (``NRT_incref``/``NRT_decref``) taking 70% of the run. The
kernel's tuples live, unchanged, for the whole of one :func:`run_chunk`
call, held by the caller; inside it, :func:`borrow` gives views whose
memory-info pointer is null, so numba's reference counting skips them.
Nothing inside the kernel keeps a view past the call.
"""

from __future__ import annotations

from typing import TypeVar

from numba import config, types
from numba.core import cgutils
from numba.extending import intrinsic

T = TypeVar("T")


@intrinsic
def _borrow(typingctx, tup):  # type: ignore[no-untyped-def]
    if not isinstance(tup, types.BaseTuple) or not all(
        isinstance(t, types.Array) for t in tup.types
    ):
        return None

    def codegen(context, builder, sig, args):  # type: ignore[no-untyped-def]
        val = args[0]
        for i, aty in enumerate(sig.args[0].types):
            ary = context.make_array(aty)(context, builder, builder.extract_value(val, i))
            ary.meminfo = cgutils.get_null_value(ary.meminfo.type)
            ary.parent = cgutils.get_null_value(ary.parent.type)
            val = builder.insert_value(val, ary._getvalue(), i)
        return val

    return tup(tup), codegen


def _identity(tup: T) -> T:
    return tup


# under NUMBA_DISABLE_JIT the kernel is plain Python, which has no such counts
borrow = _identity if config.DISABLE_JIT else _borrow
