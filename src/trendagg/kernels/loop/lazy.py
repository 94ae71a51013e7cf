"""Lazy windows in the loop: many windows per event at the cost of one (the tables:
:func:`~trendagg.kernels.lower.lazy.lazy_windows`).
"""

from __future__ import annotations

import numpy as np

from trendagg.jit import njit
from trendagg.kernels import JIT_INLINE, JIT_INNER
from trendagg.kernels._borrow import borrow
from trendagg.kernels._rns import mulmod
from trendagg.kernels.loop.arith import addmod

# A lazy window spec (lower/lazy.py's lazy_windows) keeps, per partition instance, the
# registers of each state class split by the start slide of their trends: X[c][p] sums
# the registers of c's vertices over the trends that start in slide p (the slide of time
# t is khi(t), the end of the window numbers of t). A trend is in window k iff it starts
# in a slide after k (k < p) and ends before k closes, so at the close of window k its
# results are the END vertices' registers summed over the slides p > k. Every event maps
# X[.][p] by the same linear map for every p (its vertex adds the predecessors' registers,
# and its own weights times its count), and a trend start adds at its own slide only; so
# the kernel keeps X = G Y: a lower triangular matrix G per instance (row block c_lg of
# class c: its A registers times the A registers of each ancestor, ``c_anc``; stored
# minus the identity, so that a fresh row is zeros), which each vertex's row updates in
# O(ancestors), and the registers Y that starts add, kept only as per-slide deltas in a
# queue (entries: kind 0, class d: Y of d added at that slide). A start solves
# G dY = start (forward substitution over the start's class and those that read it; the
# diagonal of a Kleene class is prod(1 + g) over its time groups of g vertices, whose
# inverse ``c_ldi`` is kept with a table of inverses, ``ev.linv``).
#
# The results: per END of a lazy query (j) a row vector D_j, the sum of its END vertices'
# rows of G, so that the results over the live slides are D_j . TY + TZ_j, where TY sums
# the live slides' Y (``c_ly``) and TZ_j the live slides' corrections: a Y added at slide
# p after some END vertices must not count for them, so the Z entry of (j, p) (kind 1)
# gets -D_j . dY, and a start that is itself an END adds its own registers there. A
# group's total ``st.lres`` moves by D_j's change times TY when an END vertex comes, and
# by the expiring entries when a window closes (a start's entry: -(D_j now) . dY, so
# that the slide's Y counts for the END vertices after it; a Z entry: -Z). Entries of one
# instance, kind, class (or END) and slide are one entry. Kind 2 counts an instance's
# events in the open windows (the lanes' bound, see count_in). Everything is modulo
# the lanes' primes: G's entries are huge numbers, the windows' results are not.
# (st.lzi per instance: stamps per class, last entries per class, END and spec, event
# counts and repeatable ones per spec, live entries; the pool: lnext lkhi linst lkind
# lidx lval, st.lmeta = [free list, full, in use, most], st.lq per spec: head, tail.)


@njit(**JIT_INLINE)
def lz_cols(prog):  # type: ignore[no-untyped-def]
    """The first columns in st.lzi of: the last entries per class, END and spec; per
    spec, its events in the open windows and the repeatable ones; per instance, the time
    group of its starts, the first of them (linked through sc.lent[., 4]) and its live
    entries (its first columns: per class, a stamp and a count of its vertices in the
    stamped time group; the layout is ``prog.lz_off``, see program.lazy_tables)."""
    off = prog.lz_off
    return off[0], off[1], off[2], off[3], off[4]


@njit(**JIT_INLINE)
def lz_dot(st, inst, at, A, lane, vec, off):  # type: ignore[no-untyped-def]
    """D_j's row r at one ancestor's block (its A columns from ``at``) times the A
    registers of vec from ``off``, at one lane: what a start's dY adds to an END."""
    L = st.P.shape[0]
    p = st.P[lane]
    acc = 0
    for r2 in range(A):
        v = mulmod(st.lz[inst, at + r2 * L + lane], vec[off + r2 * L + lane], p, st.PINV[lane])
        acc = addmod(acc, v, p)
    return acc


