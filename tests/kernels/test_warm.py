"""The warm-up (``trendagg warm``) compiles the kernels; a run that must compile says so.

The test session warms them first (tests/conftest.py); were a workload of the
warm-up routed to Python, or both on one kernel, the other kernel would be compiled
by the tests instead, one after the other. These tests pin what each workload
runs on, what "cached" means (numba's index files, read without compiling), and that
the notice is printed once per process tree, by the local engine and by the Spark
driver, which compiles its job's kernels before the job starts. None of them compiles
a kernel: an empty cache folder is only looked at, and the compile is replaced by a
recorder where one would start.
"""

from __future__ import annotations

import io
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from helpers import canon
from trendagg import jit
from trendagg.engine import run_strategy
from trendagg.engine.runner import Runner
from trendagg.io import from_records
from trendagg.kernels import warm
from trendagg.kernels.runtime import arrays
from trendagg.kernels.warm import ALL, Kernel
from trendagg.language import parse
from trendagg.plan.compile import compile_workload

NOTICE = "trendagg: compiling the engine's kernels for this machine"
JIT = pytest.mark.skipif(os.environ.get("NUMBA_DISABLE_JIT") == "1", reason="needs the compiler")


def _example(name: str) -> str:
    return (jit.PACKAGE / "examples" / name).read_text(encoding="utf-8")


FLIGHTS = _example("flights.tq")  # the demo's queries


