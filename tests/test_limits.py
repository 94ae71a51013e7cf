"""The limits of trendagg.limits: huge times and windows get a message or a reject
reason, never an OverflowError; an absurd WITHIN/SLIDE is refused before any work;
a window state beyond the memory limit stops with its reason (issue #13, items 1, 3)."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from trendagg.cli import main
from trendagg.errors import ExecutionError, InputError, QueryError
from trendagg.io import read_events
from trendagg.language import parse
from trendagg.limits import TIME_LIMIT, memory_limit, time_out_of_range

QUERY = "RETURN COUNT(*) PATTERN SEQ(A, B+) WITHIN 1000 s\n"


def cli(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = main(list(argv), out, err)
    return code, out.getvalue(), err.getvalue()


def _files(tmp_path: Path, query: str, csv: str) -> tuple[str, str]:
    (tmp_path / "q.tq").write_text(query)
    (tmp_path / "e.csv").write_text(csv)
    return str(tmp_path / "q.tq"), str(tmp_path / "e.csv")


# ------------------------------------------------------------------ times


HUGE_TIMES = ["1e300", "123456789012345678901234567890", "-8796093022208", "8796093022208.0"]


@pytest.mark.parametrize("engine", ["local", "python"])
def test_huge_times_are_rejected_rows_on_every_engine(tmp_path: Path, engine: str) -> None:
    rows = "".join(f"B,{t}\n" for t in HUGE_TIMES)
    queries, events = _files(tmp_path, QUERY, "type,time\nA,1\nB,2\n" + rows + "B,3\n")
    rejects = tmp_path / "rejects.jsonl"
    code, out, err = cli("run", queries, events, "--engine", engine, "--rejects", str(rejects))
    assert code == 0, err
    assert json.loads(out)["values"] == {"COUNT(*)": 3}  # a1 b2 b3: the three B+ trends
    records = [json.loads(line) for line in rejects.read_text().splitlines()]
    assert [r["row"] for r in records] == [3, 4, 5, 6]
    assert all("out of range" in r["reason"] for r in records)
    assert "4 rejected" in err and "Traceback" not in err


def test_time_just_inside_the_limit_is_an_event(tmp_path: Path) -> None:
    edge = TIME_LIMIT - 1
    queries, events = _files(tmp_path, QUERY, f"type,time\nA,{edge - 2}\nB,{edge}\n")
    read = read_events(events)
    assert not read.rejected and read.events.times.tolist() == [edge - 2, edge]
    code, out, err = cli("run", queries, events, "--engine", "python")
    assert code == 0 and json.loads(out)["values"] == {"COUNT(*)": 1}, err


def test_times_out_of_range_are_rejected_in_parquet_and_jsonl(tmp_path: Path) -> None:
    path = tmp_path / "e.parquet"
    pq.write_table(pa.table({"type": ["A", "B", "B", "B"], "time": [1.0, 2.0, 1e300, -1e17]}), path)
    assert [(r.row, r.reason) for r in read_events(str(path)).rejected] == [
        (3, time_out_of_range("1e+300")),
        (4, time_out_of_range("-1e+17")),
    ]
    jsonl = tmp_path / "e.jsonl"
    jsonl.write_text('{"type": "A", "time": 1}\n{"type": "B", "time": 1e300}\n')
    assert "out of range" in read_events(str(jsonl)).rejected[0].reason


def test_window_numbers_beyond_64_bits_stop_the_compiled_engine_with_a_message(
    tmp_path: Path,
) -> None:
    # 8e12 s / 1 ns = 8e21: inside the time limit, beyond the kernel's 2**61
    query = "RETURN COUNT(*) PATTERN SEQ(A, B+) WITHIN 0.000001 ms\n"
    queries, events = _files(tmp_path, query, "type,time\nA,8000000000000\nB,8000000000000\n")
    code, _, err = cli("run", queries, events, "--engine", "local")
    assert code == 2
    assert "too far from 0" in err and "2**61" in err and "Traceback" not in err
    code, _, err = cli("run", queries, events, "--engine", "python")
    assert code == 0, err  # exact Python arithmetic has no such limit


# ------------------------------------------------------------------ windows


@pytest.mark.parametrize(
    ("clause", "message"),
    [
        ("WITHIN 1000 day SLIDE 1 ms", "86,400,000,000 windows"),
        ("WITHIN 1000001 s SLIDE 1 s", "1,000,001 windows"),
        ("WITHIN 100000000000000000000000 day", "longer than any time trendagg takes"),
        ("WITHIN 1 s SLIDE 100000000000000000000000 day", "longer than any time"),
    ],
)
def test_absurd_windows_are_refused_before_any_work(
    tmp_path: Path, clause: str, message: str
) -> None:
    queries, events = _files(
        tmp_path, f"RETURN COUNT(*) PATTERN SEQ(A, B+) {clause}\n", "type,time\nA,1\n"
    )
    for command in (["check", queries], ["run", queries, events, "--engine", "local"]):
        code, out, err = cli(*command)
        assert code == 2 and message in err and out == "", err
        assert "Line 1" in err and "Traceback" not in err
    with pytest.raises(QueryError, match="SLIDE|WITHIN"):
        parse(f"RETURN COUNT(*) PATTERN SEQ(A, B+) {clause}")


def test_the_refusal_says_which_slide_would_do(tmp_path: Path) -> None:
    with pytest.raises(QueryError) as caught:
        parse("RETURN COUNT(*) PATTERN SEQ(A, B+) WITHIN 1000 day SLIDE 1 ms")
    assert "make SLIDE at least WITHIN / 1,000,000 (86.4 s)" in str(caught.value)


def test_a_day_sliding_by_a_second_is_a_valid_query() -> None:
    parse("RETURN COUNT(*) PATTERN SEQ(A, B+) WITHIN 1 day SLIDE 1 s")
    parse("RETURN COUNT(*) PATTERN SEQ(A, B+) WITHIN 1000000 s SLIDE 1 s")  # the limit itself


# ------------------------------------------------------------------ memory


def test_window_state_beyond_the_memory_limit_stops_with_its_reason(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # a MAX keeps window slots (not lazy windows): 86,401 per state and partition
    query = "RETURN COUNT(*), MAX(B.k) PATTERN SEQ(A, B+) WHERE [k] WITHIN 1 day SLIDE 1 s\n"
    rows = "".join(f"A,{i},{i}\nB,{i + 1},{i}\n" for i in range(200))
    queries, events = _files(tmp_path, query, "type,time,k\n" + rows)
    monkeypatch.setenv("TRENDAGG_MEMORY_LIMIT", "64M")
    code, out, err = cli("run", queries, events, "--engine", "local")
    assert code == 1 and out == ""
    assert "window state needs" in err and "64.0 MiB" in err and "86,401 window slots" in err
    assert "Traceback" not in err
    monkeypatch.setenv("TRENDAGG_MEMORY_LIMIT", "8G")
    code, out, err = cli("run", queries, events, "--engine", "local")
    assert code == 0 and len(out.splitlines()) > 0, err
    # without the MAX the spec is lazy: the open windows' starts, well within 64M
    (tmp_path / "lazy.tq").write_text(query.replace(", MAX(B.k)", ""))
    monkeypatch.setenv("TRENDAGG_MEMORY_LIMIT", "64M")
    code, out, err = cli("run", str(tmp_path / "lazy.tq"), events, "--engine", "local")
    assert code == 0 and len(out.splitlines()) > 0, err


@pytest.mark.parametrize(
    ("text", "size"), [("1000", 1000), ("8G", 8 * 2**30), ("512 MiB", 512 * 2**20), ("1.5k", 1536)]
)
def test_memory_limit_sizes(monkeypatch: pytest.MonkeyPatch, text: str, size: int) -> None:
    monkeypatch.setenv("TRENDAGG_MEMORY_LIMIT", text)
    assert memory_limit() == size


def test_memory_limit_that_is_not_a_size(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TRENDAGG_MEMORY_LIMIT", "lots")
    with pytest.raises(InputError, match="not a size"):
        memory_limit()
    monkeypatch.delenv("TRENDAGG_MEMORY_LIMIT")
    assert memory_limit() > 0
    assert issubclass(ExecutionError, RuntimeError)
