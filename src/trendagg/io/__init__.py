"""Events in, results out: readers, writers and rejected rows.

``read_events`` reads CSV, JSON Lines and Parquet into an :class:`EventBatch` of
numpy arrays (plus every rejected row), ``iter_events`` in chunks, ``from_records``
Python mappings; ``write_results`` writes :class:`ResultRow` objects as JSON Lines,
CSV or Parquet with integers exact at any size, and :class:`Results` (what
``trendagg.run`` returns) converts them to a pyarrow Table or a pandas DataFrame in the
same layout. The readers (and pyarrow) are imported when first used.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

from trendagg.io.batch import EventBatch, ReadResult, RejectedRow
from trendagg.io.rejects import summarize_rejects, write_rejects
from trendagg.io.results import ResultRow
from trendagg.io.tables import Results
from trendagg.io.writers import format_table, write_results

if TYPE_CHECKING:
    from trendagg.io.assemble import from_records
    from trendagg.io.readers import iter_events, read_events

_READERS = {
    "read_events": "trendagg.io.readers",
    "iter_events": "trendagg.io.readers",
    "from_records": "trendagg.io.assemble",
}


def __getattr__(name: str) -> object:
    if name not in _READERS:
        raise AttributeError(f"module 'trendagg.io' has no attribute {name!r}")
    return getattr(importlib.import_module(_READERS[name]), name)


__all__ = [
    "EventBatch",
    "ReadResult",
    "RejectedRow",
    "ResultRow",
    "Results",
    "format_table",
    "from_records",
    "iter_events",
    "read_events",
    "summarize_rejects",
    "write_rejects",
    "write_results",
]
