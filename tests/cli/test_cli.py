"""The command line: run, check, generate, demo, and its error messages."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from trendagg.cli import main

STREAM_11 = "a1 b2 c2 a3 e3 a4 c5 d6 b7 a8 b9"


def cli(*argv: str) -> tuple[int, str, str]:
    """The command's exit code, stdout and stderr. ``run`` goes to the local engine here;
    its default, the Spark engine, is tested against it in test_spark.py."""
    args = list(argv)
    if args[:1] == ["run"] and "--engine" not in args:
        args += ["--engine", "local"]
    out, err = io.StringIO(), io.StringIO()
    code = main(args, out, err)
    return code, out.getvalue(), err.getvalue()


@pytest.fixture
def worked(tmp_path: Path) -> tuple[Path, Path]:
    queries = tmp_path / "q.tq"
    queries.write_text(
        "-- the worked examples of SEMANTICS.md\n"
        "n43: RETURN COUNT(*) PATTERN (SEQ(A+, B))+ WITHIN 100 s;\n"
        "n13: RETURN COUNT(*) PATTERN (SEQ(A+, NOT SEQ(C, NOT E, D), B))+ WITHIN 100 s;\n"
        "n14: RETURN COUNT(*) PATTERN SEQ(A+, NOT E) WITHIN 100 s;\n"
        "n12: RETURN COUNT(*) PATTERN SEQ(NOT E, A+) WITHIN 100 s;\n"
    )
    events = tmp_path / "events.csv"
    lines = ["type,time"] + [f"{tok[0].upper()},{tok[1:]}" for tok in STREAM_11.split()]
    events.write_text("\n".join(lines) + "\n")
    return queries, events


@pytest.mark.parametrize("strategy", ["greta", "twostep"])
def test_run_reproduces_the_worked_examples(worked: tuple[Path, Path], strategy: str) -> None:
    queries, events = worked
    code, out, err = cli("run", str(queries), str(events), "--strategy", strategy)
    assert code == 0, err
    lines = out.splitlines()
    assert lines[0] == (
        '{"query": "n43", "window_start": 0, "window_end": 100, "group": {}, "values": {"COUNT(*)": 43}}'
    )
    assert {json.loads(x)["query"]: json.loads(x)["values"]["COUNT(*)"] for x in lines} == {
        "n43": 43,
        "n13": 13,
        "n14": 14,
        "n12": 12,
    }
    assert "read 11 events" in err and "4 queries" in err and "4 result rows" in err


def test_run_writes_csv_and_reports_and_writes_rejects(tmp_path: Path) -> None:
    queries = tmp_path / "q.tq"
    queries.write_text(
        "RETURN district, COUNT(*), SUM(T.d) PATTERN T+ GROUP-BY district WITHIN 1 min"
    )
    events = tmp_path / "ev.csv"
    events.write_text(
        "type,time,district,d\nT,1,3,10\nT,2,3,20\nT,,3,5\nT,yesterday,3,5\nT,4,3,n/a\nT,5,4,1\n"
    )
    out_path = tmp_path / "out.csv"
    rejects = tmp_path / "rejects.jsonl"
    code, out, err = cli(
        "run", str(queries), str(events), "-o", str(out_path), "--rejects", str(rejects)
    )
    assert code == 0, err
    assert out == ""
    assert out_path.read_text().splitlines() == [
        "query,window_start,window_end,district,COUNT(*),SUM(T.d)",
        "q1,0,60,3,3,60",
        "q1,0,60,4,1,1",
    ]
    rejected = [json.loads(x) for x in rejects.read_text().splitlines()]
    assert [r["row"] for r in rejected] == [3, 4, 5]
    assert "3 rejected" in err and str(rejects) in err


def test_check_prints_the_compiled_template(tmp_path: Path) -> None:
    queries = tmp_path / "q.tq"
    queries.write_text(
        "RETURN COUNT(*) PATTERN SEQ(Request R, NOT Cancel C, Travel T+) WHERE [driver] WITHIN 10 min"
    )
    code, out, err = cli("check", str(queries))
    assert code == 0, err
    assert "R -> T (SEQ)  [NOT #0]" in out
    assert "T -> T (+)" in out
    assert "NOT #0 (between; previous=R, following=T)" in out
    assert "1 valid query" in err


def test_a_query_error_says_where_and_exits_2(tmp_path: Path) -> None:
    queries = tmp_path / "bad.tq"
    queries.write_text("RETURN COUNT(*)\nPATTERN SEQ(A, B+)\nWHERE X.speed < 10\nWITHIN 1 min\n")
    code, out, err = cli("check", str(queries))
    assert code == 2 and out == ""
    assert "unknown variable 'X'" in err
    assert "Line 3, Col 7." in err
    assert "WHERE X.speed < 10\n" in err
    assert "Traceback" not in err


def test_a_missing_time_column_names_the_option(tmp_path: Path) -> None:
    queries = tmp_path / "q.tq"
    queries.write_text("RETURN COUNT(*) PATTERN A+ WITHIN 1 min")
    events = tmp_path / "ev.csv"
    events.write_text("type,ts\nA,1\n")
    code, _, err = cli("run", str(queries), str(events))
    assert code == 2
    assert "'time'" in err and "--time-col" in err
    code, out, err = cli("run", str(queries), str(events), "--time-col", "ts")
    assert code == 0 and '"COUNT(*)": 1' in out


def test_parquet_needs_an_output_path(worked: tuple[Path, Path]) -> None:
    queries, events = worked
    code, _, err = cli("run", str(queries), str(events), "--format", "parquet")
    assert code == 2 and "--output" in err


def test_missing_query_file(tmp_path: Path) -> None:
    code, _, err = cli("check", str(tmp_path / "nope.tq"))
    assert code == 2 and "not found" in err


def test_generate_then_run_the_bundled_workload(tmp_path: Path) -> None:
    from importlib.resources import files

    events = tmp_path / "rides.csv"
    code, _, err = cli("generate", "rideshare", "-n", "3000", "-o", str(events))
    assert code == 0, err
    assert (
        events.read_text().splitlines()[0]
        == "type,time,driver,rider,district,duration,speed,price,stars"
    )
    workload = str(files("trendagg") / "examples" / "rideshare.tq")
    code, out, err = cli("run", workload, str(events), "--quiet")
    assert code == 0, err
    rows = [json.loads(x) for x in out.splitlines()]
    assert {r["query"] for r in rows} == {"trips", "slowing", "no_cancel"}
    assert err == ""


def test_generate_sharons_streams_then_run_sharon_on_them(tmp_path: Path) -> None:
    """ecommerce: customers' item views after rarer entry points; traffic: each vehicle
    goes from a street to one the map leads to. Both seeded (the same bytes again), in
    time order, and runnable: sharon's rows on them equal greta's."""
    from trendagg.generate import ENTRY_TYPES

    shop = tmp_path / "shop.csv"
    code, _, err = cli(
        "generate", "ecommerce", "-n", "4000", "--entry-share", "0.1", "-o", str(shop)
    )
    assert code == 0, err
    again = tmp_path / "again.csv"
    assert (
        cli("generate", "ecommerce", "-n", "4000", "--entry-share", "0.1", "-o", str(again))[0] == 0
    )
    assert shop.read_bytes() == again.read_bytes()
    lines = shop.read_text().splitlines()
    assert lines[0] == "type,time,customer,price"
    rows = [line.split(",") for line in lines[1:]]
    times = [int(r[1]) for r in rows]
    assert times == sorted(times) and {r[2] for r in rows} == {str(c) for c in range(20)}
    entries = sum(r[0] in ENTRY_TYPES for r in rows)
    assert 300 < entries < 500  # (a tenth of 4,000)
    assert len({r[0] for r in rows if r[0].startswith("Item")}) == 50
    roads = tmp_path / "roads.jsonl"
    code, _, err = cli("generate", "traffic", "-n", "3000", "--streets", "8", "-o", str(roads))
    assert code == 0, err
    events = [json.loads(x) for x in roads.read_text().splitlines()]
    leads: dict[object, set[object]] = {}
    last: dict[object, object] = {}
    for e in events:
        if e["vehicle"] in last:
            leads.setdefault(last[e["vehicle"]], set()).add(e["type"])
        last[e["vehicle"]] = e["type"]
    assert len(leads) == 8 and all(len(to) == 3 for to in leads.values())
    queries = tmp_path / "q.tq"
    queries.write_text(
        "a: RETURN COUNT(*), SUM(I2.price) PATTERN SEQ(Login L, Item01 I1, Item02 I2) "
        "WHERE [customer] WITHIN 1 min SLIDE 30 s;\n"
        "b: RETURN COUNT(*), SUM(I2.price) PATTERN SEQ(Search S, Item01 I1, Item02 I2) "
        "WHERE [customer] WITHIN 1 min SLIDE 30 s;\n"
        "c: RETURN COUNT(*) PATTERN SEQ(Ad A, Item01 I1, Item02 I2) WHERE [customer] WITHIN 1 min "
        "SLIDE 30 s;\n"
    )
    outs = {}
    for strategy in ("sharon", "greta"):
        code, out, err = cli("run", str(queries), str(shop), "--strategy", strategy, "--quiet")
        assert code == 0, err
        outs[strategy] = sorted(out.splitlines())
    assert outs["sharon"] == outs["greta"] and len(outs["greta"]) > 0


def test_generated_parquet_has_row_groups_spark_can_split(tmp_path: Path) -> None:
    """Spark reads a Parquet file in splits of whole row groups: the generator writes
    row groups of ROW_GROUP rows, not pyarrow's default of 1,048,576 (one task)."""
    import pyarrow.parquet as pq

    from trendagg.io.parquet import ROW_GROUP

    events = tmp_path / "rides.parquet"
    code, _, err = cli("generate", "rideshare", "-n", str(2 * ROW_GROUP + 5), "-o", str(events))
    assert code == 0, err
    meta = pq.ParquetFile(events).metadata
    assert meta.num_rows == 2 * ROW_GROUP + 5
    assert [meta.row_group(i).num_rows for i in range(meta.num_row_groups)] == [
        ROW_GROUP,
        ROW_GROUP,
        5,
    ]


