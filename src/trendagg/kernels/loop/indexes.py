"""Ordered indexes for NEXT conditions of the form ``key(x) op query(y)``, in the loop
(the tables: :mod:`trendagg.kernels.lower.edges`; the reference:
:mod:`trendagg.reference.key_index`).
"""

from __future__ import annotations

import numpy as np

from trendagg.jit import njit
from trendagg.kernels import JIT_INLINE, JIT_INNER
from trendagg.kernels._borrow import borrow
from trendagg.kernels.loop.arith import add_block, read_block
from trendagg.kernels.loop.edges import value

# An indexable NEXT condition key(x) op query(y) (trendagg.plan.edge_index) on no NOT
# reads an ordered index of its source class per instance and window slot: a treap of
# the vertices' keys (numbers in one, words by rank in another), each node holding the
# registers of its key's vertices and of its subtree, so that the vertices of a range of
# keys add up from O(log n) nodes (as trendagg.reference.key_index does in Python); keys
# ordered with nothing (NaN, booleans) are one running total that only != reaches.
# st.ixh: per slot (window, root of the numbers, root of the words); st.ixa/ixe: the
# running totals; nodes in a pool of their own (tkey tleft tright tprio town towne ttot
# ttote; tpool: free list, -, in use, most, random state), free nodes linked by tleft;
# st.tstack: the path of an insert, or a walk's stack.


@njit(**JIT_INLINE)
def t_cmp(ev, tree, a, b):  # type: ignore[no-untyped-def]
    """-1, 0 or 1 for key a against key b of tree 0 (numbers) or 1 (words, by rank)."""
    if tree == 1:
        a = ev.wrank[np.int64(a)]
        b = ev.wrank[np.int64(b)]
    if a < b:
        return -1
    return 1 if a > b else 0


@njit(**JIT_INLINE)
def t_new(st, key, prio):  # type: ignore[no-untyped-def]
    """A node of the pool for key (registers empty, no children), or -1 (and the pool
    marked full) when there is none left."""
    n = st.tpool[0]
    if n < 0:
        st.pool[1] = 1
        return -1
    st.tpool[0] = st.tleft[n]
    st.tleft[n] = -1
    st.tright[n] = -1
    st.tkey[n] = key
    st.tprio[n] = prio
    for r in range(st.town.shape[1]):
        st.town[n, r] = 0
        st.ttot[n, r] = 0
    for r in range(st.towne.shape[1]):
        st.towne[n, r] = np.nan
        st.ttote[n, r] = np.nan
    st.tpool[2] += 1
    if st.tpool[2] > st.tpool[3]:
        st.tpool[3] = st.tpool[2]
    return n


@njit(**JIT_INLINE)
def t_priority(st):  # type: ignore[no-untyped-def]
    """The next pseudo-random priority (an LCG modulo 2**31, no overflow: any source
    of random numbers keeps a treap balanced)."""
    x = (st.tpool[4] * 1103515245 + 12345) % 2147483648
    st.tpool[4] = x
    return x


@njit(**JIT_INNER)
def t_free(st, root):  # type: ignore[no-untyped-def]
    """Return the nodes of the tree at root to the pool."""
    st = borrow(st)
    if root < 0:
        return
    st.tstack[0] = root
    top = 1
    while top > 0:
        top -= 1
        n = st.tstack[top]
        if st.tleft[n] >= 0:
            st.tstack[top] = st.tleft[n]
            top += 1
        if st.tright[n] >= 0:
            st.tstack[top] = st.tright[n]
            top += 1
        st.tleft[n] = st.tpool[0]
        st.tpool[0] = n
        st.tpool[2] -= 1


@njit(**JIT_INNER)
def t_copy(st, root):  # type: ignore[no-untyped-def]
    """A copy of the tree at root (its root; -1 when the pool ran out, marked full)."""
    st = borrow(st)
    if root < 0:
        return -1
    top = 0
    new = -1
    src = root
    parent = -1
    side = 0
    while True:
        d = t_new(st, st.tkey[src], st.tprio[src])
        if d < 0:
            return new
        for r in range(st.town.shape[1]):
            st.town[d, r] = st.town[src, r]
            st.ttot[d, r] = st.ttot[src, r]
        for r in range(st.towne.shape[1]):
            st.towne[d, r] = st.towne[src, r]
            st.ttote[d, r] = st.ttote[src, r]
        if parent < 0:
            new = d
        elif side == 0:
            st.tleft[parent] = d
        else:
            st.tright[parent] = d
        for c, sd in ((st.tright[src], 1), (st.tleft[src], 0)):
            if c >= 0:  # (child, its copy's parent, side) still to copy
                st.tstack[top] = c
                st.tstack[top + 1] = d
                st.tstack[top + 2] = sd
                top += 3
        if top == 0:
            return new
        top -= 3
        src = st.tstack[top]
        parent = st.tstack[top + 1]
        side = st.tstack[top + 2]


