"""Negation: negative sub-patterns (GRETA, Section 5) as queries of their own, after the
workload's (``q_nkind`` >= 0; nested ones after their parent). A negative query keeps,
per window, whether it has a match and the latest start of its matches (the maximum of
its start variable's :data:`~trendagg.kernels.lower.core.TIME_GROUP`); the kernel
signals each match, when its END vertex is inserted, to its parent query:

- leading (``SEQ(NOT N, Pj, ..)``): the parent's start state starts no trend in that
  window after the match's end (``q_blk``: blocked slots);
- trailing (``SEQ(.., Pi, NOT N)``): the parent's results of that window that end before
  the match's start are dropped (``q_trail``: its results wait in a queue of their own
  per partition instance until the window closes);
- between (``SEQ(.., Pi, NOT N, Pj, ..)``): the vertices of end(Pi) older than the
  match's start stop being predecessors of start(Pj), in every window (the transition
  reads a queue of its own, ``npred_*``).

A queue (``nt_*``, per partition instance and window slot) holds the registers of the
vertices that reach it, one entry per epoch between two events of the negative query's
start type (a match starts at such an event, so pruning drops whole entries), and their
running total. The states whose registers a negation changes (the start, after a
leading NOT; the target of a negated transition) are merged only with states that the
same negative sub-pattern changes alike (see ``core._state_classes`` and
:func:`queue_tables`). The logs that NEXT conditions read are queues too, added by
:func:`trendagg.kernels.lower.edges.logs` between :func:`queues` and :func:`queue_tables`.
"""

from __future__ import annotations

import itertools

from trendagg.kernels.lower.builder import (
    NEGATION_FIELDS,
    Builder,
    Readout,
    blocks,
    csr,
    i64,
    index_of,
)
from trendagg.kernels.lower.core import TIME_GROUP, states
from trendagg.plan.compile import QueryPlan
from trendagg.plan.template import Negation, Template

NEGATION_KINDS = {"leading": 0, "trailing": 1, "between": 2}


def negations(b: Builder) -> None:
    """Pass: the negative sub-patterns of every query as queries of their own (see the
    module docstring), and what each acts on in its parent."""
    for qi in range(len(b.plans)):
        _negations(b, qi, b.plans[qi], b.plans[qi].template)


def _negations(b: Builder, qi: int, plan: QueryPlan, template: Template) -> None:
    q = b.q
    for i, neg in enumerate(template.negations):
        tg = index_of(b.extremes, TIME_GROUP)
        n = len(q["q_spec"])
        for name in ("q_spec", "q_part"):
            q[name].append(q[name][qi])
        q["q_gsel"].append(0)
        q["q_grouping"].append(-1)  # no results: its matches signal its parent
        for name in NEGATION_FIELDS:
            q[name].append(-1)
        q["q_nkind"][n] = NEGATION_KINDS[neg.kind]
        q["q_nparent"][n] = qi
        b.readouts.append(Readout((), ((0, tg, -1),), (tg,)))
        states(b, n, plan, neg.template, [], [(neg.template.start, 0, tg)], (1, 0))
        _connect(b, qi, template, i, neg, n)
        _negations(b, n, plan, neg.template)


def _connect(b: Builder, qi: int, template: Template, i: int, neg: Negation, n: int) -> None:
    """What negative query ``n`` (NOT number ``i`` of ``template``, query ``qi``) acts on."""
    q = b.q
    names = b.state_names[qi]
    if neg.kind == "leading":
        q["q_blk"][qi] = 1  # laid out in queue_tables()
        start = q["q_soff"][qi] + names.index(template.start)
        b.negs.setdefault(start, []).append((-1, n, q["q_end"][n]))
    elif neg.kind == "trailing":  # (queues numbered in queues())
        b.nts.append((qi, -1, -1, n))
    else:
        t = next(t for t in template.transitions if t.negation == i)
        src, dst = names.index(t.src), names.index(t.dst)
        b.nts.append((qi, q["q_soff"][qi] + src, dst, n))
        b.negs.setdefault(q["q_soff"][qi] + dst, []).append((src, n, q["q_end"][n]))


def queues(b: Builder) -> None:
    """Pass: the queues kept, numbered (``b.queues``): per trailing NOT its query's result
    queue, per negated transition its queue when its target is its class's
    representative's (``b.kept``).

    States merged across queries (see ``core._state_classes``) are computed once, by
    their class's representative: a merged target of negated transitions reads only its
    representative's queue, and a merged start only its blocked slots, so the other
    members' queues are not kept and their negative queries (of the same class, with the
    same matches) signal nothing."""
    q = b.q
    qs_c, reps, soff = b.qs_c, b.reps, q["q_soff"]
    for qi, src, dst, n in b.nts:
        if src < 0:  # trailing: the query's own results
            q["q_nnt"][n] = q["q_trail"][qi] = len(b.queues)
            b.queues.append((qi, src, dst, n))
        elif reps[qs_c[soff[qi] + dst]] == (qi, dst):
            b.kept[(qs_c[soff[qi] + dst], qs_c[src])] = q["q_nnt"][n] = len(b.queues)
            b.queues.append((qi, src, dst, n))
        else:
            q["q_nnt"][n] = -1


