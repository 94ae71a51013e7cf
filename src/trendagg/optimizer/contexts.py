"""What the events of each type hold under a GLORIA plan: its *contexts*.

A plan of GLORIA's optimizer (or a SHARON plan lowered to Q-sets,
:func:`~trendagg.optimizer.plan.sequence_qsets`) gives every transition ``Ei -> Ej`` of
its queries a Q-set (:class:`~trendagg.optimizer.plan.GloriaQSet`). An event e of type E
holds one *representation* per context: a Q-set S of a transition that leaves E (or,
where a query ends at E and nothing leaves it, the Q-set it arrived with). Its
representation in S is computed from the running totals of the Q-sets it arrives
through (spec ``../shared/specs/gloria.md``, section 3.2):

- a total is *reused* when every query of S arrives through it, with S's label, which
  is not E: its coefficients are added once for all of S (a shared propagation);
- else it is *evaluated* per query into values.

Then the queries that start at E add a trend; if S's label is E, the event takes a
local snapshot; the queries that end at E add to their results; and the
representation joins the total of (E, S) when a transition leaves E in S.

Both executors of such plans read these contexts: the readable one
(:mod:`trendagg.reference.gloria`) and the compiled kernel's lowering
(:mod:`trendagg.kernels.lower.snapshots`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from trendagg.optimizer.plan import GloriaQSet
from trendagg.plan.compile import QueryPlan, binding_rule

QKey = tuple[tuple[str, ...], str | None]  # a Q-set: its queries and label


@dataclass(frozen=True)
class Incoming:
    """The queries of a context that arrive through ``source -> E`` in Q-set ``qset``,
    and whether its coefficients are reused for the whole context (else evaluated)."""

    source: str
    qset: QKey
    queries: tuple[str, ...]
    reuse: bool


@dataclass(frozen=True)
class Context:
    """A Q-set as the events of one type hold it: its queries and label, where their
    trends come from, which queries start and end here, and whether the events take
    snapshots (the label is their type) and are totalled (a transition reads them).
    ``key`` names its total: (the events' type, key) is the total's address.
    ``binder``: (a query, its variable of the type): the queries bind the events alike."""

    key: QKey
    queries: tuple[str, ...]
    label: str | None
    incoming: tuple[Incoming, ...]
    starts: frozenset[str]
    ends: tuple[str, ...]
    snapshot: bool
    totalled: bool
    binder: tuple[str, str]


def contexts(plans: Sequence[QueryPlan], qsets: Sequence[GloriaQSet]) -> dict[str, list[Context]]:
    """Per event type, the contexts its events hold under ``qsets`` (for the queries
    ``plans``, which the Q-sets cover), in a fixed order."""
    by_name = {p.name: p for p in plans}
    qset_of: dict[tuple[str, tuple[str, str]], QKey] = {}
    for s in qsets:
        for q in s.queries:
            if q in by_name:
                qset_of[(q, (s.source, s.target))] = (s.queries, s.label)
    trans: dict[str, list[tuple[str, str]]] = {}
    for p in plans:
        typ = {v: info.type for v, info in p.vars.items()}
        trans[p.name] = [(typ[t.src], typ[t.dst]) for t in p.template.transitions]
    start = {p.name: p.vars[p.template.start].type for p in plans}
    end = {p.name: p.vars[p.template.end].type for p in plans}
    held = _continuations(plans, trans, qset_of, start)

    def through(q: str, tr: tuple[str, str]) -> QKey:
        """The Q-set whose total of tr's source events q's transition tr reads."""
        return held.get((q, tr[0]), qset_of[(q, tr)])

    at: dict[str, list[Context]] = {}
    for e in sorted({t for p in plans for t in p.template.types}):
        found: dict[tuple[object, ...], tuple[QKey, list[str], bool]] = {}
        for p in plans:
            q = p.name
            if e not in p.template.types:
                continue
            outs = [tr for tr in trans[q] if tr[0] == e]
            if (q, e) in held:  # it goes on privately from a shared total: held once
                key = held[(q, e)]
                found.setdefault(key, (key, [], True))[1].append(q)
                continue
            for tr in outs:
                key = qset_of[(q, tr)]
                found.setdefault(key, (key, list(key[0]), True))
            if not outs:  # q ends here: it arrived in this Q-set
                ins = [tr for tr in trans[q] if tr[1] == e]
                key = qset_of[(q, ins[0])]
                found.setdefault((key, "end"), (key, [], False))[1].append(q)
        ended: set[str] = set()
        out = []
        for key, queries, totalled in found.values():
            groups: dict[tuple[str, QKey], list[str]] = {}
            for q in queries:
                for tr in trans[q]:
                    if tr[1] == e:
                        groups.setdefault((tr[0], through(q, tr)), []).append(q)
            label = key[1]
            incoming = tuple(
                Incoming(
                    src,
                    in_key,
                    tuple(qs),
                    len(qs) == len(queries) and label is not None and in_key[1] == label != e,
                )
                for (src, in_key), qs in groups.items()
            )
            ends = tuple(q for q in queries if end[q] == e and q not in ended)
            ended.update(ends)
            out.append(
                Context(
                    key if totalled else (tuple(queries), label),
                    tuple(queries),
                    label,
                    incoming,
                    frozenset(q for q in queries if start[q] == e),
                    ends,
                    label == e,
                    totalled,
                    (queries[0], by_name[queries[0]].type_to_var[e]),
                )
            )
        at[e] = out
    return at


def _continuations(
    plans: Sequence[QueryPlan],
    trans: dict[str, list[tuple[str, str]]],
    qset_of: dict[tuple[str, tuple[str, str]], QKey],
    start: dict[str, str],
) -> dict[tuple[str, str], QKey]:
    """Where a query arrives at type E only through a labelled Q-set S (not labelled E)
    and goes on from E only in its own non-shared Q-sets (SHARON's shared sub-sequence
    followed by a private part): (query, E) -> S. Its events of E then hold S once for
    all those queries (a shared propagation of S's coefficients), and the transitions
    leaving E evaluate that total per query. Evaluating at E instead, per query, event
    and snapshot, gives the same values (an evaluation is linear in the entries) at more
    cost. The queries of S must bind E alike (their rule for E; the optimizers share a
    transition only so)."""
    by_name = {p.name: p for p in plans}
    held: dict[tuple[str, str], QKey] = {}
    rule_of: dict[tuple[str, QKey], tuple[object, ...]] = {}
    for p in plans:
        q = p.name
        for e in p.template.types:
            ins = {qset_of[(q, tr)] for tr in trans[q] if tr[1] == e}
            outs = [qset_of[(q, tr)] for tr in trans[q] if tr[0] == e]
            if len(ins) != 1 or not outs or start[q] == e:
                continue
            (key,) = ins
            if key[1] is None or key[1] == e or any(o != ((q,), None) for o in outs):
                continue
            rule = binding_rule(by_name[q], e)
            if rule_of.setdefault((e, key), rule) != rule:
                continue
            held[(q, e)] = key
    return held


__all__ = ["Context", "Incoming", "QKey", "contexts"]
