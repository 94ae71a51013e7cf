"""Compile the kernels ahead, and say so before a run compiles them: ``trendagg warm``.

The compiled engine's kernels are compiled on their first use on a machine and cached
(numba, ``cache=True``; the folder is :func:`trendagg.jit.cache_folder`), minutes each.
Their roots, the compiled functions Python calls (:data:`ROOTS`): ``run_chunk``, the
per-event loop, and ``run_gloria``, the snapshot loop of GLORIA's and SHARON's shared
plans; each in two builds (:data:`VARIANTS`), for workloads without a NOT or a NEXT
condition (``plain``) and with one (``queues``, see :mod:`trendagg.kernels.loop`).
The compiled functions they call are compiled inside their compile.

Three things here:

- :func:`missing`: which of these kernels a run would compile, read from numba's
  index files in the cache folder without compiling (3 ms; reading them imports numba
  and the executor, whose named tuples the signatures name: about a second in a fresh
  process, which a run of the local engine or a Spark worker pays anyway).
- :func:`notice`: the one line on stderr that says a compile of minutes is starting,
  printed once per process tree (the environment variable :data:`NOTICE_ENV` tells the
  processes started afterwards, the warm-up's and Spark's workers, that it was said).
  The local engine prints it when it builds an executor whose kernels are missing
  (:func:`notice_before_compile`); the Spark driver compiles the kernels its job's
  workers would run before the job starts (:func:`ensure_compiled`), so that they load
  them instead of each compiling the same kernel side by side.
- :func:`warm_kernels` (``trendagg warm``, ``python -m trendagg.kernels.warm``): runs a
  small workload of each build, each in a process of its own, at once (numba compiles
  on one core), so that a later run, a test session or a container image built with
  this step starts at once. With the kernels cached it only loads them (seconds).

What "cached" means (:func:`missing`), as numba's own check (``numba.core.caching``)
decides: the root's index file ``<module>.<root>-<line>.py<XY><abiflags>.nbi`` for this
Python exists in the folder named by the digest of the kernel sources; it was written by
this numba version (the first pickle of the file); its stamp is this digest in full;
and it holds an entry for the build (the dimensions of the state's ``neg`` array in the
entry's signature) compiled for this machine (numba's codegen ``magic_tuple``: the target
triple, the CPU's name and its features), whose data file exists. numba also keys an
entry by a hash of the function's bytecode and by the other argument types: the
bytecode follows from the sources (in the stamp) and the Python version (in the
file's name), and the other types are the executor's, the same for every run of a build
(a change to them in ``executor.py`` would compile once without the notice).
"""

from __future__ import annotations

import argparse
import os
import pickle
import subprocess
import sys
import time
from collections.abc import Callable, Collection, Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple, TextIO

if TYPE_CHECKING:
    from trendagg.kernels.runtime.executor import CompiledExecutor
    from trendagg.optimizer.plan import SharingPlan
    from trendagg.plan.compile import QueryPlan

#: The roots: compiled function -> its module (a file of ``trendagg.jit.SOURCES``)
ROOTS = {"run_chunk": "chunk", "run_gloria": "snapshots"}
#: The builds: name -> the dimensions of the state's ``neg`` array in their signature
#: (one with queues; see ``CompiledExecutor``'s state)
VARIANTS = {"plain": 2, "queues": 1}
#: The strategies whose plans may run the snapshot loop; their plans wait for the rates
#: of the first events (``trendagg.engine.runner.DEFERRED``)
SNAPSHOT_STRATEGIES = ("sharon", "gloria")
#: Set (to "1") in the environment once the notice was printed: processes started
#: afterwards (the warm-up's, Spark's workers in local mode) do not print it again
NOTICE_ENV = "TRENDAGG_COMPILE_NOTICE"
#: Minutes of one core to compile each kernel on this 2-core machine, rounded up: measured
#: from an empty cache with `trendagg warm` (both builds at once, 2026-12-02: the plain
#: build's run_chunk 96.6 s and run_gloria 51.8 s, the queues build's 214.8 s and 53.0 s;
#: 269 s in all)
MINUTES = {
    ("run_chunk", "plain"): 2,
    ("run_chunk", "queues"): 4,
    ("run_gloria", "plain"): 1,
    ("run_gloria", "queues"): 1,
}


class Kernel(NamedTuple):
    """One compiled kernel: a root of :data:`ROOTS` in a build of :data:`VARIANTS`."""

    root: str
    variant: str


#: Every kernel (what ``trendagg warm`` compiles)
ALL = tuple(Kernel(root, variant) for root in ROOTS for variant in VARIANTS)

_known: set[tuple[Path, Kernel]] = set()  # found cached in this process (stays so)


# ----------------------------------------------------------------------------- detection


