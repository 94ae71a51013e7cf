"""Golden files of the plan stage: ``trendagg check`` of each language golden workload.

``golden/*.tq`` (the language's golden inputs) -> ``golden/check/*.out``: the
canonical text of each query and its compiled template (states, transitions,
predicates, partitions, aggregates, window). A change of the compiler shows up
as a readable diff; regenerate after an intended change with
``TRENDAGG_REGEN_GOLDEN=1 pytest tests/plan/test_plan_golden.py`` and review it.
"""

from __future__ import annotations

import io
import os
from pathlib import Path

import pytest

from trendagg.cli import main

GOLDEN = Path(__file__).resolve().parents[1] / "golden"
CASES = sorted(GOLDEN.glob("*.tq"))
REGEN = os.environ.get("TRENDAGG_REGEN_GOLDEN") == "1"


@pytest.mark.parametrize("case", CASES, ids=[case.stem for case in CASES])
def test_check_golden(case: Path) -> None:
    out, err = io.StringIO(), io.StringIO()
    assert main(["check", str(case)], out, err) == 0, err.getvalue()
    expected = GOLDEN / "check" / f"{case.stem}.out"
    if REGEN:
        expected.write_text(out.getvalue(), encoding="utf-8")
    assert expected.exists(), f"missing {expected.name}; run with TRENDAGG_REGEN_GOLDEN=1"
    assert out.getvalue() == expected.read_text(encoding="utf-8")
    assert "template:" in out.getvalue()  # templates were printed, not only the query text
