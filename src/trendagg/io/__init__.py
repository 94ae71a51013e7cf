"""Events in, results out: readers, writers and rejected rows.

``read_events`` reads CSV, JSON Lines and Parquet into an :class:`EventBatch`
(plus every rejected row), ``from_records`` Python mappings; ``write_results`` writes :class:`ResultRow` objects
as JSON Lines, CSV or Parquet with integers exact at any size. pyarrow is
imported only when a file is read or written, so importing this package is
cheap.
"""

from __future__ import annotations

from trendagg.io.assemble import from_records
from trendagg.io.batch import EventBatch, ReadResult, RejectedRow
from trendagg.io.readers import read_events
from trendagg.io.rejects import summarize_rejects, write_rejects
from trendagg.io.results import ResultRow
from trendagg.io.writers import format_table, write_results

__all__ = [
    "EventBatch",
    "ReadResult",
    "RejectedRow",
    "ResultRow",
    "format_table",
    "from_records",
    "read_events",
    "summarize_rejects",
    "write_rejects",
    "write_results",
]