def jit_disabled() -> bool:
    """True under ``NUMBA_DISABLE_JIT=1``: the kernels run as Python, nothing compiles."""
    from numba import config

    # (numba.core.config sets its options in its globals() from the environment: none
    # is declared for mypy)
    return bool(config.DISABLE_JIT)  # type: ignore[attr-defined]


def _machine() -> tuple[str, ...]:
    """numba's description of this machine's code generation (part of a cache entry's key)."""
    from numba.core.registry import cpu_target

    return tuple(cpu_target.target_context.codegen().magic_tuple())


def _cached_variants(folder: Path, root: str) -> set[str]:
    """The builds of ``root`` that ``folder`` holds for these sources, this Python, this
    numba and this machine (see the module docstring)."""
    import numba

    from trendagg.jit import digest

    tag = f"py{sys.version_info[0]}{sys.version_info[1]}{getattr(sys, 'abiflags', '')}"
    index = sorted(folder.glob(f"{ROOTS[root]}.{root}-*.{tag}.nbi"))
    if len(index) != 1:  # (one per folder: the folder's name is the sources' digest)
        return set()
    try:
        with open(index[0], "rb") as f:
            if pickle.load(f) != numba.__version__:
                return set()
            stamp, overloads = pickle.loads(f.read())
    except Exception:  # (a file being written, or of another layout: not usable)
        return set()
    if stamp != digest():
        return set()
    machine = _machine()
    found: set[str] = set()
    for key, data in overloads.items():
        try:
            signature, magic = key[0], tuple(key[1])
            state = dict(zip(signature[1].fields, signature[1].types, strict=True))
            ndim = state["neg"].ndim
        except (AttributeError, IndexError, KeyError, TypeError, ValueError):
            continue
        if magic == machine and (folder / data).is_file():
            found.update(v for v, dims in VARIANTS.items() if dims == ndim)
    return found


def missing(kernels: Iterable[Kernel] = ALL, folder: Path | None = None) -> list[Kernel]:
    """The ``kernels`` a run would compile, in order: all of them when there is no cache
    folder (every process compiles then). ``folder``: the cache folder to look in
    (default :func:`trendagg.jit.cache_folder`)."""
    kernels = list(dict.fromkeys(kernels))
    if folder is None:
        from trendagg.jit import cache_folder

        folder = cache_folder()
        if folder is None:
            return kernels
    todo = [k for k in kernels if (folder, k) not in _known]
    for root in dict.fromkeys(k.root for k in todo):
        have = _cached_variants(folder, root)
        _known.update((folder, k) for k in todo if k.root == root and k.variant in have)
    return [k for k in kernels if (folder, k) not in _known]


def kernels_of(executor: CompiledExecutor) -> set[Kernel]:
    """The kernels a compiled executor (``trendagg.kernels.runtime.executor.CompiledExecutor``)
    runs: the per-event loop of its build, and the snapshot loop when it has a
    GLORIA or SHARON program."""
    from trendagg.kernels.runtime import arrays

    variant = "queues" if arrays.queues(executor) else "plain"
    roots = ("run_chunk", "run_gloria") if executor.gp is not None else ("run_chunk",)
    return {Kernel(root, variant) for root in roots}


def kernels_for(plans: Sequence[QueryPlan], strategy: str) -> set[Kernel]:
    """The kernels a Spark job's workers run for ``plans`` under ``strategy``: each query
    group's executor, as a worker's Runner builds it (for sharon and gloria, whose plan
    waits for the rates of the events, the snapshot loop of each build is counted too:
    other rates may share what rate 1 does not)."""
    from trendagg.kernels.runtime.executor import CompiledExecutor
    from trendagg.optimizer.plan import sharing_plan
    from trendagg.plan.routing import query_groups

    found: set[Kernel] = set()
    for group in query_groups(list(plans)):
        names = set(group.names)
        mine = [p for p in plans if p.name in names]
        sharing = sharing_plan(mine, strategy)  # (a Runner's; rate 1 for sharon and gloria)
        fast = [mine[q] for q in sharing.on("compiled")]
        if fast:
            found |= kernels_of(CompiledExecutor(fast, sharing))
    if strategy in SNAPSHOT_STRATEGIES:
        found |= {Kernel("run_gloria", k.variant) for k in found}
    return found


# ----------------------------------------------------------------------------- the notice


def estimate(kernels: Collection[Kernel], parallel: bool) -> int:
    """Minutes to compile ``kernels`` here: in one process one after the other, or
    (``parallel``, the warm-up) one process per build at once."""
    if not parallel:
        return sum(MINUTES[k] for k in kernels)
    per_build: dict[str, int] = {}
    for k in kernels:
        per_build[k.variant] = per_build.get(k.variant, 0) + MINUTES[k]
    return max(per_build.values(), default=0)


