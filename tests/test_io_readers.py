"""Readers: every rule of the IO contract, each with a case a wrong reader fails."""

from __future__ import annotations

import csv
import datetime as dt
import gzip
import json
import math
from decimal import Decimal
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from trendagg.errors import InputError
from trendagg.io import EventBatch, ReadResult, RejectedRow, from_records, read_events
from trendagg.io.readers import _read_csv_python
from trendagg.io.values import exact_int, int_text, iso_column, parse_cell, time_value

FEB8 = 1360281600  # 2013-02-08T00:00:00Z
FEB8_0930 = 1360315800  # 2013-02-08T09:30:00Z


def write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


def csv_file(tmp_path: Path, text: str, name: str = "events.csv") -> Path:
    return write(tmp_path / name, text)


def jsonl_file(tmp_path: Path, lines: list[str], name: str = "events.jsonl") -> Path:
    return write(tmp_path / name, "\n".join(lines) + "\n")


def only_event_values(result: ReadResult, column: str) -> list[object]:
    return result.events.columns[column]


# ----------------------------------------------------------------------------- basics


def test_csv_basic_columns_rows_and_types(tmp_path: Path) -> None:
    path = csv_file(tmp_path, "type,time,price,name\nA,1,10,x\nB,2,2.5,y\n")
    result = read_events(path)
    events = result.events
    assert result.rejected == []
    assert events.types == ["A", "B"]
    assert events.times == [1, 2]
    assert [type(t) for t in events.times] == [int, int]
    assert events.columns == {"price": [10, 2.5], "name": ["x", "y"]}
    assert "type" not in events.columns and "time" not in events.columns
    assert events.rows == [1, 2]
    assert events.source == str(path)
    assert len(events) == 2


def test_attrs_leave_out_missing_values(tmp_path: Path) -> None:
    path = csv_file(tmp_path, "type,time,a,b\nA,1,,7\n")
    events = read_events(path).events
    assert events.columns == {"a": [None], "b": [7]}
    assert events.attrs(0) == {"b": 7}


def test_custom_type_and_time_columns(tmp_path: Path) -> None:
    path = csv_file(tmp_path, "kind,ts,type\nA,5,t\n")
    events = read_events(path, type_col="kind", time_col="ts").events
    assert events.types == ["A"] and events.times == [5]
    assert events.columns == {"type": ["t"]}


def test_event_batch_checks_lengths() -> None:
    with pytest.raises(ValueError, match="differ in length"):
        EventBatch(["A"], [1, 2], {}, [1])
    assert EventBatch(["A", "B"], [1, 2]).rows == [1, 2]


# ----------------------------------------------------------------------------- missing columns


def test_missing_type_column_message(tmp_path: Path) -> None:
    path = csv_file(tmp_path, "kind,time,x\nA,1,2\n")
    with pytest.raises(InputError) as info:
        read_events(path)
    assert str(info.value) == (
        f"type column 'type' not found in {path}; columns are [kind, time, x]; "
        "pass --type-col, or pass --event-type NAME if every row has the same type"
    )


def test_missing_type_column_message_in_every_format(tmp_path: Path) -> None:
    parquet = tmp_path / "events.parquet"
    pq.write_table(pa.table({"time": [1]}), parquet)
    jsonl = jsonl_file(tmp_path, ['{"time": 1}'])
    hint = "pass --type-col, or pass --event-type NAME if every row has the same type"
    for path in (parquet, jsonl):
        with pytest.raises(InputError, match="type column 'type' not found") as info:
            read_events(path)
        assert str(info.value).endswith(hint)
    with pytest.raises(InputError, match="type column 'type' not found") as info:
        from_records([{"time": 1}])
    assert str(info.value).endswith(hint)


def test_missing_time_column_message(tmp_path: Path) -> None:
    path = csv_file(tmp_path, "type,ts,x\nA,1,2\n")
    with pytest.raises(InputError) as info:
        read_events(path)
    message = str(info.value)
    assert (
        f"time column 'time' not found in {path}; columns are [type, ts, x]; pass --time-col"
        in message
    )


def test_missing_time_column_jsonl_lists_union_of_keys(tmp_path: Path) -> None:
    path = jsonl_file(tmp_path, ['{"type": "A", "ts": 1}', '{"type": "B", "ts": 2, "x": 1}'])
    with pytest.raises(InputError, match=r"columns are \[type, ts, x\]; pass --time-col"):
        read_events(path)


def test_missing_time_column_parquet(tmp_path: Path) -> None:
    path = tmp_path / "events.parquet"
    pq.write_table(pa.table({"type": ["A"], "when": [1]}), path)
    with pytest.raises(InputError, match=r"time column 'time' not found.*\[type, when\]"):
        read_events(path)


def test_same_type_and_time_column_is_an_error(tmp_path: Path) -> None:
    path = csv_file(tmp_path, "type,time\nA,1\n")
    with pytest.raises(InputError, match="both 'type'"):
        read_events(path, time_col="type")


def test_ValueError_is_caught_by_callers_who_do_not_know_trendagg(tmp_path: Path) -> None:
    with pytest.raises(ValueError):
        read_events(csv_file(tmp_path, "a,b\n1,2\n"))


# ----------------------------------------------------------------------------- types


