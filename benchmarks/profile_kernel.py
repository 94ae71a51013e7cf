"""Where the compiled engine's time goes, by the kernel's own functions and lines.

numba compiles ``run_chunk`` with every kernel function inlined into it, so a
profiler sees one symbol. This runs a benchmark workload under Linux ``perf``
with a build of the kernel that carries debug line information (``NUMBA_DEBUGINFO``,
compiled once into a cache of its own, so the ordinary cache is untouched), then
maps each sample inside the kernel back through the inlining with ``addr2line -i``:

* outside the kernel: perf's own symbols (the interpreter, numpy, the OS kernel:
  ``clear_page_erms`` is the OS zeroing fresh memory);
* inside: per kernel function, its share of the kernel's samples with everything
  inlined into it (inclusive) and its own code (self), and the hottest source lines.

    .venv/bin/python benchmarks/profile_kernel.py varied --events 1000000
    .venv/bin/python benchmarks/profile_kernel.py varied --variant next-not
    .venv/bin/python benchmarks/profile_kernel.py axes --config "windows per event=10 (SLIDE 1 min)"

The first run compiles the kernel with debug information: about 10 minutes here
(the plain and the queues kernel each, as the workload needs them). Needs ``perf``
(linux-tools / linux-perf) allowed to sample this user's processes
(``/proc/sys/kernel/perf_event_paranoid`` at most 2) and ``addr2line`` (binutils).
Writes ``benchmarks/results/profile_<workload>.md``; the run is pinned to one core.
"""

from __future__ import annotations

import argparse
import collections
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results"
LOOP = HERE.parent / "src" / "trendagg" / "kernels" / "loop"
# a kernel function's name in a mangled symbol: ...loop<len><module><len><name>B<digits>...
_NAME = re.compile(r"(?:loop\d+\w+?|_rns|_borrow)\d+(\w+?)B\d")


def cache_dir() -> Path:
    """The debug build's numba cache: one per version of the kernel's source."""
    digest = hashlib.sha256(
        b"".join(f.read_bytes() for f in sorted(LOOP.glob("*.py")))
    ).hexdigest()[:12]
    return Path(tempfile.gettempdir()) / "trendagg-profile" / digest


def child(config: dict[str, Any]) -> None:
    """Run the workload in this process; then write where each compiled ``run_chunk``
    lies in memory, and (in the process that compiled it) its object code."""
    os.sched_setaffinity(0, {int(config["cpu"])})
    sys.path.insert(0, str(HERE))
    from trendagg.engine import Runner
    from trendagg.kernels.loop import chunk
    from trendagg.language import parse
    from trendagg.plan.compile import compile_workload

    text, batch = workload(config)
    plans = compile_workload(parse(text))
    runner = Runner(plans, "hamlet")
    started = time.perf_counter()
    for start in range(0, len(batch), 500_000):
        runner.feed(batch.take(slice(start, min(len(batch), start + 500_000))))
    runner.finish()
    seconds = time.perf_counter() - started
    folder = Path(config["cache"])
    kernels = []
    for sig, cres in chunk.run_chunk.overloads.items():
        obj = folder / f"run_chunk-{hashlib.sha256(str(sig).encode()).hexdigest()[:12]}.o"
        try:
            obj.write_bytes(cres.library._get_compiled_object())
        except RuntimeError as err:  # loaded from the cache: the compiling process saved it
            if not obj.exists():
                raise SystemExit(f"no object code for {obj.name}: remove {folder}, rerun") from err
        entry = cres.fndesc.llvm_func_name
        kernels.append({"object": str(obj), "entry": entry,
                        "address": cres.library.get_pointer_to_function(entry)})  # fmt: skip
    Path(config["out"]).write_text(json.dumps({"kernels": kernels, "engine_s": seconds}))


