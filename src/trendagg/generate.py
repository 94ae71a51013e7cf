"""Seeded event stream generators, so examples and benchmarks run on any machine.

``rideshare`` follows the ride-sharing scenario of HAMLET (Section 5.1):
drivers serve trips (Request, Accept, Pickup, a run of Travel legs, Dropoff,
Pay, sometimes Rate and Tip, sometimes a Cancel instead), among background
events of about a dozen other types. Every event carries the driver, and trip
events the rider and district; Travel legs carry duration and speed, Dropoff
and Pay a price.

``ecommerce`` and ``traffic`` are the streams of SHARON's experiments (section 8.1):
customers viewing items after an entry point (a login, a search, an ad), and
vehicles driving from street to street.
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


ENTRY_TYPES = ("Login", "Search", "Ad")
ECOMMERCE_COLUMNS = ("type", "time", "customer", "price")


def item_type(k: int) -> str:
    """The event type of item k (0-based): Item01, Item02, ..."""
    return f"Item{k + 1:02d}"


def ecommerce(
    events: int = 10_000,
    *,
    seed: int = 7,
    customers: int = 20,
    items: int = 50,
    entry_share: float = 0.05,
    events_per_minute: int = 600,
    start: int = 0,
) -> Iterator[dict[str, object]]:
    """Yield ``events`` e-commerce events in time order (integer epoch seconds), as in
    SHARON's EC stream: each of ``customers`` views items (``items`` types, Item01 ...,
    uniformly, each with its price), and a share ``entry_share`` of the events are entry
    points (Login, Search or Ad), rarer than any item. Every event carries its customer."""
    if events < 0 or customers < 1 or items < 1 or events_per_minute < 1:
        raise ValueError("events >= 0, customers, items and events_per_minute >= 1")
    if not 0 <= entry_share <= 1:
        raise ValueError("entry_share is a share: between 0 and 1")
    rng = random.Random(seed)
    prices = [round(rng.uniform(2, 200), 2) for _ in range(items)]
    for i in range(events):
        time = start + (i * 60) // events_per_minute
        customer = rng.randrange(customers)
        if rng.random() < entry_share:
            yield {"type": rng.choice(ENTRY_TYPES), "time": time, "customer": customer}
            continue
        k = rng.randrange(items)
        yield {"type": item_type(k), "time": time, "customer": customer, "price": prices[k]}


STREET_NAMES = (
    "Oak", "Main", "State", "West", "Park", "Elm", "Lake", "Pine", "Cedar", "Maple",
    "Hill", "River", "Bay", "Market", "Union", "Church", "Mill", "Spring", "Grove", "Bridge",
)  # fmt: skip
TRAFFIC_COLUMNS = ("type", "time", "vehicle", "speed")


def traffic(
    events: int = 10_000,
    *,
    seed: int = 7,
    vehicles: int = 50,
    streets: int = 20,
    turns: int = 3,
    events_per_minute: int = 600,
    start: int = 0,
) -> Iterator[dict[str, object]]:
    """Yield ``events`` traffic events in time order (integer epoch seconds), as in
    SHARON's traffic scenario: ``vehicles`` drive on a street map (``streets`` streets,
    each leading to ``turns`` others, fixed by the seed); each event is a vehicle
    entering a street (its type: OakSt, MainSt, ...) at a speed. Routes repeat where
    streets lead to few others, so that route queries share sub-sequences."""
    if events < 0 or vehicles < 1 or turns < 1 or events_per_minute < 1:
        raise ValueError("events >= 0, vehicles, turns and events_per_minute >= 1")
    if not 2 <= streets <= len(STREET_NAMES):
        raise ValueError(f"streets: between 2 and {len(STREET_NAMES)}")
    rng = random.Random(seed)
    names = [f"{n}St" for n in STREET_NAMES[:streets]]
    leads = [
        rng.sample([j for j in range(streets) if j != i], min(turns, streets - 1))
        for i in range(streets)
    ]
    at = [rng.randrange(streets) for _ in range(vehicles)]
    speed = [rng.randint(20, 60) for _ in range(vehicles)]
    for i in range(events):
        time = start + (i * 60) // events_per_minute
        v = rng.randrange(vehicles)
        at[v] = rng.choice(leads[at[v]])
        speed[v] = max(5, min(90, speed[v] + rng.randint(-10, 10)))
        yield {"type": names[at[v]], "time": time, "vehicle": v, "speed": speed[v]}


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
