"""Real event data from ../shared/data (skipped where it is absent).

S&P 500 daily prices have no type column: every row is a ``Stock`` event, read
with ``event_type='Stock'`` and the ``date`` column as time.
"""

from __future__ import annotations

import csv
import datetime as dt
import gzip
import re
from itertools import islice
from pathlib import Path

import pytest

from helpers import SP500, slice_csv
from trendagg.io import read_events

SP500_ROWS = 619_040  # data rows, header excluded (../shared/data/README.md)
FEB8_2013 = 1360281600  # first day, 2013-02-08T00:00:00Z
FEB7_2018 = 1517961600  # last day, 2018-02-07T00:00:00Z
CHECKED_ROWS = 3_000  # rows compared one by one with the raw file

CLEAR_REASON = re.compile(
    r"no time in column 'date'"
    r"|time '.+' is (neither a number nor an ISO-8601 timestamp|not a finite number).*"
    r"|row has \d+ cells but the header has 7 columns; quote cells that contain commas"
)


def epoch_day(text: str) -> int:
    return int(dt.datetime.fromisoformat(text).replace(tzinfo=dt.UTC).timestamp())


def test_sp500_daily_prices_as_stock_events(shared_data: Path) -> None:
    path = shared_data / SP500
    if not path.is_file():
        pytest.skip(f"{path} not found in the shared data folder")
    result = read_events(path, event_type="Stock", time_col="date")
    events, rejected = result.events, result.rejected
    assert events.rows is not None
    rows, times = events.rows.tolist(), events.time_values()
    columns = {name: column.python_values() for name, column in events.columns.items()}
    records = events.records()

    assert len(events) == SP500_ROWS - len(rejected)
    assert sorted(rows + [r.row for r in rejected]) == list(range(1, SP500_ROWS + 1))
    for row in rejected:
        assert row.source == str(path) and row.record
        assert CLEAR_REASON.fullmatch(row.reason), row.reason

    assert events.type_names == ["Stock"]
    assert set(columns) == {"open", "high", "low", "close", "volume", "Name"}
    assert len(set(columns["Name"])) == 505
    assert all(type(value) is float for value in columns["close"])
    assert all(type(t) is int and t % 86400 == 0 for t in times)
    assert min(times) == FEB8_2013 and max(times) == FEB7_2018

    with gzip.open(path, "rt", encoding="utf-8", newline="") as handle:
        reader = csv.DictReader(handle)
        raw = list(islice(reader, CHECKED_ROWS))
    assert raw[0]["date"] == "2013-02-08"
    checked = 0
    for i, row in enumerate(rows):
        if row > CHECKED_ROWS:
            break
        source = raw[row - 1]
        assert times[i] == epoch_day(source["date"])
        assert columns["Name"][i] == source["Name"]
        assert columns["close"][i] == float(source["close"])
        assert records[i][2]["Name"] == source["Name"]
        checked += 1
    assert checked == CHECKED_ROWS - sum(r.row <= CHECKED_ROWS for r in rejected)


def test_greta_equals_twostep_on_sp500_down_trends(shared_data: Path, tmp_path: Path) -> None:
    """GRETA's Q1 shape: down-trends of closing prices per company, on real prices."""
    from helpers import canon
    from trendagg import run

    rows = slice_csv(
        shared_data / SP500, {"Name": {"AAPL", "IBM", "XOM"}}, 3 * 60, tmp_path / "s.csv"
    )
    query = (
        "RETURN Name, COUNT(*), MIN(S.close), AVG(S.close) PATTERN Stock S+ "
        "WHERE [Name] AND S.close > NEXT(S).close GROUP-BY Name WITHIN 14 days SLIDE 7 days"
    )
    expected = run(query, rows, strategy="twostep", event_type="Stock", time_col="date")
    got = run(query, rows, strategy="greta", event_type="Stock", time_col="date")
    assert canon(got) == canon(expected)
    assert {r.group["Name"] for r in got} == {"AAPL", "IBM", "XOM"}
    assert max(r.values["COUNT(*)"] for r in got) > 10  # real trends, not just single events


def test_greta_equals_twostep_on_nab_rising_values(shared_data: Path, tmp_path: Path) -> None:
    """Rising values per NAB device, with ISO timestamps, on two real series."""
    from helpers import canon, slice_csv
    from trendagg import run

    series = {"realAWSCloudwatch/ec2_cpu_utilization_24ae8d", "realTraffic/speed_6005"}
    rows = slice_csv(
        shared_data / "nab_real_long.csv.gz", {"series": series}, 400, tmp_path / "n.csv"
    )
    query = (
        "RETURN series, COUNT(*), MAX(R.value) PATTERN Reading R+ "
        "WHERE [series] AND R.value < NEXT(R).value GROUP-BY series WITHIN 1 hour SLIDE 30 min"
    )
    expected = run(query, rows, strategy="twostep", event_type="Reading", time_col="timestamp")
    got = run(query, rows, strategy="greta", event_type="Reading", time_col="timestamp")
    assert canon(got) == canon(expected)
    assert len(got) > 20


TAXI = "debs2015_taxi_10k.csv.gz"
TAXI_COLUMNS = (
    "medallion,hack_license,pickup_datetime,dropoff_datetime,trip_time_in_secs,trip_distance,"
    "pickup_lon,pickup_lat,dropoff_lon,dropoff_lat,payment_type,fare,surcharge,mta_tax,tip,"
    "tolls,total"
)
TAXI_OPTIONS = ["--event-type", "Trip", "--time-col", "pickup_datetime", "--columns", TAXI_COLUMNS]
EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def test_taxi_example_on_the_headerless_trip_file(shared_data: Path, tmp_path: Path) -> None:
    """Every row of the header-less DEBS file is a trip (the first line too); the example
    workload runs on all 10,004 and equals the two-step reference on the first 3,000."""
    from helpers import canon
    from trendagg import run

    path = shared_data / TAXI
    columns = TAXI_COLUMNS.split(",")
    read = read_events(path, event_type="Trip", time_col="pickup_datetime", columns=columns)
    assert len(read.events) == 10_004 and not read.rejected
    assert read.events.time_values()[0] == 1356998400  # 2013-01-01 00:00:00, on the first line
    text = (EXAMPLES / "taxi_trips.tq").read_text()
    options = {"event_type": "Trip", "time_col": "pickup_datetime", "columns": columns}
    (card,) = [r for r in run(text, path, **options) if r.query == "card_runs"]
    assert card.values["trips"] >= 4000  # 4,000 card trips, each in a run of its own at least

    part = tmp_path / "taxi.csv"
    with gzip.open(path, "rt") as src:
        part.write_text("".join(islice(src, 3000)))
    got = run(text, part, **options)
    assert canon(got) == canon(run(text, part, strategy="twostep", **options))
    assert len(got) > 1000


@pytest.mark.spark
def test_spark_engine_equals_local_on_the_taxi_example(spark: object, shared_data: Path) -> None:
    import io

    from trendagg.cli import main

    outputs = {}
    for engine in ("local", "spark"):
        out, err = io.StringIO(), io.StringIO()
        argv = ["run", str(EXAMPLES / "taxi_trips.tq"), str(shared_data / TAXI), *TAXI_OPTIONS]
        assert main([*argv, "--engine", engine], out, err) == 0, err.getvalue()
        outputs[engine] = out.getvalue()
    assert outputs["spark"] == outputs["local"]
    assert outputs["spark"].count("\n") > 1000
