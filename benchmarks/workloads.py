"""Benchmark workloads: many queries sharing Travel+ over the rideshare stream (HAMLET, 5.1)."""

from __future__ import annotations

PREFIXES = ["Request", "Accept", "Pickup", "Wait", "Login", "Surge", "Traffic", "Reroute"]
SUFFIXES = ["Dropoff", "Pay", "Rate", "Tip", "Break", "Logout", "Complaint", "Inspect"]


def sharing_workload(
    k: int, window: str = "WITHIN 10 min SLIDE 5 min", predicates: bool = False
) -> str:
    """k queries with different patterns around the shared Kleene sub-pattern Travel+.

    Like HAMLET's first workload, they share the Kleene sub-pattern, window, grouping
    and aggregates and differ in their patterns. With ``predicates``, query i keeps
    only travel legs faster than a threshold of its own, so events are bound by some
    queries and not others (event-level snapshots, HAMLET Def. 3.11).
    """
    shapes = []
    for p in PREFIXES:
        shapes.append(f"SEQ({p} P, Travel T+)")
    for s in SUFFIXES:
        shapes.append(f"SEQ(Travel T+, {s} S)")
    for p in PREFIXES:
        for s in SUFFIXES:
            shapes.append(f"SEQ({p} P, Travel T+, {s} S)")
    if k > len(shapes):
        raise ValueError(f"at most {len(shapes)} queries")
    lines = []
    for i in range(k):
        where = "[driver]"
        if predicates:
            where += f" AND T.speed > {10 + 5 * (i % 8)}"
        lines.append(
            f"q{i + 1}: RETURN COUNT(*), SUM(T.duration) PATTERN {shapes[i]} WHERE {where} {window};"
        )
    return "\n".join(lines)