def test_missing_or_empty_type_is_rejected(tmp_path: Path) -> None:
    path = csv_file(tmp_path, "type,time\nA,1\n,2\n   ,3\nB,4\n")
    result = read_events(path)
    assert result.events.types == ["A", "B"]
    assert [(r.row, r.reason) for r in result.rejected] == [
        (2, "no event type in column 'type'"),
        (3, "no event type in column 'type'"),
    ]
    assert result.rejected[1].record == {"type": "   ", "time": "3"}


def test_type_is_always_text(tmp_path: Path) -> None:
    csv_path = csv_file(tmp_path, "type,time\n007,1\n12,2\n")
    assert read_events(csv_path).events.types == ["007", "12"]
    json_path = jsonl_file(tmp_path, ['{"type": 7, "time": 1}', '{"type": true, "time": 1}'])
    assert read_events(json_path).events.types == ["7", "true"]


def test_jsonl_missing_type_key_is_rejected(tmp_path: Path) -> None:
    path = jsonl_file(
        tmp_path, ['{"type": "A", "time": 1}', '{"time": 2}', '{"type": null, "time": 3}']
    )
    result = read_events(path)
    assert result.events.types == ["A"]
    assert [(r.row, r.reason) for r in result.rejected] == [
        (2, "no event type in column 'type'"),
        (3, "no event type in column 'type'"),
    ]


# ----------------------------------------------------------------------------- times


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("2013-02-08", FEB8),
        ("2013-02-08 09:30:00", FEB8_0930),
        ("2013-02-08T09:30:00", FEB8_0930),
        ("2013-02-08T09:30:00Z", FEB8_0930),
        ("2013-02-08T09:30:00.250Z", FEB8_0930 + 0.25),
        ("2013-02-08T09:30:00+02:00", FEB8_0930 - 7200),
        ("2013-02-08T09:30:00.5-01:30", FEB8_0930 + 5400 + 0.5),
        ("2013-02-08T09:30:00.000", FEB8_0930),
        ("1970-01-01T00:00:00.123456789Z", 0.123456789),
        ("1969-12-31T23:59:59.5Z", -0.5),
    ],
)
def test_iso_times_become_epoch_seconds(tmp_path: Path, text: str, expected: float) -> None:
    path = csv_file(tmp_path, f"type,time\nA,{text}\n")
    result = read_events(path)
    assert result.rejected == []
    (value,) = result.events.times
    assert value == expected
    assert type(value) is type(expected)


def test_numeric_times_keep_their_kind(tmp_path: Path) -> None:
    path = csv_file(
        tmp_path,
        "type,time\nA,5\nA,1.5\nA,1e3\nA,-3\nA,8796093022207\nA,123456789012345678901234\n",
    )
    read = read_events(path)
    times = read.events.times
    assert times == [5, 1.5, 1000.0, -3, 2**43 - 1]
    assert [type(t) for t in times] == [int, float, float, int, int]
    # from 2**43 s a time is out of range (trendagg.limits), not an event
    assert [(r.row, r.reason) for r in read.rejected] == [
        (
            6,
            "time '123456789012345678901234' is out of range (times are seconds below 2**43 in magnitude)",
        )
    ]


def test_jsonl_times_numbers_strings_and_numeric_text(tmp_path: Path) -> None:
    path = jsonl_file(
        tmp_path,
        [
            '{"type": "A", "time": 5}',
            '{"type": "A", "time": 2.5}',
            '{"type": "A", "time": "2013-02-08T09:30:00Z"}',
            '{"type": "A", "time": "17"}',
        ],
    )
    times = read_events(path).events.times
    assert times == [5, 2.5, FEB8_0930, 17]
    assert [type(t) for t in times] == [int, float, int, int]


def test_bad_times_are_rejected_with_reasons(tmp_path: Path) -> None:
    path = csv_file(tmp_path, "type,time\nA,yesterday\nA,\nA,nan\nA,inf\nA,2013-02-30\nA,1\n")
    result = read_events(path)
    assert result.events.times == [1]
    assert [(r.row, r.reason) for r in result.rejected] == [
        (1, "time 'yesterday' is neither a number nor an ISO-8601 timestamp"),
        (2, "no time in column 'time'"),
        (3, "time 'nan' is not a finite number"),
        (4, "time 'inf' is not a finite number"),
        (
            5,
            "time '2013-02-30' is neither a number nor an ISO-8601 timestamp "
            "(day is out of range for month)",
        ),
    ]


def test_jsonl_nonfinite_and_missing_times_are_rejected(tmp_path: Path) -> None:
    path = jsonl_file(
        tmp_path,
        [
            '{"type": "A", "time": NaN}',
            '{"type": "A", "time": 1e400}',
            '{"type": "A", "time": null}',
            '{"type": "A"}',
            '{"type": "A", "time": true}',
            '{"type": "A", "time": 3}',
        ],
    )
    result = read_events(path)
    assert result.events.times == [3]
    reasons = [r.reason for r in result.rejected]
    assert reasons[0] == "time 'nan' is not a finite number"
    assert reasons[1] == "time 'inf' is not a finite number"
    assert reasons[2] == reasons[3] == "no time in column 'time'"
    assert reasons[4] == "time 'true' is neither a number nor an ISO-8601 timestamp"


# ----------------------------------------------------------------------------- CSV values


