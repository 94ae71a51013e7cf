"""numba's ``njit`` with a cache keyed by every kernel source, not by one file.

numba stamps a cached function with the content of the file that defines it and
nothing else: a change to a helper it calls from another module (``mulmod`` of
``_rns.py``, called from ``loop/core.py``) leaves the cache of the caller in place,
and the next run executes the old code, silently. Here every cached function of
trendagg gets a locator of its own (:class:`KernelLocator`): its stamp is the
digest of all the files listed in :data:`SOURCES` (the modules whose functions
are compiled, the intrinsics they use, the options they compile with and the named
tuples they take), and the
folder it caches in is named by that digest, so a change to any of them compiles
anew, and two copies of the same sources (a clone, an executor's unpacked
archive, a worktree) load the same cache whatever their files' times.

The folder is the first writable one of: ``$NUMBA_CACHE_DIR/trendagg-<digest>``
(a user's choice), ``kernels/__pycache__/numba-<digest>`` beside the sources (what
the cluster archive ships), the user's cache folder, and a folder of this user in
the temporary directory (no writable home, a read-only installation).

Modules that compile take ``njit`` from here (``tests/test_layering.py`` checks that
each is in :data:`SOURCES`), which installs the locator before their functions are defined: numba picks a function's
locator when it is decorated.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
import time
from functools import cache
from pathlib import Path

from numba import config, njit
from numba.core import caching

PACKAGE = Path(__file__).resolve().parent  # the trendagg package
# Every file whose text reaches a compiled kernel, relative to the package.
SOURCES = (
    "jit.py",
    "kernels/__init__.py",  # (the package is the folder that holds this one)
    "kernels/_borrow.py",
    "kernels/_rns.py",
    "kernels/loop/__init__.py",
    "kernels/loop/arith.py",
    "kernels/loop/results.py",
    "kernels/loop/edges.py",
    "kernels/loop/indexes.py",
    "kernels/loop/negation.py",
    "kernels/loop/core.py",
    "kernels/loop/lazy.py",
    "kernels/loop/windows.py",
    "kernels/loop/bursts.py",
    "kernels/loop/instances.py",
    "kernels/loop/chunk.py",
    "kernels/loop/snapshots.py",
    "io/_scan.py",
    # the modules of the named tuples the kernels take: numba keys a cached kernel by its
    # arguments' types, a named tuple's by its class's module and name and not its fields,
    # so a field renamed or moved there would run the cached code on the wrong arrays
    "kernels/program.py",
    "kernels/gloria_program.py",
    "kernels/executor.py",
)
_PRUNE_AFTER = 24 * 3600  # seconds: a folder of other sources unused this long is removed


@cache
def digest(package: Path = PACKAGE) -> str:
    """The SHA-256 of the :data:`SOURCES` of ``package``, names and contents."""
    h = hashlib.sha256()
    for name in SOURCES:
        h.update(name.encode() + b"\0" + (package / name).read_bytes() + b"\0")
    return h.hexdigest()


def _folders(package: Path) -> list[Path]:
    """The cache folders to try, in order, for the sources of ``package``."""
    name = digest(package)[:16]
    found = []
    if config.CACHE_DIR:
        found.append(Path(config.CACHE_DIR) / f"trendagg-{name}")
    found.append(package / "kernels" / "__pycache__" / f"numba-{name}")
    user = caching.AppDirs(appname="numba", appauthor=False).user_cache_dir
    found.append(Path(user) / f"trendagg-{name}")
    uid = os.getuid() if hasattr(os, "getuid") else "user"
    found.append(Path(tempfile.gettempdir()) / f"trendagg-numba-cache-{uid}" / f"trendagg-{name}")
    return found


def _writable(folder: Path) -> bool:
    try:
        fresh = not folder.exists()
        folder.mkdir(parents=True, exist_ok=True)
        tempfile.TemporaryFile(dir=folder).close()
    except OSError:
        return False
    if fresh:
        _prune(folder)
    return True


def _prune(folder: Path) -> None:
    """Remove the folders beside ``folder`` of other sources, unused for a day (an
    upgrade, or a kernel edited in a checkout, leaves one behind each time)."""
    prefix = folder.name.rsplit("-", 1)[0] + "-"
    now = time.time()
    for other in folder.parent.glob(prefix + "*"):
        try:
            if other != folder and now - other.stat().st_mtime > _PRUNE_AFTER:
                for f in other.iterdir():
                    f.unlink()
                other.rmdir()
        except OSError:
            pass  # in use, or not ours to remove: leave it


@cache
def cache_folder(package: Path = PACKAGE) -> Path | None:
    """Where the kernels of ``package`` are cached (None: no writable folder, no cache)."""
    return next((f for f in _folders(package) if _writable(f)), None)


class KernelLocator(caching._CacheLocator):
    """numba's cache locator for the functions defined in trendagg's :data:`SOURCES`."""

    def __init__(self, py_func: object, folder: Path, stamp: str) -> None:
        self._lineno = py_func.__code__.co_firstlineno  # type: ignore[attr-defined]
        self._folder = folder
        self._stamp = stamp

    def ensure_cache_path(self) -> None:
        self._folder.mkdir(parents=True, exist_ok=True)

    def get_cache_path(self) -> str:
        return str(self._folder)

    def get_source_stamp(self) -> str:
        return self._stamp

    def get_disambiguator(self) -> str:
        return str(self._lineno)

    @classmethod
    def from_function(cls, py_func: object, py_file: str) -> KernelLocator | None:
        path = Path(py_file).resolve()
        package = next((p for p in path.parents if (p / SOURCES[1]).is_file()), None)
        if package is None or str(path.relative_to(package)) not in SOURCES:
            return None
        folder = cache_folder(package)
        return None if folder is None else cls(py_func, folder, digest(package))


# numba tries its locators in this order (numba 0.63-0.68; ``_CacheImpl`` before 0.65)
_LOCATORS = getattr(caching, "CacheImpl", getattr(caching, "_CacheImpl", None))._locator_classes
if KernelLocator not in _LOCATORS:
    _LOCATORS.insert(0, KernelLocator)


__all__ = ["SOURCES", "KernelLocator", "cache_folder", "digest", "njit"]
