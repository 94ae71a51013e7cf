"""KeysSeen, the summary's partitions: the distinct keys of each query group, counted
from the events (bitmap, sort and row paths alike), as a set of Python values counts."""

from __future__ import annotations

import random

import pytest

from trendagg.io import from_records
from trendagg.language import parse
from trendagg.plan.compile import compile_workload
from trendagg.plan.routing import KeysSeen

QUERIES = """
a: RETURN COUNT(*) PATTERN SEQ(A, B+) WHERE [g, h] WITHIN 10 s;
b: RETURN COUNT(*) PATTERN SEQ(A, B) WHERE [g] WITHIN 10 s;
c: RETURN COUNT(*) PATTERN SEQ(A, C) WITHIN 10 s;
"""


@pytest.mark.parametrize(
    "make",
    [
        lambda r: r.randrange(5),  # a narrow range of ints: offsets, a bitmap
        lambda r: r.randrange(-(2**62), 2**62),  # a wide one: sorted
        lambda r: r.choice(["x", "y", "zz", "1"]),  # text: its dictionary's codes
        lambda r: r.choice([0.5, 1.5, 2.0]),  # floats
        lambda r: r.choice([1, 1.0, "1", 2]),  # mixed: 1 and 1.0 are one key
    ],
)
def test_keys_seen_counts_what_a_set_counts(make: object) -> None:
    rng = random.Random(7)
    records = []
    for t in range(400):
        record: dict[str, object] = {"type": rng.choice("ABC"), "time": t}
        for name in ("g", "h"):
            if rng.random() < 0.9:  # some events lack a key: in no partition
                record[name] = make(rng)  # type: ignore[operator]
        records.append(record)
    keys = KeysSeen(compile_workload(parse(QUERIES)))
    for start in (0, 150, 300):  # chunks: keys seen in one are not counted again
        keys.add(from_records(records[start : start + 150]).events)
    gh = {(r["g"], r["h"]) for r in records if r["type"] in "AB" and "g" in r and "h" in r}
    g = {r["g"] for r in records if r["type"] in "AB" and "g" in r}
    assert keys.count == len(gh) + len(g) + 1  # c: no key attributes, one partition
