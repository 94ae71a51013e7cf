"""Value conversions shared by the readers and writers.

Every format ends up in the same small set of Python values -- ``int`` (exact,
any size), finite ``float``, ``str`` and ``None`` for missing -- so that the
engine sees one value model whatever the source (see docs/semantics.md, "Events").
The writers go the other way and print integers exactly at any size.

CPython refuses ``int <-> str`` conversions of more than 4300 digits by default
(``sys.set_int_max_str_digits``); trend counts grow exponentially and easily go
past that, so :func:`exact_int` and :func:`int_text` split long numbers instead
of relying on the global limit.
"""

from __future__ import annotations

import json
import math
import numbers
import re
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, date, datetime, time
from decimal import Decimal
from fractions import Fraction

from trendagg.limits import time_in_range, time_out_of_range

# Integer and number literals: for pyarrow (RE2), and compiled for Python (used with fullmatch).
INT_PATTERN = r"^[+-]?[0-9]+$"
NUMBER_PATTERN = r"^[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?$"
INT_RE, NUMBER_RE = re.compile(INT_PATTERN), re.compile(NUMBER_PATTERN)

_SAFE_BITS = 13000  # 13000 bits is about 3913 decimal digits
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
# Seconds with a fraction, in extended (09:30:00.25) or basic (093000.25) form.
_SECONDS_FRACTION = re.compile(r"(\d\d:?\d\d:?\d\d)[.,](\d+)")
_NONFINITE_WORDS = frozenset(
    {"nan", "+nan", "-nan", "inf", "+inf", "-inf", "infinity", "+infinity", "-infinity"}
)
_SHOWN_CHARS = 40


@dataclass(frozen=True)
class Written:
    """A number of a JSON line as the line writes it (``NaN``, ``1e309``, ``2.50``): what a
    rejected row's record holds, so that the rejects file gives it back as it came, where
    a Python number would not (``1e309`` is ``inf``; ``2.50`` is ``2.5``). Printed bare
    by :func:`json_text`, as its text by :func:`cell_text`."""

    text: str


def exact_int(text: str) -> int:
    """Parse an integer literal of any length exactly.

    ``int()`` is used when it can; literals longer than the interpreter's digit
    limit are split in halves and recombined, which is exact.
    """
    try:
        return int(text)
    except ValueError:
        digits = text.strip()
        if not INT_RE.fullmatch(digits):
            raise
    if digits[0] in "+-":
        return -exact_int(digits[1:]) if digits[0] == "-" else exact_int(digits[1:])
    half = len(digits) // 2
    scale: int = 10**half
    return exact_int(digits[:-half]) * scale + exact_int(digits[-half:])


_SMALL = 10**18  # ints whose digits int.__repr__ always gives


def int_text(value: int) -> str:
    """Return the exact decimal digits of an integer of any size (below the interpreter's
    digit limit, by halves recombined above it)."""
    value = int(value)
    if value.bit_length() <= _SAFE_BITS:
        return int.__repr__(value)
    if value < 0:
        return "-" + int_text(-value)
    half = int(value.bit_length() * 0.30103) // 2
    high, low = divmod(value, 10**half)
    return int_text(high) + int_text(low).rjust(half, "0")


def parse_cell(text: str | None) -> object:
    """Convert one CSV cell: missing, exact int, finite float or stripped string.

    ``nan``/``inf`` and overflowing literals (``1e999``) are not numbers: they
    stay strings, so that a query reading them numerically rejects the row
    instead of poisoning a sum.
    """
    if text is None:
        return None
    stripped = text.strip()
    if not stripped:
        return None
    if INT_RE.fullmatch(stripped):
        return exact_int(stripped)
    if NUMBER_RE.fullmatch(stripped):
        number = float(stripped)
        if math.isfinite(number):
            return number
    return stripped


