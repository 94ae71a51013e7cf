"""GLORIA's optimizer against NoPrune and Greedy: planning time and peak memory (issue #18).

The paper's optimizer experiments (section 8, Figs. 11-15), on the workload shapes of the
authors' code (specification ``../shared/specs/gloria.md``, section 5):

* ``seq``: groups of queries sharing a four-type core, ``SEQ(first, K1, K2, K3, K4,
  last)`` with a random first and last type, windows of 5, 10, 15 or 20 minutes (a
  query shares only with queries of its window); 20 -> 200 queries (Fig. 11);
* ``kleene``: 100 queries in groups of 10 sharing a Kleene unit, ``SEQ(SEQ(K1 .. Kn)+,
  S1, last)``, Kleene length n = 2 -> 10 (Fig. 12);
* ``mixed``: SEQ and Kleene queries 6:1, 20 -> 200 queries (Fig. 13), and 100 queries
  with a Kleene share of 10% -> 60% (Fig. 14).

Rates: one per event type, drawn from 1-20 (seeded). Each optimizer runs in this process
on the same queries and rates: ``gloria`` (pruned graph, Algorithm 1), ``noprune`` (the
whole graph, searched), ``greedy`` (the cheapest node per pool). Time: the median of
``--repeats`` runs of ``optimize`` (the template, the graph and the search); peak memory:
tracemalloc's peak during one more run. The plans' modelled costs are printed beside
them (GLORIA's never above NoPrune's or Greedy's: checked each run).

    .venv/bin/python benchmarks/gloria_optimizer.py          # about 1 minute here

Writes benchmarks/results/gloria_optimizer.{md,csv,png}.
"""

from __future__ import annotations

import argparse
import csv
import random
import re
import statistics
import sys
import time
import tracemalloc
from pathlib import Path

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results"
MODES = ("gloria", "noprune", "greedy")


