"""The compiled engine before and after a change, on every kernel benchmark's workloads.

Issue #40's speed check: the kernel benchmarks (the uniform workload at 1M and 10M
events, the axes sweep, the varied workload, SHARON's and GLORIA's compiled sweeps)
at least 0.95x of before, measured before and after in alternating fresh processes in
one run, with the same rows. ``--base REV`` is checked out into a temporary git
worktree (``before_after.base_tree``); the "after" is this working tree.

The configurations are those of the benchmarks themselves, built by their own code
(imported, not copied), so that this measures what they measure:

- uniform: HAMLET's 50 queries sharing Travel+ per driver (``workloads.sharing_workload``)
  over ``kernel_rideshare.ensure_data``'s CSV, hamlet at 1M and 10M events, greta at
  1M; the CSV streamed with ``iter_events`` in chunks of 500,000 rows into
  ``Runner.feed``, as ``kernel_rideshare.child`` does;
- axes: every configuration of ``kernel_axes.AXES`` (its base, which six of them
  repeat, once), ``Runner.feed`` over the events in memory by ``kernel_axes.feed``;
- varied: ``kernel_varied``'s variants none, not and next-not (1M events here), streamed
  as ``kernel_varied.child`` does;
- SHARON's compiled sweep (``sharon_sequences.experiments``: the compiled engines over
  1M events) and GLORIA's (``gloria_execution.experiments(part="compiled")``), each run
  by the script's own ``child`` (its plan made, the kernel loaded, then its clock).

Each run is a fresh process of this script (``--child``) pinned to one core, with
``PYTHONPATH=<tree>/src`` so that it imports that tree's trendagg (checked) and the
benchmarks of this tree, and the parent's ``NUMBA_CACHE_DIR`` (each tree finds its
compiled kernels there by their digest; ``trendagg warm`` of each tree first compiles
what is missing). A run warms up over its first events (the kernel loaded, numba's
dispatch ready), then times the engine; it reports the engine's seconds and a SHA-256
of its result rows in a canonical order; the parent adds the process's seconds from
spawn to exit and its peak resident memory (``os.wait4``). The two trees alternate
run by run (before, after, before, after, ...); medians per tree.

    .venv/bin/python benchmarks/kernel_before_after.py --base REV           # every configuration
    .venv/bin/python benchmarks/kernel_before_after.py --base REV --only axes --repeats 5
    .venv/bin/python benchmarks/kernel_before_after.py --base REV --events 20000 --repeats 1
    .venv/bin/python benchmarks/kernel_before_after.py --list               # the names

``--events N`` scales every size by N / 1,000,000 (the 10M headline becomes 10 N,
GLORIA's bursts of 120,000 events 0.12 N). Data is generated once into ``--data``
(default: the system's temporary directory), never into the repository. Writes
benchmarks/results/kernel_before_after.{md,csv} (``--name``: another name), after every
configuration.
"""

from __future__ import annotations

import argparse
import csv
import hashlib
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, NamedTuple

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
RESULTS = HERE / "results"
SCALE = 1_000_000  # --events: the size the benchmarks' own sizes are given at
CHUNK_ROWS = 500_000  # as kernel_rideshare.py and kernel_varied.py read
WARM_EVENTS = 5_000  # a streamed run's warm-up (kernel_varied.py's --check-events)
AXES_WARM_EVENTS = 20_000  # kernel_axes.py's --check-events
PYTHON_EVENTS = 20_000  # kernel_axes.py's and kernel_varied.py's --python-events
THRESHOLD = 0.95  # issue #40: after at least 0.95x of before
sys.path.insert(0, str(HERE))


class Case(NamedTuple):
    """One configuration: its name in the table and what its child runs."""

    name: str
    config: dict[str, Any]  # (JSON: the child's argument; "kind" says which child)


