"""Input the Spark commands refuse before Spark starts, with the local engine's message
(issue #39): the JVM's start took half a minute before a missing file or column was
said. Spark never starts here: ``spark_session`` raises if called, so these tests need
no JVM, and a test that gets past the checks says so by that error."""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

import pytest

from trendagg.cli import main
from trendagg.errors import InputError

QUERY = "q: RETURN COUNT(*), SUM(B.x) PATTERN SEQ(A, B+) WITHIN 10 s\n"


class SparkStarted(Exception):
    """Raised by the stand-in of ``spark_session``: the checks let the input through."""


@pytest.fixture(autouse=True)
def no_spark(monkeypatch: pytest.MonkeyPatch) -> None:
    def start(*args: Any, **kwargs: Any) -> Any:
        raise SparkStarted

    monkeypatch.setattr("trendagg.spark.session.spark_session", start)


def cli(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = main(list(argv), out=out, err=err)
    return code, out.getvalue(), err.getvalue()


@pytest.fixture
def queries(tmp_path: Path) -> str:
    path = tmp_path / "q.tq"
    path.write_text(QUERY)
    return str(path)


def _parquet(path: Path, **columns: list[object]) -> Path:
    import pyarrow as pa
    import pyarrow.parquet as pq

    pq.write_table(pa.table(columns), path)
    return path


@pytest.mark.parametrize(
    ("name", "content", "extra"),
    [
        ("missing.csv", None, []),
        ("kinds.csv", "kind,time,x\nA,1,1\n", []),  # no type column
        ("t.csv", "type,t,x\nA,1,1\n", []),  # no time column
        ("headerless.csv", "A,1,1\n", ["--columns", "type,t,x"]),
        ("empty.csv", "", []),
        ("keys.jsonl", '{"kind": "A", "time": 1}\n{"kind": "B", "time": 2}\n', []),
        ("array.jsonl", '[{"type": "A", "time": 1}]\n', []),
        ("columns.jsonl", '{"type": "A", "time": 1}\n', ["--columns", "type,time"]),
        ("events.txt", "type,time\nA,1\n", []),
        ("blank.csv", "type,time,x\nA,1,1\n", ["--event-type", " "]),
    ],
)
def test_run_refuses_before_spark_starts_as_the_local_engine(
    tmp_path: Path, queries: str, name: str, content: str | None, extra: list[str]
) -> None:
    events = tmp_path / name
    if content is not None:
        events.write_text(content)
    local = cli("run", queries, str(events), "--engine", "local", *extra)
    spark = cli("run", queries, str(events), "--engine", "spark", *extra)
    assert spark == local
    assert local[0] == 2 and local[2].startswith("trendagg: "), local


def test_run_refuses_a_parquet_file_without_the_time_column(tmp_path: Path, queries: str) -> None:
    events = _parquet(tmp_path / "e.parquet", type=["A"], t=[1])
    local = cli("run", queries, str(events), "--engine", "local")
    assert cli("run", queries, str(events), "--engine", "spark") == local
    assert "time column 'time' not found in " in local[2], local


def test_a_json_lines_file_whose_later_objects_have_the_keys_passes(
    tmp_path: Path, queries: str
) -> None:
    """The local reader refuses a JSON Lines file only when no object has the type and
    time keys: one without them first is a rejected row, not a refused file."""
    events = tmp_path / "e.jsonl"
    events.write_text('{"kind": "A", "time": 1}\n' * 1500 + '{"type": "B", "time": 2}\n')
    assert cli("run", queries, str(events), "--engine", "local", "-q")[0] == 0
    with pytest.raises(SparkStarted):
        cli("run", queries, str(events), "--engine", "spark")


def test_an_attribute_no_column_holds_is_said_before_spark_starts(
    tmp_path: Path, queries: str, capsys: pytest.CaptureFixture[str]
) -> None:
    events = tmp_path / "e.csv"
    events.write_text("type,time,y\nA,1,1\nB,2,2\n")
    _, _, local = cli("run", queries, str(events), "--engine", "local", "-q")
    warning = "trendagg: warning: query 'q' reads attribute 'x', which no input row has"
    assert local.startswith(warning), local
    err = io.StringIO()
    with pytest.raises(SparkStarted):
        main(["run", queries, str(events), "--engine", "spark"], out=io.StringIO(), err=err)
    assert err.getvalue() == local


# ----------------------------------------------------------------------------- streams


def _stream(queries: str, source: str, tmp_path: Path, *extra: str) -> tuple[int, str, str]:
    return cli(
        "stream", queries, source, "--checkpoint", str(tmp_path / "ckpt"),
        "--output", str(tmp_path / "out"), *extra,
    )  # fmt: skip


def test_a_stream_source_that_does_not_exist(tmp_path: Path, queries: str) -> None:
    code, _, err = _stream(queries, str(tmp_path / "incoming"), tmp_path)
    assert (code, err) == (
        2,
        f"trendagg: stream source '{tmp_path / 'incoming'}' does not exist: give a folder "
        "that files arrive in (create it first), socket://HOST:PORT, or rate://\n",
    )


def test_an_empty_stream_folder_needs_its_format_and_columns(tmp_path: Path, queries: str) -> None:
    folder = tmp_path / "incoming"
    folder.mkdir()
    (folder / ".partial.csv").write_text("type,time\n")  # (Spark skips it, as the check)
    code, _, err = _stream(queries, str(folder), tmp_path)
    assert (code, err) == (
        2,
        f"trendagg: stream source '{folder}' holds no files yet, so their format is unknown: "
        "pass --source-format json, or csv or parquet with their columns as --schema "
        "'type string, time double, ...'\n",
    )
    code, _, err = _stream(queries, str(folder), tmp_path, "--source-format", "csv")
    assert (code, err) == (
        2,
        f"trendagg: no CSV files in '{folder}' to take the columns from: pass --schema "
        "'type string, time string, ...'\n",
    )
    for given in (["--source-format", "json"], ["--source-format", "csv", "--schema", "type string, time double"]):  # fmt: skip
        with pytest.raises(SparkStarted):  # (a legitimate source: files will come)
            _stream(queries, str(folder), tmp_path, *given)


def test_a_stream_folder_s_files_lack_a_column(tmp_path: Path, queries: str) -> None:
    folder = tmp_path / "incoming"
    folder.mkdir()
    (folder / "a.csv").write_text("type,ts,x\nA,1,1\n")
    code, _, err = _stream(queries, str(folder), tmp_path)
    local = cli("run", queries, str(folder / "a.csv"), "--engine", "local")
    assert (code, err) == (2, local[2])
    assert "time column 'time' not found in " in err
    with pytest.raises(SparkStarted):
        _stream(queries, str(folder), tmp_path, "--time-col", "ts")
    code, _, err = _stream(
        queries, str(folder), tmp_path, "--schema", "type string, `the time` double"
    )
    assert (code, err) == (
        2,
        "trendagg: time column 'time' not found in --schema 'type string, `the time` double'; "
        "columns are [type, the time]; pass --time-col\n",
    )


@pytest.mark.parametrize("kind", ["parquet", "jsonl"])
def test_a_stream_folder_of_parquet_or_json_lines_lacks_the_type(
    tmp_path: Path, queries: str, kind: str
) -> None:
    folder = tmp_path / "incoming"
    folder.mkdir()
    if kind == "parquet":
        _parquet(folder / "a.parquet", kind=["A"], time=[1])
    else:
        (folder / "a.jsonl").write_text('{"kind": "A", "time": 1}\n')
    code, _, err = _stream(queries, str(folder), tmp_path)
    local = cli("run", queries, str(folder / f"a.{kind}"), "--engine", "local")
    assert (code, err) == (2, local[2])
    assert "type column 'type' not found in " in err


def test_stream_trends_checks_its_source_before_spark_starts(tmp_path: Path) -> None:
    from trendagg.spark import stream_trends

    folder = tmp_path / "incoming"
    folder.mkdir()
    (folder / "a.csv").write_text("type,time,x\nA,1,1\n")
    with pytest.raises(InputError, match="type column 'kind' not found in "):
        stream_trends(
            str(folder), QUERY, output=str(tmp_path / "o"), checkpoint=str(tmp_path / "c"),
            type_col="kind",
        )  # fmt: skip
    with pytest.raises(SparkStarted):
        stream_trends(
            str(folder), QUERY, output=str(tmp_path / "o"), checkpoint=str(tmp_path / "c")
        )


def test_ddl_names() -> None:
    from trendagg.spark.inputs import ddl_names

    assert ddl_names("type string, time double, `a, b` map<string, int>, c:struct<d:int>") == [
        "type",
        "time",
        "a, b",
        "c",
    ]
    assert ddl_names("type string, `unclosed int") is None
    assert ddl_names("type string,, time double") is None
