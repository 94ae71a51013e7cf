"""SHARON's experiment shapes (section 8.2/8.3) on the ecommerce generator, side by side.

Workloads of fixed-length SEQ queries (``workloads.sequence_workload``): an entry point
(Login, Search, Ad: 5% of the events) and then items, from a pool of item chunks that
the queries share in their middles and ends. Strategies in one run, each configuration
in a fresh process (its own peak memory), rows checked equal across strategies:

- ``sharon``: SHARON's optimal plan (rates estimated from the stream's first events,
  weighed by the kernel's cost model, the default), on the compiled kernel (its
  snapshots: ``trendagg.kernels.loop.snapshots``); where no sub-sequence pays, the hamlet plan;
- ``sharon-paper``: the plan the paper's cost model (Eq. 1-8) chooses, same executor;
- ``sharon-greedy``: GWMIN's plan on the paper's model's graph, same executor;
- ``sharon-python``: the paper's model's plan on the reference executor;
- ``aseq``: the paper's non-shared baseline, a record per START event;
- ``greta``: the Python GRETA (per-window prefix registers);
- ``greta-compiled`` and ``hamlet-compiled``: the compiled kernel, without sharing and
  with its classes of states equal by construction (common prefixes kept once).

Sweeps: queries 20 -> 120; events per window (events per minute over a 1-minute
window); pattern length 4 -> 30; the share of entry events; the compiled engines alone
over 1,000,000 events (20 -> 120 queries); funnels (``workloads.funnel_workload``: 100
queries, an entry path then an item path, issue #17's workload) over 1,000,000 events
as entry events grow rarer, and against A-Seq over 100,000; and the optimizer alone
(SHARON's level search, GWMIN, exhaustive) from 10 to 70 queries. The Python engines run small streams: the
absolute numbers are not the paper's (Java, millions of events); the ratios are the
point, and so is where sharing pays.

    .venv/bin/python benchmarks/sharon_sequences.py            # full run
    .venv/bin/python benchmarks/sharon_sequences.py --quick    # smoke run

    .venv/bin/python benchmarks/sharon_sequences.py --part optimizer   # the optimizer only

Writes benchmarks/results/sharon_sequences.{md,csv,png} (execution) and
benchmarks/results/sharon_optimizer.{md,csv} (the optimizer).
"""

from __future__ import annotations

import argparse
import json
import pickle
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results"
CACHE = Path(tempfile.gettempdir()) / "trendagg-bench-sharon"  # the streams, between runs
sys.path.insert(0, str(HERE))
from hamlet_rideshare import fresh_runs, machine, plot, run_sweeps, write_rows  # noqa: E402

STRATEGIES = [
    "sharon",
    "sharon-paper",
    "sharon-greedy",
    "sharon-python",
    "aseq",
    "greta",
    "greta-compiled",
    "hamlet-compiled",
]
COMPILED = ["sharon", "sharon-paper", "sharon-greedy", "greta-compiled", "hamlet-compiled"]
# the funnel workload (issue #17's): the kernel's and the paper's cost model, no sharing
FUNNEL = ["sharon", "sharon-paper", "greta-compiled", "hamlet-compiled"]
FUNNEL_ASEQ = ["sharon", "aseq", "greta-compiled"]
EXHAUSTIVE_TIMEOUT = 20.0
# sharon: the level search with a run's time budget (0.5 s, then GWMIN's plan for the rest);
# unbounded: without it; gwmin and exhaustive: on the same graph
OPTIMIZERS = ("sharon", "unbounded", "gwmin", "exhaustive")