@njit(**JIT_INLINE)
def lz_entry(prog, st, inst, kind, idx, sp, khi):  # type: ignore[no-untyped-def]
    """The queue entry of (inst, kind, idx) at slide khi: the last one if it is that, else
    a new one at the queue's tail (-1, and the pool marked full, when there is none)."""
    c_last, j_last, sp_last, _, inst_tg = lz_cols(prog)
    live = inst_tg + 2
    col = (c_last if kind == 0 else j_last if kind == 1 else sp_last) + idx
    x = st.lzi[inst, col]
    if (
        x >= 0
        and st.linst[x] == inst
        and st.lkind[x] == kind
        and st.lidx[x] == idx
        and st.lkhi[x] == khi
    ):
        return x
    x = st.lmeta[0]
    if x < 0:
        st.lmeta[1] = 1
        return np.int64(-1)
    st.lmeta[0] = st.lnext[x]
    st.lmeta[2] += 1
    if st.lmeta[2] > st.lmeta[3]:
        st.lmeta[3] = st.lmeta[2]
    st.linst[x] = inst
    st.lkind[x] = kind
    st.lidx[x] = idx
    st.lkhi[x] = khi
    st.lnext[x] = -1
    for r in range(st.lval.shape[1]):
        st.lval[x, r] = 0
    qi = 2 if kind == 2 else 0  # (counts: their slides are rounded up, see count_in)
    tail = st.lq[sp, qi + 1]
    if tail < 0:
        st.lq[sp, qi] = x
    else:
        st.lnext[tail] = x
    st.lq[sp, qi + 1] = x
    st.lzi[inst, col] = x
    st.lzi[inst, live] += 1
    return x


@njit(**JIT_INNER)
def lazy_phase1(prog, st, ev, sc, i, j):  # type: ignore[no-untyped-def]
    """Phase 1 of the lazy bindings of events i..j (one time group; compute leaves them
    out): once per time group, in a function of its own (see other_instances)."""
    prog = borrow(prog)
    st = borrow(st)
    ev = borrow(ev)
    sc = borrow(sc)
    for e in range(i, j):
        ty = ev.types[e]
        for bj in range(prog.ty_ptr[ty], prog.ty_ptr[ty + 1]):
            bi = prog.ty_bind[bj]
            q = prog.b_q[bi]
            if not prog.q_lazy[q]:
                continue
            f = prog.b_f[bi]
            if f >= 0 and not ev.filt[f, e]:
                continue
            inst = ev.pid[prog.q_part[q], e]
            if inst >= 0:
                lazy_compute(prog, st, ev, sc, q, prog.b_s[bi], inst, e)


