"""The error hierarchy: one root, one subclass per stage.

User-input errors also inherit the matching built-in so that callers who do
not know trendagg can still catch them (``except ValueError``).
"""

from __future__ import annotations


class TrendAggError(Exception):
    """Root of every error trendagg raises on purpose."""


class QuerySyntaxError(ValueError, TrendAggError):
    """The query text does not parse. The message names line and column."""


class QueryError(ValueError, TrendAggError):
    """The query parses but means nothing valid (unknown variable, misplaced NOT...)."""


class InputError(ValueError, TrendAggError):
    """An event file or a command-line argument cannot be used as given."""


class ArgumentError(TypeError, TrendAggError):
    """An API function was given a kind of value it does not take. The message names the
    argument, what it was given and what it accepts."""


def wrong_argument(name: str, given: object, accepted: str) -> ArgumentError:
    """The error of argument ``name`` given ``given``, which is not what it accepts
    (``accepted``, in words, with the way to the right thing where there is one)."""
    kind = type(given)
    what = "None" if given is None else f"{kind.__module__}.{kind.__qualname__}"
    what = what.removeprefix("builtins.")
    return ArgumentError(f"{name} must be {accepted}; it is {what}")


class ExecutionError(RuntimeError, TrendAggError):
    """A run had to stop (for example the two-step trend limit was reached)."""


def locate(text: str, line: int, column: int, length: int = 1) -> str:
    """Return ``Line L, Col C.`` and the source line with the span underlined.

    ``line`` and ``column`` are 1-based. ``length`` is clipped to the line.
    """
    lines = text.splitlines() or [""]
    src = lines[line - 1] if 0 < line <= len(lines) else ""
    width = max(1, min(length, max(1, len(src) - column + 1)))
    return f"Line {line}, Col {column}.\n  {src}\n  {' ' * (column - 1)}{'^' * width}"
