"""The ``Gloria`` named tuple: the snapshot kernel's tables as the numba loop receives them.

The lowering that fills it is :mod:`trendagg.kernels.lower.snapshots`. The type stays in
this module until the loop is split (issue #40), for the reason
:mod:`trendagg.kernels.program` gives: numba's cache keys a compiled kernel by the module
and name of its named tuple arguments' classes.
"""

from __future__ import annotations

from collections import namedtuple

Gloria = namedtuple(
    "Gloria",
    "ty_ptr ty_x x_g x_f x_ring x_tot x_q_ptr xq_q xq_s xq_start xq_res_ptr xq_res xq_blk "
    "xu_ptr xu_pair xr_ptr xr_blk xe_ptr xe_pair xe_rq xc_ptr xc_ring xc_pair xcq x_cqoff "
    "b_q b_A b_M b_NS b_toff b_eoff b_koff "
    "r_x r_q_ptr rq_q rq_aoff rq_eoff rq_koff r_aw r_ew r_kw r_aoff r_eoff r_koff r_xoff "
    "t_p_ptr t_p p_ring p_aoff p_eoff p_toff "
    "a_W a_M a_nmin acnt_ptr acnt asum_ptr asum_reg asum_w aext_ptr aext_reg aext_a "
    "v_ptr v_qreg v_areg ve_ptr ve_qreg ve_areg m_q r_merge r_spec br_ptr br "
    "xq_val x_any x_lazy x_spec lz_x lz_ring lz_NS lz_aoff lz_eoff lz_toff",
)

__all__ = ["Gloria"]
