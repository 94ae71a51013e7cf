"""Lazy windows: the window specs whose queries keep their registers by the start of the
trends instead of per window (``q_lazy``, ``sp_lazy``).

An event of a spec with WITHIN / SLIDE windows is in that many windows, and the
window slots cost it that many register updates per state. A trend is in window
k when it starts at or after k's start (its end is in every open window), so one
set of registers per start slide holds every window; and since an event maps
every start slide's registers by the same linear map, the kernel keeps them as
``X = G Y``: a matrix G per partition instance that the events update (O(states)
each), times the registers Y that trend starts add at their own slide. A
window's results are the END vertices' rows of G times the Y of the slides at or
after its start, kept as a running total per group (``loop.lazy``'s lazy
functions; the derivation is in their comment block). An event then costs the
same for any number of windows.

A spec is lazy when every query of it allows that: additive registers only (no
MIN or MAX), no NOT and no NEXT condition, an unqualified partitioning, no cycle
through two states (nested Kleene), and at least :data:`LAZY_MIN_WINDOWS`
windows per event. Its queries keep no window slots (``q_NS`` 0) and join no
shared burst.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from trendagg.kernels.lower.builder import Builder, blocks, csr, i64
from trendagg.plan.windows import as_number

if TYPE_CHECKING:
    from trendagg.kernels.lower.program import Lowered

#: A window spec whose events fall into at least this many windows (WITHIN / SLIDE,
#: rounded up) keeps its registers by the start of the trends (lazy windows) when every
#: query of it allows that. Tests set it to 1.
LAZY_MIN_WINDOWS = 16


def _acyclic(preds: list[list[int]]) -> bool:
    """True when the states (their predecessors ``preds``, self-loops left out) have no
    cycle."""
    done: set[int] = set()
    path: set[int] = set()

    def visit(s: int) -> bool:
        if s in done:
            return True
        if s in path:
            return False
        path.add(s)
        ok = all(visit(x) for x in preds[s])
        path.discard(s)
        done.add(s)
        return ok

    return all(visit(s) for s in range(len(preds)))


def lazy_windows(b: Builder) -> None:
    """Pass: the lazy specs (see the module docstring); their queries keep no window
    slots."""
    q = b.q
    n_all = len(q["q_spec"])
    ok = [math.ceil(s.within / s.slide) >= LAZY_MIN_WINDOWS for s in b.specs]
    for qi in range(n_all):
        lo, hi = q["q_soff"][qi], q["q_soff"][qi] + q["q_S"][qi]
        plain = (
            b.plain(qi)
            and q["q_M"][qi] == 0
            and not b.parts[q["q_part"][qi]].qualified
            and _acyclic([[s for s in b.preds[gs] if s != gs - lo] for gs in range(lo, hi)])
        )
        if not plain:
            ok[q["q_spec"][qi]] = False
    b.lazy = ok
    q["q_lazy"] = [1 if ok[sp] else 0 for sp in q["q_spec"]]
    for qi in range(n_all):
        if q["q_lazy"][qi]:
            q["q_NS"][qi] = 0


def _order(b: Builder, c_lazy: list[int]) -> tuple[list[int], dict[int, int], list[list[int]]]:
    """Per class, whether a lazy one loops on itself; the rank of each lazy class (an
    order where every class comes after those it reads); and per class its ancestors
    (itself and the classes its states read, transitively) by rank."""
    q, reps, qs_c = b.q, b.reps, b.qs_c
    cpreds: list[list[int]] = []
    c_loop = []
    for qi, s in reps:
        gs = q["q_soff"][qi] + s
        cpreds.append(sorted({qs_c[q["q_soff"][qi] + src] for src in b.preds[gs] if src != s}))
        c_loop.append(1 if s in b.preds[gs] and c_lazy[qs_c[gs]] else 0)
    rank: dict[int, int] = {}

    def visit(c: int) -> None:
        if c in rank:
            return
        for pc in cpreds[c]:
            visit(pc)
        rank[c] = len(rank)

    for c in range(len(reps)):
        if c_lazy[c]:
            visit(c)
    anc: list[list[int]] = []
    for c in range(len(reps)):
        found: set[int] = set()
        todo = [c] if c_lazy[c] else []
        while todo:
            x = todo.pop()
            if x not in found:
                found.add(x)
                todo.extend(cpreds[x])
        anc.append(sorted(found, key=rank.__getitem__))
    return c_loop, rank, anc


def _rows(
    b: Builder, c_lazy: list[int], c_A: list[int], c_lw: list[int], j_c: list[int]
) -> tuple[list[int], list[int], list[int], list[int]]:
    """The offsets of each lazy class's G block, Y total and inverse diagonal, and of
    each END's D block, in an instance's row (``st.lz``), partitioning by partitioning;
    sets the row's width."""
    n_c = len(b.reps)
    c_lg, c_ly, c_ldi = [0] * n_c, [0] * n_c, [0] * n_c
    j_ld = [0] * len(j_c)
    width = 1
    for g in range(len(b.parts)):  # (an instance is of one partitioning)
        mine = [c for c in range(n_c) if c_lazy[c] and b.q["q_part"][b.reps[c][0]] == g]
        off = 0
        for c in mine:
            c_lg[c], off = off, off + c_A[c] * c_lw[c]
            c_ly[c], off = off, off + c_A[c]
            c_ldi[c], off = off, off + 1
        for j, c in enumerate(j_c):
            if c in mine:
                j_ld[j], off = off, off + c_A[c] * c_lw[c]
        width = max(width, off)
    b.widths["lz"] = width
    return c_lg, c_ly, c_ldi, j_ld