def test_demo_prints_tables_a_summary_and_draws_a_plot(tmp_path: Path) -> None:
    plot = tmp_path / "demo.png"
    code, out, err = cli(
        "demo",
        "--dataset",
        "rideshare",
        "--engine",
        "local",
        "--events",
        "2000",
        "--plot",
        str(plot),
    )
    assert code == 0, err
    assert "trips: " in out and "slowing: " in out and "no_cancel: " in out
    assert "read 2,000 events (0 rejected)" in out
    assert plot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    lines = out.splitlines()
    # how aggregates count over trends, said once before the tables
    assert (
        " ".join(out.split()).count("SUM(X.a) adds its a once for every trend that contains it")
        == 1
    )
    # a grouped query: a row per district over all its windows, their span so headed
    at = next(i for i, x in enumerate(lines) if x.startswith("trips: ") and "result" in x)
    assert lines[at].endswith(
        "result rows, one per window and district; each district over all its windows, "
        "most trends first:"
    )
    assert lines[at + 1].split()[:5] == ["query", "span", "of", "its", "windows"]
    # its AVG left out, with the reason
    below = next(x for x in lines[at:] if x.startswith("(AVG("))
    assert below.startswith("(AVG(T.speed) left out: an average over all windows")
    # a query without GROUP-BY: its rows are windows
    at = next(i for i, x in enumerate(lines) if x.startswith("slowing: ") and "result" in x)
    assert lines[at + 1].split()[:2] == ["query", "window"]


