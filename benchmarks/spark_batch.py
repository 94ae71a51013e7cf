"""Spark batch vs the local engine and the Python/JVM transfer floor (streaming against
batch: ``spark_stream.py``).

Issue #16's comparison: whole commands in fresh processes, side by side in one run on
the same Parquet file, rows checked equal:

* local: ``trendagg run --engine local`` (read + engine, one core);
* spark: ``trendagg run`` (Spark embedded ``local[*]``: the JVM's start, reading,
  routing, the engines and the driver's combine; results written as by local);
* identity: a process that starts the same Spark session, reads the file's columns
  that the workload reads and sends them through a ``mapInArrow`` that returns its
  batches unchanged: what moving the events through Python costs before any trend is
  computed (the floor a Spark pipeline cannot go under);
* cluster (``--cluster``; up to 1M events): ``trendagg run --master spark://...`` on a
  standalone cluster of this machine (a master and two workers of one core and 2 GB
  each, started from the installed PySpark, :mod:`trendagg.spark.standalone`), the
  package shipped to the executors as on separate machines;
Workloads: ``uniform`` (the 50 queries of workloads.sharing_workload, the kernel's
headline) over 1,000 drivers, and ``varied`` (workloads.varied_workload: four window
specs, thresholds per query, GROUP-BY T.district) over 2,000 drivers, both with
10,000 events per minute and trips of up to 16 legs. Per Spark run, where its time
goes: the read-and-route stage, the engines' stage, and the rest (the JVM's start,
planning, the driver's combine and writing), from Spark's event log.

    .venv/bin/python benchmarks/spark_batch.py --cluster    # 1M and 10M uniform, 1M varied
    .venv/bin/python benchmarks/spark_batch.py --events 1000000 --repeats 1 --varied 0

Writes benchmarks/results/spark_batch.{md,csv,png}. Medians of the repeats (the n-th
``--repeats`` value goes with the n-th ``--events`` value).

    .venv/bin/python benchmarks/spark_batch.py --base 21bfa9f --events 1000000 --repeats 4

(``--base REV``: Spark batch and the local engine of that commit and of this tree, on
the same file, alternating fresh processes; writes results/spark_before_after.md.)
"""

from __future__ import annotations

import argparse
import contextlib
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


def write_events(
    path: Path,
    n: int,
    *,
    drivers: int = 50,
    events_per_minute: int = 2_000,
    max_legs: int = 8,
    seed: int = 3,
) -> None:
    """n rideshare events as Parquet, written in slices (never all in memory), with the
    text column ``zone`` (``z`` + district) that the varied workload reads."""
    import itertools

    import pyarrow as pa
    import pyarrow.parquet as pq

    from trendagg.generate import rideshare

    stream = rideshare(
        n, drivers=drivers, events_per_minute=events_per_minute, max_legs=max_legs, seed=seed
    )
    names = ["type", "time", "driver", "rider", "district", "duration", "speed", "price", "stars"]
    kinds = {"type": pa.string(), "price": pa.float64()}
    schema = pa.schema([(c, kinds.get(c, pa.int64())) for c in names] + [("zone", pa.string())])
    with pq.ParquetWriter(path, schema) as writer:
        while chunk := list(itertools.islice(stream, 500_000)):
            cells = {c: [e.get(c) for e in chunk] for c in names}
            cells["zone"] = [None if d is None else f"z{d}" for d in cells["district"]]
            writer.write_table(pa.table(cells, schema=schema))


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
    if any(r.get("cluster_s") for r in rows):
        kinds.append(("cluster", "Spark batch, standalone cluster (2 x 1 core)"))
    kinds.append(("identity", "identity mapInArrow (floor)"))
    fig, ax = plt.subplots(figsize=(8, 4))
    width = 0.8 / len(kinds)
    for j, (key, label) in enumerate(kinds):
        xs = [i + j * width for i in range(len(rows))]
        ys = [float(r["events"]) / float(r[f"{key}_s"]) if r.get(f"{key}_s") else 0 for r in rows]  # type: ignore[arg-type]
        ax.bar(xs, ys, width, label=label)
    ax.set_xticks([i + width * (len(kinds) - 1) / 2 for i in range(len(rows))])
    ax.set_xticklabels([f"{r['workload']}, {int(r['events']):,}" for r in rows])  # type: ignore[call-overload]
    ax.set_yscale("log")
    ax.set_ylabel("events per second (log)")
    ax.set_title("50 queries over rideshare events: whole commands, medians")
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


