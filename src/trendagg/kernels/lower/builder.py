"""What the lowering's passes share: the :class:`Builder` they take and fill, the
descriptions of filters, partitionings and readouts the Python side keeps, and the
helpers every pass lays its tables out with (:func:`csr`, :func:`i64`, :func:`blocks`)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import TYPE_CHECKING

import numpy as np

from trendagg.kernels.edges import Program as Program_
from trendagg.kernels.edges import Words
from trendagg.language import ast, to_text
from trendagg.optimizer.plan import GloriaQSet, KleeneBurst
from trendagg.plan.compile import QueryPlan
from trendagg.plan.windows import WindowSpec

if TYPE_CHECKING:
    from trendagg.kernels.lower.snapshots import GloriaLowered

# the per-query fields of a negative query's link to its parent (see negation)
NEGATION_FIELDS = ["q_nkind", "q_nparent", "q_nnt", "q_blk", "q_trail"]
QUERY_FIELDS = [
    *NEGATION_FIELDS,
    "q_spec",
    "q_part",
    "q_S",
    "q_A",
    "q_M",
    "q_nmin",
    "q_NS",
    "q_start",
    "q_end",
    "q_gsel",
    "q_grouping",
    "q_soff",
]


@dataclass
class Filter:
    """The binding rule of a variable: its type, required attributes, local predicates."""

    type_: str
    required: tuple[str, ...]
    predicates: tuple[object, ...]  # LocalPredicate objects
    key: tuple[object, ...]


@dataclass
class Partitioning:
    """Partition instances of the queries of one layout
    (:func:`~trendagg.optimizer.plan.partition_layout`).

    With qualified attributes (``qualified``: the type of the variable they apply
    to, and the positions of the unqualified ones), there are two ``levels`` of
    instances: of the unqualified attributes (templates: their keys have
    :data:`~trendagg.kernels.runtime.instances.WILD` at the qualified positions) and of all.
    An event of any other type (a wildcard for the qualified attributes) is
    processed in the template of its key and in every instance that agrees with it;
    a new instance starts as a copy of its template, which has seen every event that
    the new one would have (see :mod:`~trendagg.kernels.runtime.executor`).
    """

    attrs: tuple[str, ...]  # sorted partition attribute names
    qualified: tuple[object, ...] = ()  # () or (type, positions of unqualified attributes)
    queries: list[int] = field(default_factory=list)
    groupings: list[tuple[int, ...]] = field(default_factory=list)  # positions into attrs

    @property
    def levels(self) -> list[tuple[int, ...]]:
        """The position sets of the instances' keys, nested; the last one is every position."""
        full = tuple(range(len(self.attrs)))
        return [self.qualified[1], full] if self.qualified else [full]  # type: ignore[list-item]

    def level_of(self, type_: str) -> int:
        return 1 if self.qualified and type_ == self.qualified[0] else 0


@dataclass(frozen=True)
class Readout:
    """Where one query's registers live in its blocks (its layout's additive registers
    come first, in the layout's order).

    ``sums``: per sum of the layout, (register, weight, hidden decimals register or
    -1); ``extremes``: per minimum, then maximum of the layout, (register in the
    extreme block, extreme column, hidden integers register or -1); ``columns``:
    the extreme column of each register of the extreme block, hidden ones included.
    """

    sums: tuple[tuple[int, int, int], ...]
    extremes: tuple[tuple[int, int, int], ...]
    columns: tuple[int, ...] = ()