@pytest.fixture(autouse=True)
def _no_notice_yet(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each test starts as a process whose tree has not printed the notice (and what a
    test's notice sets in the environment is undone after it)."""
    monkeypatch.setenv(warm.NOTICE_ENV, "")
    monkeypatch.setattr(warm, "_known", set())


@pytest.fixture(scope="module")
def cache() -> Path:
    """The session's cache folder, holding every kernel: the warm-up workloads run here
    (loaded from the cache; the test session warmed them, or this compiles them)."""
    if os.environ.get("NUMBA_DISABLE_JIT") == "1":
        pytest.skip("needs the compiler")
    for name in warm.VARIANTS:
        warm.compile_variant(name, snapshots=True)
    folder = jit.cache_folder()
    assert folder is not None
    return folder


# ----------------------------------------------------------------------------- workloads


def _runner(name: str, snapshots: bool = False) -> Runner:
    plans, sharing = warm.warm_up_plan(name, snapshots)
    return Runner(plans, sharing.strategy, plan=sharing)


@pytest.mark.parametrize("name", sorted(warm.WORKLOADS))
def test_each_warm_up_workload_runs_compiled_on_its_kernel(name: str) -> None:
    runner = Runner(compile_workload(parse(warm.WORKLOADS[name])), "hamlet")
    assert runner.sharing.on("python") == []
    kernel = runner.compiled
    assert arrays.queues(kernel) is (name == "queues")
    assert warm.kernels_of(kernel) == {Kernel("run_chunk", name)}
    prog = kernel.prog
    if name == "queues":  # a NOT, a NEXT index and a NEXT log
        assert len(prog.nt_q) > 0 and len(prog.ix_q) > 0 and prog.nt_log.sum() > 0
    else:  # a shared burst
        assert prog.set_boff.shape[0] > 0


@pytest.mark.parametrize("name", sorted(warm.WORKLOADS))
def test_each_snapshot_warm_up_runs_the_snapshot_loop_of_its_build(name: str) -> None:
    runner = _runner(name, snapshots=True)
    assert runner.sharing.on("python") == []
    assert runner.compiled.gp is not None  # (GLORIA's Q-sets run with snapshots)
    assert warm.kernels_of(runner.compiled) == {
        Kernel("run_chunk", name),
        Kernel("run_gloria", name),
    }


@pytest.mark.parametrize("name", sorted(warm.WORKLOADS))
def test_the_warm_up_workloads_find_trends_and_equal_twostep(name: str) -> None:
    plans = compile_workload(parse(warm.WORKLOADS[name]))
    events = from_records(warm._records()).events
    rows = run_strategy(plans, events, "hamlet")
    assert {row.query for row in rows if row.values["COUNT(*)"] > 0} == {"q1", "q2"}
    assert sorted(map(repr, rows)) == sorted(map(repr, run_strategy(plans, events, "twostep")))
    # and the snapshot loop's, under its Q-sets
    runner = _runner(name, snapshots=True)
    events = from_records(warm._snapshot_records()).events
    rows = runner.feed(events) + runner.finish()
    counted = {row.query for row in rows if row.values["COUNT(*)"] > 0}
    assert counted == ({"q1", "q2", "q3"} if name == "queues" else {"q1", "q2"})
    expected = run_strategy(runner.plans, events, "twostep")
    assert canon(rows) == canon(expected)


def test_the_kernels_of_a_job_are_those_its_workers_build() -> None:
    """The demo's queries have a NEXT condition: one build of the per-event loop; the
    rideshare example needs both; sharon and gloria add their snapshot loop; the
    twostep reference compiles nothing."""
    flights = compile_workload(parse(FLIGHTS))
    assert warm.kernels_for(flights, "hamlet") == {Kernel("run_chunk", "queues")}
    assert warm.kernels_for(flights, "gloria") == {
        Kernel("run_chunk", "queues"),
        Kernel("run_gloria", "queues"),
    }
    assert warm.kernels_for(flights, "twostep") == set()
    rideshare = compile_workload(parse(_example("rideshare.tq")))  # (groups of each kind)
    assert warm.kernels_for(rideshare, "greta") == {Kernel("run_chunk", v) for v in warm.VARIANTS}


# ----------------------------------------------------------------------------- detection


def _copy_without(cache: Path, tmp: Path, *gone: str) -> Path:
    """``cache``'s files linked into a folder, but for those whose name starts with one
    of ``gone``."""
    folder = tmp / cache.name
    folder.mkdir()
    for f in cache.iterdir():
        if f.is_file() and not f.name.startswith(gone):
            (folder / f.name).symlink_to(f)
    return folder


@JIT
def test_the_compiled_cache_is_found_cached(cache: Path, tmp_path: Path) -> None:
    assert warm.missing(ALL, cache) == []
    assert warm.missing(ALL, _copy_without(cache, tmp_path)) == []  # (another folder, read)


@JIT
def test_a_root_without_its_index_file_is_not_cached(cache: Path, tmp_path: Path) -> None:
    (index,) = cache.glob("snapshots.run_gloria-*.nbi")
    folder = _copy_without(cache, tmp_path, index.name)
    assert warm.missing(ALL, folder) == [
        Kernel("run_gloria", "plain"),
        Kernel("run_gloria", "queues"),
    ]
    assert warm.missing([Kernel("run_chunk", "queues")], folder) == []


@JIT
def test_an_entry_without_its_data_file_is_not_cached(cache: Path, tmp_path: Path) -> None:
    """One build's compiled code gone (the index names it): that build only."""
    import pickle

    (index,) = cache.glob("chunk.run_chunk-*.nbi")
    with open(index, "rb") as f:
        pickle.load(f)
        _, overloads = pickle.loads(f.read())
    plain = next(
        data
        for key, data in overloads.items()
        if dict(zip(key[0][1].fields, key[0][1].types, strict=True))["neg"].ndim == 2
    )
    folder = _copy_without(cache, tmp_path, plain)
    assert warm.missing(ALL, folder) == [Kernel("run_chunk", "plain")]


@JIT
def test_an_index_of_other_sources_numba_or_machine_is_not_cached(
    cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import numba

    def fresh() -> list[Kernel]:
        monkeypatch.setattr(warm, "_known", set())
        return warm.missing(ALL, cache)

    assert fresh() == []
    with monkeypatch.context() as m:  # the sources changed: another stamp
        m.setattr(jit, "digest", lambda package=None: "0" * 64)
        assert fresh() == list(ALL)
    with monkeypatch.context() as m:  # another numba wrote it
        m.setattr(numba, "__version__", "0.1.0")
        assert fresh() == list(ALL)
    with monkeypatch.context() as m:  # compiled for another CPU
        machine = warm._machine()
        m.setattr(warm, "_machine", lambda: (machine[0], "other-cpu", machine[2]))
        assert fresh() == list(ALL)
    assert fresh() == []


def test_an_empty_cache_folder_holds_nothing(tmp_path: Path) -> None:
    assert warm.missing(ALL, tmp_path) == list(ALL)


# ----------------------------------------------------------------------------- the notice

# builds the executors of both builds, then a child process builds one: building an
# executor compiles nothing (that is its first run)
BUILD = """
import subprocess, sys
from trendagg.engine.runner import Runner
from trendagg.kernels import warm

def build(name, snapshots):
    plans, sharing = warm.warm_up_plan(name, snapshots)
    return Runner(plans, sharing.strategy, plan=sharing)

if sys.argv[1:] == ["child"]:
    build("queues", False)
    print("child built")
    sys.exit()
for name in ("plain", "queues"):
    build(name, False)
    build(name, True)
print("built", flush=True)
subprocess.run([sys.executable, "-c", CODE, "child"], check=True)
"""


def _build_executors(cache_dir: Path | None) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != warm.NOTICE_ENV}
    env["PYTHONPATH"] = os.pathsep.join([str(jit.PACKAGE.parent), env.get("PYTHONPATH", "")])
    if cache_dir is not None:  # (numba reads NUMBA_CACHE_DIR when it is imported)
        env["NUMBA_CACHE_DIR"] = str(cache_dir)
    code = f"CODE = {BUILD!r}\n{BUILD}"
    done = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["built", "child", "built"]
    return done


@JIT
def test_the_notice_is_printed_once_per_process_tree(tmp_path: Path) -> None:
    """An empty cache: four executors of two builds in one process and one in its
    child, one line, the first executor's (the plain build's event loop)."""
    done = _build_executors(tmp_path)
    assert done.stderr.count(NOTICE) == 1, done.stderr
    (line,) = [s for s in done.stderr.splitlines() if NOTICE in s]
    assert line == (
        f"{NOTICE} (first run after an install or upgrade; about 2 minutes on one core, once) ..."
    )


@JIT
def test_no_notice_when_the_kernels_are_cached(cache: Path) -> None:
    """The session's cache (where the warm-up workloads just ran): nothing on stderr."""
    parent = cache.parent if cache.name.startswith("trendagg-") else None
    done = _build_executors(parent)
    assert NOTICE not in done.stderr, done.stderr


def test_no_notice_without_the_compiler(monkeypatch: pytest.MonkeyPatch, capsys: Any) -> None:
    monkeypatch.setattr(warm, "missing", lambda kernels, folder=None: list(kernels))
    monkeypatch.setattr(warm, "jit_disabled", lambda: True)
    _runner("plain")
    assert warm.ensure_compiled(ALL)
    assert capsys.readouterr().err == ""


def test_the_notice_says_when_nothing_can_be_cached(
    monkeypatch: pytest.MonkeyPatch, capsys: Any
) -> None:
    monkeypatch.setattr(jit, "cache_folder", lambda package=None: None)
    assert warm.missing([Kernel("run_chunk", "plain")]) == [Kernel("run_chunk", "plain")]
    assert warm.notice(ALL, parallel=True)
    assert not warm.notice(ALL, parallel=True)  # (once)
    err = capsys.readouterr().err
    assert err.count(NOTICE) == 1
    assert "in every process: no cache folder is writable; set NUMBA_CACHE_DIR" in err
    assert "about 5 minutes on 2 cores" in err  # (queues: run_chunk 4 + run_gloria 1)


# ----------------------------------------------------------------------------- the warm-up


class _Popen:
    """A warm-up process that compiles nothing: records its command and environment."""

    started: list[tuple[list[str], dict[str, str]]] = []

    def __init__(self, command: list[str], env: dict[str, str], **_: Any) -> None:
        self.started.append((command, env))
        self.variant = command[command.index("--variant") + 1]
        self.returncode = 0

    def communicate(self) -> tuple[str, None]:
        return f"{self.variant}: run_chunk compiled in 1.0 s", None


@pytest.fixture
def popen(monkeypatch: pytest.MonkeyPatch) -> type[_Popen]:
    monkeypatch.setattr(_Popen, "started", [])
    monkeypatch.setattr(warm.subprocess, "Popen", _Popen)
    monkeypatch.setattr(warm, "jit_disabled", lambda: False)
    return _Popen


def test_warm_says_what_it_does_and_its_children_stay_silent(
    popen: type[_Popen], monkeypatch: pytest.MonkeyPatch
) -> None:
    """`trendagg warm` with every kernel missing: the notice once, one process per
    build (each with both roots) started with the notice marked as said, a line per
    build and the time."""
    from trendagg.cli import main

    monkeypatch.setattr(warm, "missing", lambda kernels, folder=None: list(kernels))
    out, err = io.StringIO(), io.StringIO()
    assert main(["warm"], out, err) == 0
    assert err.getvalue() == (
        f"{NOTICE} (first run after an install or upgrade; about 5 minutes on 2 cores, once) ...\n"
    )
    commands = sorted(c[c.index("--variant") :] for c, _ in popen.started)
    assert commands == [["--variant", v, "--snapshots"] for v in ("plain", "queues")]
    assert all(env[warm.NOTICE_ENV] == "1" for _, env in popen.started)
    lines = out.getvalue().splitlines()
    assert lines[:2] == [
        "plain: run_chunk compiled in 1.0 s",
        "queues: run_chunk compiled in 1.0 s",
    ]
    assert lines[2].startswith("kernels ready (plain, queues) in ") and len(lines) == 3


def test_warm_quiet_prints_nothing(popen: type[_Popen], monkeypatch: pytest.MonkeyPatch) -> None:
    from trendagg.cli import main

    monkeypatch.setattr(warm, "missing", lambda kernels, folder=None: list(kernels))
    out, err = io.StringIO(), io.StringIO()
    assert main(["warm", "--quiet"], out, err) == 0
    assert (out.getvalue(), err.getvalue()) == ("", "")
    assert len(popen.started) == 2


class _Failing(_Popen):
    returncode = 1

    def __init__(self, command: list[str], env: dict[str, str], **_: Any) -> None:
        super().__init__(command, env)
        self.returncode = 1 if self.variant == "queues" else 0

    def communicate(self) -> tuple[str, None]:
        if self.returncode:
            return "numba.core.errors.LoweringError: boom", None
        return super().communicate()


def test_a_failed_build_is_reported_with_its_output(
    popen: type[_Popen], monkeypatch: pytest.MonkeyPatch
) -> None:
    from trendagg.cli import main

    monkeypatch.setattr(warm.subprocess, "Popen", _Failing)
    out, err = io.StringIO(), io.StringIO()
    assert main(["warm", "--quiet"], out, err) == 1
    assert err.getvalue() == (
        "trendagg: compiling the 'queues' kernels failed:\nnumba.core.errors.LoweringError: boom\n"
    )
    assert out.getvalue() == ""


def test_a_build_without_snapshots_runs_the_per_event_loop_only() -> None:
    """A build's process without --snapshots (ensure_compiled of a job whose workers run
    no snapshot loop) runs run_chunk only: compile_variant's import of the snapshot
    loop's module once took the name of its flag, which then was always true."""
    said = warm.compile_variant("plain", snapshots=False)
    assert said.startswith("plain: run_chunk ") and "run_gloria" not in said, said


@JIT
def test_warm_loads_cached_kernels_each_build_in_a_process_of_its_own(cache: Path) -> None:
    """The real thing, with the kernels cached: two processes load them, no notice."""
    from trendagg.cli import main

    out, err = io.StringIO(), io.StringIO()
    assert main(["warm"], out, err) == 0
    assert err.getvalue() == ""
    lines = out.getvalue().splitlines()
    for line, name in zip(lines, ("plain", "queues"), strict=False):
        assert line.startswith(f"{name}: run_chunk loaded from the cache in ")
        assert ", run_gloria loaded from the cache in " in line
    assert lines[2].startswith("kernels ready (plain, queues) in ") and str(cache) in lines[2]
    assert warm.main(["--quiet"]) == 0  # python -m trendagg.kernels.warm, as before


# ----------------------------------------------------------------------------- Spark's driver


def test_the_spark_driver_compiles_its_jobs_kernels_before_the_job(
    monkeypatch: pytest.MonkeyPatch, capsys: Any
) -> None:
    """prepare (the driver's first step of a batch or stream job, before Spark runs
    anything) compiles the kernels the workers would run, once, with the notice."""
    from trendagg.spark.partials import prepare

    compiled: list[list[Kernel]] = []
    monkeypatch.setattr(warm, "jit_disabled", lambda: False)
    monkeypatch.setattr(warm, "missing", lambda kernels, folder=None: list(kernels))
    monkeypatch.setattr(warm, "warm_kernels", lambda kernels, quiet: compiled.append(kernels))
    text, plans, _ = prepare(FLIGHTS, "hamlet")
    assert compiled == [[Kernel("run_chunk", "queues")]]
    assert [p.name for p in plans] == ["rising", "late_runs"]
    assert capsys.readouterr().err == (
        f"{NOTICE} (first run after an install or upgrade; about 4 minutes on one core, once) ...\n"
    )
    prepare(FLIGHTS, "greta")  # (the notice was said: the compile is asked for, silently)
    assert compiled[1:] == [[Kernel("run_chunk", "queues")]]
    assert capsys.readouterr().err == ""


def test_the_spark_driver_compiles_nothing_when_cached(monkeypatch: pytest.MonkeyPatch) -> None:
    from trendagg.spark.partials import prepare

    monkeypatch.setattr(warm, "missing", lambda kernels, folder=None: [])
    monkeypatch.setattr(warm, "warm_kernels", _never)
    monkeypatch.setattr(warm, "kernels_for", _never)  # (all cached: not even asked which)
    prepare(FLIGHTS, "hamlet")


def _never(*args: Any, **kwargs: Any) -> Any:
    raise AssertionError("called")


def test_the_cluster_archive_is_made_after_every_kernel_is_compiled(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """On a cluster the archive (made as the session starts, before any job is known)
    carries the driver's cache: every kernel is compiled first."""
    from trendagg.spark.package import package_archive

    asked: list[Any] = []
    monkeypatch.setattr(warm, "ensure_compiled", lambda kernels: asked.append(kernels))
    assert package_archive().is_file()
    assert asked == [ALL]


@pytest.mark.spark
def test_a_spark_job_compiles_on_the_driver_before_its_tasks(
    spark: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """trend_aggregation: the compile step runs on the driver before the job's first
    task (Spark's job count then), and the job runs after it."""
    from trendagg.spark import trend_aggregation

    tracker = spark.sparkContext.statusTracker()
    jobs_when_compiled: list[int] = []
    monkeypatch.setattr(warm, "jit_disabled", lambda: False)
    monkeypatch.setattr(warm, "missing", lambda kernels, folder=None: list(kernels))
    monkeypatch.setattr(
        warm,
        "warm_kernels",
        lambda kernels, quiet: jobs_when_compiled.append(len(tracker.getJobIdsForGroup())),
    )
    df = spark.createDataFrame(
        [("A", 1, 1), ("B", 2, 5), ("B", 3, 2)], "type string, time long, x long"
    )
    before = len(tracker.getJobIdsForGroup())
    results, _ = trend_aggregation(
        df, "q: RETURN COUNT(*) PATTERN SEQ(A, B+) WHERE B.x < NEXT(B).x WITHIN 10 s;"
    )
    assert jobs_when_compiled == [before]
    assert len(tracker.getJobIdsForGroup()) > before
    assert [r["COUNT(*)"] for r in results.collect()] == [2]