def lazy_tables(b: Builder) -> None:
    """Pass: the layout of the lazy windows' state. Per lazy class c: its ancestors
    (itself and the classes its states read, transitively, in an order where every
    class comes after those it reads), its row block of G (A registers times the A
    registers of each ancestor: ``c_lw`` columns), its Y total (A), the inverse of its
    diagonal (1); per END of a lazy query (``j``, in the order of ``c_end_q``) its D
    block (A times the columns of its class); per predecessor of a lazy state, where
    the predecessor's columns lie among its class's (:func:`predecessor_columns`); per
    lazy class, the ENDs whose D reads its Y, the read classes that read it (its
    descendants, for a start's solve) and its rank in that order. All in one additive
    row per instance (``st.lz``), partitioning by partitioning; and per query its
    result block in a group row (``st.lres``)."""
    q, t, reps = b.q, b.tables, b.reps
    n_c = len(reps)
    c_lazy = [q["q_lazy"][qi] for qi, _ in reps]
    c_loop, rank, anc = _order(b, c_lazy)
    read = t["c_read"].tolist()  # type: ignore[attr-defined]
    c_A = [q["q_A"][qi] for qi, _ in reps]
    c_lw = [len(anc[c]) * c_A[c] for c in range(n_c)]
    end_ptr = t["c_end_ptr"].tolist()  # type: ignore[attr-defined]
    j_q = t["c_end_q"].tolist()  # type: ignore[attr-defined]
    j_c = [c for c in range(n_c) for _ in range(end_ptr[c], end_ptr[c + 1])]
    c_lg, c_ly, c_ldi, j_ld = _rows(b, c_lazy, c_A, c_lw, j_c)
    ldj: list[list[tuple[int, int]]] = [[] for _ in range(n_c)]
    for j, c in enumerate(j_c):
        if c_lazy[c]:
            for pos, d in enumerate(anc[c]):
                ldj[d].append((j, pos))
    ldj_ptr, ldj_j = csr([[j for j, _ in items] for items in ldj])
    _, ldj_pos = csr([[pos for _, pos in items] for items in ldj])
    # per lazy class, the read classes that read it (transitively), by rank
    # (found from each read class's ancestors: not every pair of classes)
    below: list[list[int]] = [[] for _ in range(n_c)]
    for d in range(n_c):
        if read[d]:
            for c in anc[d]:
                if c != d:
                    below[c].append(d)
    desc = [sorted(found, key=rank.__getitem__) for found in below]
    q_lroff, _, _, gw = blocks(
        [
            [qi for qi in b.parts[g].queries if q["q_gsel"][qi] == sel and q["q_lazy"][qi]]
            for g, sel in b.grouping_of
        ],
        [1] * len(q["q_spec"]),
        q["q_A"],
        [0] * len(q["q_spec"]),
        ("lres", "-", "--"),
    )
    b.group_widths["lres"] = gw["lres"]
    b.anc = anc
    n_j, n_sp = len(j_q), len(b.specs)
    # st.lzi's columns per instance (see loop.lazy.lz_cols): per class, a stamp and a
    # count of its vertices in the stamped time group; the last entries per class,
    # END and spec; per spec, its events in the open windows and the repeatable ones;
    # the time group of the instance's starts, the first of them, its live entries
    c_last = 2 * n_c
    counts = c_last + n_c + n_j + n_sp
    t.update(
        sp_lazy=i64(b.lazy),
        # (the number of windows per event of a lazy spec, 0 for others)
        sp_nwin=i64(
            [
                math.ceil(s.within / s.slide) if lazy else 0
                for s, lazy in zip(b.specs, b.lazy, strict=True)
            ]
        ),
        # c_last, j_last, sp_last, counts, inst_tg, and the width of a row of st.lzi
        lz_off=i64(
            [
                c_last,
                c_last + n_c,
                c_last + n_c + n_j,
                counts,
                counts + 2 * n_sp,
                counts + 2 * n_sp + 3,
            ]
        ),
        c_lazy=i64(c_lazy),
        c_lloop=i64(c_loop),
        c_anc_ptr=csr(anc)[0],
        c_anc=csr(anc)[1],
        c_lw=i64(c_lw),
        c_lg=i64(c_lg),  # these five scaled by the lanes in State
        c_ly=i64(c_ly),
        c_ldi=i64(c_ldi),
        j_ld=i64(j_ld),
        q_lroff=i64(q_lroff),
        j_q=i64(j_q),
        j_c=i64(j_c),
        ldj_ptr=ldj_ptr,
        ldj_j=ldj_j,
        ldj_pos=ldj_pos,
        c_desc_ptr=csr(desc)[0],
        c_desc=csr(desc)[1],
        c_rank=i64([rank.get(c, -1) for c in range(n_c)]),
    )


