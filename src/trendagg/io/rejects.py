"""Write rejected rows out and summarise them, so that nothing is lost silently.

The rejects file is meant to be fixed and fed back: each entry keeps the raw
record next to its source, row number and reason.
"""

from __future__ import annotations

import csv
import os
import re
from collections import Counter
from collections.abc import Iterable

from trendagg.io.batch import RejectedRow
from trendagg.io.formats import suffix_of
from trendagg.io.output import open_output
from trendagg.io.values import cell_text, json_text

_FIXED = ("_source", "_row", "_reason")
_LISTED_REASONS = 5


def write_rejects(rejected: Iterable[RejectedRow], path: str | os.PathLike[str]) -> int:
    """Write rejected rows to a file and return how many were written.

    JSON Lines (one ``{"source", "row", "reason", "record"}`` object per row)
    unless the path ends with ``.csv`` (or ``.csv.gz``): then CSV with columns
    ``_source, _row, _reason`` followed by the union of the record keys in
    first-appearance order, nested values as compact JSON text, absent values
    as empty cells. A ``.gz`` path is compressed.
    """
    rejected = list(rejected)
    with open_output(path) as out:
        if suffix_of(path) == ".csv":
            keys: dict[str, None] = {}
            for entry in rejected:
                keys.update(dict.fromkeys(entry.record))
            writer = csv.writer(out, lineterminator="\n")
            writer.writerow([*_FIXED, *keys])
            for entry in rejected:
                writer.writerow(
                    [
                        entry.source,
                        entry.row,
                        entry.reason,
                        *(cell_text(entry.record.get(key)) for key in keys),
                    ]
                )
        else:
            for entry in rejected:
                line = {
                    "source": entry.source,
                    "row": entry.row,
                    "reason": entry.reason,
                    "record": entry.record,
                }
                out.write(json_text(line, ensure_ascii=False))
                out.write("\n")
    return len(rejected)


def summarize_rejects(rejected: Iterable[RejectedRow]) -> str:
    """Count rejected rows per kind of reason, most frequent first.

    For example ``3 rows rejected: 2 x no time in column 'time' (first:
    events.csv row 4), 1 x ...``. Reasons that differ only in the values they
    quote or count (``time 'noon' ...``, ``time 'dusk' ...``) are one kind, shown
    by its first reason. At most five kinds are listed; the rest are counted
    together. Returns ``'no rows rejected'`` when there are none.
    """
    rejected = list(rejected)
    if not rejected:
        return "no rows rejected"
    counts: Counter[str] = Counter()
    first: dict[str, RejectedRow] = {}
    for entry in rejected:
        kind = _kind(entry.reason)
        counts[kind] += 1
        first.setdefault(kind, entry)
    ranked = sorted(counts, key=lambda kind: -counts[kind])  # stable: first seen first
    parts = [
        f"{counts[kind]} x {first[kind].reason} (first: {first[kind].source} row {first[kind].row})"
        for kind in ranked[:_LISTED_REASONS]
    ]
    rest = ranked[_LISTED_REASONS:]
    if rest:
        others = sum(counts[kind] for kind in rest)
        parts.append(f"{others} more for {len(rest)} other reason{'s' if len(rest) > 1 else ''}")
    total = len(rejected)
    return f"{total} row{'s' if total != 1 else ''} rejected: " + ", ".join(parts)


_QUOTED = re.compile(r"'[^']*'|\b0x[0-9a-fA-F]+\b|\b\d+(?:\.\d+)?\b")


def _kind(reason: str) -> str:
    """A reason without the values it quotes or counts."""
    return _QUOTED.sub("_", reason)
