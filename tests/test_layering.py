"""The import graph of the package: imports only go down, no cycles, no private names.

A module's imports are read from its source (``ast``), lazy imports inside
functions included and ``if TYPE_CHECKING:`` blocks excluded. The layers, from
the bottom: the shared leaves (errors, limits, extras), the language, io, the plan,
the optimizer, the compiled kernels, the Python reference engines, the engine
(the Runner), Spark, and the entry points (the package, the session, the CLI, the demo).
A module may import its own layer and the layers below it.
"""

from __future__ import annotations

import ast
from pathlib import Path

SRC = Path(__file__).resolve().parent.parent / "src" / "trendagg"

LAYERS = [
    ("errors", "limits", "jit", "extras"),
    ("language",),
    ("io",),
    ("plan",),
    ("optimizer",),
    ("kernels",),
    ("reference",),
    ("engine",),
    ("generate", "spark"),
    ("trendagg", "session", "cli", "demo"),
]


def _modules() -> dict[str, Path]:
    found = {}
    for path in SRC.rglob("*.py"):
        parts = path.relative_to(SRC.parent).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        found[name] = path
    return found


MODULES = _modules()


def _imports(path: Path) -> list[tuple[str, str | None, int]]:
    """(module, name or None, line) of each ``trendagg`` import of a source file."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    typing_only = {
        id(node)
        for block in ast.walk(tree)
        if isinstance(block, ast.If) and "TYPE_CHECKING" in ast.unparse(block.test)
        for node in ast.walk(block)
    }
    found: list[tuple[str, str | None, int]] = []
    for node in ast.walk(tree):
        if id(node) in typing_only:
            continue
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("trendagg"):
            assert node.module is not None
            for alias in node.names:
                full = f"{node.module}.{alias.name}"
                found.append((full if full in MODULES else node.module, alias.name, node.lineno))
        elif isinstance(node, ast.Import):
            found += [
                (a.name, None, node.lineno) for a in node.names if a.name.startswith("trendagg")
            ]
    return found


def _layer(module: str) -> int:
    parts = module.split(".")
    key = parts[1] if len(parts) > 1 else parts[0]
    for i, names in enumerate(LAYERS):
        if key in names:
            return i
    raise AssertionError(f"{module} is in no layer of tests/test_layering.py: add it there")


GRAPH = {m: {t for t, _, _ in _imports(p) if t in MODULES and t != m} for m, p in MODULES.items()}


def test_imports_only_go_down() -> None:
    upward = [
        f"{m} imports {t}"
        for m, targets in GRAPH.items()
        for t in sorted(targets)
        if _layer(t) > _layer(m)
    ]
    assert upward == []


def test_no_import_cycles() -> None:
    """Tarjan's strongly connected components of the module graph: each of one module."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    cycles: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in sorted(GRAPH[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                cycles.append(sorted(component))

    for v in sorted(GRAPH):
        if v not in index:
            visit(v)
    assert cycles == []


def test_no_module_imports_another_modules_private_names() -> None:
    """``from a.b import _name`` only inside a.b's own package for its private
    modules (``trendagg.kernels._engine``); never a private function or class."""
    found = []
    for m, path in MODULES.items():
        for target, name, line in _imports(path):
            if name is None or not name.startswith("_") or name.startswith("__"):
                continue
            package = target.rsplit(".", 1)[0]
            if target == f"{package}.{name}" and m.startswith(package):  # a private module
                continue
            found.append(f"{m}:{line} imports {name} from {target}")
    assert found == []


def test_the_checks_see_the_package() -> None:
    """A guard against a vacuous pass: the graph holds the modules and edges it should."""
    assert "trendagg.kernels.executor" in MODULES
    assert "trendagg.optimizer.plan" in GRAPH["trendagg.kernels.lower.program"]
