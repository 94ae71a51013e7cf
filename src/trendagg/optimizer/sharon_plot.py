"""The SHARON graph as a picture: ``trendagg explain --strategy sharon --plot FILE``.

Candidates are vertices on a circle (in the graph's order, named v1, v2, ... as
``explain`` prints them), sized by their BValue; conflicts are edges. The chosen plan
is green (conflict-free candidates, in it without search, darker), pruned candidates
red, the others grey. Edges between two chosen candidates cannot exist (the plan is
valid); edges from a chosen one are drawn darker, as the conflicts that excluded the
others.
"""

from __future__ import annotations

import math
from pathlib import Path

from trendagg.optimizer.sharon import SharonPlan

CHOSEN, FREE, PRUNED, OTHER = "#4caf50", "#1b5e20", "#e53935", "#bdbdbd"


def plot_graph(plan: SharonPlan, path: str | Path, *, title: str = "") -> None:
    """Draw ``plan``'s SHARON graph with the chosen plan to ``path`` (PNG, SVG or PDF)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    graph = plan.graph
    n = len(graph.vertices)
    chosen, free, pruned = set(plan.chosen), set(plan.free), set(plan.pruned)
    fig, ax = plt.subplots(figsize=(8, 8))
    ax.set_axis_off()
    ax.set_aspect("equal")
    heading = title or "SHARON graph"
    ax.set_title(
        f"{heading}: {n} candidates, {len(graph.edges())} conflicts; plan of "
        f"{len(chosen)}, score {plan.score:g} (GWMIN's: {graph.score(plan.greedy):g})",
        fontsize=10,
    )
    if n == 0:
        # (in the axes' own coordinates, centred: the data limits are not set here)
        weighed = len(plan.non_beneficial)
        why = (
            f"{weighed} candidate sub-sequence{'' if weighed == 1 else 's'} weighed, none "
            "beneficial at these rates"
            if weighed
            else "no sub-sequence is in two queries alike"
        )
        ax.text(
            0.5,
            0.5,
            f"Nothing is shared:\n{why}",
            transform=ax.transAxes,
            ha="center",
            va="center",
            fontsize=12,
            wrap=True,
        )
        fig.savefig(path, dpi=120)
        plt.close(fig)
        return
    pos = [
        (math.cos(2 * math.pi * i / n + math.pi / 2), math.sin(2 * math.pi * i / n + math.pi / 2))
        for i in range(n)
    ]
    for i, j in graph.edges():
        strong = i in chosen or j in chosen
        ax.plot(
            [pos[i][0], pos[j][0]],
            [pos[i][1], pos[j][1]],
            color="#616161" if strong else "#e0e0e0",
            linewidth=0.9 if strong else 0.5,
            zorder=1,
        )
    top = max(graph.weights)
    for v in range(n):
        color = FREE if v in free else CHOSEN if v in chosen else PRUNED if v in pruned else OTHER
        size = 80 + 520 * graph.weights[v] / top
        ax.scatter(*pos[v], s=size, color=color, edgecolors="black", linewidths=0.5, zorder=2)
        c = graph.vertices[v]
        label = f"v{v + 1}"
        if n <= 24:
            label += f"\n({', '.join(c.pattern)})\n{{{', '.join(c.queries)}}}\n{graph.weights[v]:g}"
        x, y = pos[v]
        ax.annotate(
            label,
            (x, y),
            xytext=(x * 1.3, y * 1.3),
            ha="center",
            va="center",
            fontsize=7 if n <= 24 else 5,
        )
    for color, text in (
        (CHOSEN, "chosen"),
        (FREE, "chosen, conflict-free"),
        (PRUNED, "pruned (below the GWMIN bound)"),
        (OTHER, "not chosen"),
    ):
        ax.scatter([], [], color=color, edgecolors="black", linewidths=0.5, label=text)
    ax.legend(loc="lower center", bbox_to_anchor=(0.5, -0.08), ncol=4, fontsize=8, frameon=False)
    ax.set_xlim(-1.5, 1.5)
    ax.set_ylim(-1.5, 1.5)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


__all__ = ["plot_graph"]
