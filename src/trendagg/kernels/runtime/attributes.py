"""Values of the aggregated attributes: the kinds an attribute holds, the events a
variable binds, weights as residues (the exact integers or scaled decimals a SUM or
AVG adds), MIN/MAX values as float64 or, for words and integers beyond 2**53, as
ranks (:mod:`trendagg.kernels.runtime.ranks`), and the checks that ask for a rebuild
when an attribute needs more bits, a finer scale, hidden registers or ranks.
"""

from __future__ import annotations

import math
from collections import namedtuple
from fractions import Fraction
from functools import partial
from itertools import repeat
from typing import TYPE_CHECKING, cast

import numpy as np
import numpy.typing as npt

from trendagg.errors import ExecutionError, InputError
from trendagg.io.batch import Column, EventBatch
from trendagg.io.values import shown, time_text
from trendagg.kernels._rns import capacity, mulmod_arrays, residues_of
from trendagg.kernels.lower.core import source
from trendagg.kernels.runtime import rebuild, results
from trendagg.kernels.runtime.ranks import Slots, extreme_slots, open_ranks, renumber
from trendagg.limits import WINDOW_NUMBER_LIMIT
from trendagg.plan.layout import not_a_number
from trendagg.plan.windows import as_number

if TYPE_CHECKING:
    from trendagg.kernels.runtime.executor import CompiledExecutor

_EXACT_FLOAT_INT = 2**53
_KINDS = {int: 1, float: 2, str: 3}  # value kinds; any other type: 0
Bound = namedtuple("Bound", "types filt pid")  # what tells the events a variable binds


def value_kinds(col: Column, rows: np.ndarray) -> tuple[list[object], npt.NDArray[np.int8]]:
    """The Python values of a text or mixed column at ``rows`` and the kind of each
    (1 integer, 2 decimal, 3 word, 0 anything else)."""
    if col.kind == "text":
        assert col.dictionary is not None
        words = col.dictionary
        return [words[c] for c in col.values[rows].tolist()], np.full(len(rows), 3, np.int8)
    values = [col.values[i] for i in rows.tolist()]
    kinds = np.fromiter(map(_KINDS.get, map(type, values), repeat(0)), np.int8, len(values))
    return values, kinds


def no_order(name: str, value: object) -> ExecutionError:
    return ExecutionError(
        f"MIN/MAX over attribute '{name}' needs numbers or words, but it holds {shown(repr(value))}; "
        f"read the events with the CLI or read_events(numeric=...), which reject such rows"
    )


def check_numbers(ex: CompiledExecutor, t: int | float | Fraction) -> None:
    """Window and pane numbers of time ``t`` fit the kernel's 64-bit integers."""
    for spec in ex.low.specs:
        numbers = spec.windows_of(t)
        if max(abs(numbers.start), abs(numbers.stop)) < WINDOW_NUMBER_LIMIT:
            continue
        raise InputError(
            f"time {time_text(t)} is too far from 0 for WITHIN {as_number(spec.within)} s SLIDE "
            f"{as_number(spec.slide)} s: its window numbers (time / SLIDE) pass 2**61; subtract "
            f"a base time from the times (or use a longer SLIDE)"
        )
    for pane in ex.low.panes:
        if abs(math.floor(Fraction(t) / pane)) >= WINDOW_NUMBER_LIMIT:
            raise InputError(
                f"time {time_text(t)} is too far from 0 for panes of {as_number(pane)} s (the common "
                f"divisor of the windows): its pane number passes 2**61; subtract a base "
                f"time from the times (or use windows with a longer common divisor)"
            )


def note_kind(ex: CompiledExecutor, name: str, ints: bool, floats: bool) -> None:
    """An aggregated attribute that holds integers and decimals both (here, or one kind
    here and the other before) needs hidden registers: lay the program out again."""
    if name in ex.low.mixed or not (ints or floats):
        return
    kind = "mixed" if ints and floats else "int" if ints else "float"
    if kind == "mixed" or ex._kinds.setdefault(name, kind) != kind:
        raise rebuild.Rebuild(mixed=name)


def bound_mask(
    ex: CompiledExecutor, bound: Bound, extreme: bool, column: int
) -> npt.NDArray[np.bool_]:
    """True for the events that a variable binds whose state sums the weight column
    ``column`` (or, ``extreme``, reads that extreme column): their values count."""
    if ex._binders is None:
        ex._binders = find_binders(ex)
    out = np.zeros(len(bound.types), dtype=np.bool_)
    for ty, f, g in ex._binders[extreme][column]:
        chosen = (bound.types == ty) & (bound.pid[g] >= 0)
        if f >= 0:
            chosen &= bound.filt[f]
        out |= chosen
    return out


