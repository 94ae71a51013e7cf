"""Execution strategies behind one interface: compiled workload + events -> result rows.

``twostep`` enumerates trends (the reference); ``greta`` aggregates them online
without building them. Every strategy returns exactly the rows of SEMANTICS.md.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from trendagg.errors import InputError

STRATEGIES = ("hamlet", "hamlet-static", "greta", "twostep")
DEFAULT_STRATEGY = "hamlet"


def run_strategy(
    plans: list[Any],
    events: Any,
    strategy: str = DEFAULT_STRATEGY,
    *,
    trend_limit: int | None = None,
    progress: Callable[[int], None] | None = None,
    stats: dict[str, Any] | None = None,
    log: bool = False,
) -> list[Any]:
    """Run compiled query plans over an EventBatch with the named strategy.

    ``progress`` is called with the number of events done since its last call;
    ``stats`` (a dict) receives counters such as ``partitions`` (and ``hamlet``, the
    sharing counters); ``log`` keeps HAMLET's per-burst decisions in them.
    """
    if strategy in ("hamlet", "hamlet-static"):
        from trendagg.engine.hamlet import run_hamlet

        return run_hamlet(
            plans, events, dynamic=strategy == "hamlet", progress=progress, stats=stats, log=log
        )
    if strategy == "greta":
        from trendagg.engine.greta import run_greta

        return run_greta(plans, events, progress=progress, stats=stats)
    if strategy == "twostep":
        from trendagg.engine.twostep import DEFAULT_TREND_LIMIT, run_twostep

        rows = run_twostep(
            plans, events, trend_limit=trend_limit or DEFAULT_TREND_LIMIT, stats=stats
        )
        if progress is not None:
            progress(len(events))
        return rows
    raise InputError(f"unknown strategy '{strategy}'; choose one of {', '.join(STRATEGIES)}")
