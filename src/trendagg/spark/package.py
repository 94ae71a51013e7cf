"""trendagg shipped to a cluster's executors with the job, its kernels compiled.

On a cluster (any master but ``local``), :func:`cluster_conf` gives the settings that
send this trendagg to every executor as an archive (``spark.archives``, unpacked in
the executor's working folder) and put it first on the executors' Python path, as it
would reach separate machines: the executors need Python and trendagg's dependencies
(numpy, numba, pyarrow, lark), not trendagg itself. The archive holds the package's
sources and the cache of its compiled kernels for these sources (a folder named by
their digest, :mod:`trendagg.jit`), so an executor on the same kind of CPU
loads the kernels in under a second instead of compiling them for minutes; the driver
compiles them first when its cache lacks them, with a line on stderr that says so
(:func:`trendagg.kernels.warm.ensure_compiled`, all of them: the archive is made when
the session starts, before its jobs are known). The archive is made once per content,
in the temporary folder.
"""

from __future__ import annotations

import hashlib
import os
import tarfile
import tempfile
from pathlib import Path

ALIAS = "trendagg_pkg"  # the folder the executors unpack the archive into


def package_archive() -> Path:
    """The archive of the installed trendagg package (sources and compiled kernels)."""
    from trendagg.jit import PACKAGE, cache_folder, digest
    from trendagg.kernels.warm import ALL, ensure_compiled

    ensure_compiled(ALL)  # (every kernel a job may run: executors would each compile them)
    cache = cache_folder()
    # The sources, and the driver's cache where an executor's unpacked copy looks first
    # (beside the sources, by their digest); no other caches.
    kernels = Path("trendagg") / "kernels" / "__pycache__" / f"numba-{digest()[:16]}"
    files = {
        Path("trendagg") / p.relative_to(PACKAGE): p
        for p in PACKAGE.rglob("*")
        if p.is_file() and not p.parent.name.startswith("numba-")
    }
    if cache is not None:
        files.update({kernels / p.name: p for p in cache.iterdir() if p.is_file()})
    digest_of = hashlib.sha256()
    for name, p in sorted(files.items()):
        stat = p.stat()
        digest_of.update(f"{name}\0{stat.st_mtime_ns}\0{stat.st_size}\n".encode())
    path = Path(tempfile.gettempdir()) / f"trendagg-{digest_of.hexdigest()[:16]}.tar.gz"
    if not path.exists():
        part = path.with_suffix(f".{os.getpid()}.part")
        with tarfile.open(part, "w:gz", format=tarfile.PAX_FORMAT) as tar:
            for name, p in sorted(files.items()):
                tar.add(p, arcname=str(name))
        part.replace(path)
    return path


def cluster_conf(master: str, conf: dict[str, str]) -> dict[str, str]:
    """``conf`` with the settings that ship trendagg to the executors of ``master`` (none
    for the embedded ``local`` masters); a user's own archives and Python path are kept
    (after trendagg's)."""
    if master.startswith("local"):
        return conf
    archive = f"{package_archive()}#{ALIAS}"
    path = conf.get("spark.executorEnv.PYTHONPATH")
    archives = conf.get("spark.archives")
    return {
        **conf,
        "spark.archives": f"{archive},{archives}" if archives else archive,
        "spark.executorEnv.PYTHONPATH": f"{ALIAS}{os.pathsep}{path}" if path else ALIAS,
    }


__all__ = ["ALIAS", "cluster_conf", "package_archive"]
