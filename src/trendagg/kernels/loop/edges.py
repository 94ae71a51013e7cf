"""NEXT conditions on a transition, in the loop (docs/semantics.md, Predicates; the tables:
:mod:`trendagg.kernels.lower.edges`, the stack programs: :mod:`trendagg.kernels.edges`).
"""

from __future__ import annotations

import numpy as np

from trendagg.jit import njit
from trendagg.kernels import JIT_INLINE, JIT_INNER
from trendagg.kernels._borrow import borrow
from trendagg.kernels.loop.arith import read_block

# A transition with NEXT conditions reads the log of its source (a queue whose entries
# are single vertices with the values the conditions read, see nq_append) and tests
# each entry with the transition's stack program (trendagg.kernels.edges).


@njit(**JIT_INNER)
def add_log(prog, st, ev, sc, q, nt, pr, inst, k, e, vec, vext):  # type: ignore[no-untyped-def]
    """vec/vext += the registers of the vertices of log nt in window k for which program
    pr holds with event e as the next event. (This and the index functions are called,
    not inlined: inlined at each place gather is, they made the kernel compiled for
    queues take minutes longer to compile, for a call's cost per transition.)"""
    prog = borrow(prog)
    st = borrow(st)
    ev = borrow(ev)
    sc = borrow(sc)
    P = st.P
    A = prog.q_A[q]
    M = prog.q_M[q]
    nmin = prog.q_nmin[q]
    h = 4 * (prog.nt_koff[nt] + k % prog.nt_NS[nt])
    if st.nq[inst, h] != k:
        return
    entry = st.nq[inst, h + 1]
    while entry >= 0:
        if holds(prog, st, ev, sc, pr, entry, e):
            read_block(st.padd[entry], st.pext[entry], 0, 0, vec, vext, A, M, nmin, P)
        entry = st.pnext[entry]


@njit(**JIT_INLINE)
def holds(prog, st, ev, sc, pr, entry, e):  # type: ignore[no-untyped-def]
    """True when program pr holds for the logged vertex ``entry`` (x; -1 for a guard,
    which reads none) and event e (y)."""
    return evaluate(prog, st, ev, sc, pr, entry, e)[1] != 0


@njit(**JIT_INNER)
def evaluate(prog, st, ev, sc, pr, entry, e):  # type: ignore[no-untyped-def]
    """(kind, value) of program pr for the logged vertex ``entry`` (x, or -1) and event
    e (y), with the value rules of trendagg.plan.predicates (see trendagg.kernels.edges
    for the kinds and opcodes): a condition's value is 1.0 (true) or 0.0."""
    prog = borrow(prog)
    st = borrow(st)
    ev = borrow(ev)
    sc = borrow(sc)
    sk = sc.sk
    sv = sc.sv
    top = 0
    for i in range(prog.pr_ptr[pr], prog.pr_ptr[pr + 1], 2):
        op = prog.pr_code[i]
        arg = prog.pr_code[i + 1]
        if op == 0:  # PUSH_X
            sk[top] = st.pknd[entry, arg]
            sv[top] = st.pkey[entry, arg]
            top += 1
        elif op == 1:  # PUSH_Y
            sk[top] = ev.xk[arg, e]
            sv[top] = ev.xv[arg, e]
            top += 1
        elif op == 2:  # PUSH_CONST
            sk[top] = prog.pr_ck[arg]
            sv[top] = prog.pr_cv[arg]
            top += 1
        elif op == 3:  # NEGATE
            if sk[top - 1] == 1 or sk[top - 1] == 2:
                sv[top - 1] = -sv[top - 1]
            else:
                sk[top - 1] = 0
        elif op <= 8:  # ADD SUB MUL DIV MOD: numbers only; x / 0 and x % 0 are undefined
            top -= 1
            ka = sk[top - 1]
            kb = sk[top]
            a = sv[top - 1]
            b = sv[top]
            if not (ka == 1 or ka == 2) or not (kb == 1 or kb == 2):
                sk[top - 1] = 0
                continue
            ints = ka == 1 and kb == 1
            if op == 4:
                r = a + b
            elif op == 5:
                r = a - b
            elif op == 6:
                r = a * b
            elif b == 0:
                sk[top - 1] = 0
                continue
            elif op == 7:
                r = a / b
                ints = False
            else:  # Python's modulo: the sign of the divisor
                r = np.fmod(a, b)
                if r != 0 and (b < 0) != (r < 0):
                    r += b
            if ints and abs(r) >= 2.0**53:  # no longer exact: the executor stops the run
                st.eflag[0] = 1
                st.eflag[1] = pr
                sk[top - 1] = 0
                continue
            sk[top - 1] = 1 if ints else 2
            sv[top - 1] = r
        elif op == 9:  # COMPARE: = != < <= > >=
            top -= 1
            ka = sk[top - 1]
            kb = sk[top]
            a = sv[top - 1]
            b = sv[top]
            if ka == 0 or kb == 0:
                res = False
            elif (ka == 1 or ka == 2) and (kb == 1 or kb == 2):
                res = compare(arg, a, b)
            elif ka == 3 and kb == 3:
                if arg <= 1:
                    res = (a == b) == (arg == 0)
                else:
                    res = compare(arg, ev.wrank[np.int64(a)], ev.wrank[np.int64(b)])
            else:  # a number and a word, or anything else: only unequal
                res = arg == 1
            sk[top - 1] = 5
            sv[top - 1] = 1.0 if res else 0.0
        else:  # ALL / ANY of the top arg booleans
            res = op == 10
            for j in range(top - arg, top):
                res = (res and sv[j] != 0) if op == 10 else (res or sv[j] != 0)
            top -= arg - 1
            sk[top - 1] = 5
            sv[top - 1] = 1.0 if res else 0.0
    return sk[0], sv[0]


@njit(**JIT_INLINE)
def value(prog, st, ev, sc, pr, e):  # type: ignore[no-untyped-def]
    """(kind, value) of the expression program pr on event e: read at once when it is one
    attribute (``T.speed``), the common key and query."""
    i = prog.pr_ptr[pr]
    if prog.pr_ptr[pr + 1] - i == 2 and prog.pr_code[i] == 1:  # PUSH_Y: one attribute
        return ev.xk[prog.pr_code[i + 1], e], ev.xv[prog.pr_code[i + 1], e]
    return evaluate(prog, st, ev, sc, pr, np.int64(-1), e)


@njit(**JIT_INLINE)
def compare(c, a, b):  # type: ignore[no-untyped-def]
    if c == 0:
        return a == b
    if c == 1:
        return a != b
    if c == 2:
        return a < b
    if c == 3:
        return a <= b
    if c == 4:
        return a > b
    return a >= b
