"""The documentation site's sources: the CLI page is what the parser says, every page in
the nav exists, and no page points to the SEMANTICS.md that is not in the repository."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"


def test_the_cli_page_is_what_the_parser_says() -> None:
    spec = importlib.util.spec_from_file_location("gen_cli", DOCS / "gen_cli.py")
    assert spec is not None and spec.loader is not None
    gen_cli = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(gen_cli)
    assert (DOCS / "cli.md").read_text() == gen_cli.render(), "run python docs/gen_cli.py"


def test_every_page_of_the_nav_exists() -> None:
    nav = re.findall(r"^\s+- [^:\n]+: (\S+\.md)$", (ROOT / "mkdocs.yml").read_text(), re.M)
    assert len(nav) >= 15
    assert [page for page in nav if not (DOCS / page).is_file()] == []


def test_no_source_points_to_a_missing_semantics_file() -> None:
    stale = [
        path.relative_to(ROOT)
        for path in (ROOT / "src").rglob("*")
        if path.suffix in (".py", ".lark") and "SEMANTICS.md" in path.read_text()
    ]
    assert stale == []
