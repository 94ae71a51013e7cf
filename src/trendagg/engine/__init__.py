"""Execution behind one interface: compiled workload + events -> result rows.

The :class:`~trendagg.engine.runner.Runner` feeds events chunk by chunk and
routes each query, as the sharing plan of its strategy says, to the compiled
kernel (:mod:`trendagg.kernels`) or to the Python reference executors
(:mod:`trendagg.reference`: ``twostep`` enumerates trends, ``greta``
aggregates them online without building them, ``hamlet`` (the default) shares
Kleene sub-patterns across queries, ``hamlet-static`` always shares what is
sharable). Every strategy returns exactly the rows of docs/semantics.md;
:func:`run_strategy` runs one batch.
"""

from __future__ import annotations

from trendagg.engine.runner import DEFAULT_STRATEGY, Runner
from trendagg.engine.runner import run_events as run_strategy
from trendagg.optimizer.plan import STRATEGIES

__all__ = ["DEFAULT_STRATEGY", "STRATEGIES", "Runner", "run_strategy"]