def workload(config: dict[str, Any]) -> tuple[str, Any]:
    """The queries and the events of a benchmark's configuration."""
    from trendagg.io.gather import concat
    from trendagg.io.readers import iter_events

    n = int(config["events"])
    data = Path(config["data"])
    if config["workload"] == "varied":
        from kernel_varied import NUMERIC, ensure_data

        from workloads import varied_workload

        path = ensure_data(data, max(n, 5_000_000))  # (the benchmark's file)
        chunks = []
        for chunk in iter_events(str(path), numeric=NUMERIC, chunk_rows=500_000):
            chunks.append(chunk.events)
            if sum(map(len, chunks)) >= n:
                break
        return varied_workload(50, config["variant"]), concat(chunks).take(slice(0, n))
    from kernel_axes import AXES, BASE, events_for

    from workloads import axis_workload

    found = [c for axis, label, c in AXES if f"{axis}={label}" == config["config"]]
    if not found:
        names = ", ".join(f'"{axis}={label}"' for axis, label, _ in AXES)
        raise SystemExit(f"no axes configuration {config['config']!r}; one of: {names}")
    c = {**BASE, **found[0]}
    batch = events_for(data, 1_000_000, c["drivers"], c["times"]).take(slice(0, n))
    text = axis_workload(
        50, windows=c["windows"], predicate=c["predicate"], group=c["group"], variant=c["variant"]
    )
    return text, batch


def symbol_offsets(obj: str) -> dict[str, int]:
    out = subprocess.run(["nm", "--defined-only", obj], capture_output=True, text=True, check=True)
    return {
        p[2]: int(p[0], 16)
        for p in (line.split() for line in out.stdout.splitlines())
        if len(p) == 3
    }


def inline_chains(obj: str, offsets: list[int]) -> dict[int, list[tuple[str, str]]]:
    """Per code offset, the (function, file:line) chain from the innermost inlined frame."""
    chains: dict[int, list[tuple[str, str]]] = {}
    for start in range(0, len(offsets), 2000):
        part = offsets[start : start + 2000]
        out = subprocess.run(
            ["addr2line", "-a", "-f", "-i", "-e", obj, *map(hex, part)],
            capture_output=True, text=True, check=True,
        ).stdout.splitlines()  # fmt: skip
        current = None
        i = 0
        while i < len(out):
            if out[i].startswith("0x"):
                current = int(out[i], 16)
                chains[current] = []
                i += 1
                continue
            match = _NAME.search(out[i])
            where = out[i + 1].rsplit("/", 1)[-1] if i + 1 < len(out) else "?"
            assert current is not None
            chains[current].append((match.group(1) if match else out[i][:40], where))
            i += 2
    return chains


def attribute(perf_data: Path, kernels: list[dict[str, Any]]) -> dict[str, Any]:
    """The samples: outside the kernel by perf's symbols, inside by inlined function."""
    spans = []
    for k in kernels:
        offs = symbol_offsets(k["object"])
        sections = subprocess.run(["size", "-A", k["object"]], capture_output=True, text=True,
                                  check=True).stdout.splitlines()  # fmt: skip
        size = max(int(p[1]) for p in map(str.split, sections) if len(p) == 3 and "text" in p[0])
        spans.append((k["address"] - offs[k["entry"]], size, k["object"]))
    script = subprocess.run(["perf", "script", "-i", str(perf_data), "-F", "ip,sym"],
                            capture_output=True, text=True, check=True).stdout  # fmt: skip
    total = 0
    outside: collections.Counter[str] = collections.Counter()
    inside: dict[str, collections.Counter[int]] = collections.defaultdict(collections.Counter)
    for line in script.splitlines():
        parts = line.split(None, 1)
        if not parts:
            continue
        total += 1
        ip = int(parts[0], 16)
        for base, size, obj in spans:
            if base <= ip < base + size:
                inside[obj][ip - base] += 1
                break
        else:
            outside[parts[1].strip() if len(parts) > 1 else "?"] += 1
    inclusive: collections.Counter[str] = collections.Counter()
    own: collections.Counter[str] = collections.Counter()
    lines: collections.Counter[str] = collections.Counter()
    for obj, samples in inside.items():
        chains = inline_chains(obj, sorted(samples))
        for off, n in samples.items():
            chain = chains.get(off) or [("?", "?")]
            for name in {name for name, _ in chain}:
                inclusive[name] += n
            own[chain[0][0]] += n
            lines[f"{chain[0][1]} ({chain[0][0]})"] += n
    kernel = sum(own.values())
    return {"total": total, "kernel": kernel, "outside": outside, "inclusive": inclusive,
            "self": own, "lines": lines}  # fmt: skip


