"""The lowering's entry: :func:`lower`, which runs the construct passes (:data:`PASSES`)
in order over one :class:`~trendagg.kernels.lower.builder.Builder`, and what it returns:
the kernel's tables (a :class:`~trendagg.kernels.program.Program`, whose type stays in
that module for numba's cache, see there) and what the Python side keeps around them
(:class:`Lowered`).

The numba loop reads the fields of a ``Program`` by name: per query (``q_*``), per state
class (``c_*``), per binding (``b_*``), per sharing set (``set_*``), per queue
(``nt_*``), per index (``ix_*``), per lazy END (``j_*``), ... Each pass's module says
what its fields hold.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction

from trendagg.kernels.edges import Program as Program_
from trendagg.kernels.edges import Words
from trendagg.kernels.lower import bursts, core, edges, lazy, negation, snapshots, templates
from trendagg.kernels.lower.builder import Builder, Filter, Partitioning, Readout, i64
from trendagg.kernels.lower.snapshots import GloriaLowered
from trendagg.kernels.program import Program
from trendagg.optimizer.plan import SharingPlan, snapshot_qsets
from trendagg.plan.compile import QueryPlan
from trendagg.plan.windows import WindowSpec


@dataclass
class Lowered:
    """A program and what the Python side needs around it."""

    plans: list[QueryPlan]
    program: Program
    types: list[str]  # type code -> name (code len(types): every other type)
    specs: list[WindowSpec]
    panes: list[Fraction]  # per sharing set
    partitionings: list[Partitioning]
    grouping_of: list[tuple[int, int]]  # global grouping id -> (partitioning, index)
    filters: list[Filter]
    weights: list[str]  # weight column (sum attribute) names
    extremes: list[str]  # MIN/MAX attribute names
    widths: dict[str, int]
    group_widths: dict[str, int]
    query_groups: list[tuple[int, ...]]  # per query: positions of its group attrs in attrs
    singles: int  # the most variables a query binds at most once per trend
    max_additive: int
    max_extreme: int
    set_types: list[str]
    class_members: list[list[tuple[str, str]]]  # per state class: its (query, variable)s
    set_bursts: list[int]  # per sharing set: its burst in the plan's compiled bursts
    readouts: list[Readout]  # per query
    class_query: list[int]  # per state class: the query of its representative
    mixed: frozenset[str]  # attributes of both kinds (with hidden registers)
    # NEXT conditions (see trendagg.kernels.edges): the attributes they read, their words,
    # their programs, the most values a log entry holds and the deepest stack
    edge_columns: list[str] = field(default_factory=list)
    words: Words = field(default_factory=Words)
    programs: list[Program_] = field(default_factory=list)
    key_width: int = 1
    stack: int = 1
    gloria: GloriaLowered | None = None  # the snapshot kernel's tables (member queries)


#: The construct passes of :func:`lower`, in order: each fills the tables the later
#: ones read (sqlglot's RULES, for the kernel's tables).
PASSES = (
    core.queries,  # per query: window, partitioning, grouping, states, registers
    negation.negations,  # negative sub-patterns as queries of their own
    lazy.lazy_windows,  # the window specs kept by the start of the trends
    core.classes,  # state classes and their blocks, ENDs, reads, result blocks
    negation.queues,  # the negations' queues, numbered
    edges.logs,  # NEXT logs: queues of their own
    negation.queue_tables,  # blocked slots, queues, signals, negated predecessors
    edges.programs,  # NEXT programs, log columns, ordered indexes
    lazy.lazy_tables,  # the lazy windows' G, Y and D blocks
    bursts.sharing_sets,  # the plan's shared Kleene bursts
    core.type_bindings,  # per event type, the bindings it makes
    core.roles,  # per partitioning, the roles of types and its window specs
    templates.template_classes,  # classes kept in the template of a qualified partition
    snapshots.member_tables,  # GLORIA's and SHARON's snapshot tables
    templates.template_reads,  # predecessors read in the instance and in its template
    lazy.predecessor_columns,  # a lazy predecessor's columns among its reader's
    core.register_tables,  # per state, the registers its events add to
)


def lower(
    plans: list[QueryPlan], sharing: SharingPlan, mixed: frozenset[str] = frozenset()
) -> Lowered:
    """Lay out the queries ``plans`` that ``sharing`` routes to the kernel as it
    says, with hidden registers for the attributes in ``mixed`` (of both kinds, see
    :mod:`~trendagg.kernels.lower.core`): its compiled Kleene bursts become the kernel's
    sharing sets, and with its ``merge_states``, states of different queries whose
    registers are equal by construction share one register class; without, every state
    of every query is its own. The passes (:data:`PASSES`) run in order over one
    :class:`~trendagg.kernels.lower.builder.Builder`."""
    b = Builder(
        plans,
        sharing.merge_states,
        mixed,
        [burst for burst in sharing.bursts if burst.executor == "compiled"],
        snapshot_qsets(plans, sharing),
    )
    for step in PASSES:
        step(b)
    return _lowered(b)


def _lowered(b: Builder) -> Lowered:
    program = Program(**{name: i64(values) for name, values in b.q.items()}, **b.tables)
    return Lowered(
        plans=b.plans,
        program=program,
        types=b.types,
        specs=b.specs,
        panes=b.panes,
        partitionings=b.parts,
        grouping_of=b.grouping_of,
        filters=b.filters,
        weights=b.weights,
        extremes=b.extremes,
        widths=b.widths,
        group_widths=b.group_widths,
        query_groups=b.query_groups,
        singles=b.singles,
        max_additive=max(b.q["q_A"], default=1),
        max_extreme=max(max(b.q["q_M"], default=0), 1),
        set_types=[s[0] for s in b.sets],
        class_members=b.members,
        set_bursts=b.set_bursts,
        readouts=b.readouts,
        class_query=[qi for qi, _ in b.reps],
        mixed=b.mixed,
        edge_columns=b.edge_columns,
        words=b.words,
        programs=b.programs,
        key_width=b.key_width,
        stack=b.stack,
        gloria=b.gloria_low,
    )


def scaled(program: Program, lanes: int) -> Program:
    """The program with its additive offsets in int64 units for ``lanes`` lanes."""
    return program._replace(
        c_toff=program.c_toff * lanes,
        q_roff=program.q_roff * lanes,
        nt_aoff=program.nt_aoff * lanes,
        ix_aoff=program.ix_aoff * lanes,
        set_boff=bursts.burst_offsets(program, lanes),
        c_lg=program.c_lg * lanes,
        c_ly=program.c_ly * lanes,
        c_ldi=program.c_ldi * lanes,
        j_ld=program.j_ld * lanes,
        q_lroff=program.q_lroff * lanes,
    )
