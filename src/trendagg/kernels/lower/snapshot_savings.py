"""What the snapshot kernel computes once or skips, decided from a plan's contexts (see
:mod:`~trendagg.kernels.lower.snapshots`): contexts whose values are equal by
construction (:func:`equal_contexts`), the values that stay none (:func:`valued`), the
ENDs whose results wait for their windows to close (:func:`lazy_ends`) and the START
events that may join the last snapshot (:func:`start_groups`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from trendagg.optimizer.contexts import Context

if TYPE_CHECKING:
    from trendagg.kernels.lower.snapshots import QueryLayout


def equal_contexts(
    ctx_list: list[tuple[str, Context]],
    totals: dict[tuple[str, object], int],
    block_of: dict[tuple[int, str], int],
    holds: dict[int, set[int]],
    layouts: dict[str, QueryLayout],
    types_of: dict[str, dict[str, str]],
) -> tuple[list[int], list[int]]:
    """Contexts whose values are equal by construction, computed once (as the kernel's
    classes of states are, HAMLET's prefix sharing): per context the one that computes
    it (itself, or the first of its class that keeps a total), and per block the block
    that holds its values.

    Two contexts are equal when each is one query's non-shared Q-set (no label, no
    snapshot) whose trends arrive as values only (no total it reads holds
    coefficients), and they bind the same type with the same filter, in the same
    window spec and partitioning, with the same registers and own contributions, both
    start a trend there or neither, and read totals of equal contexts (their own:
    a self-loop), recursively; a context on a cycle through other types is alone."""
    maker: dict[int, int] = {}  # block -> the context that adds to it
    for xi, (e, x) in enumerate(ctx_list):
        if x.totalled:
            t = totals[(e, x.key)]
            for q in x.queries:
                maker[block_of[(t, q)]] = xi
    cls = [-1] * len(ctx_list)
    index: dict[tuple[object, ...], int] = {}

    def visit(xi: int, path: frozenset[int]) -> int:
        if cls[xi] >= 0:
            return cls[xi]
        e, x = ctx_list[xi]
        key: tuple[object, ...] = ("alone", xi)
        if not x.snapshot and x.label is None and len(x.queries) == 1:
            q = x.queries[0]
            lay = layouts[q]
            var = next(v for v, ty in types_of[q].items() if ty == e and v in lay.states)
            own = totals.get((e, x.key)) if x.totalled else None
            reads: list[object] = []
            for inc in x.incoming:
                src = totals.get((inc.source, inc.qset))
                if src is None:
                    continue
                if holds.get(src):  # coefficients evaluated here: alone
                    reads = ["alone"]
                    break
                m = maker.get(block_of[(src, q)])
                if src == own:
                    reads.append(-1)  # (its self-loop)
                elif m is None or m in path or m == xi:
                    reads = ["alone"]
                    break
                else:
                    reads.append(visit(m, path | {xi}))
            if "alone" not in reads and cls[xi] < 0:
                key = (
                    e,
                    lay.filters[var],
                    lay.spec,
                    lay.part,
                    lay.A,
                    lay.M,
                    lay.nmin,
                    lay.NS,
                    q in x.starts,
                    tuple(lay.cnt[var]),
                    tuple(lay.sums[var]),
                    tuple(lay.exts[var]),
                    tuple(sorted(int(r) for r in reads)),  # type: ignore[call-overload]
                )
        if cls[xi] >= 0:  # (settled while its reads were visited)
            return cls[xi]
        c = index.setdefault(key, len(index))
        cls[xi] = c
        return c

    for xi in range(len(ctx_list)):
        visit(xi, frozenset())
    first: dict[int, int] = {}
    for xi, (_, x) in enumerate(ctx_list):  # a class's first context with a total
        if x.totalled:
            first.setdefault(cls[xi], xi)
    for xi in range(len(ctx_list)):
        first.setdefault(cls[xi], xi)
    rep_of = [first[cls[xi]] for xi in range(len(ctx_list))]
    block_rep = list(range(len(block_of)))
    for xi, (e, x) in enumerate(ctx_list):
        r = rep_of[xi]
        if r != xi and x.totalled:
            re, rx = ctx_list[r]
            mine = block_of[(totals[(e, x.key)], x.queries[0])]
            block_rep[mine] = block_of[(totals[(re, rx.key)], rx.queries[0])]
    return rep_of, block_rep


def valued(
    ctx_list: list[tuple[str, Context]],
    rep_of: list[int],
    xq: list[list[int]],
    x_ring: list[int],
    xq_blk: list[int],
    xq_start: list[int],
    xe_pair_l: list[list[int]],
    xr: list[list[int]],
) -> list[int]:
    """Per query of a context, whether its values (the trends that arrive as values,
    not coefficients) can be other than none: it starts a trend there, evaluates
    coefficients, or reads a block that some context writes such values to (a
    context's blocks, unless it takes snapshots: those go to its ring). A labelled
    Q-set's trends travel as coefficients only: its blocks stay empty."""
    val = [0] * len(xq_start)
    written: set[int] = set()
    changed = True
    while changed:
        changed = False
        for xi in range(len(ctx_list)):
            if rep_of[xi] != xi:
                continue
            for qi in xq[xi]:
                if val[qi]:
                    continue
                if xq_start[qi] or xe_pair_l[qi] or any(b in written for b in xr[qi]):
                    val[qi] = 1
                    changed = True
                    if x_ring[xi] < 0 and xq_blk[qi] >= 0:
                        written.add(xq_blk[qi])
    return val


def lazy_ends(
    ctx_list: list[tuple[str, Context]],
    layouts: dict[str, QueryLayout],
    xq: list[list[int]],
    x_ring: list[int],
    x_tot: list[int],
    xq_val: list[int],
    xq_res: list[list[int]],
    xc_ring_l: list[list[int]],
) -> list[int]:
    """The contexts whose results wait for their windows to close: every query ends
    there and its trends arrive only as coefficients (no values, no snapshot, no
    total), in one window spec. Their events add their coefficients, per snapshot and
    window, to an accumulator, and a window's close evaluates each accumulator once per
    query (SHARON's count combination at the window's end, spec ``sharon.md`` section
    3.4), instead of each event evaluating its coefficients per query."""
    out = []
    for xi, (_, x) in enumerate(ctx_list):
        ids = xq[xi]
        if x_ring[xi] >= 0 or x_tot[xi] >= 0 or not xc_ring_l[xi]:
            continue
        if any(xq_val[qi] or not xq_res[qi] for qi in ids):
            continue
        if len({layouts[q].spec for q in x.queries}) != 1:
            continue
        out.append(xi)
    return out


def start_groups(
    ctx_list: list[tuple[str, Context]],
    rings: list[int],
    layouts: dict[str, QueryLayout],
    types_of: dict[str, dict[str, str]],
    n_blocks: int,
    xq: list[list[int]],
    x_tot: list[int],
    xu_l: list[list[int]],
    xe_pair_l: list[list[int]],
    xr: list[list[int]],
    xq_res: list[list[int]],
) -> tuple[list[int], list[int], list[list[int]]]:
    """Per ring, whether a START event may join the last snapshot instead of taking its
    own (SHARON's START groups, spec ``sharon.md`` section 3.4); per block, the rings
    whose snapshots read it.

    An event joins when the blocks its context reads are as they were when the last
    live snapshot was taken (a version per ring, bumped at each write of one of them)
    and it is in the same windows: its values per query are then that snapshot's, so
    its trends are the snapshot's entry plus the identity (an evaluation is linear in
    the entries). So the context's values must come from blocks only (no coefficients
    reused or evaluated: they change without a block written), no query may end there
    (its results need the values), its queries must share a window spec, and the event
    must add no value of its own (sums, minima, maxima: two STARTs' would differ)."""
    merge = [0] * len(rings)
    spec = [-1] * len(rings)
    readers: list[list[int]] = [[] for _ in range(n_blocks)]
    for r, xi in enumerate(rings):
        e, x = ctx_list[xi]
        ids = xq[xi]
        if x_tot[xi] < 0 or xu_l[xi] or any(xe_pair_l[qi] or xq_res[qi] for qi in ids):
            continue
        if len({layouts[q].spec for q in x.queries}) != 1:
            continue
        if any(_adds_values(layouts[q], types_of[q], e) for q in x.queries):
            continue
        merge[r] = 1
        spec[r] = layouts[x.queries[0]].spec
        for b in sorted({b for qi in ids for b in xr[qi]}):
            readers[b].append(r)
    return merge, spec, readers


def _adds_values(lay: QueryLayout, types: dict[str, str], e: str) -> bool:
    """Whether the query's events of type e add values of their own (sums, extremes)."""
    var = next(v for v, ty in types.items() if ty == e and v in lay.states)
    return bool(lay.sums[var] or lay.exts[var])
