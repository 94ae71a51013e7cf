"""Spark batch's routing: events go to buckets by their key values as the engine reads them,
and each bucket's label sends its rows to the Spark partition of that bucket."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from trendagg.io.batch import Column, EventBatch, column_of
from trendagg.spark.batch import bucket_labels, buckets, spark_hash_ints, spark_hash_long
from trendagg.spark.stream import key_labels

KEYS = st.one_of(
    st.integers(-(2**60), 2**60),
    st.sampled_from([0, 1, -1, 2**53, 2**53 + 1, 7]),
    st.text(max_size=4),
)


def _batch(columns: dict[str, Column]) -> EventBatch:
    n = len(next(iter(columns.values())).valid)
    return EventBatch(np.zeros(n, np.int32), ["A"], np.arange(n, dtype=np.int64), columns)


@settings(max_examples=200, deadline=None)
@given(st.lists(KEYS, min_size=1, max_size=12), st.integers(1, 9))
def test_a_key_goes_to_one_bucket_whatever_the_column_holds_beside_it(
    keys: list[object], n: int
) -> None:
    """The same value gets the same bucket in a column of its kind and in a mixed one (a
    batch of one task may read a column as int, another task's as mixed), and an integer
    its float's bucket (the engine's 1 and 1.0 meet)."""
    alone = [buckets(_batch({"k": column_of([k])}), ["k"], np.arange(1), n)[0] for k in keys]
    together = buckets(_batch({"k": column_of(list(keys))}), ["k"], np.arange(len(keys)), n)
    assert list(together) == alone
    for k, b in zip(keys, alone, strict=True):
        if isinstance(k, int) and abs(k) <= 2**53:
            as_float = buckets(_batch({"k": column_of([float(k)])}), ["k"], np.arange(1), n)[0]
            assert as_float == b
            as_decimal = buckets(
                _batch({"k": column_of([Decimal(k), "x"])}), ["k"], np.arange(1), n
            )
            assert as_decimal[0] == b
    assert all(0 <= b < n for b in alone)


def test_keys_spread_over_the_buckets() -> None:
    """1,000 drivers in 4 buckets: each gets a quarter, give or take a tenth."""
    drivers = np.arange(1000, dtype=np.int64)
    got = buckets(_batch({"d": Column("int", drivers, np.ones(1000, bool))}), ["d"], drivers, 4)
    counts = np.bincount(got, minlength=4)
    assert counts.min() >= 225 and counts.max() <= 275, counts


def test_two_key_attributes_are_one_key() -> None:
    a = Column("int", np.array([1, 1, 2, 2]), np.ones(4, bool))
    b = column_of(["x", "y", "x", "x"])
    got = buckets(_batch({"a": a, "b": b}), ["a", "b"], np.arange(4), 1_000_003)
    assert got[2] == got[3] and len({got[0], got[1], got[2]}) == 3


@pytest.mark.spark
def test_labels_send_each_bucket_to_its_own_spark_partition(spark: Any) -> None:
    from pyspark.sql import functions as F

    ids = [-3, -1, 0, 1, 2, 7, 2**31, 2**40 + 5, 2**62, -(2**63), 2**63 - 1]
    df = spark.createDataFrame([(i,) for i in ids], "id long")
    assert [r["h"] for r in df.select(F.hash("id").alias("h")).collect()] == [
        spark_hash_long(i) for i in ids
    ]
    for n in (1, 2, 3, 8):
        labels = bucket_labels(n)
        rows = spark.createDataFrame(
            [(b, label) for b, label in enumerate(labels)], "b int, l long"
        )
        placed = rows.repartition(n, "l").select("b", F.spark_partition_id().alias("p"))
        assert sorted((r["b"], r["p"]) for r in placed.collect()) == [(b, b) for b in range(n)]


def test_stream_keys_are_distinct_and_spread_over_the_partitions() -> None:
    """Each group's buckets get distinct keys, and bucket b of group g lands in partition
    (g * buckets + b) mod partitions: as many keys per partition, give or take one."""
    for groups, n, parts in [(1, 2, 2), (3, 2, 2), (2, 4, 3), (5, 1, 4), (1, 8, 8)]:
        labels = key_labels(groups, n, parts)
        assert [len(set(row)) for row in labels] == [n] * groups
        placed = [spark_hash_ints(g, k) % parts for g, row in enumerate(labels) for k in row]
        assert placed == [(g * n + b) % parts for g in range(groups) for b in range(n)]
        load = [placed.count(p) for p in range(parts)]
        assert max(load) - min(load) <= 1, (groups, n, parts, load)


@pytest.mark.spark
def test_stream_keys_land_in_the_partitions_spark_gives_them(spark: Any) -> None:
    """Spark's own hash of two int columns agrees with spark_hash_ints, and grouping the
    stream's way puts each labelled bucket in the partition key_labels chose for it."""
    from pyspark.sql import functions as F

    pairs = [(g, k) for g in (-1, 0, 1, 2, 7, 2**31 - 1, -(2**31)) for k in (0, 1, 5, 99)]
    df = spark.createDataFrame(pairs, "g int, k int")
    got = [r["h"] for r in df.select(F.hash("g", "k").alias("h")).collect()]
    assert got == [spark_hash_ints(g, k) for g, k in pairs]
    labels = key_labels(3, 2, 4)
    rows = [(g, k, g * 2 + b) for g, row in enumerate(labels) for b, k in enumerate(row)]
    keyed = spark.createDataFrame(rows, "g int, k int, slot int").repartition(4, "g", "k")
    placed = keyed.select("slot", F.spark_partition_id().alias("p")).collect()
    assert sorted((r["slot"], r["p"]) for r in placed) == [(s, s % 4) for s in range(6)]


@pytest.mark.spark
def test_a_rejected_row_shows_every_column_also_those_no_query_reads(spark: Any) -> None:
    """Spark sends the engine only the columns the queries read; a rejected row's record
    is completed from the input, as the local readers show every cell."""
    import json

    from trendagg.spark import trend_aggregation

    df = spark.createDataFrame(
        [("A", 1, "n1", 10.5), ("A", None, "n2", 11.5), ("A", 3, "n3", 12.5)],
        "type string, time long, note string, price double",
    )
    results, rejects = trend_aggregation(df, "RETURN COUNT(*) PATTERN A+ WITHIN 10 s")
    (bad,) = rejects.collect()
    assert bad["reason"] == "no time in column 'time'"
    assert json.loads(bad["record"]) == {"type": "A", "time": None, "note": "n2", "price": 11.5}
    assert [r["COUNT(*)"] for r in results.collect()] == [3]
