"""The README's examples run as written: its shell and Python blocks, in order, in one folder.

A fenced block tagged ``bash``, ``sh`` or ``python`` is run unless it mentions Spark,
``make``, ``pip``, Java or ``shared/`` (those need a JVM, a network, the team's data or
minutes). The shell blocks run with ``trendagg`` on the PATH as this interpreter's
``python -m trendagg.cli``; a Python block's trailing ``# ...`` comment is the output it
prints; the rows the README shows under the quick start are rows of the file it writes.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

README = Path(__file__).resolve().parent.parent / "README.md"
NOT_RUN = re.compile(r"spark|\bmake\b|\bpip\b|\bjava\b|shared/", re.IGNORECASE)
FENCE = re.compile(r"^```(\w*)\n(.*?)^```$", re.MULTILINE | re.DOTALL)


def blocks() -> list[tuple[str, str]]:
    """Every fenced block of the README as (language, text), in order."""
    return [(m.group(1), m.group(2)) for m in FENCE.finditer(README.read_text())]


def runnable() -> list[tuple[str, str]]:
    return [
        (lang, text)
        for lang, text in blocks()
        if lang in ("bash", "sh", "python") and not NOT_RUN.search(text)
    ]


def _run(args: list[str], cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True, timeout=300)


def test_the_readme_blocks_run(tmp_path: Path) -> None:
    todo = runnable()
    assert [lang for lang, _ in todo] == ["bash", "python"], "the quick start and Python"
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    shim = bin_dir / "trendagg"
    shim.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m trendagg.cli "$@"\n')
    shim.chmod(0o755)
    work = tmp_path / "work"
    work.mkdir()
    env = {
        **os.environ,
        "PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}",
        "PYTHONPATH": os.pathsep.join(sys.path),
    }
    for number, (lang, text) in enumerate(todo):
        if lang == "python":
            script = work / f"block{number}.py"
            script.write_text(text)
            done = _run([sys.executable, str(script)], work, env)
        else:
            done = _run(["bash", "-euo", "pipefail", "-c", text], work, env)
        assert done.returncode == 0, f"README block {number} ({lang}):\n{text}\n{done.stderr}"
        if lang == "python":
            printed = [line[2:] for line in text.splitlines() if line.startswith("# ")]
            assert printed and done.stdout.splitlines() == printed, done.stdout

    # the quick start's output, as the README reads it column by column
    results = (work / "results.csv").read_text().splitlines()
    shown = [text for lang, text in blocks() if not lang and text.startswith("query,")][-1]
    header, *rows = shown.splitlines()
    assert results[0] == header
    assert rows and set(rows) <= set(results[1:]), rows
