"""Results as tables in memory: :class:`Results`, the rows of a run, to Arrow and pandas.

One layout, that of the CSV and Parquet writers (:mod:`trendagg.io.writers`): the
columns ``query, window_start, window_end``, then the group keys, then the value names
(each in first-appearance order, a name equal to an earlier column prefixed ``group.``
or ``values.``), one row per result row. Each column gets the Arrow type the Parquet
writer gives it (:func:`~trendagg.io.writers.arrow_column`): integers int64, else
decimal128(38, 0), else their digits as text, so a COUNT beyond int64 is never wrapped
or rounded. The window bounds alone differ: where every event's time was a timestamp
(ISO-8601 text, a ``datetime``, an Arrow, pandas or polars timestamp), they are
timestamps too, exact, in the zone of a typed time column (naive otherwise, meaning
UTC, as the readers read naive times).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from fractions import Fraction
from typing import TYPE_CHECKING, Any

from trendagg.extras import require
from trendagg.io.batch import Stamps
from trendagg.io.results import ResultRow
from trendagg.io.writers import arrow_column, table_cells

if TYPE_CHECKING:
    import pyarrow as pa

Window = tuple[Fraction, Fraction]  # (slide, within) of a query's windows, in seconds
# Arrow's time units, coarsest first, with their ticks per second
_UNITS = (("s", 1), ("ms", 10**3), ("us", 10**6), ("ns", 10**9))
_INT64 = 2**63


class Results(list[ResultRow]):
    """The rows of a run (one :class:`~trendagg.io.results.ResultRow` per query, group
    and window, in workload order), as :func:`trendagg.run` returns them: a list, that
    also converts to a table with :meth:`to_arrow` and :meth:`to_pandas`.

    Parameters
    ----------
    rows
        The result rows.
    stamps
        What the events' times were written as (:class:`~trendagg.io.batch.Stamps`):
        with ``stamps.dated`` the window bounds convert to timestamps, else (None too)
        to the numbers of seconds they are.
    windows
        Query name -> ``(slide, within)`` in seconds, from which the timestamps of a
        row's window (``window_start = window * slide``) are computed exactly; without
        it, from the bounds (a bound that is not a whole number of seconds is a float,
        which may miss its decimal value by some nanoseconds).
    """

    def __init__(
        self,
        rows: Iterable[ResultRow] = (),
        *,
        stamps: Stamps | None = None,
        windows: Mapping[str, Window] | None = None,
    ) -> None:
        super().__init__(rows)
        self.stamps = stamps
        self.windows = dict(windows or {})

    def to_arrow(self) -> pa.Table:
        """The rows as a pyarrow Table, in the layout of :mod:`trendagg.io.tables`.

        Columns ``query`` (string), ``window_start`` and ``window_end``, the group keys,
        the value names. The window bounds are timestamps when the events' times were
        (unit: the coarsest of s, ms, us, ns that holds every bound exactly, else ns
        rounded to the nearest; zone: that of the time column, None for naive times and
        ISO-8601 text); else the seconds as the Parquet writer writes them (int64, or
        float64 where one has a fraction). Every other column as the Parquet writer
        types it: integers int64, else decimal128(38, 0), else their digits as text;
        floats float64; decimals decimal128(38, scale); text string; a missing group key
        or value is null. Writing this table to Parquet (``pyarrow.parquet.write_table``)
        gives the file ``write_results(rows, "out.parquet")`` writes, but for the
        window bounds' type.
        """
        return results_table(self, self.stamps, self.windows)

    def to_pandas(self) -> Any:
        """The rows as a pandas DataFrame: the columns of :meth:`to_arrow`, converted as
        pyarrow converts them (timestamps to ``datetime64`` of their unit and zone, text
        to objects), with two exceptions that keep every integer exact: an int64 column
        with missing values becomes pandas' nullable ``Int64`` (not float64), and a
        column of integers beyond int64 (decimal128 or text in Arrow) holds Python ints
        (dtype object). pandas is imported here, not before."""
        return results_frame(self, self.stamps, self.windows)


def results_table(
    rows: list[ResultRow],
    stamps: Stamps | None = None,
    windows: Mapping[str, Window] | None = None,
) -> pa.Table:
    """The table of :meth:`Results.to_arrow`."""
    import pyarrow as pa

    header, arrays, _ = _columns(rows, stamps, windows)
    return pa.table(arrays, names=header)


def results_frame(
    rows: list[ResultRow],
    stamps: Stamps | None = None,
    windows: Mapping[str, Window] | None = None,
) -> Any:
    """The DataFrame of :meth:`Results.to_pandas`."""
    pd = require("pandas", "to_pandas()", "or use to_arrow()")
    import pyarrow as pa

    header, arrays, big = _columns(rows, stamps, windows)
    data: dict[str, Any] = {}
    for name, array, values in zip(header, arrays, big, strict=True):
        if values is not None:  # integers beyond int64: Python ints
            data[name] = pd.Series(values, dtype=object)
        elif pa.types.is_int64(array.type) and array.null_count:
            data[name] = pd.Series(array.to_pylist(), dtype="Int64")
        else:
            data[name] = array.to_pandas()
    return pd.DataFrame(data, columns=header)


def _columns(
    rows: list[ResultRow], stamps: Stamps | None, windows: Mapping[str, Window] | None
) -> tuple[list[str], list[pa.Array], list[list[object] | None]]:
    """The header, the Arrow arrays under it, and per column the Python ints of a column
    of integers that int64 does not hold (else None)."""
    import pyarrow as pa

    header, cells = table_cells(rows)
    arrays: list[pa.Array] = [pa.array([row.query for row in rows], pa.string())]
    if stamps is not None and stamps.dated:
        arrays += _timestamps(rows, stamps.zone, windows or {})
    else:
        for j in (1, 2):
            bounds = [line[j] for line in cells]
            arrays.append(arrow_column(bounds) if bounds else pa.array([], pa.int64()))
    big: list[list[object] | None] = [None, None, None]
    for j in range(3, len(header)):
        values = [line[j] for line in cells]
        array = arrow_column(values)
        arrays.append(array)
        wide = not pa.types.is_int64(array.type) and _integers(values)
        big.append(values if wide else None)
    return header, arrays, big


def _integers(values: list[object]) -> bool:
    """Whether every present value is an integer (a bool is not), and one is."""
    present = [value for value in values if value is not None]
    return bool(present) and all(
        isinstance(value, int) and not isinstance(value, bool) for value in present
    )


def _timestamps(
    rows: list[ResultRow], zone: str | None, windows: Mapping[str, Window]
) -> list[pa.Array]:
    """The window bounds as timestamps: exact, in the coarsest unit that holds them all
    (see :meth:`Results.to_arrow`)."""
    import pyarrow as pa

    starts: list[Fraction] = []
    ends: list[Fraction] = []
    for row in rows:
        window = windows.get(row.query)
        if window is not None and row.window is not None:
            slide, within = window
            starts.append(row.window * slide)
            ends.append(row.window * slide + within)
        else:
            starts.append(Fraction(row.window_start))
            ends.append(Fraction(row.window_end))
    unit, per_second = _unit([*starts, *ends])
    kind = pa.timestamp(unit, zone)
    return [pa.array([round(t * per_second) for t in bounds], kind) for bounds in (starts, ends)]


def _unit(bounds: list[Fraction]) -> tuple[str, int]:
    """The coarsest Arrow time unit in which every bound is a whole number of ticks that
    int64 holds; else the finest that holds them (ns, or us far from 1970), rounded."""
    for unit, per_second in _UNITS:
        ticks = [t * per_second for t in bounds]
        if all(tick.denominator == 1 and abs(tick) < _INT64 for tick in ticks):
            return unit, per_second
    for unit, per_second in reversed(_UNITS):
        if all(abs(round(t * per_second)) < _INT64 for t in bounds):
            return unit, per_second
    return "s", 1  # (unreachable: every time is below 2**43 seconds)


__all__ = ["Results", "Window", "results_frame", "results_table"]
