"""The registers of a transition's source vertices, ordered by key, for one window.

GRETA computes an event's registers from the combined registers of its
predecessors (GRETA, Theorem 9.1). Under an indexable edge predicate
``key(x) op query(y)`` (:mod:`trendagg.plan.edge_index`) the predecessors of
y are the source vertices whose key lies in a range: below or above the
query for ``< <= > >=``, equal to it for ``=``, everything but equal for
``!=``. :class:`KeyIndex` keeps those vertices of one window ordered by key
with the combined registers of every subtree, so inserting a vertex and
combining the registers of a range cost O(log n) register additions instead
of one predicate call per vertex.

Why a treap (a binary search tree balanced by random priorities) with
subtree totals:

* keys arrive online, chunk by chunk, and are not known in advance, so the
  rank of a key is not fixed: a Fenwick tree over ranks would need every key
  up front (or a rebuild when a key lands between two others);
* MIN and MAX registers (and the latest start time of a negative
  sub-pattern) cannot be subtracted, so a range cannot be a difference of
  two prefix totals; a tree answers any range by combining the totals of
  O(log n) disjoint subtrees, using only ``add_into`` (sums add, minima and
  maxima take the extreme), whatever the registers are;
* a treap is the simplest balanced tree to augment: an insertion walks down
  once, adding the vertex's registers to the subtree totals on its path, and
  takes an expected O(1) rotations, each recomputing two totals. The depth is
  O(log n) with high probability, whatever the order of the keys (prices
  that only go up are no worse than random ones).

Vertices with equal keys share one node (its own registers are their
total), so ties add no depth. Keys of different kinds are never ordered
with each other: numbers and strings have one tree each, and vertices whose
key is ordered with nothing (NaN, booleans) are one running total that only
``!=`` reaches; a vertex whose key is undefined is not inserted at all.
Windows are never merged or split: a window's index is dropped when the
window closes.
"""

from __future__ import annotations

import random
from typing import Any

from trendagg.plan.edge_index import NUMBER, OTHER, STRING

Vec = list[Any]

_priority = random.Random(2017).random  # any source of random numbers keeps the tree balanced


class _Node:
    __slots__ = ("key", "priority", "left", "right", "own", "total")

    def __init__(self, key: Any, vec: Vec):
        self.key = key
        self.priority = _priority()
        self.left: _Node | None = None
        self.right: _Node | None = None
        self.own = list(vec)  # registers of the vertices with this key
        self.total = list(vec)  # registers of this subtree


def _add(alg: Any, acc: Vec | None, vec: Vec) -> Vec:
    """acc + vec, in place when there is an accumulator (never in vec)."""
    if acc is None:
        return list(vec)
    alg.add_into(acc, vec)
    return acc


