"""Runs of equal values in a sorted column, with numpy: dense codes, the starts of time
groups, running counts within a group.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt

if TYPE_CHECKING:
    from trendagg.io.batch import Time


def dense_codes(values: np.ndarray) -> npt.NDArray[np.int64]:
    """Codes 0..m-1 for the m distinct values (equal values, equal codes)."""
    if values.dtype.kind in "iu" and len(values):
        lo, hi = int(values.min()), int(values.max())
        if hi - lo <= 4 * len(values) + 4096:  # small integers: no sort
            present = np.zeros(hi - lo + 1, dtype=np.int64)
            present[values - lo] = 1
            codes: npt.NDArray[np.int64] = (np.cumsum(present) - 1)[values - lo]
            return codes
    _, inv = np.unique(values, return_inverse=True)
    return inv.reshape(-1).astype(np.int64)


def running_counts(
    start: np.ndarray, stop: np.ndarray, marked: np.ndarray, size: int
) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]]:
    """The counts of runs ``[start, stop)`` (integers in ``[0, size]``) that cover each
    point covered by at least one, and of those runs ``marked``; a point per stretch of
    equal counts (which is all :func:`~trendagg.kernels.runtime.arrays.chunk_need` asks of them)."""
    if size <= 4 * len(start) + 4096:  # a small range: +1 and -1 at each bound, summed
        counts = np.cumsum(
            np.bincount(start, minlength=size + 1) - np.bincount(stop, minlength=size + 1)
        )
        reps = np.cumsum(
            np.bincount(start[marked], minlength=size + 1)
            - np.bincount(stop[marked], minlength=size + 1)
        )
        held = counts > 0
        return counts[held], reps[held]
    bounds = np.concatenate([start, stop])
    order = np.argsort(bounds, kind="stable")
    step = np.concatenate([np.ones(len(start), np.int64), np.full(len(stop), -1, np.int64)])
    counts = np.cumsum(step[order])
    mark = marked.astype(np.int64)
    reps = np.cumsum(np.concatenate([mark, -mark])[order])
    sorted_bounds = bounds[order]
    last = np.r_[sorted_bounds[1:] != sorted_bounds[:-1], True]  # a bound's last step
    held = last & (counts > 0)
    return counts[held], reps[held]


def group_starts(values: np.ndarray) -> npt.NDArray[np.intp]:
    """The positions where a run of equal values starts (a chunk's time groups)."""
    change = np.empty(len(values), dtype=bool)
    change[:1] = True
    np.not_equal(values[1:], values[:-1], out=change[1:])
    return np.flatnonzero(change)


def exact_group_starts(times: list[Time]) -> npt.NDArray[np.int64]:
    """:func:`group_starts` of exact times (EventBatch.exact_times)."""
    change = [i for i in range(1, len(times)) if times[i] != times[i - 1]]
    return np.array([0, *change] if times else [], dtype=np.int64)
