"""The compiled kernels' cache is keyed by every kernel source (``trendagg.jit``).

numba's own cache notices a change only in the file that defines a cached function;
a helper changed in another module left the caller's cache in place and the next run
executed the old code. These tests change a helper in a temporary copy of the package
and see the new behaviour, and see numba's own locator miss it (the hazard is real).
"""

from __future__ import annotations

import ast
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from trendagg import jit

PROBE = """

from trendagg.kernels import JIT_OPTIONS  # noqa: E402
from trendagg.kernels._rns import mulmod  # noqa: E402


@njit(**JIT_OPTIONS)
def probe_mulmod(a, b):
    return mulmod(a, b, 1000003, 1.0 / 1000003)
"""


def _copy(tmp_path: Path, probe: str = PROBE) -> Path:
    """A copy of the package whose loop/chunk.py ends with ``probe`` (by default a small
    cached function that calls _rns.mulmod)."""
    root = tmp_path / "src"
    shutil.copytree(jit.PACKAGE, root / "trendagg", ignore=shutil.ignore_patterns("__pycache__"))
    with open(root / "trendagg" / "kernels" / "loop" / "chunk.py", "a", encoding="utf-8") as f:
        f.write(probe)
    return root


def _run(root: Path, cache: Path, code: str, locators: str | None = None) -> str:
    """What ``code`` prints in a fresh process importing ``root``'s trendagg, caching in
    ``cache`` (with numba's locators ``locators``, else trendagg's)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("NUMBA_")}
    env.update(PYTHONPATH=str(root), NUMBA_CACHE_DIR=str(cache))
    if locators:
        env["NUMBA_CACHE_LOCATOR_CLASSES"] = locators
    done = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def _probe(root: Path, cache: Path, locators: str | None = None) -> str:
    code = (
        "from trendagg.kernels.loop import chunk\n"
        "print(chunk.probe_mulmod(3, 5), sum(chunk.probe_mulmod.stats.cache_hits.values()))"
    )
    return _run(root, cache, code, locators)


def _double_mulmod(root: Path) -> None:
    rns = root / "trendagg" / "kernels" / "_rns.py"
    text = rns.read_text(encoding="utf-8")
    body = text.index("def mulmod(")
    end = text.index("    return r\n", body)
    rns.write_text(text[:end] + "    return (2 * r) % p\n" + text[end + 13 :], encoding="utf-8")


@pytest.mark.skipif(os.environ.get("NUMBA_DISABLE_JIT") == "1", reason="needs the compiler")
def test_a_helper_changed_in_another_module_compiles_anew(tmp_path: Path) -> None:
    root = _copy(tmp_path)
    cache = tmp_path / "cache"
    assert _probe(root, cache) == "15 0"  # compiled and cached
    assert _probe(root, cache) == "15 1"  # loaded from the cache
    _double_mulmod(root)
    assert _probe(root, cache) == "30 0"  # chunk.py unchanged: compiled anew all the same


@pytest.mark.skipif(os.environ.get("NUMBA_DISABLE_JIT") == "1", reason="needs the compiler")
def test_numbas_own_locator_would_run_the_old_helper(tmp_path: Path) -> None:
    """The control: without trendagg's locator the same change runs stale code."""
    root = _copy(tmp_path)
    own = "UserProvidedCacheLocator"
    assert _probe(root, tmp_path / "cache", own) == "15 0"
    _double_mulmod(root)
    assert _probe(root, tmp_path / "cache", own) == "15 1"  # stale


FIELDS_PROBE = """

from trendagg.kernels import JIT_OPTIONS  # noqa: E402
from trendagg.kernels.executor import Out as _ProbeOut  # noqa: E402


@njit(**JIT_OPTIONS)
def probe_fields(out):
    return out.n
"""


def _fields_probe(root: Path, cache: Path, locators: str | None = None) -> str:
    """``probe_fields(Out(1, 2, 3, 4))`` (it reads the field ``n``) in a fresh process."""
    code = (
        "from trendagg.kernels.loop import chunk\n"
        "print(chunk.probe_fields(chunk._ProbeOut(1, 2, 3, 4)))"
    )
    return _run(root, cache, code, locators)


def _swap_out_fields(root: Path) -> None:
    path = root / "trendagg" / "kernels" / "executor.py"
    text = path.read_text(encoding="utf-8")
    assert '"Out", "n key add ext"' in text
    path.write_text(text.replace('"Out", "n key add ext"', '"Out", "key n add ext"'))


