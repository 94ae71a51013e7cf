"""The compiled engine: chunks of columnar events in, result rows out.

:class:`CompiledExecutor` prepares each chunk with numpy (type codes, time
groups, window and pane ids, partition instances, binding filters, weight
residues), runs :func:`trendagg.kernels._engine.run_chunk`, and turns the
closed windows' residues back into exact rows. It keeps the events of the
open windows: when a window holds more events than the primes can count
exactly, a float attribute needs a finer scale, the negations' queues fill
their pool of entries (see :mod:`trendagg.kernels._engine`), or an aggregated
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
each partition that agrees with it (``_qualified_ids``). A template finds no
trend (every trend has an event of the qualified variable) and has no group.
"""

from __future__ import annotations

import dataclasses
import math
from collections import namedtuple
from fractions import Fraction
from itertools import repeat
from typing import Any

import numpy as np

from trendagg.errors import ExecutionError, InputError
from trendagg.io.batch import Column, EventBatch
from trendagg.io.results import ResultRow, making_rows
from trendagg.io.values import shown, time_text
from trendagg.kernels import _engine, _gloria
from trendagg.kernels._rns import Moduli, capacity, lanes_for, mulmod_arrays, residues_of
from trendagg.kernels.edges import value_columns
from trendagg.kernels.lower.bursts import burst_width
from trendagg.kernels.lower.core import TIME_GROUP, source
from trendagg.kernels.lower.program import Lowered, lower, scaled
from trendagg.kernels.lower.snapshots import scaled_gloria
from trendagg.kernels.ranks import Ranks, Slots, extreme_slots, open_ranks, renumber
from trendagg.kernels.times import pane_ids, ticks, window_ids
from trendagg.limits import WINDOW_NUMBER_LIMIT, gigabytes, memory_limit
from trendagg.optimizer.plan import SharingPlan
from trendagg.plan.compile import QueryPlan, attributes_read
from trendagg.plan.layout import RowMaker, not_a_number
from trendagg.plan.masks import filter_mask
from trendagg.plan.windows import as_number

SENT = _engine.SENT
CHUNK = 1 << 20  # events per kernel call: bounds the chunk's arrays
#: Queue entries (and index nodes) at first, in a workload with queues (a NOT or a NEXT
#: condition), as long as they take at most POOL_BYTES (at least 1,024 entries); grown
#: 4x, with a replay of the open windows, when full. (1,024 at first made issue #15's
#: varied workload with NOT replay its windows six times in 500,000 events.)
POOL = 1 << 16
POOL_BYTES = 16 << 20
#: Entries of the lazy windows' queue at first (per instance and slide: a class's starts,
#: an END's corrections, the events; see _engine): as many as POOL_BYTES holds, at least
#: LAZY_POOL; grown 4x with a replay when full
LAZY_POOL = 1 << 14
# (sharon, aseq: the queries they leave to the kernel, under hamlet and greta)
MODES = {"greta": 0, "hamlet": 1, "hamlet-static": 2, "sharon": 1, "aseq": 0, "gloria": 1}
_EXACT_FLOAT_INT = 2**53

State = namedtuple(
    "State",
    "P PINV tot ext keys mkeys mcnt mrep bur burf mixed inst_ginst res rext rkeys gr_ptr gr_ginst "
    "closed mode stats dlog neg blk nq nqa nqe nstart pnext ptg padd pext pkey pknd pool eflag "
    "ixh ixa ixe tkey tleft tright tprio town towne ttot ttote tpool tstack itmpl "
    "lz lzi lres lnext lkhi linst lkind lidx lval lmeta lq",
)
Events = namedtuple(
    "Events",
    "types tg klo khi pane pid xptr xinst cp_tg cp_new cp_par filt wres aval bnext xv xk wrank "
    "linv",
)
#: A template instance's value at a partition attribute that does not apply to the events
#: of its level (qualified attributes); no attribute value is a tuple
WILD = ("*",)
Scratch = namedtuple(
    "Scratch", "vec vext vec2 vext2 ent eadd eext sk sv lent lrow lsv ln ldel lst lmark ltodo"
)
Out = namedtuple("Out", "n key add ext")
#: The snapshot kernel's state (see _gloria): per instance its blocks of values (tot,
#: ext, keys), snapshots (sa, se, sk; sx: a slot's last window per query), rings' head
#: and next number (meta), coefficient entries (ca, ce; ct: the snapshot each holds);
#: its own closed windows, counters (shared propagations, evaluations, snapshots), and
#: rs: slots per ring, lanes
GState = namedtuple("GState", "tot ext keys sa se sk sx meta ca ce ct mg la le lt closed stats rs")
GScratch = namedtuple(
    "GScratch", "vec vx n cmark ctouch cadd cext rk radd rext vadd vxt crow crowa crowe"
)
RING = 8  # snapshots a ring holds per instance at first; doubled (with a replay) when full


class _Rebuild(Exception):
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


Bound = namedtuple("Bound", "types filt pid")  # what tells the events a variable binds


_KINDS = {int: 1, float: 2, str: 3}  # value kinds; any other type: 0


def _value_kinds(col: Column, rows: np.ndarray) -> tuple[list[object], np.ndarray]:
    """The Python values of a text or mixed column at ``rows`` and the kind of each
    (1 integer, 2 decimal, 3 word, 0 anything else)."""
    if col.kind == "text":
        assert col.dictionary is not None
        words = col.dictionary
        return [words[c] for c in col.values[rows].tolist()], np.full(len(rows), 3, np.int8)
    values = [col.values[i] for i in rows.tolist()]
    kinds = np.fromiter(map(_KINDS.get, map(type, values), repeat(0)), np.int8, len(values))
    return values, kinds


def _no_order(name: str, value: object) -> ExecutionError:
    return ExecutionError(
        f"MIN/MAX over attribute '{name}' needs numbers or words, but it holds {shown(repr(value))}; "
        f"read the events with the CLI or read_events(numeric=...), which reject such rows"
    )


def _dense_codes(values: np.ndarray) -> np.ndarray:
    """Codes 0..m-1 for the m distinct values (equal values, equal codes)."""
    if values.dtype.kind in "iu" and len(values):
        lo, hi = int(values.min()), int(values.max())
        if hi - lo <= 4 * len(values) + 4096:  # small integers: no sort
            present = np.zeros(hi - lo + 1, dtype=np.int64)
            present[values - lo] = 1
            return (np.cumsum(present) - 1)[values - lo]
    _, inv = np.unique(values, return_inverse=True)
    return inv.reshape(-1).astype(np.int64)


def _running_counts(
    start: np.ndarray, stop: np.ndarray, marked: np.ndarray, size: int
) -> tuple[np.ndarray, np.ndarray]:
    """The counts of runs ``[start, stop)`` (integers in ``[0, size]``) that cover each
    point covered by at least one, and of those runs ``marked``; a point per stretch of
    equal counts (which is all :meth:`CompiledExecutor._chunk_need` asks of them)."""
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


def _group_starts(values: np.ndarray) -> np.ndarray:
    """The positions where a run of equal values starts (a chunk's time groups)."""
    change = np.empty(len(values), dtype=bool)
    change[:1] = True
    np.not_equal(values[1:], values[:-1], out=change[1:])
    return np.flatnonzero(change)


def _exact_group_starts(times: list[Any]) -> np.ndarray:
    """:func:`_group_starts` of exact times (EventBatch.exact_times)."""
    change = [i for i in range(1, len(times)) if times[i] != times[i - 1]]
    return np.array([0, *change] if times else [], dtype=np.int64)


def _key_values(col: Column, index: np.ndarray, codes: bool = False) -> list[object]:
    """Python values (the value model's) of a column at the given rows (``codes``: of
    a text column's words of those codes)."""
    if col.kind == "mixed":
        return [col.values[i] for i in index.tolist()]
    if col.kind == "text":
        assert col.dictionary is not None
        words = col.dictionary
        return [words[c] for c in (index if codes else col.values[index]).tolist()]
    return col.values[index].tolist()  # type: ignore[no-any-return]


def _keys_of(
    cols: list[Column], index: np.ndarray, firsts: bool = True
) -> tuple[np.ndarray, list[tuple[object, ...]], np.ndarray]:
    """The keys (values of ``cols``) of the events at ``index``: per event its key's
    number, the distinct keys (Python values), and each one's first event (a position
    in ``index``; ``firsts`` False: maybe not, when not needed to read the keys)."""
    if not cols:
        return np.zeros(len(index), dtype=np.int64), [()], np.zeros(1, dtype=np.int64)
    if not firsts and len(cols) == 1 and cols[0].kind in ("int", "text") and len(index):
        # one column of small integers (or words' codes): its distinct values are the keys
        (col,) = cols
        values = col.values[index]
        lo, hi = int(values.min()), int(values.max())
        if hi - lo <= 4 * len(values) + 4096:
            at = values - lo if lo else values
            present = np.zeros(hi - lo + 1, dtype=np.int64)
            present[at] = 1
            codes = np.flatnonzero(present) + lo
            keys = codes.tolist() if col.kind == "int" else _key_values(col, codes, True)
            return (np.cumsum(present) - 1)[at], [(k,) for k in keys], np.zeros(0, np.int64)
    if all(c.kind != "mixed" for c in cols):
        # one int64 code per key (mixed radix over the columns' codes);
        # np.unique(axis=0) on the stacked codes is ten times slower
        combined = np.zeros(len(index), dtype=np.int64)
        radix = 1
        for c in cols:
            codes = _dense_codes(c.values[index])
            size = int(codes.max()) + 1
            if radix * size >= 2**62:
                combined = _dense_codes(combined)
                radix = int(combined.max()) + 1
            combined = combined * size + codes
            radix *= size
        inv = combined if len(cols) == 1 else _dense_codes(combined)
        first = np.empty(int(inv.max()) + 1, dtype=np.int64)
        first[inv[::-1]] = np.arange(len(inv) - 1, -1, -1)  # the last write wins
        reps = index[first]
        values = [_key_values(c, reps) for c in cols]
        return inv, list(zip(*values, strict=True)), first
    per_event = list(zip(*[_key_values(c, index) for c in cols], strict=True))
    distinct: dict[tuple[object, ...], int] = {}
    inv = np.fromiter(
        (distinct.setdefault(k, len(distinct)) for k in per_event),
        dtype=np.int64,
        count=len(per_event),
    )
    first = np.empty(len(distinct), dtype=np.int64)
    first[inv[::-1]] = np.arange(len(inv) - 1, -1, -1)
    return inv, list(distinct), first


