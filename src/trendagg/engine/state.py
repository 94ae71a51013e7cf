"""Engine state as bytes, to keep a Runner between micro-batches of a stream.

A :class:`~trendagg.engine.Runner` holds compiled plans, whose predicates
are closures and cannot be pickled. They are stored by reference: a plan as
its query name, a predicate as "the function at this path in that plan", and
restored from the plans the loader compiled once. Everything else (graphs,
registers, frontiers, buffered bursts, statistics) is plain data.

The data is the engine's own classes as they are: a state written by one version of
trendagg may name a class another moved or changed (a stream's checkpoint kept across
an upgrade). Such a state is refused with what to do (:class:`StateCodec.loads`), not
resumed half-read.
"""

from __future__ import annotations

import io
import pickle
import types
from typing import Any

from trendagg.errors import InputError
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


def _persistent_ids(plans: list[QueryPlan]) -> dict[int, tuple[object, ...]]:
    """What each plan, and each function reachable from one, is stored as."""
    ids: dict[int, tuple[object, ...]] = {}
    for plan in plans:
        ids[id(plan)] = ("plan", plan.name)
        found: dict[int, Path] = {}
        _functions(plan, (), found, set())
        for fid, path in found.items():
            ids.setdefault(fid, ("fn", plan.name, path))
    return ids


class _Pickler(pickle.Pickler):
    def __init__(self, file: Any, ids: dict[int, tuple[object, ...]]):
        super().__init__(file, protocol=pickle.HIGHEST_PROTOCOL)
        self._ids = ids

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


_ZSTD = b"TZ1"  # compressed bytes: this tag, the pickle's size (8 bytes), its zstd frame


class StateCodec:
    """Runners (or any object holding them) of one workload as bytes and back.

    Made once per workload, it finds the plans' functions once (``dumps`` scans them
    on every call). With ``compress``, the bytes are zstd-compressed: an engine's
    state is mostly arrays of small numbers (the rideshare workload's: 14x smaller, in
    under a millisecond per 600 KB), and a stream's state store moves every byte
    through a socket and RocksDB on each micro-batch. ``loads`` reads either form.
    """

    def __init__(self, plans: list[QueryPlan], *, compress: bool = False):
        self.plans = list(plans)
        self.compress = compress
        self._ids = _persistent_ids(self.plans)

    def dumps(self, obj: Any) -> bytes:
        buffer = io.BytesIO()
        _Pickler(buffer, self._ids).dump(obj)
        data = buffer.getvalue()
        if not self.compress:
            return data
        import pyarrow as pa

        packed = pa.compress(data, codec="zstd", asbytes=True)
        return _ZSTD + len(data).to_bytes(8, "little") + packed

    def loads(self, data: bytes) -> Any:
        if data[: len(_ZSTD)] == _ZSTD:
            import pyarrow as pa

            size = int.from_bytes(data[len(_ZSTD) : len(_ZSTD) + 8], "little")
            packed = memoryview(data)[len(_ZSTD) + 8 :]
            data = pa.decompress(packed, decompressed_size=size, codec="zstd", asbytes=True)
        try:
            return _Unpickler(io.BytesIO(data), self.plans).load()
        except (AttributeError, ImportError, pickle.UnpicklingError, EOFError) as exc:
            raise InputError(
                f"the engine state kept by this stream's checkpoint cannot be read by this "
                f"version of trendagg ({type(exc).__name__}: {exc}): it was written by "
                f"another one, whose classes differ; finish that stream with the version "
                f"that started it, or start a new stream with another --checkpoint (and "
                f"--output)"
            ) from exc


def dumps(runner: Any, plans: list[QueryPlan] | None = None) -> bytes:
    """A runner (any strategy) as bytes, without its plans; ``loads`` gives it back.

    The plans (and their predicates) are stored by name: ``loads`` takes the
    same workload's plans, compiled once by the caller.
    """
    return StateCodec(list(plans if plans is not None else runner.plans)).dumps(runner)


def loads(data: bytes, plans: list[QueryPlan]) -> Any:
    """A runner from ``dumps`` (or a :class:`StateCodec`'s): it continues exactly where
    the pickled one stopped."""
    return StateCodec(plans).loads(data)
