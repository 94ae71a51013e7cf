"""The lowering's tables, held to a golden digest: a change to how the kernel's tables are
laid out (a refactoring of the lowering that should change nothing) shows here.

``tests/golden/lowering.json`` holds a varied set of workloads (drawn once from the
generators of ``tests/workloads.py`` and ``tests/kernels``: NOT, NEXT, qualified
partitions, shared bursts, merged states, lazy windows, SHARON's and GLORIA's snapshot
tables, hidden registers of attributes of both kinds, and the language's golden
queries), each with the strategy whose sharing plan it is lowered under, and the digest
of every array of its :class:`Program`, of its snapshot tables and of every other field
of its :class:`Lowered` (the readouts, widths, classes, ...). A second digest per field
over all the cases names the fields that changed. Record anew only for a change that
means to change the tables::

    PYTHONPATH=src python tests/kernels/test_lowering_golden.py --record
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import re
import sys
from collections.abc import Iterator
from fractions import Fraction
from pathlib import Path
from typing import Any

import numpy as np

from trendagg.kernels.lower.program import lower
from trendagg.language import parse
from trendagg.optimizer.plan import sharing_plan
from trendagg.plan.compile import compile_workload

GOLDEN = Path(__file__).resolve().parents[1] / "golden" / "lowering.json"
SKIPPED = {"plans", "predicates"}  # (the input; a filter's predicates are in its key)


def _norm(value: Any) -> Any:
    """A plain, printable form of a table or field, the same in every process."""
    if isinstance(value, np.ndarray):
        return ["array", value.dtype.str, list(value.shape), value.tolist()]
    if isinstance(value, tuple) and hasattr(value, "_fields"):  # a named tuple
        return [[name, _norm(v)] for name, v in zip(value._fields, value, strict=True)]
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return [
            [f.name, _norm(getattr(value, f.name))]
            for f in dataclasses.fields(value)
            if f.name not in SKIPPED
        ]
    if isinstance(value, dict):
        return sorted(([repr(k), _norm(v)] for k, v in value.items()), key=lambda kv: kv[0])
    if isinstance(value, (frozenset, set)):
        return sorted(repr(v) for v in value)
    if isinstance(value, (list, tuple)):
        return [_norm(v) for v in value]
    if isinstance(value, (int, float, str, Fraction, type(None))):
        return repr(value)
    raise TypeError(f"no golden form for {type(value).__name__}: add one to _norm")


#: Rates under which sharing pays (rare first types), as tests/reference gives them; a
#: strategy ``gloria+rare`` plans with them, ``gloria+rare+paper`` by the paper's costs too
RARE_FIRST = {t: float(1 + 3 * i) for i, t in enumerate("GFEDCAB")}


def _rare_first(plans: list[Any]) -> dict[str, float]:
    """RARE_FIRST, and 10 for each other type of ``plans``."""
    types = {v.type for p in plans for v in p.vars.values()}
    return {t: RARE_FIRST.get(t, 10.0) for t in sorted(types)}


def _lowered(text: str, strategy: str, mixed: list[str]) -> Any:
    """The lowering of ``text`` under ``strategy``'s plan (its compiled queries, as the
    Runner gives them to the kernel), or None when the plan routes no query there."""
    plans = compile_workload(parse(text))
    name, *options = strategy.split("+")
    sharing = sharing_plan(
        plans,
        name,
        rates=_rare_first(plans) if "rare" in options else None,
        cost_model="paper" if "paper" in options else "kernel",
    )
    fast = [plans[q] for q in sharing.on("compiled")]
    return lower(fast, sharing, frozenset(mixed)) if fast else None


def _fields(low: Any) -> dict[str, str]:
    """Per field of a lowering (each array of its programs apart), its digest."""
    out = {}
    for f in dataclasses.fields(low):
        value = getattr(low, f.name)
        if f.name in SKIPPED:
            continue
        if f.name == "program":
            for name, array in zip(value._fields, value, strict=True):
                out[f"program.{name}"] = _norm(array)
        elif f.name == "gloria" and value is not None:
            for name, array in zip(value.program._fields, value.program, strict=True):
                out[f"gloria.program.{name}"] = _norm(array)
            for g in dataclasses.fields(value):
                if g.name != "program":
                    out[f"gloria.{g.name}"] = _norm(getattr(value, g.name))
        else:
            out[f.name] = _norm(value)
    return {name: _hash(v) for name, v in out.items()}


def _hash(value: Any) -> str:
    return hashlib.sha256(json.dumps(value).encode()).hexdigest()[:20]


def _runs(golden: dict[str, Any]) -> Iterator[tuple[str, str, dict[str, Any]]]:
    """(source, workload text, run) of every recorded lowering."""
    for workload in golden["workloads"]:
        for run in workload["runs"]:
            yield workload["source"], workload["text"], run


def test_the_lowered_tables_equal_the_golden_digests() -> None:
    golden = json.loads(GOLDEN.read_text(encoding="utf-8"))
    runs = list(_runs(golden))
    assert len(runs) >= 1000  # (a guard against a vacuous pass)
    changed, per_field = [], {}
    reached = dict.fromkeys(REACHED, False)
    for i, (source, text, run) in enumerate(runs):
        low = _lowered(text, run["strategy"], run["mixed"])
        assert low is not None, f"{source}: no query runs compiled\n{text}"
        fields = _fields(low)
        for name, digest in fields.items():
            per_field.setdefault(name, []).append(digest)
        if _hash(sorted(fields.items())) != run["digest"]:
            changed.append(f"run {i} ({source}, {run['strategy']})")
        for name, test in REACHED.items():
            reached[name] = reached[name] or bool(test(low))
    fields_changed = sorted(
        name
        for name in set(per_field) | set(golden["fields"])
        if _hash(per_field.get(name, [])) != golden["fields"].get(name)
    )
    assert not changed and not fields_changed, (
        f"{len(changed)} of {len(runs)} lowerings differ from tests/golden/lowering.json "
        f"(the first: {changed[:5]}), in the fields {fields_changed}"
    )
    # the cases lower every construct
    assert reached == dict.fromkeys(REACHED, True)


#: What the recorded cases must lower, each in at least one case
REACHED = {
    "negation": lambda low: (low.program.q_nkind >= 0).any(),
    "NEXT log": lambda low: low.program.nt_log.any(),
    "NEXT index": lambda low: len(low.program.ix_q) > 0,
    "shared burst": lambda low: len(low.set_types) > 0,
    "merged states": lambda low: any(len(m) > 1 for m in low.class_members),
    "lazy windows": lambda low: low.program.sp_lazy.any(),
    "template classes": lambda low: low.program.c_tmpl.any(),
    "snapshots": lambda low: low.gloria is not None and low.gloria.rings > 0,
    "hidden registers": lambda low: any(r >= 0 for ro in low.readouts for *_, r in ro.sums),
}


# ---------------------------------------------------------------- recording


def _draw(strategy: Any, n: int) -> list[Any]:
    """``n`` examples of a hypothesis strategy, the same ones in every run."""
    from hypothesis import HealthCheck, Phase, given, settings

    found: list[Any] = []

    @settings(
        max_examples=n,
        derandomize=True,
        database=None,
        deadline=None,
        phases=[Phase.generate],
        suppress_health_check=list(HealthCheck),
    )
    @given(strategy)
    def collect(x: Any) -> None:
        found.append(x)

    collect()
    return found


def _text(workload: Any) -> str:
    """A workload's text: generators give either (text, events) or (queries, events)."""
    from trendagg.language import ast, to_text

    queries = workload[0]
    if isinstance(queries, str):
        return queries
    return to_text(ast.Workload(tuple(queries)))