def test_csv_mixed_column_numbers_and_strings(tmp_path: Path) -> None:
    path = csv_file(
        tmp_path, 'type,time,v\nA,1,10\nA,2,abc\nA,3,2.5\nA,4,\nA,5,"  7 "\nA,6, hi there \n'
    )
    values = only_event_values(read_events(path), "v")
    assert values == [10, "abc", 2.5, None, 7, "hi there"]
    assert [type(v) for v in values] == [int, str, float, type(None), int, str]


def test_csv_integer_literals(tmp_path: Path) -> None:
    path = csv_file(tmp_path, "type,time,v\nA,1,+5\nA,2,007\nA,3,-12\nA,4,0\n")
    values = only_event_values(read_events(path), "v")
    assert values == [5, 7, -12, 0]
    assert all(type(v) is int for v in values)


def test_csv_float_column_and_nonfinite_texts_stay_strings(tmp_path: Path) -> None:
    floats = csv_file(tmp_path, "type,time,v\nA,1,1.5\nA,2,2e3\nA,3,.5\n", "f.csv")
    assert only_event_values(read_events(floats), "v") == [1.5, 2000.0, 0.5]
    odd = csv_file(tmp_path, "type,time,v\nA,1,1.5\nA,2,nan\nA,3,inf\nA,4,1e999\nA,5,-Infinity\n")
    assert only_event_values(read_events(odd), "v") == [1.5, "nan", "inf", "1e999", "-Infinity"]


def test_csv_huge_ints_are_exact(tmp_path: Path) -> None:
    huge = 2**200
    beyond_str_limit = 10**5000 + 7  # more digits than int() accepts by default
    path = csv_file(
        tmp_path,
        f"type,time,h,m\nA,1,{huge},{int_text(beyond_str_limit)}\nA,2,-{huge},3\nA,3,9223372036854775808,x\n",
    )
    events = read_events(path).events
    assert events.columns["h"] == [huge, -huge, 2**63]
    assert events.columns["m"] == [beyond_str_limit, 3, "x"]


def test_csv_all_int_column_near_int64_limits(tmp_path: Path) -> None:
    values = [2**63 - 1, -(2**63), 2**63, 10**18, -(10**18) + 1]
    text = "".join(f"A,{i},{v}\n" for i, v in enumerate(values))
    path = csv_file(tmp_path, "type,time,v\n" + text)
    assert only_event_values(read_events(path), "v") == values


def test_csv_quoted_cells_with_commas_and_newlines(tmp_path: Path) -> None:
    path = csv_file(tmp_path, 'type,time,note\nA,1,"a, b"\nA,2,"two\nlines"\nA,3,"say ""hi"""\n')
    assert only_event_values(read_events(path), "note") == ["a, b", "two\nlines", 'say "hi"']


def test_csv_extra_cells_rejected_fewer_cells_missing(tmp_path: Path) -> None:
    path = csv_file(tmp_path, "type,time,a,b\nA,1,x,y\nB,2,x,y,z,w\nC,3\n\nD,4,q,r\n")
    result = read_events(path)
    events = result.events
    assert events.types == ["A", "C", "D"]
    assert events.rows == [1, 3, 4]
    assert events.columns == {"a": ["x", None, "q"], "b": ["y", None, "r"]}
    (rejected,) = result.rejected
    assert rejected.row == 2
    assert rejected.reason == (
        "row has 6 cells but the header has 4 columns; quote cells that contain commas"
    )
    assert rejected.record == {"type": "B", "time": "2", "a": "x", "b": "y", "_extra": ["z", "w"]}


def test_csv_row_numbers_count_data_rows(tmp_path: Path) -> None:
    path = csv_file(tmp_path, "type,time\nA,1\nA,bad\nA,3\nA,also bad\n")
    result = read_events(path)
    assert result.events.rows == [1, 3]
    assert [r.row for r in result.rejected] == [2, 4]


def test_csv_bom_and_crlf(tmp_path: Path) -> None:
    path = tmp_path / "events.csv"
    path.write_bytes("\ufefftype,time,x\r\nA,1,2\r\n".encode())
    events = read_events(path).events
    assert events.types == ["A"] and events.columns == {"x": [2]}


def test_csv_header_only_is_empty_but_checked(tmp_path: Path) -> None:
    assert len(read_events(csv_file(tmp_path, "type,time,x\n")).events) == 0
    with pytest.raises(InputError, match="--time-col"):
        read_events(csv_file(tmp_path, "type,x\n", "other.csv"))


def test_empty_csv_is_an_input_error(tmp_path: Path) -> None:
    path = csv_file(tmp_path, "")
    with pytest.raises(InputError, match=r"is empty; a CSV event file needs a header row") as info:
        read_events(path)
    assert str(path) in str(info.value)


def test_duplicate_csv_header_is_an_input_error(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="column 'x' appears twice"):
        read_events(csv_file(tmp_path, "type,time,x,x\nA,1,2,3\n"))


def test_csv_not_utf8_is_an_input_error(tmp_path: Path) -> None:
    path = tmp_path / "events.csv"
    path.write_bytes(b"type,time,x\nA,1,caf\xe9\n")
    with pytest.raises(InputError, match="is not UTF-8 text.*iconv"):
        read_events(path)


def test_rejected_csv_record_keeps_raw_text(tmp_path: Path) -> None:
    path = csv_file(tmp_path, "type,time,x\nA, soon , 12 \n")
    (rejected,) = read_events(path).rejected
    assert rejected.record == {"type": "A", "time": " soon ", "x": " 12 "}
    assert rejected.source == str(path)


