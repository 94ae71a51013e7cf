"""The compiled engine's runtime: chunks of columnar events in, result rows out.

:class:`~trendagg.kernels.runtime.executor.CompiledExecutor` (feed, advance, finish
and the attempt loop) holds the state and calls the modules of each role:

- :mod:`~trendagg.kernels.runtime.arrays`: the state and its arrays, allocation and
  growth, a chunk's scratch and output;
- :mod:`~trendagg.kernels.runtime.instances`: partition instances, their keys and
  groups, templates of qualified partitions;
- :mod:`~trendagg.kernels.runtime.chunks`: the events of a chunk as the loop's arrays;
- :mod:`~trendagg.kernels.runtime.attributes` and
  :mod:`~trendagg.kernels.runtime.ranks`: the aggregated values, weights as residues,
  MIN/MAX values and ranks;
- :mod:`~trendagg.kernels.runtime.rebuild`: a new state and the open windows replayed
  into it;
- :mod:`~trendagg.kernels.runtime.results`: result rows read out of closed windows.

It may import the lowering (:mod:`trendagg.kernels.lower`) and the loop; neither
imports it (``tests/test_layering.py`` checks it).
"""