def predecessor_columns(b: Builder) -> None:
    """Pass: per predecessor of a lazy state read in its instance (``pred_*``), the
    positions of its class's ancestors among those of the state's class (``lpm``)."""
    pred_ptr, pred_src = b.tables["pred_ptr"], b.tables["pred_src"]
    owner = b.owner()
    lpm: list[list[int]] = []
    for gs in range(len(b.preds)):
        c = b.qs_c[gs]
        for j in range(int(pred_ptr[gs]), int(pred_ptr[gs + 1])):  # type: ignore[index]
            pc = b.source_class(owner, gs, int(pred_src[j]))  # type: ignore[index]
            where = {d: i for i, d in enumerate(b.anc[c])}
            lpm.append([where[d] for d in b.anc[pc]] if b.q["q_lazy"][owner[gs]] else [])
    b.tables["lpm_ptr"], b.tables["lpm"] = csr(lpm)


def lazy_window_specs(low: Lowered) -> list[str]:
    """The window specs the kernel keeps by the start of the trends (lazy windows) with
    their queries, as explain prints them: ``WITHIN 86400 s SLIDE 1 s (q1, q2)``."""
    prog = low.program
    texts = []
    for sp, spec in enumerate(low.specs):
        if prog.sp_lazy[sp]:
            names = [p.name for qi, p in enumerate(low.plans) if prog.q_spec[qi] == sp]
            texts.append(
                f"WITHIN {as_number(spec.within)} s SLIDE {as_number(spec.slide)} s "
                f"({', '.join(names)})"
            )
    return texts
