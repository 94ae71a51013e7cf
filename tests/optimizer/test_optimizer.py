"""The sharing plan: one plan per strategy, printed by ``explain``, executed by ``run``.

Golden files (``golden/explain/*.tq`` -> ``*.<engine>.out``) hold what ``trendagg
explain`` prints for a workload; regenerate them after an intended change with
``TRENDAGG_REGEN_GOLDEN=1 pytest tests/optimizer/test_optimizer.py`` and review the diff.
The executors are checked to run the plan they are given: the kernel's sharing
sets are the plan's compiled bursts, the Python HAMLET's components the plan's.
"""

from __future__ import annotations

import io
import os
from pathlib import Path

import pytest
from hypothesis import given

from trendagg.cli import main
from trendagg.engine import Runner
from trendagg.io import from_records
from trendagg.kernels.lower.core import shared_classes
from trendagg.kernels.lower.program import lower
from trendagg.language import ast, parse
from trendagg.optimizer.plan import sharing_plan
from trendagg.plan.compile import compile_query, compile_workload
from workloads import shared_cases

GOLDEN = Path(__file__).resolve().parents[1] / "golden" / "explain"
CASES = sorted(GOLDEN.glob("*.tq"))
REGEN = os.environ.get("TRENDAGG_REGEN_GOLDEN") == "1"


@pytest.mark.parametrize("engine", ["local", "reference"])
@pytest.mark.parametrize("case", CASES, ids=[case.stem for case in CASES])
def test_explain_golden(case: Path, engine: str) -> None:
    out, err = io.StringIO(), io.StringIO()
    assert main(["explain", str(case), "--engine", engine], out, err) == 0, err.getvalue()
    expected = case.with_suffix(f".{engine}.out")
    if REGEN:
        expected.write_text(out.getvalue(), encoding="utf-8")
    assert expected.exists(), f"missing {expected.name}; run with TRENDAGG_REGEN_GOLDEN=1"
    assert out.getvalue() == expected.read_text(encoding="utf-8")


SHARON_CASES = sorted((GOLDEN.parent / "explain_sharon").glob("*.tq"))


@pytest.mark.parametrize(
    ("engine", "model"), [("local", "factor-one"), ("reference", "factor-one"), ("local", "kernel")]
)
@pytest.mark.parametrize("case", SHARON_CASES, ids=[case.stem for case in SHARON_CASES])
def test_explain_sharon_golden(case: Path, engine: str, model: str) -> None:
    """``explain --strategy sharon``: the plan, then SHARON's candidates with their
    BValues, the conflicts, what was pruned and why, the plan beside GWMIN's, the rates;
    under the paper's cost model (its worked example) and the kernel's (the default: at
    rate 1, 10 windows an event, only (OakSt, MainSt, WestSt) pays on trendagg's
    executors, which ends both its queries)."""
    out, err = io.StringIO(), io.StringIO()
    argv = ["explain", str(case), "--strategy", "sharon", "--engine", engine]
    argv += ["--cost-model", model]
    assert main(argv, out, err) == 0, err.getvalue()
    suffix = "" if model == "factor-one" else f".{model}"
    expected = case.with_suffix(f"{suffix}.{engine}.out")
    if REGEN:
        expected.write_text(out.getvalue(), encoding="utf-8")
    assert out.getvalue() == expected.read_text(encoding="utf-8")


def test_explain_plot_draws_sharons_graph(tmp_path: Path) -> None:
    case = SHARON_CASES[0]
    picture = tmp_path / "graph.png"
    out, err = io.StringIO(), io.StringIO()
    argv = ["explain", str(case), "--strategy", "sharon", "--plot", str(picture)]
    assert main(argv, out, err) == 0, err.getvalue()
    assert picture.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and picture.stat().st_size > 10_000
    assert f"drew SHARON's graph to {picture}" in err.getvalue()
    out, err = io.StringIO(), io.StringIO()
    assert main(["explain", str(case), "--plot", str(tmp_path / "x.png")], out, err) == 2
    assert "use it with --strategy sharon" in err.getvalue()
    assert not (tmp_path / "x.png").exists()


GLORIA_CASES = {
    "table3": "F=10,A=5,B=10,C=12,D=4,E=3",
    "kleene": "C=1,A=5,B=10,D=4",
}


