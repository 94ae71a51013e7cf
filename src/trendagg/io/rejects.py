"""Write rejected rows out and summarise them, so that nothing is lost silently.

The rejects file is meant to be fixed and fed back: each entry keeps the raw
record next to its source, row number and reason.
"""

from __future__ import annotations

import csv
import json
import os
import re
from collections import Counter
from collections.abc import Iterable, Mapping
from typing import cast

from trendagg.io.batch import RejectedRow
from trendagg.io.formats import suffix_of
from trendagg.io.output import open_output
from trendagg.io.values import Written, cell_text, json_text

_FIXED = ("_source", "_row", "_reason")
_LISTED_REASONS = 5


def write_rejects(rejected: Iterable[RejectedRow], path: str | os.PathLike[str]) -> int:
    """Write rejected rows to a file and return how many were written.

    JSON Lines (one ``{"source", "row", "reason", "record"}`` object per row, the
    record of a JSON line as the line wrote it, see :class:`RejectedRow`)
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
                # (one reading for every source: the record's JSON, each number as written)
                cells = written_record(_record_text(entry))
                writer.writerow(
                    [
                        entry.source,
                        entry.row,
                        entry.reason,
                        *(cell_text(cells.get(key)) for key in keys),
                    ]
                )
        else:
            for entry in rejected:
                fixed = {"source": entry.source, "row": entry.row, "reason": entry.reason}
                head = json_text(fixed, ensure_ascii=False)[:-1]
                out.write(f'{head}, "record": {_record_text(entry)}}}\n')
    return len(rejected)


def _record_text(entry: RejectedRow) -> str:
    """The JSON text of a rejected row's record: its text as the input wrote it, or its
    values as read."""
    return record_json(entry.record) if entry.text is None else entry.text


def record_json(record: Mapping[str, object]) -> str:
    """A rejected row's record as the rejects file writes it: JSON with every value as
    read (non-finite floats as ``NaN``/``Infinity``, which Python's json reads back)."""
    return json_text(record, ensure_ascii=False, bare_nan=True)


def written_record(text: str) -> dict[str, object]:
    """The object of a JSON line with each number as the line writes it (a
    :class:`~trendagg.io.values.Written`): the cells of a rejected line in a CSV
    rejects file."""
    value = json.loads(text, parse_int=Written, parse_float=Written, parse_constant=Written)
    return cast(dict[str, object], value)


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