def _lazy(text: str) -> str:
    """Every other query's window made long enough for lazy windows (16 and more windows
    per event, sliding by 1 s)."""
    n = 0

    def longer(m: re.Match[str]) -> str:
        nonlocal n
        n += 1
        return f"WITHIN {16 + int(m.group(1))} s SLIDE 1 s" if n % 2 else m.group(0)

    return re.sub(r"WITHIN (\d+) s(?: SLIDE \d+ s)?", longer, text)


def _sources() -> list[tuple[str, list[str], list[str], list[str]]]:
    """(source, workload texts, strategies, mixed attributes) of the recorded cases."""
    here = Path(__file__).resolve().parent
    sys.path[:0] = [str(here), str(here.parent)]
    import test_kernels as tk
    import test_negation as tn
    import test_next as tx

    import workloads as w

    kernels = [_text(c) for c in _draw(tk.workloads(), 30)]
    merging = [_text(c) for c in _draw(tk.merging_workloads(), 25)]
    shared = [_text(c) for c in _draw(w.shared_cases(), 25)]
    gloria = [_text(c) for c in _draw(w.gloria_cases(), 30)]
    classic = ["greta", "hamlet", "hamlet-static"]
    snapshot = ["sharon", "gloria", "hamlet", "sharon+rare", "gloria+rare", "gloria+rare+paper"]
    tq = sorted((here.parent / "golden").glob("*.tq"))
    return [
        ("workloads.cases", [_text(c) for c in _draw(w.cases(n_queries=3), 40)], classic, []),
        ("workloads.shared_cases", shared, [*classic, "gloria+rare"], []),
        ("workloads.seq_cases", [_text(c) for c in _draw(w.seq_cases(), 25)], snapshot, []),
        ("workloads.gloria_cases", gloria, snapshot, []),
        ("test_kernels.workloads", kernels, classic, []),
        ("test_kernels.workloads mixed", kernels[::2], ["hamlet"], ["x"]),
        ("test_kernels.merging_workloads", merging, classic, []),
        (
            "test_kernels.qualified_workloads",
            [_text(c) for c in _draw(tk.qualified_workloads(), 25)],
            classic,
            [],
        ),
        ("test_negation", [_text(c) for c in _draw(tn.negation_workloads(), 30)], classic, []),
        ("test_next", [_text(c) for c in _draw(tx.next_workloads(), 30)], ["greta", "hamlet"], []),
        ("lazy windows", [_lazy(t) for t in kernels + merging + shared], classic, []),
        ("shared_cases mixed", shared[::2], ["hamlet", "gloria+rare+paper"], ["x", "y"]),
        ("gloria_cases mixed", gloria[::2], ["gloria+rare", "gloria+rare+paper"], ["x"]),
        ("golden queries", [p.read_text(encoding="utf-8") for p in tq], [*classic, *snapshot], []),
    ]


def record() -> None:
    """Lower every case and write the golden file."""
    workloads = []
    per_field: dict[str, list[str]] = {}
    reached = dict.fromkeys(REACHED, False)
    for source, texts, strategies, mixed in _sources():
        for text in dict.fromkeys(texts):
            runs = []
            for strategy in strategies:
                low = _lowered(text, strategy, mixed)
                if low is None:
                    continue
                fields = _fields(low)
                for name, test in REACHED.items():
                    reached[name] = reached[name] or bool(test(low))
                for name, digest in fields.items():
                    per_field.setdefault(name, []).append(digest)
                digest = _hash(sorted(fields.items()))
                runs.append({"strategy": strategy, "mixed": mixed, "digest": digest})
            if runs:
                workloads.append({"source": source, "text": text, "runs": runs})
    golden = {
        "fields": {name: _hash(d) for name, d in sorted(per_field.items())},
        "workloads": workloads,
    }
    GOLDEN.write_text(json.dumps(golden, indent=1) + "\n", encoding="utf-8")
    n = sum(len(w["runs"]) for w in workloads)
    print(f"{len(workloads)} workloads, {n} runs, {len(per_field)} fields; reached: {reached}")


if __name__ == "__main__" and sys.argv[1:] == ["--record"]:
    record()
