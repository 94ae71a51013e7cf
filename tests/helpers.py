"""Run workloads over in-memory records, and compare result rows."""

from __future__ import annotations

import csv
import gzip
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from trendagg.engine import run_strategy
from trendagg.io import from_records
from trendagg.language import ast, parse
from trendagg.plan.compile import compile_query, compile_workload


def run_text(
    text: str, records: Iterable[Mapping[str, object]], strategy: str = "greta"
) -> list[Any]:
    plans = compile_workload(parse(text))
    read = from_records(list(records))
    assert not read.rejected, read.rejected
    return run_strategy(plans, read.events, strategy)


def run_queries(
    queries: list[ast.Query], records: Iterable[Mapping[str, object]], strategy: str, **kw: Any
) -> list[Any]:
    plans = [compile_query(q) for q in queries]
    read = from_records(list(records))
    return run_strategy(plans, read.events, strategy, **kw)


def canon(rows: Iterable[Any]) -> list[tuple[Any, ...]]:
    """Rows as sortable tuples, order-independent."""
    return sorted(
        (
            r.query,
            r.window_start,
            r.window_end,
            repr(sorted(r.group.items())),
            repr(sorted(r.values.items())),
        )
        for r in rows
    )


def values_of(rows: list[Any], query: str | None = None) -> list[dict[str, object]]:
    return [r.values for r in rows if query is None or r.query == query]


def stream(spec: str, **attrs: dict[str, object]) -> list[dict[str, object]]:
    """'a1 b2 c2' -> events of type A at 1, B at 2, C at 2; attrs maps 'a1' -> {...}."""
    out = []
    for token in spec.split():
        event: dict[str, object] = {"type": token[0].upper(), "time": int(token[1:])}
        event.update(attrs.get(token, {}))
        out.append(event)
    return out


SP500 = "sp500_5yr_daily.csv.gz"  # in ../shared/data


def slice_csv(path: Path, keep: dict[str, set[str]], limit: int, out: Path) -> Path:
    """Write to ``out`` (CSV) the first ``limit`` rows whose columns hold allowed values."""
    with gzip.open(path, "rt", newline="") as src, out.open("w", newline="") as dst:
        reader = csv.DictReader(src)
        assert reader.fieldnames is not None
        writer = csv.DictWriter(dst, fieldnames=reader.fieldnames)
        writer.writeheader()
        written = 0
        for row in reader:
            if all(row[col] in allowed for col, allowed in keep.items()):
                writer.writerow(row)
                written += 1
                if written == limit:
                    break
    return out
