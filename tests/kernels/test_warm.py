"""The warm-up (``python -m trendagg.kernels.warm``) compiles both kernels.

The test session warms them first (tests/conftest.py); were a workload of the
warm-up routed to Python, or both on one kernel, the other kernel would be compiled
by the tests instead, one after the other. These tests pin what each workload
runs on."""

from __future__ import annotations

import pytest

from trendagg.engine import run_strategy
from trendagg.engine.runner import Runner
from trendagg.io import from_records
from trendagg.kernels import warm
from trendagg.language import parse
from trendagg.plan.compile import compile_workload


@pytest.mark.parametrize("name", sorted(warm.WORKLOADS))
def test_each_warm_up_workload_runs_compiled_on_its_kernel(name: str) -> None:
    runner = Runner(compile_workload(parse(warm.WORKLOADS[name])), "hamlet")
    assert runner.sharing.on("python") == []
    kernel = runner.compiled
    assert kernel._queues() is (name == "queues")
    prog = kernel.prog
    if name == "queues":  # a NOT, a NEXT index and a NEXT log
        assert len(prog.nt_q) > 0 and len(prog.ix_q) > 0 and prog.nt_log.sum() > 0
    else:  # a shared burst
        assert prog.set_boff.shape[0] > 0


@pytest.mark.parametrize("name", sorted(warm.WORKLOADS))
def test_the_warm_up_workloads_find_trends_and_equal_twostep(name: str) -> None:
    plans = compile_workload(parse(warm.WORKLOADS[name]))
    events = from_records(warm._records()).events
    rows = run_strategy(plans, events, "hamlet")
    assert {row.query for row in rows if row.values["COUNT(*)"] > 0} == {"q1", "q2"}
    assert sorted(map(repr, rows)) == sorted(map(repr, run_strategy(plans, events, "twostep")))


def test_warm_kernels_runs_each_variant_in_a_process_of_its_own(capsys) -> None:  # type: ignore[no-untyped-def]
    assert warm.main([]) == 0
    assert "kernels ready (plain, queues)" in capsys.readouterr().out
