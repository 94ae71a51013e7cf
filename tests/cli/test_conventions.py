"""The command line's conventions: --version, help for every option (issue #39)."""

from __future__ import annotations

import argparse
import tomllib
from pathlib import Path

import pytest

import trendagg
from trendagg.cli import build_parser, main

ROOT = Path(__file__).resolve().parents[2]


def test_version_prints_the_package_version(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as done:
        main(["--version"])
    assert done.value.code == 0
    assert capsys.readouterr().out == f"trendagg {trendagg.__version__}\n"


def test_the_package_version_is_pyprojects() -> None:
    """The wheel's metadata (pyproject.toml) and trendagg.__version__ say one version."""
    with (ROOT / "pyproject.toml").open("rb") as f:
        project = tomllib.load(f)["project"]
    assert "version" not in project.get("dynamic", [])
    assert project["version"] == trendagg.__version__


def _options() -> list[tuple[str, argparse.Action]]:
    """(command, action) of every option and argument, the subcommands' too, but help."""
    parser = build_parser()
    found = [("trendagg", a) for a in parser._actions]
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, command in action.choices.items():
                found += [(name, a) for a in command._actions]
    skip = (argparse._HelpAction, argparse._SubParsersAction)
    return [(c, a) for c, a in found if not isinstance(a, skip)]


def test_every_option_and_argument_says_what_it_does() -> None:
    """Every option and positional argument of every command has help text, a phrase of
    three words or more (not a bare 'rideshare')."""
    actions = _options()
    assert len(actions) > 60  # (the walk reaches the subcommands)
    lacking = [
        f"{command} {'/'.join(a.option_strings) or a.dest}: {a.help!r}"
        for command, a in actions
        if a.help in (None, argparse.SUPPRESS) or len(str(a.help).split()) < 3
    ]
    assert lacking == []
