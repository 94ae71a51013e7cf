"""Vertex (local) predicates evaluated on whole columns.

:func:`filter_mask` says, for every event of a chunk, whether it can be bound
to a variable: its type, the attributes the query reads on it, and its local
predicates. The compiled engine binds events with it before its kernel runs, and
the optimizers count the events that pass a binding filter with it (their rates). Comparisons of numbers, words, numeric and text columns (with + - *
and parentheses, AND, OR) are evaluated with numpy under the value semantics of
:mod:`trendagg.plan.predicates` (a text column against a word: once per word of
its dictionary); anything else (division, modulo, mixed columns, integers beyond
2**53) is evaluated by the predicate's own closure, event by event, so the
result is the same either way.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from trendagg.io.batch import EventBatch
from trendagg.language import ast

_SAFE = 2**53
_OPS = {
    "=": np.equal,
    "!=": np.not_equal,
    "<>": np.not_equal,
    "<": np.less,
    "<=": np.less_equal,
    ">": np.greater,
    ">=": np.greater_equal,
}


class _Unsupported(Exception):
    pass


@dataclass
class _Value:
    """The value of an expression at some rows: a number where ``is_num`` (exact in
    float64), a word where ``is_word`` (the text of ``codes`` in ``dictionary``, or the
    constant ``text``), undefined elsewhere (a string in arithmetic, say)."""

    num: np.ndarray
    is_num: np.ndarray
    is_word: np.ndarray
    codes: np.ndarray | None = None
    dictionary: list[str] | None = None
    text: str | None = None

    def words(self) -> np.ndarray:
        if self.text is not None:
            return np.full(len(self.num), self.text, dtype=object)
        assert self.codes is not None and self.dictionary is not None
        words: np.ndarray = np.array(self.dictionary, dtype=object)[self.codes]
        return words


def _numbers(values: np.ndarray, defined: np.ndarray) -> _Value:
    return _Value(values, defined, np.zeros(len(values), dtype=bool))


def _expr(expr: ast.Expr, batch: EventBatch, index: np.ndarray) -> _Value:
    """The value of an expression at the rows ``index``."""
    n = len(index)
    if isinstance(expr, ast.Number):
        v = expr.value
        if isinstance(v, int) and abs(v) > _SAFE:
            raise _Unsupported
        return _numbers(np.full(n, float(v)), np.ones(n, dtype=bool))
    if isinstance(expr, ast.String):
        return _Value(np.zeros(n), np.zeros(n, dtype=bool), np.ones(n, dtype=bool), text=expr.value)
    if isinstance(expr, ast.Attr):
        col = batch.columns.get(expr.name)
        if col is None:
            return _numbers(np.zeros(n), np.zeros(n, dtype=bool))
        if col.kind == "int":
            vals = col.values[index]
            if len(vals) and int(np.abs(vals).max()) > _SAFE:
                raise _Unsupported
            return _numbers(vals.astype(np.float64), col.valid[index])
        if col.kind == "float":
            return _numbers(col.values[index], col.valid[index])
        if col.kind == "text":
            none = np.zeros(n, dtype=bool)
            return _Value(np.zeros(n), none, col.valid[index], col.values[index], col.dictionary)
        raise _Unsupported
    if isinstance(expr, ast.Negate):
        inner = _expr(expr.operand, batch, index)
        return _numbers(-inner.num, inner.is_num)
    if isinstance(expr, ast.BinOp) and expr.op in ("+", "-", "*"):
        a = _expr(expr.left, batch, index)
        b = _expr(expr.right, batch, index)
        out = (
            a.num + b.num if expr.op == "+" else a.num - b.num if expr.op == "-" else a.num * b.num
        )
        # float arithmetic is exact only while results stay below 2**53 and inputs are
        # integers; otherwise Python's int/float arithmetic may differ: evaluate per event
        if len(out) and (np.abs(out).max() > _SAFE or not _integral(a.num, b.num)):
            raise _Unsupported
        return _numbers(out, a.is_num & b.is_num)  # a word in arithmetic: undefined
    raise _Unsupported


def _integral(a: np.ndarray, b: np.ndarray) -> bool:
    return bool(np.all(a == np.floor(a)) and np.all(b == np.floor(b)))


def _compare(op: str, a: _Value, b: _Value) -> np.ndarray:
    """``a op b`` with the value semantics: numbers as numbers, words as words (by code
    point), a number and a word only unequal, an undefined side false."""
    result = np.zeros(len(a.num), dtype=bool)
    numbers = a.is_num & b.is_num
    if numbers.any():
        result[numbers] = _OPS[op](a.num[numbers], b.num[numbers])
    words = a.is_word & b.is_word
    if words.any():
        result[words] = _compare_words(op, a, b)[words]
    if op in ("!=", "<>"):
        result |= (a.is_num & b.is_word) | (a.is_word & b.is_num)
    return result


def _compare_words(op: str, a: _Value, b: _Value) -> np.ndarray:
    for column, word, word_first in ((a, b.text, False), (b, a.text, True)):
        if word is not None and column.codes is not None:  # a column and a word: per word once
            assert column.dictionary is not None
            words = np.array(column.dictionary + [""], dtype=object)  # ("": no word, code 0)
            table = _OPS[op](word, words) if word_first else _OPS[op](words, word)
            return table.astype(bool)[column.codes]  # type: ignore[no-any-return]
    return _OPS[op](a.words(), b.words()).astype(bool)  # type: ignore[no-any-return]


def _bool(cond: ast.BoolExpr, batch: EventBatch, index: np.ndarray) -> np.ndarray:
    if isinstance(cond, ast.Comparison):
        a = _expr(cond.left, batch, index)
        b = _expr(cond.right, batch, index)
        both_plain = not isinstance(cond.left, ast.BinOp) and not isinstance(cond.right, ast.BinOp)
        if not both_plain and not _integral(a.num, b.num):
            raise _Unsupported
        return _compare(cond.op, a, b)
    if isinstance(cond, ast.And):
        out = np.ones(len(index), dtype=bool)
        for item in cond.items:
            out &= _bool(item, batch, index)
        return out
    if isinstance(cond, ast.Or):
        out = np.zeros(len(index), dtype=bool)
        for item in cond.items:
            out |= _bool(item, batch, index)
        return out
    raise _Unsupported


def filter_mask(batch: EventBatch, rule: Any, out: np.ndarray | None = None) -> np.ndarray:
    """True where the event has ``rule``'s type, its required attributes, and passes its
    predicates; written into ``out`` (a bool array of the batch's length) when given."""
    mask = np.empty(len(batch), dtype=bool) if out is None else out
    if rule.type_ not in batch.type_names:
        mask[:] = False
        return mask
    np.equal(batch.types, batch.type_names.index(rule.type_), out=mask)
    for name in rule.required:
        col = batch.columns.get(name)
        if col is None:
            mask[:] = False
            return mask
        mask &= col.valid
    if not rule.predicates:
        return mask
    index = np.flatnonzero(mask)
    keep = np.ones(len(index), dtype=bool)
    for pred in rule.predicates:
        try:
            keep &= _bool(pred.condition, batch, index)
        except _Unsupported:
            cols = {name: col for name, col in batch.columns.items()}
            for j, i in enumerate(index.tolist()):
                if keep[j]:
                    attrs = {
                        name: v for name, col in cols.items() if (v := _value(col, i)) is not None
                    }
                    keep[j] = pred(attrs)
    mask[index[~keep]] = False  # (true at index before)
    return mask


def _value(col: Any, i: int) -> object:
    if not col.valid[i]:
        return None
    if col.kind == "mixed":
        return col.values[i]
    if col.kind == "text":
        return col.dictionary[col.values[i]]
    return col.values[i].item()
