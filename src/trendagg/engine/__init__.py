"""Execution strategies behind one interface: compiled workload + events -> result rows.

``twostep`` enumerates trends (the reference); ``greta`` aggregates them online
without building them; ``hamlet`` (the default) shares Kleene sub-patterns
across queries, ``hamlet-static`` always shares what is sharable. Every
strategy returns exactly the rows of SEMANTICS.md. :class:`~trendagg.engine.runner.Runner`
feeds events chunk by chunk; :func:`run_strategy` runs one batch.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from trendagg.engine.runner import DEFAULT_STRATEGY, STRATEGIES, Runner, run_events

__all__ = ["DEFAULT_STRATEGY", "STRATEGIES", "Runner", "run_strategy"]


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
    return run_events(
        plans, events, strategy, trend_limit=trend_limit, progress=progress, stats=stats, log=log
    )
