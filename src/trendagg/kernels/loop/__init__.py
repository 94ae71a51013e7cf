"""The loop layer: the compiled per-event loops (numba only), a module per construct.

``chunk.run_chunk`` is the per-event loop of GRETA and HAMLET plans, one call per chunk
of events, with its time-group skeleton; ``snapshots.run_gloria`` is the snapshot loop
of GLORIA's and SHARON's shared plans; ``instances.release_rows`` frees the rows of
released instances. These three are the roots, the functions Python calls (and the only
ones cached, see :mod:`trendagg.kernels`). The constructs, each in a module of its own,
in the order they build on each other:

- ``arith``: the arithmetic leaves (residues, extremes, register blocks), inlined;
- ``results``: result slots, and the rows of closed windows;
- ``edges``: NEXT conditions (logs and stack programs); ``indexes``: their ordered
  indexes;
- ``negation``: blocked starts, queues, signals;
- ``core``: states and registers, phase 1 and phase 2 of a time group;
- ``lazy``: lazy windows; ``windows``: counting each window's events (the lanes'
  bound);
- ``bursts``: HAMLET's shared bursts and the per-burst decision;
- ``instances``: events in the instances other than their own, new instances;
- ``chunk`` and ``snapshots``: the two loops.

The tables they read are the lowering's (:mod:`trendagg.kernels.lower`); the arrays they
update, the runtime's (:mod:`trendagg.kernels.runtime`). Every module here is one of
:data:`trendagg.jit.SOURCES`: a change to any of them compiles the kernels anew.

Queues (a NOT or a NEXT condition in the workload): ``st.neg`` is one-dimensional
then, two-dimensional if not. The functions with code of queues take it as ``qs``
and test ``qs.ndim == 1``: numba reads an argument's ndim as a constant and prunes
the dead branch before typing, so a kernel without queues neither holds nor
compiles their code (its hooks on the per-event path cost every workload 25-35% of
run_chunk's time when they were tested at run time; compiling them anyway cost a
workload without them about a third of its compile time). The test must read an
argument, not ``st.neg``: numba folds the ndim of arguments only.

Calls pass ``np.int64(-1)`` (or a variable set from one), never a literal such as
``-1`` or ``0``: numba compiles a function once per literal value it is passed, and
then once more for int64, and so does every function it calls with that argument
(literals doubled the plain kernel's compile time).
"""
