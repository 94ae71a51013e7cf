"""Shared test helpers: run a workload text over records with a strategy."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, settings

settings.register_profile(
    "ci", max_examples=500, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True
)
settings.register_profile(
    "dev", max_examples=100, deadline=None, suppress_health_check=list(HealthCheck)
)
settings.register_profile(
    "thorough", max_examples=5000, deadline=None, suppress_health_check=list(HealthCheck)
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))

SHARED_DATA = Path(__file__).resolve().parents[2] / "shared" / "data"


@pytest.fixture
def shared_data() -> Path:
    """../shared/data, or skip: real data is never copied into the repository."""
    if not SHARED_DATA.is_dir():
        pytest.skip(
            f"real event data not found at {SHARED_DATA} (only present on the team's machines)"
        )
    return SHARED_DATA


@pytest.fixture(scope="session")
def spark() -> Iterator[Any]:
    """One SparkSession for every Spark test: local[2], UI off, 3 shuffle partitions."""
    pytest.importorskip(
        "pyspark", reason="PySpark is not installed (pip install 'trendagg[spark]')"
    )
    if shutil.which("java") is None and not os.environ.get("JAVA_HOME"):
        pytest.skip("no Java runtime: the Spark engine needs Java 17+")
    from trendagg.spark import spark_session

    session = spark_session(
        "local[2]",
        [("spark.sql.shuffle.partitions", "3"), ("spark.default.parallelism", "2")],
    )
    yield session
    session.stop()
