"""The lowering: a compiled workload's plans and its sharing plan to the tables the
kernel loops over. Pure Python: no numba, nothing of the loop modules
(``tests/test_layering.py`` checks it); the runtime (:mod:`trendagg.kernels.runtime`)
imports it, never the other way round.

:func:`~trendagg.kernels.lower.program.lower` takes the queries the plan routes to the
kernel (:func:`~trendagg.optimizer.plan.compiled_blocker`: qualified partition
attributes only when nested; decided from the plan, never from the data) and runs the
construct passes of :data:`~trendagg.kernels.lower.program.PASSES` in order over one
:class:`~trendagg.kernels.lower.builder.Builder`, each filling the tables the later ones
read. A module per construct:

- :mod:`~trendagg.kernels.lower.core`: per query its window, partitioning, grouping,
  states, registers (hidden ones of attributes of both kinds) and bindings; the state
  classes (states of different queries whose registers are equal by construction) and
  their blocks; result blocks; bindings by type; the roles of types;
- :mod:`~trendagg.kernels.lower.bursts`: the sharing sets of the plan's shared Kleene
  bursts;
- :mod:`~trendagg.kernels.lower.negation`: negative sub-patterns as queries of their
  own, their queues and signals;
- :mod:`~trendagg.kernels.lower.edges`: NEXT conditions: logs, stack programs, ordered
  indexes;
- :mod:`~trendagg.kernels.lower.lazy`: lazy windows (registers by the start of the
  trends);
- :mod:`~trendagg.kernels.lower.templates`: the classes of a qualified partitioning kept
  in its template instance;
- :mod:`~trendagg.kernels.lower.snapshots` and
  :mod:`~trendagg.kernels.lower.snapshot_savings`: GLORIA's and SHARON's snapshot
  tables;
- :mod:`~trendagg.kernels.lower.program`: the tables (:class:`Program`,
  :class:`Lowered`), the passes in order and :func:`lower`;
- :mod:`~trendagg.kernels.lower.builder`: the state the passes share and the helpers
  they lay tables out with.
"""
