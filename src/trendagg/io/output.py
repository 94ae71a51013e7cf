"""Open a text destination for the writers: a file (gzipped if ``.gz``) or a stream."""

from __future__ import annotations

import gzip
import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TextIO

from trendagg.errors import InputError


@contextmanager
def open_output(
    path: str | os.PathLike[str] | None, stream: TextIO | None = None
) -> Iterator[TextIO]:
    """Yield a text stream to write to.

    ``stream`` wins when given (tests, callers with their own handle); else
    ``path`` None means standard output; a path ending in ``.gz`` is written
    gzip-compressed. Files are UTF-8 with ``\\n`` line ends. Streams are
    flushed, never closed: they belong to the caller.
    """
    if stream is not None or path is None:
        target = stream if stream is not None else sys.stdout
        yield target
        target.flush()
        return
    location = Path(path)
    if location.is_dir():
        raise InputError(f"output path '{location}' is a folder; pass a file name")
    if not location.parent.exists():
        raise InputError(
            f"cannot write '{location}': folder '{location.parent}' does not exist; create it first"
        )
    if location.name.lower().endswith(".gz"):
        with gzip.open(location, "wt", encoding="utf-8", newline="") as handle:
            yield handle
    else:
        with location.open("w", encoding="utf-8", newline="") as handle:
            yield handle
