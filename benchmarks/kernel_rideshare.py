"""The compiled engine on HAMLET's rideshare benchmark, whole process, one core.

Up to 50 queries with different patterns sharing Travel+, trends partitioned
per driver (workloads.py), over generated rideshare CSV files (1,000 drivers,
10,000 events per minute, trips of up to 16 legs, seed 11). Every run is a
fresh process pinned to one core (``sched_setaffinity``): it imports
trendagg, loads the cached kernel, streams the CSV with ``iter_events``
(pyarrow) in chunks of 500,000 rows into ``Runner.feed`` and
finishes. The parent times the process from spawn to exit, so events/s
counts everything: interpreter start, imports, reading, the engine. The
child also reports its phases, its resident memory after every chunk (for
the flat-memory plot) and a digest of its rows: every strategy must return
the same rows as the others in each configuration, or the benchmark fails.

    .venv/bin/python benchmarks/kernel_rideshare.py            # ~6 min here
    .venv/bin/python benchmarks/kernel_rideshare.py --quick    # ~1 min

(Before and after a change: ``benchmarks/kernel_before_after.py --base REV --only
uniform``, these headline configurations of that commit and of this tree, alternating.)

The CSV files are generated once into ``--data`` (default: a directory in
the system's temporary directory), never into the repository. Writes
benchmarks/results/kernel_rideshare.{md,csv,png}.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results"
CHUNK_ROWS = 500_000
STRATEGIES = ("hamlet", "hamlet-static", "greta")


def child(config: dict[str, object]) -> dict[str, object]:
    """One run, in this process: read and aggregate, measuring the phases."""
    started = time.perf_counter()
    os.sched_setaffinity(0, {int(config["cpu"])})  # type: ignore[call-overload]
    sys.path.insert(0, str(HERE))
    import resource

    from trendagg.engine import Runner
    from trendagg.io.readers import iter_events
    from trendagg.language import parse
    from trendagg.plan.compile import attributes_read, compile_workload
    from workloads import sharing_workload

    plans = compile_workload(parse(sharing_workload(int(config["k"]))))  # type: ignore[call-overload]
    runner = Runner(plans, str(config["strategy"]), compiled=bool(config["compiled"]))
    page = os.sysconf("SC_PAGE_SIZE")
    timeline: list[tuple[int, float]] = []
    rows = []
    events = 0
    read = 0.0
    chunks = iter_events(
        str(config["path"]),
        numeric={"Travel": {"duration"}},
        chunk_rows=CHUNK_ROWS,
        attributes=attributes_read(plans),  # as trendagg run --engine local reads
    )
    imported = time.perf_counter()
    while True:
        t = time.perf_counter()
        chunk = next(chunks, None)
        read += time.perf_counter() - t
        if chunk is None:
            break
        if chunk.rejected:
            raise SystemExit(f"{len(chunk.rejected)} rows rejected in {config['path']}")
        events += len(chunk.events)
        rows += runner.feed(chunk.events)
        with open("/proc/self/statm") as f:
            timeline.append((events, int(f.read().split()[1]) * page / 2**20))
    rows += runner.finish()
    finished = time.perf_counter()
    return {
        "events": events,
        "rows": len(rows),
        "startup_s": imported - started,
        "read_s": read,
        "engine_s": finished - imported - read,
        "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
        "timeline": timeline,
        **kernel_stats(runner, rows),
    }


def kernel_stats(runner: Any, rows: list[Any]) -> dict[str, object]:
    """The kernel's counters of a finished ``runner`` and a digest of its ``rows``."""
    stats: dict[str, object] = {}
    runner.report(stats)
    kernel = stats.get("kernel", {})
    kernel = kernel if isinstance(kernel, dict) else {}
    return {
        "lanes": kernel.get("lanes", 0),
        "rebuilds": kernel.get("rebuilds", 0),
        "bursts": kernel.get("bursts", 0),
        "shared_bursts": kernel.get("shared_bursts", 0),
        "digest": hash(
            tuple(sorted((r.query, r.window_start, repr(sorted(r.values.items()))) for r in rows))
        ),
    }


def one_run(config: dict[str, object]) -> tuple[float, dict[str, object]]:
    """(wall seconds, the child's report) of one fresh process running the child."""
    started = time.perf_counter()
    out = subprocess.run(
        [sys.executable, str(Path(__file__)), "--child", json.dumps(config)],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONHASHSEED": "0", "PYTHONPATH": str(HERE.parent / "src")},
    )
    wall = time.perf_counter() - started
    if out.returncode:
        raise SystemExit(f"run {config} failed:\n{out.stderr}")
    return wall, json.loads(out.stdout.strip().splitlines()[-1])


