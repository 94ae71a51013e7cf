"""HAMLET's first experiment shape (Section 5.2) on the rideshare generator.

Workloads of up to 50 queries with different patterns sharing Travel+ (see
workloads.py); strategies hamlet, hamlet-static, greta and twostep side by side
in one run, on the Python engine (``compiled=False``: the engine whose
sharing counters these tables report; the compiled engine has its own
benchmark, kernel_rideshare.py). Each configuration runs in its own process
(so peak memory is its own), three times; the tables quote medians.

    .venv/bin/python benchmarks/hamlet_rideshare.py            # full run, ~10 min
    .venv/bin/python benchmarks/hamlet_rideshare.py --quick    # smoke run, ~1 min

Writes benchmarks/results/hamlet_rideshare.{md,csv,png}.
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
import time
from collections.abc import Callable
from pathlib import Path

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results"
TWOSTEP_TIMEOUT = 60.0


def child(config: dict[str, object]) -> dict[str, object]:
    """Run one configuration in this process and measure it."""
    import resource

    sys.path.insert(0, str(HERE))
    from trendagg.engine import run_strategy
    from trendagg.generate import rideshare
    from trendagg.io import from_records
    from trendagg.language import parse
    from trendagg.plan.compile import compile_workload
    from workloads import sharing_workload

    records = rideshare(
        int(config["events"]),  # type: ignore[arg-type]
        events_per_minute=int(config["epm"]),  # type: ignore[arg-type]
        max_legs=int(config["legs"]),  # type: ignore[arg-type]
        seed=11,
    )
    events = from_records(records).events
    plans = compile_workload(
        parse(sharing_workload(int(config["k"]), predicates=bool(config["predicates"])))
    )  # type: ignore[arg-type]
    stats: dict[str, object] = {}
    started = time.perf_counter()
    rows = run_strategy(
        plans,
        events,
        str(config["strategy"]),
        stats=stats,
        trend_limit=2_000_000,
        compiled=False,
    )
    seconds = time.perf_counter() - started
    windows = len({(r.query, r.window_start) for r in rows})
    hamlet = stats.get("hamlet")
    return {
        "seconds": seconds,
        "events_per_s": len(events) / seconds,
        "ms_per_window": 1000 * seconds / max(windows, 1),
        "rows": len(rows),
        "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
        "snapshots": getattr(hamlet, "snapshots", 0),
        "event_snapshots": getattr(hamlet, "event_snapshots", 0),
        "bursts": getattr(hamlet, "bursts", 0),
        "shared_bursts": getattr(hamlet, "shared_bursts", 0),
        "result_digest": hash(
            tuple(sorted((r.query, r.window_start, repr(sorted(r.values.items()))) for r in rows))
        ),
    }


def fresh_runs(
    script: str,
    config: dict[str, object],
    repeats: int,
    *,
    timeout: float | None = None,
    once: bool = False,
) -> dict[str, object]:
    """``script --child CONFIG`` in ``repeats`` fresh processes (one if ``once``): the
    configuration with the median of each measured value (the first run's result
    digest), ``status`` ok, or why it stopped (a timeout, the child's last error line)."""
    runs = []
    for _ in range(1 if once else repeats):
        try:
            proc = subprocess.run(
                [sys.executable, script, "--child", json.dumps(config)],
                capture_output=True,
                text=True,
                timeout=timeout,
                env={**os.environ, "PYTHONHASHSEED": "0"},
            )
        except subprocess.TimeoutExpired:
            return {**config, "status": f"does not finish in {timeout:.0f} s"}
        if proc.returncode != 0:
            last = (proc.stderr.strip().splitlines() or ["failed"])[-1]
            return {**config, "status": last[:160]}
        runs.append(json.loads(proc.stdout.strip().splitlines()[-1]))
    out: dict[str, object] = {**config, "status": "ok", "runs": len(runs)}
    for key in runs[0]:
        values = [r[key] for r in runs]
        out[key] = statistics.median(values) if key != "result_digest" else values[0]
    return out


def measure(config: dict[str, object], repeats: int) -> dict[str, object]:
    """Median of ``repeats`` runs, each in a fresh process (twostep: one run, enough to
    show where it stands, within TWOSTEP_TIMEOUT)."""
    twostep = config["strategy"] == "twostep"
    return fresh_runs(
        __file__,
        config,
        repeats,
        timeout=TWOSTEP_TIMEOUT if twostep else None,
        once=twostep,
    )


def write_rows(rows: list[dict[str, object]], path: Path) -> None:
    """The rows as CSV, with every key any row has as a column."""
    names = list(dict.fromkeys(k for r in rows for k in r))
    with path.open("w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=names)
        writer.writeheader()
        writer.writerows(rows)


def run_sweeps(
    sweeps: list[tuple[str, str, list[dict[str, object]]]],
    measure: Callable[[dict[str, object]], dict[str, object]],
    table: Callable[[list[dict[str, object]], str], list[str]],
    shown: tuple[str, ...] = (),
) -> tuple[list[str], list[tuple[str, str, list[dict[str, object]]]], list[dict[str, object]]]:
    """Each sweep's (title, varied key, configurations) measured, one JSON line printed
    per configuration (``shown``, the varied key, strategy, status, events/s) and
    checked: every strategy at a point returns the same rows. Returns the markdown
    sections (``table`` of each sweep's results), what to plot, and every result."""
    sections: list[str] = []
    plotted = []
    everything: list[dict[str, object]] = []
    for title, vary, configs in sweeps:
        rows = []
        for config in configs:
            result = measure(config)
            rows.append(result)
            keys = (*shown, vary, "strategy", "status", "events_per_s")
            print(json.dumps({k: result.get(k) for k in keys}), flush=True)
        for r in rows:
            same = {x["result_digest"] for x in rows if x["status"] == "ok" and x[vary] == r[vary]}
            if len(same) > 1:
                raise SystemExit(f"strategies disagree: {title}, {vary}={r[vary]}")
        sections += [f"## {title}", "", *table(rows, vary), ""]
        plotted.append((title, vary, rows))
        everything += rows
    return sections, plotted, everything


def cpu_model() -> str:
    """The CPU's model name (Linux), else what the platform says."""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine() or "unknown CPU"


def machine() -> str:
    return (
        f"{cpu_model()}, {os.cpu_count()} cores, Python {platform.python_version()}, "
        f"{platform.system()}"
    )


def experiments(quick: bool) -> list[tuple[str, list[dict[str, object]]]]:
    ks = [1, 5, 10, 25, 50] if not quick else [1, 10]
    base = {"events": 20_000 if not quick else 4_000, "epm": 2_000, "legs": 16, "predicates": False}
    strategies = ["hamlet", "hamlet-static", "greta"]
    exp1 = [{**base, "k": k, "strategy": s} for k in ks for s in strategies]
    exp1 += [
        {**base, "events": 2_000, "k": 1, "strategy": "twostep"},
        {**base, "events": 2_000, "k": 1, "strategy": "greta"},
    ]
    epms = [500, 1_000, 2_000, 4_000] if not quick else [1_000, 4_000]
    exp2 = [
        {**base, "k": 25 if not quick else 10, "epm": e, "strategy": s}
        for e in epms
        for s in strategies
    ]
    legs = [4, 16, 64] if not quick else [4, 16]
    exp3 = [
        {**base, "k": 25 if not quick else 10, "legs": n, "strategy": s}
        for n in legs
        for s in strategies
    ]
    exp4 = [
        {**base, "k": k, "predicates": True, "strategy": s}
        for k in ([10, 25, 50] if not quick else [10])
        for s in strategies
    ]
    return [
        ("number of queries (events/min 2,000, up to 16 legs a trip)", exp1),
        ("events per minute (25 queries)", exp2),
        ("burst size: travel legs per trip (25 queries)", exp3),
        ("local predicates that differ per query: event-level snapshots", exp4),
    ]


def table(rows: list[dict[str, object]], vary: str) -> list[str]:
    lines = [
        f"| {vary} | strategy | events | events/s | vs greta | ms per window | peak RSS MB | snapshots (event-level) | shared bursts |",
        "|---:|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    greta = {
        (r[vary], r["events"]): r.get("events_per_s")
        for r in rows
        if r["strategy"] == "greta" and r["status"] == "ok"
    }
    for r in rows:
        if r["status"] != "ok":
            lines.append(
                f"| {r[vary]} | {r['strategy']} | {r['events']:,} | {r['status']} | | | | | |"
            )
            continue
        ref = greta.get((r[vary], r["events"]))
        ratio = f"{r['events_per_s'] / ref:.2f}x" if ref else ""
        snaps = (
            f"{int(r['snapshots']):,} ({int(r['event_snapshots']):,})"
            if r["strategy"].startswith("hamlet")
            else ""
        )
        shared = (
            f"{int(r['shared_bursts']):,} / {int(r['bursts']):,}"
            if r["strategy"].startswith("hamlet")
            else ""
        )
        lines.append(
            f"| {r[vary]} | {r['strategy']} | {r['events']:,} | {r['events_per_s']:,.0f} | {ratio} | "
            f"{r['ms_per_window']:.1f} | {r['peak_rss_mb']:.0f} | {snaps} | {shared} |"
        )
    return lines


HAMLET_STYLES = {"hamlet": "o-", "hamlet-static": "s--", "greta": "^:"}


def plot(
    groups: list[tuple[str, str, list[dict[str, object]]]],
    path: Path,
    styles: dict[str, str] = HAMLET_STYLES,
) -> None:
    """Events per second along each group's axis, a line per strategy of ``styles``
    (strategy -> matplotlib line style), over the group's first event count."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, len(groups), figsize=(5 * len(groups), 4))
    for ax, (title, vary, rows) in zip(axes, groups, strict=True):
        for strategy, style in styles.items():
            pts = sorted(
                (r[vary], r["events_per_s"])
                for r in rows
                if r["strategy"] == strategy
                and r["status"] == "ok"
                and r["events"] == rows[0]["events"]
            )
            if pts:
                ax.plot([p[0] for p in pts], [p[1] for p in pts], style, label=strategy)
        ax.set_title(title, fontsize=9)
        ax.set_xlabel(vary)
        ax.set_ylabel("events per second (median)")
        ax.set_yscale("log")
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=120)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--child", default=None, help=argparse.SUPPRESS)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    if args.child is not None:
        print(json.dumps(child(json.loads(args.child))))
        return
    RESULTS.mkdir(parents=True, exist_ok=True)
    started = time.time()
    sections = []
    all_rows: list[dict[str, object]] = []
    plotted = []
    for (title, configs), vary in zip(
        experiments(args.quick), ["k", "epm", "legs", "k"], strict=True
    ):
        rows = []
        for config in configs:
            result = measure(config, args.repeats)
            rows.append(result)
            print(
                json.dumps(
                    {
                        k: result.get(k)
                        for k in (
                            "k",
                            "epm",
                            "legs",
                            "predicates",
                            "strategy",
                            "status",
                            "events_per_s",
                        )
                    }
                ),
                flush=True,
            )
        # every strategy must agree on the results of a configuration
        for r in rows:
            same = [
                x
                for x in rows
                if x["status"] == "ok"
                and r["status"] == "ok"
                and x[vary] == r[vary]
                and x["events"] == r["events"]
            ]
            if len({x["result_digest"] for x in same}) > 1:
                raise SystemExit(
                    f"strategies disagree at {vary}={r[vary]}: {[(x['strategy'], x['result_digest']) for x in same]}"
                )
        sections.append(f"### {title}\n\n" + "\n".join(table(rows, vary)))
        all_rows.extend({**r, "experiment": title} for r in rows)
        plotted.append((title, vary, rows))
    suffix = "_quick" if args.quick else ""
    md = RESULTS / f"hamlet_rideshare{suffix}.md"
    md.write_text(
        "# HAMLET vs GRETA on the rideshare stream\n\n"
        f"Machine: {machine()}. Run {time.strftime('%Y-%m-%d')}, {time.time() - started:.0f} s in all; "
        f"each figure is the median of {args.repeats} runs in fresh processes (twostep: one run, "
        f"{TWOSTEP_TIMEOUT:.0f} s budget). Events/s is engine time over events in memory (reading "
        "excluded); ms per window is engine time divided by the (query, window) rows; every "
        "strategy returned the same rows in every configuration (checked).\n\n"
        + "\n\n".join(sections)
        + "\n"
    )
    with (RESULTS / f"hamlet_rideshare{suffix}.csv").open("w", newline="") as f:
        keys = sorted({k for r in all_rows for k in r})
        writer = csv.DictWriter(f, fieldnames=keys)
        writer.writeheader()
        writer.writerows(all_rows)
    plot(plotted, RESULTS / f"hamlet_rideshare{suffix}.png")
    print(f"wrote {md}")


if __name__ == "__main__":
    main()