def seq_queries(n: int, rnd: random.Random, types: int = 40) -> list[tuple[str, str, int]]:
    """(name, pattern, window) of n SEQ queries in groups of ten around four-type cores."""
    names = [f"T{i}" for i in range(types)]
    cores = [rnd.sample(names, 4) for _ in range(max(1, n // 10))]
    out = []
    for i in range(n):
        core = cores[i % len(cores)]
        first, last = rnd.sample([t for t in names if t not in core], 2)
        window = rnd.choice([5, 10, 15, 20])
        out.append((f"s{i:03d}", f"SEQ({first}, {', '.join(core)}, {last})", window))
    return out


def kleene_queries(n: int, length: int, rnd: random.Random) -> list[tuple[str, str, int]]:
    """n queries in groups of ten sharing ``SEQ(K1 .. K<length>)+``, then two SEQ types."""
    out = []
    for i in range(n):
        group = i // 10
        unit = ", ".join(f"K{group}_{j}" for j in range(length))
        s1, last = f"S{rnd.randrange(20)}", f"R{rnd.randrange(20)}"
        out.append((f"k{i:03d}", f"SEQ(SEQ({unit})+, {s1}, {last})", 10))
    return out


def mixed_queries(n: int, kleene_share: float, rnd: random.Random) -> list[tuple[str, str, int]]:
    k = round(n * kleene_share)
    return seq_queries(n - k, rnd) + kleene_queries(k, 3, rnd)


def workloads() -> list[tuple[str, str, int, list[tuple[str, str, int]]]]:
    """(shape, axis, value, queries) of every point."""
    points = []
    for n in (20, 40, 80, 120, 160, 200):
        points.append(("seq", "queries", n, seq_queries(n, random.Random(n))))
    for length in (2, 4, 6, 8, 10):
        points.append(
            ("kleene", "kleene length", length, kleene_queries(100, length, random.Random(length)))
        )
    for n in (20, 40, 80, 120, 160, 200):
        points.append(("mixed 6:1", "queries", n, mixed_queries(n, 1 / 7, random.Random(n))))
    for pct in (10, 20, 30, 40, 50, 60):
        points.append(
            (
                "mixed, 100 queries",
                "Kleene %",
                pct,
                mixed_queries(100, pct / 100, random.Random(pct)),
            )
        )
    return points


def measure(queries: list[tuple[str, str, int]], repeats: int) -> dict[str, object]:
    from trendagg.optimizer.gloria import optimize
    from trendagg.optimizer.gloria_template import GloriaQuery

    described = [GloriaQuery.of(n, p, signature=(("within", w),)) for n, p, w in queries]
    types = sorted({t for _, p, _ in queries for t in re.findall(r"\w+", p)} - {"SEQ"})
    rnd = random.Random(len(types))
    rates = {t: rnd.randint(1, 20) for t in types}
    row: dict[str, object] = {"types": len(types)}
    costs = {}
    for mode in MODES:
        runs = []
        for _ in range(repeats):
            started = time.perf_counter()
            plan = optimize(described, rates, mode=mode)
            runs.append(time.perf_counter() - started)
        tracemalloc.start()
        optimize(described, rates, mode=mode)
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
        if plan.check():
            raise SystemExit(f"{mode}: an invalid plan: {plan.check()}")
        costs[mode] = plan.cost
        row[f"{mode}_ms"] = round(statistics.median(runs) * 1000, 1)
        row[f"{mode}_peak_kb"] = round(peak / 1024)
        row[f"{mode}_nodes"] = plan.nodes
        row[f"{mode}_cost"] = round(plan.cost, 1)
    slack = 1e-9 * max(costs.values())
    if costs["gloria"] > costs["noprune"] + slack or costs["gloria"] > costs["greedy"] + slack:
        raise SystemExit(f"GLORIA's plan costs more than a baseline's: {costs}")
    return row


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    sys.path.insert(0, str(HERE))
    from hamlet_rideshare import machine

    rows = []
    for shape, axis, value, queries in workloads():
        row: dict[str, object] = {
            "shape": shape,
            "axis": axis,
            "value": value,
            "queries": len(queries),
        }
        row.update(measure(queries, args.repeats))
        rows.append(row)
        print(
            f"{shape:>20} {axis}={value}: " + ", ".join(f"{m} {row[f'{m}_ms']} ms" for m in MODES),
            flush=True,
        )
    write_results(rows, machine(), args.repeats)


def write_results(rows: list[dict[str, object]], machine: str, repeats: int) -> None:
    RESULTS.mkdir(parents=True, exist_ok=True)
    with (RESULTS / "gloria_optimizer.csv").open("w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    plot(rows, RESULTS / "gloria_optimizer.png")
    lines = [
        "# GLORIA's optimizer against NoPrune and Greedy",
        "",
        f"Machine: {machine}. Run {time.strftime('%Y-%m-%d')}. Planning time (template, "
        f"graph, search), median of {repeats} runs; peak memory (tracemalloc) of one more; "
        "nodes of the graph built; the plans' modelled costs (GLORIA's never above a "
        "baseline's: checked).",
        "",
        "| shape | axis | value | queries | GLORIA ms | NoPrune ms | Greedy ms "
        "| NoPrune / GLORIA | GLORIA KB | NoPrune KB | GLORIA nodes | NoPrune nodes "
        "| GLORIA cost | NoPrune cost | Greedy cost |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        ratio = float(r["noprune_ms"]) / max(float(r["gloria_ms"]), 1e-9)  # type: ignore[arg-type]
        lines.append(
            f"| {r['shape']} | {r['axis']} | {r['value']} | {r['queries']} | {r['gloria_ms']} "
            f"| {r['noprune_ms']} | {r['greedy_ms']} | {ratio:.1f}x | {r['gloria_peak_kb']:,} "
            f"| {r['noprune_peak_kb']:,} | {r['gloria_nodes']} | {r['noprune_nodes']} "
            f"| {r['gloria_cost']:,} | {r['noprune_cost']:,} | {r['greedy_cost']:,} |"
        )
    (RESULTS / "gloria_optimizer.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


def plot(rows: list[dict[str, object]], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    shapes = list(dict.fromkeys(str(r["shape"]) for r in rows))
    fig, axes = plt.subplots(1, len(shapes), figsize=(4 * len(shapes), 3.6))
    for ax, shape in zip(axes, shapes, strict=True):
        part = [r for r in rows if r["shape"] == shape]
        xs = [r["value"] for r in part]
        for mode, label in zip(MODES, ("GLORIA", "NoPrune", "Greedy"), strict=True):
            ax.plot(xs, [r[f"{mode}_ms"] for r in part], marker="o", label=label)
        ax.set_title(shape)
        ax.set_xlabel(str(part[0]["axis"]))
        ax.set_yscale("log")
        ax.grid(True, alpha=0.3)
    axes[0].set_ylabel("planning time, ms (log)")
    axes[0].legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


if __name__ == "__main__":
    main()
