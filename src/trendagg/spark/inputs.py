"""What the driver checks of the events before Spark starts, as the local readers check
them and with their messages: the JVM's start takes half a minute, and a missing file or
column should not wait for it. :func:`check_input` checks a file for ``trendagg run
--engine spark`` (:func:`trendagg.spark.batch.collect`), :func:`check_source` a stream's
source (``trendagg stream``, :func:`trendagg.spark.stream.stream_trends`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from trendagg.errors import InputError
from trendagg.io.options import ReadOptions


@dataclass(frozen=True)
class CheckedInput:
    """An event file or folder as the driver checked it before Spark reads it
    (:func:`check_input`): its format (csv, jsonl, parquet), its columns (None for JSON
    Lines, whose keys only the rows know), the path Spark reads, whether a quoted CSV
    cell may hold a line break, and a Parquet input's Arrow schema."""

    path: str
    kind: str
    names: list[str] | None
    readable: str
    multiline: bool = False
    schema: Any = None


def check_input(
    path: str, columns: Sequence[str] | None = None, read: ReadOptions | None = None
) -> CheckedInput:
    """An event file checked on the driver as the local readers check it, with their
    messages: it exists, its format is known, a folder is Parquet, ``columns`` (the
    names of a CSV file without a header row) are for CSV; a CSV file's bytes (see
    :func:`check_csv`), a Parquet file's footer or a folder's files
    (:func:`trendagg.io.parquet.parquet_schema`), a JSON Lines file's first line
    (:func:`check_jsonl`); and with ``read``, the columns its events need (the time
    column, the type column unless an event type is given; of JSON Lines, the lines up
    to the first object with those keys, :func:`trendagg.io.jsonl.check_keys`). Reads
    a CSV file once, at disk speed; of the others, what tells their columns."""
    from pathlib import Path

    from trendagg.io.formats import Input, event_format, is_gzip
    from trendagg.io.jsonl import check_keys
    from trendagg.io.parquet import parquet_schema

    if read is not None:
        read.check()
    p = Path(path)
    if not p.exists():
        raise InputError(f"event file '{path}' does not exist; check the path")
    kind = event_format(p, None)
    if columns is not None and kind != "csv":
        raise InputError(
            f"column names are for CSV files without a header row; {path} is {kind}, "
            "whose columns are named in the file"
        )
    if kind == "parquet":
        schema = parquet_schema(p, path)
        if read is not None:
            read.check_columns(schema.names, path)
        return CheckedInput(path, kind, list(schema.names), path, schema=schema)
    if p.is_dir():
        raise InputError(
            f"'{path}' is a folder; only Parquet datasets can be read from a folder, "
            f"so pass one {kind} file or fmt='parquet'"
        )
    if kind == "csv":
        header, multiline, readable = check_csv(p, path, has_header=columns is None)
        names = header if columns is None else [c.strip() for c in columns]
        if read is not None:
            read.check_columns(names, path)
        return CheckedInput(path, kind, names, readable, multiline)
    readable = check_jsonl(p, path)
    if read is not None:
        check_keys(Input(p, path, kind, is_gzip(p)), read)
    return CheckedInput(path, kind, None, readable)


def check_csv(path: Any, source: str, *, has_header: bool) -> tuple[list[str], bool, str]:
    """A CSV file checked on the driver as the local reader checks it (an empty file, a
    duplicate header name, text that is not UTF-8, a quoted cell never closed are refused
    with its messages): its header, whether a quoted cell may hold a line break, and the
    path Spark reads (gzip content without a .gz name is linked under a .gz name, as Spark
    tells compression by the name). One pass over the bytes, at disk speed."""
    import codecs

    from trendagg.io.csv import check_quotes, header, not_utf8
    from trendagg.io.formats import Input, is_gzip, open_binary

    file = Input(path, source, "csv", is_gzip(path))
    names = header(file, None) if has_header else []
    decoder = codecs.getincrementaldecoder("utf-8")()
    quotes = 0
    try:
        with open_binary(path, file.gzipped) as handle:
            while chunk := handle.read(1 << 22):
                decoder.decode(chunk)
                quotes += chunk.count(b'"')
            decoder.decode(b"", final=True)
    except UnicodeDecodeError as error:
        raise not_utf8(source, error) from None
    except (OSError, EOFError) as error:
        raise InputError(f"cannot read {source} as CSV ({error}); check the file") from None
    if quotes % 2:
        check_quotes(file)
    return names, quotes > 0, _spark_path(path, file.gzipped)


def check_jsonl(path: Any, source: str) -> str:
    """A JSON Lines file checked on the driver as the local reader checks it (a file that
    is one JSON array is refused with its message): the path Spark reads."""
    from trendagg.io.formats import is_gzip, open_binary
    from trendagg.io.jsonl import JSON_BLANKS, refuse_json_array

    gzipped = is_gzip(path)
    try:
        with open_binary(path, gzipped) as handle:
            for number, line in enumerate(handle, start=1):
                if number == 1:
                    line = line.removeprefix(b"\xef\xbb\xbf")
                text = line.decode("utf-8", "replace").strip(JSON_BLANKS)
                if text and "\ufffd" not in text:
                    refuse_json_array(text, source)
                    break
    except (OSError, EOFError) as error:
        raise InputError(f"cannot read {source} ({error}); check the file") from None
    return _spark_path(path, gzipped)