def test_event_type_reads_a_file_without_a_type_column(tmp_path: Path) -> None:
    queries = tmp_path / "q.tq"
    queries.write_text(
        "RETURN Name, COUNT(*) PATTERN Stock S+ WHERE [Name] AND S.close > NEXT(S).close "
        "GROUP-BY Name WITHIN 10 days"
    )
    events = tmp_path / "prices.csv"
    events.write_text(
        "date,close,Name\n2013-02-08,10.5,A\n2013-02-11,10.0,A\n2013-02-12,9.0,A\n2013-02-11,5,B\n"
    )
    code, out, err = cli(
        "run", str(queries), str(events), "--event-type", "Stock", "--time-col", "date"
    )
    assert code == 0, err
    counts = {
        json.loads(x)["group"]["Name"]: json.loads(x)["values"]["COUNT(*)"]
        for x in out.splitlines()
    }
    assert counts == {"A": 7, "B": 1}
    code, _, err = cli("run", str(queries), str(events), "--time-col", "date")
    assert code == 2 and "--event-type" in err


def test_explain_shows_sharable_sets_and_per_burst_decisions(tmp_path: Path) -> None:
    queries = tmp_path / "q.tq"
    queries.write_text(
        "q1: RETURN COUNT(*) PATTERN SEQ(A, B+) WITHIN 100 s;\n"
        "q2: RETURN COUNT(*) PATTERN SEQ(C, B+) WITHIN 100 s;\n"
        "q3: RETURN COUNT(*) PATTERN SEQ(D, B+) WHERE [g] WITHIN 100 s;\n"
    )
    code, out, err = cli("explain", str(queries))
    assert code == 0, err
    assert "sharable B+ by {q1, q2}" in out
    assert "B -> B (+): {q1, q2, q3}" in out
    assert "non-shared queries: q3" in out
    events = tmp_path / "ev.csv"
    rows = ["type,time,v", "A,1,0", "C,1,0"] + [f"B,{t},{t}" for t in range(2, 10)]
    events.write_text("\n".join(rows) + "\n")
    # the decisions of the executor that runs the queries: the kernel's by default
    code, out, err = cli("explain", str(queries), str(events))
    assert code == 0, err
    decisions = out.split("per-burst decisions (hamlet, of the compiled executor")[1]
    lines = [line.split() for line in decisions.splitlines()[2:4]]
    # the burst of B at 2..8 (the latest time, 9, is held back: a burst of its own)
    assert [(x[0], x[2], x[3], x[-2:]) for x in lines] == [
        ("2", "B", "7", ["q1,", "q2"]),
        ("9", "B", "1", ["q1,", "q2"]),
    ]
    assert "compiled executor: 2 bursts" in out and "of the Python executor" not in out
    code, out, err = cli("explain", str(queries), str(events), "--engine", "python")
    assert code == 0, err
    assert "q1, q2" in out.split("per-burst decisions (hamlet, of the Python executor")[1]
    assert "Python executor: 1 bursts, 1 shared" in out


