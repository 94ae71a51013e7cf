"""Structured Streaming against batch in one started Spark session (issue #16's target:
streaming throughput at least half of batch's).

Both run the 50-query uniform workload of ``spark_batch.py`` (workloads.sharing_workload,
1,000 drivers, 10,000 events a minute, trips of up to 16 legs) over the same 1M events,
in one Spark session (embedded ``local[*]``) of this process, alternating, after a
warm-up of each, so that neither pays the JVM's start:

* batch: :func:`trendagg.spark.batch.collect` over the Parquet file (one job);
* stream: :func:`trendagg.spark.stream.stream_trends` over the same events in ten
  Parquet files and a far-future flush file, available-now trigger, RocksDB state,
  with F files per micro-batch: F = 1 (micro-batches of 100,000 events) and F = 5
  (500,000).

Per stream: the whole run (start to stop: the streaming Python workers start, and
the last, empty micro-batches close the windows), its first micro-batch, and the
median of its other full micro-batches. Throughput: batch's events/s over its whole
job; the stream's over the whole run, and in its steady state (the full micro-batches
after the first: their events over their time). The stream's rows are checked equal
to the batch job's each run.

    .venv/bin/python benchmarks/spark_stream.py              # about 3 minutes here
    .venv/bin/python benchmarks/spark_stream.py --repeats 1  # quicker

Writes benchmarks/results/spark_stream.{md,csv}.
"""

from __future__ import annotations

import argparse
import csv
import statistics
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results"
EVENTS = 1_000_000


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--files", type=int, nargs="+", default=[1, 5], help="files a trigger")
    parser.add_argument("--data", type=Path, default=Path(tempfile.gettempdir()) / "trendagg-bench")
    args = parser.parse_args()
    sys.path.insert(0, str(HERE))
    from hamlet_rideshare import machine
    from spark_batch import split_files, write_events

    from trendagg.io.writers import result_json
    from trendagg.spark import spark_session
    from trendagg.spark.batch import collect
    from trendagg.spark.stream import read_results, stream_trends
    from workloads import sharing_workload

    text = sharing_workload(50)
    args.data.mkdir(parents=True, exist_ok=True)
    path = args.data / f"spark_uniform_{EVENTS}.parquet"
    if not path.exists():  # (the file spark_batch.py writes)
        write_events(
            path.with_suffix(".part"), EVENTS, drivers=1000,
            events_per_minute=10_000, max_legs=16, seed=11,
        )  # fmt: skip
        path.with_suffix(".part").rename(path)
    spark = spark_session("local[*]")
    rows: list[dict[str, object]] = []
    with tempfile.TemporaryDirectory(dir=args.data) as tmp:
        folder = Path(tmp) / "files"
        split_files(path, folder, 10)

        def batch() -> tuple[float, list[str]]:
            started = time.perf_counter()
            got = collect(spark, str(path), text)[0]
            return time.perf_counter() - started, sorted(result_json(r) for r in got)

        def stream(files: int) -> tuple[float, list[tuple[int, float]], list[str]]:
            run = Path(tempfile.mkdtemp(dir=tmp))
            started = time.perf_counter()
            query, _ = stream_trends(
                str(folder), text, spark=spark, output=str(run / "out"),
                checkpoint=str(run / "ckpt"), available_now=True, max_files_per_trigger=files,
            )  # fmt: skip
            query.awaitTermination()
            took = time.perf_counter() - started
            batches = [
                (p.numInputRows, p.durationMs["triggerExecution"] / 1000)
                for p in query.recentProgress
            ]
            return took, batches, sorted(result_json(r) for r in read_results(str(run / "out")))

        _, expected = batch()  # warm-ups
        for files in args.files:
            stream(files)
        for files in args.files:
            batch_s: list[float] = []
            whole: list[float] = []
            first: list[float] = []
            steady: list[float] = []
            steady_rate: list[float] = []
            for _ in range(args.repeats):
                took, got = batch()
                if got != expected:
                    raise SystemExit("batch's rows differ from its first run")
                batch_s.append(took)
                took, batches, got = stream(files)
                if got != expected:
                    raise SystemExit("the stream's rows differ from batch's")
                whole.append(took)
                full = [(n, s) for n, s in batches if n >= EVENTS // 10 * files]
                first.append(full[0][1])
                steady += [s for _, s in full[1:]]
                rest = full[1:]
                steady_rate.append(sum(n for n, _ in rest) / sum(s for _, s in rest))
                print(f"F={files}: batch {batch_s[-1]:.2f} s, stream {took:.2f} s", flush=True)
            b = statistics.median(batch_s)
            rate = statistics.median(steady_rate)
            rows.append(
                {
                    "events": EVENTS,
                    "files_per_trigger": files,
                    "micro_batch_events": EVENTS // 10 * files,
                    "repeats": args.repeats,
                    "batch_s": round(b, 2),
                    "stream_s": round(statistics.median(whole), 2),
                    "first_batch_s": round(statistics.median(first), 2),
                    "other_batch_s": round(statistics.median(steady), 2),
                    "batch_events_per_s": round(EVENTS / b),
                    "stream_events_per_s": round(EVENTS / statistics.median(whole)),
                    "steady_events_per_s": round(rate),
                    "steady_over_batch": round(rate / (EVENTS / b), 2),
                    "whole_over_batch": round(b / statistics.median(whole), 2),
                }
            )
    spark.stop()
    write_results(rows, machine())


def write_results(rows: list[dict[str, object]], machine: str) -> None:
    RESULTS.mkdir(parents=True, exist_ok=True)
    with (RESULTS / "spark_stream.csv").open("w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    lines = [
        "# Structured Streaming against batch, one started Spark session",
        "",
        f"Machine: {machine}. Run {time.strftime('%Y-%m-%d')}. 1M uniform rideshare events, "
        "50 queries; batch (one job) and stream (ten files, F a trigger) alternating in one "
        "started session after a warm-up of each; medians of the repeats; the stream's rows "
        "equal batch's (checked each run). Steady: the full micro-batches after the first.",
        "",
        "| micro-batch events | batch s | stream s | first micro-batch s | other micro-batches s "
        "| batch events/s | stream events/s, whole | stream events/s, steady "
        "| steady / batch | whole / batch |",
        "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        lines.append(
            f"| {r['micro_batch_events']:,} | {r['batch_s']:.2f} | {r['stream_s']:.2f} "
            f"| {r['first_batch_s']:.2f} | {r['other_batch_s']:.2f} "
            f"| {r['batch_events_per_s']:,} | {r['stream_events_per_s']:,} "
            f"| {r['steady_events_per_s']:,} | {r['steady_over_batch']:.2f}x "
            f"| {r['whole_over_batch']:.2f}x |"
        )
    (RESULTS / "spark_stream.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
