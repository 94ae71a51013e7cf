"""Cost models of the sharing decisions, in one place.

HAMLET's benefit of sharing a burst (Eq. 7, Def. 4.2) in the paper's units, as
the Python HAMLET evaluates it per burst, and the same decision in the compiled
kernel's units, whose parameters the kernel reads from its program (it only
evaluates them; the numbers are chosen here).
"""

from __future__ import annotations


def shared_cost(b: int, n: int, s_p: int, s_c: int, k: int, g: int, t: int) -> int:
    """Shared(G_E, Q_E) = b*n*s_p + s_c*k*g*t (HAMLET, Eq. 7)."""
    return b * n * s_p + s_c * k * g * t


def nonshared_cost(b: int, n: int, k: int) -> int:
    """NonShared(G_E^i, Q_E) = k*b*n (HAMLET, Eq. 7)."""
    return k * b * n


def benefit(b: int, n: int, s_p: int, s_c: int, k: int, g: int, t: int) -> int:
    """Benefit of sharing a burst: NonShared - Shared (HAMLET, Def. 4.2)."""
    return nonshared_cost(b, n, k) - shared_cost(b, n, s_p, s_c, k, g, t)


#: The kernel's units (HAMLET Def. 4.2, measured with benchmarks/kernel_rideshare.py, where
#: sharing every burst beat replaying the one-event ones): replaying a burst of n events
#: costs every query's registers per event and window, n * A * L (A: the registers of the
#: queries and windows the burst reaches, L: the lanes); sharing it costs the coefficient
#: updates per event, n * burst_event_units(w) * L, and applying them per register, query
#: and window, A * L * APPLY_NUMERATOR // APPLY_DENOMINATOR.
APPLY_NUMERATOR = 1
APPLY_DENOMINATOR = 2


def burst_event_units(weights: int) -> int:
    """Coefficient updates per event of a burst whose set carries ``weights`` weight
    columns (the count among them): alpha, beta and per weight gamma, delta, sum."""
    return 2 + 3 * weights