@njit(**JIT_INLINE)
def lazy_compute(prog, st, ev, sc, q, s, inst, e):  # type: ignore[no-untyped-def]
    """Phase 1 of a lazy binding: event e's vertex as a row of G over its class's columns
    (the predecessors' rows, its own weights) and its start registers, into the scratch."""
    L = st.P.shape[0]
    P = st.P
    PINV = st.PINV
    A = prog.q_A[q]
    gs = prog.q_soff[q] + s
    c = prog.qs_c[gs]
    W = prog.c_lw[c]
    n = sc.ln[0]
    row = sc.lrow[n]
    sv = sc.lsv[n]
    for i in range(A * W * L):
        row[i] = 0
    for i in range(A * L):
        sv[i] = 0
    z = st.lz[inst]
    for j in range(prog.pred_ptr[gs], prog.pred_ptr[gs + 1]):
        pc = prog.qs_c[prog.q_soff[q] + prog.pred_src[j]]
        pw = prog.c_lw[pc]
        nb = prog.lpm_ptr[j + 1] - prog.lpm_ptr[j]
        g0 = prog.c_lg[pc]
        for r in range(A):
            for b in range(nb):
                m = prog.lpm[prog.lpm_ptr[j] + b]
                for r2 in range(A):
                    src = g0 + (r * pw + b * A + r2) * L
                    dst = (r * W + m * A + r2) * L
                    for lane in range(L):
                        row[dst + lane] = addmod(row[dst + lane], z[src + lane], P[lane])
            # the identity: the predecessor's own column (its class comes last among its
            # ancestors)
            m = prog.lpm[prog.lpm_ptr[j + 1] - 1]
            dst = (r * W + m * A + r) * L
            for lane in range(L):
                row[dst + lane] = addmod(row[dst + lane], 1, P[lane])
    if s == prog.q_start[q]:
        for lane in range(L):
            sv[lane] = 1
    # its own registers: count registers += the count, sums += weight * the count
    for jj in range(prog.cnt_ptr[gs], prog.cnt_ptr[gs + 1]):
        reg = prog.cnt_reg[jj]
        for col in range(W):
            for lane in range(L):
                i = (reg * W + col) * L + lane
                row[i] = addmod(row[i], row[col * L + lane], P[lane])
        for lane in range(L):
            sv[reg * L + lane] = addmod(sv[reg * L + lane], sv[lane], P[lane])
    for jj in range(prog.sum_ptr[gs], prog.sum_ptr[gs + 1]):
        reg = prog.sum_reg[jj]
        w = prog.sum_w[jj]
        for col in range(W):
            for lane in range(L):
                i = (reg * W + col) * L + lane
                row[i] = addmod(
                    row[i],
                    mulmod(row[col * L + lane], ev.wres[w, e, lane], P[lane], PINV[lane]),
                    P[lane],
                )
        for lane in range(L):
            sv[reg * L + lane] = addmod(
                sv[reg * L + lane],
                mulmod(sv[lane], ev.wres[w, e, lane], P[lane], PINV[lane]),
                P[lane],
            )
    sc.lent[n, 0] = q
    sc.lent[n, 1] = s
    sc.lent[n, 2] = inst
    sc.lent[n, 3] = e
    sc.ln[0] = n + 1