@pytest.mark.parametrize("engine", ["local", "reference"])
@pytest.mark.parametrize("name", sorted(GLORIA_CASES))
@pytest.mark.parametrize("model", ["paper", "kernel"])
def test_explain_gloria_golden(name: str, engine: str, model: str) -> None:
    """``explain --strategy gloria --rates ...``: the plan (the queries of shared Q-sets
    on the python executor, the rest as under hamlet), then GLORIA's graph as Table 3
    prints it (nodes kept and pruned with d_s, the pruned edges, Algorithm 1's case,
    the chosen plan and its cost: 307 for Table 3's workload under the paper's model,
    spec E4), the rates. Under the kernel's model (what run plans with) the same
    workloads share nothing: two or three queries per transition save the running
    totals fewer updates than the snapshots' evaluations cost."""
    case = GOLDEN.parent / "explain_gloria" / f"{name}.tq"
    out, err = io.StringIO(), io.StringIO()
    argv = ["explain", str(case), "--strategy", "gloria", "--engine", engine]
    argv += ["--cost-model", model]
    assert main([*argv, "--rates", GLORIA_CASES[name]], out, err) == 0, err.getvalue()
    suffix = "" if model == "paper" else f".{model}"
    expected = case.with_suffix(f"{suffix}.{engine}.out")
    if REGEN:
        expected.write_text(out.getvalue(), encoding="utf-8")
    assert out.getvalue() == expected.read_text(encoding="utf-8")


def test_explain_plot_draws_glorias_graph_and_rates_are_checked(tmp_path: Path) -> None:
    case = GOLDEN.parent / "explain_gloria" / "table3.tq"
    picture = tmp_path / "graph.png"
    out, err = io.StringIO(), io.StringIO()
    argv = ["explain", str(case), "--strategy", "gloria", "--plot", str(picture)]
    assert main([*argv, "--rates", GLORIA_CASES["table3"]], out, err) == 0, err.getvalue()
    assert picture.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and picture.stat().st_size > 10_000
    assert f"drew GLORIA's graph to {picture}" in err.getvalue()
    out, err = io.StringIO(), io.StringIO()
    assert main(["explain", str(case), "--strategy", "gloria", "--rates", "F:10"], out, err) == 2
    assert "'F:10' is not TYPE=NUMBER" in err.getvalue()
    out, err = io.StringIO(), io.StringIO()
    assert main(["explain", str(case), "--rates", "F=10"], out, err) == 2
    assert "use --strategy sharon or gloria" in err.getvalue()


def test_explain_sharon_estimates_the_rates_as_run_does(tmp_path: Path) -> None:
    """With events, explain plans with the rates run estimates from the first events,
    and runs it: sharon's rows there equal greta's."""
    import json

    text = "".join(
        f"q{i + 1}: RETURN COUNT(*) PATTERN SEQ({first}, B, C, E) WITHIN 1 min;\n"
        for i, first in enumerate("ADFGHJ")
    )
    queries = tmp_path / "q.tq"
    queries.write_text(text)
    events = tmp_path / "e.jsonl"
    # one B after the six prefixes, then C and E: sharing (B, C, E) among the six pays on
    # the kernel (one START group); (B, C) does not (E would evaluate it per query)
    kinds = "ADFGHJB" + "CE" * 26 + "A"
    events.write_text(
        "".join(json.dumps({"type": kinds[i], "time": i}) + "\n" for i in range(len(kinds)))
    )
    out, err = io.StringIO(), io.StringIO()
    assert main(["explain", str(queries), str(events), "--strategy", "sharon"], out, err) == 0
    said = out.getvalue()
    assert f"rates: estimated from the first 60 events of {events}" in said
    plans = compile_workload(parse(text))
    from trendagg.io import read_events
    from trendagg.optimizer.sharon import estimate_rates

    read = read_events(events).events
    plan = sharing_plan(plans, "sharon", rates=estimate_rates(plans, read))
    assert plan.describe() in said
    runner = Runner(plans, "sharon")
    rows = runner.feed(read) + runner.finish()
    assert [s.pattern for s in plan.sequences] == [("B", "C", "E")]
    assert runner.sharing is not None and runner.sharing.sequences == plan.sequences
    from trendagg.engine import run_strategy

    assert sorted(map(repr, rows)) == sorted(map(repr, run_strategy(plans, read, "greta")))


REVIEW = (GOLDEN / "review.tq").read_text()


def test_the_plan_says_what_each_executor_shares() -> None:
    """The review's workload: both executors share B+ among every query they run,
    whatever its predicates on B (event-level snapshots where they differ); q5 (NOT)
    runs compiled too, its A shared with q1's and q2's (a NOT between A and B changes
    what B reads, not A's registers)."""
    plans = compile_workload(parse(REVIEW))
    local = sharing_plan(plans, "hamlet")
    assert [r.executor for r in local.routes] == ["compiled"] * 5
    assert [(b.executor, b.members) for b in local.bursts] == [
        ("compiled", (("q1", "B"), ("q2", "B"), ("q3", "B"), ("q4", "B"), ("q5", "B")))
    ]
    assert local.bursts[0].rules == (
        "has x AND B.x > 1",
        "every event",
        "has x",
        "every event",
        "every event",
    )
    # the state classes the kernel runs: q1 and q2 start alike at A (B differs: its rule)
    low = lower([plans[q] for q in local.on("compiled")], local)
    assert shared_classes(low) == ["{q1.A, q2.A, q5.A}"]
    assert shared_classes(lower(plans[:4], sharing_plan(plans[:4], "greta"))) == []
    python = sharing_plan(plans, "hamlet-static", compiled=False)
    assert [(b.executor, b.decision, len(b.members)) for b in python.bursts] == [
        ("python", "always", 5)
    ]
    assert sharing_plan(plans, "greta").bursts == ()


