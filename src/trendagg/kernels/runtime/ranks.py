"""Order-preserving codes for MIN/MAX over values a float64 cannot order: words, and
integers beyond 2**53.

The kernel's extreme registers are float64 (see :mod:`trendagg.kernels.lower.core`).
For such an attribute the executor keeps a :class:`Ranks`, the sorted distinct
values of its open windows and of the chunk at hand, and the kernel works on a
value's position there (its rank), which orders as the value does. A chunk that
brings values the ranks lack gives new ranks: the registers of that attribute
in open windows are renumbered (:func:`renumber`, monotone, so a minimum stays
a minimum) and the rest, which no window will read again, are cleared. An
attribute whose values a float64 holds exactly never gets here, so numbers pay
nothing.

The order is Python's: numbers exactly (an integer beyond 2**53 against a
decimal too), words by code point, numbers before words: the order of
:func:`trendagg.plan.layout.before`, by which the Python engines compare, so
the engines agree where a word meets a number.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

from trendagg.kernels.executor import State
from trendagg.kernels.lower.core import source
from trendagg.kernels.lower.program import Lowered
from trendagg.plan.layout import order_key  # numbers (exactly), then words

SENT = -(2**62)  # an empty window slot (the kernel's)
_INT64_MIN, _INT64_MAX = -(2**63), 2**63 - 1


class Ranks:
    """The sorted distinct values of one attribute; a rank is a position here.

    Integers within int64 stay in an int64 array (a chunk of them is looked up and
    merged with numpy); anything else (words, larger integers, decimals beside
    integers) is a sorted list with an index.
    """

    def __init__(self, values: list[object] | None = None, array: np.ndarray | None = None):
        values = values if values is not None else []
        if array is None and _int64s(values):
            array = np.array(values, dtype=np.int64)
        self.array = array
        self._values = values if array is None else None
        self._index: dict[object, int] | None = None

    def __len__(self) -> int:
        return len(self.array) if self.array is not None else len(self.values)

    @property
    def values(self) -> list[object]:
        if self._values is None:
            assert self.array is not None
            self._values = self.array.tolist()
        return self._values

    def value(self, rank: int) -> object:
        """The value of a rank, as the value model has it (a Python int, float or str)."""
        if self.array is not None:
            return int(self.array[rank])
        return self.values[rank]

    def positions(self, distinct: np.ndarray | list[object]) -> npt.NDArray[np.float64] | None:
        """The ranks of distinct values (an int64 array, or a list), as float64; None when
        one of them is not here."""
        if isinstance(distinct, np.ndarray) and self.array is not None:
            pos = np.searchsorted(self.array, distinct)
            found = pos < len(self.array)
            found[found] = self.array[pos[found]] == distinct[found]
            return pos.astype(np.float64) if found.all() else None
        items = distinct.tolist() if isinstance(distinct, np.ndarray) else distinct
        if self._index is None:
            self._index = {v: i for i, v in enumerate(self.values)}
        index = self._index
        try:
            return np.array([index[v] for v in items], dtype=np.float64)
        except KeyError:
            return None

    def merged(self, kept: np.ndarray, distinct: np.ndarray | list[object]) -> Ranks:
        """The ranks of the values at ranks ``kept`` (int64) and of ``distinct``."""
        if isinstance(distinct, np.ndarray) and self.array is not None:
            return Ranks(array=np.union1d(self.array[kept], distinct))
        old = self.values
        new = distinct.tolist() if isinstance(distinct, np.ndarray) else distinct
        # equal numbers of two kinds (1 and 1.0) are one value: one rank
        return Ranks(sorted({old[i] for i in kept.tolist()}.union(new), key=order_key))


def _int64s(values: list[object]) -> bool:
    """True when sorted ``values`` are integers within int64 (or none)."""
    if not all(type(v) is int for v in values):
        return False
    # (ints, as checked above: mypy does not narrow a list's items by all())
    return not values or (values[0] >= _INT64_MIN and values[-1] <= _INT64_MAX)  # type: ignore[operator]


@dataclass
class Slots:
    """Where the registers of one ranked attribute live: per (partitioning, window
    spec) the extreme columns of its state classes with the key column of each one's
    window slot; per grouping the same in the result blocks."""

    states: dict[tuple[int, int], tuple[list[int], list[int]]] = field(default_factory=dict)
    results: dict[int, tuple[list[int], list[int]]] = field(default_factory=dict)


def extreme_slots(low: Lowered) -> dict[str, Slots]:
    """The :class:`Slots` of every MIN/MAX attribute of a lowered program (columns of the
    state's ``ext`` and ``keys``, ``rext`` and ``rkeys``)."""
    prog = low.program
    attr_of = [source(name)[0] for name in low.extremes]
    out: dict[str, Slots] = {}
    for c, q in enumerate(low.class_query):
        columns = low.readouts[q].columns
        m = len(columns)
        key = (int(prog.q_part[q]), int(prog.c_spec[c]))
        for slot in range(int(prog.c_NS[c])):
            for r, a in enumerate(columns):
                ext, keys = out.setdefault(attr_of[a], Slots()).states.setdefault(key, ([], []))
                ext.append(int(prog.c_eoff[c]) + slot * m + r)
                keys.append(int(prog.c_koff[c]) + slot)
    for q in range(len(low.plans)):
        columns = low.readouts[q].columns
        m = len(columns)
        gid = int(prog.q_grouping[q])
        for slot in range(int(prog.q_NS[q])):
            for r, a in enumerate(columns):
                ext, keys = out.setdefault(attr_of[a], Slots()).results.setdefault(gid, ([], []))
                ext.append(int(prog.q_reoff[q]) + slot * m + r)
                keys.append(int(prog.q_rkoff[q]) + slot)
    return out


#: The rows in use of ("states", partitioning) or ("results", grouping)
Rows = Callable[[str, int], npt.NDArray[np.int64]]


def _blocks(
    st: State, slots: Slots, rows_of: Rows
) -> Iterable[tuple[np.ndarray, tuple[np.ndarray, ...], np.ndarray]]:
    """Each block of registers of the attribute: the array, its (rows, columns) index,
    and which of its registers are in open windows."""
    for (g, sp), (ext, keys) in slots.states.items():
        rows = rows_of("states", g)
        if len(rows):
            index = np.ix_(rows, np.array(ext, dtype=np.int64))
            keyed = st.keys[np.ix_(rows, np.array(keys, dtype=np.int64))]
            yield st.ext, index, keyed >= st.closed[sp]
    for gid, (ext, keys) in slots.results.items():
        rows = rows_of("results", gid)
        if len(rows):
            index = np.ix_(rows, np.array(ext, dtype=np.int64))
            keyed = st.rkeys[np.ix_(rows, np.array(keys, dtype=np.int64))]
            yield st.rext, index, keyed != SENT


def open_ranks(st: State, slots: Slots, rows_of: Rows) -> npt.NDArray[np.int64]:
    """The distinct ranks held by the attribute's registers of open windows (int64)."""
    found = [np.zeros(0, dtype=np.int64)]
    for array, index, live in _blocks(st, slots, rows_of):
        held = array[index]
        found.append(held[live & ~np.isnan(held)].astype(np.int64))
    return np.unique(np.concatenate(found))


def renumber(st: State, slots: Slots, rows_of: Rows, mapping: np.ndarray) -> None:
    """Give the attribute's registers of open windows their new ranks (``mapping``: old
    rank -> new); clear the others (no window reads them again: a slot is cleared when
    a later window claims it)."""
    for array, index, live in _blocks(st, slots, rows_of):
        held = array[index]
        live &= ~np.isnan(held)
        array[index] = np.where(live, mapping[np.where(live, held, 0).astype(np.int64)], np.nan)
