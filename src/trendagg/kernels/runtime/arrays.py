"""The executor's state and arrays: allocation (:func:`reset`, the loop's named tuples
made from the lowering's widths), growth (:func:`grow`, within the memory limit), the
scratch and output arrays of a chunk, and what a chunk needs of the lanes.

The named tuples themselves live in :mod:`trendagg.kernels.executor` (numba's cache
records them by module path).
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt

from trendagg.errors import ExecutionError
from trendagg.io.batch import EventBatch
from trendagg.kernels._rns import Moduli, capacity
from trendagg.kernels.executor import Events, GScratch, GState, Out, Scratch, State
from trendagg.kernels.loop import arith
from trendagg.kernels.lower.bursts import burst_width
from trendagg.kernels.lower.program import scaled
from trendagg.kernels.lower.snapshots import scaled_gloria
from trendagg.kernels.runtime import runs
from trendagg.kernels.runtime.ranks import Ranks
from trendagg.limits import gigabytes
from trendagg.plan.windows import as_number

if TYPE_CHECKING:
    from trendagg.kernels.runtime.executor import CompiledExecutor

SENT = arith.SENT
#: Queue entries (and index nodes) at first, in a workload with queues (a NOT or a NEXT
#: condition), as long as they take at most POOL_BYTES (at least 1,024 entries); grown
#: 4x, with a replay of the open windows, when full. (1,024 at first made issue #15's
#: varied workload with NOT replay its windows six times in 500,000 events.)
POOL = 1 << 16
POOL_BYTES = 16 << 20
#: Entries of the lazy windows' queue at first (per instance and slide: a class's starts,
#: an END's corrections, the events; see loop.lazy): as many as POOL_BYTES holds, at least
#: LAZY_POOL; grown 4x with a replay when full
LAZY_POOL = 1 << 14
RING = 8  # snapshots a ring holds per instance at first; doubled (with a replay) when full


def reset(ex: CompiledExecutor, lanes: int, closed: np.ndarray) -> None:
    """A fresh state with ``lanes`` primes, windows below ``closed`` already emitted."""
    ex.lanes = lanes
    ex.mod = Moduli(lanes)
    for attr in ex._ranks:  # no register holds a rank: the replay ranks again
        if attr not in ex._kept_ranks:
            ex._ranks[attr] = Ranks()
    ex._kept_ranks = set()
    ex.prog = scaled(ex.low.program, lanes)
    # the kernel's bound check (loop.windows.count_window_events): capacity, s + 1
    ex.lim = np.array(
        [capacity(lanes, max(ex._wbits, default=1), ex._pbits), ex.low.singles + 1],
        dtype=np.int64,
    )
    ex._inst = {}  # (their types: CompiledExecutor's)
    ex._below = {}
    ex._inst_key = []
    ex._free = []
    ex._ginst = {}
    ex._gkey = []
    ex._gref = []
    ex._gfree = []
    w = ex.low.widths
    gw = ex.low.group_widths
    L = lanes
    n_sets = max(len(ex.low.set_types), 1)
    n_gsel = max(max((len(p.groupings) for p in ex.low.partitionings), default=1), 1)
    entries = (ex._pool or first_pool(ex, L)) if queues(ex) else 1
    prog = ex.low.program
    entry = 8 * (5 + max(ex.low.max_additive * L, 2))
    lazy = (ex._lpool or max(LAZY_POOL, POOL_BYTES // entry)) if prog.sp_lazy.any() else 1
    # st.lzi's row of a new instance (prog.lz_off, see loop.lazy.lz_cols): no stamp,
    # zero counts per class; no last entries; zero event counts; no time group or
    # first start, no live entries
    n_c, (_, _, _, counts, inst_tg, width) = len(prog.c_lazy), prog.lz_off.tolist()
    ex._lzi_row = np.full(width, -1, dtype=np.int64)
    ex._lzi_row[n_c : 2 * n_c] = 0
    ex._lzi_row[counts:inst_tg] = 0
    ex._lzi_row[width - 1] = 0
    tree_nodes = entries if len(ex.low.program.ix_q) else 1
    ex.st = State(
        P=ex.mod.p,
        PINV=ex.mod.pinv,
        tot=np.zeros((0, w["tot"] * L), dtype=np.int64),
        ext=np.zeros((0, w["ext"]), dtype=np.float64),
        keys=np.zeros((0, w["keys"]), dtype=np.int64),
        mkeys=np.zeros((0, w["m"]), dtype=np.int64),
        mcnt=np.zeros((0, w["m"]), dtype=np.int64),
        mrep=np.zeros((0, w["m"]), dtype=np.int64),
        bur=np.zeros((0, burst_width(ex.prog, L)), dtype=np.int64),
        burf=np.zeros((0, w["burf"]), dtype=np.float64),
        mixed=np.zeros((0, n_sets), dtype=np.int64),
        inst_ginst=np.zeros((0, n_gsel), dtype=np.int64),
        res=np.zeros((0, gw["res"] * L), dtype=np.int64),
        rext=np.zeros((0, gw["ext"]), dtype=np.float64),
        rkeys=np.zeros((0, gw["keys"]), dtype=np.int64),
        gr_ptr=np.zeros(len(ex.low.grouping_of) + 1, dtype=np.int64),
        gr_ginst=np.zeros(0, dtype=np.int64),
        closed=closed.copy(),
        mode=np.array([ex.mode], dtype=np.int64),
        stats=np.zeros(4, dtype=np.int64),
        dlog=np.zeros((ex._log_limit, 7), dtype=np.int64),  # (no rows: no log)
        # one-dimensional when some query has a NOT or a NEXT condition (the loop's qs:
        # the kernel is compiled without the code of queues otherwise)
        neg=np.zeros(0 if queues(ex) else (0, 0)),
        blk=np.zeros((0, w["blk"]), dtype=np.int64),
        nq=np.zeros((0, w["nq"]), dtype=np.int64),
        nqa=np.zeros((0, w["nqa"] * L), dtype=np.int64),
        nqe=np.zeros((0, w["nqe"]), dtype=np.float64),
        nstart=np.zeros((0, len(ex.prog.q_spec)), dtype=np.int64),
        pnext=np.r_[np.arange(1, entries), -1].astype(np.int64),
        ptg=np.zeros(entries, dtype=np.int64),
        padd=np.zeros((entries, ex.low.max_additive * L), dtype=np.int64),
        pext=np.zeros((entries, ex.low.max_extreme), dtype=np.float64),
        # the values a log entry keeps for NEXT conditions, and their kinds (edges)
        pkey=np.zeros((entries, ex.low.key_width), dtype=np.float64),
        pknd=np.zeros((entries, ex.low.key_width), dtype=np.int64),
        pool=np.array([0, 0, 0, 0], dtype=np.int64),  # free list, full, in use, most
        # a NEXT condition's integer arithmetic left 2**53 (flag, program)
        eflag=np.zeros(2, dtype=np.int64),
        # ordered indexes of NEXT conditions (see loop.indexes): per window slot, and nodes
        ixh=np.zeros((0, w["ixh"]), dtype=np.int64),
        ixa=np.zeros((0, w["ixa"] * L), dtype=np.int64),
        ixe=np.zeros((0, w["ixe"]), dtype=np.float64),
        tkey=np.zeros(tree_nodes, dtype=np.float64),
        tleft=np.r_[np.arange(1, tree_nodes), -1].astype(np.int64),  # the free list
        tright=np.full(tree_nodes, -1, dtype=np.int64),
        tprio=np.zeros(tree_nodes, dtype=np.int64),
        town=np.zeros((tree_nodes, ex.low.max_additive * L), dtype=np.int64),
        towne=np.zeros((tree_nodes, ex.low.max_extreme), dtype=np.float64),
        ttot=np.zeros((tree_nodes, ex.low.max_additive * L), dtype=np.int64),
        ttote=np.zeros((tree_nodes, ex.low.max_extreme), dtype=np.float64),
        tpool=np.array([0, 0, 0, 0, 2017], dtype=np.int64),  # free, -, in use, most, seed
        tstack=np.zeros(3 * tree_nodes + 3, dtype=np.int64),
        # per instance: where it reads the classes of its template (see _link_templates)
        itmpl=np.zeros((0, 1), dtype=np.int64),
        # lazy windows (see loop.lazy): per instance G, Y totals, diagonals, D; stamps,
        # last entries, event counts, live entries; per group the results; the queue
        lz=np.zeros((0, w["lz"] * L), dtype=np.int64),
        lzi=np.zeros((0, len(ex._lzi_row)), dtype=np.int64),
        lres=np.zeros((0, gw["lres"] * L), dtype=np.int64),
        lnext=np.r_[np.arange(1, lazy), -1].astype(np.int64),
        lkhi=np.zeros(lazy, dtype=np.int64),
        linst=np.zeros(lazy, dtype=np.int64),
        lkind=np.zeros(lazy, dtype=np.int64),
        lidx=np.zeros(lazy, dtype=np.int64),
        lval=np.zeros((lazy, max(ex.low.max_additive * L, 2)), dtype=np.int64),
        lmeta=np.array([0, 0, 0, 0], dtype=np.int64),  # free list, full, in use, most
        # per spec: head and tail of its starts and corrections, and of its counts
        lq=np.full((len(ex.low.specs), 4), -1, dtype=np.int64),
    )
    ex._ixh_row = np.tile(np.array([SENT, -1, -1], dtype=np.int64), w["ixh"] // 3)
    # a queue slot: no window, no entries (see loop.negation)
    ex._nq_row = np.tile(np.array([SENT, -1, -1, 0], dtype=np.int64), w["nq"] // 4)
    ex._burst_template = burst_row(ex)
    # burst minima (even) and maxima (odd): none yet, so that any value compares better
    ex._extremes_template = np.where(np.arange(w["burf"]) % 2 == 0, np.inf, -np.inf)
    reset_gloria(ex, lanes, closed)


def reset_gloria(ex: CompiledExecutor, lanes: int, closed: np.ndarray) -> None:
    """The snapshot kernel's tables for ``lanes`` and the ring size, and a fresh
    state (no instance rows yet: instances.new_instances grows them)."""
    g = ex.low.gloria
    if g is None:
        ex.gp = None
        return
    R = ex._ring
    w = g.widths
    W = int(g.program.a_W[0])
    MA = max(int(g.program.a_M[0]), 1)
    ex.gp = scaled_gloria(g.program, lanes, R)
    ex.gst = GState(
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


def grow_gloria(ex: CompiledExecutor, count: int, ids: np.ndarray) -> None:
    """Rows for ``count`` instances in the snapshot kernel's state; rows ``ids``
    (new instances) hold nothing: no window, snapshot or entry."""
    if ex.gp is None:
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
        arr = getattr(ex.gst, name)
        if arr.shape[0] < count:
            size = max(count, 2 * arr.shape[0], 16)
            check_memory(ex, arr.nbytes, size * arr.shape[1] * arr.itemsize)
            new = np.zeros((size, arr.shape[1]), dtype=arr.dtype)
            new[: arr.shape[0]] = arr
            if name in fills:
                new[arr.shape[0] :] = fills[name]
            arr = new
        arrays[name] = arr
    ex.gst = ex.gst._replace(**arrays)
    gst = ex.gst
    gst.keys[ids] = SENT
    gst.sk[ids] = SENT
    gst.sx[ids] = SENT
    gst.ct[ids] = -1
    gst.meta[ids] = 0
    gst.mg[ids] = -1  # (no START group yet)
    gst.lt[ids] = -1  # (no accumulator)


def first_pool(ex: CompiledExecutor, lanes: int) -> int:
    """Queue entries at first (see POOL): what POOL_BYTES holds, within [1024, POOL]."""
    low = ex.low
    entry = 8 * (2 + low.max_additive * lanes + low.max_extreme + 2 * low.key_width)
    if len(low.program.ix_q):  # an index node per entry too: its own and its subtree's
        entry += 2 * 8 * (low.max_additive * lanes + low.max_extreme) + 8 * 8
    return min(POOL, max(1024, POOL_BYTES // entry))


def queues(ex: CompiledExecutor) -> bool:
    """True when some query has a NOT, a NEXT condition or a guard."""
    prog = ex.prog
    queued = len(prog.nt_q) or len(prog.ix_q)
    return bool(queued or (prog.g_pr >= 0).any() or (prog.q_nkind >= 0).any())


def burst_row(ex: CompiledExecutor) -> npt.NDArray[np.int64]:
    prog = ex.prog
    L = ex.lanes
    row = np.zeros(ex.st.bur.shape[1], dtype=np.int64)
    for _b, off in enumerate(prog.set_boff.tolist()):
        row[off : off + 6] = [-1, 0, -1, 0, -1, -1]
        row[off + 6 : off + 6 + L] = 1
    return row


def grow(ex: CompiledExecutor, name: str, rows: int, fill: float | int | np.ndarray) -> None:
    """Room for ``rows`` rows; new rows hold ``fill`` (a value, or a whole row)."""
    arr = getattr(ex.st, name)
    if arr.shape[0] >= rows:
        return
    size = max(rows, 2 * arr.shape[0], 16)
    check_memory(ex, arr.nbytes, size * arr.shape[1] * arr.itemsize)
    if isinstance(fill, int) and fill == 0:  # (fresh zero pages: the new rows cost
        new = np.zeros((size, arr.shape[1]), dtype=arr.dtype)  # nothing until used)
    else:
        new = np.empty((size, arr.shape[1]), dtype=arr.dtype)
        new[arr.shape[0] :] = fill
    new[: arr.shape[0]] = arr
    ex.st = ex.st._replace(**{name: new})


def check_memory(ex: CompiledExecutor, old: int, new: int) -> None:
    """Stop with the reason, not an out-of-memory kill, when the window state outgrows
    :func:`trendagg.limits.memory_limit` (its rows hold WITHIN / SLIDE + 1 window slots
    per state and partition instance)."""
    total = sum(a.nbytes for a in ex.st if isinstance(a, np.ndarray)) - old + new
    if total <= ex._memory_limit:
        return
    kept = [s for sp, s in enumerate(ex.low.specs) if not ex.prog.sp_lazy[sp]]
    if not kept:  # (lazy windows: the open windows' trend starts, see loop.lazy)
        raise ExecutionError(
            f"the compiled engine's window state needs {gigabytes(total)}, more than its "
            f"limit of {gigabytes(ex._memory_limit)} (TRENDAGG_MEMORY_LIMIT): "
            f"{len(ex._inst_key):,} partition instances and {len(ex._gkey):,} groups, "
            f"and the trend starts and events of the open windows; a shorter WITHIN or "
            f"fewer partitions make it smaller"
        )
    slots, spec = max((math.ceil(s.within / s.slide) + 1, s) for s in kept)
    raise ExecutionError(
        f"the compiled engine's window state needs {gigabytes(total)}, more than its limit of "
        f"{gigabytes(ex._memory_limit)} (TRENDAGG_MEMORY_LIMIT): "
        f"{len(ex._inst_key):,} partition instances and {len(ex._gkey):,} groups, each "
        f"with {slots:,} window slots per state (WITHIN {as_number(spec.within)} s SLIDE "
        f"{as_number(spec.slide)} s); a longer SLIDE, a shorter WITHIN or fewer partitions "
        f"make it smaller"
    )


def slot_specs(ex: CompiledExecutor) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]]:
    """Per column of ``st.keys`` and of ``st.mkeys``, the window spec of the slot it
    holds (a class's window slot, an event count's), or -1; found once per program."""
    prog = ex.prog
    if ex._slots_of is None or ex._slots_of[0] is not prog:
        keys = np.full(ex.st.keys.shape[1], -1, dtype=np.int64)
        for off, ns, sp in zip(
            prog.c_koff.tolist(), prog.c_NS.tolist(), prog.c_spec.tolist(), strict=True
        ):
            keys[off : off + ns] = sp
        counts = np.full(ex.st.mkeys.shape[1], -1, dtype=np.int64)
        for sp, (off, ns) in enumerate(
            zip(prog.sp_moff.tolist(), prog.sp_NS.tolist(), strict=True)
        ):
            counts[off : off + ns] = sp
        ex._slots_of = (prog, (keys, counts))
    return ex._slots_of[1]


def first_need(ex: CompiledExecutor, batch: EventBatch | None, ev: Events) -> int:
    """:func:`chunk_need` of the first chunk, once: the attempt after the rebuild it
    asks for finds the same events in the same partitions and windows (the kept
    answer holds while the roles and s + 1 it read stay the same)."""
    key = (ex.prog.part_role.tobytes(), int(ex.lim[1]))
    kept = ex._first
    if kept is not None and kept[0] is batch and kept[1] == key:
        return kept[2]
    need = chunk_need(ex, ev)
    ex._first = (batch, key, need)
    return need


def chunk_need(ex: CompiledExecutor, ev: Events) -> int:
    """The largest need (see :mod:`._rns`) of a window counting this chunk's events only.

    An event counts in the windows ``[klo, min(khi, klo + NS))`` of its instance: a
    +1 where that run starts and a -1 where it ends, so that the running sum over
    each instance's windows is every window's count (and the same with the events of
    repeatable types, its r) in time linear in the events, whatever NS."""
    prog = ex.prog
    s1 = int(ex.lim[1])
    best = 0
    for g in range(prog.part_role.shape[0]):
        pid = ev.pid[g]
        live = (prog.part_role[g] > 0)[ev.types] & (pid >= 0)
        if not live.any():
            continue
        rep = live & (prog.part_role[g] == 2)[ev.types]
        for sp in prog.part_sp[prog.part_sp_ptr[g] : prog.part_sp_ptr[g + 1]].tolist():
            if prog.sp_lazy[sp]:  # (the kernel counts them, see loop.windows.count_in)
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
            counts, reps = runs.running_counts(start, stop, rep, size)
            if not len(counts):
                continue
            bits = np.floor(np.log2(counts)).astype(np.int64) + 1
            best = max(best, int((reps + s1 * bits).max()))
    return best


def lazy_need(ex: CompiledExecutor, ev: Events) -> int:
    """The largest need (see :mod:`._rns`) of a lazy spec's window at the chunk's
    events, at most: per instance, the events of the open windows (counted by the
    kernel) and those of the chunk within WITHIN / SLIDE + 1 slides of each event."""
    prog = ex.prog
    if not prog.sp_lazy.any():
        return 0
    s1 = int(ex.lim[1])
    counts = int(prog.lz_off[3])  # (st.lzi's event counts, see loop.lazy.lz_cols)
    best = 0
    for g in range(prog.part_role.shape[0]):
        role = prog.part_role[g][ev.types]
        live = np.flatnonzero((role > 0) & (ev.pid[g] >= 0))
        if not len(live):
            continue
        for sp in prog.part_sp[prog.part_sp_ptr[g] : prog.part_sp_ptr[g + 1]].tolist():
            if not prog.sp_lazy[sp]:
                continue
            spec = ex.low.specs[sp]
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
            cnt = np.arange(1, len(ks) + 1) - lo + ex.st.lzi[inst, counts + 2 * sp]
            reps = rep[1:] - rep[lo] + ex.st.lzi[inst, counts + 2 * sp + 1]
            bits = np.floor(np.log2(cnt)).astype(np.int64) + 1
            best = max(best, int((reps + s1 * bits).max()))
    return best


def refresh_groups(ex: CompiledExecutor) -> None:
    lists: list[list[int]] = [[] for _ in ex.low.grouping_of]
    for (gid, _), gi in ex._ginst.items():
        lists[gid].append(gi)
    ptr = np.zeros(len(lists) + 1, dtype=np.int64)
    for i, items in enumerate(lists):
        ptr[i + 1] = ptr[i] + len(items)
    flat = np.array([x for items in lists for x in sorted(items)], dtype=np.int64)
    ex.st = ex.st._replace(gr_ptr=ptr, gr_ginst=flat)


def scratch(ex: CompiledExecutor, ev: Events) -> Scratch:
    low = ex.low
    L = ex.lanes
    n = len(ev.types)
    prog = ex.prog
    cap = lcap = 1
    slots = prog.sp_lazy == 0  # (a lazy spec's bindings take one row of lrow each)
    if n:
        nbind = np.diff(prog.ty_ptr)[ev.types]
        starts = runs.group_starts(ev.tg)
        # an event's windows are its time's: one count per time group
        nk = (ev.khi[:, starts] - ev.klo[:, starts])[slots].max(axis=0) if slots.any() else 1
        # a wildcard event is processed in many instances
        wild = ev.xptr.shape[1] > 1
        cost = nbind * (1 + np.diff(ev.xptr, axis=1).sum(axis=0)) if wild else nbind
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


def gscratch(ex: CompiledExecutor, ev: Events) -> GScratch:
    """The snapshot kernel's scratch: rows for the largest time group of the chunk."""
    g = ex.low.gloria
    assert g is not None
    gp = g.program
    prog = ex.prog
    L = ex.lanes
    R = ex._ring
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
    AL = ex.low.max_additive * L
    M = ex.low.max_extreme
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


