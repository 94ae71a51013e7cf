"""Window and pane numbers of times on arrays (kernels.times) equal the exact ones of
plan.windows, one Fraction per time, for ints, floats with fractions and any window."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from trendagg.kernels.times import pane_ids, ticks, units, window_ids
from trendagg.plan.windows import WindowSpec

_LENGTHS = st.builds(
    Fraction, st.integers(1, 10**6), st.sampled_from([1, 2, 3, 4, 10, 60, 1000, 1024, 7 * 10**6])
)
_FLOATS = st.floats(-(2.0**40), 2.0**40, allow_nan=False, allow_infinity=False)
_TIMES = st.one_of(
    st.lists(st.integers(-(2**40), 2**40), max_size=40).map(lambda v: np.array(v, np.int64)),
    st.lists(_FLOATS, max_size=40).map(lambda v: np.array(v, np.float64)),
    st.lists(st.integers(-(10**12), 10**12), max_size=40).map(  # epoch times in ms
        lambda v: np.array(v, np.float64) / 1000 + 1.7e9
    ),
)


def _floor(t: float | int, unit: Fraction) -> int:
    return math.floor(Fraction(t) / unit)


@given(_TIMES, _LENGTHS)
def test_units_are_the_exact_floor(times: np.ndarray, unit: Fraction) -> None:
    got = units(ticks(times), unit)
    expected = [_floor(t, unit) for t in times.tolist()]
    if got is not None:
        assert got.tolist() == expected
    assert pane_ids(ticks(times), unit).tolist() == expected


@given(_TIMES, _LENGTHS, _LENGTHS)
def test_window_ids_are_the_exact_windows(
    times: np.ndarray, within: Fraction, slide: Fraction
) -> None:
    spec = WindowSpec(within, slide)
    lo, hi = window_ids(ticks(times), spec)
    ranges = [spec.windows_of(t) for t in times.tolist()]
    assert lo.tolist() == [r.start for r in ranges]
    assert hi.tolist() == [r.stop for r in ranges]


@pytest.mark.parametrize(
    ("times", "unit"),
    [
        (np.arange(1_700_000_000_000, 1_700_000_100_000, 7) / 1000, Fraction(60)),  # ms, 1 min
        (np.arange(1_700_000_000_000, 1_700_000_100_000, 7) / 1000, Fraction(1, 2)),
        (np.arange(1_700_000_000_000, 1_700_000_100_000, 7) / 1000, Fraction(1, 1000)),
        (np.arange(0, 10**6, 3) / 10, Fraction(1, 3)),  # tenths of a second, thirds
        (np.arange(-(10**6), 10**6, 13, dtype=np.int64), Fraction(7, 2)),
    ],
)
def test_the_usual_times_take_array_arithmetic(times: np.ndarray, unit: Fraction) -> None:
    """Epoch seconds with milliseconds and the usual window lengths never fall back to
    a Fraction per time (the fallback would give the same numbers, slowly)."""
    got = units(ticks(times), unit)
    assert got is not None
    sample = np.random.default_rng(0).choice(len(times), 500)
    assert got[sample].tolist() == [_floor(t, unit) for t in times[sample].tolist()]


def test_an_event_at_a_window_bound_opens_that_window() -> None:
    """0.3 as a float is a little below 3/10: with a 0.1 s slide it lies in window 2 of
    ``[k/10, k/10 + 1/5)``, as the exact number says, not in window 3."""
    spec = WindowSpec(Fraction(1, 5), Fraction(1, 10))
    lo, hi = window_ids(ticks(np.array([0.3, 0.5, 1.0])), spec)
    assert (lo.tolist(), hi.tolist()) == ([1, 4, 9], [3, 6, 11])
    assert [spec.windows_of(t) for t in (0.3, 0.5, 1.0)] == [range(1, 3), range(4, 6), range(9, 11)]
