"""GLORIA's execution against the Greedy plan, GRETA and HAMLET, side by side (issue #18).

The paper's execution experiments (section 8; specification ``../shared/specs/gloria.md``,
sections 5 and 8.4), on what runs here:

* mixed workloads, SEQ and Kleene queries 6:1 (``workloads.gloria_mixed_workload``: SEQ
  queries in groups of ten sharing a four-type core, Kleene queries sharing a two-type
  unit ``SEQ(K1, K2)+``; a window and a predicate per group, aggregates per query),
  12 -> 120 queries (Figs. 16 and 18), over three streams:

  - the rideshare generator (its 20 event types; ``[driver]``);
  - the S&P 500 daily prices (``../shared/data``): a company's ticker is its events'
    type, as the paper's Stock data set has company ids, for 20 companies; ``change``,
    the close against the day before in cents (up > 0, down < 0), is the attribute
    the queries aggregate and filter (K1 up);
  - the DEBS 2015 taxi sample: a trip's type is its pick-up zone (a 4 x 4 grid over
    Manhattan, and Outside: 17 types), as the paper's taxi types are pick-up
    locations; the fare in cents is the attribute;

* Fig. 19: bursty rideshare streams (Travel legs in bursts of up to ``max_legs`` per
  driver), 36 queries, ``simple`` (``SEQ(A, Travel T+, C)``, HAMLET's case) against
  ``complex`` (``SEQ(A, SEQ(Travel T, Traffic X)+, C)`` with a predicate per query on
  C) (``workloads.gloria_burst_workload``).

Strategies, each configuration in a fresh process, rows checked equal across them:

- ``gloria``: GLORIA's plan (rates estimated from the stream, per signature; the
  kernel's cost model, as a run plans), run by the compiled kernel's snapshots
  (``trendagg.kernels.loop.snapshots``); the queries outside a shared Q-set follow the hamlet
  plan;
- ``gloria-paper``: GLORIA's plan under the paper's cost model (Eqs. 2-4), same
  executor (the compiled sweeps);
- ``gloria-greedy``: the Greedy baseline's plan (one node per pool; section 8.1), same
  executor;
- ``gloria-python``: GLORIA's plan on the Python reference executor;
- ``greta``, ``hamlet``: the Python engines;
- ``greta-compiled``, ``hamlet-compiled``: the compiled kernel, for reference.

Plans are made (their time: a column of its own) and the compiled kernel loaded from
numba's cache (a run over the stream's first 200 events) before the clock starts. The Python
engines are slow: their streams are small (a few seconds a run); the compiled engines
also run 1,000,000 rideshare events and Fig. 19's streams at ten times the size.

    .venv/bin/python benchmarks/gloria_execution.py            # full run
    .venv/bin/python benchmarks/gloria_execution.py --quick    # smoke run
    .venv/bin/python benchmarks/gloria_execution.py --part compiled   # the 1M / 120k sweeps

Writes benchmarks/results/gloria_execution.{md,csv,png} (``--part compiled``:
gloria_execution_compiled.{md,csv,png}). The data files are read from
``../shared/data`` (or ``$TRENDAGG_DATA``); a data set whose file is missing is skipped,
with a message.
"""

from __future__ import annotations

import argparse
import csv
import gzip
import json
import os
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results"
DATA = HERE.parent.parent / "shared" / "data"
sys.path.insert(0, str(HERE))
from hamlet_rideshare import fresh_runs, machine, plot, run_sweeps, write_rows  # noqa: E402

STRATEGIES = [
    "gloria",
    "gloria-greedy",
    "gloria-python",
    "greta",
    "hamlet",
    "greta-compiled",
    "hamlet-compiled",
]
BURST_STRATEGIES = [
    "gloria",
    "gloria-python",
    "greta",
    "hamlet",
    "greta-compiled",
    "hamlet-compiled",
]
COMPILED = ["gloria", "gloria-paper", "gloria-greedy", "greta-compiled", "hamlet-compiled"]
TIMEOUT = 300.0  # s, a process (planning included)
SP500 = "sp500_5yr_daily.csv.gz"
TAXI = "debs2015_taxi_10k.csv.gz"
TICKERS = [
    "AAPL",
    "MSFT",
    "AMZN",
    "GOOGL",
    "JPM",
    "XOM",
    "JNJ",
    "WMT",
    "PG",
    "KO",
    "PEP",
    "CSCO",
    "INTC",
    "ORCL",
    "IBM",
    "GE",
    "BA",
    "CAT",
    "MMM",
    "HD",
]


def data_dir() -> Path:
    return Path(os.environ.get("TRENDAGG_DATA", DATA))