def normalize_value(value: object) -> object:
    """Bring a value from JSON, Parquet or Python records into the value model.

    Booleans become ``'true'``/``'false'`` (the query language has no booleans,
    and the strings compare equal across formats); nested objects and arrays
    become their compact JSON text; non-finite floats become the strings
    ``'nan'``, ``'inf'``, ``'-inf'``; decimals become ``int`` when integral,
    else ``float``; dates and datetimes become epoch seconds (naive means UTC).
    """
    kind = type(value)
    if value is None or kind is str or kind is int:
        return value
    if isinstance(value, float) and kind is float:
        return value if math.isfinite(value) else repr(value)
    if kind is bool:
        return "true" if value else "false"
    if isinstance(value, Mapping | list | tuple):
        return json_text(value, compact=True, ensure_ascii=False)
    if isinstance(value, Decimal):  # an exact int when integral, else the nearest float
        if not value.is_finite():
            return str(value).lower()
        if value == value.to_integral_value():
            return int(value)
        number = float(value)
        return number if math.isfinite(number) else str(value)
    if isinstance(value, datetime | date):
        return epoch_seconds(value)
    if isinstance(value, time):
        return value.isoformat()
    if isinstance(value, str):
        return str(value)
    if isinstance(value, bytes | bytearray | memoryview):
        return bytes(value).decode("utf-8", "backslashreplace")
    if kind.__module__ == "numpy" and kind.__name__ in ("bool_", "bool"):
        return "true" if value else "false"
    if isinstance(value, numbers.Integral):
        return int(value)
    if isinstance(value, numbers.Real):
        return normalize_value(float(value))
    return str(value)


def epoch_seconds(moment: datetime | date) -> int | float:
    """Seconds since 1970-01-01 UTC; naive datetimes and dates are UTC.

    Returns an ``int`` when there is no fraction of a second, else the nearest float
    (an attribute's value; a time keeps its fraction exactly, :func:`time_value`).
    """
    seconds = _exact_epoch_seconds(moment)
    return seconds if type(seconds) is int else float(seconds)


def _exact_epoch_seconds(moment: datetime | date) -> int | Fraction:
    """Seconds since 1970-01-01 UTC, exactly: a pandas ``Timestamp``'s nanoseconds too."""
    if not isinstance(moment, datetime):
        moment = datetime(moment.year, moment.month, moment.day)
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    delta = moment - _EPOCH
    whole = delta.days * 86400 + delta.seconds
    nanos = delta.microseconds * 1000 + int(getattr(moment, "nanosecond", 0))
    return whole if nanos == 0 else whole + Fraction(nanos, 10**9)


def shown(value: object) -> str:
    """A value of the input as quoted in messages: its text, cut to a readable length.

    Every message that quotes input text (a cell, a key, a column name, a time) goes
    through here, so that a 1 MB name makes a one-line message: beyond
    ``_SHOWN_CHARS`` characters the text is its first ones, ``...`` and its length
    (``1234567890123456789012345678901234567890... (6,000 characters)``).
    """
    text = value if isinstance(value, str) else cell_text(value)
    if len(text) > _SHOWN_CHARS:
        text = f"{text[:_SHOWN_CHARS]}... ({len(text):,} characters)"
    return text


def time_value(value: object) -> int | float | Fraction:
    """Convert a time cell to epoch seconds, or raise ``ValueError(reason)``.

    Numbers are epoch seconds as they are; numeric text too. Other text must
    be an ISO-8601 date or timestamp: naive means UTC, an offset is honoured,
    and a fraction of a second is kept exactly, as a ``Fraction`` (``datetime``
    alone would truncate it to microseconds, a float round it to about 0.24 us);
    so are those of ``datetime`` objects and pandas ``Timestamp``s.
    """
    seconds = _time_seconds(value)
    if not time_in_range(seconds):
        raise ValueError(time_out_of_range(shown(seconds)))
    return seconds


def _time_seconds(value: object) -> int | float | Fraction:
    if isinstance(value, int) and not isinstance(value, bool):
        return int(value)
    if isinstance(value, datetime | date):
        return _exact_epoch_seconds(value)
    if isinstance(value, Fraction):
        return value if value.denominator != 1 else int(value)
    if isinstance(value, float):
        if math.isfinite(value):
            return float(value)
        raise ValueError(f"time '{shown(value)}' is not a finite number")
    if value is None:
        raise ValueError("no time")
    if not isinstance(value, str):
        value = normalize_value(value)
        if not isinstance(value, str):
            return _time_seconds(value)
    text = value.strip()
    number = parse_cell(text)
    if type(number) is int or type(number) is float:
        return number
    if NUMBER_RE.fullmatch(text) or text.lower() in _NONFINITE_WORDS:
        raise ValueError(f"time '{shown(text)}' is not a finite number")
    return _iso_seconds(text)


def _iso_seconds(text: str) -> int | Fraction:
    fraction = Fraction(0)
    match = _SECONDS_FRACTION.search(text)
    plain = text
    if match:
        digits = match.group(2)
        fraction = Fraction(int(digits), 10 ** len(digits))
        plain = text[: match.end(1)] + text[match.end() :]
    try:
        moment = datetime.fromisoformat(plain)
    except ValueError as error:
        detail = str(error)
        hint = "" if detail.startswith("Invalid isoformat") else f" ({detail})"
        raise ValueError(
            f"time '{shown(text)}' is neither a number nor an ISO-8601 timestamp{hint}"
        ) from None
    seconds = _exact_epoch_seconds(moment)
    return seconds if fraction == 0 else seconds + fraction


