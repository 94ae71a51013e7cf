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


def _typing_only(tree: ast.AST) -> set[int]:
    """The ids of the nodes inside ``if TYPE_CHECKING:`` blocks (imports for the type
    checker only, never run)."""
    return {
        id(node)
        for block in ast.walk(tree)
        if isinstance(block, ast.If) and "TYPE_CHECKING" in ast.unparse(block.test)
        for node in ast.walk(block)
    }


def _imports(path: Path) -> list[tuple[str, str | None, int]]:
    """(module, name or None, line) of each ``trendagg`` import of a source file."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    typing_only = _typing_only(tree)
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
    modules (``trendagg.kernels._rns``); never a private function or class."""
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


# The compiled kernel's sublayers (issue #40): the lowering (plans and the sharing plan to
# tables, pure Python), the loop (numba) and the runtime (kernels/runtime/, the executor),
# which imports the lowering and the loop. The lowering may import, of kernels/, only
# itself, the package (its options), the NEXT conditions' compiler (edges.py, which the
# runtime reads too) and the modules of the tables' named tuple types (kept where numba's
# cache finds them, see program.py); the runtime's named tuples (executor.py) stay out of
# the runtime for the same reason, so neither they nor the loop import it.
LOWERING = "trendagg.kernels.lower"
RUNTIME = "trendagg.kernels.runtime"
NAMED_TUPLES = (
    "trendagg.kernels.executor",
    "trendagg.kernels.program",
    "trendagg.kernels.gloria_program",
)
LOOP_MODULES = (
    "arith",
    "results",
    "edges",
    "indexes",
    "negation",
    "core",
    "lazy",
    "windows",
    "bursts",
    "instances",
    "chunk",
    "snapshots",
)
LOOP = (
    "trendagg.jit",
    "trendagg.kernels.loop",
    *(f"trendagg.kernels.loop.{m}" for m in LOOP_MODULES),
    "trendagg.kernels._rns",
    "trendagg.kernels._borrow",
)
LOWERING_MAY_IMPORT = (
    "trendagg.kernels",
    "trendagg.kernels.edges",
    "trendagg.kernels.program",
    "trendagg.kernels.gloria_program",
)


def _external(path: Path) -> set[str]:
    """The top-level names of the packages outside trendagg a source file imports
    (lazy imports included, ``if TYPE_CHECKING:`` blocks left out)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    typing_only = _typing_only(tree)
    found = set()
    for node in ast.walk(tree):
        if id(node) in typing_only:
            continue
        if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.add(node.module.split(".")[0])
        elif isinstance(node, ast.Import):
            found |= {a.name.split(".")[0] for a in node.names}
    return found - {"trendagg"}


def _lowering() -> list[str]:
    return sorted(m for m in MODULES if m == LOWERING or m.startswith(LOWERING + "."))


def _runtime() -> list[str]:
    return sorted(m for m in MODULES if m == RUNTIME or m.startswith(RUNTIME + "."))


def _reached(starts: list[str]) -> set[str]:
    """The modules that importing ``starts`` imports, transitively (``starts`` included)."""
    seen: set[str] = set()
    todo = list(starts)
    while todo:
        m = todo.pop()
        if m not in seen:
            seen.add(m)
            todo.extend(GRAPH[m])
    return seen


def test_the_lowering_is_pure_python() -> None:
    """kernels/lower/ reaches, through any chain of imports, neither numba nor a module
    of the loop."""
    reached = _reached(_lowering())
    loop = sorted(m for m in reached if m in LOOP)
    numba = sorted(m for m in reached if "numba" in _external(MODULES[m]))
    assert (loop, numba) == ([], [])


def test_the_runtime_imports_the_lowering_not_the_other_way_round() -> None:
    outside = [
        f"{m} imports {t}"
        for m in _lowering()
        for t in sorted(GRAPH[m])
        if t.startswith("trendagg.kernels")
        and not t.startswith(LOWERING)
        and t not in LOWERING_MAY_IMPORT
    ]
    assert outside == []
    assert any(t.startswith(LOWERING + ".") for t in GRAPH[RUNTIME + ".executor"])


def test_nothing_below_the_runtime_reaches_it() -> None:
    """kernels/runtime/ may import the lowering, the loop and the named tuples; none of
    them reaches a module of the runtime, through any chain of imports."""
    below = _lowering() + list(LOOP) + list(NAMED_TUPLES)
    reached = sorted(m for m in _reached(below) if m.startswith(RUNTIME))
    assert reached == []
    # (not vacuous: the runtime reaches each of them)
    assert set(below) - {LOWERING} <= _reached([RUNTIME + ".executor"]) | {
        "trendagg.kernels._borrow",
        "trendagg.jit",
        "trendagg.kernels.loop",  # (a package: its modules are reached)
    }


def test_the_checks_see_the_package() -> None:
    """A guard against a vacuous pass: the graph holds the modules and edges it should."""
    assert "trendagg.kernels.executor" in MODULES
    assert len(_runtime()) >= 8
    assert _reached([RUNTIME + ".executor"]) >= set(_runtime()) - {RUNTIME}
    assert "trendagg.optimizer.plan" in GRAPH["trendagg.kernels.lower.program"]
    # the lowering's modules, each reached from its entry, and the loop's, that import numba
    assert len(_lowering()) >= 10
    assert _reached(["trendagg.kernels.lower.program"]) >= set(_lowering()) - {LOWERING}
    assert all(
        "numba" in _external(MODULES[m]) for m in ("trendagg.jit", "trendagg.kernels._borrow")
    )
    assert {"trendagg.jit", "trendagg.kernels._rns"} <= _reached(["trendagg.kernels.loop.chunk"])
    # every module of kernels/loop/ is one of LOOP (and so checked above)
    assert {m for m in MODULES if m.startswith("trendagg.kernels.loop")} == {
        m for m in LOOP if m.startswith("trendagg.kernels.loop")
    }
