"""Parquet files and folders in chunks: record batches, typed columns.

A folder is one dataset: its Parquet files in name order, the hive partition
folders (``key=value``) adding a column. A chunk never spans two files, and its
rows are numbered within its file, which rejected rows name.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from trendagg.errors import InputError
from trendagg.io.assemble import assemble_table
from trendagg.io.batch import ReadResult
from trendagg.io.formats import Input, event_format
from trendagg.io.options import ReadOptions
from trendagg.io.values import shown

# Rows per row group of the Parquet event files the generator writes. Spark reads a
# Parquet file in splits of whole row groups: a file of one row group (pyarrow's
# default holds 1,048,576 rows) is read by one task however many cores there are.
ROW_GROUP = 100_000

if TYPE_CHECKING:
    import pyarrow as pa


def parquet_chunks(file: Input, options: ReadOptions, chunk_rows: int) -> Iterator[ReadResult]:
    """The events of a Parquet file or folder, in record batches of ``chunk_rows`` rows
    (a file without rows gives one empty chunk, its columns still checked)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    for path, keys in parquet_files(file.location, file.source):
        try:
            handle = pq.ParquetFile(path)
        except (pa.ArrowException, OSError, ValueError):
            whole = _with_keys(_read_table(path), keys)  # (read_table's message)
            for start in range(0, max(whole.num_rows, 1), chunk_rows):
                part = whole.slice(start, chunk_rows)
                yield assemble_table(part, options, source=path, csv=False, first_row=start + 1)
            continue
        row = 1
        for batch in handle.iter_batches(batch_size=chunk_rows):
            table = _with_keys(pa.Table.from_batches([batch]), keys)
            yield assemble_table(table, options, source=path, csv=False, first_row=row)
            row += batch.num_rows
        if row == 1:
            table = _with_keys(handle.schema_arrow.empty_table(), keys)
            yield assemble_table(table, options, source=path, csv=False)


def parquet_files(location: Path, source: str) -> list[tuple[str, dict[str, object]]]:
    """(path, hive partition keys) of a file, or of each file of a folder in name order."""
    if not location.is_dir():
        return [(source, {})]
    import pyarrow.dataset as ds

    return [
        (fragment.path, ds.get_partition_keys(fragment.partition_expression))
        for fragment in _fragments(location, source)[1]
    ]


def _fragments(location: Path, source: str) -> tuple[Any, list[Any]]:
    """A folder of Parquet files as a dataset and its files in name order, or InputError."""
    import pyarrow as pa
    import pyarrow.dataset as ds

    try:
        dataset = ds.dataset(str(location), format="parquet", partitioning="hive")
        fragments = sorted(dataset.get_fragments(), key=lambda fragment: fragment.path)
    except (pa.ArrowException, OSError, ValueError) as error:
        raise InputError(f"cannot read folder {source} as a Parquet dataset ({error})") from None
    if not fragments:
        raise InputError(
            f"folder {source} holds no Parquet files; pass a folder of .parquet files or one file"
        )
    return dataset, fragments


def _with_keys(table: pa.Table, keys: Mapping[str, object]) -> pa.Table:
    import pyarrow as pa

    for key, value in keys.items():
        if key not in table.column_names:
            table = table.append_column(key, pa.array([value] * table.num_rows))
    return table


def _read_table(path: str) -> pa.Table:
    import pyarrow as pa
    import pyarrow.parquet as pq

    try:
        return pq.read_table(path)
    except (pa.ArrowException, OSError, ValueError) as error:
        raise _not_parquet(path, error) from None


def _not_parquet(source: str, error: Exception) -> InputError:
    return InputError(
        f"cannot read {source} as Parquet ({error}); check that it is an intact Parquet "
        "file; if it holds CSV or JSON Lines, name it .csv or .jsonl (or in the Python API "
        "pass fmt='csv' or fmt='jsonl')"
    )


def parquet_schema(location: Path, source: str) -> Any:
    """The Arrow schema of a Parquet file or folder, refused as the reader refuses it (a
    file that is not Parquet, a folder without Parquet files): for readers that read the
    data elsewhere (Spark), so that they give the same verdict."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    if location.is_dir():
        return _fragments(location, source)[0].schema
    try:
        pq.read_table(str(location), columns=[])  # the footer, as read_table checks it
        return pq.read_schema(str(location))
    except (pa.ArrowException, OSError, ValueError) as error:
        raise _not_parquet(source, error) from None


def parquet_rows(location: Path, source: str) -> int:
    """How many rows a Parquet file or folder holds, by its metadata."""
    import pyarrow.parquet as pq

    files = [path for path, _ in parquet_files(location, source)]
    return sum(pq.ParquetFile(path).metadata.num_rows for path in files)


def decimal_warnings(path: str, attributes: set[str]) -> list[str]:
    """One warning per Parquet decimal column with a fractional scale that a query reads:
    its values are read as binary floats, so sums show float rounding, not decimal cents."""
    import pyarrow as pa
    import pyarrow.dataset as ds

    location = Path(path)
    if not location.exists() or event_format(location, None) != "parquet":
        return []
    try:
        schema = ds.dataset(path, format="parquet").schema
    except (pa.ArrowException, OSError, ValueError):
        return []  # the reader says what is wrong with the file
    return [
        f"warning: column '{shown(f.name)}' is {f.type}: its values are read as binary floats "
        f"(0.10 is 0.1000000000000000055...), so its sums show float rounding "
        f"(0.1 + 0.2 = 0.30000000000000004); for exact amounts store integers (cents)"
        for f in schema
        if pa.types.is_decimal(f.type) and f.type.scale > 0 and f.name in attributes
    ]
