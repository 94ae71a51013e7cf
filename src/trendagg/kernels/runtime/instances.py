"""Partition instances and their keys: a new instance per new key of a time group's
events (a template's row copied into a qualified partition's), the groups they sum
into, the index from keys to instances, and the purge of instances whose windows all
closed. See :mod:`trendagg.kernels.runtime.executor` for wildcards and templates.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt

from trendagg.io.batch import Column, EventBatch
from trendagg.kernels.loop import arith, instances
from trendagg.kernels.runtime import arrays, attributes, runs

if TYPE_CHECKING:
    from trendagg.kernels.runtime.executor import CompiledExecutor

SENT = arith.SENT
#: A template instance's value at a partition attribute that does not apply to the events
#: of its level (qualified attributes); no attribute value is a tuple
WILD = ("*",)


def key_values(col: Column, index: np.ndarray, codes: bool = False) -> list[object]:
    """Python values (the value model's) of a column at the given rows (``codes``: of
    a text column's words of those codes)."""
    if col.kind == "mixed":
        return [col.values[i] for i in index.tolist()]
    if col.kind == "text":
        assert col.dictionary is not None
        words = col.dictionary
        return [words[c] for c in (index if codes else col.values[index]).tolist()]
    values: list[object] = col.values[index].tolist()
    return values


def keys_of(
    cols: list[Column], index: np.ndarray, firsts: bool = True
) -> tuple[npt.NDArray[np.int64], list[tuple[object, ...]], npt.NDArray[np.int64]]:
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
            keys = codes.tolist() if col.kind == "int" else key_values(col, codes, True)
            return (np.cumsum(present) - 1)[at], [(k,) for k in keys], np.zeros(0, np.int64)
    if all(c.kind != "mixed" for c in cols):
        # one int64 code per key (mixed radix over the columns' codes);
        # np.unique(axis=0) on the stacked codes is ten times slower
        combined = np.zeros(len(index), dtype=np.int64)
        radix = 1
        for c in cols:
            codes = runs.dense_codes(c.values[index])
            size = int(codes.max()) + 1
            if radix * size >= 2**62:
                combined = runs.dense_codes(combined)
                radix = int(combined.max()) + 1
            combined = combined * size + codes
            radix *= size
        inv = combined if len(cols) == 1 else runs.dense_codes(combined)
        first = np.empty(int(inv.max()) + 1, dtype=np.int64)
        first[inv[::-1]] = np.arange(len(inv) - 1, -1, -1)  # the last write wins
        reps = index[first]
        values = [key_values(c, reps) for c in cols]
        return inv, list(zip(*values, strict=True)), first
    per_event = list(zip(*[key_values(c, index) for c in cols], strict=True))
    distinct: dict[tuple[object, ...], int] = {}
    inv = np.fromiter(
        (distinct.setdefault(k, len(distinct)) for k in per_event),
        dtype=np.int64,
        count=len(per_event),
    )
    first = np.empty(len(distinct), dtype=np.int64)
    first[inv[::-1]] = np.arange(len(inv) - 1, -1, -1)
    return inv, list(distinct), first


def widen(width: int, positions: tuple[int, ...], values: tuple[object, ...]) -> tuple[object, ...]:
    """A key of ``width`` attributes with ``values`` at ``positions``, WILD elsewhere."""
    key: list[object] = [WILD] * width
    for p, v in zip(positions, values, strict=True):
        key[p] = v
    return tuple(key)


def narrow(key: tuple[object, ...], positions: tuple[int, ...]) -> tuple[object, ...]:
    """The key of the level of ``positions`` that agrees with ``key``."""
    return tuple(v if p in positions else WILD for p, v in enumerate(key))


def key_positions(key: tuple[object, ...]) -> tuple[int, ...]:
    """The positions where a key has a value (the level of its instance)."""
    return tuple(p for p, v in enumerate(key) if v != WILD)


def new_instances(
    ex: CompiledExecutor, g: int, keys: list[tuple[object, ...]]
) -> npt.NDArray[np.int64]:
    """Instances of partitioning ``g`` for new ``keys``: free rows first (the last
    freed first), then new rows, the arrays grown once for all of them."""
    reused = ex._free[: -len(keys) - 1 : -1]
    del ex._free[len(ex._free) - len(reused) :]
    for inst, key in zip(reused, keys, strict=False):
        ex._inst_key[inst] = (g, key)
    fresh = keys[len(reused) :]
    if fresh:
        ex._inst_key.extend((g, key) for key in fresh)
        count = len(ex._inst_key)
        if count.bit_length() > ex._pbits:
            # a group sums at most one register per row: the bound grows (as it would
            # one instance at a time: by 3 bits each time the count passes it)
            while count.bit_length() > ex._pbits:
                ex._pbits += 3
            attributes.bound_changed(ex)
        for name, fill in (
            ("tot", 0),
            ("ext", np.nan),
            ("keys", SENT),
            ("mkeys", SENT),
            ("mcnt", 0),
            ("mrep", 0),
            ("bur", ex._burst_template),  # unused rows hold no open burst
            ("burf", ex._extremes_template),
            ("mixed", -1),
            ("inst_ginst", -1),
            ("blk", SENT),
            ("nq", ex._nq_row),
            ("nqa", 0),
            ("nqe", np.nan),
            ("nstart", -1),
            ("ixh", ex._ixh_row),
            ("ixa", 0),
            ("ixe", np.nan),
            ("itmpl", -1),
            ("lz", 0),
            ("lzi", ex._lzi_row),
        ):
            arrays.grow(ex, name, count, fill)
    start = len(ex._inst_key) - len(fresh)
    ids = np.array(reused + list(range(start, start + len(fresh))), dtype=np.int64)
    arrays.grow_gloria(ex, len(ex._inst_key), ids)
    st = ex.st
    st.bur[ids] = ex._burst_template
    st.keys[ids] = SENT
    st.mkeys[ids] = SENT
    st.mixed[ids] = -1
    st.burf[ids] = ex._extremes_template
    st.blk[ids] = SENT
    st.nstart[ids] = -1  # (a freed row's queues went back to the pool in purge)
    st.lz[ids] = 0  # (a freed row has no live entry: its G may start again)
    st.lzi[ids] = ex._lzi_row
    part = ex.low.partitionings[g]
    if part.qualified:
        st.inst_ginst[ids] = -1  # a template has no trends, so no group
        for key, inst in zip(keys, ids.tolist(), strict=True):
            index_instance(ex, g, key, inst, True)
        keys_ids = [(k, i) for k, i in zip(keys, ids.tolist(), strict=True) if WILD not in k]
    else:
        keys_ids = list(zip(keys, ids.tolist(), strict=True))
    for sel, positions in enumerate(part.groupings):
        gid = ex.low.grouping_of.index((g, sel))
        groups = []
        for key, _ in keys_ids:
            gkey = tuple(key[p] for p in positions)
            gi = ex._ginst.get((gid, gkey))
            if gi is None:
                gi = new_group(ex, gid, gkey)
            ex._gref[gi] += 1
            groups.append(gi)
        st.inst_ginst[[i for _, i in keys_ids], sel] = groups
    ex._inst.update(zip([(g, key) for key in keys], ids.tolist(), strict=True))
    link_templates(ex, g, keys, ids.tolist())
    return ids


def link_templates(
    ex: CompiledExecutor, g: int, keys: list[tuple[object, ...]], ids: list[int]
) -> None:
    """``st.itmpl`` of new instances: where each reads the classes that only wildcard
    events reach (``c_tmpl``, see :func:`~trendagg.kernels.lower.templates.template_classes`):
    the template of its key (itself for a template or an unqualified partitioning;
    -1 while its key has none: then no such event is in its open windows). A new
    template is linked to the instances of its key that exist already."""
    st = ex.st
    part = ex.low.partitionings[g]
    if not part.qualified:
        st.itmpl[ids, 0] = ids
        return
    level0 = part.levels[0]
    for key, inst in zip(keys, ids, strict=True):
        if WILD in key:
            st.itmpl[inst, 0] = inst
            for other in ex._below.get((g, 0, key), ()):
                st.itmpl[other, 0] = inst
        else:
            st.itmpl[inst, 0] = ex._inst.get((g, narrow(key, level0)), -1)


def new_group(ex: CompiledExecutor, gid: int, gkey: tuple[object, ...]) -> int:
    if ex._gfree:
        gi = ex._gfree.pop()
        ex._gkey[gi] = (gid, gkey)
        ex._gref[gi] = 0
    else:
        gi = len(ex._gkey)
        ex._gkey.append((gid, gkey))
        ex._gref.append(0)
        arrays.grow(ex, "res", gi + 1, 0)
        arrays.grow(ex, "rext", gi + 1, np.nan)
        arrays.grow(ex, "rkeys", gi + 1, SENT)
        arrays.grow(ex, "lres", gi + 1, 0)
    ex.st.rkeys[gi] = SENT
    ex.st.lres[gi] = 0
    ex._ginst[(gid, gkey)] = gi
    return gi


def purge(ex: CompiledExecutor) -> None:
    """Free the partition instances (and groups) that no open window needs."""
    prog = ex.prog
    st = ex.st
    n = len(ex._inst_key)
    if not n:
        return
    # a window slot of a class, or an event count (the lanes' bound), of an open window
    # (a column of no slot: a bound no window id reaches)
    live = np.zeros(n, dtype=bool)
    for rows, specs in zip((st.keys, st.mkeys), arrays.slot_specs(ex), strict=True):
        bound = np.where(specs >= 0, st.closed[specs], np.iinfo(np.int64).max)
        live |= (rows[:n] >= bound).any(axis=1)
    live |= st.lzi[:n, -1] > 0  # entries of the lazy windows' queue
    dead = [i for i in np.flatnonzero(~live).tolist() if ex._inst_key[i] is not None]
    if dead and arrays.queues(ex):  # (queues and indexes have rows to let go)
        instances.release_rows(prog, st, np.array(dead, dtype=np.int64))
    for inst in dead:
        entry = ex._inst_key[inst]
        if entry is None:
            continue
        g, key = entry
        del ex._inst[entry]
        ex._inst_key[inst] = None
        ex._free.append(inst)
        if ex.low.partitionings[g].qualified:
            index_instance(ex, g, key, inst, False)
            if WILD in key:  # (no event of its key in an open window: nothing to read)
                for other in ex._below.get((g, 0, key), ()):
                    st.itmpl[other, 0] = -1
                continue
        for sel in range(len(ex.low.partitionings[g].groupings)):
            gi = int(st.inst_ginst[inst, sel])
            ex._gref[gi] -= 1
            if ex._gref[gi] == 0 and (st.rkeys[gi] == SENT).all() and not st.lres[gi].any():
                gentry = ex._gkey[gi]
                assert gentry is not None
                del ex._ginst[gentry]
                ex._gkey[gi] = None
                ex._gfree.append(gi)


def partition_ids(
    ex: CompiledExecutor,
    batch: EventBatch,
    types: np.ndarray,
    g: int,
    attrs: tuple[str, ...],
    out: np.ndarray,
) -> None:
    """Write each event's instance of partitioning ``g`` into ``out`` (which holds -1,
    no instance, for every event), making the instances of new keys."""
    ok = (ex.low.program.part_role[g] > 0)[types]
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
    inv, keys, _ = keys_of(cols, index, False)  # (no columns: one key, ())
    found = [ex._inst.get((g, key)) for key in keys]
    missing = [i for i, inst in enumerate(found) if inst is None]
    ids = np.array([-1 if inst is None else inst for inst in found], dtype=np.int64)
    if missing:
        ids[missing] = new_instances(ex, g, [keys[i] for i in missing])
    out[index] = ids[inv]


def qualified_ids(
    ex: CompiledExecutor,
    batch: EventBatch,
    types: np.ndarray,
    tg: np.ndarray,
    g: int,
    copies: list[tuple[int, int, int, int]],
) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64], npt.NDArray[np.int64]]:
    """Instances of a partitioning with qualified attributes (see
    :class:`~trendagg.kernels.lower.builder.Partitioning`): per event its own level's
    instance (-1: none), and the agreeing instances of higher levels as counts per
    event and their ids, one list after the other. An instance made for this chunk
    is born at the time group of its first event: only events from then on go to
    it, and ``copies`` gets (time group, level, instance, the nearest lower-level
    instance alive then, which it starts from) unless it starts empty."""
    part = ex.low.partitionings[g]
    n = len(batch)
    code = np.array([part.level_of(t) for t in ex.low.types] + [-1], dtype=np.int64)
    level_of = np.where(ex.low.program.part_role[g][types] > 0, code[types], -1)
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
        inv, values, first = keys_of(cols, index)
        keys = [widen(len(part.attrs), positions, v) for v in values]
        ids = np.array([ex._inst.get((g, key), -1) for key in keys], dtype=np.int64)
        missing = np.flatnonzero(ids < 0).tolist()
        if missing:
            ids[missing] = new_instances(ex, g, [keys[i] for i in missing])
            for i in missing:
                inst, at = int(ids[i]), int(tg[index[first[i]]])
                born[inst] = at
                parent = template_of(ex, g, level, keys[i], at, born)
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
        level = part.levels.index(key_positions(keys[0]))
        for i, key in enumerate(keys):
            below = ex._below.get((g, level, key))
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
        nth = np.arange(total) - np.repeat(np.cumsum(count) - count, count)  # in its list
        flat[np.repeat(ptr[events], count) + nth] = ids[nth]
    return own, counts, flat


def template_of(
    ex: CompiledExecutor, g: int, level: int, key: tuple[object, ...], at: int, born: dict[int, int]
) -> int:
    """The instance a new one of ``level`` starts from: the agreeing instance of the
    highest lower level that exists at time group ``at``, or -1 (it starts empty)."""
    levels = ex.low.partitionings[g].levels
    for lower_level in range(level - 1, -1, -1):
        inst = ex._inst.get((g, narrow(key, levels[lower_level])))
        if inst is not None and born.get(inst, -1) <= at:
            return inst
    return -1


def index_instance(
    ex: CompiledExecutor, g: int, key: tuple[object, ...], inst: int, add: bool
) -> None:
    """Enter (or remove) an instance of a qualified partitioning in ``_below``: the
    instances of higher levels that agree with each lower-level key."""
    levels = ex.low.partitionings[g].levels
    level = levels.index(key_positions(key))
    for lower_level in range(level):
        entry = (g, lower_level, narrow(key, levels[lower_level]))
        if add:
            ex._below.setdefault(entry, set()).add(inst)
        else:
            below = ex._below[entry]
            below.discard(inst)
            if not below:
                del ex._below[entry]
