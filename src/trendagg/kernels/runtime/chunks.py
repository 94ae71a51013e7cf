"""The events of a chunk as the loop's :class:`~trendagg.kernels.executor.Events`:
type codes, time groups, window and pane ids, partition instances, binding filters,
weight residues and values, computed with numpy.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt

from trendagg.io.batch import EventBatch
from trendagg.kernels.edges import value_columns
from trendagg.kernels.executor import Events
from trendagg.kernels.lower.core import TIME_GROUP
from trendagg.kernels.runtime import attributes, instances, runs
from trendagg.kernels.times import pane_ids, ticks, window_ids
from trendagg.plan.masks import filter_mask

if TYPE_CHECKING:
    from trendagg.kernels.runtime.executor import CompiledExecutor


def events(ex: CompiledExecutor, batch: EventBatch | None, replay: bool) -> Events:
    low = ex.low
    L = ex.lanes
    n_specs = len(low.specs)
    n_sets = max(len(low.set_types), 1)
    if batch is None or not len(batch):
        z = np.zeros(0, dtype=np.int64)
        return Events(
            types=z,
            tg=z,
            klo=np.zeros((n_specs, 0), dtype=np.int64),
            khi=np.zeros((n_specs, 0), dtype=np.int64),
            pane=np.zeros((n_sets, 0), dtype=np.int64),
            pid=np.zeros((len(low.partitionings), 0), dtype=np.int64),
            xptr=np.zeros((len(low.partitionings), 1), dtype=np.int64),
            xinst=z,
            cp_tg=z,
            cp_new=z,
            cp_par=z,
            filt=np.zeros((max(len(low.filters), 1), 0), dtype=np.bool_),
            wres=np.zeros((max(len(low.weights), 1), 0, L), dtype=np.int64),
            aval=np.zeros((max(len(low.extremes), 1), 0), dtype=np.float64),
            bnext=np.zeros((n_sets, 0), dtype=np.int64),
            xv=np.zeros((max(len(low.edge_columns), 1), 0), dtype=np.float64),
            xk=np.zeros((max(len(low.edge_columns), 1), 0), dtype=np.int64),
            wrank=low.words.ranks,
            linv=np.zeros((1, L), dtype=np.int64),
        )
    n = len(batch)
    lut = np.array(
        [low.types.index(t) if t in low.types else len(low.types) for t in batch.type_names]
        + [len(low.types)],
        dtype=np.int64,
    )
    types = lut[batch.types]
    times = batch.times
    # the time groups (equal times), and what depends on the time alone (window and
    # pane ids) found once per group, then repeated for its events
    exact = batch.exact_times  # (rare: times no array holds exactly, EventBatch)
    starts = runs.group_starts(times) if exact is None else runs.exact_group_starts(exact)
    sizes = np.diff(np.append(starts, n))
    groups = len(starts)
    tg = np.repeat(np.arange(ex._tg, ex._tg + groups, dtype=np.int64), sizes)
    klo = np.empty((n_specs, groups), dtype=np.int64)
    khi = np.empty((n_specs, groups), dtype=np.int64)
    firsts = None if exact is None else [exact[i] for i in starts.tolist()]
    split = ticks(times[starts], batch.per_second, firsts)  # once for every spec and pane
    for i, spec in enumerate(low.specs):
        klo[i], khi[i] = window_ids(split, spec)
    klo, khi = np.repeat(klo, sizes, axis=1), np.repeat(khi, sizes, axis=1)
    pane = np.zeros((n_sets, groups if low.panes else n), dtype=np.int64)
    for b, p in enumerate(low.panes):
        pane[b] = pane_ids(split, p)
    if low.panes:
        pane = np.repeat(pane, sizes, axis=1)
    pid = np.full((len(low.partitionings), n), -1, dtype=np.int64)
    # (read by the kernel only for a qualified partitioning: program.part_x)
    qualified = any(part.qualified for part in low.partitionings)
    xptr = np.zeros((len(low.partitionings), n + 1 if qualified else 1), dtype=np.int64)
    extra: list[np.ndarray] = []
    copies: list[tuple[int, int, int, int]] = []
    for g, part in enumerate(low.partitionings):
        if not part.qualified:
            instances.partition_ids(ex, batch, types, g, part.attrs, pid[g])
            continue
        pid[g], counts, flat = instances.qualified_ids(ex, batch, types, tg, g, copies)
        base = sum(len(x) for x in extra)
        xptr[g, 0] = base
        np.cumsum(counts, out=xptr[g, 1:])
        xptr[g, 1:] += base
        extra.append(flat)
    copies.sort()
    cp = np.array(copies, dtype=np.int64).reshape(-1, 4)
    # (every row is written: no fill first, but for the one row of no filters)
    filt = np.empty((len(low.filters), n), np.bool_) if low.filters else np.ones((1, n), np.bool_)
    for f, rule in enumerate(low.filters):
        filter_mask(batch, rule, filt[f])
    bound = attributes.Bound(types, filt, pid)
    wres = np.zeros((max(len(low.weights), 1), n, L), dtype=np.int64)
    for w, name in enumerate(low.weights):
        wres[w] = attributes.weights(ex, batch, w, name, bound)
    aval = np.zeros((max(len(low.extremes), 1), n), dtype=np.float64)
    for a, name in enumerate(low.extremes):
        if name == TIME_GROUP:  # a negative query's latest start (see program)
            aval[a] = tg
        else:
            aval[a] = attributes.extremes(ex, batch, a, name, bound)
    xv, xk = value_columns(batch, low.edge_columns, low.words)
    return Events(
        types=types,
        tg=tg,
        klo=klo,
        khi=khi,
        pane=pane,
        pid=pid,
        xptr=xptr,
        xinst=np.concatenate(extra) if extra else np.zeros(0, dtype=np.int64),
        cp_tg=cp[:, 0].copy(),
        cp_new=cp[:, 2].copy(),
        cp_par=cp[:, 3].copy(),
        filt=filt,
        wres=wres,
        aval=aval,
        bnext=np.full((n_sets, n), -1, dtype=np.int64),
        xv=xv,
        xk=xk,
        wrank=low.words.ranks,  # (after value_columns: the chunk's words are in it)
        linv=inverses(ex, tg),
    )


def inverses(ex: CompiledExecutor, tg: np.ndarray) -> npt.NDArray[np.int64]:
    """The inverses of 1 .. (the most events of a time group) + 1 modulo each lane's
    prime, for the lazy windows' Kleene diagonals (row m: 1 / m; row 0 unused)."""
    L = ex.lanes
    if not ex.prog.c_lloop.any() or not len(tg):
        return np.zeros((1, L), dtype=np.int64)
    most = int(np.bincount(tg - tg[0]).max()) + 2
    primes = [int(p) for p in ex.mod.p]
    return np.array(
        [[0] * L] + [[pow(m, p - 2, p) for p in primes] for m in range(1, most + 1)],
        dtype=np.int64,
    )
