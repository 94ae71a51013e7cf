"""Window and pane numbers of event times: exact, and integer arithmetic on arrays.

A time is the number it is (docs/semantics.md, "Windows"): an int, or a float taken as
its exact binary fraction, never rounded to a decimal. Window ``k`` of ``WITHIN w
SLIDE s`` is ``[k*s, k*s + w)``; the windows that hold ``t`` are those from
``floor((t - w) / s) + 1`` to ``floor(t / s)``. With ``p`` a common divisor of ``w``
and ``s`` (the spec's pane) and ``u = floor(t / p)``, they are ``(u - w/p) // (s/p) + 1``
to ``u // (s/p)``, since ``floor((x - n) / m) == floor((floor(x) - n) / m)`` for
integers ``n`` and ``m > 0``. So one exact step per time, ``u``, and the rest is
integer arithmetic.

``u = floor(t / (a/b))`` is computed on arrays: for ints as ``t*b // a``, and for ticks
``T`` of ``1/p`` s (timestamps with fractions of a second, see
:class:`~trendagg.io.batch.EventBatch`) as ``T*b // (a*p)``; for a float
``t = I + F / 2**E`` (``I`` its integer part, ``F`` a whole number, ``E`` the fewest
binary places that make the fractions of a chunk's times whole: 22 for epoch seconds
with milliseconds; the split is made once per chunk, :func:`ticks`) as
``(I*b + (F*b >> E)) // a``. Only where a product could pass
62 bits is it done in Python, one step per distinct time, with ``Fraction``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from trendagg.io.batch import tick_time
from trendagg.plan.windows import WindowSpec

_SAFE = 2**62  # int64 products stay below this (and so never wrap)


@dataclass(frozen=True)
class Ticks:
    """A chunk's times, split once for all its window specs and panes: ``t = (whole +
    part / 2**places) / per_second`` (int64 arrays; ``part`` None for int times,
    ``per_second`` 1 for floats), ``biggest`` the largest ``|whole|``; ``whole`` None
    where no such split exists (a time not finite or beyond 2**62, a fraction finer than
    2**-62)."""

    times: np.ndarray
    whole: np.ndarray | None
    part: np.ndarray | None = None
    places: int = 0
    biggest: int = 0
    per_second: int = 1
    exact: list[int | float | Fraction] | None = None  # (EventBatch.exact_times)

    def values(self) -> list[int | float | Fraction]:
        """The times as exact numbers of seconds, for the steps made time by time."""
        if self.exact is not None:
            return self.exact
        if self.per_second == 1:
            seconds: list[int | float | Fraction] = self.times.tolist()
            return seconds
        return [tick_time(x, self.per_second) for x in self.times.tolist()]


def ticks(
    times: np.ndarray, per_second: int = 1, exact: list[int | float | Fraction] | None = None
) -> Ticks:
    """The split of :class:`Ticks` of a chunk's times (int64 ticks of ``1/per_second``
    s, or float64 seconds; ``exact``: the exact times where the floats are not)."""
    if exact is not None:
        return Ticks(times, None, exact=exact)
    if not len(times):
        return Ticks(times, np.zeros(0, dtype=np.int64), per_second=per_second)
    if times.dtype.kind == "i":
        return Ticks(times, times, biggest=int(np.max(np.abs(times))), per_second=per_second)
    if not np.all(np.isfinite(times)) or float(np.max(np.abs(times))) >= _SAFE:
        return Ticks(times, None)
    whole = np.trunc(times)
    fraction = times - whole  # exact: the bits of t below its units place
    places = _binary_places(fraction)
    if places is None:
        return Ticks(times, None)
    part = np.ldexp(fraction, places).astype(np.int64)  # exact: whole by the choice of places
    ints = whole.astype(np.int64)
    return Ticks(times, ints, part, places, int(np.max(np.abs(ints))))


def window_ids(t: Ticks, spec: WindowSpec) -> tuple[np.ndarray, np.ndarray]:
    """First and one-past-last id of the windows of ``spec`` that hold each time."""
    if t.times.dtype.kind == "i" and spec.integral:
        w, s = int(spec.within) * t.per_second, int(spec.slide) * t.per_second
        if t.biggest + w < _SAFE:  # (always for seconds: limits.TIME_LIMIT)
            return (t.times - w) // s + 1, t.times // s + 1
    pane = spec.pane
    u = units(t, pane)
    if u is None:
        return _exact_window_ids(t, spec)
    n_w, n_s = int(spec.within / pane), int(spec.slide / pane)
    return (u - n_w) // n_s + 1, u // n_s + 1


def pane_ids(t: Ticks, pane: Fraction) -> np.ndarray:
    """``floor(t / pane)`` of each time, exact."""
    u = units(t, pane)
    if u is not None:
        return u
    return np.array([math.floor(Fraction(x) / pane) for x in t.values()], dtype=np.int64)


def units(t: Ticks, unit: Fraction) -> np.ndarray | None:
    """``floor(t / unit)`` of each time as int64 arrays, or None where int64 arithmetic
    could overflow (the caller then goes time by time)."""
    a, b = unit.numerator * t.per_second, unit.denominator
    if t.whole is None or t.biggest * b + b >= _SAFE or b << t.places >= _SAFE or a >= _SAFE:
        return None
    scaled = t.whole * b if b != 1 else t.whole
    if t.part is not None:
        # t*b = I*b + F*b / 2**E with I = trunc(t), F = (t - I) * 2**E whole, |F| < 2**E;
        # floor((I*b + F*b / 2**E) / a) == floor((I*b + floor(F*b / 2**E)) / a), and >> floors
        scaled = scaled + (t.part * b >> t.places)
    result: np.ndarray = scaled // a
    return result


def _binary_places(fractions: np.ndarray) -> int | None:
    """The fewest binary places ``E`` for which every value (in (-1, 1)) times ``2**E``
    is whole, or None beyond 62."""
    fractions = fractions[fractions != 0]
    if not fractions.size:
        return 0
    mantissa, exponent = np.frexp(fractions)  # f = m * 2**x, 0.5 <= |m| < 1
    digits = np.abs(np.ldexp(mantissa, 53)).astype(np.int64)  # |f| = digits * 2**(x - 53)
    lowest = digits & -digits  # the lowest set bit: 2**(trailing zeros)
    zeros = np.log2(lowest.astype(np.float64)).astype(np.int64)  # exact for powers of two
    places = int(np.max(53 - exponent.astype(np.int64) - zeros))
    return places if places <= 62 else None


def _exact_window_ids(t: Ticks, spec: WindowSpec) -> tuple[np.ndarray, np.ndarray]:
    lo = np.empty(len(t.times), dtype=np.int64)
    hi = np.empty(len(t.times), dtype=np.int64)
    for i, x in enumerate(t.values()):
        r = spec.windows_of(x)
        lo[i], hi[i] = r.start, r.stop
    return lo, hi
