"""A compiled workload lowered to the arrays the kernel loops over.

:func:`lower` takes the queries the plan routes to the kernel
(:func:`~trendagg.optimizer.plan.compiled_blocker`: qualified partition
attributes only when nested; decided from the plan, never from the data) and
lays out
their templates, aggregate registers, bindings (event type -> (query, state,
filter)), sharing sets (the plan's shared bursts of E+, one set per binding
rule for E among their members, each with its own coefficients) and window specs as
integer arrays (a :class:`Program`). Per partition instance the state is
one row of int64 residues: per query, per window slot, per state, its
additive registers times the lanes; minima and maxima are float64. A NOT
becomes a query of its own after the workload's, which signals its matches to
its parent (:meth:`_Lowering.negations`). A transition whose one NEXT condition
reads ``key(x) op query(y)`` (on no NOT) reads an ordered index of its source
class's vertices by key; any other transition with NEXT conditions reads the
log of its source class (the source vertices one by one, with the values the
conditions read) through a stack program (:meth:`_Lowering.edge_logs`,
:meth:`_Lowering.edge_tables`, :mod:`trendagg.kernels.edges`).

An attribute that holds integers and decimals both (``mixed``) gets hidden
registers, since an output shows its own kind (docs/semantics.md: integer sums are
exact integers): per SUM over it one more additive register, fed by the
hidden weight column ``a#decimals`` (1 where the value is a decimal, else
0), which counts the decimal occurrences in a window's trends (more than 0:
the sum is a decimal); per MIN or MAX over it one more extreme, fed by the
hidden extreme column ``a#integers`` (the value where it is an integer, NaN
where not), the extreme of its integers (equal to the extreme: it is an
integer). Minima come before maxima, hidden ones included; a query's
:class:`Readout` says where each register of its layout and each hidden one
lives. An attribute of one kind gets none.

A minimum or maximum register is a float64: the value itself, exact for
decimals and for integers up to 2**53. An attribute whose MIN/MAX values are
words or integers beyond 2**53 (any size) is read as order-preserving codes
instead: the executor keeps its sorted distinct values (those of the open
windows and of the chunk) and a register holds a value's rank, which the
kernel compares as it compares numbers; a chunk that brings new values
renumbers the live registers of that attribute (monotonically, so every
minimum stays a minimum), and a row reads the rank back as its value. Numbers
rank before words (a word never meets a number where the Python engines give a
result: they stop at such a comparison). The layout is the same: the codes
live in the registers the values would.
"""

from __future__ import annotations

import itertools
import math
from collections import namedtuple
from collections.abc import Sequence
from dataclasses import dataclass, field
from fractions import Fraction

import numpy as np

from trendagg.kernels.edges import (
    COMPARISONS,
    Words,
    compile_program,
    edge_conditions,
    index_sides,
    read_attrs,
)
from trendagg.kernels.edges import Program as Program_
from trendagg.kernels.gloria_program import GloriaLowered, QueryLayout, lower_gloria
from trendagg.language import ast, to_text
from trendagg.optimizer.contexts import contexts
from trendagg.optimizer.cost import APPLY_DENOMINATOR, APPLY_NUMERATOR, burst_event_units
from trendagg.optimizer.plan import (
    GloriaQSet,
    KleeneBurst,
    SharingPlan,
    partition_layout,
    snapshot_qsets,
)
from trendagg.plan.compile import QueryPlan
from trendagg.plan.template import Negation, Template
from trendagg.plan.windows import WindowSpec, as_number

Program = namedtuple(
    "Program",
    "q_spec q_part q_S q_A q_M q_nmin q_NS q_start q_end qs_c c_toff c_eoff c_koff c_A c_M c_NS "
    "c_spec c_read c_end_ptr c_end_q q_roff q_reoff q_rkoff q_gsel q_grouping q_soff pred_ptr pred_src cnt_ptr cnt_reg sum_ptr sum_reg sum_w "
    "ext_ptr ext_reg ext_a ty_ptr ty_bind b_q b_s b_f b_set set_part set_role set_f set_q_ptr "
    "set_q set_s set_nw set_eunits cost_apply set_wcol set_wmap set_na set_acol set_amap set_boff "
    "set_bfoff part_role "
    "part_sp_ptr part_sp sp_NS sp_moff part_x "
    "q_nkind q_nparent q_nnt q_blk q_trail npred_ptr npred_src npred_nt c_sig_ptr c_sig c_nt_ptr "
    "c_nt nt_q nt_neg nt_NS nt_koff nt_aoff nt_eoff ty_ns_ptr ty_ns "
    "nt_log nt_col_ptr nt_col epred_ptr epred_nt epred_pr g_pr pr_ptr pr_code pr_ck pr_cv "
    "ipred_ptr ipred_ix ipred_op ipred_pr ix_q ix_key ix_NS ix_koff ix_aoff ix_eoff c_ix_ptr c_ix "
    "c_tmpl tpred_ptr tpred_src "
    "q_lazy sp_lazy c_lazy c_lloop c_anc_ptr c_anc c_lw c_lg c_ly c_ldi j_ld j_q j_c lpm_ptr lpm "
    "ldj_ptr ldj_j ldj_pos c_desc_ptr c_desc c_rank q_lroff sp_nwin lz_off",
)

#: A window spec whose events fall into at least this many windows (WITHIN / SLIDE,
#: rounded up) keeps its registers by the start of the trends (lazy windows, see
#: :meth:`_Lowering.lazy_windows`) when every query of it allows that. Tests set it to 1.
LAZY_MIN_WINDOWS = 16


HIDDEN = "#"  # joins an attribute and a hidden column's role; no attribute name has it
#: The extreme column of an event's time group (a global ordinal, exact as a float64): the
#: one register of a negative sub-pattern, the latest start of its matches
TIME_GROUP = HIDDEN + "tg"
NEGATION_KINDS = {"leading": 0, "trailing": 1, "between": 2}


def hidden(attr: str, role: str) -> str:
    """The name of a hidden column of ``attr``: role ``decimals`` or ``integers``."""
    return f"{attr}{HIDDEN}{role}"


def source(name: str) -> tuple[str, str]:
    """The attribute a weight or extreme column reads, and its hidden role ('' if none)."""
    attr, _, role = name.partition(HIDDEN)
    return attr, role


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
    :data:`~trendagg.kernels.executor.WILD` at the qualified positions) and of all.
    An event of any other type (a wildcard for the qualified attributes) is
    processed in the template of its key and in every instance that agrees with it;
    a new instance starts as a copy of its template, which has seen every event that
    the new one would have (see :mod:`~trendagg.kernels.executor`).
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


def _repeatable(template: Template) -> set[str]:
    """The variables that one trend (or match of a negative sub-pattern) may bind more
    than once (on a cycle of the template)."""
    succ: dict[str, set[str]] = {}
    for t in template.transitions:
        succ.setdefault(t.src, set()).add(t.dst)
    out = set()
    for var in template.states:
        seen: set[str] = set()
        todo = list(succ.get(var, ()))
        while todo:
            x = todo.pop()
            if x == var:
                out.add(var)
                break
            if x not in seen:
                seen.add(x)
                todo.extend(succ.get(x, ()))
    return out


