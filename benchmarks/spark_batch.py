"""Spark batch vs the local engine, and the Python/JVM transfer floor.

The bundled rideshare workload (3 queries) over a generated Parquet file:

* local: ``trendagg.run`` on the file (read + engine), in this process;
* spark: ``spark.read.parquet`` + the batch pipeline, rows collected to the driver;
* identity: the same read, repartition by driver and sort by time, then a
  ``mapInArrow`` that returns its batches unchanged: what moving the events
  through Python costs before any trend is computed.

    .venv/bin/python benchmarks/spark_batch.py --events 100000 1000000

Writes benchmarks/results/spark_batch.{md,csv}. Medians of ``--repeats`` runs.
"""

from __future__ import annotations

import argparse
import csv
import statistics
import tempfile
import time
from importlib.resources import files
from pathlib import Path

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results"


def write_events(path: Path, n: int) -> None:
    from trendagg.generate import rideshare, write_stream

    write_stream(rideshare(n, events_per_minute=2_000, seed=3), str(path))


def timed(fn: object, repeats: int) -> float:
    runs = []
    for _ in range(repeats):
        started = time.perf_counter()
        fn()  # type: ignore[operator]
        runs.append(time.perf_counter() - started)
    return statistics.median(runs)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--events", type=int, nargs="+", default=[100_000, 1_000_000])
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()

    import trendagg
    from trendagg.spark import spark_session
    from trendagg.spark.batch import collect

    workload = (files("trendagg") / "examples" / "rideshare.tq").read_text()
    spark = spark_session("local[*]", [("spark.sql.shuffle.partitions", "4")])

    def identity(batches):  # type: ignore[no-untyped-def]
        yield from batches

    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for n in args.events:
            path = Path(tmp) / f"rides_{n}.parquet"
            write_events(path, n)
            local_rows = trendagg.run(workload, path)
            spark_rows, _, _ = collect(spark, str(path), workload)
            assert sorted(map(repr, local_rows)) == sorted(map(repr, spark_rows)), (
                "engines disagree"
            )
            t_local = timed(lambda: trendagg.run(workload, path), args.repeats)  # noqa: B023

            def spark_run() -> None:
                spark.catalog.clearCache()  # measure the job, never a cached result
                collect(spark, str(path), workload)  # noqa: B023

            t_spark = timed(spark_run, args.repeats)

            def floor() -> None:
                spark.catalog.clearCache()
                df = spark.read.parquet(str(path))  # noqa: B023
                df.repartition(4, "driver").sortWithinPartitions("time").mapInArrow(
                    identity, df.schema
                ).count()

            t_identity = timed(floor, args.repeats)
            rows.append(
                {
                    "events": n,
                    "local_s": t_local,
                    "spark_s": t_spark,
                    "identity_s": t_identity,
                    "local_events_per_s": n / t_local,
                    "spark_events_per_s": n / t_spark,
                    "spark_over_identity": t_spark / t_identity,
                    "result_rows": len(local_rows),
                }
            )
            print(rows[-1], flush=True)
    spark.stop()
    RESULTS.mkdir(parents=True, exist_ok=True)
    with (RESULTS / "spark_batch.csv").open("w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    lines = [
        "# Spark batch vs the local engine (rideshare workload, 3 queries)",
        "",
        f"Medians of {args.repeats} runs; Spark local[*] on this machine's cores, 4 shuffle partitions; "
        "times include reading the Parquet file; both engines returned the same rows (checked).",
        "",
        "| events | local s | local events/s | spark s | spark events/s | identity mapInArrow s | spark / identity |",
        "|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        lines.append(
            f"| {r['events']:,} | {r['local_s']:.1f} | {r['local_events_per_s']:,.0f} | {r['spark_s']:.1f} | "
            f"{r['spark_events_per_s']:,.0f} | {r['identity_s']:.1f} | {r['spark_over_identity']:.1f}x |"
        )
    (RESULTS / "spark_batch.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