@pytest.mark.skipif(os.environ.get("NUMBA_DISABLE_JIT") == "1", reason="needs the compiler")
@pytest.mark.parametrize(("locators", "after"), [(None, "2"), ("UserProvidedCacheLocator", "1")])
def test_a_named_tuple_whose_fields_change_compiles_anew(
    tmp_path: Path, locators: str | None, after: str
) -> None:
    """numba keys a cached kernel by its named tuple argument's class, not its fields: with
    its own locator, ``Out``'s fields swapped in executor.py leave the cached code reading
    the old position (1, where ``n`` is now 2); trendagg's digest covers that module."""
    root = _copy(tmp_path, FIELDS_PROBE)
    cache = tmp_path / "cache"
    assert _fields_probe(root, cache, locators) == "1"
    _swap_out_fields(root)
    assert _fields_probe(root, cache, locators) == after


def test_the_named_tuples_the_kernels_take_are_in_the_digest() -> None:
    from trendagg.kernels import executor, gloria_program, program

    tuples = [
        program.Program,
        gloria_program.Gloria,
        executor.State,
        executor.Events,
        executor.Scratch,
        executor.Out,
        executor.GState,
        executor.GScratch,
    ]
    for kind in tuples:
        module = kind.__module__.removeprefix("trendagg.").replace(".", "/") + ".py"
        assert module in jit.SOURCES, kind


def test_copies_of_the_same_sources_share_a_digest_and_any_change_makes_another(
    tmp_path: Path,
) -> None:
    root = tmp_path / "copy"
    shutil.copytree(jit.PACKAGE, root, ignore=shutil.ignore_patterns("__pycache__"))
    os.utime(root / "kernels" / "_rns.py", (0, 0))  # times do not matter, contents do
    assert jit.digest(root) == jit.digest(jit.PACKAGE)
    for name in jit.SOURCES:
        changed = tmp_path / f"changed-{name.replace('/', '-')}"
        shutil.copytree(root, changed)
        with open(changed / name, "a", encoding="utf-8") as f:
            f.write("\n# changed\n")
        assert jit.digest(changed) != jit.digest(root), name


def test_every_module_that_compiles_is_in_the_digest() -> None:
    """A module that decorates with ``njit`` (or defines an intrinsic) takes it from
    ``trendagg.jit`` and is one of its SOURCES; so is every module such code calls."""
    compiling = set()
    for path in jit.PACKAGE.rglob("*.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.module in ("numba", "trendagg.jit"):
                names = {a.name for a in node.names}
                if names & {"njit", "jit", "intrinsic", "vectorize", "generated_jit"}:
                    compiling.add(str(path.relative_to(jit.PACKAGE)))
                    own = path == jit.PACKAGE / "jit.py"
                    assert own or node.module == "trendagg.jit" or "njit" not in names, path
    assert compiling and compiling <= set(jit.SOURCES)
    for name in compiling:  # what their compiled code imports from trendagg
        tree = ast.parse((jit.PACKAGE / name).read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("trendagg."):
                module = node.module.removeprefix("trendagg.").replace(".", "/")
                target = f"{module}.py" if (jit.PACKAGE / f"{module}.py").exists() else None
                target = target or f"{module}/__init__.py"
                assert target in jit.SOURCES, f"{name} imports {node.module}"


def test_the_cache_goes_to_the_first_writable_folder(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    from numba.core import config

    monkeypatch.setattr(config, "CACHE_DIR", str(tmp_path / "mine"))
    folders = jit._folders(jit.PACKAGE)
    name = jit.digest()[:16]
    assert folders[0] == tmp_path / "mine" / f"trendagg-{name}"  # a user's choice first
    assert folders[1] == jit.PACKAGE / "kernels" / "__pycache__" / f"numba-{name}"
    assert "trendagg-numba-cache" in str(folders[-1])  # a read-only installation, no home
    monkeypatch.setattr(config, "CACHE_DIR", "")
    monkeypatch.setattr(jit, "_writable", lambda folder: "trendagg-numba-cache" in str(folder))
    jit.cache_folder.cache_clear()
    try:
        assert "trendagg-numba-cache" in str(jit.cache_folder())
    finally:
        jit.cache_folder.cache_clear()


def test_a_folder_of_other_sources_is_pruned_after_a_day(tmp_path: Path) -> None:
    old, recent = tmp_path / "numba-old", tmp_path / "numba-recent"
    for folder in (old, recent):
        folder.mkdir()
        (folder / "x.nbi").write_bytes(b"")
    os.utime(old, (0, 0))
    assert jit._writable(tmp_path / "numba-new")
    assert not old.exists() and recent.exists()


@pytest.mark.skipif(os.environ.get("NUMBA_DISABLE_JIT") == "1", reason="needs the compiler")
def test_the_engine_kernels_use_the_digest_locator() -> None:
    from trendagg.io import _scan
    from trendagg.kernels import _rns
    from trendagg.kernels.loop import chunk, snapshots

    for f in (chunk.run_chunk, snapshots.run_gloria, _rns.mulmod_arrays, _scan.plain_ints):
        locator = f._cache._impl.locator
        assert isinstance(locator, jit.KernelLocator)
        assert locator.get_source_stamp() == jit.digest()