@njit(**JIT_INLINE)
def ix_reset(prog, st, ix, inst, slot, k):  # type: ignore[no-untyped-def]
    """Free the trees of index ix's slot and empty its totals; the slot then holds k."""
    L = st.P.shape[0]
    q = prog.ix_q[ix]
    h = 3 * (prog.ix_koff[ix] + slot)
    t_free(st, st.ixh[inst, h + 1])
    t_free(st, st.ixh[inst, h + 2])
    st.ixh[inst, h] = k
    st.ixh[inst, h + 1] = -1
    st.ixh[inst, h + 2] = -1
    base = prog.ix_aoff[ix] + slot * prog.q_A[q] * L
    for r in range(prog.q_A[q] * L):
        st.ixa[inst, base + r] = 0
    ebase = prog.ix_eoff[ix] + slot * prog.q_M[q]
    for r in range(prog.q_M[q]):
        st.ixe[inst, ebase + r] = np.nan


@njit(**JIT_INNER)
def ix_insert(prog, st, ev, sc, ix, inst, k, e, vec, vext):  # type: ignore[no-untyped-def]
    """Add a vertex of event e (registers vec/vext) in window k to index ix under its key."""
    prog = borrow(prog)
    st = borrow(st)
    ev = borrow(ev)
    sc = borrow(sc)
    kind, key = value(prog, st, ev, sc, prog.ix_key[ix], e)
    if kind == 0:  # no key (x / 0, 'a' + 1): the condition holds for no next event
        return
    P = st.P
    L = P.shape[0]
    q = prog.ix_q[ix]
    A = prog.q_A[q]
    M = prog.q_M[q]
    nmin = prog.q_nmin[q]
    slot = k % prog.ix_NS[ix]
    h = 3 * (prog.ix_koff[ix] + slot)
    if st.ixh[inst, h] != k:
        ix_reset(prog, st, ix, inst, slot, k)
    if kind == 3:
        tree = 1
    elif (kind == 1 or kind == 2) and key == key:
        tree = 0
    else:  # NaN, a boolean: ordered with nothing
        base = prog.ix_aoff[ix] + slot * A * L
        ebase = prog.ix_eoff[ix] + slot * M
        add_block(st.ixa[inst], st.ixe[inst], base, ebase, vec, vext, A, M, nmin, P)
        return
    node = st.ixh[inst, h + 1 + tree]
    depth = 0
    c = 0
    while node >= 0:
        c = t_cmp(ev, tree, key, st.tkey[node])
        if c == 0:
            break
        st.tstack[depth] = node
        depth += 1
        node = st.tleft[node] if c < 0 else st.tright[node]
    new = -1
    if node < 0:
        new = t_new(st, key, t_priority(st))
        if new < 0:  # the pool is full: the chunk runs again with a larger one
            return
        node = new
    for j in range(depth):
        n = st.tstack[j]
        add_block(st.ttot[n], st.ttote[n], 0, 0, vec, vext, A, M, nmin, P)
    add_block(st.town[node], st.towne[node], 0, 0, vec, vext, A, M, nmin, P)
    add_block(st.ttot[node], st.ttote[node], 0, 0, vec, vext, A, M, nmin, P)
    if new < 0:
        return
    if depth == 0:
        st.ixh[inst, h + 1 + tree] = new
        return
    if c < 0:
        st.tleft[st.tstack[depth - 1]] = new
    else:
        st.tright[st.tstack[depth - 1]] = new
    # rotate the new node up while its priority beats its parent's (heap order)
    while depth > 0 and st.tprio[st.tstack[depth - 1]] < st.tprio[new]:
        parent = st.tstack[depth - 1]
        depth -= 1
        if st.tleft[parent] == new:
            st.tleft[parent] = st.tright[new]
            st.tright[new] = parent
        else:
            st.tright[parent] = st.tleft[new]
            st.tleft[new] = parent
        for r in range(A * L):  # the new node's subtree: the parent's vertices
            st.ttot[new, r] = st.ttot[parent, r]
            st.ttot[parent, r] = st.town[parent, r]
        for r in range(M):
            st.ttote[new, r] = st.ttote[parent, r]
            st.ttote[parent, r] = st.towne[parent, r]
        for child in (st.tleft[parent], st.tright[parent]):
            if child >= 0:
                read_block(
                    st.ttot[child],
                    st.ttote[child],
                    0,
                    0,
                    st.ttot[parent],
                    st.ttote[parent],
                    A,
                    M,
                    nmin,
                    P,
                )
        if depth == 0:
            st.ixh[inst, h + 1 + tree] = new
        elif st.tleft[st.tstack[depth - 1]] == parent:
            st.tleft[st.tstack[depth - 1]] = new
        else:
            st.tright[st.tstack[depth - 1]] = new


