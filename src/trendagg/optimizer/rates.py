"""Event rates for the cost models of SHARON and GLORIA, estimated from a stream's start.

A rate is an event type's events per window and partition: (events of E) x WITHIN /
(the time the sample spans, at least WITHIN) / (partitions that E's events fall in), a
partition being a value of the queries' partition attributes; a binding filter's rate
counts only the events of E that pass it (GLORIA, spec A14). The sample is the
stream's first :data:`SAMPLE` events, so every process that plans the same stream (each
Spark bucket, each stream key) gets the same rates, and so the same plan.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping
from fractions import Fraction
from typing import Any

from trendagg.io.batch import EventBatch

SAMPLE = 100_000  # events of the stream's start that the rates are estimated from
Filter = Callable[[Mapping[str, object]], bool]  # does an event (its attributes) pass


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

    ``filters``: per group, binding filters keyed ``(type, rule)``, each a test of an
    event's attributes; the group's rates then also hold, under that key, the rate of
    the type's events that pass it (over the partitions of all the type's events, so a
    filter that passes 10% of E's events has 10% of E's rate)."""
    head = events.take(slice(0, sample))
    span = float(head.times.max() - head.times.min()) if len(head) else 0.0
    kinds = head.type_values()
    values: dict[str, list[object]] | None = None
    out: dict[tuple[object, ...], dict[Any, float]] = {}
    for signature, (within, names, wanted) in groups.items():
        windows = max(span, float(within)) / float(within)
        columns = [head.columns[n].python_values() if n in head.columns else None for n in names]
        tests: dict[str, list[tuple[tuple[str, object], Filter]]] = {}
        for key_, test in (filters or {}).get(signature, {}).items():
            tests.setdefault(key_[0], []).append((key_, test))
        if tests and values is None:
            values = {n: c.python_values() for n, c in head.columns.items()}
        counts: dict[Any, int] = {}
        keys: dict[str, set[tuple[object, ...]]] = {}
        for i, kind in enumerate(kinds):
            if kind not in wanted:
                continue
            key = tuple(None if c is None else c[i] for c in columns)
            if None in key:
                continue
            counts[kind] = counts.get(kind, 0) + 1
            keys.setdefault(kind, set()).add(key)
            if kind in tests:
                assert values is not None
                attrs = {n: v[i] for n, v in values.items() if v[i] is not None}
                for key_, test in tests[kind]:
                    if test(attrs):
                        counts[key_] = counts.get(key_, 0) + 1
        rates: dict[Any, float] = {}
        for t in sorted(wanted):
            parts = max(1, len(keys.get(t, ())))
            rates[t] = counts.get(t, 0) / windows / parts
            for key_, _ in tests.get(t, ()):
                rates[key_] = counts.get(key_, 0) / windows / parts
        out[signature] = rates
    return out


__all__ = ["SAMPLE", "sample_rates"]