def identity_child(path: str, columns: list[str]) -> None:
    """The floor: a Spark session, the workload's columns of the file through an identity
    ``mapInArrow`` (nothing kept: Spark's no-op sink)."""
    from trendagg.spark import spark_session

    spark = spark_session("local[*]")
    df = spark.read.parquet(path).select(*columns)

    def identity(batches):  # type: ignore[no-untyped-def]
        yield from batches

    df.mapInArrow(identity, df.schema).write.format("noop").mode("overwrite").save()
    spark.stop()


def command(args: list[str]) -> float:
    """Seconds of one fresh process, from spawn to exit."""
    started = time.perf_counter()
    done = subprocess.run(args, capture_output=True, text=True)
    if done.returncode:
        raise SystemExit(f"{' '.join(args)} failed:\n{done.stderr[-3000:]}")
    return time.perf_counter() - started


def stage_times(log_dir: Path) -> tuple[float, float]:
    """(read-and-route, engines) seconds of the newest Spark run: the first and the last
    stage that its result's collection ran (adaptive execution runs the first, which ends
    in the shuffle, as a job of its own), from the event log."""
    logs = sorted(log_dir.glob("*/events_*"), key=lambda p: p.stat().st_mtime)
    stages: dict[int, float] = {}
    for line in logs[-1].open():
        event = json.loads(line)
        if event["Event"] == "SparkListenerStageCompleted":
            info = event["Stage Info"]
            if info["Stage Name"].startswith("toArrow"):
                seconds = (info["Completion Time"] - info["Submission Time"]) / 1000
                stages[info["Stage ID"]] = seconds
    ids = sorted(stages)
    return stages[ids[0]], stages[ids[-1]]


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--events", type=int, nargs="+", default=[1_000_000, 10_000_000])
    parser.add_argument("--repeats", type=int, nargs="+", default=[3, 2])
    parser.add_argument("--varied", type=int, default=1_000_000, help="varied events (0: none)")
    parser.add_argument(
        "--cluster", action="store_true", help="also time a standalone cluster (2 x 1 core)"
    )
    parser.add_argument("--data", type=Path, default=Path(tempfile.gettempdir()) / "trendagg-bench")
    parser.add_argument("--base", help="instead: Spark batch of this commit and of this tree")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    parser.add_argument("--identity", nargs="+", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        return child(args.child)
    if args.identity:
        return identity_child(args.identity[0], args.identity[1:])
    if args.base:
        return compare(args.base, args.events[0], args.repeats[0])
    sys.path.insert(0, str(HERE))
    from hamlet_rideshare import machine

    from trendagg.language import parse
    from trendagg.plan.compile import attributes_read, compile_workload
    from workloads import sharing_workload, varied_workload

    runs = [
        ("uniform", n, args.repeats[min(i, len(args.repeats) - 1)])
        for i, n in enumerate(args.events)
    ]
    if args.varied:
        runs.append(("varied", args.varied, args.repeats[0]))
    trendagg = str(Path(sys.executable).parent / "trendagg")
    args.data.mkdir(parents=True, exist_ok=True)
    rows = []
    with tempfile.TemporaryDirectory() as tmp, contextlib.ExitStack() as stack:
        master = None
        if args.cluster:
            from trendagg.spark.standalone import standalone_cluster

            master = stack.enter_context(standalone_cluster(Path(tmp) / "cluster", memory="2g"))
        for name, n, k in runs:
            text = sharing_workload(50) if name == "uniform" else varied_workload(50)
            queries = Path(tmp) / f"{name}.tq"
            queries.write_text(text)
            drivers = 1000 if name == "uniform" else 2000
            path = args.data / f"spark_{name}_{n}.parquet"
            if not path.exists():
                print(f"generating {path} ...", flush=True)
                # (the kernel benchmarks' stream: 10,000 events a minute, trips of up to 16 legs)
                write_events(
                    path.with_suffix(".part"), n, drivers=drivers,
                    events_per_minute=10_000, max_legs=16, seed=11,
                )  # fmt: skip
                path.with_suffix(".part").rename(path)
            columns = ["type", "time", *sorted(attributes_read(compile_workload(parse(text))))]
            logs = Path(tmp) / "events"
            logs.mkdir(exist_ok=True)
            times: dict[str, list[float]] = {"local": [], "spark": [], "identity": []}
            on_cluster = master is not None and n <= 1_000_000
            if on_cluster:
                times["cluster"] = []
            stages = []
            for _ in range(k):  # (alternating, so that drift hits each alike)
                out = {e: Path(tmp) / f"{e}.jsonl" for e in ("local", "spark", "cluster")}
                times["local"].append(
                    command(
                        [
                            trendagg,
                            "run",
                            "--engine",
                            "local",
                            "-q",
                            "-o",
                            str(out["local"]),
                            str(queries),
                            str(path),
                        ]
                    )
                )
                times["spark"].append(
                    command(
                        [trendagg, "run", "-q", "-o", str(out["spark"]),
                         "--conf", "spark.eventLog.enabled=true",
                         "--conf", f"spark.eventLog.dir=file://{logs}",
                         "--conf", "spark.eventLog.compress=false",
                         str(queries), str(path)]
                    )
                )  # fmt: skip
                stages.append(stage_times(logs))
                times["identity"].append(
                    command([sys.executable, __file__, "--identity", str(path), *columns])
                )
                if on_cluster:
                    times["cluster"].append(
                        command(
                            [trendagg, "run", "-q", "-o", str(out["cluster"]),
                             "--master", str(master), str(queries), str(path)]
                        )
                    )  # fmt: skip
                local_lines = out["local"].read_text().splitlines()
                for engine in ("spark", "cluster") if on_cluster else ("spark",):
                    if sorted(local_lines) != sorted(out[engine].read_text().splitlines()):
                        raise SystemExit(f"{name} {n}: {engine}'s rows differ from the local's")
            med = {e: statistics.median(v) for e, v in times.items()}
            route = statistics.median(s[0] for s in stages)
            engines = statistics.median(s[1] for s in stages)
            row: dict[str, object] = {
                "workload": name,
                "events": n,
                "repeats": k,
                "local_s": round(med["local"], 2),
                "spark_s": round(med["spark"], 2),
                "identity_s": round(med["identity"], 2),
                "spark_over_local": round(med["spark"] / med["local"], 2),
                "spark_over_identity": round(med["spark"] / med["identity"], 2),
                "route_stage_s": round(route, 2),
                "engine_stage_s": round(engines, 2),
                "rest_s": round(med["spark"] - route - engines, 2),
                "result_rows": len(local_lines),
                "local_runs_s": " ".join(f"{x:.1f}" for x in times["local"]),
                "spark_runs_s": " ".join(f"{x:.1f}" for x in times["spark"]),
            }
            if on_cluster:
                row["cluster_s"] = round(med["cluster"], 2)
                row["cluster_over_local"] = round(med["cluster"] / med["local"], 2)
            rows.append(row)
            print(row, flush=True)
    write_results(rows, machine(), args.cluster)


def write_results(rows: list[dict[str, object]], machine: str, cluster: bool) -> None:
    RESULTS.mkdir(parents=True, exist_ok=True)
    names = list(dict.fromkeys(k for r in rows for k in r))
    with (RESULTS / "spark_batch.csv").open("w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=names)
        writer.writeheader()
        writer.writerows(rows)
    plot(rows, RESULTS / "spark_batch.png")
    head = (
        "| workload | events | repeats | local s | Spark s | Spark / local | identity s | "
        "Spark / identity | route stage s | engines stage s | rest s |"
    )
    rule = "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
    if cluster:
        head += " cluster s | cluster / local |"
        rule += "---:|---:|"
    lines = [
        "# Spark batch vs the local engine and the transfer floor (whole commands)",
        "",
        f"Machine: {machine}. Run {time.strftime('%Y-%m-%d')}. Each figure is a whole "
        "command in a fresh process (Python and the JVM started, the Parquet file read, "
        "results written); Spark embedded local[*]; medians of the repeats; Spark's rows "
        "equal the local engine's (checked each run). Stages: the read-and-route stage "
        "and the engines' stage of the Spark run's one job (Spark's event log); the rest "
        "is the JVM's start, planning, the driver's combine and writing."
        + (
            " Cluster: `trendagg run --master` on a standalone master with two workers of "
            "one core each on this machine (the package shipped with the job)."
            if cluster
            else ""
        ),
        "",
        head,
        rule,
    ]
    for r in rows:
        line = (
            f"| {r['workload']} | {r['events']:,} | {r['repeats']} | {r['local_s']:.1f} "
            f"| {r['spark_s']:.1f} | {r['spark_over_local']:.2f}x | {r['identity_s']:.1f} "
            f"| {r['spark_over_identity']:.2f}x | {r['route_stage_s']:.1f} "
            f"| {r['engine_stage_s']:.1f} | {r['rest_s']:.1f} |"
        )
        if cluster:
            line += (
                f" {r['cluster_s']:.1f} | {r['cluster_over_local']:.2f}x |"
                if r.get("cluster_s")
                else " | |"
            )
        lines.append(line)
    (RESULTS / "spark_batch.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
