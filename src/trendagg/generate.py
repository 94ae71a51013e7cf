"""Seeded event stream generators, so examples and benchmarks run on any machine.

``rideshare`` follows the ride-sharing scenario of HAMLET (Section 5.1):
drivers serve trips (Request, Accept, Pickup, a run of Travel legs, Dropoff,
Pay, sometimes Rate and Tip, sometimes a Cancel instead), among background
events of about a dozen other types. Every event carries the driver, and trip
events the rider and district; Travel legs carry duration and speed, Dropoff
and Pay a price.
"""

from __future__ import annotations

import csv
import json
import random
import sys
from collections.abc import Iterable, Iterator, Sequence
from contextlib import nullcontext
from pathlib import Path
from typing import TextIO

TRIP_TYPES = ("Request", "Accept", "Pickup", "Travel", "Dropoff", "Pay", "Rate", "Tip", "Cancel")
BACKGROUND_TYPES = (
    "Login",
    "Logout",
    "Break",
    "Refuel",
    "Surge",
    "Traffic",
    "Accident",
    "Reroute",
    "Wait",
    "Complaint",
    "Inspect",
)
EVENT_TYPES = TRIP_TYPES + BACKGROUND_TYPES


def _trip(
    rng: random.Random, driver: int, rider: int, district: int, max_legs: int
) -> Iterator[dict[str, object]]:
    base = {"driver": driver, "rider": rider, "district": district}
    yield {"type": "Request", **base}
    if rng.random() < 0.1:
        yield {"type": "Cancel", **base}
        return
    yield {"type": "Accept", **base}
    yield {"type": "Pickup", **base}
    speed = rng.randint(15, 70)
    for _ in range(rng.randint(1, max_legs)):
        speed = max(5, min(120, speed + rng.randint(-15, 15)))
        yield {"type": "Travel", **base, "duration": rng.randint(20, 240), "speed": speed}
    price = round(rng.uniform(5, 60), 2)
    yield {"type": "Dropoff", **base, "price": price}
    yield {"type": "Pay", **base, "price": price}
    if rng.random() < 0.5:
        yield {"type": "Rate", **base, "stars": rng.randint(1, 5)}
    if rng.random() < 0.2:
        yield {"type": "Tip", **base, "price": round(rng.uniform(1, 10), 2)}


def rideshare(
    events: int = 10_000,
    *,
    seed: int = 7,
    drivers: int = 50,
    districts: int = 8,
    events_per_minute: int = 600,
    max_legs: int = 8,
    background: float = 0.2,
    start: int = 0,
) -> Iterator[dict[str, object]]:
    """Yield ``events`` ride-sharing events in time order (integer epoch seconds).

    ``events_per_minute`` sets the rate: several events share a second when it
    exceeds 60, as in real streams. ``background`` is the share of non-trip events.
    """
    if events < 0 or drivers < 1 or districts < 1 or events_per_minute < 1 or max_legs < 1:
        raise ValueError("events >= 0, drivers, districts, events_per_minute and max_legs >= 1")
    rng = random.Random(seed)
    trips: dict[int, Iterator[dict[str, object]]] = {}
    rider = 0
    for i in range(events):
        time = start + (i * 60) // events_per_minute
        driver = rng.randrange(drivers)
        if rng.random() < background:
            yield {
                "type": rng.choice(BACKGROUND_TYPES),
                "time": time,
                "driver": driver,
                "district": rng.randrange(districts),
            }
            continue
        while True:
            it = trips.get(driver)
            if it is None:
                rider += 1
                it = trips[driver] = _trip(rng, driver, rider, rng.randrange(districts), max_legs)
            event = next(it, None)
            if event is not None:
                yield {"type": event.pop("type"), "time": time, **event}
                break
            del trips[driver]


RIDESHARE_COLUMNS = (
    "type",
    "time",
    "driver",
    "rider",
    "district",
    "duration",
    "speed",
    "price",
    "stars",
)


def write_stream(
    records: Iterable[dict[str, object]],
    path: str | None,
    *,
    columns: Sequence[str] = RIDESHARE_COLUMNS,
    stream: TextIO | None = None,
) -> int:
    """Write generated events as JSON Lines (default, and on ``stream`` when no path),
    CSV (``.csv``) or Parquet (``.parquet``); return how many were written."""
    suffix = Path(path).suffix.lower() if path else ".jsonl"
    if suffix == ".parquet":
        import pyarrow as pa
        import pyarrow.parquet as pq

        from trendagg.io.parquet import ROW_GROUP

        rows = list(records)
        table = pa.Table.from_pylist([{c: r.get(c) for c in columns} for r in rows])
        pq.write_table(table, path, row_group_size=ROW_GROUP)  # (Spark reads splits at once)
        return len(rows)
    n = 0
    with (
        open(path, "w", encoding="utf-8", newline="") if path else nullcontext(stream or sys.stdout)
    ) as out:
        if suffix == ".csv":
            writer = csv.DictWriter(out, fieldnames=list(columns), extrasaction="raise")
            writer.writeheader()
            for r in records:
                writer.writerow(r)
                n += 1
        else:
            for r in records:
                out.write(json.dumps(r) + "\n")
                n += 1
    return n
