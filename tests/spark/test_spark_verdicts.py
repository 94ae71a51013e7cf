"""Spark and local give the same verdict on every input file: the same result rows and
rejected rows (reason and row number), or the same refusal (message and exit code).

Each case is one small malformed or extreme file (the readers' cases of
test_io.py and those of issue 13) run through the CLI twice: with
``--engine local`` and with the default Spark engine, on the one test SparkSession.
"""

from __future__ import annotations

import decimal
import gzip
import io
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from trendagg.cli import main

pytestmark = pytest.mark.spark

QUERY = "RETURN COUNT(*) PATTERN SEQ(A, B+) WITHIN 1000 s\n"
GOOD = "type,time\nA,1\nB,2\nB,3\n"


def _parquet(table: Any, path: Path) -> None:
    import pyarrow.parquet as pq

    pq.write_table(table, path)


def _nanos(path: Path) -> None:
    import pyarrow as pa

    times = [1_704_067_201_000_000_000, 1_704_067_202_500_000_001, 1_704_067_203_000_000_000]
    _parquet(pa.table({"type": ["A", "B", "B"], "time": pa.array(times, pa.timestamp("ns"))}), path)


def _nanos_attribute(path: Path) -> None:
    import pyarrow as pa

    seen = pa.array([1_000_000_001, 2_000_000_002, None], pa.timestamp("ns", tz="UTC"))
    _parquet(pa.table({"type": ["A", "B", "B"], "time": [1, 2, 3], "seen": seen}), path)


def _decimal76(path: Path) -> None:
    import pyarrow as pa

    wide = pa.array([decimal.Decimal(10**70)] * 3, pa.decimal256(76, 0))
    _parquet(pa.table({"type": ["A", "B", "B"], "time": [1, 2, 3], "v": wide}), path)


def _null_times(path: Path) -> None:
    import pyarrow as pa

    _parquet(pa.table({"type": ["A", None, "B", "B"], "time": [1, 2, None, 3]}), path)


def _empty_folder(path: Path) -> None:
    path.mkdir()


def _folder_without_parquet(path: Path) -> None:
    path.mkdir()
    (path / "notes.txt").write_text("not parquet\n")


