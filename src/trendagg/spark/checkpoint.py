"""A stream's checkpoint folder: what trendagg keeps there beside Spark, and its faults.

Spark keeps a stream's progress in the checkpoint folder (``metadata``, ``offsets/``,
``commits/``, ``sources/``, ``state/``). trendagg adds two files:

* ``trendagg.json``, the guard: the queries, columns and state keys the engine state
  was made with (:func:`check_checkpoint`). A stream refuses to resume with others, and
  refuses a checkpoint whose guard cannot be read or is gone while Spark's progress is
  there (it would resume state made for other queries unchecked).
* ``trendagg.lock``, locked (``flock``) while a stream runs on the checkpoint
  (:func:`start_holding`): a second stream on it is refused, where Spark would let it
  idle. The system drops the lock when its process ends, killed too: a stale lock
  blocks nothing.

A damaged file of Spark's (``metadata``, a log of ``offsets/``, ``commits/`` or
``sources/``) is refused before Spark reads it (:func:`check_spark_files`), and a
failure of Spark's that comes from the checkpoint (its state store) is told as such
(:func:`checkpoint_failure`), each with what to do. Spark's file source log also
tells which files a stream read: :class:`FileCheck` warns of one that looked
unfinished (still being written), whose rest the stream never reads.

Checkpoints on a cluster's file system (``hdfs://``, ``s3a://``) are Spark's alone:
none of this applies to them.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from trendagg.errors import InputError

GUARD = "trendagg.json"
LOCK = "trendagg.lock"
_LOGS = ("offsets", "commits")  # Spark's logs, one file per micro-batch: "v1", then JSON
_LOG_NAME = re.compile(r"\d+(\.compact)?")


def local_folder(checkpoint: str) -> Path | None:
    """The checkpoint's folder on this machine (None: on a cluster's file system)."""
    if "://" in checkpoint and not checkpoint.startswith("file://"):
        return None
    return Path(checkpoint.removeprefix("file://"))


def _damaged(checkpoint: str, what: str, how: str) -> InputError:
    """The refusal of a damaged checkpoint: the folder, what is wrong, what to do."""
    return InputError(
        f"the checkpoint {checkpoint} is damaged: {what}; {how}, or start the stream anew "
        f"with a fresh --checkpoint folder and another --output (it reads the source again "
        f"from its first file)"
    )


def checkpoint_settings(checkpoint: str) -> dict[str, object]:
    """The settings a checkpoint was started with (empty when new, or not on this machine).
    A guard that cannot be read, or that is gone while Spark's progress is there, is
    refused: the state would be resumed unchecked."""
    folder = local_folder(checkpoint)
    if folder is None:
        return {}
    path = folder / GUARD
    if not path.is_file():
        offsets = folder / "offsets"
        if offsets.is_dir() and any(_LOG_NAME.fullmatch(p.name) for p in offsets.iterdir()):
            raise _damaged(
                checkpoint,
                f"it holds a stream's progress (offsets/) but not {GUARD}, which records the "
                f"queries and columns its state was made with",
                f"restore {path} from a copy",
            )
        return {}
    try:
        found = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:  # (a UnicodeDecodeError is a ValueError)
        found = exc
    if not isinstance(found, dict):
        why = f" ({found})" if isinstance(found, Exception) else ""
        raise _damaged(
            checkpoint,
            f"{path}, which records the queries and columns of its state, cannot be read{why}",
            "restore the file from a copy",
        )
    return found


def check_checkpoint(checkpoint: str, settings: dict[str, object]) -> None:
    """Refuse to resume a checkpoint made with other queries or columns: its engine state
    would be read against the wrong plans. A new checkpoint records the settings."""
    folder = local_folder(checkpoint)
    if folder is None:
        return  # on a cluster file system: Spark keeps the checkpoint, unchecked here
    before = checkpoint_settings(checkpoint)
    if before:
        if before.get("routing") != settings.get("routing"):
            raise InputError(
                f"the checkpoint {checkpoint} was written by an earlier trendagg, which kept "
                f"its engine state under other keys: finish that stream with the version "
                f"that started it, or start a new stream with another --checkpoint (and "
                f"--output)"
            )
        changed = [k for k in settings if before.get(k) != settings[k]]
        if changed:
            raise InputError(
                f"the checkpoint {checkpoint} belongs to a stream with other "
                f"{', '.join(changed)}: resume it with the same ones, or start a new stream "
                f"with another --checkpoint (and --output)"
            )
        return
    folder.mkdir(parents=True, exist_ok=True)
    tmp = folder / f".{GUARD}.tmp"  # (written whole, then renamed: never left half-written)
    tmp.write_text(json.dumps(settings, indent=1) + "\n", encoding="utf-8")
    os.replace(tmp, folder / GUARD)


def check_spark_files(checkpoint: str) -> None:
    """Refuse a checkpoint whose files of Spark's cannot be read, before Spark reads them
    (Spark's own words for them are a Py4J call that failed, or "assertion failed"):
    ``metadata`` (one JSON object with the stream's id) and the logs of ``offsets/``,
    ``commits/`` and ``sources/`` (a version line such as ``v1``, then JSON lines)."""
    folder = local_folder(checkpoint)
    if folder is None or not folder.is_dir():
        return
    how = "restore the file from a copy of the checkpoint"
    metadata = folder / "metadata"
    if metadata.exists():
        try:
            found = json.loads(metadata.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            found = exc
        if not (isinstance(found, dict) and isinstance(found.get("id"), str)):
            why = f" ({found})" if isinstance(found, Exception) else ""
            what = f"Spark's {metadata} is not the stream's id as JSON{why}"
            raise _damaged(checkpoint, what, how)
    logs = [folder / name for name in _LOGS]
    sources = folder / "sources"
    if sources.is_dir():
        logs += sorted(p for p in sources.iterdir() if p.is_dir())
    for log in logs:
        if not log.is_dir():
            continue
        for path in sorted(p for p in log.iterdir() if _LOG_NAME.fullmatch(p.name)):
            fault = _log_fault(path)
            if fault is not None:
                raise _damaged(checkpoint, f"Spark's log file {path} {fault}", how)


def _log_fault(path: Path) -> str | None:
    """What is wrong with one of Spark's log files (None: it reads)."""
    try:
        lines = path.read_text(encoding="utf-8").split("\n")
    except (OSError, ValueError) as exc:
        return f"cannot be read ({exc})"
    if not re.fullmatch(r"v\d+", lines[0]):
        return f"does not start with a version line such as 'v1' (it starts {lines[0][:40]!r})"
    for number, line in enumerate(lines[1:], start=2):
        if not line or line == "-":  # (an offsets log writes "-" for a source without one)
            continue
        try:
            json.loads(line)
        except ValueError:
            return f"has a line that is not JSON (line {number}: {line[:60]!r}), cut short?"
    return None


def checkpoint_failure(checkpoint: str, exc: BaseException) -> InputError | None:
    """A Spark failure that comes from a damaged checkpoint, told as such: the state
    store's files (``state/``) that RocksDB or Spark cannot read. None when the failure is
    not Spark's, or not the checkpoint's."""
    from trendagg.spark.session import failure_text, is_spark_failure, spark_failure

    if not is_spark_failure(exc):
        return None
    # Spark's error classes for state it cannot load (a truncated changelog: "Stream ended
    # prematurely"), and Hadoop's for a file that differs from its .crc
    signs = (
        "CANNOT_LOAD_STATE_STORE",
        "CANNOT_READ_STREAMING_STATE_FILE",
        "CANNOT_READ_CHECKPOINT",
        "ChecksumException",
    )
    if not any(sign in failure_text(exc) for sign in signs):
        return None
    folder = local_folder(checkpoint)
    where = folder / "state" if folder is not None else f"{checkpoint}/state"
    return _damaged(
        checkpoint,
        f"the engine state Spark keeps under {where} cannot be read ({spark_failure(exc)})",
        "restore the checkpoint from a copy",
    )


# a checkpoint's real path -> (its open lock file, the StreamingQuery that holds it)
_HELD: dict[str, tuple[Any, Any]] = {}


def start_holding(checkpoint: str, start: Callable[[], Any]) -> Any:
    """Start a stream (``start()`` returns its StreamingQuery) holding the checkpoint's
    lock for as long as the stream runs; refused when another stream holds it.

    The lock is an ``flock`` on ``trendagg.lock``: the system drops it when its process
    ends (killed too), and a stream of this process that stopped gives it back when the
    next one takes it."""
    import fcntl

    folder = local_folder(checkpoint)
    if folder is None:
        return start()
    folder.mkdir(parents=True, exist_ok=True)
    key = str(folder.resolve())
    held = _HELD.pop(key, None)
    if held is not None:
        if held[1].isActive:
            _HELD[key] = held
            raise _in_use(checkpoint, "this process")
        held[0].close()
    handle = open(folder / LOCK, "a+", encoding="utf-8")  # noqa: SIM115 (held past here)
    try:
        fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        handle.seek(0)
        holder = handle.read().strip()
        handle.close()
        raise _in_use(
            checkpoint, f"process {holder}" if holder.isdigit() else "a process"
        ) from None
    handle.seek(0)
    handle.truncate()
    handle.write(f"{os.getpid()}\n")
    handle.flush()
    try:
        query = start()
    except BaseException:
        handle.close()
        raise
    _HELD[key] = (handle, query)
    return query


def _in_use(checkpoint: str, holder: str) -> InputError:
    return InputError(
        f"the checkpoint {checkpoint} is in use by another stream, running in {holder}: "
        f"two streams on one checkpoint would take each other's micro-batches; stop that "
        f"stream first, or give this one another --checkpoint (and --output)"
    )


class FileCheck:
    """The files a directory stream has read, from Spark's file source log
    (``sources/0``), each checked once: a text file whose last line has no line end
    (a JSON line or CSV row cut short), or that changed after Spark listed it, looked
    unfinished when the stream read it. Spark reads a file once, so what is written to
    it later is never read: each such file gets a warning."""

    def __init__(self, checkpoint: str | None):
        folder = local_folder(checkpoint) if checkpoint else None
        self.log = folder / "sources" / "0" if folder is not None else None
        self.read_to = -1  # the log files read (by number)
        self.seen: set[str] = set()

    def warnings(self) -> list[str]:
        """One line per file not checked before that looked unfinished."""
        if self.log is None or not self.log.is_dir():
            return []
        found = []
        for number, path in sorted(
            (int(p.name.split(".")[0]), p)
            for p in self.log.iterdir()
            if _LOG_NAME.fullmatch(p.name)
        ):
            if number <= self.read_to:
                continue
            self.read_to = number
            for name, listed in _listed(path):
                if name in self.seen:
                    continue
                self.seen.add(name)
                why = _unfinished(Path(name), listed)
                if why is not None:
                    found.append(
                        f"{name} looked unfinished when the stream read it ({why}): a stream "
                        f"reads each file once, so what was written to it later is not read. "
                        f"Write files elsewhere and move them into the source folder whole "
                        f"(a rename on the same file system)"
                    )
        return found


def _listed(path: Path) -> list[tuple[str, int | None]]:
    """(file, its modification time in ms when listed) of one file source log file."""
    from urllib.parse import unquote, urlparse

    try:
        lines = path.read_text(encoding="utf-8").splitlines()[1:]
    except (OSError, ValueError):
        return []
    found = []
    for line in lines:
        try:
            entry = json.loads(line)
        except ValueError:
            continue
        if isinstance(entry, dict) and isinstance(entry.get("path"), str):
            url = urlparse(entry["path"])
            if url.scheme in ("", "file"):
                stamp = entry.get("timestamp")
                found.append((unquote(url.path), stamp if isinstance(stamp, int) else None))
    return found


def _unfinished(path: Path, listed: int | None) -> str | None:
    """Why a text file a stream read looks unfinished (None: it looks whole; a gzip or
    Parquet file is not checked)."""
    try:
        size = path.stat().st_size
        changed = path.stat().st_mtime_ns // 1_000_000
        with open(path, "rb") as f:
            head = f.read(4)
            f.seek(max(0, size - 1))
            last = f.read(1)
    except OSError:
        return None
    if head.startswith(b"\x1f\x8b") or head == b"PAR1":
        return None
    if size and last != b"\n":
        return "its last line has no line end"
    if listed is not None and changed > listed:
        return "it changed after the stream listed it"
    return None


__all__ = [
    "GUARD",
    "LOCK",
    "FileCheck",
    "check_checkpoint",
    "check_spark_files",
    "checkpoint_failure",
    "checkpoint_settings",
    "local_folder",
    "start_holding",
]
