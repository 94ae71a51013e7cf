"""Benchmark workloads: many queries sharing Travel+ over the rideshare stream (HAMLET, 5.1)."""

from __future__ import annotations

PREFIXES = ["Request", "Accept", "Pickup", "Wait", "Login", "Surge", "Traffic", "Reroute"]
SUFFIXES = ["Dropoff", "Pay", "Rate", "Tip", "Break", "Logout", "Complaint", "Inspect"]


def sharing_workload(
    k: int, window: str = "WITHIN 10 min SLIDE 5 min", predicates: bool = False
) -> str:
    """k queries with different patterns around the shared Kleene sub-pattern Travel+.

    Like HAMLET's first workload, they share the Kleene sub-pattern, window, grouping
    and aggregates and differ in their patterns. With ``predicates``, query i keeps
    only travel legs faster than a threshold of its own, so events are bound by some
    queries and not others (event-level snapshots, HAMLET Def. 3.11).
    """
    shapes = []
    for p in PREFIXES:
        shapes.append(f"SEQ({p} P, Travel T+)")
    for s in SUFFIXES:
        shapes.append(f"SEQ(Travel T+, {s} S)")
    for p in PREFIXES:
        for s in SUFFIXES:
            shapes.append(f"SEQ({p} P, Travel T+, {s} S)")
    if k > len(shapes):
        raise ValueError(f"at most {len(shapes)} queries")
    lines = []
    for i in range(k):
        where = "[driver]"
        if predicates:
            where += f" AND T.speed > {10 + 5 * (i % 8)}"
        lines.append(
            f"q{i + 1}: RETURN COUNT(*), SUM(T.duration) PATTERN {shapes[i]} WHERE {where} {window};"
        )
    return "\n".join(lines)


def axis_workload(
    k: int,
    *,
    windows: tuple[str, ...] = ("WITHIN 10 min SLIDE 5 min",),
    predicate: str = "none",
    group: str = "none",
    variant: str = "none",
) -> str:
    """k queries of :func:`sharing_workload`'s patterns, varied along one axis at a time.

    ``windows``: the window clauses, query i taking the (i mod len)-th. ``predicate``:
    ``none``, ``numeric`` (``T.speed`` above a threshold of the query's own) or
    ``string`` (``T.zone`` different from a word of the query's own). ``group``:
    ``none``, ``district`` (unqualified: the partition is driver and district) or
    ``T.district`` (qualified: the district of the travel legs only). ``variant``:
    ``next`` or ``not`` turns every third query into one with the edge predicate
    ``T.speed < NEXT(T).speed`` or a ``NOT Accident`` between its first event and the
    travel legs (queries without a first event get one: Request).
    """
    base = sharing_workload(k).splitlines()
    lines = []
    for i, line in enumerate(base):
        pattern = line[line.index("PATTERN ") + 8 : line.index(" WHERE")]
        where = "[driver]"
        if predicate == "numeric":
            where += f" AND T.speed > {10 + 5 * (i % 8)}"
        elif predicate == "string":
            where += f" AND T.zone != 'z{i % 8}'"
        elif predicate != "none":
            raise ValueError(f"unknown predicate kind {predicate!r}")
        if variant not in ("none", "next", "not"):
            raise ValueError(f"unknown variant {variant!r}")
        if variant == "next" and i % 3 == 2:
            where += " AND T.speed < NEXT(T).speed"
        elif variant == "not" and i % 3 == 2:
            if pattern.startswith("SEQ(Travel"):
                pattern = pattern.replace(
                    "SEQ(Travel T+", "SEQ(Request R, NOT Accident C, Travel T+"
                )
            else:
                pattern = pattern.replace(" P, Travel T+", " P, NOT Accident C, Travel T+")
        grouping = "" if group == "none" else f" GROUP-BY {group}"
        returned = "" if group == "none" else f"{group}, "
        lines.append(
            f"q{i + 1}: RETURN {returned}COUNT(*), SUM(T.duration) PATTERN {pattern} "
            f"WHERE {where}{grouping} {windows[i % len(windows)]};"
        )
    return "\n".join(lines)