cells = st.one_of(
    st.integers(min_value=-(2**130), max_value=2**130).map(str),
    st.floats(allow_nan=True, allow_infinity=True).map(repr),
    st.text(alphabet=" ab1.e+-,\"'\n", max_size=6),
    st.sampled_from(["", " ", "nan", "inf", "1e999", "007", "+3", ".5", "5.", "1_000"]),
)


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(st.lists(st.tuples(cells, cells), min_size=1, max_size=12))
def test_csv_vectorised_conversion_equals_cell_rules(
    tmp_path: Path, table: list[tuple[str, str]]
) -> None:
    """The pyarrow path, the Python path and parse_cell agree on every cell; nothing is lost."""
    path = tmp_path / "prop.csv"
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(["type", "time", "a", "b"])
        for i, (a, b) in enumerate(table):
            writer.writerow(["T", i, a, b])
    fast = read_events(path)
    slow = _read_csv_python(path, str(path), False, "type", "time", None, event_type=None)
    assert fast.rejected == slow.rejected == []
    assert fast.events == slow.events
    assert len(fast.events) == len(table)
    for column, index in (("a", 0), ("b", 1)):
        expected = [parse_cell(row[index]) for row in table]
        got = fast.events.columns[column]
        assert got == expected
        assert [type(v) for v in got] == [type(v) for v in expected]


# ----------------------------------------------------------------------------- numeric requirement


def test_numeric_attributes_reject_text_for_the_listed_types(tmp_path: Path) -> None:
    path = csv_file(
        tmp_path,
        "type,time,price,qty\nB,1,n/a,1\nA,2,n/a,1\nB,3,,1\nB,4,12.5,1\nB,5,3,x\nB,6,true,2\n",
    )
    result = read_events(path, numeric={"B": {"price"}})
    assert result.events.types == ["A", "B", "B", "B"]
    assert result.events.columns["price"] == ["n/a", None, 12.5, 3]
    assert [(r.row, r.reason) for r in result.rejected] == [
        (1, "attribute 'price' is 'n/a', not a number (the queries read it numerically)"),
        (6, "attribute 'price' is 'true', not a number (the queries read it numerically)"),
    ]


def test_numeric_requirement_in_jsonl_rejects_booleans_and_nested(tmp_path: Path) -> None:
    path = jsonl_file(
        tmp_path,
        [
            '{"type": "B", "time": 1, "price": true}',
            '{"type": "B", "time": 2, "price": [1]}',
            '{"type": "B", "time": 3, "price": 4}',
            '{"type": "B", "time": 4}',
        ],
    )
    result = read_events(path, numeric={"B": ["price"]})
    assert result.events.times == [3, 4]
    assert [r.reason for r in result.rejected] == [
        "attribute 'price' is 'true', not a number (the queries read it numerically)",
        "attribute 'price' is '[1]', not a number (the queries read it numerically)",
    ]


# ----------------------------------------------------------------------------- JSON Lines


def test_jsonl_values(tmp_path: Path) -> None:
    path = jsonl_file(
        tmp_path,
        [
            '{"type": "A", "time": 1, "n": 3, "f": 1.5, "s": " x ", "b": true, '
            '"o": {"k": [1, 2]}, "z": null}',
            '{"type": "A", "time": 2, "b": false, "extra": "e"}',
        ],
    )
    events = read_events(path).events
    assert events.columns == {
        "n": [3, None],
        "f": [1.5, None],
        "s": [" x ", None],
        "b": ["true", "false"],
        "o": ['{"k":[1,2]}', None],
        "z": [None, None],
        "extra": [None, "e"],
    }


def test_jsonl_huge_ints_are_exact(tmp_path: Path) -> None:
    huge = 2**300
    beyond_str_limit = -(10**6000) - 1
    path = jsonl_file(
        tmp_path,
        [
            json.dumps({"type": "A", "time": 1, "h": huge}),
            '{"type": "A", "time": 2, "h": ' + int_text(beyond_str_limit) + "}",
        ],
    )
    assert read_events(path).events.columns["h"] == [huge, beyond_str_limit]


def test_jsonl_invalid_lines_and_blank_lines_keep_line_numbers(tmp_path: Path) -> None:
    path = write(
        tmp_path / "events.jsonl",
        '{"type": "A", "time": 1}\n\n   \n  {"type": "A", "time": 2,}\n[1, 2]\n"text"\n'
        '{"type": "A", "time": 7}\n',
    )
    result = read_events(path)
    assert result.events.rows == [1, 7]
    assert [(r.row, r.reason) for r in result.rejected] == [
        (4, "invalid JSON at column 27: Expecting property name enclosed in double quotes"),
        (5, "line is an array, not an object"),
        (6, "line is a string, not an object"),
    ]
    assert result.rejected[0].record == {"_text": '  {"type": "A", "time": 2,}'}


def test_jsonl_not_utf8_line_is_rejected(tmp_path: Path) -> None:
    path = tmp_path / "events.jsonl"
    path.write_bytes(b'{"type": "A", "time": 1}\n{"type": "caf\xe9", "time": 2}\n')
    result = read_events(path)
    assert result.events.types == ["A"]
    (rejected,) = result.rejected
    assert rejected.row == 2 and rejected.reason.startswith("line is not UTF-8 text")