def cases(events: int, data: Path) -> list[Case]:
    """Every configuration, its sizes scaled to ``events`` per 1M of the benchmarks."""
    import gloria_execution
    import sharon_sequences
    from kernel_axes import AXES, BASE

    def scaled(n: int) -> int:
        return max(1, round(n * events / SCALE))

    out = []
    for strategy, n in (("hamlet", SCALE), ("hamlet", 10 * SCALE), ("greta", SCALE)):
        config = {"kind": "stream", "workload": "sharing", "strategy": strategy, "n": scaled(n)}
        out.append(Case(f"uniform: 50 queries, {strategy}, {scaled(n):,} events", config))
    seen = set()
    for axis, label, change in AXES:
        settings = {**BASE, **change}
        key = tuple(sorted(settings.items()))
        if key in seen:
            continue  # (the base, again: the axes' other configurations repeat it)
        seen.add(key)
        name = f"axes: {axis}: {label}"
        if settings == BASE:
            name = (
                "axes: the base (2 windows per event, 1,000 drivers, no predicate, no GROUP-BY, "
                "whole seconds, no NEXT or NOT)"
            )
        out.append(Case(name, {"kind": "axes", "axis": axis, "label": label, "n": scaled(SCALE)}))
    for variant in ("none", "not", "next-not"):
        config = {"kind": "stream", "workload": "varied", "variant": variant, "strategy": "hamlet"}
        out.append(Case(f"varied: {variant}", {**config, "n": scaled(SCALE)}))
    cache = str(data / "sharon")
    for title, _, configs in sharon_sequences.experiments(quick=False):
        if title.startswith("the compiled engines"):  # (its compiled sweep)
            for c in configs:
                config = {**c, "events": scaled(int(c["events"]))}
                name = f"SHARON compiled: {c['k']} queries, {c['strategy']}"
                out.append(Case(name, {"kind": "sharon", "config": config, "cache": cache}))
    for _, _, configs in gloria_execution.experiments(quick=False, part="compiled"):
        for c in configs:
            config = {**c, "events": scaled(int(c["events"]))}
            if c["data"] == "burst":
                name = (
                    f"GLORIA compiled: Fig. 19 {c['kind']}, bursts of {c['legs']}, {c['strategy']}"
                )
            else:
                name = f"GLORIA compiled: {c['data']}, {c['k']} queries, {c['strategy']}"
            out.append(Case(name, {"kind": "gloria", "config": config}))
    return out


def prepare(case: Case, data: Path) -> None:
    """Generate a configuration's data (once), as its benchmark does, before any run."""
    config = case.config
    if config["kind"] == "stream" and config["workload"] == "sharing":
        from kernel_rideshare import ensure_data

        ensure_data(data, int(config["n"]))
    elif config["kind"] == "stream":
        import kernel_varied

        kernel_varied.ensure_data(data, int(config["n"]))
    elif config["kind"] == "axes":
        from kernel_axes import AXES, BASE, events_for

        change = next(c for a, label, c in AXES if (a, label) == (config["axis"], config["label"]))
        drivers = {**BASE, **change}["drivers"]
        if not (data / f"axes_{config['n']}_{drivers}.csv").exists():
            print(f"generating the axes' events, {drivers:,} drivers ...", flush=True)
            events_for(data, int(config["n"]), drivers, "seconds")
    elif config["kind"] == "sharon":
        import sharon_sequences

        sharon_sequences.CACHE = Path(config["cache"])
        if not sharon_sequences.stream_cache(config["config"]).exists():
            print(f"generating SHARON's events, {config['config']['events']:,} ...", flush=True)
            sharon_sequences.prepare(config["config"])
    # (gloria: its child generates its events, as gloria_execution.py's does)


# --- the child: one run in a fresh process -------------------------------------------


def child(config: dict[str, Any]) -> dict[str, Any]:
    """Run one configuration in this process: a warm-up, then the timed engine."""
    import trendagg

    kind = config["kind"]
    if kind == "stream":
        report = stream_child(config)
    elif kind == "axes":
        report = axes_child(config)
    elif kind in ("sharon", "gloria"):
        report = script_child(config)
    else:
        raise ValueError(f"unknown kind {kind!r}")
    try:
        from trendagg.jit import digest

        kernels = digest()[:16]
    except ImportError:
        kernels = "?"
    return {**report, "trendagg": trendagg.__file__, "kernels": kernels}