@njit(**JIT_INNER)
def lazy_insert_all(prog, st, ev, sc, tg):  # type: ignore[no-untyped-def]
    """Phase 2 of the lazy bindings of a time group: results of END vertices, rows of G,
    the Kleene diagonals, then per instance the starts (see the comment block above).
    A time group may hold many events (times in seconds): every pass is linear in its
    entries (counts per class and instance, starts linked per instance)."""
    prog = borrow(prog)
    st = borrow(st)
    ev = borrow(ev)
    sc = borrow(sc)
    L = st.P.shape[0]
    P = st.P
    PINV = st.PINV
    n = sc.ln[0]
    sc.ln[0] = 0
    n_c = prog.c_lazy.shape[0]
    _, _, _, _, inst_tg = lz_cols(prog)
    for i in range(n):  # vertices per (instance, Kleene class); starts per instance
        q = sc.lent[i, 0]
        inst = sc.lent[i, 2]
        c = prog.qs_c[prog.q_soff[q] + sc.lent[i, 1]]
        if prog.c_lloop[c]:
            if st.lzi[inst, c] != tg:
                st.lzi[inst, c] = tg
                st.lzi[inst, n_c + c] = 0
            st.lzi[inst, n_c + c] += 1
        sc.lent[i, 4] = -2  # no start
        if prog.c_read[c]:
            sv = sc.lsv[i]
            for r in range(prog.q_A[q] * L):
                if sv[r] != 0:
                    sc.lent[i, 4] = -1  # a start, the last of its instance's so far
            if sc.lent[i, 4] == -1:
                if st.lzi[inst, inst_tg] != tg:
                    st.lzi[inst, inst_tg] = tg
                else:
                    sc.lent[st.lzi[inst, inst_tg + 1], 4] = i
                st.lzi[inst, inst_tg + 1] = i
    for i in range(n):
        q = sc.lent[i, 0]
        inst = sc.lent[i, 2]
        e = sc.lent[i, 3]
        A = prog.q_A[q]
        c = prog.qs_c[prog.q_soff[q] + sc.lent[i, 1]]
        W = prog.c_lw[c]
        row = sc.lrow[i]
        sv = sc.lsv[i]
        starts = False
        for r in range(A * L):
            if sv[r] != 0:
                starts = True
        for j in range(prog.c_end_ptr[c], prog.c_end_ptr[c + 1]):
            qj = prog.c_end_q[j]
            gi = st.inst_ginst[inst, prog.q_gsel[qj]]
            d0 = prog.j_ld[j]
            for r in range(A * W * L):
                st.lz[inst, d0 + r] = addmod(st.lz[inst, d0 + r], row[r], P[r % L])
            res = prog.q_lroff[qj]
            nb = W // A
            for r in range(A):
                for lane in range(L):
                    p = P[lane]
                    acc = sv[r * L + lane]
                    for b in range(nb):
                        y0 = prog.c_ly[prog.c_anc[prog.c_anc_ptr[c] + b]]
                        for r2 in range(A):
                            acc = addmod(
                                acc,
                                mulmod(
                                    row[(r * W + b * A + r2) * L + lane],
                                    st.lz[inst, y0 + r2 * L + lane],
                                    p,
                                    PINV[lane],
                                ),
                                p,
                            )
                    st.lres[gi, res + r * L + lane] = addmod(
                        st.lres[gi, res + r * L + lane], acc, p
                    )
            if starts:  # a one-event trend: its own registers, at its own slide
                sp = prog.c_spec[c]
                x = lz_entry(prog, st, inst, np.int64(1), j, sp, ev.khi[sp, e])
                if x < 0:
                    return
                for r in range(A * L):
                    st.lval[x, r] = addmod(st.lval[x, r], sv[r], P[r % L])
        if prog.c_read[c]:
            g0 = prog.c_lg[c]
            for r in range(A * W * L):
                st.lz[inst, g0 + r] = addmod(st.lz[inst, g0 + r], row[r], P[r % L])
            g = st.lzi[inst, n_c + c]
            if prog.c_lloop[c] and g > 0:  # the diagonal, once per time group: (1 + g)
                st.lzi[inst, n_c + c] = 0
                di = prog.c_ldi[c]
                for lane in range(L):
                    p = P[lane]
                    cur = addmod(st.lz[inst, di + lane], 1, p)
                    st.lz[inst, di + lane] = addmod(
                        mulmod(cur, ev.linv[1 + g, lane], p, PINV[lane]), p - 1, p
                    )
    for i in range(n):  # the starts, instance by instance (from its first)
        if sc.lent[i, 4] == -2:
            continue
        inst = sc.lent[i, 2]
        if st.lzi[inst, inst_tg] == tg:
            st.lzi[inst, inst_tg] = -1  # (solved)
            if not lz_solve(prog, st, ev, sc, inst, i):
                return


