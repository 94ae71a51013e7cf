"""Golden files: messy query text (``golden/*.tq``) -> canonical printout (``golden/*.out``).

A change of the printer or of the parser shows up as a diff of a readable
file. Regenerate the ``.out`` files after an intended change with
``TRENDAGG_REGEN_GOLDEN=1 pytest tests/language/test_language_golden.py`` and review
the diff.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from trendagg.language import parse, to_text

GOLDEN = Path(__file__).resolve().parents[1] / "golden"
CASES = sorted(GOLDEN.glob("*.tq"))
REGEN = os.environ.get("TRENDAGG_REGEN_GOLDEN") == "1"


def test_there_are_enough_golden_files() -> None:
    assert len(CASES) >= 12


@pytest.mark.parametrize("case", CASES, ids=[case.stem for case in CASES])
def test_golden_printout(case: Path) -> None:
    workload = parse(case.read_text(encoding="utf-8"))
    printed = to_text(workload)
    expected_file = case.with_suffix(".out")
    if REGEN:
        expected_file.write_text(printed, encoding="utf-8")
    assert expected_file.exists(), f"missing {expected_file.name}; run with TRENDAGG_REGEN_GOLDEN=1"
    assert printed == expected_file.read_text(encoding="utf-8")


@pytest.mark.parametrize("case", CASES, ids=[case.stem for case in CASES])
def test_golden_round_trip(case: Path) -> None:
    workload = parse(case.read_text(encoding="utf-8"))
    printed = to_text(workload)
    again = parse(printed)
    assert again == workload
    assert to_text(again) == printed
    # the printout is canonical: each query prints alone exactly as inside the workload
    assert printed == "\n\n".join(to_text(query) for query in again) + "\n"