def stream_child(config: dict[str, Any]) -> dict[str, Any]:
    """kernel_rideshare.child's and kernel_varied.child's run: the CSV streamed in chunks
    into ``Runner.feed`` (reading excluded from the engine's time), after a warm-up."""
    from kernel_varied import NUMERIC

    from trendagg.engine import Runner
    from trendagg.io.readers import iter_events
    from trendagg.language import parse
    from trendagg.plan.compile import attributes_read, compile_workload
    from workloads import sharing_workload, varied_workload

    n = int(config["n"])
    if config["workload"] == "sharing":
        text, numeric = sharing_workload(50), {"Travel": {"duration"}}  # (kernel_rideshare's)
        path = Path(config["data"]) / f"rideshare_{n}.csv"
    else:
        text, numeric = varied_workload(50, str(config["variant"])), NUMERIC
        path = Path(config["data"]) / f"varied_{n}.csv"
    plans = compile_workload(parse(text))
    strategy = str(config["strategy"])
    chunks = iter_events(
        str(path), numeric=numeric, chunk_rows=CHUNK_ROWS, attributes=attributes_read(plans)
    )
    chunk = next(chunks, None)
    assert chunk is not None, path
    warm = Runner(plans, strategy)
    warm.feed(chunk.events.take(slice(0, WARM_EVENTS)))
    warm.finish()
    started = time.perf_counter()
    runner = Runner(plans, strategy)
    engine = time.perf_counter() - started
    python = len(runner.sharing.on("python")) if runner.sharing is not None else 0
    limit = PYTHON_EVENTS if python else n
    rows: list[Any] = []
    events = 0
    while chunk is not None and events < limit:
        if chunk.rejected:
            raise SystemExit(f"{len(chunk.rejected)} rows rejected in {path}")
        batch = chunk.events
        if events + len(batch) > limit:
            batch = batch.take(slice(0, limit - events))
        events += len(batch)
        started = time.perf_counter()
        rows += runner.feed(batch)
        engine += time.perf_counter() - started
        chunk = next(chunks, None)
    started = time.perf_counter()
    rows += runner.finish()
    engine += time.perf_counter() - started
    return report(engine, events, rows, python)


def axes_child(config: dict[str, Any]) -> dict[str, Any]:
    """kernel_axes.py's run of one configuration: its events in memory, ``kernel_axes.feed``
    over them after a warm-up over the first (its check run)."""
    from kernel_axes import AXES, BASE, axis_text, events_for, feed

    from trendagg.language import parse
    from trendagg.optimizer.plan import sharing_plan
    from trendagg.plan.compile import compile_workload

    change = next(c for a, label, c in AXES if (a, label) == (config["axis"], config["label"]))
    settings = {**BASE, **change}
    plans = compile_workload(parse(axis_text(settings)))
    python = len(sharing_plan(plans, "hamlet").on("python"))
    batch = events_for(
        Path(config["data"]), int(config["n"]), settings["drivers"], settings["times"]
    )
    timed = batch.take(slice(0, PYTHON_EVENTS)) if python else batch
    feed(plans, batch.take(slice(0, AXES_WARM_EVENTS)))
    seconds, rows = feed(plans, timed)
    return report(seconds, len(timed), rows, python)


def script_child(config: dict[str, Any]) -> dict[str, Any]:
    """sharon_sequences.child or gloria_execution.child, as they are (their plan made and
    the kernel loaded by a run over the first events before their clock); the rows are
    their timed run's, the last ``run_strategy`` call's."""
    import trendagg.engine

    calls: list[list[Any]] = []
    run_strategy = trendagg.engine.run_strategy

    def recorded(*args: Any, **kwargs: Any) -> list[Any]:
        rows = run_strategy(*args, **kwargs)
        calls.append(rows)
        return rows

    trendagg.engine.run_strategy = recorded  # (their child imports it when called)
    if config["kind"] == "sharon":
        import sharon_sequences

        sharon_sequences.CACHE = Path(config["cache"])
        out = sharon_sequences.child(config["config"])
    else:
        import gloria_execution

        out = gloria_execution.child(config["config"])
    events = int(out.get("events", config["config"]["events"]))
    return report(float(out["seconds"]), events, calls[-1], 0)


def report(seconds: float, events: int, rows: list[Any], python: int) -> dict[str, Any]:
    return {
        "engine_s": seconds,
        "events": events,
        "rows": len(rows),
        "digest": rows_digest(rows),
        "python_queries": python,
    }


def rows_digest(rows: list[Any]) -> str:
    """SHA-256 of the rows, each as the repr of (query, window, group, values) with the
    group's and the values' items sorted, in sorted order."""
    lines = sorted(
        repr(
            (
                r.query,
                r.window_start,
                r.window_end,
                sorted(r.group.items()),
                sorted(r.values.items()),
            )
        )
        for r in rows
    )
    return hashlib.sha256("\n".join(lines).encode()).hexdigest()


# --- the parent: alternating runs, the table ----------------------------------------


class Run(NamedTuple):
    engine_s: float
    wall_s: float
    peak_mb: float
    report: dict[str, Any]


