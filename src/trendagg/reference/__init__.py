"""The readable Python of the papers: the reference executors and the test oracles.

``twostep`` builds every trend, then aggregates (slow and obvious: the oracle
every other executor is tested equal to); ``greta`` aggregates online without
building trends (GRETA); ``hamlet`` shares Kleene bursts across queries
(HAMLET). ``key_index`` is the ordered index behind GRETA's O(log n) edge
predicates, ``registers`` how an event extends the aggregate registers.

The compiled kernel (:mod:`trendagg.kernels`) is the engine; the
:class:`~trendagg.engine.Runner` routes here what the kernel cannot run yet,
and ``compiled=False`` (``trendagg run --engine reference``) routes every query
here. They run the same :class:`~trendagg.optimizer.plan.SharingPlan`.
"""
