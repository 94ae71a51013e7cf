"""The compiled engine along the axes a user changes, one at a time, side by side.

The 50 queries of workloads.py (patterns sharing ``Travel T+``, partitioned per
driver) over the rideshare generator, in memory, with one thing changed per
configuration from the base (one window spec of 2 windows per event, 1,000 drivers,
no predicate, no GROUP-BY, whole-second times):

* windows per event: ``WITHIN 10 min SLIDE`` 10 min, 5 min, 2 min, 1 min, 30 s, 10 s
  (1 to 60 windows per event; from ``lower.lazy.LAZY_MIN_WINDOWS`` the kernel keeps
  lazy windows, see benchmarks/kernel_windows.py);
* partitions: 50, 1,000 and 20,000 drivers;
* GROUP-BY: none, ``district`` (unqualified: every event's district) and
  ``T.district`` (qualified: the travel legs' district only);
* predicates: none, a numeric threshold per query, a string per query (on
  ``zone``, a text column made from the district: ``z0`` ... ``z7``);
* times: whole seconds, or with milliseconds (the events of one second spread over
  it, order kept);
* NEXT and NOT: every third query with ``T.speed < NEXT(T).speed``, or with
  ``NOT Accident`` before its travel legs.

Each configuration runs ``Runner.feed`` over the events in chunks of 500,000 (data
generated and read before timing; the kernel is compiled by a warm-up run), pinned
to one core, median of ``--repeats``; the Runner's plan says how many queries the
compiled engine runs and how many the Python engine. Where the Python engine runs
queries, fewer events are timed (``--python-events``). Every configuration's rows
are checked equal to the reference engine (``compiled=False``) on its first
``--check-events`` events.

    .venv/bin/python benchmarks/kernel_axes.py                  # ~6 min here
    .venv/bin/python benchmarks/kernel_axes.py --events 100000 --repeats 1

Writes benchmarks/results/kernel_axes.{md,csv,png}; data is generated into
``--data`` (default: the system's temporary directory), never into the repository.
"""

from __future__ import annotations

import argparse
import csv
import os
import statistics
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results"
CHUNK_ROWS = 500_000
BASE: dict[str, Any] = {
    "windows": ("WITHIN 10 min SLIDE 5 min",),
    "drivers": 1000,
    "group": "none",
    "predicate": "none",
    "times": "seconds",
    "variant": "none",
}
AXES: list[tuple[str, str, dict[str, Any]]] = [
    *[
        ("windows per event", f"{n} (SLIDE {s})", {"windows": (f"WITHIN 10 min SLIDE {s}",)})
        for n, s in (
            ("1", "10 min"),
            ("2", "5 min"),
            ("5", "2 min"),
            ("10", "1 min"),
            ("20", "30 s"),
            ("60", "10 s"),
        )
    ],
    *[("partitions", f"{d:,} drivers", {"drivers": d}) for d in (50, 1000, 20_000)],
    *[("GROUP-BY", g, {"group": g}) for g in ("none", "district", "T.district")],
    *[("predicates", p, {"predicate": p}) for p in ("none", "numeric", "string")],
    *[("times", t, {"times": t}) for t in ("seconds", "milliseconds")],
    *[("NEXT, NOT", v, {"variant": v}) for v in ("none", "next", "not")],
]


def events_for(data: Path, n: int, drivers: int, times: str) -> Any:
    """The rideshare events (generated once as CSV into ``data``) as an EventBatch with
    the text column ``zone``; with milliseconds, each second's events spread over it."""
    import numpy as np

    from trendagg.generate import rideshare, write_stream
    from trendagg.io.batch import Column
    from trendagg.io.readers import read_events

    path = data / f"axes_{n}_{drivers}.csv"
    if not path.exists():
        part = path.with_suffix(".part.csv")
        stream = rideshare(n, drivers=drivers, events_per_minute=10_000, max_legs=16, seed=11)
        write_stream(stream, str(part))
        part.rename(path)
    batch = read_events(path, numeric={"Travel": {"duration", "speed"}}).events
    district = batch.columns["district"]
    words = [f"z{d}" for d in range(int(district.values.max()) + 1)]
    zone = Column("text", district.values.astype(np.int32), district.valid.copy(), words)
    batch = replace(batch, columns={**batch.columns, "zone": zone})
    if times == "milliseconds":
        secs = batch.times
        first = np.searchsorted(secs, secs, side="left")
        count = np.searchsorted(secs, secs, side="right") - first
        spread = np.floor((np.arange(len(secs)) - first) * 1000 / count) / 1000
        batch = replace(batch, times=secs + spread, time_ints=None)
    return batch


def feed(plans: list[Any], batch: Any, *, compiled: bool = True) -> tuple[float, list[Any]]:
    from trendagg.engine import Runner

    runner = Runner(plans, "hamlet", compiled=compiled)
    rows = []
    started = time.perf_counter()
    for start in range(0, len(batch), CHUNK_ROWS):
        rows += runner.feed(batch.take(slice(start, min(len(batch), start + CHUNK_ROWS))))
    rows += runner.finish()
    return time.perf_counter() - started, rows