def report(name: str, config: dict[str, Any], found: dict[str, Any], engine_s: float) -> str:
    from kernel_rideshare import machine

    total, kernel = found["total"], max(found["kernel"], 1)
    out = [
        f"# Where the time goes: {name}",
        "",
        f"Machine: {machine()}. Run {time.strftime('%Y-%m-%d')}: {config['events']:,} events, "
        f"one process pinned to one core, `perf record -F 999` (the whole process: reading, "
        f"the engine's Python and the kernel); the engine took {engine_s:.2f} s. Kernel "
        f"samples are mapped through numba's inlining with `addr2line -i` (a build with "
        f"debug line information: `benchmarks/profile_kernel.py`).",
        "",
        f"{total:,} samples, {found['kernel']:,} ({100 * found['kernel'] / max(total, 1):.1f}%) "
        "in the kernel (`run_chunk` and everything inlined into it).",
        "",
        "| outside the kernel | % of all samples |",
        "|---|---:|",
        *[f"| `{s[:60]}` | {100 * n / total:.1f} |" for s, n in found["outside"].most_common(10)],
        "",
        "| kernel function | inclusive % of kernel | self % of kernel |",
        "|---|---:|---:|",
        *[
            f"| `{f}` | {100 * n / kernel:.1f} | {100 * found['self'][f] / kernel:.1f} |"
            for f, n in found["inclusive"].most_common(25)
        ],
        "",
        "| hottest lines (innermost function) | % of kernel |",
        "|---|---:|",
        *[f"| {where} | {100 * n / kernel:.1f} |" for where, n in found["lines"].most_common(20)],
        "",
    ]
    return "\n".join(out)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("workload", nargs="?", choices=("varied", "axes"), default="varied")
    ap.add_argument("--variant", default="none", help="varied: none, not or next-not")
    ap.add_argument("--config", default="windows per event=10 (SLIDE 1 min)",
                    help='axes: "<axis>=<configuration>" as in kernel_axes.md')  # fmt: skip
    ap.add_argument("--events", type=int, default=1_000_000)
    ap.add_argument("--data", type=Path, default=Path(tempfile.gettempdir()) / "trendagg-bench")
    ap.add_argument("--child", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        child(json.loads(args.child))
        return
    for tool in ("perf", "addr2line", "nm", "size"):
        if shutil.which(tool) is None:
            raise SystemExit(
                f"profile_kernel needs '{tool}' (perf: linux-tools; the rest: binutils)"
            )
    folder = cache_dir()
    folder.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, "NUMBA_DEBUGINFO": "1", "NUMBA_CACHE_DIR": str(folder),
           "PYTHONHASHSEED": "0"}  # fmt: skip
    cpu = sorted(os.sched_getaffinity(0))[-1]
    name = args.workload + ("" if args.workload == "axes" else f"-{args.variant}")
    if args.workload == "axes":
        name += "-" + re.sub(r"[^a-z0-9]+", "-", args.config.lower()).strip("-")
    config = {"workload": args.workload, "variant": args.variant, "config": args.config,
              "events": args.events, "data": str(args.data), "cpu": cpu, "cache": str(folder),
              "out": str(folder / "run.json")}  # fmt: skip
    me = [sys.executable, str(Path(__file__).resolve()), "--child"]
    print(f"compiling (or loading) the debug build in {folder} ...", flush=True)
    subprocess.run([*me, json.dumps({**config, "events": 20_000})], env=env, check=True)
    perf_data = folder / "perf.data"
    print(f"profiling {args.events:,} events ...", flush=True)
    subprocess.run(
        ["perf", "record", "-q", "-F", "999", "-o", str(perf_data), "--", *me, json.dumps(config)],
        env=env, check=True,
    )  # fmt: skip
    run = json.loads(Path(config["out"]).read_text())
    text = report(name, config, attribute(perf_data, run["kernels"]), run["engine_s"])
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / f"profile_{name}.md").write_text(text)
    print(text)


if __name__ == "__main__":
    main()