def _blocks(
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


def _state_classes(
    keys_of: list[tuple[object, ...]],
    q_S: list[int],
    q_soff: list[int],
    q_start: list[int],
    preds: list[list[int]],
    bindings: list[tuple[int, int, int, str]],
    cnt: list[list[int]],
    sums: list[list[tuple[int, int]]],
    exts: list[list[tuple[int, int]]],
    merge: bool,
    negs: dict[int, list[tuple[int, int, int]]] | None = None,
    edges: dict[int, list[tuple[int, str]]] | None = None,
) -> tuple[list[int], list[tuple[int, int]]]:
    """The class of every (query, state) (indexed like ``preds``) and each class's first member.

    Two states are merged when their registers are equal by construction: same
    window, partitioning and register layout, same event type and filter, both
    the start or neither, both with a self-loop or neither, what each of its
    events adds to its own registers the same, and predecessors (other than
    itself) of the same classes, recursively. A state on a cycle through other
    states (nested Kleene) is never merged. A state that a negation changes
    (``negs``, by global state index: the source state, in its query, that it
    reads through a queue, or -1 for a start that a leading NOT blocks; the
    negative query; its END state; see :meth:`_Lowering.negations`) is merged
    only with states changed alike: the same sources through negative queries of
    the same classes. A state with NEXT conditions or guards (``edges``, by global
    state index: (source state, conditions as text; -1: the guards)) is merged only
    with states whose conditions are the same on transitions from the same classes,
    and a state whose vertices such a condition reads (a source, whose vertices are
    logged one by one) only with states that are sources too.
    """
    negs = negs or {}
    edges = edges or {}
    owner = [qi for qi in range(len(q_S)) for _ in range(q_S[qi])]
    logged = {
        q_soff[owner[gs]] + src for gs, items in edges.items() for src, _ in items if src >= 0
    }
    qs_c = [-1] * len(preds)
    reps: list[tuple[int, int]] = []
    index: dict[tuple[object, ...], int] = {}

    def visit(qi: int, s: int, path: frozenset[int]) -> int:
        gs = q_soff[qi] + s
        if qs_c[gs] >= 0:
            return qs_c[gs]
        others = [src for src in preds[gs] if src != s]
        key: tuple[object, ...]
        if not merge or any(q_soff[qi] + src in path for src in others):
            key = ("alone", qi, s)
        else:
            below = tuple(sorted(visit(qi, src, path | {gs}) for src in others))
            if any(qs_c[q_soff[qi] + src] < 0 for src in others):
                key = ("alone", qi, s)  # a cycle below: not settled
            else:
                f, typ = bindings[gs][2], bindings[gs][3]
                negated = tuple(
                    sorted(
                        (
                            visit(qi, src, path | {gs}) if src >= 0 else -1,
                            visit(n, n_end, path | {gs}),
                        )
                        for src, n, n_end in negs.get(gs, ())
                    )
                )
                edged = tuple(
                    sorted(
                        (
                            -2 if src < 0 else -1 if src == s else visit(qi, src, path | {gs}),
                            text,
                        )
                        for src, text in edges.get(gs, ())
                    )
                )
                key = (
                    edged,
                    gs in logged,
                    keys_of[qi],
                    typ,
                    f,
                    s == q_start[qi],
                    s in preds[gs],
                    tuple(cnt[gs]),
                    tuple(sums[gs]),
                    tuple(exts[gs]),
                    below,
                    negated,
                )
        c = index.get(key)
        if c is None:
            c = index[key] = len(reps)
            reps.append((qi, s))
        qs_c[gs] = c
        return c

    for qi in range(len(keys_of)):
        for s in range(q_S[qi]):
            visit(qi, s, frozenset())
    return qs_c, reps


def _acyclic(preds: list[list[int]]) -> bool:
    """True when the states (their predecessors ``preds``, self-loops left out) have no
    cycle."""
    done: set[int] = set()
    path: set[int] = set()

    def visit(s: int) -> bool:
        if s in done:
            return True
        if s in path:
            return False
        path.add(s)
        ok = all(visit(x) for x in preds[s])
        path.discard(s)
        done.add(s)
        return ok

    return all(visit(s) for s in range(len(preds)))


def _csr(lists: list[list[int]]) -> tuple[np.ndarray, np.ndarray]:
    ptr = np.zeros(len(lists) + 1, dtype=np.int64)
    np.cumsum([len(items) for items in lists], out=ptr[1:])
    flat = np.array([x for items in lists for x in items], dtype=np.int64)
    return ptr, flat


def _i64(values: list[int]) -> np.ndarray:
    return np.array(values, dtype=np.int64)


def lower(
    plans: list[QueryPlan], sharing: SharingPlan, mixed: frozenset[str] = frozenset()
) -> Lowered:
    """Lay out the queries ``plans`` that ``sharing`` routes to the kernel as it
    says, with hidden registers for the attributes in ``mixed`` (of both kinds, see
    the module docstring): its compiled Kleene bursts become the kernel's sharing
    sets, and with its ``merge_states``, states of different queries whose registers
    are equal by construction share one register class (see :func:`_state_classes`);
    without, every state of every query is its own.

    The steps, each filling the tables the later ones read: event types, then
    per query its window, partitioning, grouping, states, registers and
    bindings; state classes and their blocks; result blocks; sharing sets;
    bindings by type; the roles of types per partitioning; the program.
    """
    qsets = snapshot_qsets(plans, sharing)
    members = {name for s in qsets for name in s.queries}
    low = _Lowering(plans, sharing.merge_states, mixed)
    low.on_gloria = {qi for qi, p in enumerate(plans) if p.name in members}
    for qi, plan in enumerate(plans):
        low.add_query(qi, plan)
    low.negations()
    low.lazy_windows()
    low.classes()
    low.lazy_tables()
    low.sharing_sets([b for b in sharing.bursts if b.executor == "compiled"])
    low.type_bindings()
    low.roles()
    low.template_classes()
    if qsets:
        low.gloria(qsets)
    return low.lowered()


class _Lowering:
    """The tables of :func:`lower` as its steps build them (``q_*`` per query, per state
    of every query ``preds``, ``cnt``, ``sums``, ``exts``, ``bindings``; ``c_*`` per class)."""

    def __init__(self, plans: list[QueryPlan], merge: bool, mixed: frozenset[str]):
        self.plans = plans
        self.merge = merge
        self.mixed = mixed
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
        self.q: dict[str, list[int]] = {name: [] for name in _QUERY_FIELDS}
        self.query_groups: list[tuple[int, ...]] = []
        self.preds: list[list[int]] = []
        self.cnt: list[list[int]] = []
        self.sums: list[list[tuple[int, int]]] = []
        self.exts: list[list[tuple[int, int]]] = []
        self.bindings: list[tuple[int, int, int, str]] = []  # (q, state, filter, type)
        self.state_names: list[list[str]] = []
        self.query_names: list[str] = []  # per query (a negative one: its query's name)
        # negated transitions and trailing result queues: (query, source state (global
        # index) or -1, target state or -1, negative query); see negations()
        self.nts: list[tuple[int, int, int, int]] = []
        self.negs: dict[int, list[tuple[int, int, int]]] = {}  # see _state_classes
        self.tables: dict[str, object] = {}  # Program fields made by the steps
        # NEXT conditions: per state (global index), its incoming transitions with
        # conditions (source state, conditions) and its guards; see edge_tables()
        self.edges: dict[int, list[tuple[int, list[ast.BoolExpr]]]] = {}
        self.guards: dict[int, list[ast.BoolExpr]] = {}
        # (state, source state) whose one condition reads key(x) op query(y), on no NOT:
        # answered from an ordered index (see edge_tables())
        self.indexable: set[tuple[int, int]] = set()
        self.words = Words()
        # the queries of a GLORIA (or SHARON) plan's Q-sets: laid out as queries, bound
        # and run by the snapshot kernel (see gloria_program)
        self.on_gloria: set[int] = set()
        self.gloria_low: GloriaLowered | None = None

    def owner(self) -> list[int]:
        """The query of every state (by global state index)."""
        return [qi for qi in range(len(self.q["q_spec"])) for _ in range(self.q["q_S"][qi])]

    def source_class(self, owner: list[int], gs: int, src: int) -> int:
        """The state class of the source ``src`` (a state of the same query) of the
        transition into global state ``gs``; ``owner`` as :meth:`owner` returns it."""
        return int(self.qs_c[self.q["q_soff"][owner[gs]] + src])

    def filter_of(self, plan: QueryPlan, var: str) -> int:
        info = plan.vars[var]
        texts = tuple(sorted(to_text(p.condition) for p in info.local))  # type: ignore[attr-defined]
        key = (info.type, tuple(sorted(info.required)), texts)
        for i, f in enumerate(self.filters):
            if f.key == key:
                return i
        self.filters.append(Filter(info.type, tuple(sorted(info.required)), tuple(info.local), key))
        return len(self.filters) - 1

    def add_query(self, qi: int, plan: QueryPlan) -> None:
        """Window, partitioning, grouping, states and registers of query ``qi``."""
        q = self.q
        spec = plan.window
        if spec not in self.specs:
            self.specs.append(spec)
        q["q_spec"].append(self.specs.index(spec))
        attrs, qualified = partition_layout(plan)
        g = next(
            (
                i
                for i, pt in enumerate(self.parts)
                if (pt.attrs, pt.qualified) == (attrs, qualified)
            ),
            None,
        )
        if g is None:
            self.parts.append(Partitioning(attrs, qualified))
            g = len(self.parts) - 1
        self.parts[g].queries.append(qi)
        q["q_part"].append(g)
        positions = tuple(attrs.index(a.name) for a in plan.group_attrs)
        self.query_groups.append(positions)
        if positions not in self.parts[g].groupings:
            self.parts[g].groupings.append(positions)
            self.grouping_of.append((g, len(self.parts[g].groupings) - 1))
        q["q_gsel"].append(self.parts[g].groupings.index(positions))
        q["q_grouping"].append(self.grouping_of.index((g, q["q_gsel"][-1])))
        for name in _NEGATION_FIELDS:
            q[name].append(-1)
        sums, exts, n_add, nmin = self.registers(plan)
        self.states(qi, plan, plan.template, sums, exts, (n_add, nmin))

    def states(
        self,
        qi: int,
        plan: QueryPlan,
        template: Template,
        sums: list[tuple[str, int, int]],
        exts: list[tuple[str, int, int]],
        sizes: tuple[int, int],
    ) -> None:
        """The states of ``template`` (of ``plan``) as those of query ``qi``, with their
        predecessors, registers (sum and extreme registers per variable, the numbers of
        additive registers and of minima) and bindings."""
        q = self.q
        spec = self.specs[q["q_spec"][qi]]
        states = list(template.states)
        self.query_names.append(plan.name)
        self.state_names.append(states)
        q["q_soff"].append(len(self.preds))
        q["q_S"].append(len(states))
        q["q_A"].append(sizes[0])
        q["q_M"].append(len(exts))
        q["q_nmin"].append(sizes[1])
        q["q_NS"].append(math.ceil(spec.within / spec.slide) + 1)
        q["q_start"].append(states.index(template.start))
        q["q_end"].append(states.index(template.end))
        counted = plan.layout.count_vars
        edges, guards = edge_conditions(plan)
        for s, var in enumerate(states):
            gs = len(self.preds)
            for t in template.transitions:
                if t.dst == var and (t.src, var) in edges:
                    self.edges.setdefault(gs, []).append((states.index(t.src), edges[(t.src, var)]))
                    if (t.src, var) in plan.edge_indexes and t.negation is None:
                        self.indexable.add((gs, states.index(t.src)))
            if var in guards:
                self.guards[gs] = guards[var]
            self.preds.append(
                sorted({states.index(t.src) for t in template.transitions if t.dst == var})
            )
            self.cnt.append([1 + i for i, v in enumerate(counted) if v == var])
            self.sums.append([(reg, w) for v, reg, w in sums if v == var])
            self.exts.append([(reg, a) for v, reg, a in exts if v == var])
            self.bindings.append((qi, s, self.filter_of(plan, var), plan.vars[var].type))

    def negations(self) -> None:
        """Negative sub-patterns (GRETA, Section 5) as queries of their own, after the
        workload's (``q_nkind`` >= 0; nested ones after their parent). A negative query
        keeps, per window, whether it has a match and the latest start of its matches
        (the maximum of its start variable's :data:`TIME_GROUP`); the kernel signals each
        match, when its END vertex is inserted, to its parent query:

        - leading (``SEQ(NOT N, Pj, ..)``): the parent's start state starts no trend in
          that window after the match's end (``q_blk``: blocked slots);
        - trailing (``SEQ(.., Pi, NOT N)``): the parent's results of that window that
          end before the match's start are dropped (``q_trail``: its results wait in a
          queue of their own per partition instance until the window closes);
        - between (``SEQ(.., Pi, NOT N, Pj, ..)``): the vertices of end(Pi) older than
          the match's start stop being predecessors of start(Pj), in every window (the
          transition reads a queue of its own, ``npred_*``).

        A queue (``nt_*``, per partition instance and window slot) holds the registers
        of the vertices that reach it, one entry per epoch between two events of the
        negative query's start type (a match starts at such an event, so pruning drops
        whole entries), and their running total. The states whose registers a negation
        changes (the start, after a leading NOT; the target of a negated transition) are
        merged only with states that the same negative sub-pattern changes alike (see
        :func:`_state_classes` and :meth:`negation_tables`).
        """
        for qi in range(len(self.plans)):
            self._negations(qi, self.plans[qi], self.plans[qi].template)

    def _negations(self, qi: int, plan: QueryPlan, template: Template) -> None:
        q = self.q
        for i, neg in enumerate(template.negations):
            tg = _index(self.extremes, TIME_GROUP)
            n = len(q["q_spec"])
            for name in ("q_spec", "q_part"):
                q[name].append(q[name][qi])
            q["q_gsel"].append(0)
            q["q_grouping"].append(-1)  # no results: its matches signal its parent
            for name in _NEGATION_FIELDS:
                q[name].append(-1)
            q["q_nkind"][n] = NEGATION_KINDS[neg.kind]
            q["q_nparent"][n] = qi
            self.readouts.append(Readout((), ((0, tg, -1),), (tg,)))
            self.states(n, plan, neg.template, [], [(neg.template.start, 0, tg)], (1, 0))
            self._connect(qi, template, i, neg, n)
            self._negations(n, plan, neg.template)

    def _connect(self, qi: int, template: Template, i: int, neg: Negation, n: int) -> None:
        """What negative query ``n`` (NOT number ``i`` of ``template``, query ``qi``) acts on."""
        q = self.q
        states = self.state_names[qi]
        if neg.kind == "leading":
            q["q_blk"][qi] = 1  # laid out in negation_tables()
            start = q["q_soff"][qi] + states.index(template.start)
            self.negs.setdefault(start, []).append((-1, n, q["q_end"][n]))
        elif neg.kind == "trailing":  # (queues numbered in negation_tables())
            self.nts.append((qi, -1, -1, n))
        else:
            t = next(t for t in template.transitions if t.negation == i)
            src, dst = states.index(t.src), states.index(t.dst)
            self.nts.append((qi, q["q_soff"][qi] + src, dst, n))
            self.negs.setdefault(q["q_soff"][qi] + dst, []).append((src, n, q["q_end"][n]))

    def registers(
        self, plan: QueryPlan
    ) -> tuple[list[tuple[str, int, int]], list[tuple[str, int, int]], int, int]:
        """The sum registers (variable, register, weight) and the extremes (variable,
        register, extreme column) of a query, hidden ones included (see the module
        docstring), its number of additive registers and of minima; and its
        :class:`Readout`, in ``readouts``."""
        lay = plan.layout
        summed = {
            (o.aggregate.var, o.aggregate.attr)
            for o in plan.outputs
            if o.aggregate is not None and o.aggregate.func == "SUM"
        }  # an AVG is a decimal whatever the kind of its sum
        sums, readout_sums = [], []
        hidden_reg = lay.n_additive
        for j, (var, attr) in enumerate(lay.sums):
            reg, w, dec = 1 + len(lay.count_vars) + j, _index(self.weights, attr), -1
            sums.append((var, reg, w))
            if attr in self.mixed and (var, attr) in summed:
                dec, hidden_reg = hidden_reg, hidden_reg + 1
                sums.append((var, dec, _index(self.weights, hidden(attr, "decimals"))))
            readout_sums.append((reg, w, dec))
        exts: list[tuple[str, int, int]] = []
        readout_exts: list[tuple[int, int, int]] = []
        nmin = 0
        for i, block in enumerate((lay.mins, lay.maxs)):
            start = len(exts)
            exts += [(v, start + j, _index(self.extremes, a)) for j, (v, a) in enumerate(block)]
            for j, (var, attr) in enumerate(block):
                ints = -1
                if attr in self.mixed:
                    ints = len(exts)
                    exts.append((var, ints, _index(self.extremes, hidden(attr, "integers"))))
                readout_exts.append((start + j, exts[start + j][2], ints))
            if i == 0:
                nmin = len(exts)
        columns = [a for _, a in sorted((reg, a) for _, reg, a in exts)]
        self.readouts.append(Readout(tuple(readout_sums), tuple(readout_exts), tuple(columns)))
        return sums, exts, hidden_reg, nmin

    def lazy_windows(self) -> None:
        """Lazy windows: the window specs whose queries keep their registers by the start
        of the trends instead of per window (``q_lazy``, ``sp_lazy``).

        An event of a spec with WITHIN / SLIDE windows is in that many windows, and the
        window slots cost it that many register updates per state. A trend is in window
        k when it starts at or after k's start (its end is in every open window), so one
        set of registers per start slide holds every window; and since an event maps
        every start slide's registers by the same linear map, the kernel keeps them as
        ``X = G Y``: a matrix G per partition instance that the events update (O(states)
        each), times the registers Y that trend starts add at their own slide. A
        window's results are the END vertices' rows of G times the Y of the slides at or
        after its start, kept as a running total per group (``_engine``'s lazy
        functions; the derivation is in their comment block). An event then costs the
        same for any number of windows.

        A spec is lazy when every query of it allows that: additive registers only (no
        MIN or MAX), no NOT and no NEXT condition, an unqualified partitioning, no cycle
        through two states (nested Kleene), and at least :data:`LAZY_MIN_WINDOWS`
        windows per event. Its queries keep no window slots (``q_NS`` 0) and join no
        shared burst."""
        q = self.q
        n_all = len(q["q_spec"])
        ok = [math.ceil(s.within / s.slide) >= LAZY_MIN_WINDOWS for s in self.specs]
        for qi in range(n_all):
            lo, hi = q["q_soff"][qi], q["q_soff"][qi] + q["q_S"][qi]
            plain = (
                qi not in self.on_gloria
                and q["q_nkind"][qi] < 0
                and q["q_blk"][qi] < 0
                and q["q_trail"][qi] < 0
                and q["q_M"][qi] == 0
                and not self.parts[q["q_part"][qi]].qualified
                and not any(
                    gs in self.negs or gs in self.edges or gs in self.guards for gs in range(lo, hi)
                )
                and _acyclic([[s for s in self.preds[gs] if s != gs - lo] for gs in range(lo, hi)])
            )
            if not plain:
                ok[q["q_spec"][qi]] = False
        self.lazy = ok
        q["q_lazy"] = [1 if ok[sp] else 0 for sp in q["q_spec"]]
        for qi in range(n_all):
            if q["q_lazy"][qi]:
                q["q_NS"][qi] = 0

    def lazy_tables(self) -> None:
        """The layout of the lazy windows' state (see :meth:`lazy_windows`). Per lazy
        class c: its ancestors (itself and the classes its states read, transitively, in
        an order where every class comes after those it reads), its row block of G (A
        registers times the A registers of each ancestor: ``c_lw`` columns), its Y total
        (A), the inverse of its diagonal (1); per END of a lazy query (``j``, in the order
        of ``c_end_q``) its D block (A times the columns of its class); per predecessor
        of a lazy state, where the predecessor's columns lie among its class's; per
        lazy class, the ENDs whose D reads its Y, the read classes that read it (its
        descendants, for a start's solve) and its rank in that order. All in one additive
        row per instance (``st.lz``), partitioning by partitioning; and per query its
        result block in a group row (``st.lres``)."""
        q, t = self.q, self.tables
        reps, qs_c = self.reps, self.qs_c
        n_c = len(reps)
        c_lazy = [q["q_lazy"][qi] for qi, _ in reps]
        cpreds: list[list[int]] = []
        c_loop = []
        for qi, s in reps:
            gs = q["q_soff"][qi] + s
            cpreds.append(
                sorted({qs_c[q["q_soff"][qi] + src] for src in self.preds[gs] if src != s})
            )
            c_loop.append(1 if s in self.preds[gs] and c_lazy[qs_c[gs]] else 0)
        rank: dict[int, int] = {}

        def visit(c: int) -> None:
            if c in rank:
                return
            for pc in cpreds[c]:
                visit(pc)
            rank[c] = len(rank)

        for c in range(n_c):
            if c_lazy[c]:
                visit(c)
        read = t["c_read"].tolist()  # type: ignore[attr-defined]

        def c_read_of(d: int) -> bool:
            return bool(read[d])

        anc: list[list[int]] = []
        for c in range(n_c):
            found: set[int] = set()
            todo = [c] if c_lazy[c] else []
            while todo:
                x = todo.pop()
                if x not in found:
                    found.add(x)
                    todo.extend(cpreds[x])
            anc.append(sorted(found, key=rank.__getitem__))
        c_A = [q["q_A"][qi] for qi, _ in reps]
        c_lw = [len(anc[c]) * c_A[c] for c in range(n_c)]
        end_ptr = t["c_end_ptr"].tolist()  # type: ignore[attr-defined]
        j_q = t["c_end_q"].tolist()  # type: ignore[attr-defined]
        j_c = [c for c in range(n_c) for _ in range(end_ptr[c], end_ptr[c + 1])]
        c_lg, c_ly, c_ldi = [0] * n_c, [0] * n_c, [0] * n_c
        j_ld = [0] * len(j_q)
        width = 1
        for g in range(len(self.parts)):  # (an instance is of one partitioning)
            mine = [c for c in range(n_c) if c_lazy[c] and q["q_part"][reps[c][0]] == g]
            off = 0
            for c in mine:
                c_lg[c], off = off, off + c_A[c] * c_lw[c]
                c_ly[c], off = off, off + c_A[c]
                c_ldi[c], off = off, off + 1
            for j, c in enumerate(j_c):
                if c in mine:
                    j_ld[j], off = off, off + c_A[c] * c_lw[c]
            width = max(width, off)
        self.widths["lz"] = width
        ldj: list[list[tuple[int, int]]] = [[] for _ in range(n_c)]
        for j, c in enumerate(j_c):
            if c_lazy[c]:
                for pos, d in enumerate(anc[c]):
                    ldj[d].append((j, pos))
        ldj_ptr, ldj_j = _csr([[j for j, _ in items] for items in ldj])
        _, ldj_pos = _csr([[pos for _, pos in items] for items in ldj])
        # per lazy class, the read classes that read it (transitively), by rank
        # (found from each read class's ancestors: not every pair of classes)
        below: list[list[int]] = [[] for _ in range(n_c)]
        for d in range(n_c):
            if c_read_of(d):
                for c in anc[d]:
                    if c != d:
                        below[c].append(d)
        desc = [sorted(found, key=rank.__getitem__) for found in below]
        q_lroff, _, _, gw = _blocks(
            [
                [qi for qi in self.parts[g].queries if q["q_gsel"][qi] == sel and q["q_lazy"][qi]]
                for g, sel in self.grouping_of
            ],
            [1] * len(q["q_spec"]),
            q["q_A"],
            [0] * len(q["q_spec"]),
            ("lres", "-", "--"),
        )
        self.group_widths["lres"] = gw["lres"]
        self.anc = anc
        n_j, n_sp = len(j_q), len(self.specs)
        # st.lzi's columns per instance (see _engine._lz_cols): per class, a stamp and a
        # count of its vertices in the stamped time group; the last entries per class,
        # END and spec; per spec, its events in the open windows and the repeatable ones;
        # the time group of the instance's starts, the first of them, its live entries
        c_last = 2 * n_c
        counts = c_last + n_c + n_j + n_sp
        t.update(
            sp_lazy=_i64(self.lazy),
            # (the number of windows per event of a lazy spec, 0 for others)
            sp_nwin=_i64(
                [
                    math.ceil(s.within / s.slide) if lazy else 0
                    for s, lazy in zip(self.specs, self.lazy, strict=True)
                ]
            ),
            # c_last, j_last, sp_last, counts, inst_tg, and the width of a row of st.lzi
            lz_off=_i64(
                [
                    c_last,
                    c_last + n_c,
                    c_last + n_c + n_j,
                    counts,
                    counts + 2 * n_sp,
                    counts + 2 * n_sp + 3,
                ]
            ),
            c_lazy=_i64(c_lazy),
            c_lloop=_i64(c_loop),
            c_anc_ptr=_csr(anc)[0],
            c_anc=_csr(anc)[1],
            c_lw=_i64(c_lw),
            c_lg=_i64(c_lg),  # these five scaled by the lanes in State
            c_ly=_i64(c_ly),
            c_ldi=_i64(c_ldi),
            j_ld=_i64(j_ld),
            q_lroff=_i64(q_lroff),
            j_q=_i64(j_q),
            j_c=_i64(j_c),
            ldj_ptr=ldj_ptr,
            ldj_j=ldj_j,
            ldj_pos=ldj_pos,
            c_desc_ptr=_csr(desc)[0],
            c_desc=_csr(desc)[1],
            c_rank=_i64([rank.get(c, -1) for c in range(n_c)]),
        )

    def classes(self) -> None:
        """State classes with their register blocks in an instance row (NS window slots of
        A registers, times the lanes, M extremes and one window key each), the classes
        that emit each query's END, the classes some state reads, the result blocks, and
        the negations' slots and queues (see :meth:`negations`)."""
        q = self.q
        n_all = len(q["q_spec"])
        keys_of: list[tuple[object, ...]] = [
            (q["q_spec"][qi], q["q_part"][qi], q["q_A"][qi], q["q_M"][qi], q["q_nmin"][qi])
            if qi not in self.on_gloria
            else ("member", qi)  # (its states are never bound here: merged with none)
            for qi in range(n_all)
        ]
        qs_c, reps = _state_classes(
            keys_of,
            q["q_S"],
            q["q_soff"],
            q["q_start"],
            self.preds,
            self.bindings,
            self.cnt,
            self.sums,
            self.exts,
            self.merge,
            self.negs,
            self.edge_keys(),
        )
        self.qs_c, self.reps = qs_c, reps
        self.members: list[list[tuple[str, str]]] = [[] for _ in reps]
        for qi in range(n_all):
            for s, var in enumerate(self.state_names[qi]):
                self.members[qs_c[q["q_soff"][qi] + s]].append((self.query_names[qi], var))
        c_A = [q["q_A"][qi] for qi, _ in reps]
        c_M = [q["q_M"][qi] for qi, _ in reps]
        c_NS = [q["q_NS"][qi] for qi, _ in reps]
        c_toff, c_eoff, c_koff, self.widths = _blocks(
            [
                [c for c, (qi, _) in enumerate(reps) if q["q_part"][qi] == g]
                for g in range(len(self.parts))
            ],
            c_NS,
            c_A,
            c_M,
            ("tot", "ext", "keys"),
        )
        c_end_lists: list[list[int]] = [[] for _ in reps]
        for qi in range(n_all):
            c_end_lists[qs_c[q["q_soff"][qi] + q["q_end"][qi]]].append(qi)
        c_end_ptr, c_end_q = _csr(c_end_lists)
        # a class no state reads (an END without successors) keeps no registers: its
        # vertices only add to the results. A negative query's END signals its parent
        # after the time group's inserts (a between-NOT's match ending at t still lets
        # an event at t read the vertices it prunes), so it is inserted, as read ones are.
        c_read = [0] * len(reps)
        for qi in range(n_all):
            if q["q_nkind"][qi] >= 0:
                c_read[qs_c[q["q_soff"][qi] + q["q_end"][qi]]] = 1
            for s in range(q["q_S"][qi]):
                for src in self.preds[q["q_soff"][qi] + s]:
                    c_read[qs_c[q["q_soff"][qi] + src]] = 1
        # one binding per class: its representative's (the others would add twice)
        rep_of = set(reps)
        self.bindings = [bd if (bd[0], bd[1]) in rep_of else (-1, *bd[1:]) for bd in self.bindings]
        # per-grouping offsets of each query's result block in a group row
        q_roff, q_reoff, q_rkoff, self.group_widths = _blocks(
            [
                [qi for qi in self.parts[g].queries if q["q_gsel"][qi] == sel]
                for g, sel in self.grouping_of
            ],
            q["q_NS"],
            q["q_A"],
            q["q_M"],
            ("res", "ext", "keys"),
        )
        self.tables.update(
            qs_c=_i64(qs_c),
            c_toff=_i64(c_toff),  # scaled by the lanes in State
            c_eoff=_i64(c_eoff),
            c_koff=_i64(c_koff),
            c_A=_i64(c_A),
            c_M=_i64(c_M),
            c_NS=_i64(c_NS),
            c_spec=_i64([q["q_spec"][qi] for qi, _ in reps]),
            c_read=_i64(c_read),
            c_end_ptr=c_end_ptr,
            c_end_q=c_end_q,
            q_roff=_i64(q_roff),  # scaled by the lanes in State
            q_reoff=_i64(q_reoff),
            q_rkoff=_i64(q_rkoff),
        )
        self.negation_tables()

    def edge_keys(self) -> dict[int, list[tuple[int, str]]]:
        """Per state with NEXT conditions or guards: (source state or -1 for the guards,
        the conditions as text), for :func:`_state_classes`."""
        out: dict[int, list[tuple[int, str]]] = {}
        for gs, items in self.edges.items():
            out[gs] = [(src, " AND ".join(sorted(map(to_text, conds)))) for src, conds in items]
        for gs, conds in self.guards.items():
            out.setdefault(gs, []).append((-1, " AND ".join(sorted(map(to_text, conds)))))
        return out

    def negation_tables(self) -> None:
        """Blocked slots (two words per window slot: window, end of the first match) of
        the queries with a leading NOT; per negated transition or trailing result queue
        its slots (four words each in ``nq``: window, first and last entry, entries),
        running totals and the classes that feed it; which predecessor reads a queue;
        and per type the negative queries it starts (a new epoch of their queues).

        States merged across queries (see :func:`_state_classes`) are computed once, by
        their class's representative: a merged target of negated transitions reads
        only its representative's queue, and a merged start only its blocked slots, so
        the other members' queues are not kept and their negative queries (of the same
        class, with the same matches) signal nothing."""
        q = self.q
        qs_c, reps, soff = self.qs_c, self.reps, q["q_soff"]
        kept: dict[tuple[int, int], int] = {}  # (target class, source class) -> queue
        nts: list[tuple[int, int, int, int]] = []
        for qi, src, dst, n in self.nts:
            if src < 0:  # trailing: the query's own results
                q["q_nnt"][n] = q["q_trail"][qi] = len(nts)
                nts.append((qi, src, dst, n))
            elif reps[qs_c[soff[qi] + dst]] == (qi, dst):
                kept[(qs_c[soff[qi] + dst], qs_c[src])] = q["q_nnt"][n] = len(nts)
                nts.append((qi, src, dst, n))
            else:
                q["q_nnt"][n] = -1
        logs = self.edge_logs(nts, kept)
        silent = {n for n in range(len(q["q_spec"])) if q["q_nkind"][n] == 2}
        silent -= {n for *_, n in nts}
        for qi in range(len(q["q_spec"])):
            start = soff[qi] + q["q_start"][qi]
            if q["q_blk"][qi] >= 0 and reps[qs_c[start]] != (qi, q["q_start"][qi]):
                silent |= {n for _, n, _ in self.negs[start]}
        # the END classes' queries: plain results (c_end) apart from the signals of
        # negative queries and the results that wait in a trailing queue (c_sig)
        ends = [
            [int(x) for x in self.tables["c_end_q"][a:b]]  # type: ignore[index]
            for a, b in itertools.pairwise(self.tables["c_end_ptr"].tolist())  # type: ignore[attr-defined]
        ]
        special = {
            qi for qi in range(len(q["q_spec"])) if q["q_nkind"][qi] >= 0 or q["q_trail"][qi] >= 0
        }
        self.tables["c_end_ptr"], self.tables["c_end_q"] = _csr(
            [[x for x in row if x not in special] for row in ends]
        )
        c_sig_ptr, c_sig = _csr(
            [[x for x in row if x in special and x not in silent] for row in ends]
        )
        off = 0
        for qi in range(len(q["q_spec"])):
            if q["q_blk"][qi] >= 0:
                q["q_blk"][qi] = off
                off += 2 * q["q_NS"][qi]
        self.widths["blk"] = max(off, 1)
        nt_q = [qi for qi, _, _, _ in nts]
        # side by side, not per partitioning as the classes: a pass over every instance
        # (_fold_trailing, release_rows) then reads only its own queues' words
        nt_aoff, nt_eoff, nt_koff, widths = _blocks(
            [list(range(len(nts)))],
            [q["q_NS"][qi] for qi in nt_q],
            [q["q_A"][qi] for qi in nt_q],
            [q["q_M"][qi] for qi in nt_q],
            ("nqa", "nqe", "nq"),
        )
        self.widths.update(widths)
        self.widths["nq"] *= 4
        c_nt: list[list[int]] = [[] for _ in reps]
        for i, (_, src, _, _) in enumerate(nts):
            if src >= 0:
                c_nt[qs_c[src]].append(i)
        # a negated transition is read from its queue, apart from the other predecessors
        owner = self.owner()
        negated = {(gs, x) for gs, items in self.negs.items() for x, _, _ in items if x >= 0}
        edged = {(gs, x) for gs, items in self.edges.items() for x, _ in items}
        self.plain_preds = [
            [src for src in srcs if (gs, src) not in negated | edged]
            for gs, srcs in enumerate(self.preds)
        ]
        npreds = [
            [src for src in srcs if (gs, src) in negated - edged]
            for gs, srcs in enumerate(self.preds)
        ]
        npred_ptr, npred_src = _csr(npreds)
        _, npred_nt = _csr(
            [
                [kept[(qs_c[gs], qs_c[soff[owner[gs]] + src])] for src in srcs]
                for gs, srcs in enumerate(npreds)
            ]
        )
        c_nt_ptr, c_nt_flat = _csr(c_nt)
        ty_ns: list[list[int]] = [[] for _ in range(self.n_types)]
        for n in sorted({n for *_, n in nts if n >= 0}):  # the epochs that some queue reads
            typ = self.bindings[soff[n] + q["q_start"][n]][3]
            ty_ns[self.tcode[typ]].append(n)
        ty_ns_ptr, ty_ns_flat = _csr(ty_ns)
        self.tables.update(
            npred_ptr=npred_ptr,
            npred_src=npred_src,
            npred_nt=npred_nt,
            c_sig_ptr=c_sig_ptr,
            c_sig=c_sig,
            c_nt_ptr=c_nt_ptr,
            c_nt=c_nt_flat,
            nt_q=_i64(nt_q),
            nt_neg=_i64([n for *_, n in nts]),
            nt_NS=_i64([q["q_NS"][qi] for qi in nt_q]),
            nt_koff=_i64(nt_koff),
            nt_aoff=_i64(nt_aoff),  # scaled by the lanes in State
            nt_eoff=_i64(nt_eoff),
            ty_ns_ptr=ty_ns_ptr,
            ty_ns=ty_ns_flat,
        )
        self.edge_tables(nts, logs)

    def edge_logs(
        self, nts: list[tuple[int, int, int, int]], kept: dict[tuple[int, int], int]
    ) -> dict[tuple[int, int], int]:
        """The logs that NEXT conditions read (see :mod:`trendagg.kernels.edges`), added
        to ``nts``: a negated transition with conditions reads its own queue as a log
        (``kept``); any other, the log of its source class, which every transition from
        that class shares. Returns (state, source state) -> log, per transition with
        conditions, and sets each log's columns (the attributes its readers' conditions
        read on x) in ``self.log_columns``."""
        qs_c, reps, soff = self.qs_c, self.reps, self.q["q_soff"]
        owner = self.owner()
        negated = {(gs, x) for gs, items in self.negs.items() for x, _, _ in items if x >= 0}
        of_class: dict[int, int] = {}
        reads: dict[tuple[int, int], int] = {}
        self.log_columns: dict[int, list[str]] = {}
        for gs, items in sorted(self.edges.items()):
            for src, conds in items:
                sc = self.source_class(owner, gs, src)
                if (gs, src) in self.indexable:
                    continue
                if (gs, src) in negated:
                    log = kept[(qs_c[gs], sc)]
                else:
                    if sc not in of_class:
                        of_class[sc] = len(nts)
                        nts.append((reps[sc][0], soff[reps[sc][0]] + reps[sc][1], -1, -1))
                    log = of_class[sc]
                reads[(gs, src)] = log
                columns = self.log_columns.setdefault(log, [])
                columns += [a for a in read_attrs(conds, False) if a not in columns]
        return reads

    def edge_tables(
        self, nts: list[tuple[int, int, int, int]], reads: dict[tuple[int, int], int]
    ) -> None:
        """The stack programs of NEXT conditions and guards (:mod:`trendagg.kernels.edges`),
        the logs' columns, the ordered indexes (one per source class and key
        expression, with the program of the key; their readers compare a query
        program's value with ``op``), and per state the logs and indexes it reads."""
        self.edge_columns: list[str] = []
        consts: list[tuple[int, float]] = []
        self.programs: list[Program_] = []

        def column(name: str) -> int:
            return _index(self.edge_columns, name)

        def constant(kind: int, value: float) -> int:
            return _index(consts, (kind, value))

        def compiled(conds: list[ast.BoolExpr], slots: list[str]) -> int:
            self.programs.append(compile_program(conds, slots.index, column, constant, self.words))
            return len(self.programs) - 1

        epreds: list[list[tuple[int, int]]] = [[] for _ in self.preds]
        ipreds: list[list[tuple[int, int, int]]] = [[] for _ in self.preds]
        # an ordered index per (source class, key expression): its readers compare
        ixs: dict[tuple[int, str], int] = {}
        ix_q, ix_key, ix_NS, c_ix = [], [], [], [[] for _ in self.reps]
        owner = self.owner()
        for gs, items in sorted(self.edges.items()):
            for src, conds in items:
                if (gs, src) not in self.indexable:
                    log = reads[(gs, src)]
                    epreds[gs].append((log, compiled(conds, self.log_columns[log])))
                    continue
                (cond,) = conds
                assert isinstance(cond, ast.Comparison)
                op, key, query = index_sides(cond)
                sc = self.source_class(owner, gs, src)
                ix = ixs.get((sc, to_text(key)))
                if ix is None:
                    ix = ixs[(sc, to_text(key))] = len(ix_q)
                    rep = self.reps[sc][0]
                    ix_q.append(rep)
                    ix_NS.append(self.q["q_NS"][rep])
                    self.programs.append(compile_program(key, None, column, constant, self.words))
                    ix_key.append(len(self.programs) - 1)
                    c_ix[sc].append(ix)
                self.programs.append(compile_program(query, None, column, constant, self.words))
                ipreds[gs].append((ix, COMPARISONS[op], len(self.programs) - 1))
        g_pr = [-1] * len(self.preds)
        for gs, conds in self.guards.items():
            g_pr[gs] = compiled(conds, [])
        nt_col_ptr, nt_col = _csr(
            [[column(a) for a in self.log_columns.get(nt, [])] for nt in range(len(nts))]
        )
        epred_ptr, epred_nt = _csr([[log for log, _ in row] for row in epreds])
        _, epred_pr = _csr([[pr for _, pr in row] for row in epreds])
        ipred_ptr, ipred_ix = _csr([[ix for ix, _, _ in row] for row in ipreds])
        _, ipred_op = _csr([[op for _, op, _ in row] for row in ipreds])
        _, ipred_pr = _csr([[pr for _, _, pr in row] for row in ipreds])
        c_ix_ptr, c_ix_flat = _csr(c_ix)
        # per index and window slot: three words (window, root of the numbers' tree, of the
        # words'), and the totals of the keys ordered with nothing (NaN, booleans)
        ix_aoff, ix_eoff, ix_koff, widths = _blocks(
            [list(range(len(ix_q)))],
            ix_NS,
            [self.q["q_A"][qi] for qi in ix_q],
            [self.q["q_M"][qi] for qi in ix_q],
            ("ixa", "ixe", "ixh"),
        )
        self.widths.update(widths)
        self.widths["ixh"] *= 3
        pr_ptr, pr_code = _csr([p.code for p in self.programs])
        self.key_width = max([len(c) for c in self.log_columns.values()] + [1])
        self.stack = max([p.depth for p in self.programs] + [1])
        self.tables.update(
            nt_log=_i64([1 if nt in self.log_columns else 0 for nt in range(len(nts))]),
            nt_col_ptr=nt_col_ptr,
            nt_col=nt_col,
            epred_ptr=epred_ptr,
            epred_nt=epred_nt,
            epred_pr=epred_pr,
            g_pr=_i64(g_pr),
            ipred_ptr=ipred_ptr,
            ipred_ix=ipred_ix,
            ipred_op=ipred_op,
            ipred_pr=ipred_pr,
            ix_q=_i64(ix_q),
            ix_key=_i64(ix_key),
            ix_NS=_i64(ix_NS),
            ix_koff=_i64(ix_koff),
            ix_aoff=_i64(ix_aoff),  # scaled by the lanes in State
            ix_eoff=_i64(ix_eoff),
            c_ix_ptr=c_ix_ptr,
            c_ix=c_ix_flat,
            pr_ptr=pr_ptr,
            pr_code=pr_code,
            pr_ck=_i64([k for k, _ in consts]),
            pr_cv=np.array([v for _, v in consts] or [0.0], dtype=np.float64),
        )

    def sharing_sets(self, bursts: list[KleeneBurst]) -> None:
        """Sharing sets: per compiled burst of the plan (E+ of queries of one
        partitioning), one set per binding rule for E among its members, since the
        burst's coefficients count the events a rule binds (the plan's
        ``coefficient classes``); each member a class, its registers updated once by
        its representative; the weights and extremes a set's bursts carry; burst offsets."""
        q, plans, tcode = self.q, self.plans, self.tcode
        index = {p.name: qi for qi, p in enumerate(plans)}
        sets: list[tuple[str, int, int, list[tuple[int, int]]]] = []
        self.set_bursts: list[int] = []
        panes: list[Fraction] = []
        for i, burst in enumerate(bursts):
            for names in burst.classes():
                members = [
                    (index[n], self.state_names[index[n]].index(v))
                    for n, v in names
                    if not q["q_lazy"][index[n]]  # (see lazy_windows)
                ]
                if not members:
                    continue
                qi, s = members[0]
                f = self.bindings[q["q_soff"][qi] + s][2]
                sets.append((burst.type_, q["q_part"][qi], f, members))
                self.set_bursts.append(i)
                panes.append(burst.pane)  # the plan's: a burst lies in one pane of every member
        # a type in any member query's pattern interrupts the set's bursts (role 2)
        set_queries = [sorted({qi for qi, _ in entry[3]}) for entry in sets]
        for entry in sets:  # a class's registers are updated once, by its representative
            classes: list[int] = []
            for qi, st_ in entry[3]:
                if self.qs_c[q["q_soff"][qi] + st_] not in classes:
                    classes.append(self.qs_c[q["q_soff"][qi] + st_])
            entry[3][:] = [self.reps[c] for c in classes]
        self.sets = sets
        n = max(len(sets), 1)
        set_role = np.zeros((n, self.n_types), dtype=np.int64)
        set_wcol = np.zeros((n, 1 + len(self.weights)), dtype=np.int64)
        set_wmap = np.full((n, max(len(self.weights), 1)), -1, dtype=np.int64)
        set_acol = np.zeros((n, max(len(self.extremes), 1)), dtype=np.int64)
        set_amap = np.full((n, max(len(self.extremes), 1)), -1, dtype=np.int64)
        set_f, set_nw, set_eunits, set_na, set_boff, set_bfoff = [], [], [], [], [], []
        self.panes: list[Fraction] = []
        bw = bfw = 0
        for b, (typ, _g, f, members) in enumerate(sets):
            set_f.append(self._rule(f))
            for qi in set_queries[b]:
                for v in plans[qi].vars.values():
                    set_role[b, tcode[v.type]] = 2
            set_role[b, tcode[typ]] = 1
            wl: list[int] = []
            al: list[int] = []
            for qi, s in members:
                gs = q["q_soff"][qi] + s
                for _, w in self.sums[gs]:
                    _index(wl, w)
                for _, a in self.exts[gs]:
                    _index(al, a)
            for j, w in enumerate(wl):
                set_wcol[b, 1 + j] = w
                set_wmap[b, w] = 1 + j
            for j, a in enumerate(al):
                set_acol[b, j] = a
                set_amap[b, a] = j
            set_nw.append(1 + len(wl))
            set_eunits.append(burst_event_units(1 + len(wl)))
            set_na.append(len(al))
            set_boff.append(bw)
            set_bfoff.append(bfw)
            bw += 6 + (2 + 3 * (1 + len(wl)))  # times the lanes, see State
            bfw += 2 * len(al)
            self.panes.append(panes[b])
        self.widths["bur"] = max(bw, 1)
        self.widths["burf"] = max(bfw, 1)
        set_q_ptr, set_q = _csr([[qi for qi, _ in members] for *_, members in sets])
        _, set_s = _csr([[s for _, s in members] for *_, members in sets])
        self.tables.update(
            set_part=_i64([g for _, g, _, _ in sets]),
            set_role=set_role,
            set_f=_i64(set_f),
            set_q_ptr=set_q_ptr,
            set_q=set_q,
            set_s=set_s,
            set_nw=_i64(set_nw),
            set_eunits=_i64(set_eunits),
            cost_apply=_i64([APPLY_NUMERATOR, APPLY_DENOMINATOR]),
            set_wcol=set_wcol,
            set_wmap=set_wmap,
            set_na=_i64(set_na),
            set_acol=set_acol,
            set_amap=set_amap,
            set_boff=_i64(set_boff),  # scaled by the lanes in State
            set_bfoff=_i64(set_bfoff),
        )

    def _rule(self, f: int) -> int:
        """A filter id, or -1 when the filter accepts every event of its type."""
        return f if self.filters[f].required or self.filters[f].predicates else -1

    def type_bindings(self) -> None:
        """Per event type the bindings (query, state, filter, sharing set) it makes."""
        set_of_binding = {
            (qi, s): b for b, (*_, members) in enumerate(self.sets) for qi, s in members
        }
        ty_lists: list[list[int]] = [[] for _ in range(self.n_types)]
        for bi, (qi, _, _, typ) in enumerate(self.bindings):
            if qi >= 0 and qi not in self.on_gloria:
                ty_lists[self.tcode[typ]].append(bi)
        ty_ptr, ty_bind = _csr(ty_lists)
        self.tables.update(
            ty_ptr=ty_ptr,
            ty_bind=ty_bind,
            b_q=_i64([qi for qi, _, _, _ in self.bindings]),
            b_s=_i64([s for _, s, _, _ in self.bindings]),
            b_f=_i64([self._rule(f) for _, _, f, _ in self.bindings]),
            b_set=_i64([set_of_binding.get((qi, s), -1) for qi, s, _, _ in self.bindings]),
        )

    def roles(self) -> None:
        """part_role: 1 for a type some query of the partitioning binds, 2 when some query
        may bind several events of it in one trend (the lane bound, _rns); the window
        specs of each partitioning and their slots in the window-event counts."""
        plans, q = self.plans, self.q
        templates = [(p, t) for p in plans for t in p.template.all_templates()]
        reps = [_repeatable(t) for _, t in templates]
        repeatable = {p.vars[v].type for (p, _), r in zip(templates, reps, strict=True) for v in r}
        # a negative sub-pattern's matches are counted too (whether it has one is exact)
        self.singles = max(
            (len(t.states) - len(r) for (_, t), r in zip(templates, reps, strict=True)), default=0
        )
        part_role = np.zeros((len(self.parts), self.n_types), dtype=np.int64)
        part_sp_lists: list[list[int]] = []
        for g, pt in enumerate(self.parts):
            sps: list[int] = []
            for qi in pt.queries:
                for v in plans[qi].vars.values():
                    part_role[g, self.tcode[v.type]] = 2 if v.type in repeatable else 1
                _index(sps, q["q_spec"][qi])
            part_sp_lists.append(sps)
        part_sp_ptr, part_sp = _csr(part_sp_lists)
        sp_NS = [
            0 if lazy else math.ceil(s.within / s.slide) + 1
            for s, lazy in zip(self.specs, self.lazy, strict=True)
        ]
        self.widths["m"] = max(sum(sp_NS), 1)
        self.tables.update(
            part_role=part_role,
            part_sp_ptr=part_sp_ptr,
            part_sp=part_sp,
            sp_NS=_i64(sp_NS),
            sp_moff=_i64([int(x) for x in np.cumsum([0] + sp_NS[:-1])]),
            # 1: an event may be processed in more instances than its own (qualified)
            part_x=_i64([1 if pt.qualified else 0 for pt in self.parts]),
        )

    def template_classes(self) -> None:
        """The state classes whose registers are their template's in every instance
        (``c_tmpl``): in a partitioning with qualified attributes, a class that only
        wildcard events reach (its states and, transitively, their predecessors bind
        types the qualified attributes do not apply to) holds, in each instance, the
        vertices of the same events as in the template of its key, which sees each of
        them too (see :class:`Partitioning`). Such a class is processed in the template
        alone and read there (``st.itmpl``) by the states of every instance: a request
        is one vertex per driver, not one per district partition of its driver.

        Not for a class with results (END: a template has no group), a burst's (its
        registers wait for the burst's flush in each instance), or one that queues
        (NOT), logs or indexes (NEXT) read, or of a query with a NOT or a NEXT
        condition: those keep per-instance state beside the registers."""
        q, t = self.q, self.tables
        n_all = len(q["q_spec"])
        in_burst = {(qi, s) for *_, members in self.sets for qi, s in members}
        end_ptr = t["c_end_ptr"].tolist()  # type: ignore[attr-defined]
        nt_ptr = t["c_nt_ptr"].tolist()  # type: ignore[attr-defined]
        ix_ptr = t["c_ix_ptr"].tolist()  # type: ignore[attr-defined]
        ok = [
            end_ptr[c] == end_ptr[c + 1]
            and nt_ptr[c] == nt_ptr[c + 1]
            and ix_ptr[c] == ix_ptr[c + 1]
            for c in range(len(self.reps))
        ]
        states: list[tuple[int, int]] = []  # (global state, class)
        owner = self.owner()
        for qi in range(n_all):
            part = self.parts[q["q_part"][qi]]
            lo, hi = q["q_soff"][qi], q["q_soff"][qi] + q["q_S"][qi]
            plain = (
                qi not in self.on_gloria
                and q["q_nkind"][qi] < 0
                and q["q_blk"][qi] < 0
                and q["q_trail"][qi] < 0
                and not any(
                    gs in self.negs or gs in self.edges or gs in self.guards for gs in range(lo, hi)
                )
            )
            for gs in range(lo, hi):
                c = int(self.qs_c[gs])
                states.append((gs, c))
                wild = bool(part.qualified) and self.bindings[gs][3] != part.qualified[0]
                if not (plain and wild and (qi, gs - lo) not in in_burst):
                    ok[c] = False
        changed = True
        while changed:  # the greatest fixpoint: every predecessor's class is one too
            changed = False
            for gs, c in states:
                preds = (self.source_class(owner, gs, src) for src in self.preds[gs])
                if ok[c] and not all(ok[p] for p in preds):
                    ok[c] = False
                    changed = True
        t["c_tmpl"] = _i64([1 if x else 0 for x in ok])

    def gloria(self, qsets: Sequence[GloriaQSet]) -> None:
        """The snapshot kernel's tables for the member queries (see gloria_program)."""
        q = self.q
        layouts = {}
        types_of = {}
        for qi in sorted(self.on_gloria):
            plan = self.plans[qi]
            off = q["q_soff"][qi]
            states = {var: s for s, var in enumerate(self.state_names[qi])}
            layouts[plan.name] = QueryLayout(
                qi,
                q["q_spec"][qi],
                q["q_part"][qi],
                q["q_A"][qi],
                q["q_M"][qi],
                q["q_nmin"][qi],
                q["q_NS"][qi],
                states,
                {var: self._rule(self.bindings[off + s][2]) for var, s in states.items()},
                {var: list(self.cnt[off + s]) for var, s in states.items()},
                {var: list(self.sums[off + s]) for var, s in states.items()},
                {var: list(self.exts[off + s]) for var, s in states.items()},
            )
            types_of[plan.name] = {v: info.type for v, info in plan.vars.items()}
        member_plans = [self.plans[qi] for qi in sorted(self.on_gloria)]
        self.gloria_low = lower_gloria(
            contexts(member_plans, qsets), layouts, self.tcode, self.n_types, types_of
        )

    def lowered(self) -> Lowered:
        # predecessors read in the instance, and those read in its template (see
        # template_classes; a list of their own keeps the other reads as they were)
        tmpl, owner = self.tables["c_tmpl"], self.owner()
        in_template = [
            [src for src in srcs if tmpl[self.source_class(owner, gs, src)]]  # type: ignore[index]
            for gs, srcs in enumerate(self.plain_preds)
        ]
        pred_ptr, pred_src = _csr(  # (negated ones: npred_*)
            [
                [src for src in srcs if src not in tpreds]
                for srcs, tpreds in zip(self.plain_preds, in_template, strict=True)
            ]
        )
        tpred_ptr, tpred_src = _csr(in_template)
        # per predecessor of a lazy state: the positions of its class's ancestors among
        # those of the state's class (see lazy_tables)
        lpm: list[list[int]] = []
        for gs in range(len(self.preds)):
            c = self.qs_c[gs]
            for j in range(int(pred_ptr[gs]), int(pred_ptr[gs + 1])):
                pc = self.source_class(owner, gs, int(pred_src[j]))
                where = {d: i for i, d in enumerate(self.anc[c])}
                lpm.append([where[d] for d in self.anc[pc]] if self.q["q_lazy"][owner[gs]] else [])
        lpm_ptr, lpm_flat = _csr(lpm)
        cnt_ptr, cnt_reg = _csr(self.cnt)
        sum_ptr, sum_reg = _csr([[r for r, _ in row] for row in self.sums])
        _, sum_w = _csr([[w for _, w in row] for row in self.sums])
        ext_ptr, ext_reg = _csr([[r for r, _ in row] for row in self.exts])
        _, ext_a = _csr([[a for _, a in row] for row in self.exts])
        program = Program(
            **{name: _i64(values) for name, values in self.q.items()},
            **self.tables,
            pred_ptr=pred_ptr,
            pred_src=pred_src,
            tpred_ptr=tpred_ptr,
            tpred_src=tpred_src,
            lpm_ptr=lpm_ptr,
            lpm=lpm_flat,
            cnt_ptr=cnt_ptr,
            cnt_reg=cnt_reg,
            sum_ptr=sum_ptr,
            sum_reg=sum_reg,
            sum_w=sum_w,
            ext_ptr=ext_ptr,
            ext_reg=ext_reg,
            ext_a=ext_a,
        )
        return Lowered(
            plans=self.plans,
            program=program,
            types=self.types,
            specs=self.specs,
            panes=self.panes,
            partitionings=self.parts,
            grouping_of=self.grouping_of,
            filters=self.filters,
            weights=self.weights,
            extremes=self.extremes,
            widths=self.widths,
            group_widths=self.group_widths,
            query_groups=self.query_groups,
            singles=self.singles,
            max_additive=max(self.q["q_A"], default=1),
            max_extreme=max(max(self.q["q_M"], default=0), 1),
            set_types=[s[0] for s in self.sets],
            class_members=self.members,
            set_bursts=self.set_bursts,
            readouts=self.readouts,
            class_query=[qi for qi, _ in self.reps],
            mixed=self.mixed,
            edge_columns=self.edge_columns,
            words=self.words,
            programs=self.programs,
            key_width=self.key_width,
            stack=self.stack,
            gloria=self.gloria_low,
        )


_NEGATION_FIELDS = ["q_nkind", "q_nparent", "q_nnt", "q_blk", "q_trail"]
_QUERY_FIELDS = [
    *_NEGATION_FIELDS,
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


def shared_classes(low: Lowered) -> list[str]:
    """The state classes of several states (their registers kept once), as explain prints
    them: ``{q1.T, q2.T}``, in the order of their first member."""
    return [_class_text(members) for members in low.class_members if len(members) > 1]


def template_read_classes(low: Lowered) -> list[str]:
    """The state classes kept in the template partition alone and read there from every
    partition of its key (``c_tmpl``: only wildcard events reach them), as explain
    prints them: ``{q1.R}``."""
    flags = low.program.c_tmpl.tolist()
    return [_class_text(m) for m, flag in zip(low.class_members, flags, strict=True) if flag]


def lazy_window_specs(low: Lowered) -> list[str]:
    """The window specs the kernel keeps by the start of the trends (lazy windows, see
    :meth:`_Lowering.lazy_windows`) with their queries, as explain prints them:
    ``WITHIN 86400 s SLIDE 1 s (q1, q2)``."""
    prog = low.program
    texts = []
    for sp, spec in enumerate(low.specs):
        if prog.sp_lazy[sp]:
            names = [p.name for qi, p in enumerate(low.plans) if prog.q_spec[qi] == sp]
            texts.append(
                f"WITHIN {as_number(spec.within)} s SLIDE {as_number(spec.slide)} s "
                f"({', '.join(names)})"
            )
    return texts


def _class_text(members: list[tuple[str, str]]) -> str:
    """A state class as explain prints it: its (query, variable)s, ``{q1.T, q2.T}``."""
    return "{" + ", ".join(f"{q}.{v}" for q, v in members) + "}"


def _index(items: list, item: object) -> int:  # type: ignore[type-arg]
    """The position of ``item`` in ``items``, appended first when it is not there."""
    if item not in items:
        items.append(item)
    return items.index(item)


def scaled(program: Program, lanes: int) -> Program:
    """The program with its additive offsets in int64 units for ``lanes`` lanes."""
    return program._replace(
        c_toff=program.c_toff * lanes,
        q_roff=program.q_roff * lanes,
        nt_aoff=program.nt_aoff * lanes,
        ix_aoff=program.ix_aoff * lanes,
        set_boff=_boff(program, lanes),
        c_lg=program.c_lg * lanes,
        c_ly=program.c_ly * lanes,
        c_ldi=program.c_ldi * lanes,
        j_ld=program.j_ld * lanes,
        q_lroff=program.q_lroff * lanes,
    )


def _boff(program: Program, lanes: int) -> np.ndarray:
    out = []
    off = 0
    for b in range(len(program.set_boff)):
        out.append(off)
        off += 6 + (2 + 3 * int(program.set_nw[b])) * lanes
    return np.array(out, dtype=np.int64)


def burst_width(program: Program, lanes: int) -> int:
    return max(sum(6 + (2 + 3 * int(nw)) * lanes for nw in program.set_nw), 1)
