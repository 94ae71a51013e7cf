"""File formats by name: one table of extensions for the readers, the writers, the CLI and Spark.

A name's format is its last extension, a final ``.gz`` aside (``events.csv.gz`` is
CSV). The readers also tell gzip from the content (:func:`is_gzip`), so a compressed
file needs no ``.gz`` in its name.
"""

from __future__ import annotations

import gzip
import os
from dataclasses import dataclass
from pathlib import Path
from typing import IO, cast

from trendagg.errors import InputError
from trendagg.io.values import shown

FORMATS = ("csv", "jsonl", "parquet")
EXTENSIONS = {
    ".csv": "csv",
    ".jsonl": "jsonl",
    ".ndjson": "jsonl",
    ".json": "jsonl",
    ".parquet": "parquet",
    ".pq": "parquet",
}
_ALIASES = {"json": "jsonl", "ndjson": "jsonl", "pq": "parquet"}
_GZIP_MAGIC = b"\x1f\x8b"


def suffix_of(path: str | os.PathLike[str] | None) -> str:
    """The lower-case extension of a path, ignoring a final ``.gz`` ('' for None)."""
    if path is None:
        return ""
    suffixes = [suffix.lower() for suffix in Path(path).suffixes]
    if suffixes and suffixes[-1] == ".gz":
        suffixes.pop()
    return suffixes[-1] if suffixes else ""


def name_format(path: str | os.PathLike[str] | None) -> str | None:
    """'csv', 'jsonl' or 'parquet' by the extension of a path, or None."""
    return EXTENSIONS.get(suffix_of(path))


def format_named(fmt: str) -> str:
    """The format a name stands for, in lower case with its aliases resolved ('json' is
    'jsonl', 'pq' is 'parquet'); unknown names come back as they are, lower-cased."""
    name = fmt.lower()
    return _ALIASES.get(name, name)


def event_format(path: Path, fmt: str | None) -> str:
    """The format of an event file: ``fmt`` when given, else a folder is Parquet and a
    file is what its extension says; InputError when neither tells."""
    if fmt is not None:
        name = format_named(fmt.lstrip("."))
        if name not in FORMATS:
            raise InputError(
                f"unknown event format '{shown(fmt)}'; use 'csv', 'jsonl' or 'parquet'"
            )
        return name
    if path.is_dir():
        return "parquet"
    kind = name_format(path)
    if kind is None:
        raise InputError(
            f"cannot tell the format of '{path}' from its extension; name it .csv, .jsonl "
            "or .parquet (.csv.gz and .jsonl.gz work too), or in the Python API pass "
            "fmt='csv', 'jsonl' or 'parquet'"
        )
    return kind


def result_format(path: str | os.PathLike[str] | None, fmt: str | None) -> str:
    """The format results are written in: ``fmt`` when given, else the extension of
    ``path``, else JSON Lines."""
    if fmt is None:
        return name_format(path) or "jsonl"
    kind = format_named(fmt)
    if kind not in FORMATS:
        raise InputError(f"unknown result format '{shown(fmt)}'; use 'jsonl', 'csv' or 'parquet'")
    return kind


def is_gzip(path: Path) -> bool:
    """Whether a file's content is gzip-compressed, whatever its name."""
    with path.open("rb") as handle:
        return handle.read(2) == _GZIP_MAGIC


@dataclass(frozen=True)
class Input:
    """An event file or folder that exists: its path, its name in messages, its format
    and whether its content is gzip-compressed."""

    location: Path
    source: str
    kind: str
    gzipped: bool = False


def open_binary(location: Path, gzipped: bool) -> IO[bytes]:
    """Open a (possibly gzipped) file for reading bytes."""
    return cast(IO[bytes], gzip.open(location, "rb")) if gzipped else location.open("rb")
