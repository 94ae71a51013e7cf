"""Event rates for the cost models of SHARON and GLORIA, estimated from a stream's start.

A rate is an event type's events per window and partition: (events of E) x WITHIN /
(the time the sample spans, at least WITHIN) / (partitions that E's events fall in), a
partition being a value of the queries' partition attributes. The sample is the
stream's first :data:`SAMPLE` events, so every process that plans the same stream (each
Spark bucket, each stream key) gets the same rates, and so the same plan.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from fractions import Fraction

from trendagg.io.batch import EventBatch

SAMPLE = 100_000  # events of the stream's start that the rates are estimated from


def sample_rates(
    events: EventBatch,
    groups: Mapping[tuple[object, ...], tuple[Fraction | float, tuple[str, ...], Collection[str]]],
    sample: int = SAMPLE,
) -> dict[tuple[object, ...], dict[str, float]]:
    """Per group (a signature of queries: its window length WITHIN, its partition
    attributes, the event types it reads), each type's rate in the first ``sample``
    ``events``. An event without a value at a partition attribute is in no partition
    (the queries do not read it); a type without events in the sample has rate 0."""
    head = events.take(slice(0, sample))
    span = float(head.times.max() - head.times.min()) if len(head) else 0.0
    kinds = head.type_values()
    out: dict[tuple[object, ...], dict[str, float]] = {}
    for signature, (within, names, wanted) in groups.items():
        windows = max(span, float(within)) / float(within)
        columns = [head.columns[n].python_values() if n in head.columns else None for n in names]
        counts: dict[str, int] = {}
        keys: dict[str, set[tuple[object, ...]]] = {}
        for i, kind in enumerate(kinds):
            if kind not in wanted:
                continue
            key = tuple(None if c is None else c[i] for c in columns)
            if None in key:
                continue
            counts[kind] = counts.get(kind, 0) + 1
            keys.setdefault(kind, set()).add(key)
        out[signature] = {
            t: counts.get(t, 0) / windows / max(1, len(keys.get(t, ()))) for t in sorted(wanted)
        }
    return out


__all__ = ["SAMPLE", "sample_rates"]
