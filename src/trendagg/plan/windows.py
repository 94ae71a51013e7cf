"""Sliding windows ``[k*slide, k*slide + within)`` with exact arithmetic.

Times are ints or floats (epoch seconds) and durations are Fractions, so the
window bounds of an event are computed exactly: an event at 0.3 with a 0.1 s
slide lands where a person would say, not where float division rounds it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction


def _exact(t: int | float | Fraction) -> int | Fraction:
    if isinstance(t, int):
        return t
    return Fraction(t)


def as_number(value: int | Fraction) -> int | float:
    """An exact window bound as an int when integral, else a float."""
    if isinstance(value, int) or value.denominator == 1:
        return int(value)
    return float(value)


@dataclass(frozen=True)
class WindowSpec:
    """``WITHIN within SLIDE slide``; both in seconds, exact."""

    within: Fraction
    slide: Fraction

    def __post_init__(self) -> None:
        if self.within <= 0 or self.slide <= 0:
            raise ValueError("window length and slide must be positive")

    @property
    def pane(self) -> Fraction:
        """Pane length: the gcd of WITHIN and SLIDE, so every window is a whole number of
        panes and panes are shared by overlapping windows (GRETA, Section 7; HAMLET 3.1)."""
        return pane_length([self.within, self.slide])

    def pane_of(self, t: int | float | Fraction) -> int:
        """The id p of the pane ``[p*pane, (p+1)*pane)`` that contains time t."""
        return math.floor(_exact(t) / self.pane)

    @property
    def integral(self) -> bool:
        return self.within.denominator == 1 and self.slide.denominator == 1

    def windows_of(self, t: int | float | Fraction) -> range:
        """The ids k of every window that contains time t (may be empty if slide > within)."""
        if isinstance(t, int) and self.integral:
            s = int(self.slide)
            w = int(self.within)
            return range((t - w) // s + 1, t // s + 1)
        x = _exact(t)
        return range(math.floor((x - self.within) / self.slide) + 1, math.floor(x / self.slide) + 1)

    def start(self, k: int) -> int | Fraction:
        if self.integral:  # (ints: a result row asks for its bounds)
            return k * self.slide.numerator
        value = k * self.slide
        return int(value) if value.denominator == 1 else value

    def end(self, k: int) -> int | Fraction:
        if self.integral:
            return k * self.slide.numerator + self.within.numerator
        value = k * self.slide + self.within
        return int(value) if value.denominator == 1 else value

    def closed_before(self, t: int | float | Fraction) -> int:
        """Every window k < the returned id has ended at or before time t (end <= t)."""
        if isinstance(t, int) and self.integral:
            return (t - int(self.within)) // int(self.slide) + 1
        x = _exact(t)
        # end(k) <= x  <=>  k <= (x - within) / slide
        return math.floor((x - self.within) / self.slide) + 1

    def last_end(self, t: int | float | Fraction) -> int | Fraction:
        """The end of the last window containing t: after it, an event at t is needed nowhere."""
        r = self.windows_of(t)
        return self.end(r.stop - 1) if len(r) else _exact(t)


def pane_length(durations: list[Fraction]) -> Fraction:
    """The gcd of positive exact durations (Fractions): the longest pane that divides them all."""
    numerator = 0
    denominator = 1
    for d in durations:
        denominator = denominator * d.denominator // math.gcd(denominator, d.denominator)
    for d in durations:
        numerator = math.gcd(numerator, int(d * denominator))
    return Fraction(numerator, denominator)
