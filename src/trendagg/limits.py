"""The sizes trendagg takes, in one place, with the reason for each.

Every engine and every reader applies the same limits, so that a time or a
window is either taken by all of them or refused by all of them with the same
reason (the README's "Limits" section lists them):

- ``TIME_LIMIT``: an event time is a number of seconds with ``|time| < 2**43``
  (about 278,000 years either side of 1970; epoch milliseconds read as seconds,
  about 1.7e12, still fit). Up to there a time in microseconds fits a 64-bit
  integer, as Spark's timestamps and a stream's watermark hold it, a float time
  is exact to the microsecond, and the window numbers of every window of a
  millisecond or longer fit the compiled engine's 64-bit integers. A row whose
  time is beyond it is rejected like a row without a time, on every engine, in
  batch and streaming (its reason says so): a time of ``1e300`` or a 30-digit
  integer is a broken cell, not an event.
- ``TIME_LIMIT`` again for WITHIN and SLIDE: no window is longer than the
  times it could hold.
- ``WINDOWS_PER_EVENT_LIMIT``: ``WITHIN / SLIDE`` (the number of windows each
  event falls into) is at most one million. ``WITHIN 1 day SLIDE 1 s``
  (86,400) is a query a person writes; ``WITHIN 1000 day SLIDE 1 ms``
  (86,400,000,000) would need that many registers per state and partition and
  is refused before any work, with the smallest SLIDE that would do.
- ``WINDOW_NUMBER_LIMIT``: window and pane numbers (time / SLIDE) are 64-bit
  integers in the compiled engine; a time whose window number is beyond
  ``2**61`` (only with slides below a microsecond and times far from 1970) stops
  the run with a message saying how to shift the times.
- ``memory_limit()``: the compiled engine's per-partition window state may
  take at most this many bytes (``TRENDAGG_MEMORY_LIMIT``, default three
  quarters of the machine's memory); a workload that needs more stops with a
  message naming what makes it large, instead of being killed by the system.
"""

from __future__ import annotations

import os
import re
from fractions import Fraction

TIME_LIMIT = 2**43
WINDOWS_PER_EVENT_LIMIT = 1_000_000
WINDOW_NUMBER_LIMIT = 2**61

_SIZE = re.compile(r"\s*(\d+(?:\.\d+)?)\s*([kmgt]?)i?b?\s*", re.IGNORECASE)
_UNITS = {"": 1, "k": 2**10, "m": 2**20, "g": 2**30, "t": 2**40}


def time_in_range(seconds: int | float | Fraction) -> bool:
    """Whether an event time is inside ``(-TIME_LIMIT, TIME_LIMIT)``."""
    return -TIME_LIMIT < seconds < TIME_LIMIT


def time_out_of_range(shown: str) -> str:
    """The reason of a row whose time (as shown) is beyond ``TIME_LIMIT``."""
    return f"time '{shown}' is out of range (times are seconds below 2**43 in magnitude)"


def memory_limit() -> int:
    """Bytes the compiled engine's window state may take (``TRENDAGG_MEMORY_LIMIT``:
    a number of bytes, or with a unit such as ``8G`` or ``512 MiB``)."""
    text = os.environ.get("TRENDAGG_MEMORY_LIMIT")
    if text:
        match = _SIZE.fullmatch(text)
        if match is None:
            from trendagg.errors import InputError

            raise InputError(
                f"TRENDAGG_MEMORY_LIMIT={text!r} is not a size; write bytes or a size such as "
                f"8G or 512M"
            )
        return int(float(match.group(1)) * _UNITS[match.group(2).lower()])
    try:
        total = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        return 8 * 2**30
    return total * 3 // 4


def gigabytes(size: int) -> str:
    """A byte count as a person reads it (``6.12 GiB``)."""
    return f"{size / 2**30:.2f} GiB" if size >= 2**27 else f"{size / 2**20:.1f} MiB"
