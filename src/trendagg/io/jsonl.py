"""JSON Lines files in chunks: one object per line, integers of any size exactly.

Each line goes straight to the C scanner of :mod:`json`; only a line it refuses
goes through ``json.loads`` again, for the message (or for integers longer than
the interpreter's digit limit). Lines that are not JSON (or not UTF-8), or whose
object names a key twice (:func:`may_repeat` says which lines to check), are
rejected rows; the row number is the physical line number, blank lines
included. The objects of each chunk become events by
:func:`~trendagg.io.assemble.from_mappings`.
"""

from __future__ import annotations

import gc
import itertools
import json
from collections.abc import Iterator
from contextlib import contextmanager
from typing import IO, Any

from trendagg.errors import InputError
from trendagg.io.assemble import from_mappings
from trendagg.io.batch import ReadResult, RejectedRow
from trendagg.io.formats import Input, open_binary
from trendagg.io.options import ReadOptions
from trendagg.io.values import exact_int, shown

JSON_BLANKS = " \t\r\n"  # the whitespace JSON allows around a value
# (line, value) pairs, the text of each of those lines, rejected lines
_Chunk = tuple[list[tuple[int, object]], list[str], list[RejectedRow]]
_NOTHING, _SKIP = object(), object()


def jsonl_chunks(file: Input, options: ReadOptions, chunk_rows: int) -> Iterator[ReadResult]:
    """The events of a JSON Lines file in chunks of ``chunk_rows`` lines.

    The columns are the keys of the whole file: a chunk whose objects lack the type
    or time key waits until an object has it (its rows are then rejected one by
    one); when none has it, the file is refused naming every key.
    """
    seen: dict[str, None] = {}  # the keys so far, in first-appearance order
    held: list[_Chunk] = []
    yielded = False
    try:
        with open_binary(file.location, file.gzipped) as handle:
            chunks = _lines(handle, file.source, chunk_rows)
            while True:
                with _gc_paused():  # (a chunk's objects are freed before it ends)
                    chunk = next(chunks, None)
                    if chunk is None:
                        if held:  # no object has the column
                            options.check_columns(seen, file.source)
                        parts: list[_Chunk] = [] if yielded else [([], [], [])]
                    elif _waits(options, seen, chunk, held):
                        held.append(chunk)
                        continue
                    else:
                        parts, held = [*held, chunk], []
                    ready = [_events(part, file, options, seen) for part in parts]
                yield from ready
                yielded = yielded or bool(ready)
                if chunk is None:
                    return
    except (OSError, EOFError) as error:
        raise InputError(f"cannot read {file.source} ({error}); check the file") from None


def check_keys(file: Input, options: ReadOptions, chunk_rows: int = 1000) -> None:
    """Refuse a JSON Lines file as :func:`jsonl_chunks` refuses it once it has read the
    whole file (one JSON array; objects none of which has the type or time key), reading
    only up to the first object that has them (the first line, as a rule): for readers
    that read the data elsewhere (Spark) and check first."""
    seen: dict[str, None] = {}
    waiting: list[_Chunk] = []  # (one chunk at most: _waits asks whether any waits)
    try:
        with open_binary(file.location, file.gzipped) as handle:
            for chunk in _lines(handle, file.source, chunk_rows):
                if not _waits(options, seen, chunk, waiting):
                    return
                waiting[:] = [chunk]
    except (OSError, EOFError) as error:
        raise InputError(f"cannot read {file.source} ({error}); check the file") from None
    if waiting:  # no object has the column
        options.check_columns(seen, file.source)


def _waits(options: ReadOptions, seen: dict[str, None], chunk: _Chunk, held: list[_Chunk]) -> bool:
    """Whether a chunk waits: no object so far has a needed key (``seen`` takes the keys
    of this chunk's objects until one has)."""
    needed = options.needed()
    if needed <= seen.keys():
        return False
    objects = False
    for _, value in chunk[0]:
        if isinstance(value, dict):
            objects = True
            seen.update(dict.fromkeys(value))
            if needed <= seen.keys():
                return False
    return objects or bool(held)


def _events(chunk: _Chunk, file: Input, options: ReadOptions, seen: dict[str, None]) -> ReadResult:
    numbered, texts, rejected = chunk
    return from_mappings(
        numbered, options, source=file.source, what="line", rejected=rejected,
        parsed_json=True, known=seen, texts=texts,
    )  # fmt: skip