# name -> the file's bytes, or a function that writes it; then extra CLI arguments
CASES: dict[str, tuple[bytes | Callable[[Path], None], list[str]]] = {
    "good.csv": (GOOD.encode(), []),
    "bad_times.csv": (b"type,time\nA,1\nB,yesterday\nB,\nB,3\nB,nan\n", []),
    "iso_times.csv": (b"type,time\nA,2024-01-01T00:00:01\nB,2024-01-01 00:00:02+00:00\n", []),
    "extra_and_fewer_cells.csv": (b"type,time,x\nA,1,1\nB,2,2,9\nB,3\nB,4,4\n", []),
    "missing_type.csv": (b"type,time\nA,1\n,2\n  ,3\nB,4\n", []),
    "quoted_cells.csv": (b'type,time,note\nA,1,"a,b"\nB,2,"x\ny"\nB,3,"say ""hi"""\n', []),
    "bom_crlf.csv": ("\ufefftype,time\r\nA,1\r\nB,2\r\nB,3\r\n".encode(), []),
    "bom_crlf_quoted.csv": ('\ufefftype,time,n\r\nA,1,"a\r\nb"\r\nB,2,x\r\n'.encode(), []),
    "invalid_utf8.csv": (b"type,time,n\nA,1,x\nB,2,\xff\xfe\nB,3,y\n", []),
    "unterminated_quote.csv": (b'type,time,n\nA,1,x\nB,2,"abc\nB,3,y\n', []),
    "duplicate_header.csv": (b"type,time,time\nA,1,1\nB,2,2\n", []),
    "empty.csv": (b"", []),
    "header_only.csv": (b"type,time\n", []),
    "no_time_column.csv": (b"type,when\nA,1\n", []),
    "gzip_named.csv": (gzip.compress(GOOD.encode()), []),
    "gzipped.csv.gz": (gzip.compress(b"type,time\nA,1\nB,x\nB,3\n"), []),
    "dotted_and_backtick_names.csv": (b"type,time,a.b,c`d\nA,1,1,2\nB,2,3,4\nB,3,5,6\n", []),
    "huge_ints.csv": (b"type,time,x\nA,1,123456789012345678901234567890\nB,2,-1\n", []),
    "no_header.csv": (b"A,1\nB,2\nB,x\n", ["--columns", "type,time"]),
    "event_type.csv": (b"time\n1\n2\nx\n", ["--event-type", "B"]),
    "invalid.jsonl": (b'{"type":"A","time":1}\n{bad\n[1,2]\n"text"\n{"type":"B","time":2}\n', []),
    "not_utf8.jsonl": (
        b'{"type":"A","time":1}\n{"type":"B","time":2,"x":"\xff"}\n{"type":"B","time":3}\n',
        [],
    ),
    "blank_lines.jsonl": (b'\n{"type":"A","time":1}\n  \n{bad\n\r\n{"type":"B","time":x}\n', []),
    "blank_lines.csv": (b"type,time\n\nA,1\n\nB,x\n\r\nB,3\n", []),
    "missing_keys.jsonl": (b'{"type":"A"}\n{"time":2}\n{"type":"B","time":3}\n', []),
    "json_array.jsonl": (b'[{"type":"A","time":1}]\n', []),
    "nanos.parquet": (_nanos, []),
    "nanos_attribute.parquet": (_nanos_attribute, []),
    "decimal76_unused.parquet": (_decimal76, []),
    "null_times.parquet": (_null_times, []),
    "not_parquet.parquet": (b"PAR1 but not really\n", []),
    "empty_folder": (_empty_folder, []),
    "folder_without_parquet": (_folder_without_parquet, []),
    "trend_limit.csv": (
        ("type,time\n" + "".join(f"B,{t}\n" for t in range(2, 30)) + "A,1\n").encode(),
        ["--strategy", "twostep", "--trend-limit", "4"],
    ),
}


# the cases the local reader (and so Spark) refuses; the others give rows
REFUSED = {
    "invalid_utf8.csv",
    "unterminated_quote.csv",
    "duplicate_header.csv",
    "empty.csv",
    "no_time_column.csv",
    "json_array.jsonl",
    "not_parquet.parquet",
    "empty_folder",
    "folder_without_parquet",
}
# stopped while running (exit 1): the trend limit of twostep
FAILED = {"trend_limit.csv"}


