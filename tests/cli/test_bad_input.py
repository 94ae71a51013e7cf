"""Bad input gets a reason, not a traceback: deep JSON lines, deep queries, attributes
no input has (issue #13, items 13-15)."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest

from trendagg.cli import main
from trendagg.errors import QueryError
from trendagg.io import read_events
from trendagg.language import parse
from trendagg.language.parser import MAX_NESTING

QUERY = "RETURN COUNT(*) PATTERN SEQ(A, B+) WITHIN 1000 s\n"


def cli(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = main(list(argv), out, err)
    return code, out.getvalue(), err.getvalue()


def _deep(levels: int) -> str:
    return '{"a": ' * levels + "1" + "}" * levels


@pytest.mark.parametrize("engine", ["local", "python"])
def test_a_json_line_nested_1000_deep_is_one_rejected_row(tmp_path: Path, engine: str) -> None:
    (tmp_path / "q.tq").write_text(QUERY)
    lines = ['{"type": "A", "time": 1}', '{"type": "B", "time": 2, "x": ' + _deep(1000) + "}"]
    lines += ['{"type": "B", "time": 3}', "[" * 5000 + "]" * 5000]
    events = tmp_path / "e.jsonl"
    events.write_text("\n".join(lines) + "\n")
    rejects = tmp_path / "bad.jsonl"
    code, out, err = cli(
        "run", str(tmp_path / "q.tq"), str(events), "--engine", engine, "--rejects", str(rejects)
    )
    assert code == 0, err
    assert json.loads(out)["values"] == {"COUNT(*)": 1}  # a1 b3: the deep line is no event
    records = [json.loads(line) for line in rejects.read_text().splitlines()]
    assert [r["row"] for r in records] == [2, 4]
    assert all("nested deeper than the JSON parser goes" in r["reason"] for r in records)
    assert "2 rejected" in err and "Traceback" not in err


def test_a_json_line_just_inside_the_parser_is_an_event(tmp_path: Path) -> None:
    events = tmp_path / "e.jsonl"
    events.write_text('{"type": "B", "time": 2, "x": ' + _deep(100) + "}\n")
    read = read_events(str(events))
    assert not read.rejected and len(read.events) == 1


def _nested_seq(levels: int) -> str:
    return "RETURN COUNT(*) PATTERN " + "SEQ(" * levels + "A, B+" + ")" * levels + " WITHIN 10 s"


@pytest.mark.parametrize("command", ["check", "explain", "run"])
def test_a_query_nested_400_deep_is_refused_with_its_place(tmp_path: Path, command: str) -> None:
    (tmp_path / "q.tq").write_text(_nested_seq(400))
    (tmp_path / "e.csv").write_text("type,time\nA,1\nB,2\n")
    argv = [command, str(tmp_path / "q.tq")]
    if command == "run":
        argv += [str(tmp_path / "e.csv"), "--engine", "local"]
    code, out, err = cli(*argv)
    assert code == 2 and out == ""
    assert f"nested deeper than {MAX_NESTING} parentheses" in err
    # the parenthesis of the (MAX_NESTING + 1)-th SEQ(
    assert f"Line 1, Col {len('RETURN COUNT(*) PATTERN ') + 4 * (MAX_NESTING + 1)}." in err
    assert "Traceback" not in err and "RecursionError" not in err


def test_nesting_at_the_limit_runs_on_every_stage(tmp_path: Path) -> None:
    """MAX_NESTING levels (SEQ, Kleene groups, arithmetic) pass every recursive stage."""
    (tmp_path / "e.csv").write_text("type,time,x\nA,1,5\nB,2,1\nB,3,1\n")
    texts = {
        "seq": _nested_seq(MAX_NESTING - 1),
        "kleene": "RETURN COUNT(*) PATTERN "
        + "(SEQ(" * (MAX_NESTING // 2)
        + "A, B"
        + "))+" * (MAX_NESTING // 2)
        + " WITHIN 10 s",
        "arithmetic": "RETURN COUNT(*) PATTERN SEQ(A, B+) WHERE "
        + "(" * MAX_NESTING
        + "A.x"
        + ")" * MAX_NESTING
        + " > 1 WITHIN 10 s",
    }
    for name, text in texts.items():
        (tmp_path / f"{name}.tq").write_text(text)
        for argv in (
            ["check", f"{name}.tq"],
            ["explain", f"{name}.tq"],
            ["run", f"{name}.tq", "e.csv", "--engine", "local"],
            ["run", f"{name}.tq", "e.csv", "--engine", "python"],
        ):
            argv = [a if not a.endswith((".tq", ".csv")) else str(tmp_path / a) for a in argv]
            code, _, err = cli(*argv)
            assert code == 0, (name, argv[0], err)
    with pytest.raises(QueryError, match="nested deeper"):
        parse(texts["arithmetic"].replace("A.x", "(A.x)"))
    # parentheses in strings and comments do not count
    parse(
        "-- "
        + "(" * 80
        + "\n"
        + "RETURN COUNT(*) PATTERN SEQ(A, B+) WHERE A.s != '"
        + "(" * 80
        + "' WITHIN 10 s"
    )


@pytest.mark.parametrize("engine", ["local", "python"])
def test_an_attribute_no_input_has_is_warned_about(tmp_path: Path, engine: str) -> None:
    (tmp_path / "q.tq").write_text(
        "sums: RETURN SUM(B.nosuch) PATTERN SEQ(A, B+) WITHIN 1000 s;\n"
        "groups: RETURN COUNT(*) PATTERN SEQ(A, B+) GROUP-BY grp WITHIN 1000 s;\n"
        "fine: RETURN COUNT(*), SUM(B.x) PATTERN SEQ(A, B+) WITHIN 1000 s;\n"
    )
    (tmp_path / "e.csv").write_text("type,time,x\nA,1,\nB,2,5\n")
    code, out, err = cli(
        "run", str(tmp_path / "q.tq"), str(tmp_path / "e.csv"), "--engine", engine, "--quiet"
    )
    assert code == 0
    warnings = [line for line in err.splitlines() if "warning" in line]
    assert warnings == [
        "trendagg: warning: query 'sums' reads attribute 'nosuch', which no input row has: "
        "the events that need it are dropped (a misspelt name?)",
        "trendagg: warning: query 'groups' reads attribute 'grp', which no input row has: "
        "the events that need it are dropped (a misspelt name?)",
    ]
    assert [json.loads(line)["query"] for line in out.splitlines()] == ["fine"]


@pytest.mark.spark
def test_spark_warns_about_an_attribute_no_column_has(spark: Any, tmp_path: Path) -> None:
    (tmp_path / "q.tq").write_text("RETURN SUM(B.nosuch) PATTERN SEQ(A, B+) WITHIN 1000 s\n")
    (tmp_path / "e.csv").write_text("type,time,x\nA,1,\nB,2,5\n")
    code, out, err = cli("run", str(tmp_path / "q.tq"), str(tmp_path / "e.csv"))
    assert code == 0 and out == ""
    assert "query 'q1' reads attribute 'nosuch', which no input row has" in err


def test_the_compiled_engine_runs_without_a_home(tmp_path: Path) -> None:
    import os
    import subprocess
    import sys

    (tmp_path / "q.tq").write_text(QUERY)
    (tmp_path / "e.csv").write_text("type,time\nA,1\nB,2\nB,3\n")
    env = {**os.environ, "HOME": "/nonexistent", "PYTHONPATH": os.pathsep.join(sys.path)}
    done = subprocess.run(
        [sys.executable, "-m", "trendagg.cli", "run", "q.tq", "e.csv", "--engine", "local"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    assert '"COUNT(*)": 3' in done.stdout


def test_a_non_ascii_name_gets_the_rule_for_names(tmp_path: Path) -> None:
    for text in (
        "RETURN COUNT(*) PATTERN SEQ(Straße S, B+) WITHIN 10 s",
        "RETURN COUNT(*) PATTERN SEQ(A, B+) WHERE [café] WITHIN 10 s",
    ):
        (tmp_path / "q.tq").write_text(text)
        code, _, err = cli("check", str(tmp_path / "q.tq"))
        assert code == 2 and "are ASCII letters, digits and '_'" in err
    # text in quotes may hold any letters
    parse("RETURN COUNT(*) PATTERN SEQ(A, B+) WHERE A.city = 'Zürich' WITHIN 10 s")


def test_format_hints_name_what_the_command_line_can_do(tmp_path: Path) -> None:
    (tmp_path / "q.tq").write_text(QUERY)
    (tmp_path / "e.txt").write_text("type,time\nA,1\n")
    (tmp_path / "e.parquet").write_text("type,time\nA,1\n")
    for name in ("e.txt", "e.parquet"):
        code, _, err = cli("run", str(tmp_path / "q.tq"), str(tmp_path / name), "--engine", "local")
        assert code == 2 and "name it .csv" in err and "in the Python API pass fmt=" in err


def test_fractional_parquet_decimals_are_warned_about(tmp_path: Path) -> None:
    from decimal import Decimal

    import pyarrow as pa
    import pyarrow.parquet as pq

    prices = [Decimal("0.10"), Decimal("0.20"), Decimal("0.70")]
    pq.write_table(
        pa.table(
            {
                "type": ["A", "B", "B"],
                "time": [1, 2, 3],
                "price": pa.array(prices, pa.decimal128(38, 2)),
                "units": pa.array([Decimal(1), Decimal(2), Decimal(3)], pa.decimal128(10, 0)),
            }
        ),
        tmp_path / "e.parquet",
    )
    (tmp_path / "q.tq").write_text(
        "RETURN SUM(B.price), SUM(B.units) PATTERN SEQ(A, B+) WITHIN 1000 s\n"
    )
    code, out, err = cli(
        "run", str(tmp_path / "q.tq"), str(tmp_path / "e.parquet"), "--quiet", "--engine", "local"
    )
    assert code == 0, err
    warnings = [line for line in err.splitlines() if "warning" in line]
    assert len(warnings) == 1 and "column 'price' is decimal128(38, 2)" in warnings[0]
    assert json.loads(out)["values"]["SUM(B.units)"] == 2 + 3 + 5  # integral decimals: exact