def one_run(tree: Path, case: Case, cpu: int, data: Path) -> Run:
    """One fresh process of ``tree``'s trendagg running ``case``, pinned to ``cpu``."""
    from before_after import pinned

    env = {**os.environ, "PYTHONPATH": str(tree / "src"), "PYTHONHASHSEED": "0"}
    command = [sys.executable, str(Path(__file__).resolve()), "--child"]
    command.append(json.dumps({**case.config, "data": str(data)}))
    run = pinned(command, env, cpu)
    if run.code:
        raise SystemExit(f"{case.name}: the run of {tree} failed:\n{run.stderr}")
    result = json.loads(run.stdout.strip().splitlines()[-1])
    source = tree / "src"
    if not Path(result["trendagg"]).resolve().is_relative_to(source.resolve()):
        raise SystemExit(
            f"{case.name}: the run of {tree} imported trendagg from {result['trendagg']}, "
            f"not from {source}; is it installed in a way that precedes PYTHONPATH?"
        )
    return Run(float(result["engine_s"]), run.wall, run.peak_mb, result)


def warm(tree: Path) -> None:
    """``trendagg warm`` of ``tree``: its kernels compiled into numba's cache if missing."""
    env = {**os.environ, "PYTHONPATH": str(tree / "src")}
    entry = "import sys; from trendagg.cli import main; sys.exit(main())"
    done = subprocess.run([sys.executable, "-c", entry, "warm"], env=env)
    if done.returncode:
        raise SystemExit(f"trendagg warm of {tree} failed")