def _runner(queries: list[ast.Query], records: list[dict[str, object]], strategy: str) -> Runner:
    plans = [compile_query(q) for q in queries]
    runner = Runner(plans, strategy)
    runner.feed(from_records(records).events)
    runner.finish()
    return runner


@given(shared_cases(max_queries=6, max_events=6))
def test_the_executors_run_the_plan_they_are_given(
    case: tuple[list[ast.Query], list[dict[str, object]]],
) -> None:
    queries, records = case
    for strategy in ("hamlet", "hamlet-static"):
        runner = _runner(queries, records, strategy)
        plan = runner.sharing
        assert plan == sharing_plan(runner.plans, strategy) or any(
            r.reason.startswith("attribute") for r in plan.routes
        )
        compiled = [b for b in plan.bursts if b.executor == "compiled"]
        if runner.compiled is not None:
            low = runner.compiled.low
            names = [p.name for p in low.plans]
            sets = list(zip(low.program.set_q_ptr[:-1], low.program.set_q_ptr[1:], strict=True))
            # one kernel set per coefficient class of each burst, in the plan's order
            assert low.set_bursts == [
                i for i, b in enumerate(compiled) for _ in range(len(b.classes()))
            ]
            assert low.set_types == [compiled[i].type_ for i in low.set_bursts]
            for (lo, hi), i in zip(sets, low.set_bursts, strict=True):
                members = {names[q] for q in low.program.set_q[lo:hi]}
                # a state class is updated once, by its representative: a subset of
                # one coefficient class
                assert any(members <= {name for name, _ in c} for c in compiled[i].classes())
        else:
            assert not compiled
        if runner.executor is not None and hasattr(runner.executor, "components"):
            got = [tuple(c.comp.queries) for c in runner.executor.components]
            assert got == [c.queries for c in plan.components]


def test_a_query_whose_sum_mixes_kinds_stays_compiled() -> None:
    """Integers and decimals in a summed attribute: the kernel keeps each output's kind
    (hidden registers), so the query is not moved to Python."""
    plans = compile_workload(
        parse(
            "q1: RETURN SUM(B.v) PATTERN SEQ(A, B+) WITHIN 10 s; q2: RETURN COUNT(*) PATTERN SEQ(A, B+) WITHIN 10 s"
        )
    )
    runner = Runner(plans, "hamlet")
    records = [
        {"type": "A", "time": 1},
        {"type": "B", "time": 2, "v": 1},
        {"type": "B", "time": 3, "v": 0.5},
    ]
    runner.feed(from_records(records).events)
    assert [r.executor for r in runner.sharing.routes] == ["compiled", "compiled"]
    assert runner.executor is None
    rows = {r.query: r.values for r in runner.finish()}
    # a1 b2 b3: trends a1 b2, a1 b3, a1 b2 b3; B.v sums 1 + 0.5 + 1.5
    assert rows == {"q1": {"SUM(B.v)": 3.0}, "q2": {"COUNT(*)": 3}}
    assert isinstance(rows["q1"]["SUM(B.v)"], float)


def test_the_route_comes_from_the_plan_not_from_the_values() -> None:
    """MAX over integers beyond 2**53 (float64 registers), MIN over words: the kernel
    ranks them, so every query stays compiled whatever the events hold, and the
    results are exact. (Before, such queries moved to Python on the first chunk.)"""
    plans = compile_workload(
        parse(
            "q1: RETURN MAX(B.v) PATTERN SEQ(A, B+) WITHIN 10 s;"
            "q2: RETURN MIN(B.w) PATTERN SEQ(A, B+) WITHIN 10 s;"
            "q3: RETURN SUM(B.v) PATTERN SEQ(A, B+) WITHIN 10 s"
        )
    )
    runner = Runner(plans, "hamlet")
    assert [r.executor for r in runner.sharing.routes] == ["compiled"] * 3
    records = [
        {"type": "A", "time": 1},
        {"type": "B", "time": 2, "v": 2**53 + 1, "w": "b"},
        {"type": "B", "time": 3, "v": 2**70, "w": "a"},
    ]
    runner.feed(from_records(records).events)
    assert [r.executor for r in runner.sharing.routes] == ["compiled"] * 3
    assert runner.executor is None
    rows = {r.query: r.values for r in runner.finish()}
    assert rows == {
        "q1": {"MAX(B.v)": 2**70},
        "q2": {"MIN(B.w)": "a"},
        "q3": {"SUM(B.v)": 2 * (2**53 + 1 + 2**70)},
    }
