"""Before and after a change: `trendagg run --engine local` of two commits, side by side.

The two source trees (``--base``, a commit checked out into a temporary git
worktree, and this working tree) run the same workloads over the same
generated rideshare CSV files, alternating, each run a fresh process pinned
to one core. The parent times each process from spawn to exit and reads its
peak resident memory (``wait4``); the table says whether the two trees
wrote the same bytes (a fix between them may change results). The workload
shapes are the axes a user changes (HAMLET's 50 queries sharing Travel+ per
driver; the same with
a speed threshold per query; a longer window with a finer slide; fewer
queries; a GROUP BY), so that a speed-up that holds on one shape only shows.

    .venv/bin/python benchmarks/before_after.py --base 21bfa9f   # ~10 min here
    .venv/bin/python benchmarks/before_after.py --base b2cefdd --big 0 --name times_before_after

``--iso`` runs the same events with ISO-8601 times of a millisecond (``2013-02-08
09:30:00.123``: each event's second plus its row's place mod 1000 in ms), the times a
reader parses as text and the engine holds as ticks.

The base default is the last commit before issue #14 (one plan, one engine
path). Writes benchmarks/results/before_after.{md,csv}.
"""

from __future__ import annotations

import argparse
import csv
import hashlib
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
RESULTS = HERE / "results"
BASE = "21bfa9f"  # the last commit before issue #14

sys.path.insert(0, str(HERE))
from hamlet_rideshare import machine  # noqa: E402
from kernel_rideshare import ensure_data  # noqa: E402

from workloads import sharing_workload  # noqa: E402


def shapes() -> dict[str, str]:
    """Workload name -> query text."""
    group_by = sharing_workload(10).replace("WHERE [driver]", "WHERE [driver] GROUP BY district")
    group_by = group_by.replace("RETURN COUNT(*)", "RETURN district, COUNT(*)")
    return {
        "50 queries, Travel+ per driver (the benchmark)": sharing_workload(50),
        "50 queries, a speed threshold each": sharing_workload(50, predicates=True),
        "50 queries, WITHIN 30 min SLIDE 1 min": sharing_workload(
            50, window="WITHIN 30 min SLIDE 1 min"
        ),
        "5 queries": sharing_workload(5),
        "10 queries, GROUP BY district": group_by,
    }


