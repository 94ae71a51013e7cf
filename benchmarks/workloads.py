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


def funnel_workload(
    k: int,
    *,
    chunks: int = 7,
    chunk: int = 4,
    items: int = 28,
    window: str = "WITHIN 10 min SLIDE 5 min",
    seed: int = 3,
) -> str:
    """k funnel queries over the ecommerce stream: how a customer came in (a sequence of
    one to three distinct entry points, Login, Search, Ad: 15 such paths) and then the
    ``chunk`` items of one of ``chunks`` item paths (disjoint item types, drawn from
    ``items``). The queries that end their entry path alike and view the same items
    share that sub-sequence (SHARON's case where it pays: its START, an entry point, is
    rare, so a window opens few START groups); the item paths alone are shared by more
    queries, with a START group per entry that changes a prefix."""
    import itertools
    import random

    rng = random.Random(seed)
    names = [f"Item{i + 1:02d}" for i in range(items)]
    rng.shuffle(names)
    if chunks * chunk > items:
        raise ValueError("the items run out: fewer chunks, or shorter ones")
    paths = [names[i * chunk : (i + 1) * chunk] for i in range(chunks)]
    entries = [p for m in (1, 2, 3) for p in itertools.permutations(["Login", "Search", "Ad"], m)]
    shapes = [(e, c) for e in entries for c in range(chunks)]
    if k > len(shapes):
        raise ValueError(f"{len(shapes)} funnels at most: more chunks")
    rng.shuffle(shapes)
    lines = []
    for i, (entry, c) in enumerate(shapes[:k]):
        parts = [f"{t} E{j + 1}" for j, t in enumerate(entry)]
        parts += [f"{t} I{j + 1}" for j, t in enumerate(paths[c])]
        lines.append(
            f"q{i + 1}: RETURN COUNT(*) PATTERN SEQ({', '.join(parts)}) WHERE [customer] {window};"
        )
    return "\n".join(lines)


GLORIA_WINDOWS = (
    "WITHIN 5 min SLIDE 5 min",
    "WITHIN 10 min SLIDE 5 min",
    "WITHIN 15 min SLIDE 5 min",
    "WITHIN 20 min SLIDE 5 min",
)


def gloria_mixed_workload(
    k: int,
    types: list[str],
    *,
    value: str,
    threshold: int,
    partition: str = "",
    windows: tuple[str, ...] = GLORIA_WINDOWS,
    kleene_share: float = 1 / 7,
    group: int = 10,
    seed: int = 5,
) -> str:
    """k queries of GLORIA's mixed workload (section 8.1; the authors' shapes, spec
    section 5), SEQ and Kleene queries ``1 - kleene_share : kleene_share``, over the
    event types ``types`` (at least 8), each event carrying the integer ``value``.

    SEQ queries, in groups of ``group``, share a four-type core: ``SEQ(F, K1, K2, K3,
    K4, L)`` with a first and last type of their own; Kleene queries, in groups too,
    share a two-type Kleene unit first: ``SEQ(SEQ(K1, K2)+, S, L)``. A group has one
    window (of ``windows``, in turn) and one predicate on K1 (``K1.value > threshold``
    for every other group), so its queries may share; queries differ in aggregates
    (COUNT(*) for 40% of the groups, else SUM or MAX of ``value`` on K1, AVG of K2),
    which never stops sharing. ``partition``: the WHERE clause's ``[attr]``, or none.
    """
    import random

    rng = random.Random(seed)
    kleene = round(k * kleene_share)
    lines = []
    for i in range(k):
        is_kleene = i >= k - kleene
        j = i - (k - kleene) if is_kleene else i
        g = j // group
        grng = random.Random(seed * 1000 + g + (500 if is_kleene else 0))
        core = grng.sample(types, 2 if is_kleene else 4)
        first, last = rng.sample([t for t in types if t not in core], 2)
        if g % 5 < 2:
            returned = "COUNT(*)"
        else:
            returned = ("COUNT(*), SUM(K1.{v})", "MAX(K1.{v})", "COUNT(*), AVG(K2.{v})")[i % 3]
        returned = returned.format(v=value)
        where = [partition] if partition else []
        if g % 2:
            where.append(f"K1.{value} > {threshold}")
        where_text = f" WHERE {' AND '.join(where)}" if where else ""
        if is_kleene:
            pattern = f"SEQ(SEQ({core[0]} K1, {core[1]} K2)+, {first} S, {last} L)"
            name = f"k{j + 1}"
        else:
            pattern = (
                f"SEQ({first} F, "
                + ", ".join(f"{t} K{n + 1}" for n, t in enumerate(core))
                + f", {last} L)"
            )
            name = f"s{j + 1}"
        window = windows[g % len(windows)]
        lines.append(f"{name}: RETURN {returned} PATTERN {pattern}{where_text} {window};")
    return "\n".join(lines)


BURST_ENDS = ("Request", "Accept", "Pickup", "Login", "Surge", "Wait")
BURST_LAST = ("Dropoff", "Pay", "Rate", "Logout", "Break", "Inspect")


def gloria_burst_workload(k: int, kind: str, window: str = "WITHIN 10 min SLIDE 5 min") -> str:
    """GLORIA's Fig. 19 workloads over the rideshare stream, whose Travel legs come in
    bursts per driver (``max_legs``). ``simple``: ``SEQ(A, Travel T+, C)`` with a
    first and last type per query and the same predicates (HAMLET's case: one shared
    Kleene type). ``complex``: a multi-type Kleene unit, ``SEQ(A, SEQ(Travel T,
    Traffic X)+, C)`` (HAMLET shares no ``SEQ(..)+``), with a price threshold of the
    query's own on its last event (a predicate that leaves the unit shared)."""
    if kind not in ("simple", "complex"):
        raise ValueError(f"unknown kind {kind!r}")
    lines = []
    for i in range(k):
        first, last = BURST_ENDS[i % 6], BURST_LAST[(i // 6) % 6]
        where = "[driver]"
        if kind == "simple":
            pattern = f"SEQ({first} A, Travel T+, {last} C)"
        else:
            pattern = f"SEQ({first} A, SEQ(Travel T, Traffic X)+, {last} C)"
            where += f" AND C.district > {i % 4}"
        lines.append(
            f"q{i + 1}: RETURN COUNT(*), SUM(T.duration) PATTERN {pattern} WHERE {where} {window};"
        )
    return "\n".join(lines)