class Builder:
    """The tables of :func:`~trendagg.kernels.lower.program.lower` as its passes build
    them: ``q`` per query (``q_*`` fields); per state of every query (by global state
    index) ``preds``, ``cnt``, ``sums``, ``exts``, ``bindings``; the Program fields the
    passes have made, in ``tables``; and what the Python side keeps around them. Each
    attribute says which pass fills it."""

    def __init__(
        self,
        plans: list[QueryPlan],
        merge: bool,
        mixed: frozenset[str],
        bursts: list[KleeneBurst],
        qsets: Sequence[GloriaQSet],
    ):
        self.plans = plans
        self.merge = merge  # the plan's merge_states (core.classes)
        self.mixed = mixed
        self.bursts = bursts  # the plan's compiled bursts (bursts.sharing_sets)
        self.qsets = qsets  # the plan's Q-sets (snapshots.member_tables)
        self.readouts: list[Readout] = []
        self.types: list[str] = []
        for p in plans:
            for v in p.vars.values():
                if v.type not in self.types:
                    self.types.append(v.type)
        self.tcode = {t: i for i, t in enumerate(self.types)}
        self.n_types = len(self.types) + 1
        self.specs: list[WindowSpec] = []
        self.parts: list[Partitioning] = []
        self.grouping_of: list[tuple[int, int]] = []
        self.filters: list[Filter] = []
        self.weights: list[str] = []
        self.extremes: list[str] = []
        self.q: dict[str, list[int]] = {name: [] for name in QUERY_FIELDS}
        self.query_groups: list[tuple[int, ...]] = []
        self.preds: list[list[int]] = []
        self.cnt: list[list[int]] = []
        self.sums: list[list[tuple[int, int]]] = []
        self.exts: list[list[tuple[int, int]]] = []
        self.bindings: list[tuple[int, int, int, str]] = []  # (q, state, filter, type)
        self.state_names: list[list[str]] = []
        self.query_names: list[str] = []  # per query (a negative one: its query's name)
        # negated transitions and trailing result queues: (query, source state (global
        # index) or -1, target state or -1, negative query); see negation.negations
        self.nts: list[tuple[int, int, int, int]] = []
        self.negs: dict[int, list[tuple[int, int, int]]] = {}  # see core._state_classes
        self.tables: dict[str, object] = {}  # Program fields made by the passes
        # NEXT conditions: per state (global index), its incoming transitions with
        # conditions (source state, conditions) and its guards; see edges.programs
        self.edges: dict[int, list[tuple[int, list[ast.BoolExpr]]]] = {}
        self.guards: dict[int, list[ast.BoolExpr]] = {}
        # (state, source state) whose one condition reads key(x) op query(y), on no NOT:
        # answered from an ordered index (see edges.programs)
        self.indexable: set[tuple[int, int]] = set()
        self.words = Words()
        # the queries of a GLORIA (or SHARON) plan's Q-sets: laid out as queries, bound
        # and run by the snapshot kernel (see snapshots)
        members = {name for s in qsets for name in s.queries}
        self.on_gloria: set[int] = {qi for qi, p in enumerate(plans) if p.name in members}
        # filled by the passes, in their order:
        self.lazy: list[bool] = []  # per window spec (lazy.lazy_windows)
        self.qs_c: list[int] = []  # the class of every state (core.classes)
        self.reps: list[tuple[int, int]] = []  # each class's (query, state)
        self.members: list[list[tuple[str, str]]] = []  # each class's (query, variable)s
        self.widths: dict[str, int] = {}  # the widest instance row of each kind
        self.group_widths: dict[str, int] = {}  # the widest group row of each kind
        # the queues (negation.queues; edges.logs adds the logs): (query, source state or
        # -1, target state or -1, negative query or -1); (target class, source class) ->
        # queue of each negated transition kept
        self.queues: list[tuple[int, int, int, int]] = []
        self.kept: dict[tuple[int, int], int] = {}
        self.log_reads: dict[tuple[int, int], int] = {}  # (state, source) -> log (edges.logs)
        self.log_columns: dict[int, list[str]] = {}  # per log, the attributes it holds
        self.plain_preds: list[list[int]] = []  # per state (negation.queue_tables)
        self.edge_columns: list[str] = []  # (edges.programs)
        self.programs: list[Program_] = []
        self.key_width = 1
        self.stack = 1
        self.anc: list[list[int]] = []  # per class, its ancestors (lazy.lazy_tables)
        # the sharing sets: (type, partitioning, filter, members) (bursts.sharing_sets)
        self.sets: list[tuple[str, int, int, list[tuple[int, int]]]] = []
        self.set_bursts: list[int] = []
        self.panes: list[Fraction] = []
        self.singles = 0  # (core.roles)
        self.gloria_low: GloriaLowered | None = None  # (snapshots.member_tables)

    def owner(self) -> list[int]:
        """The query of every state (by global state index)."""
        return [qi for qi in range(len(self.q["q_spec"])) for _ in range(self.q["q_S"][qi])]

    def source_class(self, owner: list[int], gs: int, src: int) -> int:
        """The state class of the source ``src`` (a state of the same query) of the
        transition into global state ``gs``; ``owner`` as :meth:`owner` returns it."""
        return int(self.qs_c[self.q["q_soff"][owner[gs]] + src])

    def plain(self, qi: int) -> bool:
        """Query ``qi`` keeps no state beside its registers: not on GLORIA's snapshots, no
        NOT of its own (as a negative sub-pattern, a block or a trailing one), and none of
        its states queued by a NOT, logged or indexed for a NEXT condition, or guarded.
        Lazy windows and template classes take only such queries."""
        q = self.q
        lo, hi = q["q_soff"][qi], q["q_soff"][qi] + q["q_S"][qi]
        return (
            qi not in self.on_gloria
            and q["q_nkind"][qi] < 0
            and q["q_blk"][qi] < 0
            and q["q_trail"][qi] < 0
            and not any(
                gs in self.negs or gs in self.edges or gs in self.guards for gs in range(lo, hi)
            )
        )

    def filter_of(self, plan: QueryPlan, var: str) -> int:
        """The filter of ``var`` of ``plan``, one per binding rule."""
        info = plan.vars[var]
        texts = tuple(sorted(to_text(p.condition) for p in info.local))  # type: ignore[attr-defined]
        key = (info.type, tuple(sorted(info.required)), texts)
        for i, f in enumerate(self.filters):
            if f.key == key:
                return i
        self.filters.append(Filter(info.type, tuple(sorted(info.required)), tuple(info.local), key))
        return len(self.filters) - 1

    def rule(self, f: int) -> int:
        """A filter id, or -1 when the filter accepts every event of its type."""
        return f if self.filters[f].required or self.filters[f].predicates else -1


