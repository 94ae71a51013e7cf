"""Engine state as bytes, to keep a Runner between micro-batches of a stream.

A :class:`~trendagg.engine.Runner` holds compiled plans, whose predicates
are closures and cannot be pickled. They are stored by reference: a plan as
its query name, a predicate as "the function at this path in that plan", and
restored from the plans the loader compiled once. Everything else (graphs,
registers, frontiers, buffered bursts, statistics) is plain data.
"""

from __future__ import annotations

import io
import pickle
import types
from typing import Any

from trendagg.plan.compile import QueryPlan

Path = tuple[object, ...]


def _functions(obj: object, path: Path, out: dict[int, Path], seen: set[int]) -> None:
    """Paths to every function reachable from a plan (dataclasses, dicts, tuples)."""
    if id(obj) in seen:
        return
    seen.add(id(obj))
    if isinstance(obj, types.FunctionType):
        out.setdefault(id(obj), path)
    elif isinstance(obj, dict):
        for k, v in obj.items():
            _functions(v, (*path, ("key", k)), out, seen)
    elif isinstance(obj, (tuple, list)):
        for i, v in enumerate(obj):
            _functions(v, (*path, ("item", i)), out, seen)
    elif hasattr(obj, "__dataclass_fields__"):
        for name in obj.__dataclass_fields__:
            _functions(getattr(obj, name), (*path, ("attr", name)), out, seen)


def _resolve(plan: QueryPlan, path: Path) -> Any:
    obj: Any = plan
    for step in path:
        kind, value = step  # type: ignore[misc]
        obj = getattr(obj, value) if kind == "attr" else obj[value]
    return obj


class _Pickler(pickle.Pickler):
    def __init__(self, file: Any, plans: list[QueryPlan]):
        super().__init__(file, protocol=pickle.HIGHEST_PROTOCOL)
        self._ids: dict[int, tuple[object, ...]] = {}
        for plan in plans:
            self._ids[id(plan)] = ("plan", plan.name)
            found: dict[int, Path] = {}
            _functions(plan, (), found, set())
            for fid, path in found.items():
                self._ids.setdefault(fid, ("fn", plan.name, path))

    def persistent_id(self, obj: Any) -> Any:
        if isinstance(obj, (QueryPlan, types.FunctionType)):
            return self._ids.get(id(obj))
        return None


class _Unpickler(pickle.Unpickler):
    def __init__(self, file: Any, plans: list[QueryPlan]):
        super().__init__(file)
        self._plans = {p.name: p for p in plans}

    def persistent_load(self, pid: Any) -> Any:
        if pid[0] == "plan":
            return self._plans[pid[1]]
        return _resolve(self._plans[pid[1]], pid[2])


def dumps(runner: Any, plans: list[QueryPlan] | None = None) -> bytes:
    """A runner (any strategy) as bytes, without its plans; ``loads`` gives it back.

    The plans (and their predicates) are stored by name: ``loads`` takes the
    same workload's plans, compiled once by the caller.
    """
    buffer = io.BytesIO()
    _Pickler(buffer, list(plans if plans is not None else runner.plans)).dump(runner)
    return buffer.getvalue()


def loads(data: bytes, plans: list[QueryPlan]) -> Any:
    """A runner from ``dumps``: it continues exactly where the pickled one stopped."""
    return _Unpickler(io.BytesIO(data), plans).load()