def _widen(
    width: int, positions: tuple[int, ...], values: tuple[object, ...]
) -> tuple[object, ...]:
    """A key of ``width`` attributes with ``values`` at ``positions``, WILD elsewhere."""
    key: list[object] = [WILD] * width
    for p, v in zip(positions, values, strict=True):
        key[p] = v
    return tuple(key)


def _narrow(key: tuple[object, ...], positions: tuple[int, ...]) -> tuple[object, ...]:
    """The key of the level of ``positions`` that agrees with ``key``."""
    return tuple(v if p in positions else WILD for p, v in enumerate(key))


def _positions(key: tuple[object, ...]) -> tuple[int, ...]:
    """The positions where a key has a value (the level of its instance)."""
    return tuple(p for p, v in enumerate(key) if v != WILD)


class CompiledExecutor:
    """Supported queries of a workload on the compiled kernel (see :mod:`trendagg.kernels`)."""

    def __init__(self, plans: list[QueryPlan], sharing: SharingPlan, log: int = 0):
        """The queries ``plans`` (those ``sharing`` routes here), shared as it says;
        ``log``: keep the first ``log`` per-burst decisions in :attr:`decisions`."""
        self.plans = plans
        self._log_limit = log
        self.decisions: list[dict[str, Any]] = []
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
        self._kept_ranks: set[str] = set()  # ranks the next replay starts from (see _rank)
        self._slots: dict[str, Slots] | None = None  # where their registers live (lazily)
        self._binders: tuple[list[list[tuple[int, int, int]]], ...] | None = None
        self._slots_of: tuple[object, tuple[np.ndarray, np.ndarray]] | None = None
        self._first: tuple[EventBatch | None, tuple[bytes, int], int] | None = None
        self._bursts = 0
        self._shared = 0
        self._memory_limit = memory_limit()
        self._pool = 0  # queue entries (0: the first size, see POOL)
        self._lpool = 0  # lazy windows' queue entries (0: LAZY_POOL)
        self._ring = RING  # snapshots per ring and instance (the snapshot kernel)
        self._gstats = np.zeros(4, dtype=np.int64)  # its counters of replaced states
        self._reset(1, np.full(len(self.low.specs), -(2**62), dtype=np.int64))

    # ------------------------------------------------------------------ state

    def _reset(self, lanes: int, closed: np.ndarray) -> None:
        """A fresh state with ``lanes`` primes, windows below ``closed`` already emitted."""
        self.lanes = lanes
        self.mod = Moduli(lanes)
        for attr in self._ranks:  # no register holds a rank: the replay ranks again
            if attr not in self._kept_ranks:
                self._ranks[attr] = Ranks()
        self._kept_ranks = set()
        self.prog = scaled(self.low.program, lanes)
        # the kernel's bound check (_engine._count_window_events): capacity, s + 1
        self.lim = np.array(
            [capacity(lanes, max(self._wbits, default=1), self._pbits), self.low.singles + 1],
            dtype=np.int64,
        )
        self._inst: dict[tuple[int, tuple[object, ...]], int] = {}
        # qualified partitionings: (partitioning, level, key) -> the agreeing instances
        # of higher levels
        self._below: dict[tuple[int, int, tuple[object, ...]], set[int]] = {}
        self._inst_key: list[tuple[int, tuple[object, ...]] | None] = []
        self._free: list[int] = []
        self._ginst: dict[tuple[int, tuple[object, ...]], int] = {}
        self._gkey: list[tuple[int, tuple[object, ...]] | None] = []
        self._gref: list[int] = []
        self._gfree: list[int] = []
        w = self.low.widths
        gw = self.low.group_widths
        L = lanes
        n_sets = max(len(self.low.set_types), 1)
        n_gsel = max(max((len(p.groupings) for p in self.low.partitionings), default=1), 1)
        entries = (self._pool or self._first_pool(L)) if self._queues() else 1
        prog = self.low.program
        entry = 8 * (5 + max(self.low.max_additive * L, 2))
        lazy = (self._lpool or max(LAZY_POOL, POOL_BYTES // entry)) if prog.sp_lazy.any() else 1
        # st.lzi's row of a new instance (prog.lz_off, see _engine._lz_cols): no stamp,
        # zero counts per class; no last entries; zero event counts; no time group or
        # first start, no live entries
        n_c, (_, _, _, counts, inst_tg, width) = len(prog.c_lazy), prog.lz_off.tolist()
        self._lzi_row = np.full(width, -1, dtype=np.int64)
        self._lzi_row[n_c : 2 * n_c] = 0
        self._lzi_row[counts:inst_tg] = 0
        self._lzi_row[width - 1] = 0
        tree_nodes = entries if len(self.low.program.ix_q) else 1
        self.st = State(
            P=self.mod.p,
            PINV=self.mod.pinv,
            tot=np.zeros((0, w["tot"] * L), dtype=np.int64),
            ext=np.zeros((0, w["ext"]), dtype=np.float64),
            keys=np.zeros((0, w["keys"]), dtype=np.int64),
            mkeys=np.zeros((0, w["m"]), dtype=np.int64),
            mcnt=np.zeros((0, w["m"]), dtype=np.int64),
            mrep=np.zeros((0, w["m"]), dtype=np.int64),
            bur=np.zeros((0, burst_width(self.prog, L)), dtype=np.int64),
            burf=np.zeros((0, w["burf"]), dtype=np.float64),
            mixed=np.zeros((0, n_sets), dtype=np.int64),
            inst_ginst=np.zeros((0, n_gsel), dtype=np.int64),
            res=np.zeros((0, gw["res"] * L), dtype=np.int64),
            rext=np.zeros((0, gw["ext"]), dtype=np.float64),
            rkeys=np.zeros((0, gw["keys"]), dtype=np.int64),
            gr_ptr=np.zeros(len(self.low.grouping_of) + 1, dtype=np.int64),
            gr_ginst=np.zeros(0, dtype=np.int64),
            closed=closed.copy(),
            mode=np.array([self.mode], dtype=np.int64),
            stats=np.zeros(4, dtype=np.int64),
            dlog=np.zeros((self._log_limit, 7), dtype=np.int64),  # (no rows: no log)
            # one-dimensional when some query has a NOT or a NEXT condition (_engine's qs:
            # the kernel is compiled without the code of queues otherwise)
            neg=np.zeros(0 if self._queues() else (0, 0)),
            blk=np.zeros((0, w["blk"]), dtype=np.int64),
            nq=np.zeros((0, w["nq"]), dtype=np.int64),
            nqa=np.zeros((0, w["nqa"] * L), dtype=np.int64),
            nqe=np.zeros((0, w["nqe"]), dtype=np.float64),
            nstart=np.zeros((0, len(self.prog.q_spec)), dtype=np.int64),
            pnext=np.r_[np.arange(1, entries), -1].astype(np.int64),
            ptg=np.zeros(entries, dtype=np.int64),
            padd=np.zeros((entries, self.low.max_additive * L), dtype=np.int64),
            pext=np.zeros((entries, self.low.max_extreme), dtype=np.float64),
            # the values a log entry keeps for NEXT conditions, and their kinds (edges)
            pkey=np.zeros((entries, self.low.key_width), dtype=np.float64),
            pknd=np.zeros((entries, self.low.key_width), dtype=np.int64),
            pool=np.array([0, 0, 0, 0], dtype=np.int64),  # free list, full, in use, most
            # a NEXT condition's integer arithmetic left 2**53 (flag, program)
            eflag=np.zeros(2, dtype=np.int64),
            # ordered indexes of NEXT conditions (see _engine): per window slot, and nodes
            ixh=np.zeros((0, w["ixh"]), dtype=np.int64),
            ixa=np.zeros((0, w["ixa"] * L), dtype=np.int64),
            ixe=np.zeros((0, w["ixe"]), dtype=np.float64),
            tkey=np.zeros(tree_nodes, dtype=np.float64),
            tleft=np.r_[np.arange(1, tree_nodes), -1].astype(np.int64),  # the free list
            tright=np.full(tree_nodes, -1, dtype=np.int64),
            tprio=np.zeros(tree_nodes, dtype=np.int64),
            town=np.zeros((tree_nodes, self.low.max_additive * L), dtype=np.int64),
            towne=np.zeros((tree_nodes, self.low.max_extreme), dtype=np.float64),
            ttot=np.zeros((tree_nodes, self.low.max_additive * L), dtype=np.int64),
            ttote=np.zeros((tree_nodes, self.low.max_extreme), dtype=np.float64),
            tpool=np.array([0, 0, 0, 0, 2017], dtype=np.int64),  # free, -, in use, most, seed
            tstack=np.zeros(3 * tree_nodes + 3, dtype=np.int64),
            # per instance: where it reads the classes of its template (see _link_templates)
            itmpl=np.zeros((0, 1), dtype=np.int64),
            # lazy windows (see _engine): per instance G, Y totals, diagonals, D; stamps,
            # last entries, event counts, live entries; per group the results; the queue
            lz=np.zeros((0, w["lz"] * L), dtype=np.int64),
            lzi=np.zeros((0, len(self._lzi_row)), dtype=np.int64),
            lres=np.zeros((0, gw["lres"] * L), dtype=np.int64),
            lnext=np.r_[np.arange(1, lazy), -1].astype(np.int64),
            lkhi=np.zeros(lazy, dtype=np.int64),
            linst=np.zeros(lazy, dtype=np.int64),
            lkind=np.zeros(lazy, dtype=np.int64),
            lidx=np.zeros(lazy, dtype=np.int64),
            lval=np.zeros((lazy, max(self.low.max_additive * L, 2)), dtype=np.int64),
            lmeta=np.array([0, 0, 0, 0], dtype=np.int64),  # free list, full, in use, most
            # per spec: head and tail of its starts and corrections, and of its counts
            lq=np.full((len(self.low.specs), 4), -1, dtype=np.int64),
        )
        self._ixh_row = np.tile(np.array([SENT, -1, -1], dtype=np.int64), w["ixh"] // 3)
        # a queue slot: no window, no entries (see _engine's negation functions)
        self._nq_row = np.tile(np.array([SENT, -1, -1, 0], dtype=np.int64), w["nq"] // 4)
        self._burst_template = self._burst_row()
        # burst minima (even) and maxima (odd): none yet, so that any value compares better
        self._extremes_template = np.where(np.arange(w["burf"]) % 2 == 0, np.inf, -np.inf)
        self._reset_gloria(lanes, closed)

    def _reset_gloria(self, lanes: int, closed: np.ndarray) -> None:
        """The snapshot kernel's tables for ``lanes`` and the ring size, and a fresh
        state (no instance rows yet: _new_instances grows them)."""
        g = self.low.gloria
        if g is None:
            self.gp = None
            return
        R = self._ring
        w = g.widths
        W = int(g.program.a_W[0])
        MA = max(int(g.program.a_M[0]), 1)
        self.gp = scaled_gloria(g.program, lanes, R)
        self.gst = GState(
            tot=np.zeros((0, w["tot"] * lanes), dtype=np.int64),
            ext=np.zeros((0, w["ext"]), dtype=np.float64),
            keys=np.zeros((0, w["keys"]), dtype=np.int64),
            sa=np.zeros((0, w["sa"] * lanes * R), dtype=np.int64),
            se=np.zeros((0, max(w["se"], 1) * R), dtype=np.float64),
            sk=np.zeros((0, w["sk"] * R), dtype=np.int64),
            sx=np.zeros((0, w["sx"] * R), dtype=np.int64),
            meta=np.zeros((0, w["meta"]), dtype=np.int64),
            ca=np.zeros((0, w["ca"] * R * W * lanes), dtype=np.int64),
            ce=np.zeros((0, w["ca"] * R * MA), dtype=np.float64),
            ct=np.zeros((0, w["ca"] * R), dtype=np.int64),
            mg=np.zeros((0, 5 * max(g.rings, 1)), dtype=np.int64),
            la=np.zeros((0, w["la"] * R * W * lanes), dtype=np.int64),
            le=np.zeros((0, w["la"] * R * MA), dtype=np.float64),
            lt=np.zeros((0, w["la"] * R * 2), dtype=np.int64),
            closed=closed.copy(),
            stats=np.zeros(4, dtype=np.int64),
            rs=np.array([R, lanes], dtype=np.int64),
        )

    def _grow_gloria(self, count: int, ids: np.ndarray) -> None:
        """Rows for ``count`` instances in the snapshot kernel's state; rows ``ids``
        (new instances) hold nothing: no window, snapshot or entry."""
        if self.gp is None:
            return
        fills = {
            "ext": np.nan,
            "keys": SENT,
            "se": np.nan,
            "sk": SENT,
            "sx": SENT,
            "ce": np.nan,
            "ct": -1,
            "mg": -1,
            "le": np.nan,
            "lt": -1,
        }
        arrays = {}
        names = ("tot", "ext", "keys", "sa", "se", "sk", "sx", "meta", "ca", "ce", "ct", "mg")
        for name in (*names, "la", "le", "lt"):
            arr = getattr(self.gst, name)
            if arr.shape[0] < count:
                size = max(count, 2 * arr.shape[0], 16)
                self._check_memory(arr.nbytes, size * arr.shape[1] * arr.itemsize)
                new = np.zeros((size, arr.shape[1]), dtype=arr.dtype)
                new[: arr.shape[0]] = arr
                if name in fills:
                    new[arr.shape[0] :] = fills[name]
                arr = new
            arrays[name] = arr
        self.gst = self.gst._replace(**arrays)
        gst = self.gst
        gst.keys[ids] = SENT
        gst.sk[ids] = SENT
        gst.sx[ids] = SENT
        gst.ct[ids] = -1
        gst.meta[ids] = 0
        gst.mg[ids] = -1  # (no START group yet)
        gst.lt[ids] = -1  # (no accumulator)

    def _first_pool(self, lanes: int) -> int:
        """Queue entries at first (see POOL): what POOL_BYTES holds, within [1024, POOL]."""
        low = self.low
        entry = 8 * (2 + low.max_additive * lanes + low.max_extreme + 2 * low.key_width)
        if len(low.program.ix_q):  # an index node per entry too: its own and its subtree's
            entry += 2 * 8 * (low.max_additive * lanes + low.max_extreme) + 8 * 8
        return min(POOL, max(1024, POOL_BYTES // entry))

    def _queues(self) -> bool:
        """True when some query has a NOT, a NEXT condition or a guard."""
        prog = self.prog
        queued = len(prog.nt_q) or len(prog.ix_q)
        return bool(queued or (prog.g_pr >= 0).any() or (prog.q_nkind >= 0).any())

    def _burst_row(self) -> np.ndarray:
        prog = self.prog
        L = self.lanes
        row = np.zeros(self.st.bur.shape[1], dtype=np.int64)
        for _b, off in enumerate(prog.set_boff.tolist()):
            row[off : off + 6] = [-1, 0, -1, 0, -1, -1]
            row[off + 6 : off + 6 + L] = 1
        return row

    def _grow(self, name: str, rows: int, fill: float | int | np.ndarray) -> None:
        """Room for ``rows`` rows; new rows hold ``fill`` (a value, or a whole row)."""
        arr = getattr(self.st, name)
        if arr.shape[0] >= rows:
            return
        size = max(rows, 2 * arr.shape[0], 16)
        self._check_memory(arr.nbytes, size * arr.shape[1] * arr.itemsize)
        if isinstance(fill, int) and fill == 0:  # (fresh zero pages: the new rows cost
            new = np.zeros((size, arr.shape[1]), dtype=arr.dtype)  # nothing until used)
        else:
            new = np.empty((size, arr.shape[1]), dtype=arr.dtype)
            new[arr.shape[0] :] = fill
        new[: arr.shape[0]] = arr
        self.st = self.st._replace(**{name: new})

    def _check_memory(self, old: int, new: int) -> None:
        """Stop with the reason, not an out-of-memory kill, when the window state outgrows
        :func:`trendagg.limits.memory_limit` (its rows hold WITHIN / SLIDE + 1 window slots
        per state and partition instance)."""
        total = sum(a.nbytes for a in self.st if isinstance(a, np.ndarray)) - old + new
        if total <= self._memory_limit:
            return
        kept = [s for sp, s in enumerate(self.low.specs) if not self.prog.sp_lazy[sp]]
        if not kept:  # (lazy windows: the open windows' trend starts, see _engine)
            raise ExecutionError(
                f"the compiled engine's window state needs {gigabytes(total)}, more than its "
                f"limit of {gigabytes(self._memory_limit)} (TRENDAGG_MEMORY_LIMIT): "
                f"{len(self._inst_key):,} partition instances and {len(self._gkey):,} groups, "
                f"and the trend starts and events of the open windows; a shorter WITHIN or "
                f"fewer partitions make it smaller"
            )
        slots, spec = max((math.ceil(s.within / s.slide) + 1, s) for s in kept)
        raise ExecutionError(
            f"the compiled engine's window state needs {gigabytes(total)}, more than its limit of "
            f"{gigabytes(self._memory_limit)} (TRENDAGG_MEMORY_LIMIT): "
            f"{len(self._inst_key):,} partition instances and {len(self._gkey):,} groups, each "
            f"with {slots:,} window slots per state (WITHIN {as_number(spec.within)} s SLIDE "
            f"{as_number(spec.slide)} s); a longer SLIDE, a shorter WITHIN or fewer partitions "
            f"make it smaller"
        )

    def _new_instances(self, g: int, keys: list[tuple[object, ...]]) -> np.ndarray:
        """Instances of partitioning ``g`` for new ``keys``: free rows first (the last
        freed first), then new rows, the arrays grown once for all of them."""
        reused = self._free[: -len(keys) - 1 : -1]
        del self._free[len(self._free) - len(reused) :]
        for inst, key in zip(reused, keys, strict=False):
            self._inst_key[inst] = (g, key)
        fresh = keys[len(reused) :]
        if fresh:
            self._inst_key.extend((g, key) for key in fresh)
            count = len(self._inst_key)
            if count.bit_length() > self._pbits:
                # a group sums at most one register per row: the bound grows (as it would
                # one instance at a time: by 3 bits each time the count passes it)
                while count.bit_length() > self._pbits:
                    self._pbits += 3
                self._bound_changed()
            for name, fill in (
                ("tot", 0),
                ("ext", np.nan),
                ("keys", SENT),
                ("mkeys", SENT),
                ("mcnt", 0),
                ("mrep", 0),
                ("bur", self._burst_template),  # unused rows hold no open burst
                ("burf", self._extremes_template),
                ("mixed", -1),
                ("inst_ginst", -1),
                ("blk", SENT),
                ("nq", self._nq_row),
                ("nqa", 0),
                ("nqe", np.nan),
                ("nstart", -1),
                ("ixh", self._ixh_row),
                ("ixa", 0),
                ("ixe", np.nan),
                ("itmpl", -1),
                ("lz", 0),
                ("lzi", self._lzi_row),
            ):
                self._grow(name, count, fill)
        start = len(self._inst_key) - len(fresh)
        ids = np.array(reused + list(range(start, start + len(fresh))), dtype=np.int64)
        self._grow_gloria(len(self._inst_key), ids)
        st = self.st
        st.bur[ids] = self._burst_template
        st.keys[ids] = SENT
        st.mkeys[ids] = SENT
        st.mixed[ids] = -1
        st.burf[ids] = self._extremes_template
        st.blk[ids] = SENT
        st.nstart[ids] = -1  # (a freed row's queues went back to the pool in _purge)
        st.lz[ids] = 0  # (a freed row has no live entry: its G may start again)
        st.lzi[ids] = self._lzi_row
        part = self.low.partitionings[g]
        if part.qualified:
            st.inst_ginst[ids] = -1  # a template has no trends, so no group
            for key, inst in zip(keys, ids.tolist(), strict=True):
                self._index_instance(g, key, inst, True)
            keys_ids = [(k, i) for k, i in zip(keys, ids.tolist(), strict=True) if WILD not in k]
        else:
            keys_ids = list(zip(keys, ids.tolist(), strict=True))
        for sel, positions in enumerate(part.groupings):
            gid = self.low.grouping_of.index((g, sel))
            groups = []
            for key, _ in keys_ids:
                gkey = tuple(key[p] for p in positions)
                gi = self._ginst.get((gid, gkey))
                if gi is None:
                    gi = self._new_group(gid, gkey)
                self._gref[gi] += 1
                groups.append(gi)
            st.inst_ginst[[i for _, i in keys_ids], sel] = groups
        self._inst.update(zip([(g, key) for key in keys], ids.tolist(), strict=True))
        self._link_templates(g, keys, ids.tolist())
        return ids

    def _link_templates(self, g: int, keys: list[tuple[object, ...]], ids: list[int]) -> None:
        """``st.itmpl`` of new instances: where each reads the classes that only wildcard
        events reach (``c_tmpl``, see :func:`~trendagg.kernels.lower.templates.template_classes`):
        the template of its key (itself for a template or an unqualified partitioning;
        -1 while its key has none: then no such event is in its open windows). A new
        template is linked to the instances of its key that exist already."""
        st = self.st
        part = self.low.partitionings[g]
        if not part.qualified:
            st.itmpl[ids, 0] = ids
            return
        level0 = part.levels[0]
        for key, inst in zip(keys, ids, strict=True):
            if WILD in key:
                st.itmpl[inst, 0] = inst
                for other in self._below.get((g, 0, key), ()):
                    st.itmpl[other, 0] = inst
            else:
                st.itmpl[inst, 0] = self._inst.get((g, _narrow(key, level0)), -1)

    def _new_group(self, gid: int, gkey: tuple[object, ...]) -> int:
        if self._gfree:
            gi = self._gfree.pop()
            self._gkey[gi] = (gid, gkey)
            self._gref[gi] = 0
        else:
            gi = len(self._gkey)
            self._gkey.append((gid, gkey))
            self._gref.append(0)
            self._grow("res", gi + 1, 0)
            self._grow("rext", gi + 1, np.nan)
            self._grow("rkeys", gi + 1, SENT)
            self._grow("lres", gi + 1, 0)
        self.st.rkeys[gi] = SENT
        self.st.lres[gi] = 0
        self._ginst[(gid, gkey)] = gi
        return gi

    def _purge(self) -> None:
        """Free the partition instances (and groups) that no open window needs."""
        prog = self.prog
        st = self.st
        n = len(self._inst_key)
        if not n:
            return
        # a window slot of a class, or an event count (the lanes' bound), of an open window
        # (a column of no slot: a bound no window id reaches)
        live = np.zeros(n, dtype=bool)
        for rows, specs in zip((st.keys, st.mkeys), self._slot_specs(), strict=True):
            bound = np.where(specs >= 0, st.closed[specs], np.iinfo(np.int64).max)
            live |= (rows[:n] >= bound).any(axis=1)
        live |= st.lzi[:n, -1] > 0  # entries of the lazy windows' queue
        dead = [i for i in np.flatnonzero(~live).tolist() if self._inst_key[i] is not None]
        if dead and self._queues():  # (queues and indexes have rows to let go)
            _engine.release_rows(prog, st, np.array(dead, dtype=np.int64))
        for inst in dead:
            entry = self._inst_key[inst]
            if entry is None:
                continue
            g, key = entry
            del self._inst[entry]
            self._inst_key[inst] = None
            self._free.append(inst)
            if self.low.partitionings[g].qualified:
                self._index_instance(g, key, inst, False)
                if WILD in key:  # (no event of its key in an open window: nothing to read)
                    for other in self._below.get((g, 0, key), ()):
                        st.itmpl[other, 0] = -1
                    continue
            for sel in range(len(self.low.partitionings[g].groupings)):
                gi = int(st.inst_ginst[inst, sel])
                self._gref[gi] -= 1
                if self._gref[gi] == 0 and (st.rkeys[gi] == SENT).all() and not st.lres[gi].any():
                    gentry = self._gkey[gi]
                    assert gentry is not None
                    del self._ginst[gentry]
                    self._gkey[gi] = None
                    self._gfree.append(gi)

    def _slot_specs(self) -> tuple[np.ndarray, np.ndarray]:
        """Per column of ``st.keys`` and of ``st.mkeys``, the window spec of the slot it
        holds (a class's window slot, an event count's), or -1; found once per program."""
        prog = self.prog
        if self._slots_of is None or self._slots_of[0] is not prog:
            keys = np.full(self.st.keys.shape[1], -1, dtype=np.int64)
            for off, ns, sp in zip(
                prog.c_koff.tolist(), prog.c_NS.tolist(), prog.c_spec.tolist(), strict=True
            ):
                keys[off : off + ns] = sp
            counts = np.full(self.st.mkeys.shape[1], -1, dtype=np.int64)
            for sp, (off, ns) in enumerate(
                zip(prog.sp_moff.tolist(), prog.sp_NS.tolist(), strict=True)
            ):
                counts[off : off + ns] = sp
            self._slots_of = (prog, (keys, counts))
        return self._slots_of[1]

    # ------------------------------------------------------------------ feeding

    def feed(self, batch: EventBatch | None, until: Any) -> list[ResultRow]:
        """Process complete time groups (sorted by time; the Runner holds back the latest
        one, which may go on in the next chunk), then close the windows that end by
        ``until`` (None: none)."""
        if batch is not None and len(batch):
            self._check_numbers(batch.time_at(0))
            self._check_numbers(batch.time_at(-1))
        else:
            batch = None
        close = None
        if until is not None:
            self._check_numbers(until)
            close = np.array([s.closed_before(until) for s in self.low.specs], dtype=np.int64)
        return self._run(batch, close)

    def advance(self, t: Any) -> list[ResultRow]:
        """No event before t will come: close the windows that end by t."""
        return self.feed(None, t)

    def _check_numbers(self, t: int | float | Fraction) -> None:
        """Window and pane numbers of time ``t`` fit the kernel's 64-bit integers."""
        for spec in self.low.specs:
            numbers = spec.windows_of(t)
            if max(abs(numbers.start), abs(numbers.stop)) < WINDOW_NUMBER_LIMIT:
                continue
            raise InputError(
                f"time {time_text(t)} is too far from 0 for WITHIN {as_number(spec.within)} s SLIDE "
                f"{as_number(spec.slide)} s: its window numbers (time / SLIDE) pass 2**61; subtract "
                f"a base time from the times (or use a longer SLIDE)"
            )
        for pane in self.low.panes:
            if abs(math.floor(Fraction(t) / pane)) >= WINDOW_NUMBER_LIMIT:
                raise InputError(
                    f"time {time_text(t)} is too far from 0 for panes of {as_number(pane)} s (the common "
                    f"divisor of the windows): its pane number passes 2**61; subtract a base "
                    f"time from the times (or use windows with a longer common divisor)"
                )

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
            except _Rebuild as why:
                self._rebuild(
                    closed_before, why.mixed, why.ranked, why.pool, why.lazy_pool, why.ring
                )
                continue
            if batch is not None:
                self._retain(batch)
            self._purge()
            return rows

    def _rebuild(
        self,
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
        self.rebuilds += 1
        self._bursts += int(self.st.stats[0])
        self._shared += int(self.st.stats[1])
        if self.gp is not None:
            self._gstats += self.gst.stats
        if mixed is not None:
            self._relower(mixed)
        if ranked is not None:
            self._ranks[ranked] = Ranks()
        if pool:
            st = self.st
            held = sum(
                a.nbytes
                for a in (st.pnext, st.ptg, st.padd, st.pext, st.pkey, st.pknd, st.town, st.ttot)
            )
            self._check_memory(held, 4 * held)
            self._pool = 4 * len(st.pnext)
        if lazy_pool:
            st = self.st
            held = sum(a.nbytes for a in (st.lnext, st.lkhi, st.linst, st.lkind, st.lidx, st.lval))
            self._check_memory(held, 4 * held)
            self._lpool = 4 * len(st.lnext)
        if ring:
            self._ring *= 2
        target = self._need + max(self._need // 8, 4)
        lanes = max(self.lanes, lanes_for(target, max(self._wbits, default=1), self._pbits))
        while True:
            self._reset(lanes, closed)
            try:
                for old in self._retained:
                    self._attempt(old, None, False, replay=True)
                return
            except _Rebuild as why:
                if why.ring:
                    self._ring *= 2
                elif why.lazy_pool:
                    self._lpool = 4 * len(self.st.lnext)
                elif why.pool:
                    self._pool = 4 * len(self.st.pnext)  # the replay alone fills the pool
                elif not self._kept_ranks:  # (else: ranks grew, see _rank: replay with them)
                    raise

    def _relower(self, attr: str) -> None:
        """Lay the program out again with hidden registers for ``attr`` (see
        :mod:`trendagg.kernels.lower.core`); the state of each weight and extreme column
        (scale, bits, kinds seen) follows it by name to its new index."""
        old = self.low
        state = zip(self._wscale, self._wbits, self._wfloat, strict=True)
        weights = dict(zip(old.weights, state, strict=True))
        xint = dict(zip(old.extremes, self._xint, strict=True))
        self.low = lower(self.plans, self.sharing, old.mixed | {attr})
        self._slots = self._binders = None
        carried = [weights.get(name, (0, 1, False)) for name in self.low.weights]
        self._wscale = [scale for scale, _, _ in carried]
        self._wbits = [bits for _, bits, _ in carried]
        self._wfloat = [floats for _, _, floats in carried]
        self._xint = [xint.get(name, True) for name in self.low.extremes]

    def _retain(self, batch: EventBatch) -> None:
        """Keep the events that an open window may still need (for a rebuild)."""
        starts = [
            s.start(int(c)) for s, c in zip(self.low.specs, self.st.closed.tolist(), strict=True)
        ]
        if not starts:
            return
        oldest = min(starts)
        if not self._reads.issuperset(batch.columns):  # (only what the queries read)
            batch = dataclasses.replace(
                batch, columns={n: c for n, c in batch.columns.items() if n in self._reads}
            )
        kept = []
        for b in [*self._retained, batch]:
            if len(b) and b.time_at(-1) >= oldest:
                i = int(np.count_nonzero(b.ticks_before(oldest)))  # (sorted by time)
                # a copy (not a view): a retained tail does not pin its whole chunk
                kept.append(b if i == 0 else b.take(np.arange(i, len(b))))
        self._retained = kept

    def _attempt(
        self,
        batch: EventBatch | None,
        close: np.ndarray | None,
        final: bool,
        replay: bool = False,
    ) -> list[ResultRow]:
        ev = self._events(batch, replay)
        if not replay and len(ev.types):
            # the first chunk's windows tell the lanes the stream needs at least:
            # better a rebuild now than one after running half the chunk (later
            # growth costs one chunk's replay); so do a lazy spec's at every chunk
            need = self._first_need(batch, ev) if self._tg == 0 else 0
            need = max(need, self._lazy_need(ev))
            if need > self.lim[0]:
                self._need = max(self._need, need)
                raise _Rebuild()
        n_specs = len(self.low.specs)
        close_to = close if close is not None else np.full(n_specs, -(2**62), dtype=np.int64)
        sc = self._scratch(ev)
        out = self._out(ev)
        self._refresh_groups()
        # a replay decides its bursts again: the log keeps the first decisions
        self.st.stats[3] = self._log_limit if replay else 0
        if self.gp is not None:  # the members of a GLORIA or SHARON plan (see _gloria)
            self.gst.closed[:] = self.st.closed
            gsc = self._gscratch(ev)
            gstatus = _gloria.run_gloria(
                self.prog, self.st, ev, self.gp, self.gst, gsc, out, close_to, final
            )
            if gstatus == _gloria.RING_FULL:
                raise _Rebuild(ring=True)
        status = _engine.run_chunk(
            self.prog, self.st, ev, sc, out, close_to, final, self.lim, self.st.neg
        )
        self._need = max(self._need, int(self.st.stats[2]))
        if self.st.eflag[0]:
            self._inexact(int(self.st.eflag[1]))
        if status == 2:
            raise _Rebuild(pool=True)
        if status == 3:
            raise _Rebuild(lazy_pool=True)
        if status:
            if replay:
                raise ExecutionError("internal: a replay overflowed the lanes chosen for it")
            raise _Rebuild()
        if not replay:
            self._keep_decisions(batch)
        self._tg = int(ev.tg[-1]) + 1 if len(ev.tg) else self._tg
        self._first = None if self._tg else self._first
        return self._rows(out)

    def _inexact(self, pr: int) -> None:
        """Stop: NEXT condition ``pr`` computed an integer beyond 2**53 (see edges)."""
        raise InputError(
            f"the NEXT condition '{shown(self.low.programs[pr].text)}' computes an integer beyond "
            f"2**53, which the compiled engine does not hold exactly; run this workload "
            f"with --engine reference (run_strategy(..., compiled=False)), which computes "
            f"with Python integers"
        )

    def _keep_decisions(self, batch: EventBatch | None) -> None:
        """The kernel's logged burst decisions of this chunk, as ``explain`` prints them."""
        logged = int(self.st.stats[3])
        room = self._log_limit - len(self.decisions)
        prog, names = self.low.program, [p.name for p in self.plans]
        for b, inst, first, n, shared_cost, replay_cost, shared in self.st.dlog[
            : min(logged, room)
        ].tolist():
            entry = self._inst_key[inst]
            assert entry is not None and batch is not None
            members = prog.set_q[prog.set_q_ptr[b] : prog.set_q_ptr[b + 1]].tolist()
            self.decisions.append(
                {
                    "type": self.low.set_types[b],
                    "partition": entry[1],
                    "time": batch.time_at(first),
                    "events": n,
                    "shared_cost": shared_cost,
                    "replay_cost": replay_cost,
                    "members": [names[q] for q in members],
                    "shared": bool(shared),
                }
            )

    def _first_need(self, batch: EventBatch | None, ev: Events) -> int:
        """:meth:`_chunk_need` of the first chunk, once: the attempt after the rebuild it
        asks for finds the same events in the same partitions and windows (the kept
        answer holds while the roles and s + 1 it read stay the same)."""
        key = (self.prog.part_role.tobytes(), int(self.lim[1]))
        kept = self._first
        if kept is not None and kept[0] is batch and kept[1] == key:
            return kept[2]
        need = self._chunk_need(ev)
        self._first = (batch, key, need)
        return need

    def _chunk_need(self, ev: Events) -> int:
        """The largest need (see :mod:`._rns`) of a window counting this chunk's events only.

        An event counts in the windows ``[klo, min(khi, klo + NS))`` of its instance: a
        +1 where that run starts and a -1 where it ends, so that the running sum over
        each instance's windows is every window's count (and the same with the events of
        repeatable types, its r) in time linear in the events, whatever NS."""
        prog = self.prog
        s1 = int(self.lim[1])
        best = 0
        for g in range(prog.part_role.shape[0]):
            pid = ev.pid[g]
            live = (prog.part_role[g] > 0)[ev.types] & (pid >= 0)
            if not live.any():
                continue
            rep = live & (prog.part_role[g] == 2)[ev.types]
            for sp in prog.part_sp[prog.part_sp_ptr[g] : prog.part_sp_ptr[g + 1]].tolist():
                if prog.sp_lazy[sp]:  # (the kernel counts them, see _engine._count_in)
                    continue
                klo, khi = ev.klo[sp], ev.khi[sp]
                base = int(klo.min())
                stride = int(khi.max()) - base + 1
                # (in place, a few arrays of the chunk's size; an event of no instance
                # runs from 0 to 0: no window)
                start = pid * stride
                start += klo
                start -= base
                start *= live
                stop = khi - klo
                np.minimum(stop, prog.sp_NS[sp], out=stop)
                stop *= live
                stop += start
                size = (int(pid.max()) + 1) * stride
                counts, reps = _running_counts(start, stop, rep, size)
                if not len(counts):
                    continue
                bits = np.floor(np.log2(counts)).astype(np.int64) + 1
                best = max(best, int((reps + s1 * bits).max()))
        return best

    def _lazy_need(self, ev: Events) -> int:
        """The largest need (see :mod:`._rns`) of a lazy spec's window at the chunk's
        events, at most: per instance, the events of the open windows (counted by the
        kernel) and those of the chunk within WITHIN / SLIDE + 1 slides of each event."""
        prog = self.prog
        if not prog.sp_lazy.any():
            return 0
        s1 = int(self.lim[1])
        counts = int(prog.lz_off[3])  # (st.lzi's event counts, see _engine._lz_cols)
        best = 0
        for g in range(prog.part_role.shape[0]):
            role = prog.part_role[g][ev.types]
            live = np.flatnonzero((role > 0) & (ev.pid[g] >= 0))
            if not len(live):
                continue
            for sp in prog.part_sp[prog.part_sp_ptr[g] : prog.part_sp_ptr[g + 1]].tolist():
                if not prog.sp_lazy[sp]:
                    continue
                spec = self.low.specs[sp]
                ns = math.ceil(spec.within / spec.slide) + 1
                khi = ev.khi[sp][live]
                pid = ev.pid[g][live]
                base = int(khi.min())
                key = pid * (int(khi.max()) - base + ns + 2) + (khi - base)
                order = np.argsort(key, kind="stable")
                ks = key[order]
                lo = np.searchsorted(ks, ks - ns, side="left")
                rep = np.r_[0, np.cumsum(role[live][order] == 2)]
                inst = pid[order]
                cnt = np.arange(1, len(ks) + 1) - lo + self.st.lzi[inst, counts + 2 * sp]
                reps = rep[1:] - rep[lo] + self.st.lzi[inst, counts + 2 * sp + 1]
                bits = np.floor(np.log2(cnt)).astype(np.int64) + 1
                best = max(best, int((reps + s1 * bits).max()))
        return best

    def _refresh_groups(self) -> None:
        lists: list[list[int]] = [[] for _ in self.low.grouping_of]
        for (gid, _), gi in self._ginst.items():
            lists[gid].append(gi)
        ptr = np.zeros(len(lists) + 1, dtype=np.int64)
        for i, items in enumerate(lists):
            ptr[i + 1] = ptr[i] + len(items)
        flat = np.array([x for items in lists for x in sorted(items)], dtype=np.int64)
        self.st = self.st._replace(gr_ptr=ptr, gr_ginst=flat)

    def _scratch(self, ev: Events) -> Scratch:
        low = self.low
        L = self.lanes
        n = len(ev.types)
        prog = self.prog
        cap = lcap = 1
        slots = prog.sp_lazy == 0  # (a lazy spec's bindings take one row of lrow each)
        if n:
            nbind = np.diff(prog.ty_ptr)[ev.types]
            starts = _group_starts(ev.tg)
            # an event's windows are its time's: one count per time group
            nk = (ev.khi[:, starts] - ev.klo[:, starts])[slots].max(axis=0) if slots.any() else 1
            if ev.xptr.shape[1] > 1:  # a wildcard event is processed in many instances
                cost = nbind * (1 + np.diff(ev.xptr, axis=1).sum(axis=0))
            else:
                cost = nbind
            cap = int((np.add.reduceat(cost, starts) * np.maximum(nk, 1)).max()) + 1
            if not slots.all():
                lcap = int(np.add.reduceat(nbind, starts).max()) + 1
        AL = low.max_additive * L
        M = low.max_extreme
        lazy = prog.c_lazy == 1
        lrow = int((prog.c_A * prog.c_lw)[lazy].max()) * L if lazy.any() else 1
        return Scratch(
            vec=np.zeros(AL, dtype=np.int64),
            vext=np.zeros(M, dtype=np.float64),
            vec2=np.zeros(AL, dtype=np.int64),
            vext2=np.zeros(M, dtype=np.float64),
            ent=np.zeros((cap, 5), dtype=np.int64),
            eadd=np.zeros((cap, AL), dtype=np.int64),
            eext=np.zeros((cap, M), dtype=np.float64),
            sk=np.zeros(low.stack, dtype=np.int64),  # the stack of NEXT conditions (edges)
            sv=np.zeros(low.stack, dtype=np.float64),
            # lazy windows: entries (query, state, instance, event, starts), rows, starts;
            # entries in use and the solve's stamp; a solve's dY per class, and stamps
            lent=np.zeros((lcap, 5), dtype=np.int64),
            lrow=np.zeros((lcap, lrow), dtype=np.int64),
            lsv=np.zeros((lcap, AL), dtype=np.int64),
            ln=np.zeros(2, dtype=np.int64),
            ldel=np.zeros(len(prog.c_lazy) * AL, dtype=np.int64),
            lst=np.full(len(prog.c_lazy), -1, dtype=np.int64),
            lmark=np.full(len(prog.c_lazy), -1, dtype=np.int64),  # classes a solve visits
            ltodo=np.zeros(len(prog.c_lazy), dtype=np.int64),
        )

    def _gscratch(self, ev: Events) -> GScratch:
        """The snapshot kernel's scratch: rows for the largest time group of the chunk."""
        g = self.low.gloria
        assert g is not None
        gp = g.program
        prog = self.prog
        L = self.lanes
        R = self._ring
        n_types = len(gp.ty_ptr) - 1
        rows_of = np.zeros(n_types, dtype=np.int64)  # per type: rows an event may make
        coef_of = np.zeros(n_types, dtype=np.int64)
        for ty in range(n_types):
            for x in gp.ty_x[gp.ty_ptr[ty] : gp.ty_ptr[ty + 1]].tolist():
                for qi in range(int(gp.x_q_ptr[x]), int(gp.x_q_ptr[x + 1])):
                    rows_of[ty] += int(prog.q_NS[gp.xq_q[qi]])
                coef_of[ty] += int(gp.xc_ptr[x + 1] - gp.xc_ptr[x]) * R
        cap = ccap = 1
        if len(ev.types):
            starts = np.flatnonzero(np.r_[True, ev.tg[1:] != ev.tg[:-1]])
            cap += int(np.add.reduceat(rows_of[ev.types], starts).max())
            ccap += int(np.add.reduceat(coef_of[ev.types], starts).max())
        AL = self.low.max_additive * L
        M = self.low.max_extreme
        W = int(gp.a_W[0]) * L
        MA = max(int(gp.a_M[0]), 1)
        NR = max(g.rings, 1) * R
        return GScratch(
            vec=np.zeros(AL, dtype=np.int64),
            vx=np.zeros(M, dtype=np.float64),
            n=np.zeros(3, dtype=np.int64),
            cmark=np.zeros(NR, dtype=np.int64),
            ctouch=np.zeros((NR, 2), dtype=np.int64),
            cadd=np.zeros((NR, W), dtype=np.int64),
            cext=np.zeros((NR, MA), dtype=np.float64),
            rk=np.zeros((cap, 7), dtype=np.int64),
            radd=np.zeros((cap, AL), dtype=np.int64),
            rext=np.zeros((cap, M), dtype=np.float64),
            vadd=np.zeros((cap, AL), dtype=np.int64),
            vxt=np.zeros((cap, M), dtype=np.float64),
            crow=np.zeros((ccap, 3), dtype=np.int64),
            crowa=np.zeros((ccap, W), dtype=np.int64),
            crowe=np.zeros((ccap, MA), dtype=np.float64),
        )

    def _out(self, ev: Events) -> Out:
        prog = self.prog
        L = self.lanes
        n_groups = np.zeros(len(self.low.grouping_of), dtype=np.int64)
        for gid, _ in self._ginst:
            n_groups[gid] += 1
        cap = 1
        n = len(ev.types)
        counts = np.bincount(ev.types, minlength=len(self.low.types) + 1) if n else None
        for q, plan in enumerate(self.plans):
            g_q = int(n_groups[prog.q_grouping[q]])
            ns = int(prog.q_NS[q])
            cap += g_q * ns
            if n:
                sp = int(prog.q_spec[q])
                end_type = self.low.types.index(plan.vars[plan.template.end].type)
                if self.low.partitionings[prog.q_part[q]].qualified:  # in every agreeing instance
                    each = 1 + np.diff(ev.xptr[prog.q_part[q]])
                    ends = int(each[ev.types == end_type].sum())
                else:
                    ends = int(counts[end_type])  # type: ignore[index]
                span = int(ev.khi[sp, -1] - ev.klo[sp, 0]) + ns
                cap += min(ends * ns, g_q * span)
            if prog.q_lazy[q]:  # every window from the oldest open one, per group
                cap += g_q * self._lazy_windows(int(prog.q_spec[q]), ev)
        return Out(
            n=np.zeros(1, dtype=np.int64),
            key=np.zeros((cap, 3), dtype=np.int64),
            add=np.zeros((cap, self.low.max_additive * L), dtype=np.int64),
            ext=np.zeros((cap, self.low.max_extreme), dtype=np.float64),
        )

    def _lazy_windows(self, sp: int, ev: Events) -> int:
        """The most windows of lazy spec ``sp`` that a call may close: from the oldest open
        one to the last that holds a queued entry or an event of the chunk."""
        st = self.st
        hi = int(st.lkhi[st.lq[sp, 1]]) if st.lq[sp, 1] >= 0 else None
        lo = int(st.closed[sp]) if st.lq[sp, 0] >= 0 else None
        if len(ev.types):
            hi = max(hi, int(ev.khi[sp, -1])) if hi is not None else int(ev.khi[sp, -1])
            lo = min(lo, int(ev.klo[sp, 0])) if lo is not None else int(ev.klo[sp, 0])
        return 0 if hi is None or lo is None else max(hi - lo, 0) + 1

    def _events(self, batch: EventBatch | None, replay: bool) -> Events:
        low = self.low
        L = self.lanes
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
        starts = _group_starts(times) if exact is None else _exact_group_starts(exact)
        sizes = np.diff(np.append(starts, n))
        groups = len(starts)
        tg = np.repeat(np.arange(self._tg, self._tg + groups, dtype=np.int64), sizes)
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
                self._partition_ids(batch, types, g, part.attrs, pid[g])
                continue
            pid[g], counts, flat = self._qualified_ids(batch, types, tg, g, copies)
            base = sum(len(x) for x in extra)
            xptr[g, 0] = base
            np.cumsum(counts, out=xptr[g, 1:])
            xptr[g, 1:] += base
            extra.append(flat)
        copies.sort()
        cp = np.array(copies, dtype=np.int64).reshape(-1, 4)
        # (every row is written: no fill first, but for the one row of no filters)
        filt = (
            np.empty((len(low.filters), n), np.bool_) if low.filters else np.ones((1, n), np.bool_)
        )
        for f, rule in enumerate(low.filters):
            filter_mask(batch, rule, filt[f])
        bound = Bound(types, filt, pid)
        wres = np.zeros((max(len(low.weights), 1), n, L), dtype=np.int64)
        for w, name in enumerate(low.weights):
            wres[w] = self._weights(batch, w, name, bound)
        aval = np.zeros((max(len(low.extremes), 1), n), dtype=np.float64)
        for a, name in enumerate(low.extremes):
            if name == TIME_GROUP:  # a negative query's latest start (see program)
                aval[a] = tg
            else:
                aval[a] = self._extremes(batch, a, name, bound)
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
            linv=self._inverses(tg),
        )

    def _inverses(self, tg: np.ndarray) -> np.ndarray:
        """The inverses of 1 .. (the most events of a time group) + 1 modulo each lane's
        prime, for the lazy windows' Kleene diagonals (row m: 1 / m; row 0 unused)."""
        L = self.lanes
        if not self.prog.c_lloop.any() or not len(tg):
            return np.zeros((1, L), dtype=np.int64)
        most = int(np.bincount(tg - tg[0]).max()) + 2
        primes = [int(p) for p in self.mod.p]
        return np.array(
            [[0] * L] + [[pow(m, p - 2, p) for p in primes] for m in range(1, most + 1)],
            dtype=np.int64,
        )

    def _partition_ids(
        self, batch: EventBatch, types: np.ndarray, g: int, attrs: tuple[str, ...], out: np.ndarray
    ) -> None:
        """Write each event's instance of partitioning ``g`` into ``out`` (which holds -1,
        no instance, for every event), making the instances of new keys."""
        ok = (self.low.program.part_role[g] > 0)[types]
        cols = []
        for a in attrs:
            col = batch.columns.get(a)
            if col is None:
                return
            ok &= col.valid
            cols.append(col)
        index = np.flatnonzero(ok)
        if not len(index):
            return
        inv, keys, _ = _keys_of(cols, index, False)  # (no columns: one key, ())
        found = [self._inst.get((g, key)) for key in keys]
        missing = [i for i, inst in enumerate(found) if inst is None]
        ids = np.array([-1 if inst is None else inst for inst in found], dtype=np.int64)
        if missing:
            ids[missing] = self._new_instances(g, [keys[i] for i in missing])
        out[index] = ids[inv]

    def _qualified_ids(
        self,
        batch: EventBatch,
        types: np.ndarray,
        tg: np.ndarray,
        g: int,
        copies: list[tuple[int, int, int, int]],
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Instances of a partitioning with qualified attributes (see
        :class:`~trendagg.kernels.lower.builder.Partitioning`): per event its own level's
        instance (-1: none), and the agreeing instances of higher levels as counts per
        event and their ids, one list after the other. An instance made for this chunk
        is born at the time group of its first event: only events from then on go to
        it, and ``copies`` gets (time group, level, instance, the nearest lower-level
        instance alive then, which it starts from) unless it starts empty."""
        part = self.low.partitionings[g]
        n = len(batch)
        code = np.array([part.level_of(t) for t in self.low.types] + [-1], dtype=np.int64)
        level_of = np.where(self.low.program.part_role[g][types] > 0, code[types], -1)
        own = np.full(n, -1, dtype=np.int64)
        born: dict[int, int] = {}  # instances made for this chunk: their first time group
        found: list[tuple[np.ndarray, np.ndarray, list[tuple[object, ...]]]] = []
        for level, positions in enumerate(part.levels):
            ok = level_of == level
            cols = []
            for p in positions:
                col = batch.columns.get(part.attrs[p])
                if col is None:
                    ok[:] = False
                    break
                ok &= col.valid
                cols.append(col)
            index = np.flatnonzero(ok)
            if not len(index):
                continue
            inv, values, first = _keys_of(cols, index)
            keys = [_widen(len(part.attrs), positions, v) for v in values]
            ids = np.array([self._inst.get((g, key), -1) for key in keys], dtype=np.int64)
            missing = np.flatnonzero(ids < 0).tolist()
            if missing:
                ids[missing] = self._new_instances(g, [keys[i] for i in missing])
                for i in missing:
                    inst, at = int(ids[i]), int(tg[index[first[i]]])
                    born[inst] = at
                    parent = self._template_of(g, level, keys[i], at, born)
                    if parent >= 0:
                        copies.append((at, level, inst, parent))
            own[index] = ids[inv]
            if level < len(part.levels) - 1:
                found.append((index, inv, keys))
        counts = np.zeros(n, dtype=np.int64)
        lists: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []
        for index, inv, keys in found:
            order = np.argsort(inv, kind="stable")
            bounds = np.searchsorted(inv[order], np.arange(len(keys) + 1))
            level = part.levels.index(_positions(keys[0]))
            for i, key in enumerate(keys):
                below = self._below.get((g, level, key))
                if not below:
                    continue
                ids = np.array(sorted(below, key=lambda d: born.get(d, -1)), dtype=np.int64)
                since = np.array([born.get(d, -1) for d in ids.tolist()], dtype=np.int64)
                events = index[order[bounds[i] : bounds[i + 1]]]
                if since[-1] < 0:
                    count = np.full(len(events), len(ids), dtype=np.int64)
                else:
                    count = np.searchsorted(since, tg[events], side="right")
                counts[events] = count
                lists.append((events, count, ids))
        ptr = np.zeros(n + 1, dtype=np.int64)
        np.cumsum(counts, out=ptr[1:])
        flat = np.empty(int(ptr[-1]), dtype=np.int64)
        for events, count, ids in lists:
            total = int(count.sum())
            if not total:
                continue
            at = np.arange(total) - np.repeat(np.cumsum(count) - count, count)
            flat[np.repeat(ptr[events], count) + at] = ids[at]
        return own, counts, flat

    def _template_of(
        self, g: int, level: int, key: tuple[object, ...], at: int, born: dict[int, int]
    ) -> int:
        """The instance a new one of ``level`` starts from: the agreeing instance of the
        highest lower level that exists at time group ``at``, or -1 (it starts empty)."""
        levels = self.low.partitionings[g].levels
        for lower_level in range(level - 1, -1, -1):
            inst = self._inst.get((g, _narrow(key, levels[lower_level])))
            if inst is not None and born.get(inst, -1) <= at:
                return inst
        return -1

    def _index_instance(self, g: int, key: tuple[object, ...], inst: int, add: bool) -> None:
        """Enter (or remove) an instance of a qualified partitioning in ``_below``: the
        instances of higher levels that agree with each lower-level key."""
        levels = self.low.partitionings[g].levels
        level = levels.index(_positions(key))
        for lower_level in range(level):
            entry = (g, lower_level, _narrow(key, levels[lower_level]))
            if add:
                self._below.setdefault(entry, set()).add(inst)
            else:
                below = self._below[entry]
                below.discard(inst)
                if not below:
                    del self._below[entry]

    def _kind(self, name: str, ints: bool, floats: bool) -> None:
        """An aggregated attribute that holds integers and decimals both (here, or one kind
        here and the other before) needs hidden registers: lay the program out again."""
        if name in self.low.mixed or not (ints or floats):
            return
        kind = "mixed" if ints and floats else "int" if ints else "float"
        if kind == "mixed" or self._kinds.setdefault(name, kind) != kind:
            raise _Rebuild(mixed=name)

    def _bound(self, bound: Bound, extreme: bool, column: int) -> np.ndarray:
        """True for the events that a variable binds whose state sums the weight column
        ``column`` (or, ``extreme``, reads that extreme column): their values count."""
        if self._binders is None:
            self._binders = self._find_binders()
        out = np.zeros(len(bound.types), dtype=np.bool_)
        for ty, f, g in self._binders[extreme][column]:
            chosen = (bound.types == ty) & (bound.pid[g] >= 0)
            if f >= 0:
                chosen &= bound.filt[f]
            out |= chosen
        return out

    def _find_binders(self) -> tuple[list[list[tuple[int, int, int]]], ...]:
        """Per weight column, then per extreme column: the (type, filter or -1,
        partitioning) of each binding whose state reads it."""
        prog = self.low.program
        found: tuple[list[set[tuple[int, int, int]]], ...] = (
            [set() for _ in self.low.weights],
            [set() for _ in self.low.extremes],
        )
        for ty in range(len(prog.ty_ptr) - 1):
            for bi in prog.ty_bind[prog.ty_ptr[ty] : prog.ty_ptr[ty + 1]].tolist():
                q, f = int(prog.b_q[bi]), int(prog.b_f[bi])
                gs = int(prog.q_soff[q] + prog.b_s[bi])
                binder = (ty, f, int(prog.q_part[q]))
                for w in prog.sum_w[prog.sum_ptr[gs] : prog.sum_ptr[gs + 1]].tolist():
                    found[0][w].add(binder)
                for a in prog.ext_a[prog.ext_ptr[gs] : prog.ext_ptr[gs + 1]].tolist():
                    found[1][a].add(binder)
        g = self.low.gloria
        if g is not None:  # the member queries' contexts bind their events
            gp = g.program
            for ty in range(len(gp.ty_ptr) - 1):
                for x in gp.ty_x[gp.ty_ptr[ty] : gp.ty_ptr[ty + 1]].tolist():
                    binder = (ty, int(gp.x_f[x]), int(gp.x_g[x]))
                    for qi in range(int(gp.x_q_ptr[x]), int(gp.x_q_ptr[x + 1])):
                        gs = int(prog.q_soff[gp.xq_q[qi]] + gp.xq_s[qi])
                        for w in prog.sum_w[prog.sum_ptr[gs] : prog.sum_ptr[gs + 1]].tolist():
                            found[0][w].add(binder)
                        for a in prog.ext_a[prog.ext_ptr[gs] : prog.ext_ptr[gs + 1]].tolist():
                            found[1][a].add(binder)
        return tuple([sorted(b) for b in kind] for kind in found)

    def _weights(self, batch: EventBatch, w: int, name: str, bound: Bound) -> np.ndarray:
        """Residues of the exact (scaled) values of a summed attribute, or of its hidden
        decimals column (1 where the attribute holds a decimal, see program). A text or
        mixed column counts at the events a summing variable binds: the first of them
        that holds what is not a number stops the run, as in the Python engines."""
        out = np.zeros((len(batch), self.lanes), dtype=np.int64)
        attr, role = source(name)
        col = batch.columns.get(attr)
        if col is None:
            return out
        if col.kind == "int":
            if role:
                return out
            self._kind(attr, bool(col.valid.any()), False)
            return self._int_residues(w, np.where(col.valid, col.values, 0))
        if col.kind == "float":
            if role:
                out[col.valid] = 1
                return out
            self._kind(attr, False, bool(col.valid.any()))
            return self._float_residues(w, np.where(col.valid, col.values, 0.0))
        rows = np.flatnonzero(col.valid & self._bound(bound, False, w))
        values, kinds = _value_kinds(col, rows)
        bad = np.flatnonzero((kinds != 1) & (kinds != 2))
        if len(bad) and not role:
            raise not_a_number(values[int(bad[0])])
        int_rows, float_rows = rows[kinds == 1], rows[kinds == 2]
        if role:
            out[float_rows] = 1
            return out
        ints = [values[i] for i in np.flatnonzero(kinds == 1).tolist()]
        decimals = np.array([values[i] for i in np.flatnonzero(kinds == 2).tolist()], np.float64)
        self._kind(attr, len(int_rows) > 0, len(float_rows) > 0)
        if len(float_rows):  # first: the decimals may make the scale of the integers finer
            out[float_rows] = self._float_residues(w, decimals)
        if len(int_rows):
            out[int_rows] = self._int_residues(w, ints)
        return out

    def _int_residues(self, w: int, vals: np.ndarray | list[int]) -> np.ndarray:
        """Residues of integers times 2**scale: int64 values, or Python ints (any size;
        those beyond int64 exactly, in Python)."""
        if isinstance(vals, list):
            try:
                vals = np.array(vals, dtype=np.int64)
            except OverflowError:  # beyond int64
                big = max(abs(v) for v in vals)
        if isinstance(vals, np.ndarray):
            big = max(int(vals.max()), -int(vals.min())) if len(vals) else 0
        bits = big.bit_length() + self._wscale[w]
        if bits > self._wbits[w]:
            self._need_bits(w, bits)
        primes = self.mod.p.tolist()
        out = np.zeros((len(vals), self.lanes), dtype=np.int64)
        if isinstance(vals, list):
            scale = 2 ** self._wscale[w]
            out[:] = [[v * scale % p for p in primes] for v in vals]
            return out
        scale_residues = np.array([pow(2, self._wscale[w], p) for p in primes], dtype=np.int64)
        # (no copy of a contiguous int64 array: the kernel only reads it)
        values = np.ascontiguousarray(vals, dtype=np.int64)
        residues_of(values, scale_residues, self.mod.p, self.mod.pinv, out)
        return out

    def _float_residues(self, w: int, vals: np.ndarray) -> np.ndarray:
        """Residues of float64 values times 2**scale (exact: the scale covers their bits)."""
        out = np.zeros((len(vals), self.lanes), dtype=np.int64)
        mant, exp = np.frexp(vals)
        m = (mant * 2.0**53).astype(np.int64)
        nz = m != 0
        if nz.any():
            need = int((53 - exp[nz]).max())
            if need > self._wscale[w]:
                self._need_scale(w, need)
            bits = int(exp[nz].max()) + self._wscale[w] + 1
            if bits > self._wbits[w]:
                self._need_bits(w, bits)
        self._wfloat[w] = True
        shift = np.where(nz, exp - 53 + self._wscale[w], 0).astype(np.int64)
        top = int(shift.max()) if len(vals) else 0
        for lane, p in enumerate(self.mod.p.tolist()):
            table = np.array([pow(2, s, p) for s in range(top + 1)], dtype=np.int64)
            mulmod_arrays(np.mod(m, p), table[shift], p, float(self.mod.pinv[lane]), out[:, lane])
        return out

    def _need_bits(self, w: int, bits: int) -> None:
        self._wbits[w] = bits
        self._bound_changed()

    def _bound_changed(self) -> None:
        """The weights' or partitions' bits grew: a smaller capacity, maybe more lanes."""
        self.lim[0] = capacity(self.lanes, max(self._wbits, default=1), self._pbits)
        if self.lim[0] < self._need:
            raise _Rebuild()

    def _need_scale(self, w: int, scale: int) -> None:
        old = self._wscale[w]
        self._wscale[w] = scale
        self._wbits[w] += scale - old
        if self._tg or self._inst:
            raise _Rebuild()  # accumulated sums are at the old scale
        self._bound_changed()

    def _extremes(self, batch: EventBatch, a: int, name: str, bound: Bound) -> np.ndarray:
        """float64 values of a MIN/MAX attribute, or of its hidden integers column (NaN,
        no value, where the attribute holds a decimal; see program); their ranks for an
        attribute of words or integers beyond 2**53 (see :mod:`~trendagg.kernels.ranks`;
        the first such values lay the open windows out again in ranks)."""
        n = len(batch)
        attr, role = source(name)
        col = batch.columns.get(attr)
        if col is None:
            return np.zeros(n, dtype=np.float64)
        if attr in self._ranks:
            return self._ranked(attr, role, col, self._bound(bound, True, a))
        if col.kind == "int":
            if not role:
                self._kind(attr, bool(col.valid.any()), False)
            vals = np.where(col.valid, col.values, 0)
            if n and max(int(vals.max()), -int(vals.min())) > _EXACT_FLOAT_INT:
                raise _Rebuild(ranked=attr)
            return vals.astype(np.float64)
        if col.kind == "float":
            if role:
                return np.full(n, np.nan)
            self._kind(attr, False, bool(col.valid.any()))
            self._xint[a] = False
            return np.where(col.valid, col.values, 0.0)
        rows = np.flatnonzero(col.valid & self._bound(bound, True, a))
        values, kinds = _value_kinds(col, rows)
        if (kinds == 0).any():
            raise _no_order(attr, values[int(np.flatnonzero(kinds == 0)[0])])
        int_at, float_at = np.flatnonzero(kinds == 1).tolist(), np.flatnonzero(kinds == 2).tolist()
        ints = [values[i] for i in int_at]
        if (kinds == 3).any() or any(abs(v) > _EXACT_FLOAT_INT for v in ints):  # type: ignore[arg-type]
            raise _Rebuild(ranked=attr)
        if not role:
            self._kind(attr, len(int_at) > 0, len(float_at) > 0)
        out = np.full(n, np.nan)
        out[rows[int_at]] = ints
        if not role:
            out[rows[float_at]] = [values[i] for i in float_at]
            self._xint[a] = self._xint[a] and not float_at
        return out

    def _ranked(self, attr: str, role: str, col: Column, chosen: np.ndarray) -> np.ndarray:
        """Ranks (float64) of the values of a ranked attribute at the events whose
        variables read it (``chosen``), or at its integers (``role``); NaN elsewhere."""
        out = np.full(len(col.valid), np.nan)
        rows = np.flatnonzero(col.valid & chosen)
        distinct: np.ndarray | list[object]
        if col.kind in ("int", "float"):
            vals = col.values[rows]
            if col.kind == "float":
                rows, vals = rows[~np.isnan(vals)], vals[~np.isnan(vals)]
            if not role:
                self._kind(
                    attr, col.kind == "int" and len(rows) > 0, col.kind == "float" and len(rows) > 0
                )
            elif col.kind == "float":
                return out
            distinct, inverse = np.unique(vals, return_inverse=True)
            if col.kind == "float":
                distinct = distinct.tolist()
        elif col.kind == "text":
            if role:
                return out
            assert col.dictionary is not None
            used, inverse = np.unique(col.values[rows], return_inverse=True)
            distinct = [col.dictionary[c] for c in used.tolist()]
        else:
            values, kinds = _value_kinds(col, rows)
            if (kinds == 0).any():
                raise _no_order(attr, values[int(np.flatnonzero(kinds == 0)[0])])
            if not role:
                self._kind(attr, bool((kinds == 1).any()), bool((kinds == 2).any()))
            keep = [
                v == v and (not role or k == 1) for v, k in zip(values, kinds.tolist(), strict=True)
            ]
            rows = rows[np.array(keep, dtype=np.bool_)] if len(rows) else rows
            index: dict[object, int] = {}
            inverse = np.fromiter(
                (index.setdefault(v, len(index)) for v, k in zip(values, keep, strict=True) if k),
                dtype=np.int64,
                count=len(rows),
            )
            distinct = list(index)
        if len(rows):
            out[rows] = self._rank(attr, distinct)[inverse.reshape(-1)]
        return out

    def _rank(self, attr: str, distinct: np.ndarray | list[object]) -> np.ndarray:
        """The ranks of distinct values of ``attr``; values not ranked yet renumber the
        attribute's registers of open windows first (see :mod:`~trendagg.kernels.ranks`)."""
        ranks = self._ranks[attr]
        codes = ranks.positions(distinct)
        if codes is not None:
            return codes
        st = self.st
        held = st.pool[2] > 0 or st.tpool[2] > 0 or not np.isnan(st.ixe).all()
        if held and self._pooled(attr):
            # queue entries and index nodes (NOT, NEXT) hold ranks too, where renumber()
            # does not reach: replay the open windows with every value ranked so far and
            # the new ones, so that no rank changes while they hold it
            self._ranks[attr] = ranks.merged(np.arange(len(ranks), dtype=np.int64), distinct)
            self._kept_ranks.add(attr)
            raise _Rebuild()
        if self._slots is None:
            self._slots = extreme_slots(self.low)
        slots = self._slots.get(attr, Slots())
        kept = open_ranks(self.st, slots, self._rows_of)
        new = ranks.merged(kept, distinct)
        mapping = np.full(max(len(ranks), 1), np.nan)
        if len(kept):
            held = (
                ranks.array[kept]
                if ranks.array is not None
                else [ranks.values[i] for i in kept.tolist()]
            )
            moved = new.positions(held)
            assert moved is not None
            mapping[kept] = moved
        renumber(self.st, slots, self._rows_of, mapping)
        self._ranks[attr] = new
        codes = new.positions(distinct)
        assert codes is not None
        return codes

    def _pooled(self, attr: str) -> bool:
        """True when queues or indexes (their entries, nodes and totals) may hold
        extremes of ``attr``."""
        low = self.low
        prog = low.program
        return any(
            source(low.extremes[a])[0] == attr
            for q in {*prog.nt_q.tolist(), *prog.ix_q.tolist()}
            for a in low.readouts[q].columns
        )

    def _rows_of(self, kind: str, g: int) -> np.ndarray:
        """The state rows of partitioning ``g`` (kind ``states``), or the result rows of
        grouping ``g`` (``results``), in use."""
        keys = self._inst_key if kind == "states" else self._gkey
        return np.array([i for i, k in enumerate(keys) if k is not None and k[0] == g], np.int64)

    # ------------------------------------------------------------------ rows

    def _rows(self, out: Out) -> list[ResultRow]:
        """The result rows of the windows the kernel wrote out, in the order of query,
        window and group (its repr), made a query and a register at a time (a column:
        a chunk may close many windows)."""
        n = int(out.n[0])
        if not n:
            return []
        width = self.low.max_additive
        values = self.mod.values(out.add[:n].reshape(n * width, self.lanes))
        keys = out.key[:n]
        used, at = np.unique(keys[:, 1], return_inverse=True)
        texts = [repr(self._gkey[gi][1]) for gi in used.tolist()]  # type: ignore[index]
        text_rank = {t: i for i, t in enumerate(sorted(set(texts)))}
        rank = np.array([text_rank[t] for t in texts], dtype=np.int64)[at.reshape(-1)]
        order = np.lexsort((rank, keys[:, 2], keys[:, 0]))  # (stable: as sorted() was)
        queries = keys[order, 0]
        cuts = np.flatnonzero(np.r_[True, queries[1:] != queries[:-1], True]).tolist()
        rows: list[ResultRow] = []
        with making_rows():
            for lo, hi in zip(cuts[:-1], cuts[1:], strict=True):
                rows += self._query_rows(out, values, order[lo:hi])
        return rows

    def _query_rows(self, out: Out, values: list[int], idx: np.ndarray) -> list[ResultRow]:
        """The rows of the windows the kernel wrote out at ``idx`` (one query's, in their
        order), from the exact ``values`` of every additive register written out."""
        low = self.low
        width = low.max_additive
        keys = out.key[idx]
        q = int(keys[0, 0])
        plan = self.plans[q]
        bases = (idx * width).tolist()
        cols: list[list[Any]] = [
            [values[b + r] for b in bases] for r in range(plan.layout.n_additive)
        ]
        for reg, w, decimals in low.readouts[q].sums:
            scale = self._wscale[w]
            if decimals >= 0:  # a decimal among the values: a Fraction
                cols[reg] = [
                    Fraction(v, 2**scale) if values[b + decimals] > 0 else v >> scale
                    for v, b in zip(cols[reg], bases, strict=True)
                ]
            elif self._wfloat[w]:
                cols[reg] = [Fraction(v, 2**scale) for v in cols[reg]]
            elif scale:
                cols[reg] = [v >> scale for v in cols[reg]]
        for reg, a, integers in low.readouts[q].extremes:
            cols.append(self._extreme_column(out.ext[idx], reg, a, integers))
        gkey = self._gkey
        groups = [gkey[gi][1] for gi in keys[:, 1].tolist()]  # type: ignore[index]
        return RowMaker(plan).rows(keys[:, 2].tolist(), groups, cols)

    def _extreme_column(self, ext: np.ndarray, reg: int, a: int, integers: int) -> list[Any]:
        """The values of minimum or maximum register ``reg`` (extreme column ``a``; its
        hidden integers' extreme at ``integers``, or -1) of rows ``ext``: None for none,
        a rank read back as its value, an integer where the attribute's values are."""
        col = ext[:, reg].tolist()
        ints = ext[:, integers].tolist() if integers >= 0 else None
        attr = source(self.low.extremes[a])[0]
        out: list[Any] = []
        if attr in self._ranks:  # a rank: the value, with its kind (see ranks)
            ranks = self._ranks[attr]
            for i, x in enumerate(col):
                if x != x:  # NaN: no value
                    out.append(None)
                    continue
                v = ranks.value(int(x))
                if ints is not None and not isinstance(v, str):
                    v = int(v) if x == ints[i] else float(v)  # type: ignore[arg-type]
                out.append(v)
            return out
        if ints is not None:  # equal to the integers' extreme: an integer (1 over 1.0)
            return [
                None if x != x else int(x) if x == y else x for x, y in zip(col, ints, strict=True)
            ]
        if self._xint[a]:
            return [None if x != x else int(x) for x in col]
        return [None if x != x else x for x in col]