def run(config: dict[str, object], repeats: int) -> dict[str, object]:
    """Median wall time of ``repeats`` fresh processes (the first run's details)."""
    walls, runs = [], []
    for _ in range(repeats):
        wall, report = one_run(config)
        walls.append(wall)
        runs.append(report)
    result = dict(runs[0])
    result["wall_s"] = statistics.median(walls)
    result["walls"] = walls
    result["events_per_s"] = result["events"] / result["wall_s"]
    for phase in ("startup_s", "read_s", "engine_s"):
        result[phase] = statistics.median(r[phase] for r in runs)
    print(
        f"  k={config['k']:>2} {config['strategy']:<13} {'compiled' if config['compiled'] else 'python':<8}"
        f" {result['events']:>10,} events  {result['events_per_s']:>11,.0f} ev/s"
        f"  (startup {result['startup_s']:.2f} s, read {result['read_s']:.2f} s,"
        f" engine {result['engine_s']:.2f} s)  peak {result['peak_rss_mb']:.0f} MB",
        flush=True,
    )
    return result


def ensure_data(directory: Path, events: int) -> Path:
    path = directory / f"rideshare_{events}.csv"
    if not path.exists():
        from trendagg.generate import rideshare, write_stream

        print(f"generating {path} ...", flush=True)
        part = path.with_suffix(".part.csv")
        write_stream(
            rideshare(events, drivers=1000, events_per_minute=10_000, max_legs=16, seed=11),
            str(part),
        )
        part.rename(path)
    return path


