"""Write query results as JSON Lines, CSV, Parquet or a terminal table.

Counts and sums are exact integers of any size (docs/semantics.md, "Aggregates");
the writers keep them exact: JSON and CSV print every digit, and Parquet uses
int64, then decimal128(38, 0), then text, whichever first holds every value
of a column -- never a wrapped or rounded number.
"""

from __future__ import annotations

import csv
import numbers
import os
from collections.abc import Callable, Iterable, Sequence
from decimal import Decimal, localcontext
from typing import TYPE_CHECKING, TextIO

from trendagg.errors import InputError
from trendagg.io.formats import result_format
from trendagg.io.output import open_output
from trendagg.io.results import ResultRow, making_rows
from trendagg.io.values import cell_text, int_text, json_text

if TYPE_CHECKING:
    import pyarrow as pa

_FIXED = ("query", "window_start", "window_end")
_INT64_MIN, _INT64_MAX = -(2**63), 2**63 - 1
_DECIMAL38_LIMIT = 10**38
_FLOAT_EXACT_LIMIT = 2**53
_CELL_WIDTH = 40


def write_results(
    rows: Iterable[ResultRow],
    path: str | os.PathLike[str] | None = None,
    fmt: str | None = None,
    *,
    stream: TextIO | None = None,
) -> int:
    """Write result rows and return how many were written.

    Parameters
    ----------
    rows
        The result rows, in the order they should appear.
    path
        Output file (``.gz`` compresses JSON Lines and CSV); None writes to
        ``stream`` or standard output.
    fmt
        ``'jsonl'``, ``'csv'`` or ``'parquet'``. None takes it from the
        extension of ``path``, else ``'jsonl'``.
    stream
        A text stream to write to instead of a file or standard output.

    Notes
    -----
    JSON Lines: one object per row with keys ``query``, ``window_start``,
    ``window_end``, ``group``, ``values`` in that order, ``json.dumps``
    separators, integers in full, ``Decimal`` as a bare number, None as null.
    CSV and Parquet: columns ``query, window_start, window_end``, then the
    group keys, then the value names (each in first-appearance order); a
    value name equal to an earlier column is prefixed ``values.``, a group
    key equal to a fixed column ``group.``.
    """
    kind = result_format(path, fmt)
    if kind == "jsonl":
        count = 0
        with open_output(path, stream) as out:
            for row in rows:
                out.write(result_json(row))
                out.write("\n")
                count += 1
        return count
    rows = list(rows)
    if kind == "csv":
        with open_output(path, stream) as out, making_rows():
            writer = csv.writer(out, lineterminator="\n")
            header, cells = table_cells(rows)
            writer.writerow(header)
            writer.writerows(list(map(cell_text, line)) for line in cells)
        return len(rows)
    if path is None:
        raise InputError("Parquet results need a file: pass an output path ending in .parquet")
    _write_parquet(rows, path)
    return len(rows)


def result_json(row: ResultRow) -> str:
    """One result row as its JSON Lines text (without the newline)."""
    return json_text(
        {
            "query": row.query,
            "window_start": row.window_start,
            "window_end": row.window_end,
            "group": row.group,
            "values": row.values,
        }
    )


def result_columns(rows: Sequence[ResultRow]) -> tuple[list[str], list[str], list[str]]:
    """Group keys, value names (first-appearance order) and the column header."""
    group_keys: dict[str, None] = {}
    value_names: dict[str, None] = {}
    seen: set[tuple[str, ...]] = set()
    for row in rows:
        names = (*row.group, "", *row.values)  # ("": no key or name is empty)
        if names not in seen:  # (rows of one query: one set of names)
            seen.add(names)
            group_keys.update(dict.fromkeys(row.group))
            value_names.update(dict.fromkeys(row.values))
    header = list(_FIXED)
    for key in group_keys:
        header.append(f"group.{key}" if key in header else key)
    for name in value_names:
        header.append(f"values.{name}" if name in header else name)
    return list(group_keys), list(value_names), header


def table_cells(rows: Sequence[ResultRow]) -> tuple[list[str], list[list[object]]]:
    """The header of :func:`result_columns` and each row's cells under it (None where a
    row lacks a group key or value)."""
    group_keys, value_names, header = result_columns(rows)
    cells = [
        [row.query, row.window_start, row.window_end]
        + list(map(row.group.get, group_keys))
        + list(map(row.values.get, value_names))
        for row in rows
    ]
    return header, cells


def _write_parquet(rows: Sequence[ResultRow], path: str | os.PathLike[str]) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    header, cells = table_cells(rows)
    arrays = [arrow_column([line[j] for line in cells]) for j in range(len(header))]
    table = pa.table(arrays, names=header)
    try:
        pq.write_table(table, os.fspath(path))
    except (OSError, pa.ArrowException) as error:
        raise InputError(f"cannot write Parquet results to '{os.fspath(path)}' ({error})") from None