def test_run_defaults_to_hamlet_and_reports_sharing(worked: tuple[Path, Path]) -> None:
    queries, events = worked
    code, _, err = cli("run", str(queries), str(events))
    assert code == 0
    assert "strategy hamlet" in err and "Sharing: compiled executor: " in err


def test_engine_reference_equals_the_local_engine(tmp_path: Path) -> None:
    # B.v is an integer in one event and a decimal in another (trends: 5, 2.5, 7.5)
    queries = tmp_path / "q.tq"
    queries.write_text("q: RETURN SUM(B.v), MAX(B.v) PATTERN SEQ(A, B+) WITHIN 100 s;\n")
    events = tmp_path / "events.csv"
    events.write_text("type,time,v\nA,1,\nB,2,5\nB,3,2.5\n")
    code, local, err = cli("run", str(queries), str(events), "--engine", "local")
    assert code == 0, err
    code, reference, err = cli("run", str(queries), str(events), "--engine", "reference")
    assert code == 0, err
    assert reference == local
    assert json.loads(reference.splitlines()[0])["values"] == {"SUM(B.v)": 15.0, "MAX(B.v)": 5}


# queries the compiled kernel runs whole: no NOT, no NEXT predicate, no qualified partition
KERNEL_WORKLOAD = (
    "trips: RETURN district, COUNT(*) AS trends, COUNT(T) AS legs, SUM(T.duration), AVG(T.speed) "
    "PATTERN SEQ(Request R, Travel T+, Dropoff D) WHERE [driver, rider] GROUP-BY district "
    "WITHIN 10 min SLIDE 5 min;\n"
    "fast: RETURN COUNT(*), MIN(T.speed), MAX(T.speed) PATTERN SEQ(Pickup P, Travel T+) "
    "WHERE [driver] AND T.speed > 20 WITHIN 10 min SLIDE 5 min;\n"
    "legs: RETURN COUNT(*), SUM(T.duration) PATTERN SEQ(Request R, Travel T+) "
    "WHERE [driver] WITHIN 10 min;\n"
)


