"""Qualified-partition templates: with qualified partition attributes (``[B.g]``), the
events of the other types are wildcards, processed in the template instance of their
key and in every instance that agrees with it (see
:class:`~trendagg.kernels.lower.builder.Partitioning`). A state class that only wildcard
events reach is kept in the template alone and read there by the states of every
instance (``c_tmpl``, ``tpred_*``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from trendagg.kernels.lower.builder import Builder, csr, i64
from trendagg.kernels.lower.core import class_text

if TYPE_CHECKING:
    from trendagg.kernels.lower.program import Lowered


def template_classes(b: Builder) -> None:
    """Pass: the state classes whose registers are their template's in every instance
    (``c_tmpl``): in a partitioning with qualified attributes, a class that only
    wildcard events reach (its states and, transitively, their predecessors bind
    types the qualified attributes do not apply to) holds, in each instance, the
    vertices of the same events as in the template of its key, which sees each of
    them too. Such a class is processed in the template alone and read there
    (``st.itmpl``) by the states of every instance: a request is one vertex per
    driver, not one per district partition of its driver.

    Not for a class with results (END: a template has no group), a burst's (its
    registers wait for the burst's flush in each instance), or one that queues
    (NOT), logs or indexes (NEXT) read, or of a query with a NOT or a NEXT
    condition: those keep per-instance state beside the registers."""
    q, t = b.q, b.tables
    n_all = len(q["q_spec"])
    in_burst = {(qi, s) for *_, members in b.sets for qi, s in members}
    end_ptr = t["c_end_ptr"].tolist()  # type: ignore[attr-defined]
    nt_ptr = t["c_nt_ptr"].tolist()  # type: ignore[attr-defined]
    ix_ptr = t["c_ix_ptr"].tolist()  # type: ignore[attr-defined]
    ok = [
        end_ptr[c] == end_ptr[c + 1] and nt_ptr[c] == nt_ptr[c + 1] and ix_ptr[c] == ix_ptr[c + 1]
        for c in range(len(b.reps))
    ]
    states: list[tuple[int, int]] = []  # (global state, class)
    owner = b.owner()
    for qi in range(n_all):
        part = b.parts[q["q_part"][qi]]
        lo, hi = q["q_soff"][qi], q["q_soff"][qi] + q["q_S"][qi]
        plain = b.plain(qi)
        for gs in range(lo, hi):
            c = int(b.qs_c[gs])
            states.append((gs, c))
            wild = bool(part.qualified) and b.bindings[gs][3] != part.qualified[0]
            if not (plain and wild and (qi, gs - lo) not in in_burst):
                ok[c] = False
    changed = True
    while changed:  # the greatest fixpoint: every predecessor's class is one too
        changed = False
        for gs, c in states:
            preds = (b.source_class(owner, gs, src) for src in b.preds[gs])
            if ok[c] and not all(ok[p] for p in preds):
                ok[c] = False
                changed = True
    t["c_tmpl"] = i64([1 if x else 0 for x in ok])


def template_reads(b: Builder) -> None:
    """Pass: the plain predecessors of each state (not through a queue or a log) read in
    its instance (``pred_*``) and those read in its template (``tpred_*``: of a class
    kept there; a list of their own keeps the other reads as they were)."""
    tmpl, owner = b.tables["c_tmpl"], b.owner()
    in_template = [
        [src for src in srcs if tmpl[b.source_class(owner, gs, src)]]  # type: ignore[index]
        for gs, srcs in enumerate(b.plain_preds)
    ]
    b.tables["pred_ptr"], b.tables["pred_src"] = csr(  # (negated ones: npred_*)
        [
            [src for src in srcs if src not in tpreds]
            for srcs, tpreds in zip(b.plain_preds, in_template, strict=True)
        ]
    )
    b.tables["tpred_ptr"], b.tables["tpred_src"] = csr(in_template)


def template_read_classes(low: Lowered) -> list[str]:
    """The state classes kept in the template partition alone and read there from every
    partition of its key (``c_tmpl``: only wildcard events reach them), as explain
    prints them: ``{q1.R}``."""
    flags = low.program.c_tmpl.tolist()
    return [class_text(m) for m, flag in zip(low.class_members, flags, strict=True) if flag]