def test_json_array_file_is_an_input_error(tmp_path: Path) -> None:
    path = write(tmp_path / "events.json", '[\n{"type": "A", "time": 1}\n]\n')
    with pytest.raises(InputError, match=r"one JSON array, not JSON Lines.*jq -c"):
        read_events(path)


def test_empty_jsonl_gives_no_events(tmp_path: Path) -> None:
    result = read_events(write(tmp_path / "e.ndjson", "\n\n"))
    assert len(result.events) == 0 and result.rejected == []


# ----------------------------------------------------------------------------- gzip, formats, files


def test_gzipped_csv_and_jsonl(tmp_path: Path) -> None:
    csv_gz = tmp_path / "events.csv.gz"
    with gzip.open(csv_gz, "wt", encoding="utf-8") as handle:
        handle.write("type,time,x\nA,1,2\nB,oops,3\nC,3,4,5\n")
    result = read_events(csv_gz)
    assert result.events.types == ["A"]
    assert [r.row for r in result.rejected] == [2, 3]
    jsonl_gz = tmp_path / "events.jsonl.gz"
    with gzip.open(jsonl_gz, "wt", encoding="utf-8") as handle:
        handle.write('{"type": "A", "time": 1, "x": 12345678901234567890123}\n{bad\n')
    result = read_events(jsonl_gz)
    assert result.events.columns == {"x": [12345678901234567890123]}
    assert result.rejected[0].row == 2


def test_gzip_detected_from_content(tmp_path: Path) -> None:
    path = tmp_path / "events.csv"
    path.write_bytes(gzip.compress(b"type,time\nA,1\n"))
    assert read_events(path).events.types == ["A"]


@pytest.mark.parametrize(
    ("name", "fmt"), [("e.ndjson", None), ("e.json", None), ("e.txt", "jsonl"), ("e.JSONL", None)]
)
def test_format_from_extension_or_argument(tmp_path: Path, name: str, fmt: str | None) -> None:
    path = write(tmp_path / name, '{"type": "A", "time": 1}\n')
    assert read_events(path, fmt=fmt).events.types == ["A"]


def test_unknown_extension_and_format(tmp_path: Path) -> None:
    path = write(tmp_path / "events.txt", "type,time\nA,1\n")
    with pytest.raises(InputError, match=r"cannot tell the format of .*events\.txt.*fmt="):
        read_events(path)
    assert read_events(path, fmt="csv").events.types == ["A"]
    with pytest.raises(InputError, match="unknown event format 'xls'"):
        read_events(path, fmt="xls")


def test_missing_file_is_an_input_error(tmp_path: Path) -> None:
    path = tmp_path / "nope.csv"
    with pytest.raises(InputError, match=r"nope\.csv' does not exist; check the path"):
        read_events(path)


def test_folder_with_text_format_is_an_input_error(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="only Parquet datasets"):
        read_events(tmp_path, fmt="csv")


# ----------------------------------------------------------------------------- Parquet


def test_parquet_value_types(tmp_path: Path) -> None:
    path = tmp_path / "events.parquet"
    utc = dt.UTC
    table = pa.table(
        {
            "type": pa.array(["A", "B", "A"]).dictionary_encode(),
            "time": pa.array(
                [
                    dt.datetime(2013, 2, 8, 9, 30, tzinfo=utc),
                    dt.datetime(2013, 2, 8, 9, 30, 0, 250000, tzinfo=utc),
                    dt.datetime(2013, 2, 8),
                ],
                pa.timestamp("ns", tz="UTC"),
            ),
            "i": pa.array([1, None, -(2**63)], pa.int64()),
            "f": pa.array([1.5, math.nan, math.inf], pa.float32()),
            "s": pa.array(["x", None, ""]),
            "b": pa.array([True, False, None]),
            "d": pa.array([Decimal("12.00"), Decimal("0.25"), None], pa.decimal128(10, 2)),
            "day": pa.array([dt.date(2013, 2, 8), None, dt.date(1970, 1, 2)], pa.date32()),
            "naive": pa.array(
                [dt.datetime(1970, 1, 1, 0, 0, 1, 500000), None, None], pa.timestamp("ms")
            ),
            "nothing": pa.nulls(3),
        }
    )
    pq.write_table(table, path)
    events = read_events(path).events
    assert events.types == ["A", "B", "A"]
    assert events.times == [FEB8_0930, FEB8_0930 + 0.25, FEB8]
    assert [type(t) for t in events.times] == [int, float, int]
    assert events.columns == {
        "i": [1, None, -(2**63)],
        "f": [1.5, "nan", "inf"],
        "s": ["x", None, ""],
        "b": ["true", "false", None],
        "d": [12, 0.25, None],
        "day": [FEB8, None, 86400],
        "naive": [1.5, None, None],
        "nothing": [None, None, None],
    }
    assert type(events.columns["d"][0]) is int


def test_parquet_rejects_rows_with_its_row_numbers(tmp_path: Path) -> None:
    path = tmp_path / "events.parquet"
    pq.write_table(pa.table({"type": ["A", None, "B"], "time": ["1", "2", "never"]}), path)
    result = read_events(path)
    assert result.events.times == [1]
    assert [(r.row, r.reason) for r in result.rejected] == [
        (2, "no event type in column 'type'"),
        (3, "time 'never' is neither a number nor an ISO-8601 timestamp"),
    ]
    assert result.rejected[1].record == {"type": "B", "time": "never"}