def arrow_column(values: list[object]) -> pa.Array:
    """An Arrow array that holds every value exactly.

    Integers: int64 when all fit, else decimal128(38, 0) when all have at
    most 38 digits, else their exact digits as text. Floats: float64; with
    integers too, float64 only when every integer converts exactly. Decimals
    (with integers): decimal128(38, s) when they fit, else text. Booleans:
    bool. Text, and any mix of kinds: text (numbers printed exactly).
    """
    import pyarrow as pa

    kinds = {_kind(value) for value in values if value is not None}
    if not kinds:
        return pa.nulls(len(values))
    if kinds == {"int"}:
        ints = [None if value is None else _integer(value) for value in values]
        present = [value for value in ints if value is not None]
        if all(_INT64_MIN <= value <= _INT64_MAX for value in present):
            return pa.array(ints, pa.int64())
        if all(-_DECIMAL38_LIMIT < value < _DECIMAL38_LIMIT for value in present):
            return pa.array(
                [None if value is None else Decimal(value) for value in ints], pa.decimal128(38, 0)
            )
        return pa.array([None if value is None else int_text(value) for value in ints], pa.string())
    if kinds == {"float"}:
        return pa.array([None if value is None else _real(value) for value in values], pa.float64())
    if kinds == {"int", "float"} and all(
        isinstance(value, float) or abs(_integer(value)) <= _FLOAT_EXACT_LIMIT
        for value in values
        if value is not None
    ):
        return pa.array([None if value is None else _real(value) for value in values], pa.float64())
    if kinds <= {"int", "decimal"}:
        column = _decimal_column(values)
        if column is not None:
            return column
    if kinds == {"bool"}:
        return pa.array(values, pa.bool_())
    return pa.array([None if value is None else cell_text(value) for value in values], pa.string())


def _decimal_column(values: list[object]) -> pa.Array | None:
    import pyarrow as pa

    decimals = [
        None if value is None else value if isinstance(value, Decimal) else Decimal(_integer(value))
        for value in values
    ]
    present = [value for value in decimals if value is not None]
    if not all(value.is_finite() for value in present):
        return None
    scale = max((max(0, -int(value.as_tuple().exponent)) for value in present), default=0)
    if scale > 38:
        return None
    limit = Decimal(10) ** (38 - scale)
    if not all(abs(value) < limit for value in present):
        return None
    quantum = Decimal(1).scaleb(-scale)
    with localcontext(prec=38):  # up to 38 digits, beyond the default context's 28
        exact = [None if value is None else value.quantize(quantum) for value in decimals]
    return pa.array(exact, pa.decimal128(38, scale))


def _kind(value: object) -> str:
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, Decimal):
        return "decimal"
    if isinstance(value, numbers.Integral):
        return "int"
    if isinstance(value, numbers.Real):
        return "float"
    if isinstance(value, str):
        return "str"
    return "other"


def _integer(value: object) -> int:
    if isinstance(value, numbers.Integral):
        return int(value)
    raise TypeError(f"expected an integer, got {value!r}")


def _real(value: object) -> float:
    if isinstance(value, numbers.Real):
        return float(value)
    raise TypeError(f"expected a number, got {value!r}")


def format_table(
    rows: Iterable[ResultRow],
    max_rows: int = 50,
    show_time: Callable[[int | float], str] | None = None,
    window_header: str = "window",
) -> str:
    """Results as a plain aligned text table for terminals.

    Columns: query, window ``[start, end)`` (headed ``window_header``: the demo's rows
    of a group over all its windows span them), the group keys, the value names.
    Numbers are right-aligned; None shows as ``null``; integers longer than
    the cell width show their first and last digits and their digit count
    (``12676506002...205376 (61 digits)``), never a rounded value. At most
    ``max_rows`` rows are shown, with a line saying how many were left out.
    ``show_time`` writes the window bounds (default: the numbers as they are).
    """
    rows = list(rows)
    if not rows:
        return "(no results)"
    shown_rows = rows[: max(0, max_rows)]
    when = show_time or cell_text
    group_keys, value_names, header = result_columns(rows)
    header = ["query", window_header, *header[len(_FIXED) :]]
    body: list[list[str]] = []
    numeric = [False, False] + [True] * (len(header) - 2)
    for row in shown_rows:
        line = [row.query, f"[{when(row.window_start)}, {when(row.window_end)})"]
        for j, value in enumerate(
            [
                *(row.group.get(key, "") for key in group_keys),
                *(row.values.get(name, "") for name in value_names),
            ],
            start=2,
        ):
            is_number = isinstance(value, int | float | Decimal) and not isinstance(value, bool)
            if not is_number and value is not None and value != "":
                numeric[j] = False
            line.append(_display(value))
        body.append(line)
    widths = [max(len(line[j]) for line in [header, *body]) for j in range(len(header))]
    text_lines = [
        "  ".join(
            (cell.rjust(width) if numeric[j] else cell.ljust(width))
            for j, (cell, width) in enumerate(zip(line, widths, strict=True))
        ).rstrip()
        for line in [header, ["-" * width for width in widths], *body]
    ]
    hidden = len(rows) - len(shown_rows)
    if hidden:
        text_lines.append(f"... {hidden} more row{'s' if hidden != 1 else ''} ({len(rows)} in all)")
    return "\n".join(text_lines)


def _display(value: object) -> str:
    if value is None:
        return "null"
    text = cell_text(value)
    if len(text) <= _CELL_WIDTH:
        return text
    if isinstance(value, int) and not isinstance(value, bool):
        digits = len(text.lstrip("-"))
        return f"{text[:12]}...{text[-6:]} ({digits} digits)"
    return text[: _CELL_WIDTH - 3] + "..."