@njit(**JIT_INLINE)
def t_range(st, ev, tree, root, qv, below, inclusive, vec, vext, A, M, nmin, P):  # type: ignore[no-untyped-def]
    """vec/vext += the registers of the keys below qv (or above; with inclusive, equal
    too) in the tree at root: O(depth) subtree totals."""
    node = root
    while node >= 0:
        c = t_cmp(ev, tree, st.tkey[node], qv)
        inside = (c == 0 and inclusive) or (c < 0 if below else c > 0)
        if inside:  # the node, and its subtree on the far side from qv
            read_block(st.town[node], st.towne[node], 0, 0, vec, vext, A, M, nmin, P)
            far = st.tleft[node] if below else st.tright[node]
            if far >= 0:
                read_block(st.ttot[far], st.ttote[far], 0, 0, vec, vext, A, M, nmin, P)
            node = st.tright[node] if below else st.tleft[node]
        else:
            node = st.tleft[node] if below else st.tright[node]


@njit(**JIT_INNER)
def ix_collect(prog, st, ev, sc, ix, op, pr, inst, k, e, vec, vext):  # type: ignore[no-untyped-def]
    """vec/vext += the registers of the vertices of index ix in window k whose key
    satisfies ``key op query`` for event e's query value (program pr)."""
    prog = borrow(prog)
    st = borrow(st)
    ev = borrow(ev)
    sc = borrow(sc)
    kind, qv = value(prog, st, ev, sc, pr, e)
    if kind == 0:
        return
    P = st.P
    L = P.shape[0]
    q = prog.ix_q[ix]
    A = prog.q_A[q]
    M = prog.q_M[q]
    nmin = prog.q_nmin[q]
    slot = k % prog.ix_NS[ix]
    h = 3 * (prog.ix_koff[ix] + slot)
    if st.ixh[inst, h] != k:
        return
    qtree = -1  # NaN, a boolean: only != holds, against every key
    if kind == 3:
        qtree = 1
    elif (kind == 1 or kind == 2) and qv == qv:
        qtree = 0
    if op == 1:  # !=: every key but the equal ones of the query's own kind
        for tree in range(2):
            root = st.ixh[inst, h + 1 + tree]
            if root < 0:
                continue
            if tree == qtree:  # (np.bool_: see the note on literals above)
                yes, no = np.bool_(True), np.bool_(False)
                t_range(st, ev, tree, root, qv, yes, no, vec, vext, A, M, nmin, P)
                t_range(st, ev, tree, root, qv, no, no, vec, vext, A, M, nmin, P)
            else:
                read_block(st.ttot[root], st.ttote[root], 0, 0, vec, vext, A, M, nmin, P)
        base = prog.ix_aoff[ix] + slot * A * L
        ebase = prog.ix_eoff[ix] + slot * M
        read_block(st.ixa[inst], st.ixe[inst], base, ebase, vec, vext, A, M, nmin, P)
        return
    if qtree < 0:
        return
    root = st.ixh[inst, h + 1 + qtree]
    if op == 0:  # =: the node of the key
        while root >= 0:
            c = t_cmp(ev, qtree, st.tkey[root], qv)
            if c == 0:
                read_block(st.town[root], st.towne[root], 0, 0, vec, vext, A, M, nmin, P)
                return
            root = st.tleft[root] if c > 0 else st.tright[root]
        return
    # < <= (below) and > >= (above)
    t_range(st, ev, qtree, root, qv, op <= 3, op == 3 or op == 5, vec, vext, A, M, nmin, P)
