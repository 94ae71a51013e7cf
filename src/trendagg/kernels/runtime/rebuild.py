"""Rebuild and replay: when the state must change shape (more lanes, a finer scale,
hidden registers, ranks, a larger pool or ring), the open windows' retained events
are replayed into a new state; nothing closed is recomputed.
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING

import numpy as np

from trendagg.errors import InputError
from trendagg.io.batch import EventBatch
from trendagg.io.values import shown
from trendagg.kernels._rns import lanes_for
from trendagg.kernels.lower.program import lower
from trendagg.kernels.runtime import arrays
from trendagg.kernels.runtime.ranks import Ranks

if TYPE_CHECKING:
    from trendagg.kernels.runtime.executor import CompiledExecutor


class Rebuild(Exception):
    """The state needs more lanes, a finer weight scale or, for the attribute ``mixed``
    (found to hold integers and decimals both), hidden registers, or for the attribute
    ``ranked`` (MIN/MAX over words or integers beyond 2**53), ranks, or (``pool``) a
    larger pool for the negations' queues, or (``lazy_pool``) for the lazy windows'
    queue: replay the open windows."""

    def __init__(
        self,
        mixed: str | None = None,
        ranked: str | None = None,
        pool: bool = False,
        lazy_pool: bool = False,
        ring: bool = False,
    ):
        super().__init__(mixed or ranked or ("pool" if pool or lazy_pool or ring else None))
        self.mixed = mixed
        self.ranked = ranked
        self.pool = pool
        self.lazy_pool = lazy_pool
        self.ring = ring


def rebuild(
    ex: CompiledExecutor,
    closed: np.ndarray,
    mixed: str | None = None,
    ranked: str | None = None,
    pool: bool = False,
    lazy_pool: bool = False,
    ring: bool = False,
) -> None:
    """More lanes, a finer weight scale, hidden registers for the attribute ``mixed``
    (of both kinds) or ranks for the extremes of ``ranked``: replay the events of the
    open windows. Windows already emitted were right: until now the attribute had one
    kind, and its extremes were exact float64."""
    ex.rebuilds += 1
    ex._bursts += int(ex.st.stats[0])
    ex._shared += int(ex.st.stats[1])
    if ex.gp is not None:
        ex._gstats += ex.gst.stats
    if mixed is not None:
        relower(ex, mixed)
    if ranked is not None:
        ex._ranks[ranked] = Ranks()
    if pool:
        st = ex.st
        held = sum(
            a.nbytes
            for a in (st.pnext, st.ptg, st.padd, st.pext, st.pkey, st.pknd, st.town, st.ttot)
        )
        arrays.check_memory(ex, held, 4 * held)
        ex._pool = 4 * len(st.pnext)
    if lazy_pool:
        st = ex.st
        held = sum(a.nbytes for a in (st.lnext, st.lkhi, st.linst, st.lkind, st.lidx, st.lval))
        arrays.check_memory(ex, held, 4 * held)
        ex._lpool = 4 * len(st.lnext)
    if ring:
        ex._ring *= 2
    target = ex._need + max(ex._need // 8, 4)
    lanes = max(ex.lanes, lanes_for(target, max(ex._wbits, default=1), ex._pbits))
    while True:
        arrays.reset(ex, lanes, closed)
        try:
            for old in ex._retained:
                ex._attempt(old, None, False, replay=True)
            return
        except Rebuild as why:
            if why.ring:
                ex._ring *= 2
            elif why.lazy_pool:
                ex._lpool = 4 * len(ex.st.lnext)
            elif why.pool:
                ex._pool = 4 * len(ex.st.pnext)  # the replay alone fills the pool
            elif not ex._kept_ranks:  # (else: ranks grew, see attributes.rank: replay with them)
                raise


def relower(ex: CompiledExecutor, attr: str) -> None:
    """Lay the program out again with hidden registers for ``attr`` (see
    :mod:`trendagg.kernels.lower.core`); the state of each weight and extreme column
    (scale, bits, kinds seen) follows it by name to its new index."""
    old = ex.low
    state = zip(ex._wscale, ex._wbits, ex._wfloat, strict=True)
    weights = dict(zip(old.weights, state, strict=True))
    xint = dict(zip(old.extremes, ex._xint, strict=True))
    ex.low = lower(ex.plans, ex.sharing, old.mixed | {attr})
    ex._slots = ex._binders = None
    carried = [weights.get(name, (0, 1, False)) for name in ex.low.weights]
    ex._wscale = [scale for scale, _, _ in carried]
    ex._wbits = [bits for _, bits, _ in carried]
    ex._wfloat = [floats for _, _, floats in carried]
    ex._xint = [xint.get(name, True) for name in ex.low.extremes]


def retain(ex: CompiledExecutor, batch: EventBatch) -> None:
    """Keep the events that an open window may still need (for a rebuild)."""
    starts = [s.start(int(c)) for s, c in zip(ex.low.specs, ex.st.closed.tolist(), strict=True)]
    if not starts:
        return
    oldest = min(starts)
    if not ex._reads.issuperset(batch.columns):  # (only what the queries read)
        batch = dataclasses.replace(
            batch, columns={n: c for n, c in batch.columns.items() if n in ex._reads}
        )
    kept = []
    for b in [*ex._retained, batch]:
        if len(b) and b.time_at(-1) >= oldest:
            i = int(np.count_nonzero(b.ticks_before(oldest)))  # (sorted by time)
            # a copy (not a view): a retained tail does not pin its whole chunk
            kept.append(b if i == 0 else b.take(np.arange(i, len(b))))
    ex._retained = kept


def inexact(ex: CompiledExecutor, pr: int) -> None:
    """Stop: NEXT condition ``pr`` computed an integer beyond 2**53 (see edges)."""
    raise InputError(
        f"the NEXT condition '{shown(ex.low.programs[pr].text)}' computes an integer beyond "
        f"2**53, which the compiled engine does not hold exactly; run this workload "
        f"with --engine reference (run_strategy(..., compiled=False)), which computes "
        f"with Python integers"
    )


def keep_decisions(ex: CompiledExecutor, batch: EventBatch | None) -> None:
    """The kernel's logged burst decisions of this chunk, as ``explain`` prints them."""
    logged = int(ex.st.stats[3])
    room = ex._log_limit - len(ex.decisions)
    prog, names = ex.low.program, [p.name for p in ex.plans]
    for b, inst, first, n, shared_cost, replay_cost, shared in ex.st.dlog[
        : min(logged, room)
    ].tolist():
        entry = ex._inst_key[inst]
        assert entry is not None and batch is not None
        members = prog.set_q[prog.set_q_ptr[b] : prog.set_q_ptr[b + 1]].tolist()
        ex.decisions.append(
            {
                "type": ex.low.set_types[b],
                "partition": entry[1],
                "time": batch.time_at(first),
                "events": n,
                "shared_cost": shared_cost,
                "replay_cost": replay_cost,
                "members": [names[q] for q in members],
                "shared": bool(shared),
            }
        )
