"""One row of query results, as every strategy and writer exchanges it."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class ResultRow:
    """The aggregates of one (query, group, window) (SEMANTICS.md, "Windows").

    Attributes
    ----------
    query
        Query name.
    window_start, window_end
        The window ``[window_start, window_end)`` in epoch seconds.
    group
        GROUP-BY attribute name -> value of the group (empty without GROUP-BY).
    values
        Output column name (alias, or item text without blanks such as
        ``COUNT(*)``) -> ``int`` (exact at any size), ``float``,
        ``decimal.Decimal`` or ``None`` (for example AVG of nothing).
    """

    query: str
    window_start: int | float
    window_end: int | float
    group: dict[str, object] = field(default_factory=dict)
    values: dict[str, object] = field(default_factory=dict)
