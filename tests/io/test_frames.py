"""DataFrames in and out: ``trendagg.run`` over pandas, polars and pyarrow tables gives
the rows of a CSV of the same events (issue #39, item 6)."""

from __future__ import annotations

import pyarrow as pa
import pytest

import trendagg

pd = pytest.importorskip("pandas")

T0 = 1_709_287_200  # 2024-03-01T10:00:00Z


def test_pandas_nanosecond_timestamps_read_as_records_stay_exact() -> None:
    """A column of numbers and words sends a pandas frame through its records; their
    Timestamps keep the nanosecond (as floats, T-50 ns and T+50 ns were one time)."""
    bound = T0 * 10**9
    frame = pd.DataFrame(
        {
            "type": ["A", "B", "A", "B"],
            "time": pd.to_datetime([bound - 50, bound + 50, bound + 100, bound + 150]),
            "p": [5, "n/a", 1.5, None],  # (no Arrow type holds it)
        }
    )
    with pytest.raises(pa.ArrowException):
        pa.Table.from_pandas(frame)
    rows = trendagg.run("RETURN COUNT(*) PATTERN SEQ(A, B+) WITHIN 1 s", frame)
    assert [(r.window_start, r.values) for r in rows] == [(T0, {"COUNT(*)": 1})]