@pytest.fixture
def kernel_workload(tmp_path: Path) -> tuple[Path, Path]:
    from trendagg.generate import rideshare, write_stream

    events = tmp_path / "rides.csv"
    write_stream(rideshare(3000, drivers=20, events_per_minute=600, seed=5), str(events))
    queries = tmp_path / "q.tq"
    queries.write_text(KERNEL_WORKLOAD)
    return queries, events


@pytest.mark.parametrize("strategy", ["hamlet", "greta"])
@pytest.mark.parametrize("fmt", ["jsonl", "csv"])
def test_engine_reference_prints_the_bytes_of_the_local_engine(
    kernel_workload: tuple[Path, Path], tmp_path: Path, strategy: str, fmt: str
) -> None:
    """--engine local runs this workload on the compiled kernel, --engine reference (and its
    alias python) on the Python reference engines: the same bytes on stdout and in -o."""
    queries, events = kernel_workload
    printed, written, errs = {}, {}, {}
    for engine in ("local", "reference", "python"):
        output = tmp_path / f"{engine}.{fmt}"
        args = ["--strategy", strategy, "--format", fmt, "--engine", engine]
        code, out, err = cli("run", str(queries), str(events), *args)
        assert code == 0, err
        printed[engine] = out
        code, _, err = cli("run", str(queries), str(events), *args, "-o", str(output))
        assert code == 0, err
        written[engine] = output.read_bytes()
        errs[engine] = err
    assert printed["reference"] == printed["local"] == printed["python"]
    assert written["reference"] == written["local"] == written["python"]
    assert written["local"].decode() == printed["local"]
    assert len(printed["local"].splitlines()) > 3
    if strategy == "hamlet":  # HAMLET's counters, of the executor that ran
        assert "Sharing: compiled executor: " in errs["local"]
        assert "Python executor" not in errs["local"]
        for engine in ("reference", "python"):
            assert "Sharing: Python executor: " in errs[engine]
            assert "compiled executor" not in errs[engine]
    else:
        assert "Sharing:" not in errs["local"] + errs["reference"]


def test_explain_engine_reference_runs_every_query_on_the_python_executor(
    kernel_workload: tuple[Path, Path],
) -> None:
    queries, _ = kernel_workload
    plans = {}
    for engine in ("local", "reference", "python"):
        code, out, err = cli("explain", str(queries), "--engine", engine)
        assert code == 0, err
        plans[engine] = out
    for q in ("trips", "fast", "legs"):
        lines = {
            engine: [x for x in out.splitlines() if x.startswith(f"  {q}: ")]
            for engine, out in plans.items()
        }
        assert lines["local"] == [f"  {q}: compiled executor"]
        assert lines["reference"] == [
            f"  {q}: python executor (the reference engine was asked for)"
        ]
    assert "compiled" not in plans["reference"].split(" executes:")[1]
    assert "trendagg run --engine reference executes:" in plans["reference"]
    # python is an alias of reference: the same plan, under the name it was asked by
    assert plans["python"] == plans["reference"].replace("--engine reference", "--engine python")