class _Treap:
    """Keys of one kind (all mutually ordered), with subtree register totals."""

    __slots__ = ("alg", "root", "size")

    def __init__(self, alg: Any):
        self.alg = alg
        self.root: _Node | None = None
        self.size = 0  # distinct keys

    def insert(self, key: Any, vec: Vec) -> None:
        add = self.alg.add_into
        path: list[_Node] = []
        node = self.root
        while node is not None and node.key != key:
            path.append(node)
            node = node.left if key < node.key else node.right
        for p in path:
            add(p.total, vec)
        if node is not None:  # a key seen before: no new node
            add(node.own, vec)
            add(node.total, vec)
            return
        new = _Node(key, vec)
        self.size += 1
        if not path:
            self.root = new
            return
        parent = path[-1]
        if key < parent.key:
            parent.left = new
        else:
            parent.right = new
        # rotate the new node up while its priority beats its parent's (heap order)
        while path and path[-1].priority < new.priority:
            parent = path.pop()
            if parent.left is new:
                parent.left = new.right
                new.right = parent
            else:
                parent.right = new.left
                new.left = parent
            new.total = parent.total  # the same vertices as the parent's subtree had
            total = list(parent.own)
            if parent.left is not None:
                add(total, parent.left.total)
            if parent.right is not None:
                add(total, parent.right.total)
            parent.total = total
            if not path:
                self.root = new
            elif path[-1].left is parent:
                path[-1].left = new
            else:
                path[-1].right = new

    def below(self, q: Any, inclusive: bool, acc: Vec | None) -> Vec | None:
        """acc + the registers of keys < q (<= q when inclusive)."""
        alg = self.alg
        node = self.root
        while node is not None:
            k = node.key
            if k < q or (inclusive and k == q):
                if node.left is not None:
                    acc = _add(alg, acc, node.left.total)
                acc = _add(alg, acc, node.own)
                node = node.right
            else:
                node = node.left
        return acc

    def above(self, q: Any, inclusive: bool, acc: Vec | None) -> Vec | None:
        """acc + the registers of keys > q (>= q when inclusive)."""
        alg = self.alg
        node = self.root
        while node is not None:
            k = node.key
            if k > q or (inclusive and k == q):
                if node.right is not None:
                    acc = _add(alg, acc, node.right.total)
                acc = _add(alg, acc, node.own)
                node = node.left
            else:
                node = node.right
        return acc

    def equal(self, q: Any, acc: Vec | None) -> Vec | None:
        """acc + the registers of the key equal to q."""
        node = self.root
        while node is not None:
            k = node.key
            if k == q:
                return _add(self.alg, acc, node.own)
            node = node.left if q < k else node.right
        return acc

    def unequal(self, q: Any, acc: Vec | None) -> Vec | None:
        """acc + the registers of every key but q: one walk, the subtrees beside its path."""
        alg = self.alg
        node = self.root
        while node is not None:
            k = node.key
            if k == q:
                if node.left is not None:
                    acc = _add(alg, acc, node.left.total)
                if node.right is not None:
                    acc = _add(alg, acc, node.right.total)
                return acc
            acc = _add(alg, acc, node.own)
            if k < q:
                if node.left is not None:
                    acc = _add(alg, acc, node.left.total)
                node = node.right
            else:
                if node.right is not None:
                    acc = _add(alg, acc, node.right.total)
                node = node.left
        return acc

    def everything(self, acc: Vec | None) -> Vec | None:
        return acc if self.root is None else _add(self.alg, acc, self.root.total)


class KeyIndex:
    """Source vertices of one transition in one window, by key (see the module docstring).

    ``alg`` combines register vectors (``add_into``): the positive pattern's
    registers or a negative sub-pattern's latest start time.
    """

    __slots__ = ("alg", "trees", "others")

    def __init__(self, alg: Any):
        self.alg = alg
        self.trees = (_Treap(alg), _Treap(alg))  # NUMBER, STRING
        self.others: Vec | None = None  # keys ordered with nothing: only != reaches them

    def insert(self, kind: int, key: Any, vec: Vec) -> None:
        """Add a vertex's registers under its key (of kind NUMBER, STRING or OTHER)."""
        if kind == OTHER:
            self.others = _add(self.alg, self.others, vec)
        elif kind in (NUMBER, STRING):
            self.trees[kind].insert(key, vec)

    def collect(self, op: str, kind: int, q: Any, acc: Vec | None) -> Vec | None:
        """acc + the registers of the vertices whose key k satisfies ``k op q``.

        ``q`` is of kind NUMBER, STRING, OTHER or UNDEFINED (nothing matches);
        the rule is ``_compare`` of :mod:`trendagg.plan.predicates`.
        """
        if kind in (NUMBER, STRING):
            tree = self.trees[kind]
            if op == "<":
                return tree.below(q, False, acc)
            if op == "<=":
                return tree.below(q, True, acc)
            if op == ">":
                return tree.above(q, False, acc)
            if op == ">=":
                return tree.above(q, True, acc)
            if op == "=":
                return tree.equal(q, acc)
            # !=: every key of this kind but q, and every key of the other kinds
            acc = tree.unequal(q, acc)
            acc = self.trees[1 - kind].everything(acc)
            return acc if self.others is None else _add(self.alg, acc, self.others)
        if kind == OTHER and op == "!=":
            for tree in self.trees:
                acc = tree.everything(acc)
            return acc if self.others is None else _add(self.alg, acc, self.others)
        return acc

    def __len__(self) -> int:
        """Distinct keys in the trees (the others count as one when present)."""
        return self.trees[0].size + self.trees[1].size + (self.others is not None)


__all__ = ["KeyIndex"]