VARIED_WINDOWS = (
    "WITHIN 10 min SLIDE 1 min",
    "WITHIN 15 min SLIDE 1 min",
    "WITHIN 20 min SLIDE 5 min",
    "WITHIN 10 min SLIDE 5 min",
)


def varied_workload(k: int, variant: str = "none") -> str:
    """k queries of :func:`sharing_workload`'s patterns as a user would vary them (issue
    #15's headline): four window specs (query i takes the (i mod 4)-th of
    :data:`VARIED_WINDOWS`), a speed threshold and a zone of its own per query
    (``T.speed > ..`` and ``T.zone != 'z..'``), ``GROUP-BY T.district`` (qualified:
    the travel legs' district). ``variant``: ``none``; ``not`` (every third query
    with ``NOT Accident`` before its travel legs); ``next-not`` (every third query,
    alternately with ``T.speed < NEXT(T).speed`` and with the NOT).
    """
    if variant not in ("none", "not", "next-not"):
        raise ValueError(f"unknown variant {variant!r}")
    lines = []
    for i, line in enumerate(sharing_workload(k).splitlines()):
        pattern = line[line.index("PATTERN ") + 8 : line.index(" WHERE")]
        where = f"[driver] AND T.speed > {10 + 5 * (i % 8)} AND T.zone != 'z{(3 * i) % 8}'"
        third = i % 3 == 2
        if third and (variant == "not" or (variant == "next-not" and i % 6 == 5)):
            if pattern.startswith("SEQ(Travel"):
                pattern = pattern.replace(
                    "SEQ(Travel T+", "SEQ(Request R, NOT Accident C, Travel T+"
                )
            else:
                pattern = pattern.replace(" P, Travel T+", " P, NOT Accident C, Travel T+")
        elif third and variant == "next-not":
            where += " AND T.speed < NEXT(T).speed"
        lines.append(
            f"q{i + 1}: RETURN T.district, COUNT(*), SUM(T.duration) PATTERN {pattern} "
            f"WHERE {where} GROUP-BY T.district {VARIED_WINDOWS[i % len(VARIED_WINDOWS)]};"
        )
    return "\n".join(lines)


def sequence_workload(
    k: int,
    length: int = 4,
    *,
    chunk: int = 2,
    chunks: int = 16,
    items: int = 50,
    window: str = "WITHIN 1 min SLIDE 30 s",
    seed: int = 3,
) -> str:
    """k fixed-length SEQ queries over the ecommerce stream (SHARON, section 8.1): each an
    entry point (Login, Search or Ad) followed by ``length - 1`` items, made of chunks of
    ``chunk`` items drawn from a pool of ``chunks`` (disjoint item types, so a type is in
    a query once). Queries share chunks and runs of chunks in their middles and ends,
    after entry points rarer than any item: few START groups open per window."""
    import random

    rng = random.Random(seed)
    names = [f"Item{i + 1:02d}" for i in range(items)]  # (the generator's item types)
    rng.shuffle(names)
    parts = (length - 1 + chunk - 1) // chunk
    if chunks * chunk > items or parts > chunks:
        raise ValueError("the items run out: fewer chunks, or shorter ones")
    pool = [names[i * chunk : (i + 1) * chunk] for i in range(chunks)]
    seen: set[str] = set()
    lines = []
    misses = 0
    while len(lines) < k:
        entry = rng.choice(["Login", "Search", "Ad"])
        path = [t for c in rng.sample(pool, parts) for t in c][: length - 1]
        shape = f"SEQ({entry} E, " + ", ".join(f"{t} I{j + 1}" for j, t in enumerate(path)) + ")"
        if shape in seen and misses < 200:  # (distinct shapes while there are any left)
            misses += 1
            continue
        misses = 0
        seen.add(shape)
        lines.append(
            f"q{len(lines) + 1}: RETURN COUNT(*) PATTERN {shape} WHERE [customer] {window};"
        )
    return "\n".join(lines)
