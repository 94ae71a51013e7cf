"""Bad input and faults, second round (issue #38): one rule for every reader and engine,
messages of a readable size, and API misuse answered in words."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from tests.cli.test_bad_input import cli

from trendagg.io.batch import EventBatch

PRICES = "RETURN MIN(B.p), MAX(B.p) PATTERN SEQ(A, B+) WITHIN 100 s\n"
ROWS = [
    {"type": "A", "time": 1},
    {"type": "B", "time": 2, "p": 5},
    {"type": "B", "time": 3, "p": "n/a"},
    {"type": "B", "time": 4, "p": 2.5},
]


def _event_files(tmp_path: Path) -> dict[str, Path]:
    """ROWS as CSV and as JSON Lines."""
    csv = tmp_path / "e.csv"
    csv.write_text("type,time,p\nA,1,\nB,2,5\nB,3,n/a\nB,4,2.5\n")
    jsonl = tmp_path / "e.jsonl"
    jsonl.write_text("".join(json.dumps(row) + "\n" for row in ROWS))
    return {"csv": csv, "jsonl": jsonl}


def _values(tmp_path: Path, query: str, events: Path, *flags: str) -> tuple[int, Any, str]:
    (tmp_path / "q.tq").write_text(query)
    code, out, err = cli("run", str(tmp_path / "q.tq"), str(events), *flags)
    return code, [json.loads(line)["values"] for line in out.splitlines()], err


# ----------------------------------------------------------------------------- item 4


@pytest.mark.parametrize("engine", ["local", "python"])
@pytest.mark.parametrize("fmt", ["csv", "jsonl"])
def test_min_max_over_a_word_among_numbers_is_one_answer(
    tmp_path: Path, engine: str, fmt: str
) -> None:
    """Numbers rank before words: from a file, from records and from an EventBatch."""
    import trendagg

    expected = {"MIN(B.p)": 2.5, "MAX(B.p)": "n/a"}
    code, values, err = _values(tmp_path, PRICES, _event_files(tmp_path)[fmt], "--engine", engine)
    assert code == 0 and "(0 rejected)" in err, err
    assert values == [expected]
    assert [r.values for r in trendagg.run(PRICES, ROWS)] == [expected]
    batch = EventBatch.of(
        [r["type"] for r in ROWS], [r["time"] for r in ROWS], {"p": [r.get("p") for r in ROWS]}
    )
    assert [r.values for r in trendagg.run(PRICES, batch)] == [expected]


def test_a_sum_over_a_word_still_rejects_its_row_and_max_keeps_the_others(
    tmp_path: Path,
) -> None:
    """SUM and AVG read numbers: the word's row is rejected (and written out), and MAX,
    which ranks words after numbers, sees the other rows of that attribute only."""
    rejects = tmp_path / "bad.jsonl"
    for aggregate in ("SUM", "AVG"):
        query = f"RETURN {aggregate}(B.p), MAX(B.p), MIN(B.q) PATTERN SEQ(A, B+) WITHIN 100 s\n"
        events = tmp_path / "e.csv"
        events.write_text("type,time,p,q\nA,1,,\nB,2,5,x\nB,3,n/a,y\nB,4,2.5,z\n")
        code, values, err = _values(
            tmp_path, query, events, "--engine", "local", "--rejects", str(rejects)
        )
        assert code == 0 and "1 row rejected" in err
        assert values[0]["MAX(B.p)"] == 5 and values[0]["MIN(B.q)"] == "x"
        [entry] = [json.loads(line) for line in rejects.read_text().splitlines()]
        assert entry["row"] == 3 and "attribute 'p' is 'n/a', not a number" in entry["reason"]


@pytest.mark.spark
def test_spark_ranks_a_word_among_numbers_as_the_local_engine(spark: Any, tmp_path: Path) -> None:
    expected = [{"MIN(B.p)": 2.5, "MAX(B.p)": "n/a"}]
    for events in _event_files(tmp_path).values():
        code, values, err = _values(tmp_path, PRICES, events, "--engine", "spark")
        assert code == 0 and "(0 rejected)" in err, err
        assert values == expected