def base_tree(rev: str) -> Path:
    """A checkout of ``rev`` in a temporary git worktree (made once, reused)."""
    sha = subprocess.run(
        ["git", "-C", str(ROOT), "rev-parse", "--short", rev],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    path = Path(tempfile.gettempdir()) / f"trendagg-base-{sha}"
    if not path.exists():
        subprocess.run(
            ["git", "-C", str(ROOT), "worktree", "add", "--detach", str(path), sha],
            check=True,
            capture_output=True,
        )
    return path


class Pinned(NamedTuple):
    """What a process run by :func:`pinned` did."""

    code: int  # its exit status
    wall: float  # seconds from spawn to exit
    peak_mb: float  # its peak resident memory
    stdout: str
    stderr: str


def pinned(command: list[str], env: dict[str, str], cpu: int) -> Pinned:
    """Run ``command`` in a fresh process pinned to ``cpu``: its exit, wall time from spawn
    to exit, peak resident memory (``wait4``) and output."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        started = time.perf_counter()
        proc = subprocess.Popen(
            command,
            env=env,
            stdout=out,
            stderr=err,
            preexec_fn=lambda: os.sched_setaffinity(0, {cpu}),  # noqa: PLW1509
        )
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - started
        proc.returncode = code = os.waitstatus_to_exitcode(status)  # (reaped: Popen told)
        out.seek(0)
        err.seek(0)
        return Pinned(code, wall, usage.ru_maxrss / 1024, out.read().decode(), err.read().decode())


def one_run(tree: Path, queries: Path, events: Path, out: Path, cpu: int) -> tuple[float, float]:
    """(wall seconds, peak RSS MB) of one `trendagg run` of ``tree``'s sources."""
    env = {**os.environ, "PYTHONPATH": str(tree / "src"), "PYTHONHASHSEED": "0"}
    entry = "import sys; from trendagg.cli import main; sys.exit(main())"
    command = [sys.executable, "-c", entry, "run", str(queries), str(events)]
    command += ["--engine", "local", "--quiet", "-o", str(out)]
    run = pinned(command, env, cpu)
    if run.code:
        raise SystemExit(f"{' '.join(command)} failed ({tree}):\n{run.stderr}")
    return run.wall, run.peak_mb


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--base", default=BASE, help=f"the commit to compare with (default {BASE})")
    ap.add_argument("--events", type=int, default=1_000_000)
    ap.add_argument("--big", type=int, default=10_000_000, help="the headline's events (0: none)")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--data", type=Path, default=Path(tempfile.gettempdir()) / "trendagg-bench")
    ap.add_argument("--iso", action="store_true", help="ISO-8601 times with milliseconds")
    ap.add_argument(
        "--name", default="before_after", help="results/NAME.md and .csv (NAME_iso with --iso)"
    )
    args = ap.parse_args()
    args.data.mkdir(parents=True, exist_ok=True)
    trees = {"before": base_tree(args.base), "after": ROOT}
    cpu = sorted(os.sched_getaffinity(0))[-1]
    work = Path(tempfile.mkdtemp(prefix="trendagg-before-after-"))
    cases = [(name, text, args.events, args.repeats) for name, text in shapes().items()]
    if args.big:
        cases.append(("50 queries (the benchmark), headline", sharing_workload(50), args.big, 1))
    began = time.perf_counter()
    print("warm-up: each tree compiles its kernels into numba's cache", flush=True)
    small = ensure_data(args.data, 100_000)
    warm = work / "warm.tq"
    warm.write_text(sharing_workload(5))
    for label, tree in trees.items():
        one_run(tree, warm, small, work / f"warm-{label}.jsonl", cpu)
    results = []
    for i, (name, text, n, repeats) in enumerate(cases):
        events = ensure_data(args.data, n)
        if args.iso:
            events = iso_copy(events)
        queries = work / f"shape{i}.tq"
        queries.write_text(text)
        runs: dict[str, list[tuple[float, float]]] = {label: [] for label in trees}
        for _ in range(repeats):
            for label, tree in trees.items():  # alternating: drift hits both alike
                runs[label].append(one_run(tree, queries, events, work / f"{label}.jsonl", cpu))
        same = digest(work / "before.jsonl") == digest(work / "after.jsonl")
        row: dict[str, object] = {"shape": name, "events": n, "repeats": repeats}
        row["identical"] = same  # (a fix between the trees changes results: say so, go on)
        for label in trees:
            row[f"{label}_s"] = statistics.median(w for w, _ in runs[label])
            row[f"{label}_mb"] = max(m for _, m in runs[label])
        row["ratio"] = float(row["before_s"]) / float(row["after_s"])  # type: ignore[arg-type]
        results.append(row)
        write(results, args.base, time.perf_counter() - began, args)  # measured so far
        print(
            f"  {name}: {n:,} events, before {row['before_s']:.2f} s, after {row['after_s']:.2f} s "
            f"({row['ratio']:.2f}x), peak {row['before_mb']:.0f} / {row['after_mb']:.0f} MB"
            + ("" if same else "; RESULTS DIFFER"),
            flush=True,
        )
    write(results, args.base, time.perf_counter() - began, args)


def iso_copy(path: Path) -> Path:
    """The events of ``path`` with ISO-8601 times of a millisecond (made once)."""
    import pyarrow as pa
    import pyarrow.compute as pc
    from pyarrow import csv as pacsv

    out = path.with_name(path.stem + "_iso_ms.csv")
    if not out.exists():
        table = pacsv.read_csv(path)
        seconds = table.column("time").cast(pa.int64()).to_numpy()
        ms = seconds * 1000 + (np.arange(len(seconds)) % 1000) + 1_700_000_000_000
        stamps = pc.cast(pa.array(ms, pa.timestamp("ms")), pa.string())
        table = table.set_column(table.column_names.index("time"), "time", stamps)
        part = out.with_suffix(".part.csv")
        pacsv.write_csv(table, part)
        part.rename(out)
    return out


def write(results: list[dict[str, object]], base: str, took: float, args: Any) -> None:
    RESULTS.mkdir(exist_ok=True)
    iso = args.iso
    name = f"{args.name}_iso" if iso else args.name
    with open(RESULTS / f"{name}.csv", "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(results[0]))
        w.writeheader()
        w.writerows(results)
    head = subprocess.run(
        ["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"], capture_output=True, text=True
    ).stdout.strip()
    times = " (ISO-8601 times of a millisecond)" if iso else ""
    lines = [
        f"# Before and after: `trendagg run --engine local`, {base} vs {head} (+ working tree)"
        + times,
        "",
        f"Machine: {machine()}. Run {time.strftime('%Y-%m-%d')}, {took / 60:.0f} min in all. "
        "Each run is a fresh process pinned to one core, timed from spawn to exit (reading "
        "the CSV, the engine, writing the results); the two trees alternate; medians of the "
        "repeats; the peak is the largest resident memory of a run. The last column says "
        "whether the two trees wrote the same bytes.",
        "",
        "| shape | events | runs | before s | after s | before / after | peak MB before | after "
        "| same bytes |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---|",
    ]
    for r in results:
        lines.append(
            f"| {r['shape']} | {r['events']:,} | {r['repeats']} | {r['before_s']:.2f} | "
            f"{r['after_s']:.2f} | {r['ratio']:.2f}x | {r['before_mb']:.0f} | {r['after_mb']:.0f} | "
            f"{'yes' if r['identical'] else 'no'} |"
        )
    (RESULTS / f"{name}.md").write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