def test_corrupt_parquet_is_an_input_error(tmp_path: Path) -> None:
    path = tmp_path / "events.parquet"
    path.write_bytes(b"PAR1 this is not really parquet")
    with pytest.raises(InputError) as info:
        read_events(path)
    message = str(info.value)
    assert f"cannot read {path} as Parquet" in message
    assert "check that it is an intact Parquet file" in message


def test_parquet_folder_is_one_dataset(tmp_path: Path) -> None:
    folder = tmp_path / "dataset"
    (folder / "region=north").mkdir(parents=True)
    (folder / "region=south").mkdir()
    first = folder / "region=north" / "part-0.parquet"
    second = folder / "region=south" / "part-0.parquet"
    pq.write_table(pa.table({"type": ["A", "B"], "time": [1, 2]}), first)
    pq.write_table(pa.table({"type": ["C", "D"], "time": [3, None], "extra": [2**40, 1]}), second)
    (folder / "_SUCCESS").write_text("")
    result = read_events(folder)
    events = result.events
    assert events.types == ["A", "B", "C"]
    assert events.times == [1, 2, 3]
    assert events.rows == [1, 2, 1]
    assert events.columns == {"region": ["north", "north", "south"], "extra": [None, None, 2**40]}
    assert events.source == str(folder)
    (rejected,) = result.rejected
    assert (rejected.source, rejected.row, rejected.reason) == (
        str(second),
        2,
        "no time in column 'time'",
    )