def notice(kernels: Collection[Kernel], parallel: bool = False, err: TextIO | None = None) -> bool:
    """Print the line that says the kernels are being compiled, unless this process or
    the one that started it printed it already; returns True when it printed."""
    if not kernels or os.environ.get(NOTICE_ENV):
        return False
    from trendagg.jit import cache_folder

    os.environ[NOTICE_ENV] = "1"  # (for the processes started from now on too)
    minutes = max(1, estimate(kernels, parallel))
    cores = "2 cores" if parallel and len({k.variant for k in kernels}) > 1 else "one core"
    if cache_folder() is None:
        when = (
            f"about {minutes} minutes on {cores}, in every process: no cache folder is "
            "writable; set NUMBA_CACHE_DIR to a writable folder to compile them once"
        )
    else:
        when = f"first run after an install or upgrade; about {minutes} minutes on {cores}, once"
    print(
        f"trendagg: compiling the engine's kernels for this machine ({when}) ...",
        file=err or sys.stderr,
        flush=True,
    )
    return True


def notice_before_compile(executor: CompiledExecutor) -> None:
    """The local engine's notice: before a compiled executor's first run compiles its
    kernels (nothing when they are cached, or the notice was printed)."""
    if os.environ.get(NOTICE_ENV) or jit_disabled():
        return
    notice(missing(sorted(kernels_of(executor))))


def ensure_compiled(kernels: Iterable[Kernel]) -> bool:
    """The Spark driver's step before a job: compile the ``kernels`` its workers will run
    that are not cached (with the notice), so that the workers load them. Returns
    False when a compile failed (the workers then compile what they need)."""
    if jit_disabled():
        return True
    from trendagg.jit import cache_folder

    needed = missing(sorted(kernels))
    if not needed or cache_folder() is None:  # (no cache: each worker compiles anyway)
        return True
    notice(needed, parallel=True)
    return warm_kernels(needed, quiet=True)


# ----------------------------------------------------------------------------- the warm-up

# One workload per build: enough to compile the per-event loop, bursts, results, and
# (queues) negation, NEXT conditions, indexes and logs.
WORKLOADS = {
    "plain": """
        q1: RETURN g, COUNT(*), SUM(B.x), MIN(B.x) PATTERN SEQ(A, B+, C)
            WHERE [g] GROUP-BY g WITHIN 10 s SLIDE 5 s;
        q2: RETURN g, COUNT(*), MAX(B.x) PATTERN SEQ(A, B+)
            WHERE [g] AND B.x > 1 GROUP-BY g WITHIN 10 s SLIDE 5 s;
    """,
    "queues": """
        q1: RETURN g, COUNT(*), SUM(B.x) PATTERN SEQ(A, NOT C, B+)
            WHERE [g] AND A.x < NEXT(B).x GROUP-BY g WITHIN 10 s SLIDE 5 s;
        q2: RETURN COUNT(*) PATTERN SEQ(A, B+) WHERE B.x * 2 > NEXT(B).x + 1 WITHIN 10 s;
    """,
}
# The snapshot loop's workload (GLORIA, Example 3 of the paper: q1 and q2 share the
# transitions of SEQ(A, B)+ under snapshots of C), run with the Q-sets of
# SNAPSHOT_QSETS; q3 (queues) adds a NOT and a NEXT condition outside them.
SNAPSHOT_WORKLOADS = {
    "plain": """
        q1: RETURN COUNT(*), SUM(B.x) PATTERN SEQ(C, SEQ(A, B)+, D) WITHIN 10 s;
        q2: RETURN COUNT(*), MAX(B.x) PATTERN SEQ(C, SEQ(A, B)+) WITHIN 10 s;
    """,
}
SNAPSHOT_WORKLOADS["queues"] = (
    SNAPSHOT_WORKLOADS["plain"]
    + "q3: RETURN COUNT(*) PATTERN SEQ(A, NOT D, B+) WHERE A.x < NEXT(B).x WITHIN 10 s;"
)
SNAPSHOT_QSETS = (  # (source, target, queries, snapshot type)
    ("C", "A", ("q1", "q2"), "C"),
    ("A", "B", ("q1", "q2"), "C"),
    ("B", "A", ("q1", "q2"), "C"),
    ("B", "D", ("q1",), "C"),
)


def _records() -> list[dict[str, object]]:
    kinds = "ABBCABBBACABAB"
    return [{"type": kind, "time": t, "x": t % 4, "g": t % 3} for t, kind in enumerate(kinds)]


def _snapshot_records() -> list[dict[str, object]]:
    return [{"type": kind, "time": t, "x": t % 4} for t, kind in enumerate("CABABDCABDAB")]


