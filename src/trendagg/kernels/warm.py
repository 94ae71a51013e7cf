"""Compile the kernels ahead of a first run: ``python -m trendagg.kernels.warm``.

The compiled engine's kernels are compiled on their first use on a machine and
cached (numba, ``cache=True``): ``run_chunk`` once for workloads without a NOT or
a NEXT condition and once for workloads with one (the kernel with queues, see
:mod:`trendagg.kernels._engine`), minutes each. This compiles both at once, each
in a process of its own (numba compiles on one core), by running a small
workload of each kind through the compiled engine, so that a later run, a test
session or a container image built with this step starts at once. With the
kernels already cached it only loads them (a few seconds).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from collections.abc import Sequence

# One workload per kernel variant: enough to compile the per-event loop, bursts,
# results, and (queues) negation, NEXT conditions, indexes and logs.
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


def _records() -> list[dict[str, object]]:
    kinds = "ABBCABBBACABAB"
    return [{"type": kind, "time": t, "x": t % 4, "g": t % 3} for t, kind in enumerate(kinds)]


def compile_variant(name: str) -> None:
    """Run the small workload of one kernel variant through the compiled engine."""
    from trendagg.io import from_records
    from trendagg.kernels.executor import CompiledExecutor
    from trendagg.language import parse
    from trendagg.optimizer.plan import sharing_plan
    from trendagg.plan.compile import compile_workload

    plans = compile_workload(parse(WORKLOADS[name]))
    kernel = CompiledExecutor(plans, sharing_plan(plans, "hamlet"), log=8)
    kernel.feed(from_records(_records()).events, None)
    kernel.finish()


def warm_kernels(variants: Sequence[str] = tuple(WORKLOADS), quiet: bool = False) -> bool:
    """Compile (or load) every variant, each in a process of its own, at once.

    Returns True when all of them ran; a variant that failed prints its error."""
    start = time.perf_counter()
    procs = {
        name: subprocess.Popen(
            [sys.executable, "-m", "trendagg.kernels.warm", "--variant", name],
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            env={**os.environ, "PYTHONWARNINGS": "ignore"},
        )
        for name in variants
    }
    ok = True
    for name, proc in procs.items():
        output, _ = proc.communicate()
        if proc.returncode != 0:
            ok = False
            print(f"compiling the '{name}' kernel failed:\n{output}", file=sys.stderr)
    if not quiet:
        print(f"kernels ready ({', '.join(procs)}) in {time.perf_counter() - start:.1f} s")
    return ok


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m trendagg.kernels.warm",
        description="Compile the compiled engine's kernels ahead of a first run.",
    )
    parser.add_argument("--variant", choices=sorted(WORKLOADS), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.variant:
        compile_variant(args.variant)
        return 0
    return 0 if warm_kernels() else 1


if __name__ == "__main__":
    sys.exit(main())
