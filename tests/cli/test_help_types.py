"""Every command's --help, walked over the whole Typer command tree: no Python type placeholders
(``<list[str]>``), one --data-dir help text, and ``run --help`` names every model."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import typer
from typer.testing import CliRunner

from artemis_cli.cli.app import app
from artemis_cli.cli.options import DATA_DIR_HELP
from artemis_cli.models.choices import MODEL_CHOICES, OFFLINE_MODELS

#: a Python annotation where the help shows a value's type: list[str], Optional[...], NoneType
_PYTHON_TYPE = re.compile(r"<[^<>]*(\[|NoneType|Optional|Union)[^<>]*>")


def _commands(command: Any, path: tuple[str, ...] = ()) -> Iterator[tuple[str, ...]]:
    yield path
    for name, sub in sorted((getattr(command, "commands", None) or {}).items()):
        if not getattr(sub, "hidden", False):
            yield from _commands(sub, (*path, name))


def _help(path: tuple[str, ...]) -> str:
    res = CliRunner().invoke(app, [*path, "--help"], env={"COLUMNS": "400"}, terminal_width=400)
    assert res.exit_code == 0, (path, res.output)
    return " ".join(line.strip("│ ") for line in res.output.splitlines())


HELPS = {path: _help(path) for path in _commands(typer.main.get_command(app))}


def test_the_walk_reaches_every_command() -> None:
    assert {("apps",), ("test",), ("sessions", "rm"), ("tasks", "validate"), ("run",)} <= set(HELPS)
    assert len(HELPS) > 25


def test_no_python_type_placeholders_in_any_help() -> None:
    found = {" ".join(path): sorted(set(m.group(0) for m in _PYTHON_TYPE.finditer(text)))
             for path, text in HELPS.items() if _PYTHON_TYPE.search(text)}
    assert not found, found


def test_one_data_dir_help_everywhere() -> None:
    takers = [path for path, text in HELPS.items() if "--data-dir" in text]
    assert len(takers) > 10
    first_words = DATA_DIR_HELP.split(" (")[0]
    for path in takers:
        assert first_words in " ".join(HELPS[path].split()), " ".join(path)


def test_run_help_names_every_model() -> None:
    text = HELPS[("run",)]
    for name in (*MODEL_CHOICES, *OFFLINE_MODELS):
        assert re.search(rf"(^|[\s|]){re.escape(name)} \(", text), name
