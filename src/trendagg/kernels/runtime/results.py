"""Rows out: the closed windows' residues and extremes turned back into exact result
rows, one per query, group and window.
"""

from __future__ import annotations

from fractions import Fraction
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from trendagg.io.results import ResultRow, making_rows
from trendagg.kernels.executor import Out
from trendagg.kernels.lower.core import source
from trendagg.plan.layout import RowMaker

if TYPE_CHECKING:
    from trendagg.kernels.runtime.executor import CompiledExecutor


def rows_of(ex: CompiledExecutor, kind: str, g: int) -> npt.NDArray[np.int64]:
    """The state rows of partitioning ``g`` (kind ``states``), or the result rows of
    grouping ``g`` (``results``), in use."""
    keys = ex._inst_key if kind == "states" else ex._gkey
    return np.array([i for i, k in enumerate(keys) if k is not None and k[0] == g], np.int64)


def rows(ex: CompiledExecutor, out: Out) -> list[ResultRow]:
    """The result rows of the windows the kernel wrote out, in the order of query,
    window and group (its repr), made a query and a register at a time (a column:
    a chunk may close many windows)."""
    n = int(out.n[0])
    if not n:
        return []
    width = ex.low.max_additive
    values = ex.mod.values(out.add[:n].reshape(n * width, ex.lanes))
    keys = out.key[:n]
    used, at = np.unique(keys[:, 1], return_inverse=True)
    texts = [repr(ex._gkey[gi][1]) for gi in used.tolist()]
    text_rank = {t: i for i, t in enumerate(sorted(set(texts)))}
    rank = np.array([text_rank[t] for t in texts], dtype=np.int64)[at.reshape(-1)]
    order = np.lexsort((rank, keys[:, 2], keys[:, 0]))  # (stable: as sorted() was)
    queries = keys[order, 0]
    cuts = np.flatnonzero(np.r_[True, queries[1:] != queries[:-1], True]).tolist()
    rows: list[ResultRow] = []
    with making_rows():
        for lo, hi in zip(cuts[:-1], cuts[1:], strict=True):
            rows += query_rows(ex, out, values, order[lo:hi])
    return rows


def query_rows(
    ex: CompiledExecutor, out: Out, values: list[int], idx: np.ndarray
) -> list[ResultRow]:
    """The rows of the windows the kernel wrote out at ``idx`` (one query's, in their
    order), from the exact ``values`` of every additive register written out."""
    low = ex.low
    width = low.max_additive
    keys = out.key[idx]
    q = int(keys[0, 0])
    plan = ex.plans[q]
    bases = (idx * width).tolist()
    cols: list[list[Any]] = [[values[b + r] for b in bases] for r in range(plan.layout.n_additive)]
    for reg, w, decimals in low.readouts[q].sums:
        scale = ex._wscale[w]
        if decimals >= 0:  # a decimal among the values: a Fraction
            cols[reg] = [
                Fraction(v, 2**scale) if values[b + decimals] > 0 else v >> scale
                for v, b in zip(cols[reg], bases, strict=True)
            ]
        elif ex._wfloat[w]:
            cols[reg] = [Fraction(v, 2**scale) for v in cols[reg]]
        elif scale:
            cols[reg] = [v >> scale for v in cols[reg]]
    for reg, a, integers in low.readouts[q].extremes:
        cols.append(extreme_column(ex, out.ext[idx], reg, a, integers))
    gkey = ex._gkey
    groups = [gkey[gi][1] for gi in keys[:, 1].tolist()]
    return RowMaker(plan).rows(keys[:, 2].tolist(), groups, cols)


def extreme_column(
    ex: CompiledExecutor, ext: np.ndarray, reg: int, a: int, integers: int
) -> list[object]:
    """The values of minimum or maximum register ``reg`` (extreme column ``a``; its
    hidden integers' extreme at ``integers``, or -1) of rows ``ext``: None for none,
    a rank read back as its value, an integer where the attribute's values are."""
    col = ext[:, reg].tolist()
    ints = ext[:, integers].tolist() if integers >= 0 else None
    attr = source(ex.low.extremes[a])[0]
    out: list[object] = []
    if attr in ex._ranks:  # a rank: the value, with its kind (see ranks)
        ranks = ex._ranks[attr]
        for i, x in enumerate(col):
            if x != x:  # NaN: no value
                out.append(None)
                continue
            v = ranks.value(int(x))
            if ints is not None and isinstance(v, int | float):  # (else a word: a str)
                v = int(v) if x == ints[i] else float(v)
            out.append(v)
        return out
    if ints is not None:  # equal to the integers' extreme: an integer (1 over 1.0)
        return [None if x != x else int(x) if x == y else x for x, y in zip(col, ints, strict=True)]
    if ex._xint[a]:
        return [None if x != x else int(x) for x in col]
    return [None if x != x else x for x in col]
