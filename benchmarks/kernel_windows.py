"""Many windows per event (issue #15): one day of windows sliding by a day, an hour, a
minute and a second, whole process, one core, with the peak memory.

One query, ``RETURN COUNT(*), SUM(T.duration) PATTERN SEQ(Request R, Travel T+,
Dropoff D) WHERE [driver] WITHIN 1 day SLIDE ...``, over the generated rideshare
stream of kernel_rideshare.py (1,000 drivers, 10,000 events per minute, trips of up
to 16 legs, seed 11). With SLIDE 1 s every event falls into 86,400 windows. From
``lower.lazy.LAZY_MIN_WINDOWS`` windows per event the kernel keeps the registers by the
start of the trends (lazy windows: an event costs the same for any number of
windows); below, one set of registers per window (window slots). ``--slots`` runs
the window-slot layout too where it fits in memory (a day of 1-hour slides), for the
comparison.

Every run is a fresh process pinned to one core that streams the CSV with
``iter_events`` in chunks of 500,000 rows into ``Runner.feed`` (hamlet); the
parent times it from spawn to exit, median of ``--repeats``; peak memory is the
child's ru_maxrss. Rows are checked: lazy windows (forced, whatever the number of
windows) equal window slots over the first ``--check-events`` events at each slide
that both layouts run (1 day, 1 hour, 1 minute). ``auto`` is the kernel's choice.

    .venv/bin/python benchmarks/kernel_windows.py            # ~3 min here
    .venv/bin/python benchmarks/kernel_windows.py --events 100000 --repeats 1

Writes benchmarks/results/kernel_windows.{md,csv}; data goes to ``--data``.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results"
CHUNK_ROWS = 500_000
SLIDES = ["1 day", "1 hour", "1 min", "1 s"]
QUERY = (
    "q1: RETURN COUNT(*), SUM(T.duration) PATTERN SEQ(Request R, Travel T+, Dropoff D) "
    "WHERE [driver] WITHIN 1 day SLIDE {slide};"
)


def child(config: dict[str, object]) -> dict[str, object]:
    """One run, in this process."""
    started = time.perf_counter()
    os.sched_setaffinity(0, {int(config["cpu"])})  # type: ignore[call-overload]
    sys.path.insert(0, str(HERE))
    import resource

    from kernel_rideshare import kernel_stats

    from trendagg.engine import Runner
    from trendagg.io.readers import iter_events
    from trendagg.kernels.lower import lazy
    from trendagg.language import parse
    from trendagg.plan.compile import attributes_read, compile_workload

    if config["layout"] == "slots":  # (else "lazy": lazy windows at any count; "auto")
        lazy.LAZY_MIN_WINDOWS = 2**62
    elif config["layout"] == "lazy":
        lazy.LAZY_MIN_WINDOWS = 1
    plans = compile_workload(parse(QUERY.format(slide=config["slide"])))
    runner = Runner(plans, "hamlet")
    rows = []
    events = 0
    limit = int(config["events"])  # type: ignore[call-overload]
    for chunk in iter_events(
        str(config["path"]),
        numeric={"Travel": {"duration"}},
        chunk_rows=CHUNK_ROWS,
        attributes=attributes_read(plans),
    ):
        batch = chunk.events
        if events + len(batch) > limit:
            batch = batch.take(slice(0, limit - events))
        events += len(batch)
        rows += runner.feed(batch)
        if events >= limit:
            break
    rows += runner.finish()
    finished = time.perf_counter()
    return {
        "events": events,
        "rows": len(rows),
        "run_s": finished - started,
        "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
        "lazy": int(runner.compiled.prog.q_lazy[0]),
        **kernel_stats(runner, rows),
    }


def one_run(config: dict[str, object]) -> tuple[float, dict[str, object]]:
    from kernel_varied import one_run as spawn

    return spawn(config, Path(__file__).resolve())


def run(config: dict[str, object], repeats: int) -> dict[str, object]:
    walls, runs = [], []
    for _ in range(repeats):
        wall, report = one_run(config)
        walls.append(wall)
        runs.append(report)
    result = {**config, **runs[0], "wall_s": statistics.median(walls), "walls": walls}
    result["events_per_s"] = result["events"] / result["wall_s"]
    print(
        f"  SLIDE {config['slide']:<7} {config['layout']:<5} {result['events']:>10,} events "
        f"{result['wall_s']:7.2f} s  {result['events_per_s']:>11,.0f} ev/s  peak "
        f"{result['peak_rss_mb']:5.0f} MB  lanes {result['lanes']}  rebuilds {result['rebuilds']}",
        flush=True,
    )
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=1_000_000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--check-events", type=int, default=100_000)
    parser.add_argument("--cpu", type=int, default=1)
    parser.add_argument("--data", type=Path, default=Path(tempfile.gettempdir()) / "trendagg-bench")
    parser.add_argument("--child")
    args = parser.parse_args()
    if args.child:
        print(json.dumps(child(json.loads(args.child))))
        return
    sys.path.insert(0, str(HERE))
    from kernel_rideshare import ensure_data, machine

    path = ensure_data(args.data, 1_000_000 if args.events <= 1_000_000 else args.events)
    base = {"path": str(path), "cpu": args.cpu}
    one_run({**base, "slide": "1 day", "layout": "lazy", "events": 1000})  # compile
    print("rows: lazy windows == window slots over the first", args.check_events, "events")
    for slide in SLIDES[:3]:
        got = [
            one_run({**base, "slide": slide, "layout": layout, "events": args.check_events})[1]
            for layout in ("lazy", "slots")
        ]
        if got[0]["digest"] != got[1]["digest"]:
            raise SystemExit(f"SLIDE {slide}: lazy windows and window slots differ")
        print(f"  SLIDE {slide}: {got[0]['rows']} rows equal", flush=True)
    results = []
    for slide in SLIDES:
        results.append(run({**base, "slide": slide, "layout": "auto", "events": args.events},
                           args.repeats))  # fmt: skip
    for slide in SLIDES[1:2]:
        results.append(run({**base, "slide": slide, "layout": "slots", "events": args.events},
                           args.repeats))  # fmt: skip
    write(results, machine(), args)


def write(results: list[dict[str, object]], head: str, args: argparse.Namespace) -> None:
    RESULTS.mkdir(exist_ok=True)
    fields = ["slide", "layout", "lazy", "events", "rows", "wall_s", "events_per_s",
              "peak_rss_mb", "lanes", "rebuilds"]  # fmt: skip
    with open(RESULTS / "kernel_windows.csv", "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=fields, extrasaction="ignore")
        w.writeheader()
        w.writerows(results)
    day = next(r for r in results if r["slide"] == "1 day")
    lines = [
        "# One day of windows, sliding by a day down to a second (issue #15)",
        "",
        f"Machine: {head}. {time.strftime('%Y-%m-%d')}; `benchmarks/kernel_windows.py`, "
        f"medians of {args.repeats} fresh processes (whole process: start-up, reading, the "
        f"engine, the rows).",
        "",
        f"`{QUERY.format(slide='...')}` over {day['events']:,} generated rideshare events "
        "(1,000 drivers). Rows checked: lazy windows equal window slots over the first "
        f"{args.check_events:,} events at SLIDE 1 day, 1 hour and 1 min.",
        "",
        "| SLIDE | windows per event | layout | rows | seconds | events/s | vs SLIDE 1 day "
        "| peak MB | lanes |",
        "|---|---:|---|---:|---:|---:|---:|---:|---:|",
    ]
    per = {"1 day": 1, "1 hour": 24, "1 min": 1440, "1 s": 86400}
    for r in results:
        layout = "lazy windows" if r["lazy"] else "window slots"
        lines.append(
            f"| {r['slide']} | {per[str(r['slide'])]:,} | {layout} | {r['rows']:,} | "
            f"{r['wall_s']:.2f} | {r['events_per_s']:,.0f} | "
            f"{float(r['wall_s']) / float(day['wall_s']):.2f}x | {r['peak_rss_mb']:.0f} | "
            f"{r['lanes']} |"
        )
    (RESULTS / "kernel_windows.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
