"""Every example workload parses, compiles and runs on a small stream."""

from __future__ import annotations

from importlib.resources import files
from pathlib import Path

import pytest

from trendagg.language import parse
from trendagg.plan.compile import compile_workload

EXAMPLES = sorted((Path(__file__).resolve().parents[2] / "examples").glob("*.tq"))
PACKAGED = sorted(Path(str(files("trendagg") / "examples")).glob("*.tq"))


@pytest.mark.parametrize("path", EXAMPLES + PACKAGED, ids=lambda p: p.name)
def test_example_workloads_compile(path: Path) -> None:
    plans = compile_workload(parse(path.read_text()))
    assert plans and all(p.outputs for p in plans)


def test_sp500_example_on_prices(tmp_path: Path) -> None:
    from trendagg import run

    prices = tmp_path / "p.csv"
    prices.write_text(
        "date,close,Name\n2013-02-04,10,A\n2013-02-05,9,A\n2013-02-06,9.5,A\n2013-02-07,8,A\n2013-02-05,3,B\n"
    )
    rows = run(
        (EXAMPLES[0].parent / "sp500_downtrends.tq").read_text(),
        prices,
        event_type="Stock",
        time_col="date",
    )
    by = {(r.group["Name"], r.window_start): r.values["trends"] for r in rows}
    # A falls 10 -> 9 -> 8 and 9.5 -> 8: trends 10, 9, 9.5, 8, (10,9), (10,9.5), (10,8), (9,8), (9.5,8), (10,9,8), (10,9.5,8)
    assert by[("A", 1359936000)] == 11
    assert by[("B", 1359936000)] == 1
