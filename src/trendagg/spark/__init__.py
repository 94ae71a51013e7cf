"""The Spark pipeline: adapters only. Spark reads, partitions, orders, keeps state and
writes; the trendagg engine (greta, hamlet, twostep) computes, one Runner per Spark
partition in batch and per key in Structured Streaming.

Imports nothing heavy: pyspark is imported when a function is called.
"""

from __future__ import annotations

from typing import Any

__all__ = ["aggregate_trends", "spark_session", "stream_trends", "trend_aggregation"]


def aggregate_trends(df: Any, workload: Any, **options: Any) -> Any:
    """Trend aggregates of a workload over an event DataFrame (see :mod:`trendagg.spark.batch`)."""
    from trendagg.spark.batch import aggregate_trends as run

    return run(df, workload, **options)


def trend_aggregation(df: Any, workload: Any, **options: Any) -> tuple[Any, Any]:
    """Results and rejected rows of a workload over an event DataFrame."""
    from trendagg.spark.batch import trend_aggregation as run

    return run(df, workload, **options)


def stream_trends(source: Any, workload: Any, **options: Any) -> tuple[Any, Any]:
    """Start a Structured Streaming query of trend aggregates (see :mod:`trendagg.spark.stream`);
    returns the StreamingQuery and its counters."""
    from trendagg.spark.stream import stream_trends as start

    return start(source, workload, **options)


def spark_session(master: str | None = None, conf: Any = ()) -> Any:
    """The active SparkSession, or an embedded local one (UI off)."""
    from trendagg.spark.session import spark_session as make

    return make(master, conf)
