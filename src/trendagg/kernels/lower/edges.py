"""Edges: the NEXT conditions of transitions as the kernel reads them. A transition
whose one NEXT condition reads ``key(x) op query(y)`` (on no NOT) reads an ordered index
of its source class's vertices by key; any other transition with NEXT conditions reads
the log of its source class (the source vertices one by one, with the values the
conditions read) through a stack program (:mod:`trendagg.kernels.edges` compiles the
conditions). A log is a queue of the negation's kind (see
:mod:`~trendagg.kernels.lower.negation`): :func:`logs` adds them between the negation's
:func:`~trendagg.kernels.lower.negation.queues` and its queue tables, and
:func:`programs` lays out the programs, the logs' columns and the indexes.
"""

from __future__ import annotations

import numpy as np

from trendagg.kernels.edges import COMPARISONS, compile_program, index_sides, read_attrs
from trendagg.kernels.lower.builder import Builder, blocks, csr, i64, index_of
from trendagg.language import ast, to_text


def edge_keys(b: Builder) -> dict[int, list[tuple[int, str]]]:
    """Per state with NEXT conditions or guards: (source state or -1 for the guards,
    the conditions as text), for ``core._state_classes``."""
    out: dict[int, list[tuple[int, str]]] = {}
    for gs, items in b.edges.items():
        out[gs] = [(src, " AND ".join(sorted(map(to_text, conds)))) for src, conds in items]
    for gs, conds in b.guards.items():
        out.setdefault(gs, []).append((-1, " AND ".join(sorted(map(to_text, conds)))))
    return out


def logs(b: Builder) -> None:
    """Pass: the logs that NEXT conditions read, added to the queues: a negated
    transition with conditions reads its own queue as a log (``b.kept``); any other, the
    log of its source class, which every transition from that class shares. Sets
    (state, source state) -> log, per transition with conditions (``b.log_reads``), and
    each log's columns (the attributes its readers' conditions read on x) in
    ``b.log_columns``."""
    nts, kept = b.queues, b.kept
    qs_c, reps, soff = b.qs_c, b.reps, b.q["q_soff"]
    owner = b.owner()
    negated = {(gs, x) for gs, items in b.negs.items() for x, _, _ in items if x >= 0}
    of_class: dict[int, int] = {}
    reads: dict[tuple[int, int], int] = {}
    b.log_columns = {}
    for gs, items in sorted(b.edges.items()):
        for src, conds in items:
            sc = b.source_class(owner, gs, src)
            if (gs, src) in b.indexable:
                continue
            if (gs, src) in negated:
                log = kept[(qs_c[gs], sc)]
            else:
                if sc not in of_class:
                    of_class[sc] = len(nts)
                    nts.append((reps[sc][0], soff[reps[sc][0]] + reps[sc][1], -1, -1))
                log = of_class[sc]
            reads[(gs, src)] = log
            columns = b.log_columns.setdefault(log, [])
            columns += [a for a in read_attrs(conds, False) if a not in columns]
    b.log_reads = reads