def time_text(t: object) -> str:
    """A time as a person reads it: an int or float as Python prints it, a fraction of a
    second (a timestamp's, exactly) in decimals (``1700000001.123456789``)."""
    if not isinstance(t, Fraction):
        return str(t)
    whole, part = divmod(t, 1)
    for digits in (3, 6, 9):
        if (part * 10**digits).denominator == 1:
            return f"{whole}.{int(part * 10**digits):0{digits}d}"
    return str(float(t))


def type_text(value: object) -> str | None:
    """The event type as a string, or None when it is missing or blank."""
    if value is None:
        return None
    if isinstance(value, str):
        return value if value.strip() else None
    value = normalize_value(value)
    return None if value is None else str(value) or None


def cell_text(value: object) -> str:
    """A value as CSV/table text: ints exact, floats by repr, None empty."""
    kind = type(value)  # (the common kinds first, by type: a result has many cells)
    if kind is str:
        return value  # type: ignore[return-value]
    if kind is int:
        return int.__repr__(value) if -_SMALL < value < _SMALL else int_text(value)  # type: ignore[operator, arg-type]
    if kind is float:
        return float.__repr__(value)  # type: ignore[arg-type]
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return int_text(value)
    if isinstance(value, float):
        return repr(value)
    if isinstance(value, Decimal):
        return str(value)
    if isinstance(value, Mapping | list | tuple):
        return json_text(value, compact=True, ensure_ascii=False)
    if isinstance(value, Written):
        return value.text
    if isinstance(value, bytes | bytearray | memoryview):
        return bytes(value).decode("utf-8", "backslashreplace")  # (as normalize_value reads it)
    return str(value)


def json_text(
    value: object, *, compact: bool = False, ensure_ascii: bool = True, bare_nan: bool = False
) -> str:
    """``json.dumps`` that never loses a number.

    The layout is ``json.dumps``'s (default or compact separators). Integers
    of any size print in full, ``Decimal`` prints as a bare number (its
    ``str``), a :class:`Written` number as its text, non-finite numbers as the
    strings ``"nan"``, ``"inf"``, ``"-inf"`` (JSON has no literal for them), or with
    ``bare_nan`` as ``NaN``, ``Infinity``, ``-Infinity`` (Python's json reads them back
    as the floats they were: the rejects file's records), bytes as their UTF-8 text,
    other objects as their ``str``. The C encoder is tried first; the Python one only
    handles what it refuses.
    """
    separators = (",", ":") if compact else (", ", ": ")
    try:
        return json.dumps(
            value, separators=separators, ensure_ascii=ensure_ascii, allow_nan=bare_nan
        )
    except (TypeError, ValueError):
        return _encode(value, separators, ensure_ascii, bare_nan)


def _encode(value: object, separators: tuple[str, str], ascii_only: bool, bare_nan: bool) -> str:
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=ascii_only)
    if isinstance(value, int):
        return int_text(value)
    if isinstance(value, float):
        if math.isfinite(value) or bare_nan:
            return json.dumps(value)  # (NaN, Infinity, -Infinity when not finite)
        return json.dumps(repr(value))
    if isinstance(value, Decimal):
        return str(value) if value.is_finite() else json.dumps(str(value).lower())
    if isinstance(value, Written):
        return value.text
    item_sep, key_sep = separators
    if isinstance(value, Mapping):
        items = (
            json.dumps(cell_text(key), ensure_ascii=ascii_only)
            + key_sep
            + _encode(item, separators, ascii_only, bare_nan)
            for key, item in value.items()
        )
        return "{" + item_sep.join(items) + "}"
    if isinstance(value, list | tuple):
        inner = (_encode(item, separators, ascii_only, bare_nan) for item in value)
        return "[" + item_sep.join(inner) + "]"
    if isinstance(value, datetime | date | time):
        return json.dumps(value.isoformat(), ensure_ascii=ascii_only)
    if isinstance(value, numbers.Integral):
        return int_text(int(value))
    if isinstance(value, numbers.Real):
        return _encode(float(value), separators, ascii_only, bare_nan)
    return json.dumps(cell_text(value), ensure_ascii=ascii_only)
