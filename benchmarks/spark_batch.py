"""Spark batch and streaming vs the local engine, and the Python/JVM transfer floor.

The bundled rideshare workload (3 queries) over a generated Parquet file, side by
side in one run, each configuration on the same file:

* local: ``trendagg.run`` on the file (read + engine), in this process, one core;
* spark: ``spark.read.parquet`` + the batch pipeline (embedded ``local[*]``),
  rows collected to the driver;
* identity: the same read, repartitioned by driver and sorted by time, then a
  ``mapInArrow`` that returns its batches unchanged: what moving the events
  through Python costs before any trend is computed (the transfer floor);
* stream (``--stream``): Structured Streaming over the same events split into
  ten Parquet files, one micro-batch per file, RocksDB state, then a file far in
  the future to close every window; its rows are checked against the batch's.

    .venv/bin/python benchmarks/spark_batch.py --events 1000000 10000000 --repeats 3 1

Writes benchmarks/results/spark_batch.{md,csv,png}. Medians of the repeats
(the n-th ``--repeats`` value goes with the n-th ``--events`` value).

    .venv/bin/python benchmarks/spark_batch.py --base 21bfa9f --events 1000000 --repeats 4

(``--base REV``: Spark batch and the local engine of that commit and of this tree, on
the same file, alternating fresh processes; writes results/spark_before_after.md.)
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
from importlib.resources import files
from pathlib import Path

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results"


def write_events(path: Path, n: int) -> None:
    """n rideshare events as Parquet, written in slices (never all in memory)."""
    import itertools

    import pyarrow as pa
    import pyarrow.parquet as pq

    from trendagg.generate import rideshare

    stream = rideshare(n, events_per_minute=2_000, seed=3)
    names = ["type", "time", "driver", "rider", "district", "duration", "speed", "price", "stars"]
    types = [pa.string(), pa.int64()] + [pa.int64()] * 7
    schema = pa.schema(list(zip(names, types, strict=True)))
    with pq.ParquetWriter(path, schema) as writer:
        while chunk := list(itertools.islice(stream, 500_000)):
            writer.write_table(
                pa.table({c: [e.get(c) for e in chunk] for c in names}, schema=schema)
            )


def timed(fn: object, repeats: int) -> tuple[float, list[float]]:
    runs = []
    for _ in range(repeats):
        started = time.perf_counter()
        fn()  # type: ignore[operator]
        runs.append(time.perf_counter() - started)
    return statistics.median(runs), runs


def split_files(path: Path, into: Path, pieces: int) -> None:
    """The events as ``pieces`` Parquet files in time order, then a far-future flush file."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    table = pq.read_table(path)
    into.mkdir(parents=True)
    size = -(-table.num_rows // pieces)
    for i in range(pieces):
        pq.write_table(table.slice(i * size, size), into / f"part-{i:03d}.parquet")
        os.utime(into / f"part-{i:03d}.parquet", (1_700_000_000 + i, 1_700_000_000 + i))
    flush = {n: [None] for n in table.column_names} | {"type": ["Flush"], "time": [10**9]}
    pq.write_table(pa.table(flush, schema=table.schema), into / "part-999.parquet")
    os.utime(into / "part-999.parquet", (1_700_001_000, 1_700_001_000))


def same_rows(a: list[object], b: list[object]) -> bool:
    """The same result rows, in any order."""
    return sorted(map(repr, a)) == sorted(map(repr, b))


def plot(rows: list[dict[str, object]], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    kinds = [("local", "local engine (1 core)"), ("spark", "Spark batch (local[*])")]
    if any(r.get("stream_s") for r in rows):
        kinds.append(("stream", "Spark streaming"))
    kinds.append(("identity", "identity mapInArrow (floor)"))
    fig, ax = plt.subplots(figsize=(8, 4))
    width = 0.8 / len(kinds)
    for j, (key, label) in enumerate(kinds):
        xs = [i + j * width for i in range(len(rows))]
        ys = [float(r["events"]) / float(r[f"{key}_s"]) if r.get(f"{key}_s") else 0 for r in rows]  # type: ignore[arg-type]
        ax.bar(xs, ys, width, label=label)
    ax.set_xticks([i + width * (len(kinds) - 1) / 2 for i in range(len(rows))])
    ax.set_xticklabels([f"{int(r['events']):,} events" for r in rows])  # type: ignore[call-overload]
    ax.set_yscale("log")
    ax.set_ylabel("events per second (log)")
    ax.set_title("rideshare workload, 3 queries: medians, times include reading Parquet")
    ax.legend(fontsize=8)
    ax.grid(True, axis="y", alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def child(path: str) -> None:
    """One process of ``--base``: a session, a warm-up job, then one local run and one Spark
    batch collect of the trendagg on ``sys.path``; prints their seconds and a digest of the
    rows as JSON."""
    import trendagg
    from trendagg.spark import spark_session
    from trendagg.spark.batch import collect

    workload = (files("trendagg") / "examples" / "rideshare.tq").read_text()
    spark = spark_session("local[*]")
    collect(spark, path, workload)  # the JVM's and the workers' start, outside the timing
    started = time.perf_counter()
    local = trendagg.run(workload, path)
    local_s = time.perf_counter() - started
    spark.catalog.clearCache()
    started = time.perf_counter()
    rows = collect(spark, path, workload)[0]
    spark_s = time.perf_counter() - started
    assert same_rows(local, rows), "engines disagree"
    digest = hashlib.sha256("\n".join(sorted(map(repr, rows))).encode()).hexdigest()[:16]
    print(json.dumps({"local_s": local_s, "spark_s": spark_s, "digest": digest}))
    spark.stop()


def compare(base: str, n: int, repeats: int) -> None:
    """Spark batch and the local engine of ``base`` and of this tree, alternating fresh
    processes (so that drift hits both alike); writes results/spark_before_after.md."""
    from before_after import base_tree
    from hamlet_rideshare import machine

    trees = {"before": base_tree(base), "after": HERE.parent}
    times: dict[str, dict[str, list[float]]] = {t: {"local_s": [], "spark_s": []} for t in trees}
    digests: dict[str, str] = {}
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / f"rides_{n}.parquet"
        write_events(path, n)
        for _ in range(repeats):
            for label, tree in trees.items():
                env = {**os.environ, "PYTHONPATH": str(tree / "src"), "PYTHONHASHSEED": "0"}
                done = subprocess.run(
                    [sys.executable, __file__, "--child", str(path)],
                    env=env, capture_output=True, text=True, check=True,
                )  # fmt: skip
                report = json.loads(done.stdout.strip().splitlines()[-1])
                for key in times[label]:
                    times[label][key].append(report[key])
                digests[label] = report["digest"]
                print(label, report, flush=True)
    median = {t: {k: statistics.median(v) for k, v in times[t].items()} for t in trees}
    lines = [
        f"# Spark batch before and after: {base} vs this tree ({n:,} events)",
        "",
        f"Machine: {machine()}. Run {time.strftime('%Y-%m-%d')}. The rideshare workload (3 "
        "queries) over one generated Parquet file; each run is a fresh process that starts "
        "a local[*] session and runs one untimed Spark job first, then times `trendagg.run` "
        "(local engine, one core) and Spark batch `collect`; the two trees alternate; "
        f"medians of {repeats}. Same rows in both trees: "
        f"{'yes' if digests['before'] == digests['after'] else 'no'}.",
        "",
        "| | before s | after s | after / before (time) | before runs | after runs |",
        "|---|---:|---:|---:|---|---|",
    ]
    for key, name in (("local_s", "local engine"), ("spark_s", "Spark batch")):
        b, a = median["before"][key], median["after"][key]
        runs = {t: " ".join(f"{x:.1f}" for x in times[t][key]) for t in trees}
        lines.append(
            f"| {name} | {b:.2f} | {a:.2f} | {a / b:.2f} | {runs['before']} | {runs['after']} |"
        )
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "spark_before_after.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--events", type=int, nargs="+", default=[100_000, 1_000_000])
    parser.add_argument("--repeats", type=int, nargs="+", default=[3])
    parser.add_argument("--stream", action="store_true", help="also time Structured Streaming")
    parser.add_argument("--base", help="instead: Spark batch of this commit and of this tree")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        return child(args.child)
    if args.base:
        return compare(args.base, args.events[0], args.repeats[0])
    repeats = {n: args.repeats[min(i, len(args.repeats) - 1)] for i, n in enumerate(args.events)}

    from hamlet_rideshare import machine

    import trendagg
    from trendagg.spark import spark_session
    from trendagg.spark.batch import collect
    from trendagg.spark.stream import read_results, stream_trends

    workload = (files("trendagg") / "examples" / "rideshare.tq").read_text()
    spark = spark_session("local[*]")
    partitions = 2 * spark.sparkContext.defaultParallelism

    def identity(batches):  # type: ignore[no-untyped-def]
        yield from batches

    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for n in args.events:
            path = Path(tmp) / f"rides_{n}.parquet"
            write_events(path, n)
            k = repeats[n]
            local_rows: list[object] = []

            def local_run() -> None:
                local_rows[:] = trendagg.run(workload, path)  # noqa: B023

            t_local, runs_local = timed(local_run, k)
            spark_rows: list[object] = []

            def spark_run() -> None:
                spark.catalog.clearCache()  # measure the job, never a cached result
                spark_rows[:] = collect(spark, str(path), workload)[0]  # noqa: B023

            t_spark, runs_spark = timed(spark_run, k)
            assert same_rows(local_rows, spark_rows), "engines disagree"

            def floor() -> None:
                spark.catalog.clearCache()
                df = spark.read.parquet(str(path))  # noqa: B023
                df.repartition(partitions, "driver").sortWithinPartitions("time").mapInArrow(
                    identity, df.schema
                ).count()

            t_identity, _ = timed(floor, k)
            row: dict[str, object] = {
                "events": n,
                "repeats": k,
                "local_s": round(t_local, 2),
                "spark_s": round(t_spark, 2),
                "identity_s": round(t_identity, 2),
                "local_events_per_s": round(n / t_local),
                "spark_events_per_s": round(n / t_spark),
                "spark_over_local": round(t_local / t_spark, 2),
                "spark_over_identity": round(t_spark / t_identity, 1),
                "result_rows": len(local_rows),
                "local_runs_s": " ".join(f"{x:.1f}" for x in runs_local),
                "spark_runs_s": " ".join(f"{x:.1f}" for x in runs_spark),
            }
            if args.stream:
                split_files(path, Path(tmp) / f"stream_{n}", 10)
                stream_rows: list[object] = []

                def stream_run() -> None:
                    run_dir = Path(tempfile.mkdtemp(dir=tmp))
                    query, _ = stream_trends(
                        str(Path(tmp) / f"stream_{n}"),  # noqa: B023
                        workload,
                        spark=spark,
                        output=str(run_dir / "out"),
                        checkpoint=str(run_dir / "ckpt"),
                        available_now=True,
                        max_files_per_trigger=1,
                    )
                    query.awaitTermination()
                    stream_rows[:] = read_results(str(run_dir / "out"))  # noqa: B023

                t_stream, _ = timed(stream_run, k)
                assert same_rows(local_rows, stream_rows), "stream disagrees"
                row["stream_s"] = round(t_stream, 2)
                row["stream_events_per_s"] = round(n / t_stream)
            rows.append(row)
            print(row, flush=True)
    spark.stop()
    RESULTS.mkdir(parents=True, exist_ok=True)
    names = list(dict.fromkeys(k for r in rows for k in r))
    with (RESULTS / "spark_batch.csv").open("w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=names)
        writer.writeheader()
        writer.writerows(rows)
    plot(rows, RESULTS / "spark_batch.png")
    stream = args.stream
    lines = [
        "# Spark batch (and streaming) vs the local engine (rideshare workload, 3 queries)",
        "",
        f"Machine: {machine()}. Spark local[*] ({partitions} partitions per query group), "
        "session started before timing; times include reading the Parquet file; medians of "
        "the repeats shown; all engines returned the same rows (checked).",
        "",
        "| events | repeats | local s (events/s) | Spark batch s (events/s) | Spark / local speed-up | identity mapInArrow s | Spark / identity |"
        + (" Spark streaming s (events/s) |" if stream else ""),
        "|---:|---:|---:|---:|---:|---:|---:|" + ("---:|" if stream else ""),
    ]
    for r in rows:
        line = (
            f"| {r['events']:,} | {r['repeats']} | {r['local_s']:.1f} ({r['local_events_per_s']:,}) "
            f"| {r['spark_s']:.1f} ({r['spark_events_per_s']:,}) | {r['spark_over_local']:.2f}x "
            f"| {r['identity_s']:.1f} | {r['spark_over_identity']:.1f}x |"
        )
        if stream:
            line += f" {r['stream_s']:.1f} ({r['stream_events_per_s']:,}) |"
        lines.append(line)
    (RESULTS / "spark_batch.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
