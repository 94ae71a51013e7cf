"""Tables in memory as events: a pyarrow Table, or a pandas DataFrame.

Their columns are the attributes, read by their types as the columns of a Parquet file
are (:func:`~trendagg.io.assemble.assemble_table`): the same values from a DataFrame as
from the same data passed as records. A pandas DataFrame goes to Arrow by
``pyarrow.Table.from_pandas`` (its index left out, NaN and None missing); one whose
object columns Arrow cannot hold (numbers and words in one column) is read as records,
with pandas' missing values missing. pandas is never imported here: a DataFrame is told
by its class.
"""

from __future__ import annotations

from typing import Any

from trendagg.io.assemble import assemble_table, from_mappings
from trendagg.io.batch import ReadResult
from trendagg.io.options import ReadOptions


def frame_kind(value: object) -> str | None:
    """``'arrow'`` for a pyarrow Table, ``'pandas'`` for a pandas DataFrame (or a subclass
    of either), else None."""
    for kind in type(value).__mro__:
        package = kind.__module__.partition(".")[0]
        if package == "pyarrow" and kind.__name__ == "Table":
            return "arrow"
        if package == "pandas" and kind.__name__ == "DataFrame":
            return "pandas"
    return None


def from_frame(frame: Any, options: ReadOptions) -> ReadResult:
    """The events and rejected rows (numbered from 1) of a pyarrow Table or a pandas
    DataFrame (see the module docstring)."""
    import pyarrow as pa

    if frame_kind(frame) == "arrow":
        return assemble_table(frame, options, source="<Table>", csv=False)
    frame = frame.rename(columns=str)
    try:
        table = pa.Table.from_pandas(frame, preserve_index=False)
    except (pa.ArrowInvalid, pa.ArrowTypeError, pa.ArrowNotImplementedError):
        present = frame.astype(object).where(frame.notna(), None)
        rows = enumerate(present.to_dict("records"), start=1)
        return from_mappings(rows, options, source="<DataFrame>", what="row")
    return assemble_table(table, options, source="<DataFrame>", csv=False)