def programs(b: Builder) -> None:
    """Pass: the stack programs of NEXT conditions and guards (:mod:`trendagg.kernels.edges`),
    the logs' columns, the ordered indexes (one per source class and key
    expression, with the program of the key; their readers compare a query
    program's value with ``op``), and per state the logs and indexes it reads."""
    nts, reads = b.queues, b.log_reads
    b.edge_columns = []
    consts: list[tuple[int, float]] = []
    b.programs = []

    def column(name: str) -> int:
        return index_of(b.edge_columns, name)

    def constant(kind: int, value: float) -> int:
        return index_of(consts, (kind, value))

    def compiled(conds: list[ast.BoolExpr], slots: list[str]) -> int:
        b.programs.append(compile_program(conds, slots.index, column, constant, b.words))
        return len(b.programs) - 1

    epreds: list[list[tuple[int, int]]] = [[] for _ in b.preds]
    ipreds: list[list[tuple[int, int, int]]] = [[] for _ in b.preds]
    # an ordered index per (source class, key expression): its readers compare
    ixs: dict[tuple[int, str], int] = {}
    ix_q: list[int] = []
    ix_key: list[int] = []
    ix_NS: list[int] = []
    c_ix: list[list[int]] = [[] for _ in b.reps]
    owner = b.owner()
    for gs, items in sorted(b.edges.items()):
        for src, conds in items:
            if (gs, src) not in b.indexable:
                log = reads[(gs, src)]
                epreds[gs].append((log, compiled(conds, b.log_columns[log])))
                continue
            (cond,) = conds
            assert isinstance(cond, ast.Comparison)
            op, key, query = index_sides(cond)
            sc = b.source_class(owner, gs, src)
            ix = ixs.get((sc, to_text(key)))
            if ix is None:
                ix = ixs[(sc, to_text(key))] = len(ix_q)
                rep = b.reps[sc][0]
                ix_q.append(rep)
                ix_NS.append(b.q["q_NS"][rep])
                b.programs.append(compile_program(key, None, column, constant, b.words))
                ix_key.append(len(b.programs) - 1)
                c_ix[sc].append(ix)
            b.programs.append(compile_program(query, None, column, constant, b.words))
            ipreds[gs].append((ix, COMPARISONS[op], len(b.programs) - 1))
    g_pr = [-1] * len(b.preds)
    for gs, conds in b.guards.items():
        g_pr[gs] = compiled(conds, [])
    nt_col_ptr, nt_col = csr(
        [[column(a) for a in b.log_columns.get(nt, [])] for nt in range(len(nts))]
    )
    epred_ptr, epred_nt = csr([[log for log, _ in row] for row in epreds])
    _, epred_pr = csr([[pr for _, pr in row] for row in epreds])
    ipred_ptr, ipred_ix = csr([[ix for ix, _, _ in row] for row in ipreds])
    _, ipred_op = csr([[op for _, op, _ in row] for row in ipreds])
    _, ipred_pr = csr([[pr for _, _, pr in row] for row in ipreds])
    c_ix_ptr, c_ix_flat = csr(c_ix)
    # per index and window slot: three words (window, root of the numbers' tree, of the
    # words'), and the totals of the keys ordered with nothing (NaN, booleans)
    ix_aoff, ix_eoff, ix_koff, widths = blocks(
        [list(range(len(ix_q)))],
        ix_NS,
        [b.q["q_A"][qi] for qi in ix_q],
        [b.q["q_M"][qi] for qi in ix_q],
        ("ixa", "ixe", "ixh"),
    )
    b.widths.update(widths)
    b.widths["ixh"] *= 3
    pr_ptr, pr_code = csr([p.code for p in b.programs])
    b.key_width = max([len(c) for c in b.log_columns.values()] + [1])
    b.stack = max([p.depth for p in b.programs] + [1])
    b.tables.update(
        nt_log=i64([1 if nt in b.log_columns else 0 for nt in range(len(nts))]),
        nt_col_ptr=nt_col_ptr,
        nt_col=nt_col,
        epred_ptr=epred_ptr,
        epred_nt=epred_nt,
        epred_pr=epred_pr,
        g_pr=i64(g_pr),
        ipred_ptr=ipred_ptr,
        ipred_ix=ipred_ix,
        ipred_op=ipred_op,
        ipred_pr=ipred_pr,
        ix_q=i64(ix_q),
        ix_key=i64(ix_key),
        ix_NS=i64(ix_NS),
        ix_koff=i64(ix_koff),
        ix_aoff=i64(ix_aoff),  # scaled by the lanes in State
        ix_eoff=i64(ix_eoff),
        c_ix_ptr=c_ix_ptr,
        c_ix=c_ix_flat,
        pr_ptr=pr_ptr,
        pr_code=pr_code,
        pr_ck=i64([k for k, _ in consts]),
        pr_cv=np.array([v for _, v in consts] or [0.0], dtype=np.float64),
    )
