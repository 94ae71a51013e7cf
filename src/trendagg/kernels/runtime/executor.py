"""The compiled engine: chunks of columnar events in, result rows out.

:class:`CompiledExecutor` prepares each chunk with numpy (type codes, time
groups, window and pane ids, partition instances, binding filters, weight
residues), runs :func:`trendagg.kernels.loop.chunk.run_chunk`, and turns the
closed windows' residues back into exact rows. It keeps the events of the
open windows: when a window holds more events than the primes can count
exactly, a float attribute needs a finer scale, the negations' queues fill
their pool of entries (see :mod:`trendagg.kernels.loop.negation`), or an aggregated
attribute turns out to hold integers and decimals both (in one chunk, or one
kind and then the other), it rebuilds the state from them (nothing closed is
recomputed): with more primes, a finer scale, a pool four times as large, or
laid out again with hidden registers that
tell each output's kind (see :mod:`trendagg.kernels.lower.core`). A MIN or MAX
whose values are words or integers beyond 2**53 switches its attribute to
ranks (:mod:`trendagg.kernels.ranks`) the same way, once. An attribute that a
SUM or AVG reads and an event it binds holds a value that is not a number
stops the run with the Python engines' error (:func:`trendagg.plan.layout.not_a_number`).

Qualified partition attributes (``GROUP-BY T.district``: the district of the
travel legs only) make the other events wildcards for them (docs/semantics.md,
"Partitions and groups"): such an event takes part in every partition that
agrees with it on the attributes that apply to it, also in partitions made
after it, as long as its windows are open. The reference engine keeps those
events and replays them into each new partition. Here a template instance per
key of the unqualified attributes (``WILD`` at the qualified ones) processes
every wildcard event of that key, as a partition without the qualified
variable's events would; a new partition starts, at the time group of its first
event, as a copy of its template's row (the kernel copies it then), and from
there on every wildcard event of its key is processed in the template and in
each partition that agrees with it (:func:`~trendagg.kernels.runtime.instances.qualified_ids`). A template finds no
trend (every trend has an event of the qualified variable) and has no group.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from trendagg.errors import ExecutionError
from trendagg.io.batch import EventBatch, Time
from trendagg.io.results import ResultRow
from trendagg.kernels.loop import chunk, snapshots
from trendagg.kernels.lower.program import Lowered, lower
from trendagg.kernels.runtime import arrays, attributes, chunks, instances, rebuild, results
from trendagg.kernels.runtime.ranks import Ranks, Slots
from trendagg.limits import memory_limit
from trendagg.optimizer.plan import SharingPlan
from trendagg.plan.compile import QueryPlan, attributes_read

if TYPE_CHECKING:
    from trendagg.kernels._rns import Moduli
    from trendagg.kernels.executor import GState, State
    from trendagg.kernels.gloria_program import Gloria
    from trendagg.kernels.program import Program

#: An instance's key: (partitioning, values); a group's: (grouping, values)
Key = tuple[int, tuple[object, ...]]

CHUNK = 1 << 20  # events per kernel call: bounds the chunk's arrays
# (sharon, aseq: the queries they leave to the kernel, under hamlet and greta)
MODES = {"greta": 0, "hamlet": 1, "hamlet-static": 2, "sharon": 1, "aseq": 0, "gloria": 1}


class CompiledExecutor:
    """Supported queries of a workload on the compiled kernel (see :mod:`trendagg.kernels`)."""

    # Set by arrays.reset at every (re)build, for the modules of the runtime (the
    # methods of each role are functions of its module, taking the executor):
    mod: Moduli  # the lanes' primes
    prog: Program  # the lowering's program, scaled to the lanes
    lim: npt.NDArray[np.int64]  # the kernel's bound check: capacity, s + 1
    st: State
    gp: Gloria | None  # the snapshot kernel's program (None: no GLORIA or SHARON plan)
    gst: GState  # its state (set while gp is not None)
    # partition instances: key -> row, row -> key (None: a free row), free rows
    _inst: dict[Key, int]
    _inst_key: list[Key | None]
    _free: list[int]
    # qualified partitionings: (partitioning, level, key) -> the agreeing instances
    # of higher levels
    _below: dict[tuple[int, int, tuple[object, ...]], set[int]]
    # groups: key -> row, row -> key (None: a free row), instances per row, free rows
    _ginst: dict[Key, int]
    _gkey: list[Key | None]
    _gref: list[int]
    _gfree: list[int]
    # a new instance's rows of st.lzi, st.ixh, st.nq, st.bur and st.burf
    _lzi_row: npt.NDArray[np.int64]
    _ixh_row: npt.NDArray[np.int64]
    _nq_row: npt.NDArray[np.int64]
    _burst_template: npt.NDArray[np.int64]
    _extremes_template: npt.NDArray[np.float64]

    def __init__(self, plans: list[QueryPlan], sharing: SharingPlan, log: int = 0):
        """The queries ``plans`` (those ``sharing`` routes here), shared as it says;
        ``log``: keep the first ``log`` per-burst decisions in :attr:`decisions`."""
        self.plans = plans
        self._log_limit = log
        self.decisions: list[dict[str, object]] = []
        self.mode = MODES[sharing.strategy]
        self.sharing = sharing
        self.low: Lowered = lower(plans, sharing)
        self._retained: list[EventBatch] = []
        self._reads = attributes_read(plans)  # (the columns a rebuild needs of them)
        self._tg = 0
        self.lanes = 1
        self.rebuilds = 0
        self._need = 0  # the largest need of a window seen (_rns)
        self._pbits = 1  # bits of the partitions a group sums; never shrinks
        self._wscale = [0] * len(self.low.weights)
        self._wbits = [1] * len(self.low.weights)
        self._wfloat = [False] * len(self.low.weights)
        self._xint = [True] * len(self.low.extremes)
        self._kinds: dict[str, str] = {}
        self._ranks: dict[str, Ranks] = {}  # attributes whose extremes are ranks (see ranks)
        self._kept_ranks: set[str] = (
            set()
        )  # ranks the next replay starts from (see attributes.rank)
        self._slots: dict[str, Slots] | None = None  # where their registers live (lazily)
        self._binders: tuple[list[list[tuple[int, int, int]]], ...] | None = None
        self._slots_of: (
            tuple[Program, tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]]] | None
        ) = None
        self._first: tuple[EventBatch | None, tuple[bytes, int], int] | None = None
        self._bursts = 0
        self._shared = 0
        self._memory_limit = memory_limit()
        self._pool = 0  # queue entries (0: the first size, see arrays.POOL)
        self._lpool = 0  # lazy windows' queue entries (0: arrays.LAZY_POOL)
        self._ring = arrays.RING  # snapshots per ring and instance (the snapshot kernel)
        self._gstats = np.zeros(4, dtype=np.int64)  # its counters of replaced states
        arrays.reset(self, 1, np.full(len(self.low.specs), -(2**62), dtype=np.int64))

    # ------------------------------------------------------------------ feeding

    def feed(self, batch: EventBatch | None, until: Time | None) -> list[ResultRow]:
        """Process complete time groups (sorted by time; the Runner holds back the latest
        one, which may go on in the next chunk), then close the windows that end by
        ``until`` (None: none)."""
        if batch is not None and len(batch):
            attributes.check_numbers(self, batch.time_at(0))
            attributes.check_numbers(self, batch.time_at(-1))
        else:
            batch = None
        close = None
        if until is not None:
            attributes.check_numbers(self, until)
            close = np.array([s.closed_before(until) for s in self.low.specs], dtype=np.int64)
        return self._run(batch, close)

    def advance(self, t: Time) -> list[ResultRow]:
        """No event before t will come: close the windows that end by t."""
        return self.feed(None, t)

    def finish(self) -> list[ResultRow]:
        """Close every window (the Runner has fed every event)."""
        return self._run(None, None, final=True)

    def report(self, stats: dict[str, Any]) -> None:
        st = self.st
        kernel = stats.setdefault("kernel", {"bursts": 0, "shared_bursts": 0})
        kernel["bursts"] += int(st.stats[0]) + self._bursts
        kernel["shared_bursts"] += int(st.stats[1]) + self._shared
        kernel["lanes"] = self.lanes
        kernel["rebuilds"] = self.rebuilds
        if self._log_limit:
            kernel["decisions"] = self.decisions
        if self.gp is not None:  # (the replaced states' counts too, as for bursts)
            counts = self._gstats + self.gst.stats
            stats["snapshot_kernel"] = {
                "shared_propagations": int(counts[0]),
                "evaluations": int(counts[1]),
                "snapshots": int(counts[2]),
                "joined": int(counts[3]),
                "ring": self._ring,
            }

    # ------------------------------------------------------------------ running

    def _run(
        self, batch: EventBatch | None, close: np.ndarray | None, final: bool = False
    ) -> list[ResultRow]:
        rows: list[ResultRow] = []
        if batch is not None:
            lo = 0
            while lo < len(batch):
                hi = min(lo + CHUNK, len(batch))
                # never split a time group: a chunk ends where the group at hi starts, or
                # after the group at lo when that one is longer than a chunk
                if hi < len(batch):
                    hi = int(np.searchsorted(batch.times, batch.times[hi], side="left"))
                    if hi <= lo:
                        hi = int(np.searchsorted(batch.times, batch.times[lo], side="right"))
                part = batch.take(slice(lo, hi)) if (lo, hi) != (0, len(batch)) else batch
                rows += self._run_chunk(part, None, False)
                lo = hi
        if close is not None or final:
            rows += self._run_chunk(None, close, final)
        return rows

    def _run_chunk(
        self, batch: EventBatch | None, close: np.ndarray | None, final: bool
    ) -> list[ResultRow]:
        while True:
            closed_before = self.st.closed.copy()
            try:
                rows = self._attempt(batch, close, final)
            except rebuild.Rebuild as why:
                rebuild.rebuild(
                    self, closed_before, why.mixed, why.ranked, why.pool, why.lazy_pool, why.ring
                )
                continue
            if batch is not None:
                rebuild.retain(self, batch)
            instances.purge(self)
            return rows

    def _attempt(
        self,
        batch: EventBatch | None,
        close: np.ndarray | None,
        final: bool,
        replay: bool = False,
    ) -> list[ResultRow]:
        ev = chunks.events(self, batch, replay)
        if not replay and len(ev.types):
            # the first chunk's windows tell the lanes the stream needs at least:
            # better a rebuild now than one after running half the chunk (later
            # growth costs one chunk's replay); so do a lazy spec's at every chunk
            need = arrays.first_need(self, batch, ev) if self._tg == 0 else 0
            need = max(need, arrays.lazy_need(self, ev))
            if need > self.lim[0]:
                self._need = max(self._need, need)
                raise rebuild.Rebuild()
        n_specs = len(self.low.specs)
        close_to = close if close is not None else np.full(n_specs, -(2**62), dtype=np.int64)
        sc = arrays.scratch(self, ev)
        out = arrays.out(self, ev)
        arrays.refresh_groups(self)
        # a replay decides its bursts again: the log keeps the first decisions
        self.st.stats[3] = self._log_limit if replay else 0
        if self.gp is not None:  # the members of a GLORIA or SHARON plan (see loop.snapshots)
            self.gst.closed[:] = self.st.closed
            gsc = arrays.gscratch(self, ev)
            gstatus = snapshots.run_gloria(
                self.prog, self.st, ev, self.gp, self.gst, gsc, out, close_to, final
            )
            if gstatus == snapshots.RING_FULL:
                raise rebuild.Rebuild(ring=True)
        status = chunk.run_chunk(
            self.prog, self.st, ev, sc, out, close_to, final, self.lim, self.st.neg
        )
        self._need = max(self._need, int(self.st.stats[2]))
        if self.st.eflag[0]:
            rebuild.inexact(self, int(self.st.eflag[1]))
        if status == 2:
            raise rebuild.Rebuild(pool=True)
        if status == 3:
            raise rebuild.Rebuild(lazy_pool=True)
        if status:
            if replay:
                raise ExecutionError("internal: a replay overflowed the lanes chosen for it")
            raise rebuild.Rebuild()
        if not replay:
            rebuild.keep_decisions(self, batch)
        self._tg = int(ev.tg[-1]) + 1 if len(ev.tg) else self._tg
        self._first = None if self._tg else self._first
        return results.rows(self, out)