@njit(**JIT_INLINE)
def lz_solve(prog, st, ev, sc, inst, first):  # type: ignore[no-untyped-def]
    """G dY = the starts of instance inst in this time group (its entries from ``first``
    on, linked through sc.lent[., 4]): the classes they start in and the read classes that
    read those, each after the
    classes it reads (forward substitution); add dY to TY and to its slide's entries,
    and -D_j . dY to the Z entries of the ENDs that read it. False when the pool is
    full."""
    L = st.P.shape[0]
    P = st.P
    PINV = st.PINV
    sc.ln[1] += 1
    stamp = sc.ln[1]
    todo = sc.ltodo
    m = 0
    i = first
    while i >= 0:
        c = prog.qs_c[prog.q_soff[sc.lent[i, 0]] + sc.lent[i, 1]]
        i = sc.lent[i, 4]
        if sc.lmark[c] != stamp:
            sc.lmark[c] = stamp
            todo[m] = c
            m += 1
        for x in range(prog.c_desc_ptr[c], prog.c_desc_ptr[c + 1]):
            d = prog.c_desc[x]
            if sc.lmark[d] != stamp:
                sc.lmark[d] = stamp
                todo[m] = d
                m += 1
    for a in range(1, m):  # by rank (a handful of classes)
        v = todo[a]
        b = a - 1
        while b >= 0 and prog.c_rank[todo[b]] > prog.c_rank[v]:
            todo[b + 1] = todo[b]
            b -= 1
        todo[b + 1] = v
    AL = sc.vec.shape[0]
    e = sc.lent[first, 3]
    for t in range(m):
        d = todo[t]
        A = prog.c_A[d]
        W = prog.c_lw[d]
        nb = W // A
        a0 = prog.c_anc_ptr[d]
        inj = sc.vec2
        for r in range(A * L):
            inj[r] = 0
        i = first
        while i >= 0:
            if prog.qs_c[prog.q_soff[sc.lent[i, 0]] + sc.lent[i, 1]] == d:
                sv = sc.lsv[i]
                for r in range(A * L):
                    inj[r] = addmod(inj[r], sv[r], P[r % L])
            i = sc.lent[i, 4]
        g0 = prog.c_lg[d]
        di = prog.c_ldi[d]
        dd = d * AL
        for r in range(A):
            for lane in range(L):
                p = P[lane]
                pinv = PINV[lane]
                acc = inj[r * L + lane]
                for b in range(nb):
                    a = prog.c_anc[a0 + b]
                    if sc.lst[a] != stamp and a != d:
                        continue  # (no dY in this solve)
                    top = A if a != d else r  # own block: the registers before r
                    for r2 in range(top):
                        gv = st.lz[inst, g0 + (r * W + b * A + r2) * L + lane]
                        dv = sc.ldel[a * AL + r2 * L + lane]
                        acc = addmod(acc, p - mulmod(gv, dv, p, pinv), p)
                dinv = addmod(st.lz[inst, di + lane], 1, p)
                sc.ldel[dd + r * L + lane] = mulmod(acc, dinv, p, pinv)
        sc.lst[d] = stamp
        nz = False
        for r in range(A * L):
            if sc.ldel[dd + r] != 0:
                nz = True
        if not nz:
            continue
        sp = prog.c_spec[d]
        khi = ev.khi[sp, e]
        x = lz_entry(prog, st, inst, np.int64(0), d, sp, khi)
        if x < 0:
            return False
        y0 = prog.c_ly[d]
        for r in range(A * L):
            lane = r % L
            st.lval[x, r] = addmod(st.lval[x, r], sc.ldel[dd + r], P[lane])
            st.lz[inst, y0 + r] = addmod(st.lz[inst, y0 + r], sc.ldel[dd + r], P[lane])
        for jj in range(prog.ldj_ptr[d], prog.ldj_ptr[d + 1]):
            j = prog.ldj_j[jj]
            pos = prog.ldj_pos[jj]
            wj = prog.c_lw[prog.j_c[j]]
            d0 = prog.j_ld[j]
            xz = lz_entry(prog, st, inst, np.int64(1), j, sp, khi)
            if xz < 0:
                return False
            for r in range(A):
                for lane in range(L):
                    p = P[lane]
                    acc = lz_dot(st, inst, d0 + (r * wj + pos * A) * L, A, lane, sc.ldel, dd)
                    st.lval[xz, r * L + lane] = addmod(st.lval[xz, r * L + lane], p - acc, p)
    return True