def warm_up_plan(name: str, snapshots: bool = False) -> tuple[list[QueryPlan], SharingPlan]:
    """The plans and the sharing plan of a build's warm-up workload: hamlet's, or
    (``snapshots``) GLORIA's with the Q-sets of :data:`SNAPSHOT_QSETS`."""
    from trendagg.language import parse
    from trendagg.optimizer.plan import GloriaQSet, sharing_plan
    from trendagg.plan.compile import compile_workload

    if not snapshots:
        plans = compile_workload(parse(WORKLOADS[name]))
        return plans, sharing_plan(plans, "hamlet")
    plans = compile_workload(parse(SNAPSHOT_WORKLOADS[name]))
    qsets = [GloriaQSet(*q) for q in SNAPSHOT_QSETS]
    return plans, sharing_plan(plans, "gloria", qsets=qsets)


def compile_variant(name: str, snapshots: bool = False) -> str:
    """Run a build's warm-up workloads through the compiled engine (the per-event loop's;
    with ``snapshots`` the snapshot loop's too); returns what each root took."""
    from trendagg.io import from_records
    from trendagg.kernels.loop import chunk
    from trendagg.kernels.loop import snapshots as snapshot_loop  # (not the flag's name)
    from trendagg.kernels.runtime.executor import CompiledExecutor

    said = []
    # (root, its workload's plans, the compiled function, its workload's events)
    steps: list[tuple[str, bool, object, Callable[[], list[dict[str, object]]]]] = [
        ("run_chunk", False, chunk.run_chunk, _records)
    ]
    if snapshots:
        steps.append(("run_gloria", True, snapshot_loop.run_gloria, _snapshot_records))
    for root, snapshot, function, records in steps:
        start = time.perf_counter()
        executor = CompiledExecutor(*warm_up_plan(name, snapshot))
        executor.feed(from_records(records()).events, None)
        executor.finish()
        seconds = time.perf_counter() - start
        stats = getattr(function, "stats", None)  # (None: NUMBA_DISABLE_JIT, plain Python)
        if stats is None:
            said.append(f"{root} ran as Python (NUMBA_DISABLE_JIT=1)")
        elif sum(stats.cache_misses.values()):
            said.append(f"{root} compiled in {seconds:.1f} s")
        else:
            said.append(f"{root} loaded from the cache in {seconds:.1f} s")
    return f"{name}: " + ", ".join(said)


def warm_kernels(
    kernels: Iterable[Kernel] = ALL,
    quiet: bool = False,
    out: TextIO | None = None,
    err: TextIO | None = None,
) -> bool:
    """Compile (or load) ``kernels``: one process per build, at once, each running its
    warm-up workloads; unless ``quiet``, the notice first (when some must be compiled)
    and what each process did and took. Returns True when all of them ran; a build that
    failed prints its error (to ``err``)."""
    out, err = out or sys.stdout, err or sys.stderr
    kernels = sorted(set(kernels))
    builds = {k.variant: False for k in kernels}
    for k in kernels:
        builds[k.variant] |= k.root == "run_gloria"
    if not quiet and not jit_disabled():
        notice(missing(kernels), parallel=True, err=err)
    start = time.perf_counter()
    env = {**os.environ, "PYTHONWARNINGS": "ignore", NOTICE_ENV: "1"}
    procs = {
        name: subprocess.Popen(
            [sys.executable, "-m", "trendagg.kernels.warm", "--variant", name]
            + (["--snapshots"] if snapshots else []),
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            env=env,
        )
        for name, snapshots in builds.items()
    }
    ok = True
    for name, proc in procs.items():
        output, _ = proc.communicate()
        if proc.returncode != 0:
            ok = False
            print(f"trendagg: compiling the '{name}' kernels failed:\n{output}", file=err)
        elif not quiet:
            print(output.strip().splitlines()[-1] if output.strip() else name, file=out)
    if not quiet and ok:
        from trendagg.jit import cache_folder

        folder = cache_folder()
        where = f"cached in {folder}" if folder else "no writable cache folder: not kept"
        seconds = time.perf_counter() - start
        print(f"kernels ready ({', '.join(procs)}) in {seconds:.1f} s; {where}", file=out)
    return ok


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m trendagg.kernels.warm",
        description="Compile the compiled engine's kernels ahead of a first run "
        "(as `trendagg warm`).",
    )
    parser.add_argument("--quiet", "-q", action="store_true", help="print nothing but errors")
    parser.add_argument("--variant", choices=sorted(VARIANTS), help=argparse.SUPPRESS)
    parser.add_argument("--snapshots", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.variant:  # (one build, in the process warm_kernels started)
        print(compile_variant(args.variant, args.snapshots), flush=True)
        return 0
    return 0 if warm_kernels(quiet=args.quiet) else 1


if __name__ == "__main__":
    sys.exit(main())


__all__ = [
    "ALL",
    "Kernel",
    "ensure_compiled",
    "kernels_for",
    "kernels_of",
    "missing",
    "notice",
    "notice_before_compile",
    "warm_kernels",
]