def test_local_engine_reads_arrays_and_equals_the_reference_engine(tmp_path: Path) -> None:
    # the local engine reads CSV into arrays (read_events) and runs the kernels;
    # --engine reference reads Python objects: same rows, same rejected rows
    from trendagg.generate import rideshare, write_stream

    events = tmp_path / "rides.csv"
    write_stream(rideshare(3000, drivers=20, events_per_minute=600, seed=5), str(events))
    with open(events, "a") as f:
        f.write("Travel,not-a-time,1,,,,,,\n")
    queries = tmp_path / "q.tq"
    queries.write_text(
        "a: RETURN COUNT(*), SUM(T.duration) PATTERN SEQ(Request R, Travel T+, Dropoff D) "
        "WHERE [driver] WITHIN 10 min SLIDE 5 min;\n"
        "b: RETURN COUNT(*), MAX(T.speed) PATTERN SEQ(Pickup P, Travel T+) "
        "WHERE [driver] AND T.speed > 20 WITHIN 10 min SLIDE 5 min;\n"
    )
    results = {}
    for engine in ("local", "reference"):
        code, out, err = cli("run", str(queries), str(events), "--engine", engine)
        assert code == 0, err
        assert "1 row rejected" in err and "read 3,001 events (1 rejected)" in err
        results[engine] = out
    assert results["local"] == results["reference"]
    assert len(results["local"].splitlines()) == 4  # 2 queries x 2 windows


def test_run_gloria_writes_the_bytes_greta_writes(tmp_path: Path) -> None:
    """``run --strategy gloria`` (its plan from the rates of the first events, here
    sharing the Kleene unit of four queries: under the kernel's cost model a shared
    unit pays where its label is rare and its other type frequent) writes byte for byte
    what greta writes, and the snapshot kernel's counters show shared work."""
    queries = tmp_path / "q.tq"
    aggregates = ("COUNT(*), SUM(B.x)", "COUNT(*), MAX(B.x)", "MIN(B.x)", "COUNT(*), AVG(B.x)")
    queries.write_text(
        "".join(
            f"q{i + 1}: RETURN {returned} PATTERN SEQ(C, SEQ(A, B)+, {'DDDE'[i]}) WHERE [g] "
            "WITHIN 60 s SLIDE 20 s;\n"
            for i, returned in enumerate(aggregates)
        )
    )
    events = tmp_path / "e.jsonl"
    kinds = "CA" + "B" * 40 + "DE"  # (A rare in the unit, B frequent: sharing it pays)
    events.write_text(
        "".join(
            json.dumps({"type": kinds[i % 44], "time": i, "x": i % 7, "g": i // 44 % 2}) + "\n"
            for i in range(400)
        )
    )
    outs = {}
    for strategy in ("gloria", "greta"):
        out_file = tmp_path / f"{strategy}.csv"
        code, _, err = cli(
            "run", str(queries), str(events), "--strategy", strategy, "-o", str(out_file)
        )
        assert code == 0, err
        outs[strategy] = out_file.read_bytes()
    assert outs["gloria"] == outs["greta"] and outs["greta"].count(b"\n") > 10
    from trendagg.engine import run_strategy
    from trendagg.io import read_events
    from trendagg.language import parse
    from trendagg.plan.compile import compile_workload

    stats: dict[str, object] = {}
    plans = compile_workload(parse(queries.read_text()))
    run_strategy(plans, read_events(events).events, "gloria", stats=stats)
    counters = stats["snapshot_kernel"]  # (the compiled kernel runs GLORIA's plan)
    assert isinstance(counters, dict) and counters["shared_propagations"] > 0
    code, out, err = cli("explain", str(queries), str(events), "--strategy", "gloria")
    assert code == 0, err
    assert "Kleene SEQ(A, B)+: (q1,q2,q3,q4)^C" in out  # (C's snapshots carried round it)
    assert "rates: estimated from the first 400" in out
    assert f"snapshot kernel: {counters['shared_propagations']:,} shared propagations" in out
