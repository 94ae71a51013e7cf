"""The SHARON graph's picture when nothing is shared: its words inside the figure."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from trendagg.language import parse
from trendagg.optimizer.plan import sharing_plan
from trendagg.plan.compile import compile_workload

pytest.importorskip("matplotlib")


def _drawn(plan: Any, path: Path, monkeypatch: pytest.MonkeyPatch) -> Any:
    """The figure plot_graph draws (its plt.close kept back: the test closes it)."""
    import matplotlib.pyplot as plt

    from trendagg.optimizer.sharon_plot import plot_graph

    kept: list[Any] = []
    monkeypatch.setattr(plt, "close", kept.append)
    plot_graph(plan, path, title="q.tq")
    return kept[0]


@pytest.mark.parametrize(
    ("workload", "why"),
    [
        (
            "q1: RETURN COUNT(*) PATTERN SEQ(A, B) WITHIN 10 s;\n"
            "q2: RETURN COUNT(*) PATTERN SEQ(C, D) WITHIN 10 s;\n",
            "no sub-sequence is in two queries alike",
        ),
        (
            "q1: RETURN COUNT(*) PATTERN SEQ(A, B, C) WITHIN 10 s;\n"
            "q2: RETURN COUNT(*) PATTERN SEQ(A, B, D) WITHIN 10 s;\n",
            "1 candidate sub-sequence weighed, none beneficial at these rates",
        ),
    ],
    ids=["no-candidate", "none-beneficial"],
)
def test_the_empty_graph_says_why_inside_the_figure(
    workload: str, why: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    plans = compile_workload(parse(workload))
    plan = sharing_plan(plans, "sharon").sharon
    assert plan is not None and not plan.graph.vertices
    path = tmp_path / "graph.png"
    fig = _drawn(plan, path, monkeypatch)
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    bounds = fig.bbox
    texts = [t for ax in fig.axes for t in [*ax.texts, ax.title] if t.get_text()]
    assert [t.get_text() for t in texts[:-1]] == [f"Nothing is shared:\n{why}"]
    for text in texts:
        box = text.get_window_extent(renderer)
        assert bounds.x0 <= box.x0 and box.x1 <= bounds.x1, text.get_text()
        assert bounds.y0 <= box.y0 and box.y1 <= bounds.y1, text.get_text()
    monkeypatch.undo()
    import matplotlib.pyplot as plt

    plt.close(fig)
