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
    pytest.importorskip("pyspark", reason="PySpark is not installed (pip install '.[spark]')")
    if shutil.which("java") is None and not os.environ.get("JAVA_HOME"):
        pytest.skip("no Java runtime: the Spark engine needs Java 17+")
    from trendagg.spark import spark_session

    session = spark_session(
        "local[2]",
        [("spark.sql.shuffle.partitions", "3"), ("spark.default.parallelism", "2")],
    )
    yield session
    session.stop()


def pytest_configure(config: pytest.Config) -> None:
    """Compile the two kernels at once, before the tests (and their workers) start.

    Left to the tests, the first test of each kind compiles its kernel, one after the
    other: minutes each on a fresh clone. Once cached this only loads them. Only for
    the whole suite (no paths given): a few test files compile what they use."""
    if os.environ.get("NUMBA_DISABLE_JIT") == "1" or hasattr(config, "workerinput"):
        return  # (the tests run as Python; or an xdist worker: the controller did it)
    if config.option.collectonly or config.args != list(config.getini("testpaths")):
        return
    from trendagg.kernels.warm import warm_kernels

    warm_kernels(quiet=True)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Under pytest-xdist (``make test`` runs two workers), the tests that use the
    shared SparkSession run in two groups, each on one worker with one JVM: the
    streaming tests of test_spark_stream.py (about half of the Spark tests' time) and
    the others. In one group they were the whole run's longest path."""
    for item in items:
        if "spark" in getattr(item, "fixturenames", ()):
            stream = item.path.name == "test_spark_stream.py"
            item.add_marker(pytest.mark.xdist_group("spark-stream" if stream else "spark"))
