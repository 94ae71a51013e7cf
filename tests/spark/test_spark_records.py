"""Rows as the Spark workers read them (``trendagg.spark.records``) equal the local readers'
events, without a JVM: the same Arrow tables and JSON texts the workers get."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pytest

from trendagg.io import read_events
from trendagg.spark.records import Reading, read_rows, read_table

CSV = "type,time,v\n007,1,007\n A ,2,x\n12,3,\n"


def _local(tmp_path: Path) -> tuple[list[str], list[object]]:
    path = tmp_path / "e.csv"
    path.write_text(CSV)
    events = read_events(path).events
    return events.type_values(), events.columns["v"].python_values()


@pytest.mark.parametrize("time_type", [pa.string(), pa.int64()])
def test_a_csv_event_type_007_stays_007_as_the_local_reader_reads_it(
    tmp_path: Path, time_type: pa.DataType
) -> None:
    # Spark reads CSV cells as text (the time as a number: the path of typed columns too)
    table = pa.table(
        {
            "type": ["007", " A ", "12"],
            "time": pa.array(["1", "2", "3"]).cast(time_type),
            "v": ["007", "x", None],
        }
    )
    events = read_table(table, Reading(csv_cells=True), None).events
    types, values = _local(tmp_path)
    assert types == ["007", "A", "12"]
    assert events.type_values() == types
    assert events.columns["v"].python_values() == values == [7, "x", None]


def test_a_csv_event_type_007_stays_007_in_a_stream(tmp_path: Path) -> None:
    # the stream's rows: each CSV row as JSON text of its cells
    texts = ['{"type": "007", "time": "1", "v": "007"}', '{"type": " A ", "time": "2", "v": "x"}']
    texts.append('{"type": "12", "time": "3"}')
    events = read_rows(texts, Reading(csv_cells=True), None).events
    types, values = _local(tmp_path)
    assert events.type_values() == types == ["007", "A", "12"]
    assert events.columns["v"].python_values() == values
