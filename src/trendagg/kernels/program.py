"""The ``Program`` named tuple: the kernel's tables as the numba loop receives them.

The lowering that fills it is :mod:`trendagg.kernels.lower` (its fields, pass by pass,
in :mod:`trendagg.kernels.lower.program`). The type stays in this module until the loop
is split (issue #40): numba's cache keys a compiled kernel by its argument types, and a
named tuple's type by its class's module and name (not its fields: this file is one
of :data:`trendagg.jit.SOURCES`, so a field changed here compiles anew), so a ``Program``
defined elsewhere would compile every kernel anew (about ten minutes of both cores). The
loop's split, which compiles anew anyway, moves it beside the loop's other tables.
"""

from __future__ import annotations

from collections import namedtuple

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

__all__ = ["Program"]