def _run(args: list[str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = main(args, out, err)
    return code, out.getvalue(), err.getvalue()


def _rejects(path: Path) -> list[tuple[int, str]]:
    if not path.exists():
        return []
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    return [(r["row"], r["reason"]) for r in rows]


@pytest.mark.parametrize("name", list(CASES))
def test_spark_gives_the_local_verdict(spark: Any, tmp_path: Path, name: str) -> None:
    content, extra = CASES[name]
    queries = tmp_path / "q.tq"
    queries.write_text(QUERY)
    events = tmp_path / name
    if callable(content):
        content(events)
    else:
        events.write_bytes(content)
    verdicts = {}
    rejects = tmp_path / "rejects.jsonl"  # one path: the summaries name it
    for engine in ("local", "spark"):
        rejects.unlink(missing_ok=True)
        flags = ["--engine", "local"] if engine == "local" else []  # Spark is the default
        code, out, err = _run(
            ["run", str(queries), str(events), "--rejects", str(rejects), *flags, *extra]
        )
        assert "Traceback" not in err and "Spark failed" not in err, err
        # the summary's last line names the engine and the time: compare what it counts
        lines = err.strip().splitlines()
        summary = lines[-1].split(";")[0] if code == 0 else ""
        verdicts[engine] = (code, out, lines if code else lines[:-1], summary, _rejects(rejects))
    assert verdicts["local"][0] == (2 if name in REFUSED else 1 if name in FAILED else 0)
    assert verdicts["spark"] == verdicts["local"]


def test_decimal_wider_than_spark_reads_gives_the_local_sums(spark: Any, tmp_path: Path) -> None:
    """A query reads a decimal(76, 0) column: the driver reads the file, the decimals
    travel as text and are decimals again in the workers: the same exact sums."""
    queries = tmp_path / "q.tq"
    queries.write_text("RETURN SUM(B.v), MAX(B.v) PATTERN SEQ(A, B+) WITHIN 1000 s\n")
    events = tmp_path / "wide.parquet"
    _decimal76(events)
    local = _run(["run", str(queries), str(events), "--engine", "local"])
    on_spark = _run(["run", str(queries), str(events)])
    assert local[0] == on_spark[0] == 0, on_spark[2]
    assert on_spark[1] == local[1]
    assert json.loads(local[1])["values"]["SUM(B.v)"] >= 10**70


def test_rejected_rows_carry_their_row_numbers_across_spark_partitions(
    spark: Any, tmp_path: Path
) -> None:
    # small input splits make Spark read the file in several partitions
    queries = tmp_path / "q.tq"
    queries.write_text(QUERY)
    events = tmp_path / "events.csv"
    rows = [f"{'A' if i % 7 else 'B'},{i if i % 13 else 'bad'}" for i in range(1, 400)]
    events.write_text("type,time\n" + "\n".join(rows) + "\n")
    found = {}
    before = spark.conf.get("spark.sql.files.maxPartitionBytes")
    spark.conf.set("spark.sql.files.maxPartitionBytes", "512")
    try:
        for engine in ("local", "spark"):
            rejects = tmp_path / f"rejects-{engine}.jsonl"
            flags = ["--engine", "local"] if engine == "local" else []
            code, out, err = _run(
                ["run", str(queries), str(events), "--rejects", str(rejects), *flags]
            )
            assert code == 0, err
            found[engine] = (out, _rejects(rejects))
        partitions = spark.read.text(str(events)).rdd.getNumPartitions()
    finally:
        spark.conf.set("spark.sql.files.maxPartitionBytes", before)
    assert partitions > 1
    assert [row for row, _ in found["local"][1]] == list(range(13, 400, 13))
    assert found["spark"] == found["local"]


WORKER_FAILURE = """[PYTHON_EXCEPTION] An exception was thrown from the Python worker: Traceback (most recent call last):
  File "/x/pyspark/worker.py", line 1, in main
    process()
  File "/x/trendagg/spark/batch.py", line 2, in run
    item = item.decode()
UnicodeDecodeError: 'utf-8' codec can't decode byte 0xff in position 26: invalid start byte

\tat org.apache.spark.api.python.BasePythonRunner.handlePythonException(PythonRunner.scala:1)
"""


def test_a_python_worker_failure_shows_its_cause() -> None:
    from trendagg.spark.session import spark_failure, worker_error

    failure = RuntimeError(WORKER_FAILURE)
    assert spark_failure(failure) == (
        "UnicodeDecodeError: 'utf-8' codec can't decode byte 0xff in position 26: "
        "invalid start byte (in a Spark Python worker)"
    )
    assert worker_error(failure) is None


def test_our_error_in_a_python_worker_keeps_its_class_and_message() -> None:
    from trendagg.errors import ExecutionError
    from trendagg.spark.session import worker_error

    text = WORKER_FAILURE.replace(
        "UnicodeDecodeError: 'utf-8' codec can't decode byte 0xff in position 26: "
        "invalid start byte",
        "trendagg.errors.ExecutionError: more than 4 trends per window",
    )
    error = worker_error(RuntimeError(text))
    assert isinstance(error, ExecutionError) and str(error) == "more than 4 trends per window"