def find_binders(ex: CompiledExecutor) -> tuple[list[list[tuple[int, int, int]]], ...]:
    """Per weight column, then per extreme column: the (type, filter or -1,
    partitioning) of each binding whose state reads it."""
    prog = ex.low.program
    found: tuple[list[set[tuple[int, int, int]]], ...] = (
        [set() for _ in ex.low.weights],
        [set() for _ in ex.low.extremes],
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
    g = ex.low.gloria
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


def weights(
    ex: CompiledExecutor, batch: EventBatch, w: int, name: str, bound: Bound
) -> npt.NDArray[np.int64]:
    """Residues of the exact (scaled) values of a summed attribute, or of its hidden
    decimals column (1 where the attribute holds a decimal, see program). A text or
    mixed column counts at the events a summing variable binds: the first of them
    that holds what is not a number stops the run, as in the Python engines."""
    out = np.zeros((len(batch), ex.lanes), dtype=np.int64)
    attr, role = source(name)
    col = batch.columns.get(attr)
    if col is None:
        return out
    if col.kind == "int":
        if role:
            return out
        note_kind(ex, attr, bool(col.valid.any()), False)
        return int_residues(ex, w, np.where(col.valid, col.values, 0))
    if col.kind == "float":
        if role:
            out[col.valid] = 1
            return out
        note_kind(ex, attr, False, bool(col.valid.any()))
        return float_residues(ex, w, np.where(col.valid, col.values, 0.0))
    rows = np.flatnonzero(col.valid & bound_mask(ex, bound, False, w))
    values, kinds = value_kinds(col, rows)
    bad = np.flatnonzero((kinds != 1) & (kinds != 2))
    if len(bad) and not role:
        raise not_a_number(values[int(bad[0])])
    int_rows, float_rows = rows[kinds == 1], rows[kinds == 2]
    if role:
        out[float_rows] = 1
        return out
    # (kind 1: the type is int, see value_kinds)
    ints = cast(list[int], [values[i] for i in np.flatnonzero(kinds == 1).tolist()])
    decimals = np.array([values[i] for i in np.flatnonzero(kinds == 2).tolist()], np.float64)
    note_kind(ex, attr, len(int_rows) > 0, len(float_rows) > 0)
    if len(float_rows):  # first: the decimals may make the scale of the integers finer
        out[float_rows] = float_residues(ex, w, decimals)
    if len(int_rows):
        out[int_rows] = int_residues(ex, w, ints)
    return out


def int_residues(
    ex: CompiledExecutor, w: int, vals: np.ndarray | list[int]
) -> npt.NDArray[np.int64]:
    """Residues of integers times 2**scale: int64 values, or Python ints (any size;
    those beyond int64 exactly, in Python)."""
    if isinstance(vals, list):
        try:
            vals = np.array(vals, dtype=np.int64)
        except OverflowError:  # beyond int64
            big = max(abs(v) for v in vals)
    if isinstance(vals, np.ndarray):
        big = max(int(vals.max()), -int(vals.min())) if len(vals) else 0
    bits = big.bit_length() + ex._wscale[w]
    if bits > ex._wbits[w]:
        need_bits(ex, w, bits)
    primes = ex.mod.p.tolist()
    out = np.zeros((len(vals), ex.lanes), dtype=np.int64)
    if isinstance(vals, list):
        scale = 2 ** ex._wscale[w]
        out[:] = [[v * scale % p for p in primes] for v in vals]
        return out
    scale_residues = np.array([pow(2, ex._wscale[w], p) for p in primes], dtype=np.int64)
    # (no copy of a contiguous int64 array: the kernel only reads it)
    values = np.ascontiguousarray(vals, dtype=np.int64)
    residues_of(values, scale_residues, ex.mod.p, ex.mod.pinv, out)
    return out


def float_residues(ex: CompiledExecutor, w: int, vals: np.ndarray) -> npt.NDArray[np.int64]:
    """Residues of float64 values times 2**scale (exact: the scale covers their bits)."""
    out = np.zeros((len(vals), ex.lanes), dtype=np.int64)
    mant, exp = np.frexp(vals)
    m = (mant * 2.0**53).astype(np.int64)
    nz = m != 0
    if nz.any():
        need = int((53 - exp[nz]).max())
        if need > ex._wscale[w]:
            need_scale(ex, w, need)
        bits = int(exp[nz].max()) + ex._wscale[w] + 1
        if bits > ex._wbits[w]:
            need_bits(ex, w, bits)
    ex._wfloat[w] = True
    shift = np.where(nz, exp - 53 + ex._wscale[w], 0).astype(np.int64)
    top = int(shift.max()) if len(vals) else 0
    for lane, p in enumerate(ex.mod.p.tolist()):
        table = np.array([pow(2, s, p) for s in range(top + 1)], dtype=np.int64)
        mulmod_arrays(np.mod(m, p), table[shift], p, float(ex.mod.pinv[lane]), out[:, lane])
    return out


def need_bits(ex: CompiledExecutor, w: int, bits: int) -> None:
    ex._wbits[w] = bits
    bound_changed(ex)


def bound_changed(ex: CompiledExecutor) -> None:
    """The weights' or partitions' bits grew: a smaller capacity, maybe more lanes."""
    ex.lim[0] = capacity(ex.lanes, max(ex._wbits, default=1), ex._pbits)
    if ex.lim[0] < ex._need:
        raise rebuild.Rebuild()


def need_scale(ex: CompiledExecutor, w: int, scale: int) -> None:
    old = ex._wscale[w]
    ex._wscale[w] = scale
    ex._wbits[w] += scale - old
    if ex._tg or ex._inst:
        raise rebuild.Rebuild()  # accumulated sums are at the old scale
    bound_changed(ex)


def extremes(
    ex: CompiledExecutor, batch: EventBatch, a: int, name: str, bound: Bound
) -> npt.NDArray[np.float64]:
    """float64 values of a MIN/MAX attribute, or of its hidden integers column (NaN,
    no value, where the attribute holds a decimal; see program); their ranks for an
    attribute of words or integers beyond 2**53 (see :mod:`~trendagg.kernels.ranks`;
    the first such values lay the open windows out again in ranks)."""
    n = len(batch)
    attr, role = source(name)
    col = batch.columns.get(attr)
    if col is None:
        return np.zeros(n, dtype=np.float64)
    if attr in ex._ranks:
        return ranked(ex, attr, role, col, bound_mask(ex, bound, True, a))
    if col.kind == "int":
        if not role:
            note_kind(ex, attr, bool(col.valid.any()), False)
        vals = np.where(col.valid, col.values, 0)
        if n and max(int(vals.max()), -int(vals.min())) > _EXACT_FLOAT_INT:
            raise rebuild.Rebuild(ranked=attr)
        return vals.astype(np.float64)
    if col.kind == "float":
        if role:
            return np.full(n, np.nan)
        note_kind(ex, attr, False, bool(col.valid.any()))
        ex._xint[a] = False
        return np.where(col.valid, col.values, 0.0)
    rows = np.flatnonzero(col.valid & bound_mask(ex, bound, True, a))
    values, kinds = value_kinds(col, rows)
    if (kinds == 0).any():
        raise no_order(attr, values[int(np.flatnonzero(kinds == 0)[0])])
    int_at, float_at = np.flatnonzero(kinds == 1).tolist(), np.flatnonzero(kinds == 2).tolist()
    ints = cast(list[int], [values[i] for i in int_at])  # (kind 1: the type is int)
    if (kinds == 3).any() or any(abs(v) > _EXACT_FLOAT_INT for v in ints):
        raise rebuild.Rebuild(ranked=attr)
    if not role:
        note_kind(ex, attr, len(int_at) > 0, len(float_at) > 0)
    out = np.full(n, np.nan)
    out[rows[int_at]] = ints
    if not role:
        out[rows[float_at]] = [values[i] for i in float_at]
        ex._xint[a] = ex._xint[a] and not float_at
    return out


def ranked(
    ex: CompiledExecutor, attr: str, role: str, col: Column, chosen: np.ndarray
) -> npt.NDArray[np.float64]:
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
            note_kind(
                ex, attr, col.kind == "int" and len(rows) > 0, col.kind == "float" and len(rows) > 0
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
        values, kinds = value_kinds(col, rows)
        if (kinds == 0).any():
            raise no_order(attr, values[int(np.flatnonzero(kinds == 0)[0])])
        if not role:
            note_kind(ex, attr, bool((kinds == 1).any()), bool((kinds == 2).any()))
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
        out[rows] = rank(ex, attr, distinct)[inverse.reshape(-1)]
    return out


def rank(
    ex: CompiledExecutor, attr: str, distinct: np.ndarray | list[object]
) -> npt.NDArray[np.float64]:
    """The ranks of distinct values of ``attr``; values not ranked yet renumber the
    attribute's registers of open windows first (see :mod:`~trendagg.kernels.ranks`)."""
    ranks = ex._ranks[attr]
    codes = ranks.positions(distinct)
    if codes is not None:
        return codes
    st = ex.st
    held = st.pool[2] > 0 or st.tpool[2] > 0 or not np.isnan(st.ixe).all()
    if held and pooled(ex, attr):
        # queue entries and index nodes (NOT, NEXT) hold ranks too, where renumber()
        # does not reach: replay the open windows with every value ranked so far and
        # the new ones, so that no rank changes while they hold it
        ex._ranks[attr] = ranks.merged(np.arange(len(ranks), dtype=np.int64), distinct)
        ex._kept_ranks.add(attr)
        raise rebuild.Rebuild()
    if ex._slots is None:
        ex._slots = extreme_slots(ex.low)
    slots = ex._slots.get(attr, Slots())
    kept = open_ranks(ex.st, slots, partial(results.rows_of, ex))
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
    renumber(ex.st, slots, partial(results.rows_of, ex), mapping)
    ex._ranks[attr] = new
    codes = new.positions(distinct)
    assert codes is not None
    return codes


def pooled(ex: CompiledExecutor, attr: str) -> bool:
    """True when queues or indexes (their entries, nodes and totals) may hold
    extremes of ``attr``."""
    low = ex.low
    prog = low.program
    return any(
        source(low.extremes[a])[0] == attr
        for q in {*prog.nt_q.tolist(), *prog.ix_q.tolist()}
        for a in low.readouts[q].columns
    )