@njit(**JIT_INLINE)
def lz_expire(prog, st, sp, qi, k):  # type: ignore[no-untyped-def]
    """Let go of the entries of queue qi (0: starts and corrections; 2: event counts) of
    lazy spec sp whose slides window k does not hold (khi <= k), undoing what they add."""
    L = st.P.shape[0]
    P = st.P
    _, _, _, counts, inst_tg = lz_cols(prog)
    live = inst_tg + 2
    h = st.lq[sp, qi]
    while h >= 0 and st.lkhi[h] <= k:
        inst = st.linst[h]
        kind = st.lkind[h]
        idx = st.lidx[h]
        if kind == 0:  # TY -= dY; each END that reads it: its results -= D_j . dY
            d = idx
            A = prog.c_A[d]
            y0 = prog.c_ly[d]
            for r in range(A * L):
                st.lz[inst, y0 + r] = addmod(
                    st.lz[inst, y0 + r], P[r % L] - st.lval[h, r], P[r % L]
                )
            for jj in range(prog.ldj_ptr[d], prog.ldj_ptr[d + 1]):
                j = prog.ldj_j[jj]
                pos = prog.ldj_pos[jj]
                qj = prog.j_q[j]
                wj = prog.c_lw[prog.j_c[j]]
                d0 = prog.j_ld[j]
                gi = st.inst_ginst[inst, prog.q_gsel[qj]]
                res = prog.q_lroff[qj]
                for r in range(A):
                    for lane in range(L):
                        p = P[lane]
                        acc = lz_dot(
                            st, inst, d0 + (r * wj + pos * A) * L, A, lane, st.lval[h], np.int64(0)
                        )
                        i = res + r * L + lane
                        st.lres[gi, i] = addmod(st.lres[gi, i], p - acc, p)
        elif kind == 1:  # the results -= Z
            qj = prog.j_q[idx]
            gi = st.inst_ginst[inst, prog.q_gsel[qj]]
            res = prog.q_lroff[qj]
            for r in range(prog.q_A[qj] * L):
                p = P[r % L]
                st.lres[gi, res + r] = addmod(st.lres[gi, res + r], p - st.lval[h, r], p)
        else:
            st.lzi[inst, counts + 2 * idx] -= st.lval[h, 0]
            st.lzi[inst, counts + 2 * idx + 1] -= st.lval[h, 1]
        c_last, j_last, sp_last, _, _ = lz_cols(prog)
        col = (c_last if kind == 0 else j_last if kind == 1 else sp_last) + idx
        if st.lzi[inst, col] == h:
            st.lzi[inst, col] = -1
        st.lzi[inst, live] -= 1
        nxt = st.lnext[h]
        st.lq[sp, qi] = nxt
        if nxt < 0:
            st.lq[sp, qi + 1] = -1
        st.lnext[h] = st.lmeta[0]
        st.lmeta[0] = h
        st.lmeta[2] -= 1
        h = nxt


@njit(**JIT_INNER)
def lazy_close(prog, st, out, sp, upto):  # type: ignore[no-untyped-def]
    """Write out the windows of lazy spec sp from st.closed[sp] up to (not) upto, each
    after the entries of the slides it does not hold expire; stop when none is left."""
    prog = borrow(prog)
    st = borrow(st)
    out = borrow(out)
    L = st.P.shape[0]
    k = st.closed[sp]
    while k < upto:
        lz_expire(prog, st, sp, np.int64(2), k)
        lz_expire(prog, st, sp, np.int64(0), k)
        if st.lq[sp, 0] < 0:  # no trend in any later window: what the closed ones held
            lz_expire(prog, st, sp, np.int64(2), upto - 1)
            return
        for q in range(prog.q_spec.shape[0]):
            if prog.q_spec[q] != sp or not prog.q_lazy[q]:
                continue
            A = prog.q_A[q]
            gr = prog.q_grouping[q]
            res = prog.q_lroff[q]
            for jg in range(st.gr_ptr[gr], st.gr_ptr[gr + 1]):
                gi = st.gr_ginst[jg]
                any_trend = False
                for lane in range(L):
                    if st.lres[gi, res + lane] != 0:
                        any_trend = True
                if not any_trend:
                    continue
                nr = out.n[0]
                out.key[nr, 0] = q
                out.key[nr, 1] = gi
                out.key[nr, 2] = k
                for r in range(A * L):
                    out.add[nr, r] = st.lres[gi, res + r]
                out.n[0] = nr + 1
        k += 1
