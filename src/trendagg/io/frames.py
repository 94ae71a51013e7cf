"""Tables in memory as events: a pyarrow Table, a pandas DataFrame, a polars DataFrame.

Their columns are the attributes, read by their types as the columns of a Parquet file
are (:func:`~trendagg.io.assemble.assemble_table`): the same values from a DataFrame as
from the same data passed as records. A pandas DataFrame goes to Arrow by
``pyarrow.Table.from_pandas`` (its index left out, NaN and None missing); one whose
object columns Arrow cannot hold (numbers and words in one column) is read as records,
with pandas' missing values missing. A polars DataFrame goes to Arrow by its
``to_arrow()`` (a LazyFrame is collected first), so a ``Datetime`` time column of any
unit and zone keeps its exact times as an Arrow timestamp does. Neither pandas nor
polars is imported here: a frame is told by its class.
"""

from __future__ import annotations

from typing import Any

from trendagg.io.assemble import assemble_table, from_mappings
from trendagg.io.batch import ReadResult
from trendagg.io.options import ReadOptions

# What frame_kind tells by its class: (package, class name) -> kind
_FRAMES = {
    ("pyarrow", "Table"): "arrow",
    ("pandas", "DataFrame"): "pandas",
    ("polars", "DataFrame"): "polars",
    ("polars", "LazyFrame"): "polars",
}
# Packages whose other objects (a Series, a RecordBatch, a LazyFrame's plan...) are no
# events, although some iterate: read as records, they would be rejected row by row
FRAME_PACKAGES = ("pyarrow", "pandas", "polars")


def frame_kind(value: object) -> str | None:
    """``'arrow'`` for a pyarrow Table, ``'pandas'`` for a pandas DataFrame, ``'polars'``
    for a polars DataFrame or LazyFrame (or a subclass of any), else None."""
    for kind in type(value).__mro__:
        package = kind.__module__.partition(".")[0]
        found = _FRAMES.get((package, kind.__name__))
        if found is not None:
            return found
    return None


def frame_package(value: object) -> str | None:
    """The package of :data:`FRAME_PACKAGES` that ``value``'s class comes from, or None."""
    package = type(value).__module__.partition(".")[0]
    return package if package in FRAME_PACKAGES else None


def from_frame(frame: Any, options: ReadOptions) -> ReadResult:
    """The events and rejected rows (numbered from 1) of a pyarrow Table, a pandas
    DataFrame or a polars DataFrame or LazyFrame (see the module docstring)."""
    import pyarrow as pa

    kind = frame_kind(frame)
    if kind == "arrow":
        return assemble_table(frame, options, source="<Table>", csv=False)
    if kind == "polars":
        if not hasattr(frame, "to_arrow"):  # a LazyFrame
            frame = frame.collect()
        return assemble_table(frame.to_arrow(), options, source="<DataFrame>", csv=False)
    frame = frame.rename(columns=str)
    try:
        table = pa.Table.from_pandas(frame, preserve_index=False)
    except (pa.ArrowInvalid, pa.ArrowTypeError, pa.ArrowNotImplementedError):
        present = frame.astype(object).where(frame.notna(), None)
        rows = enumerate(present.to_dict("records"), start=1)
        return from_mappings(rows, options, source="<DataFrame>", what="row")
    return assemble_table(table, options, source="<DataFrame>", csv=False)