def sp500_records(days: int) -> list[dict[str, object]]:
    """The first ``days`` trading days of :data:`TICKERS`, one event per company and day,
    typed by ticker, with ``change``: the close against the day before, in cents."""
    out = []
    last: dict[str, int] = {}
    with gzip.open(data_dir() / SP500, "rt", newline="") as f:
        for row in csv.DictReader(f):
            name = row["Name"]
            if name not in TICKERS or not row["close"]:
                continue
            cents = round(float(row["close"]) * 100)
            change = cents - last.get(name, cents)
            last[name] = cents
            out.append({"type": name, "time": row["date"], "change": change, "cents": cents})
    dates = sorted({str(r["time"]) for r in out})[:days]
    keep = set(dates)
    return sorted((r for r in out if r["time"] in keep), key=lambda r: str(r["time"]))


TAXI_LAT = (40.73, 40.75, 40.77)  # (cuts of the 4 x 4 pick-up grid: roughly its quartiles)
TAXI_LON = (-73.99, -73.98, -73.97)


def taxi_zone(lon: float, lat: float) -> str:
    if not (-74.03 < lon < -73.90 and 40.68 < lat < 40.85):
        return "Outside"
    row = sum(lat > c for c in TAXI_LAT)
    col = sum(lon > c for c in TAXI_LON)
    return f"Z{row}{col}"


def taxi_records(trips: int) -> list[dict[str, object]]:
    """The first ``trips`` trips of the DEBS sample by pick-up time, typed by pick-up
    zone (:func:`taxi_zone`), with the fare in cents."""
    out = []
    with gzip.open(data_dir() / TAXI, "rt", newline="") as f:
        for row in csv.reader(f):
            out.append(
                {
                    "type": taxi_zone(float(row[6]), float(row[7])),
                    "time": row[2].replace(" ", "T"),
                    "fare": round(float(row[11]) * 100),
                    "medallion": row[0],
                }
            )
    out.sort(key=lambda r: str(r["time"]))
    return out[:trips]