def _spark_path(path: Any, gzipped: bool) -> str:
    """The path Spark reads: gzip content without a .gz name is linked under a .gz name,
    as Spark tells compression by the name."""
    import atexit
    import shutil
    import tempfile
    from pathlib import Path

    if not gzipped or Path(path).suffix.lower() == ".gz":
        return str(path)
    folder = tempfile.mkdtemp(prefix="trendagg-")
    atexit.register(shutil.rmtree, folder, True)
    link = Path(folder) / (Path(path).name + ".gz")
    link.symlink_to(Path(path).resolve())
    return str(link)


# ----------------------------------------------------------------------------- streams

_SPARK_FORMATS = {"csv": "csv", "jsonl": "json", "parquet": "parquet"}


def _data_files(folder: Path) -> list[Path]:
    """The files of a stream's folder that Spark reads, in name order (Spark skips names
    that start with '.' or '_')."""
    return [
        f
        for f in sorted(folder.iterdir(), key=lambda p: p.name.lower())
        if f.is_file() and not f.name.startswith((".", "_"))
    ]


def source_format_of(path: Path, given: str | None) -> str:
    """csv, json or parquet: as given, else from the first file of the folder whose name
    the readers know (the rules of :func:`trendagg.io.formats.event_format`)."""
    from trendagg.io.formats import event_format

    if given:
        return _SPARK_FORMATS[event_format(path, given)]
    for file in _data_files(path):
        try:
            return _SPARK_FORMATS[event_format(file, None)]
        except InputError:
            continue
    raise InputError(
        f"cannot tell the format of the files in '{path}' (none ends in .csv, .jsonl, .json "
        f"or .parquet): pass --source-format csv|json|parquet"
    )


def check_source(
    source: str,
    read: ReadOptions | None = None,
    *,
    source_format: str | None = None,
    schema: str | None = None,
) -> None:
    """A stream's source checked on the driver before Spark starts: ``socket://HOST:PORT``
    written so; a folder that exists; its files' format (``source_format`` or their
    names); and with ``read``, the columns its events need: among the names of
    ``schema`` (Spark DDL, when given), else in the first file of the format (a CSV
    header, a Parquet footer, a JSON Lines file's lines up to an object with the keys:
    the local readers' checks and messages). A folder without files is a source yet
    to fill: for JSON Lines, or for CSV and Parquet with a ``schema``; without one
    their columns are unknown, and the message says what to pass."""
    from trendagg.io.formats import Input, is_gzip, name_format

    if source.startswith("socket://"):
        host, _, port = source.removeprefix("socket://").rpartition(":")
        if not host or not port.isdigit():
            raise InputError(f"a socket source is socket://HOST:PORT, not '{source}'")
        return
    if source.startswith("rate://"):
        return
    path = Path(source)
    if not path.exists():
        raise InputError(
            f"stream source '{source}' does not exist: give a folder that files arrive in "
            "(create it first), socket://HOST:PORT, or rate://"
        )
    if not path.is_dir():
        raise InputError(
            f"stream source '{source}' is not a directory: give a directory that files arrive "
            f"in, socket://HOST:PORT, or rate://"
        )
    files = _data_files(path)
    if source_format is None and not files:
        raise InputError(
            f"stream source '{source}' holds no files yet, so their format is unknown: pass "
            "--source-format json, or csv or parquet with their columns as --schema "
            "'type string, time double, ...'"
        )
    kind = source_format_of(path, source_format)
    if schema is not None:
        names = ddl_names(schema)
        if read is not None and names is not None:
            read.check_columns(names, f"--schema '{schema}'")
        return
    local = {v: k for k, v in _SPARK_FORMATS.items()}[kind]
    first = next((f for f in files if name_format(f) == local), files[0] if files else None)
    if first is None:
        if kind == "json":
            return
        name = "CSV" if kind == "csv" else "Parquet"
        raise InputError(
            f"no {name} files in '{source}' to take the columns from: pass --schema "
            f"'type string, time {'string' if kind == 'csv' else 'double'}, ...'"
        )
    if read is None:
        return
    file = Input(first, str(first), local, is_gzip(first))
    if kind == "csv":
        from trendagg.io.csv import header

        read.check_columns(header(file, None), str(first))
    elif kind == "parquet":
        from trendagg.io.parquet import parquet_schema

        read.check_columns(parquet_schema(first, str(first)).names, str(first))
    else:
        from trendagg.io.jsonl import check_keys

        check_keys(file, read)


def ddl_names(ddl: str) -> list[str] | None:
    """The column names of a schema in Spark DDL (``type string, `a b` int, c:double``),
    or None when it does not read as one (Spark says why when it parses it)."""
    parts: list[str] = []
    depth, quoted, part = 0, False, ""
    for ch in ddl:
        if ch == "`":
            quoted = not quoted
        elif not quoted and ch in "<(":
            depth += 1
        elif not quoted and ch in ">)":
            depth -= 1
        if ch == "," and not quoted and depth == 0:
            parts.append(part)
            part = ""
        else:
            part += ch
    parts.append(part)
    names = []
    for text in (p.strip() for p in parts):
        if text.startswith("`"):
            end = text.find("`", 1)
            name = text[1:end] if end > 0 else ""
        else:
            name = text.split()[0].split(":")[0] if text.split() else ""
        if not name or quoted or depth:
            return None
        names.append(name)
    return names


__all__ = [
    "CheckedInput",
    "check_csv",
    "check_input",
    "check_jsonl",
    "check_source",
    "ddl_names",
    "source_format_of",
]