def blocks(
    rows: list[list[int]], ns: list[int], a: list[int], m: list[int], names: tuple[str, str, str]
) -> tuple[list[int], list[int], list[int], dict[str, int]]:
    """Offsets of blocks laid side by side in rows: each item i of a row takes ns[i] window
    slots of a[i] registers (times the lanes: scaled() multiplies), of m[i] extremes and of
    one key; and the widest row of each kind, under ``names``."""
    n = len(ns)
    add, ext, key = [0] * n, [0] * n, [0] * n
    widths = dict.fromkeys(names, 1)
    for items in rows:
        t = e = k = 0
        for i in items:
            add[i], ext[i], key[i] = t, e, k
            t += ns[i] * a[i]
            e += ns[i] * m[i]
            k += ns[i]
        for name, used in zip(names, (t, e, k), strict=True):
            widths[name] = max(widths[name], used)
    return add, ext, key, widths


def csr(lists: Sequence[Sequence[int]]) -> tuple[np.ndarray, np.ndarray]:
    """Lists of integers as one array and the offsets of each list in it (``ptr``)."""
    ptr = np.zeros(len(lists) + 1, dtype=np.int64)
    np.cumsum([len(items) for items in lists], out=ptr[1:])
    flat = np.array([x for items in lists for x in items], dtype=np.int64)
    return ptr, flat


def i64(values: Sequence[int]) -> np.ndarray:
    return np.array(values, dtype=np.int64)


def index_of(items: list, item: object) -> int:  # type: ignore[type-arg]
    """The position of ``item`` in ``items``, appended first when it is not there."""
    if item not in items:
        items.append(item)
    return items.index(item)
