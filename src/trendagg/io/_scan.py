"""Compiled byte scans of CSV text columns (numba): what numpy does in several passes.

They take the bytes and the int32/int64 offsets of one Arrow string chunk
(see :mod:`trendagg.io.text`).
"""

from __future__ import annotations

import numpy as np

from trendagg.jit import njit


@njit(cache=True, nogil=True)
def plain_ints(data: np.ndarray, offsets: np.ndarray, out: np.ndarray, max_chars: int) -> int:
    """Parse a chunk whose every cell is empty or ``-?[0-9]+`` of at most ``max_chars``
    characters (sign included; few enough that every such integer fits int64).

    Writes each cell's value into ``out`` (0 for an empty cell) and returns 1, or 2
    when every cell is empty; returns 0 (``out`` then undefined) when some cell is
    anything else, for the general rules to decide.
    """
    any_value = False
    for i in range(offsets.shape[0] - 1):
        start = offsets[i]
        end = offsets[i + 1]
        if start == end:
            out[i] = 0
            continue
        if end - start > max_chars:
            return 0
        negative = data[start] == 45  # '-'
        j = start + 1 if negative else start
        if j == end:
            return 0  # a lone minus
        value = 0
        while j < end:
            digit = np.int64(data[j]) - 48
            if digit < 0 or digit > 9:
                return 0
            value = value * 10 + digit  # type: ignore[assignment]
            j += 1
        out[i] = -value if negative else value
        any_value = True
    return 1 if any_value else 2


__all__ = ["plain_ints"]
