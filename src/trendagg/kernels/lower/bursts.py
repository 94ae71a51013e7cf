"""Bursts: the sharing sets of Kleene bursts. Per compiled burst of the plan (E+ of
queries of one partitioning, HAMLET's shared burst), one set per binding rule for E among
its members, each with its own coefficients; and the offsets of each set's burst state
in an instance row."""

from __future__ import annotations

from fractions import Fraction
from typing import TYPE_CHECKING

import numpy as np

from trendagg.kernels.lower.builder import Builder, csr, i64, index_of
from trendagg.optimizer.cost import APPLY_DENOMINATOR, APPLY_NUMERATOR, burst_event_units

if TYPE_CHECKING:
    from trendagg.kernels.program import Program


def _sets(b: Builder) -> tuple[list[list[int]], list[Fraction]]:
    """The sharing sets (``b.sets``: type, partitioning, filter, members as classes'
    representatives) and each set's burst (``b.set_bursts``); per set the queries of
    its members and the pane of its burst."""
    q = b.q
    index = {p.name: qi for qi, p in enumerate(b.plans)}
    sets: list[tuple[str, int, int, list[tuple[int, int]]]] = []
    panes: list[Fraction] = []
    for i, burst in enumerate(b.bursts):
        for names in burst.classes():
            members = [
                (index[n], b.state_names[index[n]].index(v))
                for n, v in names
                if not q["q_lazy"][index[n]]  # (see lazy.lazy_windows)
            ]
            if not members:
                continue
            qi, s = members[0]
            f = b.bindings[q["q_soff"][qi] + s][2]
            sets.append((burst.type_, q["q_part"][qi], f, members))
            b.set_bursts.append(i)
            panes.append(burst.pane)  # the plan's: a burst lies in one pane of every member
    # a type in any member query's pattern interrupts the set's bursts (role 2)
    set_queries: list[list[int]] = [sorted({qi for qi, _ in e[3]}) for e in sets]
    for entry in sets:  # a class's registers are updated once, by its representative
        classes: list[int] = []
        for qi, st_ in entry[3]:
            if b.qs_c[q["q_soff"][qi] + st_] not in classes:
                classes.append(b.qs_c[q["q_soff"][qi] + st_])
        entry[3][:] = [b.reps[c] for c in classes]
    b.sets = sets
    return set_queries, panes


def sharing_sets(b: Builder) -> None:
    """Pass: sharing sets: per compiled burst of the plan (E+ of queries of one
    partitioning), one set per binding rule for E among its members, since the
    burst's coefficients count the events a rule binds (the plan's
    ``coefficient classes``); each member a class, its registers updated once by
    its representative; the weights and extremes a set's bursts carry; burst offsets."""
    q, plans, tcode = b.q, b.plans, b.tcode
    set_queries, panes = _sets(b)
    sets = b.sets
    n = max(len(sets), 1)
    set_role = np.zeros((n, b.n_types), dtype=np.int64)
    set_wcol = np.zeros((n, 1 + len(b.weights)), dtype=np.int64)
    set_wmap = np.full((n, max(len(b.weights), 1)), -1, dtype=np.int64)
    set_acol = np.zeros((n, max(len(b.extremes), 1)), dtype=np.int64)
    set_amap = np.full((n, max(len(b.extremes), 1)), -1, dtype=np.int64)
    set_f, set_nw, set_eunits, set_na, set_boff, set_bfoff = [], [], [], [], [], []
    bw = bfw = 0
    for k, (typ, _g, f, members) in enumerate(sets):
        set_f.append(b.rule(f))
        for qi in set_queries[k]:
            for v in plans[qi].vars.values():
                set_role[k, tcode[v.type]] = 2
        set_role[k, tcode[typ]] = 1
        wl: list[int] = []
        al: list[int] = []
        for qi, s in members:
            gs = q["q_soff"][qi] + s
            for _, w in b.sums[gs]:
                index_of(wl, w)
            for _, a in b.exts[gs]:
                index_of(al, a)
        for j, w in enumerate(wl):
            set_wcol[k, 1 + j] = w
            set_wmap[k, w] = 1 + j
        for j, a in enumerate(al):
            set_acol[k, j] = a
            set_amap[k, a] = j
        set_nw.append(1 + len(wl))
        set_eunits.append(burst_event_units(1 + len(wl)))
        set_na.append(len(al))
        set_boff.append(bw)
        set_bfoff.append(bfw)
        bw += 6 + (2 + 3 * (1 + len(wl)))  # times the lanes, see State
        bfw += 2 * len(al)
        b.panes.append(panes[k])
    b.widths["bur"] = max(bw, 1)
    b.widths["burf"] = max(bfw, 1)
    set_q_ptr, set_q = csr([[qi for qi, _ in members] for *_, members in sets])
    _, set_s = csr([[s for _, s in members] for *_, members in sets])
    b.tables.update(
        set_part=i64([g for _, g, _, _ in sets]),
        set_role=set_role,
        set_f=i64(set_f),
        set_q_ptr=set_q_ptr,
        set_q=set_q,
        set_s=set_s,
        set_nw=i64(set_nw),
        set_eunits=i64(set_eunits),
        cost_apply=i64([APPLY_NUMERATOR, APPLY_DENOMINATOR]),
        set_wcol=set_wcol,
        set_wmap=set_wmap,
        set_na=i64(set_na),
        set_acol=set_acol,
        set_amap=set_amap,
        set_boff=i64(set_boff),  # scaled by the lanes in State
        set_bfoff=i64(set_bfoff),
    )


def burst_offsets(program: Program, lanes: int) -> np.ndarray:
    """``set_boff`` for ``lanes`` lanes: each set's burst state, side by side."""
    out = []
    off = 0
    for k in range(len(program.set_boff)):
        out.append(off)
        off += 6 + (2 + 3 * int(program.set_nw[k])) * lanes
    return np.array(out, dtype=np.int64)


def burst_width(program: Program, lanes: int) -> int:
    """The width of an instance's burst row for ``lanes`` lanes."""
    return max(sum(6 + (2 + 3 * int(nw)) * lanes for nw in program.set_nw), 1)
