"""The GLORIA graph as a picture: ``trendagg explain --strategy gloria --plot FILE``.

Pools are columns in the graph's topological order (start pools first, end pools
last), their nodes stacked in the order ``explain`` prints them (n1, n2, ...), each
labelled with its plan and d_s. The chosen path is green, with its edges drawn
thick; nodes pruned (edge or node pruning, section 5.2) are red crosses; other kept
nodes grey. Edges kept after pruning are thin grey lines.
"""

from __future__ import annotations

from pathlib import Path

from trendagg.optimizer.gloria import GloriaPlan

CHOSEN, PRUNED, OTHER = "#4caf50", "#e53935", "#9e9e9e"


def plot_gloria(plan: GloriaPlan, path: str | Path, *, title: str = "") -> None:
    """Draw ``plan``'s GLORIA graph with the chosen path to ``path`` (PNG, SVG or PDF)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    graph = plan.graph
    chosen = {n.index for n in plan.chosen.values()}
    chosen |= {n.index for p in graph.pools if p.kind in ("start", "end") for n in p.nodes}
    pos: dict[int, tuple[float, float]] = {}
    for x, pool in enumerate(graph.pools):
        for y, node in enumerate(pool.nodes):
            pos[node.index] = (float(x), -float(y))
    width = max(4.0, 1.6 * len(graph.pools))
    height = max(3.0, 1.1 * max((len(p.nodes) for p in graph.pools), default=1) + 1.5)
    fig, ax = plt.subplots(figsize=(width, height))
    ax.set_axis_off()
    heading = title or "GLORIA graph"
    ax.set_title(
        f"{heading}: {plan.built} plan nodes built, {plan.nodes} kept; chosen plan, "
        f"cost {plan.cost:g}",
        fontsize=10,
    )
    for (a, b), edge in graph.edges.items():
        if edge.pruned or a not in pos or b not in pos:
            continue
        on_path = a in chosen and b in chosen
        skips = abs(pos[b][0] - pos[a][0]) > 1  # (bent, so that it passes no other node)
        ax.annotate(
            "",
            xy=pos[b],
            xytext=pos[a],
            arrowprops={
                "arrowstyle": "-",
                "color": CHOSEN if on_path else "#d0d0d0",
                "linewidth": 2.2 if on_path else 0.6,
                "connectionstyle": f"arc3,rad={0.25 if skips else 0.0}",
                "shrinkA": 0,
                "shrinkB": 0,
            },
            zorder=1,
        )
    for pool in graph.pools:
        ax.text(
            float(pool.index), 0.6, pool.name, ha="center", va="bottom", fontsize=7, rotation=20
        )
        for node in pool.nodes:
            px, py = pos[node.index]
            if node.pruned is not None:
                ax.scatter(px, py, marker="x", s=60, color=PRUNED, zorder=2)
            else:
                color = CHOSEN if node.index in chosen else OTHER
                ax.scatter(px, py, s=90, color=color, edgecolors="black", linewidths=0.5, zorder=2)
            what = node.text() if node.kind == "plan" else ""
            d_s = "-" if node.d_s == float("inf") else f"{node.d_s:g}"
            ax.annotate(
                f"{node.name} {what}".strip() + f"\nd_s {d_s}",
                (px, py),
                xytext=(px, py - 0.32),
                ha="center",
                va="top",
                fontsize=6,
            )
    for color, marker, text in (
        (CHOSEN, "o", "chosen path"),
        (OTHER, "o", "kept"),
        (PRUNED, "x", "pruned"),
    ):
        ax.scatter([], [], color=color, marker=marker, label=text)
    ax.legend(loc="lower center", ncol=3, fontsize=8, frameon=False, bbox_to_anchor=(0.5, -0.1))
    ax.set_xlim(-0.8, len(graph.pools) - 0.2)
    lowest = max((len(p.nodes) for p in graph.pools), default=1)
    ax.set_ylim(-lowest - 0.2, 1.4)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


__all__ = ["plot_gloria"]
