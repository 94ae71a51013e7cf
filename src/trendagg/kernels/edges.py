"""Edge predicates (NEXT conditions) and guards for the compiled kernel.

A NEXT condition relates the previous event x and the next event y of an
adjacent pair (docs/semantics.md, Predicates). The kernel keeps, per source state
class, partition instance and window, a log of the source vertices with their
registers and the values that the conditions read on x (a queue of
:mod:`trendagg.kernels.loop.edges` whose entries are single vertices), and tests
each logged vertex against the new event: the conditions of a transition are
one small stack program (:func:`compile_program`), evaluated in the kernel on
a value's kind and its float64 (:func:`value_columns` prepares the events'
values once per chunk, vectorised). A guard (a condition that reads only the
next event, ``* -> T``) is a program over y alone.

Values follow :mod:`trendagg.plan.predicates` exactly: numbers compare as
numbers, words as words (by code point: a word is an id whose rank among every
word seen so far the chunk brings, :class:`Words`), a number and a word, or
anything else (a boolean of a mixed column), are only unequal; arithmetic
needs numbers, and a division or modulo by zero makes its comparison false.
An integer is held as a float64, exactly while it stays within 2**53; an
event value beyond that stops the run with the reason
(:func:`value_columns`), as does a sum, difference or product of integers
that leaves it in the kernel (it sets a flag the executor reads); a query with an
integer constant beyond it runs in Python
(:func:`~trendagg.plan.predicates.inexact_constant`, decided from the plan).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from trendagg.errors import InputError
from trendagg.io.batch import EventBatch
from trendagg.language import ast, to_text
from trendagg.plan.compile import QueryPlan
from trendagg.plan.edge_index import FLIP
from trendagg.plan.predicates import EXACT, EdgePredicate, bool_refs, classify, expr_refs

# value kinds in the kernel (a comparison or AND/OR pushes a BOOL)
UNDEFINED, INTEGER, DECIMAL, WORD, OTHER, BOOL = range(6)
# opcodes: (op, argument) pairs
PUSH_X, PUSH_Y, PUSH_CONST, NEGATE, ADD, SUB, MUL, DIV, MOD, COMPARE, ALL, ANY = range(12)
_ARITH = {"+": ADD, "-": SUB, "*": MUL, "/": DIV, "%": MOD}
COMPARISONS = {"=": 0, "!=": 1, "<>": 1, "<": 2, "<=": 3, ">": 4, ">=": 5}


@dataclass
class Words:
    """Every word that NEXT conditions have seen (constants and event values): a
    stable id per word, and the rank of each id in code point order."""

    ids: dict[str, int] = field(default_factory=dict)
    ranks: np.ndarray = field(default_factory=lambda: np.zeros(1, dtype=np.int64))

    def intern(self, words: list[str]) -> np.ndarray:
        """The ids of ``words``; new words get new ids and the ranks are computed again."""
        new = [w for w in dict.fromkeys(words) if w not in self.ids]
        for w in new:
            self.ids[w] = len(self.ids)
        if new:
            order = sorted(self.ids, key=str)  # (a dict keeps ids in insertion order)
            ranks = np.zeros(max(len(self.ids), 1), dtype=np.int64)
            for rank, w in enumerate(order):
                ranks[self.ids[w]] = rank
            self.ranks = ranks
        return np.array([self.ids[w] for w in words], dtype=np.int64)


@dataclass
class Program:
    """One compiled condition (the AND of a transition's NEXT conditions, or its guards)."""

    code: list[int]  # op, argument, op, argument, ...
    depth: int  # the deepest stack it needs
    text: str  # as the query wrote it, for errors


def compile_program(
    conds: list[ast.BoolExpr] | ast.Expr,
    x_slot: Callable[[str], int] | None,
    y_column: Callable[[str], int],
    constant: Callable[[int, float], int],
    words: Words,
) -> Program:
    """The stack program of ``AND(conds)``, or of the value of one expression: ``V.a``
    reads slot ``x_slot(a)`` of the logged vertex (with no ``x_slot``, column
    ``y_column(a)`` of the event, as ``NEXT(W).a`` does); constants become
    ``constant(kind, value)`` indices."""
    code: list[int] = []
    depth = 0
    top = 0

    def push(op: int, arg: int = 0, pops: int = 0) -> None:
        nonlocal depth, top
        code.extend((op, arg))
        top += 1 - pops
        depth = max(depth, top)

    def expr(e: ast.Expr) -> None:
        if isinstance(e, ast.Number):
            v = e.value
            push(PUSH_CONST, constant(INTEGER if isinstance(v, int) else DECIMAL, float(v)))
        elif isinstance(e, ast.String):
            push(PUSH_CONST, constant(WORD, float(words.intern([e.value])[0])))
        elif isinstance(e, ast.Attr):
            if e.next or x_slot is None:
                push(PUSH_Y, y_column(e.name))
            else:
                push(PUSH_X, x_slot(e.name))
        elif isinstance(e, ast.Negate):
            expr(e.operand)
            push(NEGATE, 0, 1)
        else:
            expr(e.left)
            expr(e.right)
            push(_ARITH[e.op], 0, 2)

    def boolean(c: ast.BoolExpr) -> None:
        if isinstance(c, ast.Comparison):
            expr(c.left)
            expr(c.right)
            push(COMPARE, COMPARISONS[c.op], 2)
            return
        for item in c.items:
            boolean(item)
        push(ANY if isinstance(c, ast.Or) else ALL, len(c.items), len(c.items))

    if not isinstance(conds, list):  # one value
        expr(conds)
        return Program(code, max(depth, 1), to_text(conds))
    for c in conds:
        boolean(c)
    if len(conds) != 1:
        push(ALL, len(conds), len(conds))
    return Program(code, max(depth, 1), " AND ".join(to_text(c) for c in conds))


def index_sides(cond: ast.Comparison) -> tuple[str, ast.Expr, ast.Expr]:
    """(op, key, query) of an indexable condition (:func:`trendagg.plan.edge_index.edge_index`
    said so): the pair matches iff ``key(x) op query(y)``."""
    if all(not r.next for r in expr_refs(cond.left)):
        return cond.op, cond.left, cond.right
    return FLIP[cond.op], cond.right, cond.left


def edge_conditions(
    plan: QueryPlan,
) -> tuple[dict[tuple[str, str], list[ast.BoolExpr]], dict[str, list[ast.BoolExpr]]]:
    """The NEXT conditions of a query per transition (source, target variable), and its
    guards (conditions on the next event alone) per target variable."""
    edges: dict[tuple[str, str], list[ast.BoolExpr]] = {}
    guards: dict[str, list[ast.BoolExpr]] = {}
    for _, cond in plan.edge_conditions:
        pred = classify(cond)
        assert isinstance(pred, EdgePredicate)
        if pred.src is None:
            guards.setdefault(pred.dst, []).append(cond)
        else:
            edges.setdefault((pred.src, pred.dst), []).append(cond)
    return edges, guards


def read_attrs(conds: list[ast.BoolExpr], next_: bool) -> list[str]:
    """The attributes the conditions read on y (``next_``) or on x, in order."""
    return list(dict.fromkeys(r.name for c in conds for r in bool_refs(c) if r.next == next_))


_KIND_OF = {int: INTEGER, float: DECIMAL, str: WORD}


def value_columns(
    batch: EventBatch, names: list[str], words: Words
) -> tuple[np.ndarray, np.ndarray]:
    """The values (float64; a word's id) and kinds of the attributes ``names`` at every
    event of ``batch``: UNDEFINED where an event lacks one."""
    n = len(batch)
    values = np.zeros((max(len(names), 1), n), dtype=np.float64)
    kinds = np.zeros((max(len(names), 1), n), dtype=np.int64)
    for c, name in enumerate(names):
        col = batch.columns.get(name)
        if col is None:
            continue
        valid = col.valid
        if col.kind == "int":
            vals = col.values
            if valid.any() and int(np.abs(vals[valid]).max()) > EXACT:
                _too_large(name, int(vals[valid][np.abs(vals[valid]) > EXACT][0]))
            values[c] = vals
            kinds[c] = np.where(valid, INTEGER, UNDEFINED)
        elif col.kind == "float":
            values[c] = col.values
            kinds[c] = np.where(valid, DECIMAL, UNDEFINED)
        elif col.kind == "text":
            assert col.dictionary is not None
            ids = words.intern(list(col.dictionary)) if col.dictionary else np.zeros(0, np.int64)
            codes = col.values
            values[c] = np.where(valid, ids[np.where(valid, codes, 0)] if len(ids) else 0, 0)
            kinds[c] = np.where(valid, WORD, UNDEFINED)
        else:  # mixed: Python objects
            for i in np.flatnonzero(valid).tolist():
                v = col.values[i]
                kind = _KIND_OF.get(type(v), OTHER)
                kinds[c, i] = kind
                if kind == INTEGER:
                    if abs(v) > EXACT:
                        _too_large(name, v)
                    values[c, i] = float(v)
                elif kind == DECIMAL:
                    values[c, i] = v
                elif kind == WORD:
                    values[c, i] = float(words.intern([v])[0])
    return values, kinds


def _too_large(name: str, value: int) -> None:
    raise InputError(
        f"attribute '{name}' holds the integer {value}, beyond 2**53, and a NEXT condition "
        f"reads it: the compiled engine compares such integers exactly only up to 2**53; "
        f"run this workload with --engine reference (run_strategy(..., compiled=False))"
    )


__all__ = [
    "COMPARISONS",
    "EXACT",
    "Program",
    "Words",
    "compile_program",
    "edge_conditions",
    "index_sides",
    "read_attrs",
    "value_columns",
]