def test_empty_parquet_folder_is_an_input_error(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    with pytest.raises(InputError, match="holds no Parquet files"):
        read_events(tmp_path / "empty")


# ----------------------------------------------------------------------------- records


def test_from_records_follows_json_rules() -> None:
    records = [
        {"type": "A", "time": dt.datetime(2013, 2, 8, 9, 30), "ok": True, "n": 2**100},
        {"type": "A", "time": "2013-02-08", "price": "n/a"},
        {"type": "B", "time": 1.5, "price": Decimal("2.50")},
        ["not", "a", "mapping"],
    ]
    result = from_records(records, numeric={"A": {"price"}})  # type: ignore[arg-type]
    events = result.events
    assert events.types == ["A", "B"]
    assert events.times == [FEB8_0930, 1.5]
    assert events.rows == [1, 3]
    assert events.columns == {"ok": ["true", None], "n": [2**100, None], "price": [None, 2.5]}
    assert [(r.source, r.row, r.reason) for r in result.rejected] == [
        (
            "<records>",
            2,
            "attribute 'price' is 'n/a', not a number (the queries read it numerically)",
        ),
        ("<records>", 4, "record is an array, not an object"),
    ]


def test_rejected_row_is_frozen() -> None:
    row = RejectedRow("s", 1, "r", {})
    with pytest.raises(AttributeError):
        row.row = 2  # type: ignore[misc]


def test_exact_int_and_int_text_any_size() -> None:
    for value in (0, -1, 2**63, 10**4299, 10**4300, -(7**20000), 10**12345 + 1):
        text = int_text(value)
        assert exact_int(text) == value
        assert text.lstrip("-").isdigit() and not text.lstrip("-").startswith("0") or value == 0
    assert int_text(10**5000) == "1" + "0" * 5000


# ----------------------------------------------------------------------------- vectorised times


def iso_text(moment: dt.datetime, shape: int, zone: str) -> str:
    text = f"{moment.year:04d}-{moment.month:02d}-{moment.day:02d}"
    clock = [
        "",
        f"T{moment.hour:02d}:{moment.minute:02d}",
        f" {moment.hour:02d}:{moment.minute:02d}:{moment.second:02d}",
        f"T{moment.hour:02d}:{moment.minute:02d}:{moment.second:02d}.{moment.microsecond:06d}",
        f"T{moment.hour:02d}:{moment.minute:02d}:{moment.second:02d}.{moment.microsecond // 1000:03d}",
    ][shape]
    return text + clock + (zone if clock else "")


iso_shapes = st.builds(
    iso_text,
    st.datetimes(min_value=dt.datetime(1, 1, 2), max_value=dt.datetime(9999, 12, 30)),
    st.integers(min_value=0, max_value=4),
    st.sampled_from(["", "Z", "+02:00", "-01:30", "+0530", "-00:00"]),
)


@settings(max_examples=200, deadline=None)
@given(st.lists(iso_shapes, min_size=1, max_size=20))
def test_vectorised_iso_times_equal_python_parsing(texts: list[str]) -> None:
    vectorised = iso_column(texts)
    assert vectorised is not None
    expected = [time_value(text) for text in texts]
    assert vectorised == expected
    assert [type(v) for v in vectorised] == [type(v) for v in expected]


def test_iso_column_declines_shapes_it_cannot_match() -> None:
    assert iso_column(["2013-02-08T09:30:00.1234567Z"]) is None  # beyond microseconds
    assert iso_column(["0000-01-01"]) is None  # pyarrow accepts year 0, Python does not
    assert iso_column(["2013-02-30"]) is None
    assert iso_column(["2013-02-08", "soon"]) is None


def test_many_iso_times_with_one_bad_one(tmp_path: Path) -> None:
    lines = [f"A,2013-02-08T09:30:{i:02d}.5+01:00" for i in range(50)] + ["A,2013-02-30T00:00:00"]
    path = csv_file(tmp_path, "type,time\n" + "\n".join(lines) + "\n")
    result = read_events(path)
    assert result.events.times == [FEB8_0930 - 3600 + i + 0.5 for i in range(50)]
    (rejected,) = result.rejected
    assert rejected.row == 51 and "(day is out of range for month)" in rejected.reason


def test_unclosed_quote_is_an_input_error_not_one_giant_cell(tmp_path: Path) -> None:
    path = csv_file(tmp_path, 'type,time,x\nA,1,"two\nlines"\nA,2,"oops\nB,3,y\nC,4,z\n')
    with pytest.raises(InputError, match=r"quoted cell that starts on line 4 is never closed"):
        read_events(path)
    extra = csv_file(tmp_path, 'type,time,x\nA,1,"a\nb",extra\nA,2,"oops\nB,3,y\n', "e.csv")
    with pytest.raises(InputError, match="never closed"):
        read_events(extra)  # the row-by-row reader checks too


# ----------------------------------------------------------------------------- one type for every row


def test_csv_event_type_without_type_column(tmp_path: Path) -> None:
    path = csv_file(
        tmp_path,
        "date,open,close,volume,Name\n2013-02-08,45.07,45.08,1824755,A\n"
        "2013-02-11,,44.6,2915405,A\n",
    )
    result = read_events(path, event_type="Stock", time_col="date")
    events = result.events
    assert result.rejected == []
    assert events.types == ["Stock", "Stock"]
    assert events.times == [FEB8, FEB8 + 3 * 86400]
    assert events.columns == {
        "open": [45.07, None],
        "close": [45.08, 44.6],
        "volume": [1824755, 2915405],
        "Name": ["A", "A"],
    }


def test_csv_event_type_makes_the_type_column_an_attribute(tmp_path: Path) -> None:
    path = csv_file(tmp_path, "type,time,x\nA,1,2\n,2,3\n   ,3,4\n007,4,5\n")
    result = read_events(path, event_type="E")
    assert result.rejected == []  # blank 'type' cells are missing values, not missing types
    assert result.events.types == ["E"] * 4
    assert result.events.columns == {"type": ["A", None, None, 7], "x": [2, 3, 4, 5]}
    assert result.events.rows == [1, 2, 3, 4]


def test_csv_event_type_on_the_row_by_row_reader(tmp_path: Path) -> None:
    path = csv_file(tmp_path, "type,time,x\nA,1,2\n,2\nB,3,4,5\n007,4,5\n")
    result = read_events(path, event_type="E")
    slow = _read_csv_python(path, str(path), False, "type", "time", None, event_type="E")
    assert result == slow
    assert result.events.types == ["E"] * 3
    assert result.events.columns == {"type": ["A", None, 7], "x": [2, None, 5]}
    (rejected,) = result.rejected
    assert rejected.row == 3 and rejected.reason.startswith("row has 4 cells")


def test_csv_event_type_still_rejects_bad_times_and_needs_the_time_column(
    tmp_path: Path,
) -> None:
    path = csv_file(tmp_path, "date,v\n2013-02-08,1\nsoon,2\n,3\n")
    result = read_events(path, event_type="Stock", time_col="date")
    assert result.events.times == [FEB8]
    assert [(r.row, r.reason) for r in result.rejected] == [
        (2, "time 'soon' is neither a number nor an ISO-8601 timestamp"),
        (3, "no time in column 'date'"),
    ]
    assert result.rejected[0].record == {"date": "soon", "v": "2"}
    with pytest.raises(InputError) as info:
        read_events(path, event_type="Stock")
    assert str(info.value) == (
        f"time column 'time' not found in {path}; columns are [date, v]; pass --time-col"
    )


def test_event_type_ignores_type_col_even_when_it_names_the_time_column(
    tmp_path: Path,
) -> None:
    path = csv_file(tmp_path, "type,x\n5,1\n")
    result = read_events(path, event_type="E", time_col="type")
    assert result.events.types == ["E"] and result.events.times == [5]
    assert result.events.columns == {"x": [1]}


def test_event_type_with_numeric_requirement(tmp_path: Path) -> None:
    path = csv_file(tmp_path, "time,close\n1,12.5\n2,n/a\n3,\n")
    result = read_events(path, event_type="Stock", numeric={"Stock": {"close"}})
    assert result.events.times == [1, 3]
    assert [(r.row, r.reason) for r in result.rejected] == [
        (2, "attribute 'close' is 'n/a', not a number (the queries read it numerically)")
    ]
    other = read_events(path, event_type="Stock", numeric={"Other": {"close"}})
    assert other.rejected == [] and other.events.columns["close"] == [12.5, "n/a", None]


def test_jsonl_event_type_with_and_without_type_key(tmp_path: Path) -> None:
    path = jsonl_file(
        tmp_path,
        [
            '{"time": 1, "v": 2}',
            '{"type": null, "time": 2}',
            '{"type": 7, "time": 3, "v": "x"}',
            '{"type": "A", "time": 4}',
            "[1]",
        ],
    )
    result = read_events(path, event_type="E")
    events = result.events
    assert events.types == ["E"] * 4
    assert events.times == [1, 2, 3, 4]
    assert events.columns == {"v": [2, None, "x", None], "type": [None, None, 7, "A"]}
    assert [(r.row, r.reason) for r in result.rejected] == [(5, "line is an array, not an object")]
    without = jsonl_file(tmp_path, ['{"t": 1}', '{"t": "2013-02-08"}'], "no_type.jsonl")
    events = read_events(without, event_type="E", time_col="t").events
    assert events.types == ["E", "E"] and events.times == [1, FEB8]
    assert events.columns == {}


def test_parquet_event_type_with_and_without_type_column(tmp_path: Path) -> None:
    without = tmp_path / "prices.parquet"
    pq.write_table(
        pa.table(
            {
                "date": pa.array([dt.date(2013, 2, 8), dt.date(2013, 2, 11)], pa.date32()),
                "close": [45.08, 44.6],
                "Name": ["A", "A"],
            }
        ),
        without,
    )
    result = read_events(without, event_type="Stock", time_col="date")
    assert result.rejected == []
    assert result.events.types == ["Stock", "Stock"]
    assert result.events.times == [FEB8, FEB8 + 3 * 86400]
    assert result.events.columns == {"close": [45.08, 44.6], "Name": ["A", "A"]}
    with_type = tmp_path / "typed.parquet"
    pq.write_table(pa.table({"type": ["A", None], "time": [1, 2], "x": [True, False]}), with_type)
    result = read_events(with_type, event_type="E")
    assert result.rejected == []
    assert result.events.types == ["E", "E"]
    assert result.events.columns == {"type": ["A", None], "x": ["true", "false"]}


def test_parquet_folder_event_type(tmp_path: Path) -> None:
    folder = tmp_path / "dataset"
    (folder / "Name=A").mkdir(parents=True)
    (folder / "Name=B").mkdir()
    pq.write_table(pa.table({"time": [1, 2], "close": [1.5, 2.5]}), folder / "Name=A" / "p.parquet")
    pq.write_table(pa.table({"time": [3], "close": [3.5]}), folder / "Name=B" / "p.parquet")
    events = read_events(folder, event_type="Stock").events
    assert events.types == ["Stock"] * 3
    assert events.columns == {"close": [1.5, 2.5, 3.5], "Name": ["A", "A", "B"]}


def test_from_records_event_type_with_and_without_type_key() -> None:
    records: list[object] = [
        {"time": "2013-02-08", "close": 45.08, "Name": "A"},
        {"type": None, "time": 2, "Name": "B"},
        {"type": "T", "time": 3},
        ["not", "a", "mapping"],
    ]
    result = from_records(records, event_type="Stock")  # type: ignore[arg-type]
    events = result.events
    assert events.types == ["Stock"] * 3
    assert events.times == [FEB8, 2, 3]
    assert events.columns == {
        "close": [45.08, None, None],
        "Name": ["A", "B", None],
        "type": [None, None, "T"],
    }
    assert [(r.row, r.reason) for r in result.rejected] == [
        (4, "record is an array, not an object")
    ]
    only_times = from_records([{"ts": 1}], event_type="Tick", time_col="ts")
    assert only_times.events.types == ["Tick"] and only_times.events.columns == {}


def test_event_type_applies_to_empty_inputs(tmp_path: Path) -> None:
    assert len(read_events(csv_file(tmp_path, "time,x\n"), event_type="E").events) == 0
    assert len(from_records([], event_type="E").events) == 0


@pytest.mark.parametrize("blank", ["", "   "])
def test_empty_event_type_is_an_input_error(tmp_path: Path, blank: str) -> None:
    path = csv_file(tmp_path, "type,time\nA,1\n")
    expected = (
        f"the event type given for every row must be a non-empty name, not {blank!r}; "
        "pass one such as --event-type Stock, or leave it out to read types from a column"
    )
    with pytest.raises(InputError) as info:
        read_events(path, event_type=blank)
    assert str(info.value) == expected
    with pytest.raises(InputError) as info:
        read_events(tmp_path / "absent.csv", event_type=blank)  # checked before the file
    assert str(info.value) == expected
    with pytest.raises(InputError) as info:
        from_records([{"type": "A", "time": 1}], event_type=blank)
    assert str(info.value) == expected


def test_csv_without_header_takes_the_given_column_names(tmp_path: Path) -> None:
    path = csv_file(tmp_path, "A,1,5\nB,2,x\nA,3,7,extra\nA,4\n")
    result = read_events(path, columns=["type", "time", "v"])
    events = result.events
    # the first line is data; the long row is rejected, the short one has v missing
    assert events.types == ["A", "B", "A"] and events.times == [1, 2, 4]
    assert events.columns["v"] == [5, "x", None]
    (bad,) = result.rejected
    assert bad.row == 3 and "4 cells but the header has 3 columns" in bad.reason
    assert bad.record == {"type": "A", "time": "3", "v": "7", "_extra": ["extra"]}


def test_given_column_names_are_checked(tmp_path: Path) -> None:
    path = csv_file(tmp_path, "A,1\n")
    with pytest.raises(InputError, match="'t' appears twice"):
        read_events(path, columns=["t", "t"])
    with pytest.raises(InputError, match="give a name for every column"):
        read_events(path, columns=["type", ""])
    with pytest.raises(
        InputError, match=r"time column 'time' not found .* columns are \[type, ts\]"
    ):
        read_events(path, columns=["type", "ts"])
    with pytest.raises(InputError, match="CSV files without a header row"):
        read_events(jsonl_file(tmp_path, ['{"type": "A", "time": 1}']), columns=["type", "time"])