def same(a: list[Any], b: list[Any]) -> bool:
    key = lambda r: (r.query, r.window_start, repr(r.group), repr(sorted(r.values.items())))  # noqa: E731
    return sorted(map(key, a)) == sorted(map(key, b))


def axis_text(config: dict[str, Any]) -> str:
    """The 50 queries of a configuration of the sweep (BASE with its change)."""
    from workloads import axis_workload

    return axis_workload(
        50,
        windows=config["windows"],
        predicate=config["predicate"],
        group=config["group"],
        variant=config["variant"],
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--events", type=int, default=1_000_000)
    ap.add_argument("--python-events", type=int, default=20_000)
    ap.add_argument("--check-events", type=int, default=20_000)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--data", type=Path, default=Path(tempfile.gettempdir()) / "trendagg-bench")
    args = ap.parse_args()
    os.sched_setaffinity(0, {sorted(os.sched_getaffinity(0))[-1]})
    sys.path.insert(0, str(HERE))
    from kernel_rideshare import machine

    from trendagg.language import parse
    from trendagg.optimizer.plan import sharing_plan
    from trendagg.plan.compile import compile_workload

    args.data.mkdir(parents=True, exist_ok=True)
    began = time.perf_counter()
    results = []
    for axis, label, change in AXES:
        config = {**BASE, **change}
        plans = compile_workload(parse(axis_text(config)))
        plan = sharing_plan(plans, "hamlet")
        python = len(plan.on("python"))
        batch = events_for(args.data, args.events, config["drivers"], config["times"])
        timed = batch.take(slice(0, args.python_events)) if python else batch
        check = batch.take(slice(0, args.check_events))
        feed(plans, check)  # (warm-up: the kernel loaded, numba's dispatch ready)
        runs = [feed(plans, timed)[0] for _ in range(args.repeats)]
        equal = same(feed(plans, check)[1], feed(plans, check, compiled=False)[1])
        if not equal:
            raise SystemExit(f"{axis} {label}: the compiled engine differs from the reference")
        seconds = statistics.median(runs)
        row = {
            "axis": axis,
            "configuration": label,
            "events": len(timed),
            "compiled_queries": 50 - python,
            "python_queries": python,
            "engine_s": round(seconds, 3),
            "events_per_s": round(len(timed) / seconds),
            "runs_s": " ".join(f"{r:.2f}" for r in runs),
            "checked_equal": f"{len(check):,} events",
        }
        results.append(row)
        print(row, flush=True)
    write(results, machine(), args, time.perf_counter() - began)


def write(rows: list[dict[str, Any]], machine: str, args: Any, elapsed: float) -> None:
    RESULTS.mkdir(exist_ok=True)
    with (RESULTS / "kernel_axes.csv").open("w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    base = next(
        r["events_per_s"]
        for r in rows
        if r["axis"] == "windows per event" and r["configuration"].startswith("2 ")
    )
    lines = [
        "# The compiled engine along each axis (50 queries, rideshare, hamlet)",
        "",
        f"Machine: {machine}. Run {time.strftime('%Y-%m-%d')}, {elapsed / 60:.0f} min in all. "
        f"Engine time of `Runner.feed` over events in memory (chunks of {CHUNK_ROWS:,}), "
        f"median of {args.repeats}; {args.events:,} events, or {args.python_events:,} where "
        "the Python engine runs queries; every configuration's rows equal the reference "
        f"engine's on its first {args.check_events:,} events. 'vs base': events/s over the "
        "base configuration's (2 windows per event, 1,000 drivers, no predicate, no GROUP-BY, "
        "whole seconds).",
        "",
        "| axis | configuration | compiled / Python queries | events | engine s | events/s | vs base |",
        "|---|---|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        lines.append(
            f"| {r['axis']} | {r['configuration']} | {r['compiled_queries']} / {r['python_queries']} "
            f"| {r['events']:,} | {r['engine_s']:.2f} | {r['events_per_s']:,} "
            f"| {_ratio(r['events_per_s'] / base)} |"
        )
    (RESULTS / "kernel_axes.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))
    plot(rows, RESULTS / "kernel_axes.png")


def _ratio(x: float) -> str:
    return f"{x:.2f}x" if x >= 0.1 else f"{x:.2g}x"


def plot(rows: list[dict[str, Any]], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(10, 5))
    labels = [f"{r['axis']}: {r['configuration']}" for r in rows]
    colors = ["tab:blue" if not r["python_queries"] else "tab:red" for r in rows]
    ax.barh(range(len(rows)), [r["events_per_s"] for r in rows], color=colors)
    ax.set_yticks(range(len(rows)))
    ax.set_yticklabels(labels, fontsize=7)
    ax.invert_yaxis()
    ax.set_xscale("log")
    ax.set_xlabel("engine events/s (log; red: some queries run in the Python engine)")
    ax.set_title("compiled engine, 50 queries, one axis changed at a time")
    ax.grid(True, axis="x", alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


if __name__ == "__main__":
    main()
