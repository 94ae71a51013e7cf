"""Shared test helpers: run a workload text over records with a strategy."""

from __future__ import annotations

import os
from pathlib import Path

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