def workload(config: dict[str, object]) -> tuple[str, list[dict[str, object]]]:
    """The queries and events of one configuration."""
    from trendagg.generate import BACKGROUND_TYPES, TRIP_TYPES, rideshare
    from workloads import gloria_burst_workload, gloria_mixed_workload

    data, k, n = str(config["data"]), int(config["k"]), int(config["events"])  # type: ignore[call-overload]
    if data == "burst":
        text = gloria_burst_workload(k, str(config["kind"]))
        legs = int(config["legs"])  # type: ignore[call-overload]
        return text, list(rideshare(n, seed=11, max_legs=legs, background=0.1))
    if data == "rideshare":
        types = [t for t in TRIP_TYPES + BACKGROUND_TYPES if t != "Cancel"]
        # (seed 6, the table's since its first run, when seed 5's 120 queries did not plan
        # in 300 s: the graph's builder tried every combination of two pools' live nodes)
        text = gloria_mixed_workload(
            k, types, value="district", threshold=3, partition="[driver]", seed=6
        )
        return text, list(rideshare(n, seed=11))
    if data == "sp500":
        windows = tuple(f"WITHIN {d} days SLIDE 5 days" for d in (10, 15, 20, 25))
        text = gloria_mixed_workload(k, list(TICKERS), value="change", threshold=0, windows=windows)
        return text, sp500_records(n // len(TICKERS))
    if data == "taxi":
        types = [f"Z{r}{c}" for r in range(4) for c in range(4)] + ["Outside"]
        return gloria_mixed_workload(k, types, value="fare", threshold=1000), taxi_records(n)
    raise ValueError(f"unknown data {data!r}")


def child(config: dict[str, object]) -> dict[str, object]:
    """Run one configuration in this process and measure it."""
    import resource

    from trendagg.engine import run_strategy
    from trendagg.io import from_records
    from trendagg.language import parse
    from trendagg.optimizer.gloria import optimize
    from trendagg.optimizer.gloria_template import cost_model, gloria_query
    from trendagg.optimizer.plan import gloria_blocker, gloria_rates, shared_qsets, sharing_plan
    from trendagg.plan.compile import compile_workload

    text, records = workload(config)
    plans = compile_workload(parse(text))
    events = from_records(records).events
    strategy = str(config["strategy"])
    compiled = strategy.endswith("-compiled")
    name = strategy.removesuffix("-compiled").removesuffix("-greedy").removesuffix("-python")
    name = name.removesuffix("-paper")
    plan = None
    planning = 0.0
    qsets = labelled = 0
    if name == "gloria":  # planned before the clock starts (the optimizer's time: its column)
        clock = time.perf_counter()
        rates = gloria_rates(plans, events)
        # GLORIA's own plan, without a run's work budget (past it a run takes Greedy's:
        # at 120 queries here), or Greedy's
        eligible = [p for p in plans if gloria_blocker(p) is None]
        mode = "greedy" if strategy == "gloria-greedy" else "gloria"
        # the kernel's cost model (a run's), or the paper's (Eqs. 2-4) for gloria-paper
        model = cost_model("paper" if strategy == "gloria-paper" else "kernel")
        chosen = optimize(
            [gloria_query(p) for p in eligible], rates, mode=mode, budget=None, cost=model
        )
        kernel = strategy != "gloria-python"
        plan = sharing_plan(plans, "gloria", compiled=kernel, qsets=shared_qsets(eligible, chosen))
        planning = time.perf_counter() - clock
        qsets = len({(s.queries, s.label) for s in plan.qsets})
        labelled = len({(s.queries, s.label) for s in plan.qsets if s.label is not None})
    # the kernel loaded from numba's cache (0.5 s in a fresh process) and the engines'
    # modules imported, by a run over the stream's first events, before the clock starts
    run_strategy(plans, events.take(slice(0, 200)), name, compiled=compiled, plan=plan)
    started = time.perf_counter()
    stats: dict[str, object] = {}
    rows = run_strategy(plans, events, name, stats=stats, compiled=compiled, plan=plan)
    seconds = time.perf_counter() - started
    on_gloria = len({q for s in plan.qsets for q in s.queries}) if plan is not None else 0
    counters = stats.get("gloria") or stats.get("snapshot_kernel", {})
    out: dict[str, object] = {
        "seconds": seconds,
        "plan_s": planning,
        "events": len(events),
        "events_per_s": len(events) / seconds,
        "rows": len(rows),
        "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
        "on_gloria": on_gloria,
        "qsets": qsets,
        "shared_qsets": labelled,
        "result_digest": hash(
            tuple(sorted((r.query, r.window_start, repr(sorted(r.values.items()))) for r in rows))
        ),
    }
    for key in ("shared_propagations", "nonshared_propagations", "evaluations", "snapshots"):
        out[key] = counters.get(key, 0)  # type: ignore[union-attr]
    return out


def measure(config: dict[str, object], repeats: int) -> dict[str, object]:
    """Median of ``repeats`` runs, each in a fresh process, within TIMEOUT."""
    return fresh_runs(__file__, config, repeats, timeout=TIMEOUT)


def experiments(quick: bool, part: str = "all") -> list[tuple[str, str, list[dict[str, object]]]]:
    """(title, varied key, configurations) of every table (``part``: all, or only those
    of the compiled engines over the large streams)."""
    ks = [12, 24] if quick else [12, 24, 60, 120]
    sizes = {"rideshare": 6_000, "sp500": 2_000, "taxi": 3_000}
    if quick:
        sizes = {d: n // 4 for d, n in sizes.items()}
    out: list[tuple[str, str, list[dict[str, object]]]] = []
    titles = {
        "rideshare": "mixed workload (6:1), rideshare generator",
        "sp500": "mixed workload (6:1), S&P 500 daily prices (20 companies as types)",
        "taxi": "mixed workload (6:1), DEBS 2015 taxi trips (pick-up zones as types)",
    }
    for data, n in sizes.items():
        if part == "compiled":
            break
        if (
            data != "rideshare"
            and not (data_dir() / (SP500 if data == "sp500" else TAXI)).is_file()
        ):
            print(f"skipping {data}: {data_dir()} has no {SP500 if data == 'sp500' else TAXI}")
            continue
        configs = [
            {"data": data, "events": n, "k": k, "strategy": s} for k in ks for s in STRATEGIES
        ]
        out.append((f"{titles[data]}, {n:,} events", "k", configs))
    legs = [8, 32] if quick else [8, 32, 64]
    n = 1_000 if quick else 12_000
    for kind in ("simple", "complex") if part == "all" else ():
        configs = [
            {"data": "burst", "kind": kind, "events": n, "k": 36, "legs": b, "strategy": s}
            for b in legs
            for s in BURST_STRATEGIES
        ]
        title = f"Fig. 19, bursty rideshare, {kind} workload (36 queries), {n:,} events"
        out.append((title, "legs", configs))
    big = 40_000 if quick else 1_000_000
    configs = [
        {"data": "rideshare", "events": big, "k": k, "strategy": s} for k in ks for s in COMPILED
    ]
    out.append((f"{titles['rideshare']}, the compiled engines, {big:,} events", "k", configs))
    for kind in ("simple", "complex"):
        configs = [
            {"data": "burst", "kind": kind, "events": 10 * n, "k": 36, "legs": b, "strategy": s}
            for b in legs
            for s in ("gloria", "gloria-paper", "greta-compiled", "hamlet-compiled")
        ]
        title = f"Fig. 19, {kind} workload (36 queries), the compiled engines, {10 * n:,} events"
        out.append((title, "legs", configs))
    return out


def table(rows: list[dict[str, object]], vary: str) -> list[str]:
    head = "queries" if vary == "k" else "max burst (legs)"
    lines = [
        f"| {head} | strategy | events/s | vs greta | vs hamlet | vs compiled greta "
        "| vs compiled hamlet | seconds | planning s "
        "| on GLORIA (Q-sets, shared) | shared props | non-shared props | evaluations "
        "| snapshots |",
        "|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    ref = {(r[vary], r["strategy"]): r.get("events_per_s") for r in rows if r["status"] == "ok"}
    for r in rows:
        if r["status"] != "ok":
            lines.append(f"| {r[vary]} | {r['strategy']} | {r['status']} | | | | | | | | | | | |")
            continue
        eps = float(r["events_per_s"])  # type: ignore[arg-type]
        vs = []
        for against in ("greta", "hamlet", "greta-compiled", "hamlet-compiled"):
            base = ref.get((r[vary], against))
            vs.append(f"{eps / float(base):.2f}x" if base else "")  # type: ignore[arg-type]
        glo = str(r["strategy"]).startswith("gloria")
        counters = ""
        if glo:
            counters = (
                f"{r['on_gloria']} ({r['qsets']}, {r['shared_qsets']}) | "
                f"{int(r['shared_propagations']):,} | "  # type: ignore[call-overload]
                f"{int(r['nonshared_propagations']) if r['strategy'] == 'gloria-python' else ''} | "  # type: ignore[call-overload]
                f"{int(r['evaluations']):,} | {int(r['snapshots']):,}"  # type: ignore[call-overload]
            )
        else:
            counters = " | | | | "
        lines.append(
            f"| {r[vary]} | {r['strategy']} | {eps:,.0f} | {' | '.join(vs)} | "
            f"{float(r['seconds']):.2f} | {float(r['plan_s']):.2f} | {counters} |"  # type: ignore[arg-type]
        )
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--child", default=None, help=argparse.SUPPRESS)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--part", choices=("all", "compiled"), default="all")
    args = parser.parse_args()
    if args.child is not None:
        print(json.dumps(child(json.loads(args.child))))
        return
    RESULTS.mkdir(parents=True, exist_ok=True)
    started = time.time()
    repeats = 1 if args.quick else args.repeats
    sections, plotted, everything = run_sweeps(
        experiments(args.quick, args.part),
        lambda config: measure(config, repeats),
        table,
        shown=("data", "kind"),
    )
    name = "gloria_execution" if args.part == "all" else "gloria_execution_compiled"
    write_rows(everything, RESULTS / f"{name}.csv")
    styles = dict(zip(STRATEGIES, ["o-", "o--", "o:", "^-", "s-", "v-.", "d-."], strict=True))
    styles["gloria-paper"] = "x--"
    plot(plotted, RESULTS / f"{name}.png", styles)
    head = [
        "# GLORIA: its plan and the Greedy plan against GRETA and HAMLET",
        "",
        f"Machine: {machine()}. Run {time.strftime('%Y-%m-%d')}, "
        f"{time.time() - started:.0f} s{' (--quick)' if args.quick else ''}. Medians of "
        f"{repeats} fresh processes; rows equal across strategies (checked). Engine time "
        "only: the events are made and read, the GLORIA plans made (rates estimated "
        "from the stream; their own column), and the kernel loaded from numba's cache (a "
        "run over the first 200 events) before the clock starts. gloria, gloria-paper and "
        "gloria-greedy run GLORIA's plans on the compiled kernel's snapshots (planned "
        "under the kernel's cost model, the paper's, and Greedy's under the kernel's), "
        "gloria-python on the reference executor; greta and hamlet are the Python engines, the -compiled rows "
        "the kernel's. `vs greta`, `vs hamlet`: against the Python engines. On "
        "GLORIA: the queries GLORIA's plan runs (the others follow the hamlet plan), "
        "with the plan's distinct Q-sets and the shared ones among them; the counters are "
        "the executor's (`stats['gloria']`, `stats['snapshot_kernel']`).",
        "",
        f"![gloria]({name}.png)",
        "",
    ]
    (RESULTS / f"{name}.md").write_text("\n".join(head + sections) + "\n")


if __name__ == "__main__":
    main()
