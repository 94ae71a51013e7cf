"""How events are routed to the queries that read them: query groups and their keys.

Queries are grouped by their unqualified partition attributes (those apply to every
variable, so every event a group reads has them and the events can be routed by them
exactly; qualified attributes and their wildcard events are resolved by the engine). A
group reads the events of its types that have every key attribute (:func:`group_events`).
Spark's batch and streaming pipelines route by these groups; :class:`KeysSeen` counts the
distinct keys they route, the "partitions" of a run's summary, the same number on every
engine (an engine's own instances are made and freed as windows close, so their number
depends on the engine and on when it is read).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class QueryGroup:
    """Queries evaluated together on one partitioning of the stream."""

    names: tuple[str, ...]
    key: tuple[str, ...]
    types: tuple[str, ...]


def query_groups(plans: Sequence[Any]) -> list[QueryGroup]:
    """Group queries by their unqualified partition attributes (HAMLET runs per group)."""
    groups: dict[tuple[str, ...], list[Any]] = {}
    for plan in plans:
        key = tuple(sorted({a.name for a in plan.partition_attrs if a.var is None}))
        groups.setdefault(key, []).append(plan)
    return [
        QueryGroup(
            tuple(p.name for p in members),
            key,
            tuple(sorted({t for p in members for t in p.type_to_var})),
        )
        for key, members in groups.items()
    ]


def group_events(group: QueryGroup, events: Any) -> Any:
    """The events a group reads: of its types, every key attribute present."""
    import numpy as np

    types = set(group.types)
    mask = np.array([t in types for t in events.type_names] + [False], np.bool_)[events.types]
    for name in group.key:
        col = events.columns.get(name)
        if col is None:
            return np.zeros(0, np.int64)
        mask &= col.valid
    return np.flatnonzero(mask)


def _codes(col: Any) -> tuple[Any, Sequence[object]]:
    """Per value of a Column (all valid), the number of its distinct value, and the
    distinct values (equal as the engine compares them: 1 and 1.0 are one value). Text
    keeps its dictionary's codes and a narrow range of ints its offsets (no sort)."""
    import numpy as np

    if col.kind == "mixed":
        seen: dict[object, int] = {}
        numbers = [seen.setdefault(v, len(seen)) for v in col.values]
        return np.array(numbers, np.int64), list(seen)
    if col.kind == "text":
        return col.values.astype(np.int64), list(col.dictionary)
    if col.kind == "int" and len(col.values):
        lo, hi = int(col.values.min()), int(col.values.max())
        if hi - lo <= 4 * len(col.values):
            return col.values - lo, range(lo, hi + 1)
    distinct, codes = np.unique(col.values, return_inverse=True)
    return codes.reshape(-1), distinct.tolist()


def _distinct(codes: Sequence[Any], sizes: Sequence[int]) -> list[tuple[int, ...]]:
    """The distinct rows of the columns of codes (each below its size): as one mixed-radix
    number per row, counted in a bitmap where the numbers are few (no sort), else sorted."""
    import numpy as np

    total = 1
    for size in sizes:
        total *= max(size, 1)
    if total >= 2**62:  # (keys of many wide columns: rows sorted as rows)
        return [tuple(r) for r in np.unique(np.stack(codes, axis=1), axis=0).tolist()]
    number = np.zeros(len(codes[0]), np.int64)
    for column, size in zip(codes, sizes, strict=True):
        number = number * size + column
    if total <= 4 * len(number) + 1024:
        found = np.flatnonzero(np.bincount(number, minlength=total))
    else:
        found = np.unique(number)
    rows = []
    for value in found.tolist():
        row = []
        for size in reversed(sizes):
            value, code = divmod(value, size)
            row.append(code)
        rows.append(tuple(reversed(row)))
    return rows


class KeysSeen:
    """The distinct partition keys of a workload's query groups among the events given
    (a group without key attributes that reads events is one key), summed over the
    groups: one number for every engine, counted from the events, not from an engine's
    state."""

    def __init__(self, plans: Sequence[Any]):
        self.groups = query_groups(plans)
        self.keys: list[set[tuple[object, ...]]] = [set() for _ in self.groups]

    def add(self, events: Any) -> None:

        for group, seen in zip(self.groups, self.keys, strict=True):
            index = group_events(group, events)
            if not len(index):
                continue
            if not group.key:
                seen.add(())
                continue
            codes, values = zip(
                *(_codes(events.columns[name].take(index)) for name in group.key), strict=True
            )
            rows = _distinct(codes, [len(v) for v in values])
            seen.update(tuple(v[c] for v, c in zip(values, row, strict=True)) for row in rows)

    @property
    def count(self) -> int:
        return sum(len(seen) for seen in self.keys)


__all__ = ["KeysSeen", "QueryGroup", "group_events", "query_groups"]
