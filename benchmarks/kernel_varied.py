"""The varied workload of issue #15, whole process, one core: the headline beside the
uniform one of kernel_rideshare.py.

50 queries of workloads.py's patterns as a user would vary them
(:func:`workloads.varied_workload`): four window specs (10 min / 1 min, 15 min /
1 min, 20 min / 5 min, 10 min / 5 min), a speed threshold and a zone of their own
per query, ``GROUP-BY T.district`` (a qualified partition attribute), over a
generated rideshare stream of 2,000 drivers with millisecond times (10,000 events
per minute, trips of up to 16 legs, seed 11) and a text column ``zone``. Variants:
``none``; ``not``, every third query with ``NOT Accident`` before its travel legs;
``next-not``, every third query alternately with ``T.speed < NEXT(T).speed`` and
the NOT (a variant whose queries some run in the Python engine would be timed over
``--python-events`` only; today the kernel runs them all).

Every run is a fresh process pinned to one core that streams the CSV with
``iter_events`` in chunks of 500,000 rows into ``Runner.feed`` (hamlet); the
parent times it from spawn to exit (interpreter start, imports, reading, the
engine), median of ``--repeats``. Each variant's rows over its first
``--check-events`` events are checked equal to the Python reference engine's.

    .venv/bin/python benchmarks/kernel_varied.py             # 5M events, ~17 min here
    .venv/bin/python benchmarks/kernel_varied.py --quick     # 200k events, one repeat

Writes benchmarks/results/kernel_varied.{md,csv,png}; data is generated into
``--data`` (default: the system's temporary directory), never into the repository.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results"
CHUNK_ROWS = 500_000
DRIVERS = 2000
EVENTS_PER_MINUTE = 10_000
NUMERIC = {"Travel": {"duration", "speed"}}


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
    from workloads import varied_workload

    plans = compile_workload(parse(varied_workload(50, str(config["variant"]))))
    runner = Runner(plans, "hamlet")
    rows = []
    events = 0
    read = 0.0
    chunks = iter_events(
        str(config["path"]),
        numeric=NUMERIC,
        chunk_rows=CHUNK_ROWS,
        attributes=attributes_read(plans),
    )
    imported = time.perf_counter()
    limit = int(config["events"])  # type: ignore[call-overload]
    while events < limit:
        t = time.perf_counter()
        chunk = next(chunks, None)
        read += time.perf_counter() - t
        if chunk is None:
            break
        batch = chunk.events
        if events + len(batch) > limit:
            batch = batch.take(slice(0, limit - events))
        events += len(batch)
        rows += runner.feed(batch)
    rows += runner.finish()
    finished = time.perf_counter()
    return {
        "events": events,
        "rows": len(rows),
        "startup_s": imported - started,
        "read_s": read,
        "engine_s": finished - imported - read,
        "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
        "python_queries": len(runner.sharing.on("python")),
    }


def one_run(
    config: dict[str, object], script: Path | None = None
) -> tuple[float, dict[str, object]]:
    """(wall seconds from spawn to exit, the report) of ``script --child config`` in a
    fresh process (kernel_windows.py runs its own through this)."""
    started = time.perf_counter()
    out = subprocess.run(
        [sys.executable, str(script or Path(__file__).resolve()), "--child", json.dumps(config)],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONHASHSEED": "0"},
    )
    wall = time.perf_counter() - started
    if out.returncode:
        raise SystemExit(f"run {config} failed:\n{out.stderr}")
    return wall, json.loads(out.stdout.strip().splitlines()[-1])


def ensure_data(directory: Path, events: int) -> Path:
    """The stream as CSV (generated once): times in seconds with milliseconds (the
    events of a second spread over it, in order), and ``zone`` (``z`` + district)."""
    from trendagg.generate import RIDESHARE_COLUMNS, rideshare, write_stream

    path = directory / f"varied_{events}.csv"
    if path.exists():
        return path
    directory.mkdir(parents=True, exist_ok=True)
    print(f"generating {path} ...", flush=True)

    def records():  # type: ignore[no-untyped-def]
        stream = rideshare(
            events, drivers=DRIVERS, events_per_minute=EVENTS_PER_MINUTE, max_legs=16, seed=11
        )
        for i, r in enumerate(stream):
            r["time"] = (i * 60_000 // EVENTS_PER_MINUTE) / 1000
            if r.get("district") is not None:
                r["zone"] = f"z{r['district']}"
            yield r

    part = path.with_suffix(".part.csv")
    write_stream(records(), str(part), columns=(*RIDESHARE_COLUMNS, "zone"))
    part.rename(path)
    return path


def check(path: Path, variant: str, n: int) -> int:
    """The kernel's rows equal the reference engine's over the first n events."""
    sys.path.insert(0, str(HERE))
    from trendagg.engine import run_strategy
    from trendagg.io.readers import read_events
    from trendagg.language import parse
    from trendagg.plan.compile import compile_workload
    from workloads import varied_workload

    plans = compile_workload(parse(varied_workload(50, variant)))
    batch = read_events(path, numeric=NUMERIC).events.take(slice(0, n))
    key = lambda r: (r.query, r.window_start, repr(r.group), repr(sorted(r.values.items())))  # noqa: E731
    kernel = sorted(map(key, run_strategy(plans, batch, "hamlet")))
    reference = sorted(map(key, run_strategy(plans, batch, "hamlet", compiled=False)))
    if kernel != reference:
        raise SystemExit(f"variant {variant}: the kernel's rows differ from the reference's")
    return len(kernel)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--events", type=int, default=5_000_000)
    ap.add_argument("--python-events", type=int, default=20_000)
    ap.add_argument("--check-events", type=int, default=5_000)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--variants", default="none,not,next-not")
    ap.add_argument("--quick", action="store_true", help="200,000 events, one repeat")
    ap.add_argument("--data", type=Path, default=Path(tempfile.gettempdir()) / "trendagg-bench")
    ap.add_argument("--child", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        print(json.dumps(child(json.loads(args.child))))
        return
    if args.quick:
        args.events, args.repeats = 200_000, 1
    sys.path.insert(0, str(HERE))
    from kernel_rideshare import machine

    path = ensure_data(args.data, args.events)
    cpu = sorted(os.sched_getaffinity(0))[-1]
    warm = {"path": str(path), "variant": "not", "events": 20_000, "cpu": cpu}
    one_run(warm)  # compiles the kernel (cached) outside the timings
    results = []
    for variant in args.variants.split(","):
        checked = check(path, variant, args.check_events)
        config = {"path": str(path), "variant": variant, "events": args.events, "cpu": cpu}
        report = one_run({**config, "events": 20_000})[1]
        if report["python_queries"]:
            config["events"] = args.python_events
        walls, runs = [], []
        for _ in range(args.repeats):
            wall, report = one_run(config)
            walls.append(wall)
            runs.append(report)
        result = {"variant": variant, **runs[0], "checked_rows": checked}
        result["wall_s"] = statistics.median(walls)
        result["events_per_s"] = result["events"] / result["wall_s"]
        for phase in ("startup_s", "read_s", "engine_s"):
            result[phase] = statistics.median(r[phase] for r in runs)
        print(
            f"  {variant:<9} {result['events']:>10,} events {result['events_per_s']:>10,.0f} ev/s "
            f"(startup {result['startup_s']:.2f} s, read {result['read_s']:.2f} s, engine "
            f"{result['engine_s']:.2f} s) peak {result['peak_rss_mb']:.0f} MB, "
            f"{result['python_queries']} queries in Python",
            flush=True,
        )
        results.append(result)
    write(results, machine(), args)


def write(results: list[dict[str, object]], host: str, args: argparse.Namespace) -> None:
    RESULTS.mkdir(exist_ok=True)
    fields = [
        "variant",
        "events",
        "wall_s",
        "events_per_s",
        "startup_s",
        "read_s",
        "engine_s",
        "peak_rss_mb",
        "python_queries",
        "rows",
        "checked_rows",
    ]
    with open(RESULTS / "kernel_varied.csv", "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=fields, extrasaction="ignore")
        w.writeheader()
        w.writerows(results)
    lines = [
        "# The varied workload (issue #15), whole process, one core",
        "",
        f"Machine: {host}. {time.strftime('%Y-%m-%d')}; medians of {args.repeats} fresh "
        f"processes; `benchmarks/kernel_varied.py`.",
        "",
        "50 queries, four window specs (10 min / 1 min, 15 min / 1 min, 20 min / 5 min, "
        "10 min / 5 min), a speed threshold and a zone per query, `GROUP-BY T.district`, "
        f"{DRIVERS:,} drivers, millisecond times. Rows checked equal to the Python reference "
        f"engine over the first {args.check_events:,} events of each variant "
        f"({', '.join(str(r['checked_rows']) for r in results)} rows).",
        "",
        "| variant | events | events/s (whole process) | startup s | read s | engine s "
        "| peak MB | queries in Python |",
        "|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in results:
        lines.append(
            f"| {r['variant']} | {r['events']:,} | {r['events_per_s']:,.0f} | "
            f"{r['startup_s']:.2f} | {r['read_s']:.2f} | {r['engine_s']:.2f} | "
            f"{r['peak_rss_mb']:.0f} | {r['python_queries']} |"
        )
    (RESULTS / "kernel_varied.md").write_text("\n".join(lines) + "\n")
    plot(results)


def plot(results: list[dict[str, object]]) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6, 3.2))
    names = [f"{r['variant']}\n({r['events']:,} events)" for r in results]
    rates = [float(r["events_per_s"]) for r in results]  # type: ignore[arg-type]
    ax.bar(names, rates, color="#4c72b0")
    for i, v in enumerate(rates):
        ax.text(i, v, f"{v:,.0f}", ha="center", va="bottom", fontsize=8)
    ax.set_ylabel("events/s, whole process")
    ax.set_title("Varied workload (50 queries, hamlet, one core)")
    fig.tight_layout()
    fig.savefig(RESULTS / "kernel_varied.png", dpi=120)


if __name__ == "__main__":
    main()