def _signals(b: Builder) -> None:
    """The END classes' queries: plain results (``c_end``) apart from the signals of
    negative queries and the results that wait in a trailing queue (``c_sig``); the
    negative queries whose queue or blocked slots are not kept signal nothing."""
    q, nts = b.q, b.queues
    qs_c, reps, soff = b.qs_c, b.reps, q["q_soff"]
    silent = {n for n in range(len(q["q_spec"])) if q["q_nkind"][n] == 2}
    silent -= {n for *_, n in nts}
    for qi in range(len(q["q_spec"])):
        start = soff[qi] + q["q_start"][qi]
        if q["q_blk"][qi] >= 0 and reps[qs_c[start]] != (qi, q["q_start"][qi]):
            silent |= {n for _, n, _ in b.negs[start]}
    ends = [
        [int(x) for x in b.tables["c_end_q"][lo:hi]]  # type: ignore[index]
        for lo, hi in itertools.pairwise(b.tables["c_end_ptr"].tolist())  # type: ignore[attr-defined]
    ]
    special = {
        qi for qi in range(len(q["q_spec"])) if q["q_nkind"][qi] >= 0 or q["q_trail"][qi] >= 0
    }
    b.tables["c_end_ptr"], b.tables["c_end_q"] = csr(
        [[x for x in row if x not in special] for row in ends]
    )
    b.tables["c_sig_ptr"], b.tables["c_sig"] = csr(
        [[x for x in row if x in special and x not in silent] for row in ends]
    )


def queue_tables(b: Builder) -> None:
    """Pass: blocked slots (two words per window slot: window, end of the first match)
    of the queries with a leading NOT; per queue (a negated transition's, a trailing
    result queue, a NEXT log) its slots (four words each in ``nq``: window, first and
    last entry, entries), running totals and the classes that feed it; which
    predecessor reads a queue; and per type the negative queries it starts (a new epoch
    of their queues)."""
    q, nts = b.q, b.queues
    qs_c, soff = b.qs_c, q["q_soff"]
    _signals(b)
    off = 0
    for qi in range(len(q["q_spec"])):
        if q["q_blk"][qi] >= 0:
            q["q_blk"][qi] = off
            off += 2 * q["q_NS"][qi]
    b.widths["blk"] = max(off, 1)
    nt_q = [qi for qi, _, _, _ in nts]
    # side by side, not per partitioning as the classes: a pass over every instance
    # (_fold_trailing, release_rows) then reads only its own queues' words
    nt_aoff, nt_eoff, nt_koff, widths = blocks(
        [list(range(len(nts)))],
        [q["q_NS"][qi] for qi in nt_q],
        [q["q_A"][qi] for qi in nt_q],
        [q["q_M"][qi] for qi in nt_q],
        ("nqa", "nqe", "nq"),
    )
    b.widths.update(widths)
    b.widths["nq"] *= 4
    c_nt: list[list[int]] = [[] for _ in b.reps]
    for i, (_, src, _, _) in enumerate(nts):
        if src >= 0:
            c_nt[qs_c[src]].append(i)
    # a negated transition is read from its queue, apart from the other predecessors
    owner = b.owner()
    negated = {(gs, x) for gs, items in b.negs.items() for x, _, _ in items if x >= 0}
    edged = {(gs, x) for gs, items in b.edges.items() for x, _ in items}
    b.plain_preds = [
        [src for src in srcs if (gs, src) not in negated | edged] for gs, srcs in enumerate(b.preds)
    ]
    npreds = [
        [src for src in srcs if (gs, src) in negated - edged] for gs, srcs in enumerate(b.preds)
    ]
    npred_ptr, npred_src = csr(npreds)
    _, npred_nt = csr(
        [
            [b.kept[(qs_c[gs], qs_c[soff[owner[gs]] + src])] for src in srcs]
            for gs, srcs in enumerate(npreds)
        ]
    )
    c_nt_ptr, c_nt_flat = csr(c_nt)
    ty_ns: list[list[int]] = [[] for _ in range(b.n_types)]
    for n in sorted({n for *_, n in nts if n >= 0}):  # the epochs that some queue reads
        typ = b.bindings[soff[n] + q["q_start"][n]][3]
        ty_ns[b.tcode[typ]].append(n)
    ty_ns_ptr, ty_ns_flat = csr(ty_ns)
    b.tables.update(
        npred_ptr=npred_ptr,
        npred_src=npred_src,
        npred_nt=npred_nt,
        c_nt_ptr=c_nt_ptr,
        c_nt=c_nt_flat,
        nt_q=i64(nt_q),
        nt_neg=i64([n for *_, n in nts]),
        nt_NS=i64([q["q_NS"][qi] for qi in nt_q]),
        nt_koff=i64(nt_koff),
        nt_aoff=i64(nt_aoff),  # scaled by the lanes in State
        nt_eoff=i64(nt_eoff),
        ty_ns_ptr=ty_ns_ptr,
        ty_ns=ty_ns_flat,
    )
