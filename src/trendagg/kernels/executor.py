"""The named tuples the compiled loops take as arguments: the state (:data:`State`), a
chunk's events (:data:`Events`), scratch (:data:`Scratch`), output (:data:`Out`) and the
snapshot loop's state and scratch (:data:`GState`, :data:`GScratch`).

Only these stay here: numba's on-disk cache records an argument's type by its class's
module path (and not its fields: this file is one of :data:`trendagg.jit.SOURCES`, so a
field changed here compiles anew), so moving them would make loading the shared cache
fail. The executor
that fills them is :mod:`trendagg.kernels.runtime` (its
:class:`~trendagg.kernels.runtime.executor.CompiledExecutor`).
"""

from __future__ import annotations

from collections import namedtuple

State = namedtuple(
    "State",
    "P PINV tot ext keys mkeys mcnt mrep bur burf mixed inst_ginst res rext rkeys gr_ptr gr_ginst "
    "closed mode stats dlog neg blk nq nqa nqe nstart pnext ptg padd pext pkey pknd pool eflag "
    "ixh ixa ixe tkey tleft tright tprio town towne ttot ttote tpool tstack itmpl "
    "lz lzi lres lnext lkhi linst lkind lidx lval lmeta lq",
)
Events = namedtuple(
    "Events",
    "types tg klo khi pane pid xptr xinst cp_tg cp_new cp_par filt wres aval bnext xv xk wrank "
    "linv",
)
Scratch = namedtuple(
    "Scratch", "vec vext vec2 vext2 ent eadd eext sk sv lent lrow lsv ln ldel lst lmark ltodo"
)
Out = namedtuple("Out", "n key add ext")
#: The snapshot kernel's state (see loop.snapshots): per instance its blocks of values (tot,
#: ext, keys), snapshots (sa, se, sk; sx: a slot's last window per query), rings' head
#: and next number (meta), coefficient entries (ca, ce; ct: the snapshot each holds);
#: its own closed windows, counters (shared propagations, evaluations, snapshots), and
#: rs: slots per ring, lanes
GState = namedtuple("GState", "tot ext keys sa se sk sx meta ca ce ct mg la le lt closed stats rs")
GScratch = namedtuple(
    "GScratch", "vec vx n cmark ctouch cadd cext rk radd rext vadd vxt crow crowa crowe"
)