@contextmanager
def _gc_paused() -> Iterator[None]:
    """Pause the cyclic garbage collector while many dicts are built.

    Parsed JSON objects hold no cycles, yet each allocation batch triggers a
    collection pass over all of them; pausing saves about a third of the time.
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def _lines(handle: IO[bytes], source: str, count: int) -> Iterator[_Chunk]:
    """The (line number, value) pairs, their lines' texts (for the rows rejected later:
    see RejectedRow.text) and the rejected lines (not JSON, not UTF-8) of each ``count``
    lines that hold something. Each line goes to the C scanner of :mod:`json`; what it
    refuses, and the first line, to :func:`_line`."""
    decoder: Any = json.JSONDecoder()
    scan = decoder.scan_once  # the C scanner, without json.loads' Python layers
    number = 0
    first = True  # (until a line holds a value)
    while True:
        parsed: list[tuple[int, object]] = []
        texts: list[str] = []
        rejected: list[RejectedRow] = []
        start = number
        for line in itertools.islice(handle, count):
            number += 1
            try:
                text = line.decode("utf-8").strip(JSON_BLANKS)
                value, end = scan(text, 0)
                if end != len(text) or first:
                    raise ValueError(text)
                if type(value) is dict and (  # may_repeat inlined: a call a line costs 2%
                    text.count('":') != len(value) or '" ' in text or '"\t' in text
                ):
                    raise ValueError(text)
            except (StopIteration, ValueError, RecursionError):
                value = _line(line, number, first, source, rejected)
                first = first and value is _SKIP
                if value is _SKIP or value is _NOTHING:
                    continue
                text = line.decode("utf-8").removeprefix("\ufeff").strip(JSON_BLANKS)
            parsed.append((number, value))
            texts.append(text)
        if number == start:
            return
        if parsed or rejected:
            yield parsed, texts, rejected


def _line(
    line: bytes, number: int, first: bool, source: str, rejected: list[RejectedRow]
) -> object:
    """The value of a line; _NOTHING for a line rejected (added to ``rejected`` with the
    reason), _SKIP for a blank one or one not UTF-8 (rejected too). The first line with
    a value must not open an array (the file would be one JSON array)."""
    if number == 1 and line.startswith(b"\xef\xbb\xbf"):
        line = line[3:]
    try:
        decoded = line.decode("utf-8")
    except UnicodeDecodeError as error:
        reason = (
            f"line is not UTF-8 text (byte 0x{line[error.start]:02x} at column {error.start + 1})"
        )
        raw = line.decode("utf-8", "backslashreplace").rstrip("\r\n")
        rejected.append(RejectedRow(source, number, reason, {"_text": raw}))
        return _SKIP
    text = decoded.strip(JSON_BLANKS)
    if not text:
        return _SKIP
    if first:
        refuse_json_array(text, source)
    try:
        return parse_json_line(decoded)
    except ValueError as error:
        rejected.append(RejectedRow(source, number, str(error), {"_text": decoded.rstrip("\r\n")}))
        return _NOTHING


def refuse_json_array(first_line: str, source: str) -> None:
    """Refuse a file whose first value starts with '[': one JSON array, not JSON Lines."""
    if first_line.startswith("["):
        raise InputError(
            f"{source} starts with '[': it looks like one JSON array, not JSON Lines; "
            f"write one object per line (for example: jq -c '.[]' {source} > events.jsonl)"
        )


def may_repeat(text: str, value: dict[str, object]) -> bool:
    """Whether the JSON object ``text`` (parsed as ``value``) may name a key twice.

    A cheap test that a line of distinct keys almost always passes: when no closing
    quote is followed by a space or a tab, every key of every object is written
    ``"key":``, so the line holds at least as many ``":`` as it has keys; as many as
    ``value`` has keys means that no key is repeated (nor any object nested). Only the
    lines it cannot clear are parsed again, by :func:`parse_json_line`, which checks
    each object. (A carriage return between a key and its colon is not looked for: each
    ``in`` costs 3% of the reader's time, and no writer puts one there.)
    """
    return text.count('":') != len(value) or '" ' in text or '"\t' in text


class _RepeatedKey(ValueError):
    """An object names a key twice (JSON allows it; the last would win silently)."""


def _unique_keys(pairs: list[tuple[str, object]]) -> dict[str, object]:
    """An object's pairs as a dict, or _RepeatedKey naming a key that appears twice."""
    value = dict(pairs)
    if len(value) != len(pairs):
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise _RepeatedKey(
                    f"key '{shown(key)}' appears twice in one object; keep one (JSON readers "
                    "differ on which one counts)"
                )
            seen.add(key)
    return value


def parse_json_line(line: str) -> object:
    """One line of JSON Lines, read as the JSON Lines reader reads it (integers of any size
    exactly); raises ``ValueError`` with the reason (and column) when it is not JSON or
    an object in it names a key twice."""
    text = line.strip(JSON_BLANKS)
    try:
        try:
            value = json.loads(text)
        except json.JSONDecodeError:
            raise
        except ValueError:  # more digits than int() accepts by default: parse them exactly
            value = json.loads(text, parse_int=exact_int)
        if type(value) is dict and may_repeat(text, value):
            json.loads(text, parse_int=exact_int, object_pairs_hook=_unique_keys)
        return value
    except _RepeatedKey:
        raise
    except json.JSONDecodeError as error:
        indent = len(line) - len(line.lstrip(JSON_BLANKS))
        raise ValueError(f"invalid JSON at column {error.colno + indent}: {error.msg}") from None
    except RecursionError:
        raise ValueError(
            "invalid JSON: nested deeper than the JSON parser goes (about 1,000 levels of "
            "objects and arrays); flatten the line"
        ) from None
    except ValueError as error:
        raise ValueError(f"invalid JSON: {error}") from None