def out(ex: CompiledExecutor, ev: Events) -> Out:
    prog = ex.prog
    L = ex.lanes
    n_groups = np.zeros(len(ex.low.grouping_of), dtype=np.int64)
    for gid, _ in ex._ginst:
        n_groups[gid] += 1
    cap = 1
    n = len(ev.types)
    counts = np.bincount(ev.types, minlength=len(ex.low.types) + 1) if n else None
    for q, plan in enumerate(ex.plans):
        g_q = int(n_groups[prog.q_grouping[q]])
        ns = int(prog.q_NS[q])
        cap += g_q * ns
        if n:
            sp = int(prog.q_spec[q])
            end_type = ex.low.types.index(plan.vars[plan.template.end].type)
            if ex.low.partitionings[prog.q_part[q]].qualified:  # in every agreeing instance
                each = 1 + np.diff(ev.xptr[prog.q_part[q]])
                ends = int(each[ev.types == end_type].sum())
            else:  # (counts: None without events only, and n > 0 here)
                ends = int(counts[end_type])  # type: ignore[index]
            span = int(ev.khi[sp, -1] - ev.klo[sp, 0]) + ns
            cap += min(ends * ns, g_q * span)
        if prog.q_lazy[q]:  # every window from the oldest open one, per group
            cap += g_q * lazy_windows(ex, int(prog.q_spec[q]), ev)
    return Out(
        n=np.zeros(1, dtype=np.int64),
        key=np.zeros((cap, 3), dtype=np.int64),
        add=np.zeros((cap, ex.low.max_additive * L), dtype=np.int64),
        ext=np.zeros((cap, ex.low.max_extreme), dtype=np.float64),
    )


def lazy_windows(ex: CompiledExecutor, sp: int, ev: Events) -> int:
    """The most windows of lazy spec ``sp`` that a call may close: from the oldest open
    one to the last that holds a queued entry or an event of the chunk."""
    st = ex.st
    hi = int(st.lkhi[st.lq[sp, 1]]) if st.lq[sp, 1] >= 0 else None
    lo = int(st.closed[sp]) if st.lq[sp, 0] >= 0 else None
    if len(ev.types):
        hi = max(hi, int(ev.khi[sp, -1])) if hi is not None else int(ev.khi[sp, -1])
        lo = min(lo, int(ev.klo[sp, 0])) if lo is not None else int(ev.klo[sp, 0])
    return 0 if hi is None or lo is None else max(hi - lo, 0) + 1
