"""Event rates for the cost models of SHARON and GLORIA, estimated from a stream's start.

A rate is an event type's events per window and partition: (events of E) x WITHIN /
(the time the sample spans, at least WITHIN) / (partitions that E's events fall in), a
partition being a value of the queries' partition attributes; a binding filter's rate
counts only the events of E that pass it (GLORIA, spec A14). The sample is the
stream's first :data:`SAMPLE` events, so every process that plans the same stream (each
Spark bucket, each stream key) gets the same rates, and so the same plan.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping
from fractions import Fraction
from typing import Any, NamedTuple

import numpy as np

from trendagg.io.batch import EventBatch
from trendagg.plan.masks import filter_mask

SAMPLE = 100_000  # events of the stream's start that the rates are estimated from


class Filter(NamedTuple):
    """A binding filter: the events of ``type_`` that have the attributes ``required``
    and pass the local ``predicates`` (a variable's :class:`~trendagg.plan.compile`
    information, as :func:`~trendagg.plan.masks.filter_mask` reads it)."""

    type_: str
    required: tuple[str, ...]
    predicates: tuple[object, ...]


def narrowing_filters(
    plan: Any, rules: Iterable[tuple[str, object]]
) -> dict[tuple[str, object], Filter]:
    """The filters of a query (a ``QueryPlan``) that bind only some of a type's events
    in a partition (attributes required beyond the partition's, local predicates),
    keyed ``(type, rule)`` for each of its types and their binding ``rules``: what the
    optimizers count rates per filter for (spec A14). A type bound to every event of a
    partition has none."""
    names = {a.name for a in plan.partition_attrs}
    out: dict[tuple[str, object], Filter] = {}
    for t, rule in rules:
        info = plan.vars[plan.type_to_var[t]]
        if info.required - names or info.local:
            out[t, rule] = Filter(info.type, tuple(sorted(info.required)), tuple(info.local))
    return out


def sample_rates(
    events: EventBatch,
    groups: Mapping[tuple[object, ...], tuple[Fraction | float, tuple[str, ...], Collection[str]]],
    sample: int = SAMPLE,
    filters: Mapping[tuple[object, ...], Mapping[tuple[str, object], Filter]] | None = None,
) -> dict[tuple[object, ...], dict[Any, float]]:
    """Per group (a signature of queries: its window length WITHIN, its partition
    attributes, the event types it reads), each type's rate in the first ``sample``
    ``events``. An event without a value at a partition attribute is in no partition
    (the queries do not read it); a type without events in the sample has rate 0.

    ``filters``: per group, binding filters keyed ``(type, rule)``; the group's rates
    then also hold, under that key, the rate of the type's events that pass it (over
    the partitions of all the type's events, so a filter that passes 10% of E's events
    has 10% of E's rate). They are evaluated on whole columns."""
    head = events.take(slice(0, sample))
    span = float(head.times.max() - head.times.min()) / head.per_second if len(head) else 0.0
    kinds = head.type_values()
    out: dict[tuple[object, ...], dict[Any, float]] = {}
    for signature, (within, names, wanted) in groups.items():
        windows = max(span, float(within)) / float(within)
        columns = [head.columns[n].python_values() if n in head.columns else None for n in names]
        counts: dict[Any, int] = {}
        keys: dict[str, set[tuple[object, ...]]] = {}
        keyed = np.zeros(len(head), dtype=bool)  # an event in a partition
        for i, kind in enumerate(kinds):
            if kind not in wanted:
                continue
            key = tuple(None if c is None else c[i] for c in columns)
            if None in key:
                continue
            keyed[i] = True
            counts[kind] = counts.get(kind, 0) + 1
            keys.setdefault(kind, set()).add(key)
        mine = (filters or {}).get(signature, {})
        for key_, rule in mine.items():
            counts[key_] = int(np.count_nonzero(filter_mask(head, rule) & keyed))
        rates: dict[Any, float] = {}
        for t in sorted(wanted):
            parts = max(1, len(keys.get(t, ())))
            rates[t] = counts.get(t, 0) / windows / parts
            for key_ in mine:
                if key_[0] == t:
                    rates[key_] = counts[key_] / windows / parts
        out[signature] = rates
    return out


__all__ = ["SAMPLE", "Filter", "narrowing_filters", "sample_rates"]
