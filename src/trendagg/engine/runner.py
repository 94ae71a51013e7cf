"""One interface for every strategy: feed events in time order, get rows as windows close.

A :class:`Runner` takes events in chunks (a file at once, Arrow batches of a
Spark partition, micro-batches of a stream) and keeps the strategy's state
between chunks, so no partition has to be held in memory whole. Events of
the latest time are held back until a later time (or the end) arrives, since
a chunk may end in the middle of a run of equal times.

Which executor runs a query is decided from the plan when the Runner is made
(:func:`~trendagg.optimizer.plan.sharing_plan`), never from the events: the
compiled engine aggregates every value the Python engine does (words and
integers of any size in a MIN or MAX, integers beside decimals) and refuses
what it refuses (a SUM over a word) with the same error.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from trendagg.errors import ExecutionError
from trendagg.io.batch import EventBatch
from trendagg.io.results import ResultRow
from trendagg.io.values import time_text
from trendagg.optimizer.plan import SharingPlan, sharing_plan, unshared_note
from trendagg.plan.compile import QueryPlan, attributes_read
from trendagg.plan.routing import KeysSeen

DEFAULT_STRATEGY = "hamlet"
DEFERRED = ("sharon", "gloria")  # strategies whose plan waits for the rates of the first chunk
LOGGED_DECISIONS = 100_000  # per-burst decisions the compiled executor keeps with log=True


class OutOfOrder(ExecutionError):
    """An event earlier than what the runner was promised or already holds."""


def check_order(t: Any, floor: Any, held: Any) -> None:
    """Raise unless an event at t may still come: not before the watermark ``floor``
    (set by ``advance``) nor before the latest time ``held`` back so far."""
    if floor is not None and t < floor:
        raise OutOfOrder(
            f"event at time {time_text(t)} arrived after the runner advanced to {time_text(floor)}"
        )
    if held is not None and t < held:
        raise OutOfOrder(
            f"event at time {time_text(t)} arrived after time {time_text(held)}: feed each "
            f"partition's events in "
            f"time order (sort them, or use the streaming pipeline, which handles late events)"
        )


def _python_executor(
    plans: list[QueryPlan], sharing: SharingPlan, trend_limit: int | None, log: bool
) -> Any:
    """The Python reference executor (:mod:`trendagg.reference`) for the queries ``sharing``
    routes to it (None: there are none)."""
    queries = sharing.on("python")
    if not queries:
        return None
    if sharing.strategy == "aseq":
        from trendagg.reference.aseq import ASeqExecutor

        return ASeqExecutor(plans, sharing)
    if sharing.strategy == "sharon":
        from trendagg.reference.sharon import SharonExecutor

        return SharonExecutor(plans, sharing, log=log)
    if sharing.strategy == "gloria":
        from trendagg.reference.gloria import GloriaExecutor

        return GloriaExecutor(plans, sharing, log=log)
    if sharing.strategy in ("hamlet", "hamlet-static"):
        from trendagg.reference.hamlet import HamletExecutor

        return HamletExecutor(plans, sharing, log=log)
    if sharing.strategy == "greta":
        from trendagg.reference.greta import GretaExecutor

        return GretaExecutor([plans[q] for q in queries])
    from trendagg.reference.twostep import TwoStepExecutor

    return TwoStepExecutor([plans[q] for q in queries], trend_limit)


class Runner:
    """Run a compiled workload over events fed in time order, chunk by chunk."""

    def __init__(
        self,
        plans: list[QueryPlan],
        strategy: str = DEFAULT_STRATEGY,
        *,
        trend_limit: int | None = None,
        log: bool = False,
        compiled: bool = True,
        plan: SharingPlan | None = None,
        rates: Mapping[Any, Any] | None = None,
    ):
        """``plan``: run this sharing plan (of ``strategy``, for ``plans``) instead of
        the one its policy makes (:func:`~trendagg.optimizer.plan.sharing_plan`).
        ``rates`` (sharon, gloria): the event types' rates its optimizer weighs
        candidates by; None: estimated from the first chunk fed (its first
        :data:`~trendagg.optimizer.rates.SAMPLE` events, deterministically), the plan
        made then."""
        self.plans = plans
        self.strategy = strategy
        self.compiled: Any = None
        self.executor: Any = None
        self._options = (trend_limit, log, compiled)
        if plan is not None and plan.strategy != strategy:
            raise ExecutionError(f"a {plan.strategy} plan given to a {strategy} runner")
        # what runs where and what is shared (None: a sharon or gloria plan waits for its
        # rates)
        self.sharing: SharingPlan | None = plan
        self.unshared: str | None = None  # a sharon or gloria plan that shares nothing: why
        if plan is None and (strategy not in DEFERRED or rates is not None):
            self.sharing = sharing_plan(plans, strategy, compiled=compiled, rates=rates)
        self._python_reads: set[str] = set()
        if self.sharing is not None:
            self._build(self.sharing)
        self._held: EventBatch | None = None  # the events of the latest time, held back
        self._held_time: Any = None
        self._advanced: Any = None  # the latest time the Python executor was advanced to
        self._floor: Any = None  # set by advance(): no event before it may come
        self._finished = False

    def _build(self, sharing: SharingPlan) -> None:
        """The executors of a sharing plan; log=True keeps each executor's per-burst
        decisions (the kernel's first LOGGED_DECISIONS)."""
        from dataclasses import replace

        trend_limit, log, _ = self._options
        plans = self.plans
        self.unshared = unshared_note(plans, sharing)
        # (explain's detail: not kept)
        self.sharing = sharing = replace(sharing, sharon=None, gloria=None)
        fast = [plans[q] for q in sharing.on("compiled")]
        if fast:
            from trendagg.kernels.runtime.executor import CompiledExecutor
            from trendagg.kernels.warm import notice_before_compile

            self.compiled = CompiledExecutor(fast, sharing, log=LOGGED_DECISIONS if log else 0)
            notice_before_compile(self.compiled)  # (a line on stderr when they must compile)
        self.executor = _python_executor(plans, sharing, trend_limit, log)
        # the attributes the Python executor's queries read: the only ones it is given
        self._python_reads = attributes_read([plans[q] for q in sharing.on("python")])

    def _planned(self, events: EventBatch | None) -> None:
        """Make the sharon or gloria plan that waited for rates, from ``events`` (None:
        rate 1)."""
        if self.sharing is not None:
            return
        rates: Any = None
        if events is not None and len(events):
            from trendagg.optimizer.plan import policy_rates

            rates = policy_rates(self.plans, self.strategy, events)
        compiled = self._options[2]
        self._build(sharing_plan(self.plans, self.strategy, compiled=compiled, rates=rates))

    def feed(self, events: EventBatch) -> list[ResultRow]:
        """Process a chunk (in any order within itself, not earlier than what came before):
        sort it, hold its latest time group back (the next chunk may go on with it) and
        give the executors the complete groups before it, with the windows that end by
        that latest time to close."""
        import numpy as np

        if self._finished:
            raise ExecutionError("this runner has finished; create a new one")
        if not len(events):
            return []
        self._planned(events)
        order = events.order()
        if order is not None:  # (a sorted chunk is not sorted again)
            events = events.take(order)
        check_order(events.time_at(0), self._floor, self._held_time)
        if self._held is not None:
            from trendagg.io.gather import concat

            events = concat([self._held, events])
        last = events.time_at(-1)
        cut = int(np.searchsorted(events.times, events.times[-1], side="left"))
        self._held, self._held_time = events.take(slice(cut, len(events))), last
        return self._run(events.take(slice(0, cut)) if cut else None, last)

    def advance(self, t: Any) -> list[ResultRow]:
        """Promise that no event earlier than ``t`` will come; return the windows that end by ``t``.

        A stream calls this with its watermark, so windows close while events
        at or after ``t`` may still arrive.
        """
        if self._finished:
            raise ExecutionError("this runner has finished; create a new one")
        if self._floor is not None and t <= self._floor:
            return []
        self._planned(None)
        held = None
        if self._held is not None and self._held_time < t:
            held, self._held, self._held_time = self._held, None, None
        self._floor = t
        return self._run(held, t)

    def finish(self) -> list[ResultRow]:
        """Close every window and return the remaining rows."""
        if self._finished:
            return []
        self._finished = True
        self._planned(None)
        held, self._held = self._held, None
        rows = self._compiled_rows(held, None)
        if self.compiled is not None:
            rows.extend(self.compiled.finish())
        if self.executor is not None:
            rows.extend(self._python_rows(held, None))
            rows.extend(self.executor.finish())
        return rows

    def report(self, stats: dict[str, Any]) -> None:
        """Counters of the run so far (sharing counters: HAMLET's, the kernel's, ...), and
        ``unshared``, the line of a sharon or gloria plan that shares nothing."""
        unshared = getattr(self, "unshared", None)  # (not in a state saved before it was)
        if unshared is not None:
            stats["unshared"] = unshared
        if self.compiled is not None:
            self.compiled.report(stats)
        if self.executor is not None:
            self.executor.report(stats)

    def _run(self, events: EventBatch | None, until: Any) -> list[ResultRow]:
        """Give both executors complete time groups in time order (or none), then close
        the windows that end by ``until`` (None: the end)."""
        return self._compiled_rows(events, until) + self._python_rows(events, until)

    def _compiled_rows(self, events: EventBatch | None, until: Any) -> list[ResultRow]:
        return [] if self.compiled is None else self.compiled.feed(events, until)  # type: ignore[no-any-return]

    def _python_rows(self, events: EventBatch | None, until: Any) -> list[ResultRow]:
        if self.executor is None:
            return []
        rows: list[ResultRow] = []
        if events is not None:
            from trendagg.reference.greta import time_batches

            for t, batch in time_batches(events, self._python_reads):
                rows.extend(self._advance_python(t))  # windows ending by t are complete
                rows.extend(self.executor.step(t, batch))
        if until is not None:
            rows.extend(self._advance_python(until))
        return rows

    def _advance_python(self, t: Any) -> list[ResultRow]:
        if self._advanced is not None and t <= self._advanced:
            return []
        self._advanced = t
        return self.executor.advance(t)  # type: ignore[no-any-return]


def run_events(
    plans: list[QueryPlan],
    events: EventBatch,
    strategy: str = DEFAULT_STRATEGY,
    *,
    trend_limit: int | None = None,
    progress: Callable[[int], None] | None = None,
    stats: dict[str, Any] | None = None,
    log: bool = False,
    compiled: bool = True,
    plan: SharingPlan | None = None,
    rates: Mapping[Any, Any] | None = None,
) -> list[ResultRow]:
    """All rows of a workload over one batch of events, grouped by query in workload order.

    ``progress`` is called with the number of events done since its last call;
    ``stats`` (a dict) receives counters: ``partitions``, the distinct partition keys
    of the events (:class:`~trendagg.plan.routing.KeysSeen`, the same on every engine),
    and ``hamlet`` / ``kernel``, the sharing counters; ``log`` keeps each executor's per-burst
    decisions in them (``hamlet.decisions``, ``kernel["decisions"]``). ``compiled=False`` runs every query on the Python
    engine; by default the queries the kernel supports run compiled. ``plan``: run this
    sharing plan instead of the one the strategy makes; ``rates``: sharon's (None:
    estimated from the events).
    """
    runner = Runner(
        plans,
        strategy,
        trend_limit=trend_limit,
        log=log,
        compiled=compiled,
        plan=plan,
        rates=rates,
    )
    rows = runner.feed(events)
    rows.extend(runner.finish())
    if progress is not None:
        progress(len(events))
    if stats is not None:
        runner.report(stats)
        keys = KeysSeen(plans)
        keys.add(events)
        stats["partitions"] = keys.count
    order = {p.name: i for i, p in enumerate(plans)}
    rows.sort(key=lambda r: order[r.query])  # stable: windows stay in order within a query
    return rows
