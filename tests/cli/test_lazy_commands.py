"""``artemis`` loads a command's module only when it is used (cli/app.py, issue 38): its root help
lists the commands by the summaries kept in ``COMMANDS``. Those must be the commands' own, so the
help reads the same as when every command is loaded."""

from __future__ import annotations

import pytest
import typer
from typer.testing import CliRunner

from artemis_cli.cli.app import COMMANDS, LazyGroup, app, load_command


def _root_help() -> str:
    res = CliRunner().invoke(app, ["--help"], env={"COLUMNS": "120"}, terminal_width=120)
    assert res.exit_code == 0, res.output
    return res.output


def test_the_root_help_is_the_same_from_the_summaries_and_from_the_commands(monkeypatch: pytest.MonkeyPatch) -> None:
    lazy = _root_help()
    monkeypatch.setattr(LazyGroup, "summaries_in_help", False)
    assert _root_help() == lazy
    assert all(name in lazy for name in COMMANDS)


@pytest.mark.parametrize("name", list(COMMANDS))
def test_each_summary_is_the_first_paragraph_of_the_commands_help(name: str) -> None:
    assert (load_command(name).help or "").split("\n\n")[0] == COMMANDS[name][2]


def test_every_command_is_listed_and_resolves() -> None:
    root = typer.main.get_command(app)
    assert root.list_commands(None) == list(COMMANDS)  # type: ignore[attr-defined,arg-type]
    assert all(root.get_command(None, name) is load_command(name) for name in COMMANDS)  # type: ignore[attr-defined,arg-type]
    assert root.get_command(None, "nosuch") is None  # type: ignore[attr-defined,arg-type]