def child(config: dict[str, object]) -> dict[str, object]:
    """Run one configuration in this process and measure it."""
    import resource

    from trendagg.engine import run_strategy
    from trendagg.generate import ecommerce
    from trendagg.io import from_records
    from trendagg.language import parse
    from trendagg.optimizer.plan import sequences_of, sharing_plan
    from trendagg.optimizer.sharon import estimate_rates, exhaustive, gwmin, optimize, seq_query
    from trendagg.plan.compile import compile_workload
    from workloads import funnel_workload, sequence_workload

    items = int(config.get("items", 50))  # type: ignore[call-overload]
    if config.get("funnel"):
        workload = funnel_workload(int(config["k"]), items=items)  # type: ignore[call-overload]
    else:
        workload = sequence_workload(
            int(config["k"]),  # type: ignore[call-overload]
            int(config["length"]),  # type: ignore[call-overload]
            chunks=min(16, items // 2),
            items=items,
        )
    plans = compile_workload(parse(workload))
    if config.get("part") == "optimizer":
        queries = [q for q in (seq_query(p) for p in plans) if q is not None]
        sample = from_records(ecommerce(100_000, events_per_minute=600, seed=11)).events
        rates = estimate_rates(plans, sample)  # (the stream's, as a run estimates them)
        started = time.perf_counter()
        plan = optimize(queries, rates, budget=None if config["strategy"] == "unbounded" else 0.5)
        seconds = time.perf_counter() - started
        chosen, score = plan.chosen, plan.score
        if config["strategy"] == "gwmin":
            started = time.perf_counter()
            chosen = gwmin(plan.graph)
            seconds = time.perf_counter() - started
            score = plan.graph.score(chosen)
        elif config["strategy"] == "exhaustive":
            started = time.perf_counter()
            chosen = exhaustive(plan.graph)
            seconds = time.perf_counter() - started
            score = plan.graph.score(chosen)
        return {
            "seconds": seconds,
            "score": score,
            "vertices": len(plan.graph.vertices),
            "pruned": len(plan.pruned),
            "timed_out": plan.timed_out if config["strategy"] == "sharon" else False,
            "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
        }
    with stream_cache(config).open("rb") as f:
        events = pickle.load(f)
    strategy = str(config["strategy"])
    compiled = strategy.endswith("-compiled")
    name = strategy.split("-")[0]
    plan = None
    planning = 0.0
    if name == "sharon":  # planned before the clock starts (the optimizer's time: its column)
        kernel = strategy != "sharon-python"
        model = "kernel" if strategy == "sharon" else "factor-one"
        clock = time.perf_counter()
        rates = estimate_rates(plans, events)
        plan = sharing_plan(plans, "sharon", rates=rates, compiled=kernel, cost_model=model)
        if strategy == "sharon-greedy":
            greedy = sequences_of(plans, plan.sharon.graph, plan.sharon.greedy)
            plan = sharing_plan(plans, "sharon", sequences=greedy)
        planning = time.perf_counter() - clock
    # the kernel loaded from numba's cache (0.5 s in a fresh process) and the engines'
    # modules imported, by a run over the stream's first events, before the clock starts
    run_strategy(plans, events.take(slice(0, 1_000)), name, compiled=compiled, plan=plan)
    started = time.perf_counter()
    stats: dict[str, object] = {}
    rows = run_strategy(plans, events, name, stats=stats, compiled=compiled, plan=plan)
    seconds = time.perf_counter() - started
    windows = len({(r.query, r.window_start) for r in rows})
    sharon = stats.get("sharon", {})
    kernel = stats.get("snapshot_kernel", {})
    return {
        "seconds": seconds,
        "plan_s": planning,
        "events_per_s": len(events) / seconds,
        "ms_per_window": 1000 * seconds / max(windows, 1),
        "rows": len(rows),
        "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
        "shared": len(plan.sequences) if plan is not None else 0,
        "groups": sharon.get("groups", 0),  # type: ignore[union-attr]
        "snapshots": kernel.get("snapshots", 0),  # type: ignore[union-attr]
        "starts": sharon.get("starts", 0) or stats.get("aseq", {}).get("starts", 0),  # type: ignore[union-attr]
        "result_digest": hash(
            tuple(sorted((r.query, r.window_start, repr(sorted(r.values.items()))) for r in rows))
        ),
    }


def stream_cache(config: dict[str, object]) -> Path:
    """Where the configuration's ecommerce events are kept, read (pickled), between its
    runs: made once (by :func:`prepare`), not in every measured process."""
    keys = ("events", "epm", "items", "entry")
    values = [config.get("items", 50) if k == "items" else config.get(k, 0.05) for k in keys]
    return CACHE / ("ecommerce-" + "-".join(str(v) for v in values) + ".pickle")


def prepare(config: dict[str, object]) -> None:
    """The configuration's events, made and read as a run reads them, into its cache."""
    from trendagg.generate import ecommerce
    from trendagg.io import from_records

    records = ecommerce(
        int(config["events"]),  # type: ignore[call-overload]
        events_per_minute=int(config["epm"]),  # type: ignore[call-overload]
        items=int(config.get("items", 50)),  # type: ignore[call-overload]
        entry_share=float(config.get("entry", 0.05)),  # type: ignore[arg-type]
        seed=11,
    )
    CACHE.mkdir(parents=True, exist_ok=True)
    path = stream_cache(config)
    with path.with_suffix(".part").open("wb") as f:
        pickle.dump(from_records(records).events, f, protocol=pickle.HIGHEST_PROTOCOL)
    path.with_suffix(".part").replace(path)


def measure(config: dict[str, object], repeats: int) -> dict[str, object]:
    """Median of ``repeats`` runs, each in a fresh process (the optimizer's unbounded
    searches within EXHAUSTIVE_TIMEOUT)."""
    if config.get("part") != "optimizer" and not stream_cache(config).exists():
        subprocess.run(
            [sys.executable, __file__, "--prepare", json.dumps(config)], check=True, cwd=HERE
        )
    searches = config.get("part") == "optimizer" and config["strategy"] in (
        "exhaustive",
        "unbounded",
    )
    return fresh_runs(__file__, config, repeats, timeout=EXHAUSTIVE_TIMEOUT if searches else None)


def experiments(quick: bool) -> list[tuple[str, str, list[dict[str, object]]]]:
    n = 4_000 if quick else 100_000
    big = 40_000 if quick else 1_000_000
    base: dict[str, object] = {"events": n, "epm": 600, "k": 40, "length": 4}
    ks = [20, 40] if quick else [20, 40, 80, 120]
    epms = [300, 1_200] if quick else [300, 600, 1_200, 2_400]
    lengths = [4, 8] if quick else [4, 8, 16, 30]
    entries = [0.01, 0.2] if quick else [0.005, 0.02, 0.05, 0.2]
    fk = 30 if quick else 100
    small = 4_000 if quick else 100_000
    funnel_entries = [0.002, 0.05] if quick else [0.0005, 0.002, 0.01, 0.05]
    funnel = {"funnel": 1, "events": big, "epm": 6_000, "k": fk, "length": 0, "items": 28}
    funnel["entry"] = 0.002
    return [
        (
            "queries (length 4, 600 events/min)",
            "k",
            [{**base, "k": k, "strategy": s} for k in ks for s in STRATEGIES],
        ),
        (
            "events per minute, 1-minute windows (40 queries, length 4)",
            "epm",
            [{**base, "epm": e, "strategy": s} for e in epms for s in STRATEGIES],
        ),
        (
            "pattern length (20 queries, 600 events/min)",
            "length",
            [{**base, "k": 20, "length": m, "strategy": s} for m in lengths for s in STRATEGIES],
        ),
        (
            "share of entry events (40 queries over 12 item types, length 4): few entry "
            "events, few START groups",
            "entry",
            [{**base, "items": 12, "entry": e, "strategy": s} for e in entries for s in STRATEGIES],
        ),
        (
            f"the compiled engines over {big:,} events (length 4, 600 events/min)",
            "k",
            [{**base, "events": big, "k": k, "strategy": s} for k in ks for s in COMPILED],
        ),
        (
            f"funnels, {fk} queries over {big:,} events (6,000 events/min over 28 item types, "
            "10-minute windows sliding by 5): the share of entry events",
            "entry",
            [{**funnel, "entry": e, "strategy": s} for e in funnel_entries for s in FUNNEL],
        ),
        (
            f"funnels against A-Seq ({fk} queries, entry share 0.002, {small:,} events)",
            "entry",
            [{**funnel, "events": small, "strategy": s} for s in FUNNEL_ASEQ],
        ),
    ]


def optimizer_experiment(quick: bool) -> list[dict[str, object]]:
    ks = [10, 20] if quick else [10, 20, 30, 50, 70]
    return [
        {"part": "optimizer", "k": k, "length": 8, "strategy": s} for k in ks for s in OPTIMIZERS
    ]


def table(rows: list[dict[str, object]], vary: str) -> list[str]:
    lines = [
        f"| {vary} | strategy | events/s | vs greta | vs compiled greta | vs compiled hamlet | "
        "vs aseq | ms per window | peak RSS MB | shared sub-sequences | snapshots (compiled) "
        "or START groups (STARTs) | planning s |",
        "|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    ref = {(r[vary], r["strategy"]): r.get("events_per_s") for r in rows if r["status"] == "ok"}

    def ratio(eps: float, against: str, at: object) -> str:
        base = ref.get((at, against))
        return f"{eps / float(base):.2f}x" if base else ""  # type: ignore[arg-type]

    for r in rows:
        if r["status"] != "ok":
            lines.append(f"| {r[vary]} | {r['strategy']} | {r['status']} | | | | | | | | | |")
            continue
        eps = float(r["events_per_s"])  # type: ignore[arg-type]
        strategy = str(r["strategy"])
        groups = ""
        if strategy == "sharon-python":
            groups = f"{int(r['groups']):,} ({int(r['starts']):,})"  # type: ignore[call-overload]
        elif strategy.startswith("sharon"):
            groups = f"{int(r['snapshots']):,}"  # type: ignore[call-overload]
        elif strategy == "aseq":
            groups = f"({int(r['starts']):,})"  # type: ignore[call-overload]
        at = r[vary]
        lines.append(
            f"| {at} | {strategy} | {eps:,.0f} | {ratio(eps, 'greta', at)} | "
            f"{ratio(eps, 'greta-compiled', at)} | {ratio(eps, 'hamlet-compiled', at)} | "
            f"{ratio(eps, 'aseq', at)} | "
            f"{float(r['ms_per_window']):.2f} | {float(r['peak_rss_mb']):.0f} | "  # type: ignore[arg-type]
            f"{int(r['shared']) if strategy.startswith('sharon') else ''} | {groups} | "  # type: ignore[call-overload]
            f"{float(r['plan_s']):.3f} |"  # type: ignore[arg-type]
        )
    return lines


def optimizer_table(rows: list[dict[str, object]]) -> list[str]:
    lines = [
        "| queries | optimizer | seconds | score | candidates in the graph | pruned | budget ran out |",
        "|---:|---|---:|---:|---:|---:|---|",
    ]
    for r in rows:
        if r["status"] != "ok":
            lines.append(f"| {r['k']} | {r['strategy']} | {r['status']} | | | | |")
            continue
        lines.append(
            f"| {r['k']} | {r['strategy']} | {float(r['seconds']):.4f} | {float(r['score']):,.1f} | "  # type: ignore[arg-type]
            f"{r['vertices']} | {r['pruned']} | {'yes' if r['timed_out'] else ''} |"
        )
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--child", default=None, help=argparse.SUPPRESS)
    parser.add_argument("--prepare", default=None, help=argparse.SUPPRESS)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--part", choices=("all", "execution", "optimizer"), default="all")
    args = parser.parse_args()
    if args.child is not None:
        print(json.dumps(child(json.loads(args.child))))
        return
    if args.prepare is not None:
        prepare(json.loads(args.prepare))
        return
    RESULTS.mkdir(parents=True, exist_ok=True)
    if args.part in ("all", "execution"):
        execution(args.quick, args.repeats)
    if args.part in ("all", "optimizer"):
        optimizer(args.quick, args.repeats)


def execution(quick: bool, repeats: int) -> None:
    started = time.time()
    sections, plotted, everything = run_sweeps(
        experiments(quick), lambda config: measure(config, repeats), table
    )
    write_rows(everything, RESULTS / "sharon_sequences.csv")
    styles = dict(
        zip(STRATEGIES, ["o-", "o-.", "o--", "o:", "s:", "^-", "v-.", "d-."], strict=True)
    )
    plot(plotted, RESULTS / "sharon_sequences.png", styles)
    head = [
        "# SHARON: shared sub-sequences against GRETA and A-Seq (ecommerce stream)",
        "",
        f"Machine: {machine()}. Run {time.strftime('%Y-%m-%d')}, "
        f"{time.time() - started:.0f} s. Medians of {repeats} fresh processes; rows "
        "equal across strategies (checked). Engine time only: the events are made and read "
        "once per configuration (kept between its runs), sharon's plan made (rates "
        "estimated from the first 100,000 events; its own column), and the compiled "
        "kernel loaded from numba's cache (a run over the first 1,000 events) before the "
        "clock starts. `vs greta`: against the Python GRETA; "
        "`sharon` (the plan of the kernel's cost model, the default: where nothing pays, "
        "the hamlet plan), `sharon-paper` (the paper's Eq. 1-8) and `sharon-greedy` "
        "(GWMIN's plan on the paper's graph) run on the compiled kernel, `sharon-python` "
        "(the paper's plan) on the reference executor.",
        "",
        "![sharon](sharon_sequences.png)",
        "",
    ]
    (RESULTS / "sharon_sequences.md").write_text("\n".join(head + sections) + "\n")


def optimizer(quick: bool, repeats: int) -> None:
    started = time.time()
    rows = [measure(c, repeats) for c in optimizer_experiment(quick)]
    for r in rows:
        print(json.dumps({k: r.get(k) for k in ("k", "strategy", "status", "seconds")}), flush=True)
    write_rows(rows, RESULTS / "sharon_optimizer.csv")
    lines = [
        "# SHARON's optimizer: the level search, GWMIN and the exhaustive search",
        "",
        f"Machine: {machine()}. Run {time.strftime('%Y-%m-%d')}, {time.time() - started:.0f} s. "
        f"Medians of {repeats} fresh processes. Workloads of `sequence_workload(k, 8)` (an "
        "entry point and seven items); rates estimated from 100,000 ecommerce events as a "
        "run estimates them. sharon: graph, expansion into options, reduction and level "
        "search per component with a run's time budget (0.5 s from the start, then GWMIN's "
        "plan for the components left); unbounded: the same without the budget; GWMIN and "
        "the exhaustive search on the same graph (the searches stopped after "
        f"{EXHAUSTIVE_TIMEOUT:.0f} s).",
        "",
        *optimizer_table(rows),
        "",
    ]
    (RESULTS / "sharon_optimizer.md").write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
