"""Run workloads over in-memory records, and compare result rows."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
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