def compare(
    case: Case, trees: dict[str, Path], repeats: int, cpu: int, data: Path
) -> dict[str, Any]:
    """``repeats`` runs of each tree, alternating; the row of the table and the CSV."""
    runs: dict[str, list[Run]] = {label: [] for label in trees}
    for _ in range(repeats):
        for label, tree in trees.items():  # alternating: drift hits both alike
            runs[label].append(one_run(tree, case, cpu, data))
    row: dict[str, Any] = {"configuration": case.name, "runs": repeats}
    for label in trees:
        engine = statistics.median(r.engine_s for r in runs[label])
        events = runs[label][0].report["events"]
        row[f"{label}_events"] = events
        row[f"{label}_events_per_s"] = events / engine
        row[f"{label}_engine_s"] = engine
        row[f"{label}_wall_s"] = statistics.median(r.wall_s for r in runs[label])
        row[f"{label}_peak_mb"] = max(r.peak_mb for r in runs[label])
        row[f"{label}_python_queries"] = runs[label][0].report["python_queries"]
        row[f"{label}_engine_runs"] = " ".join(f"{r.engine_s:.3f}" for r in runs[label])
        row[f"{label}_kernels"] = runs[label][0].report["kernels"]
    row["ratio"] = row["after_events_per_s"] / row["before_events_per_s"]
    digests = {r.report["digest"] for label in trees for r in runs[label]}
    row["same_rows"] = len(digests) == 1
    row["rows"] = runs["after"][0].report["rows"]
    row["digest"] = runs["after"][0].report["digest"]
    return row


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--base", help="the commit to compare this working tree with")
    ap.add_argument("--repeats", type=int, default=3, help="runs of each tree per configuration")
    ap.add_argument(
        "--events",
        type=int,
        default=SCALE,
        help=f"scale every size by EVENTS / {SCALE:,} (default {SCALE:,}: the benchmarks' sizes)",
    )
    ap.add_argument(
        "--only",
        action="append",
        metavar="SUBSTRING",
        help="only the configurations whose name contains it (case-insensitive; repeatable)",
    )
    ap.add_argument(
        "--data",
        type=Path,
        default=Path(tempfile.gettempdir()) / "trendagg-bench",
        help="where the generated data goes (default: the system's temporary directory)",
    )
    ap.add_argument(
        "--name",
        default="kernel_before_after",
        help="results/NAME.md and .csv (default %(default)s)",
    )
    ap.add_argument("--list", action="store_true", help="print the configurations' names, stop")
    ap.add_argument("--child", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        print(json.dumps(child(json.loads(args.child))))
        return
    sys.path.insert(0, str(ROOT / "src"))  # (the data made by this tree's generators)
    selected = cases(args.events, args.data)
    if args.only:
        wanted = [s.lower() for s in args.only]
        selected = [c for c in selected if any(s in c.name.lower() for s in wanted)]
    if args.list:
        print("\n".join(c.name for c in selected))
        return
    if not args.base:
        ap.error("--base REV is required (the commit to compare this working tree with)")
    if not selected:
        raise SystemExit(f"no configuration's name contains {' or '.join(args.only)} (--list)")
    from before_after import base_tree

    args.data.mkdir(parents=True, exist_ok=True)
    trees = {"before": base_tree(args.base), "after": ROOT}
    cpu = sorted(os.sched_getaffinity(0))[-1]
    began = time.perf_counter()
    for case in selected:
        prepare(case, args.data)
    for label, tree in trees.items():
        print(f"{label}: {tree}", flush=True)
        warm(tree)
    rows = []
    for i, case in enumerate(selected):
        row = compare(case, trees, args.repeats, cpu, args.data)
        rows.append(row)
        write(rows, args, time.perf_counter() - began)
        print(
            f"[{i + 1}/{len(selected)}] {case.name}: {row['before_events_per_s']:,.0f} -> "
            f"{row['after_events_per_s']:,.0f} events/s ({row['ratio']:.2f}x), engine "
            f"{row['before_engine_s']:.2f} / {row['after_engine_s']:.2f} s"
            + ("" if row["same_rows"] else ", ROWS DIFFER"),
            flush=True,
        )
    write(rows, args, time.perf_counter() - began)
    print(f"wrote {RESULTS / (args.name + '.md')}")


def git(*args: str) -> str:
    done = subprocess.run(["git", "-C", str(ROOT), *args], capture_output=True, text=True)
    return done.stdout.strip()


def write(rows: list[dict[str, Any]], args: Any, took: float) -> None:
    """benchmarks/results/kernel_before_after.{md,csv} of the configurations so far."""
    from hamlet_rideshare import machine

    RESULTS.mkdir(exist_ok=True)
    with open(RESULTS / f"{args.name}.csv", "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    base = git("rev-parse", "--short", args.base)
    head = git("rev-parse", "--short", "HEAD")
    dirty = " + uncommitted changes to src/" if git("status", "--porcelain", "--", "src") else ""
    n = args.events
    under = [r for r in rows if r["ratio"] < THRESHOLD]
    python = [r for r in rows if r["before_python_queries"] or r["after_python_queries"]]
    differ = [r for r in rows if not r["same_rows"]]
    lines = [
        f"# The compiled engine before and after: {base} vs {head}{dirty}, every kernel benchmark",
        "",
        f"Machine: {machine()}. Run {time.strftime('%Y-%m-%d')}, {took / 60:.0f} min in all; "
        f"`benchmarks/kernel_before_after.py --base {args.base} --repeats {args.repeats} "
        f"--events {args.events}`. Kernels: before {rows[0]['before_kernels']}, after "
        f"{rows[0]['after_kernels']} (their digests). Each run is a fresh process pinned to "
        "one core importing one tree's trendagg; it runs the configuration as its benchmark "
        "does (uniform and varied: the CSV streamed in chunks of 500,000 rows into "
        "`Runner.feed`, reading excluded; axes: `Runner.feed` over the events in memory; "
        "SHARON and GLORIA: their scripts' own child, the plan made first), after a "
        "warm-up over its first events, so that loading the kernel is not timed. The two "
        "trees alternate run by run; medians of the runs. Events: as named for the uniform "
        f"workload; {n:,} for the axes, the varied workload and SHARON's and GLORIA's "
        f"rideshare sweeps, {round(0.12 * n):,} for GLORIA's bursts (Fig. 19). events/s: the "
        "events over the engine's seconds; after / before: of events/s, **bold** under "
        f"{THRESHOLD}x. Same rows: every run of both trees gave one SHA-256 of its result "
        "rows. Process seconds from spawn to exit and peak memory of each tree are in the "
        "CSV beside this file.",
        "",
        "| configuration | runs | before events/s | after events/s | after / before | "
        "before engine s | after engine s | same rows |",
        "|---|---:|---:|---:|---:|---:|---:|---|",
    ]
    for r in rows:
        ratio = f"{r['ratio']:.2f}x"
        lines.append(
            f"| {r['configuration']} | {r['runs']} | {r['before_events_per_s']:,.0f} | "
            f"{r['after_events_per_s']:,.0f} | {f'**{ratio}**' if r in under else ratio} | "
            f"{r['before_engine_s']:.2f} | {r['after_engine_s']:.2f} | "
            f"{'yes' if r['same_rows'] else '**NO**'} |"
        )
    lines += [
        "",
        f"Under {THRESHOLD}x: "
        + (", ".join(r["configuration"] for r in under) if under else "none")
        + f" (of {len(rows)}). Rows differ: "
        + (", ".join(r["configuration"] for r in differ) if differ else "none")
        + ". With queries in the Python engine (timed over their first "
        f"{PYTHON_EVENTS:,} events, as the benchmarks do): "
        + (", ".join(r["configuration"] for r in python) if python else "none")
        + ".",
    ]
    (RESULTS / f"{args.name}.md").write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