def machine() -> str:
    import numba
    from hamlet_rideshare import cpu_model

    try:
        mem = Path("/proc/meminfo").read_text().split()[1]
        ram = f"{int(mem) / 2**20:.0f} GiB RAM"
    except OSError:
        ram = "RAM unknown"
    return (
        f"{cpu_model()}, {os.cpu_count()} cores (each run pinned to one), {ram}, "
        f"{platform.system()}, Python {platform.python_version()}, numba {numba.__version__}"
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="small sizes, one repeat")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--data", type=Path, default=Path(tempfile.gettempdir()) / "trendagg-bench")
    ap.add_argument("--child", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        print(json.dumps(child(json.loads(args.child))))
        return
    args.data.mkdir(parents=True, exist_ok=True)
    small, big = (100_000, 1_000_000) if args.quick else (1_000_000, 10_000_000)
    repeats = 1 if args.quick else args.repeats
    sweep_k = (1, 5, 25, 50) if args.quick else (1, 5, 10, 25, 50)
    paths = {n: ensure_data(args.data, n) for n in (small, big)}
    cpu = sorted(os.sched_getaffinity(0))[-1]
    base = {"cpu": cpu, "compiled": True}
    began = time.perf_counter()
    print("warm-up (compiles the kernel into numba's cache if needed)", flush=True)
    run({**base, "k": 5, "strategy": "hamlet", "path": str(paths[small])}, 1)

    results: list[dict[str, object]] = []

    def record(section: str, config: dict[str, object], reps: int) -> dict[str, object]:
        out = run(config, reps)
        results.append({"section": section, **config, **out})
        return out

    print(f"queries sweep, {small:,} events", flush=True)
    for k in sweep_k:
        for strategy in STRATEGIES:
            record(
                "sweep", {**base, "k": k, "strategy": strategy, "path": str(paths[small])}, repeats
            )
    py_events = 20_000 if args.quick else 100_000
    py_path = ensure_data(args.data, py_events)
    print(f"the Python engine beside the compiled one, {py_events:,} events, 50 queries")
    for compiled in (False, True):
        record(
            "python",
            {"cpu": cpu, "compiled": compiled, "k": 50, "strategy": "hamlet", "path": str(py_path)},
            1,
        )
    print(f"headline: {big:,} events, 50 queries", flush=True)
    for strategy, reps in (("hamlet", repeats), ("greta", 1)):
        record("headline", {**base, "k": 50, "strategy": strategy, "path": str(paths[big])}, reps)

    # every strategy returned the same rows as the others, per configuration
    digests: dict[tuple[object, ...], set[object]] = {}
    for r in results:
        digests.setdefault((r["section"], r["k"], r["path"]), set()).add(r["digest"])
    bad = [key for key, ds in digests.items() if len(ds) != 1]
    if bad:
        raise SystemExit(f"strategies disagree in {bad}")
    write(results, machine(), time.perf_counter() - began, small, big, repeats)


def write(
    results: list[dict[str, object]], host: str, took: float, small: int, big: int, repeats: int
) -> None:
    RESULTS.mkdir(exist_ok=True)
    fields = [
        "section", "k", "strategy", "compiled", "events", "wall_s", "events_per_s", "startup_s",
        "read_s", "engine_s", "peak_rss_mb", "lanes", "bursts", "shared_bursts", "rows",
    ]  # fmt: skip
    with open(RESULTS / "kernel_rideshare.csv", "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=fields, extrasaction="ignore")
        w.writeheader()
        w.writerows(results)

    def find(section: str, k: int, strategy: str, compiled: bool = True) -> dict[str, object]:
        return next(
            r
            for r in results
            if (r["section"], r["k"], r["strategy"], r["compiled"])
            == (section, k, strategy, compiled)
        )

    lines = [
        "# The compiled engine on the rideshare benchmark (whole process, one core)",
        "",
        f"Machine: {host}. Run {time.strftime('%Y-%m-%d')}, {took / 60:.0f} min in all. Each "
        f"run is a fresh process pinned to one core; events/s is the events over the process's "
        f"wall time from spawn to exit (interpreter start, imports, loading the cached kernel, "
        f"reading the CSV with pyarrow, the engine). Medians of {repeats} runs unless the "
        f"table says 1. Every strategy returned the same rows as the others in every "
        f"configuration (checked).",
        "",
        f"### Headline: {big:,} events, 50 queries sharing Travel+",
        "",
        "| strategy | runs | events/s | wall s | startup s | read s | engine s | peak RSS MB | "
        "lanes | shared bursts |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in results:
        if r["section"] == "headline":
            lines.append(
                f"| {r['strategy']} | {len(r['walls'])} | {r['events_per_s']:,.0f} | "  # type: ignore[arg-type]
                f"{r['wall_s']:.1f} | {r['startup_s']:.2f} | {r['read_s']:.2f} | "
                f"{r['engine_s']:.2f} | {r['peak_rss_mb']:.0f} | {r['lanes']} | "
                f"{r['shared_bursts']:,} / {r['bursts']:,} |"
            )
    lines += [
        "",
        f"### Number of queries, {small:,} events",
        "",
        "| k | strategy | events/s | vs greta | engine s | peak RSS MB | shared bursts |",
        "|---:|---|---:|---:|---:|---:|---:|",
    ]
    ks = sorted({int(r["k"]) for r in results if r["section"] == "sweep"})  # type: ignore[call-overload]
    for k in ks:
        g = find("sweep", k, "greta")
        for s in STRATEGIES:
            r = find("sweep", k, s)
            lines.append(
                f"| {k} | {s} | {r['events_per_s']:,.0f} | "
                f"{float(g['engine_s']) / float(r['engine_s']):.2f}x | {r['engine_s']:.2f} | "  # type: ignore[arg-type]
                f"{r['peak_rss_mb']:.0f} | {r['shared_bursts']:,} / {r['bursts']:,} |"
            )
    lines += [
        "",
        "(vs greta: greta's engine time over the strategy's, the part that sharing changes.)",
        "",
        "### The Python engine beside the compiled one (hamlet, 50 queries, one run each)",
        "",
        "| engine | events | events/s | engine s |",
        "|---|---:|---:|---:|",
    ]
    for r in results:
        if r["section"] == "python":
            lines.append(
                f"| {'compiled' if r['compiled'] else 'Python'} | {r['events']:,} | "
                f"{r['events_per_s']:,.0f} | {r['engine_s']:.2f} |"
            )
    head = find("headline", 50, "hamlet")
    tl = head["timeline"]
    lines += [
        "",
        f"### Memory: resident set after each chunk of {CHUNK_ROWS:,} rows (hamlet, "
        f"{big:,} events, 10-minute windows)",
        "",
        "| events processed | RSS MB |",
        "|---:|---:|",
        *[f"| {n:,} | {mb:.0f} |" for n, mb in tl],  # type: ignore[attr-defined]
    ]
    (RESULTS / "kernel_rideshare.md").write_text("\n".join(lines) + "\n")
    plot(results, ks, head)


def plot(results: list[dict[str, object]], ks: list[int], head: dict[str, object]) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (a, b) = plt.subplots(1, 2, figsize=(11, 4.2))
    for s, mark in zip(STRATEGIES, "os^", strict=True):
        ys = [
            next(
                float(r["events_per_s"])  # type: ignore[arg-type]
                for r in results
                if r["section"] == "sweep" and r["k"] == k and r["strategy"] == s
            )
            for k in ks
        ]
        a.plot(ks, ys, marker=mark, label=s)
    a.set_xlabel("queries sharing Travel+")
    a.set_ylabel("events per second (whole process)")
    a.set_yscale("log")
    a.set_title("rideshare, one core")
    a.grid(True, alpha=0.3)
    a.legend()
    xs = [n / 1e6 for n, _ in head["timeline"]]  # type: ignore[attr-defined]
    ys = [mb for _, mb in head["timeline"]]  # type: ignore[attr-defined]
    b.plot(xs, ys, marker=".")
    b.set_ylim(0, max(ys) * 1.2)
    b.set_xlabel("events processed (millions)")
    b.set_ylabel("resident memory (MB)")
    b.set_title("hamlet, 50 queries, 10-minute windows")
    b.grid(True, alpha=0.3)
    fig.tight_layout()
    fig.savefig(RESULTS / "kernel_rideshare.png", dpi=120)


if __name__ == "__main__":
    main()
