"""No bracket of a help text is lost to Rich markup, in EVERY command's ``--help``.

Typer renders help with Rich markup, where ``[redacted]`` or ``[l,t,r,b]`` would be read as a
tag and vanish. The test walks the whole Click command tree (so a new command or option is
covered without touching this file), collects every ``[…]`` literal of the raw help strings
(command docstrings/``help=``, every parameter's ``help``; ``\\[`` escapes as written by
:func:`artemis_cli.cli.helptext.literal` count as literal brackets) and asserts each one appears
in the rendered ``--help``. Markup meant as markup (``[bold]…[/]``: a valid Rich style or a
closing tag, not escaped) is left out."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import typer
from rich.errors import StyleSyntaxError
from rich.style import Style
from typer.testing import CliRunner

from artemis_cli.cli.app import app

REPO = Path(__file__).resolve().parents[2]
BRACKETS = re.compile(r"(\\*)\[([^\[\]\n]*)\]")
BOX = str.maketrans("", "", "│╭╮╰╯─┃━┏┓┗┛")


def commands(command: Any, path: tuple[str, ...] = ()) -> Iterator[tuple[tuple[str, ...], Any]]:
    """Every command and group of the tree, depth first, with the words that invoke it."""
    yield path, command
    for name, sub in sorted((getattr(command, "commands", None) or {}).items()):
        if not getattr(sub, "hidden", False):
            yield from commands(sub, (*path, name))


def raw_help(command: Any) -> list[str]:
    texts = [command.help or "", getattr(command, "epilog", None) or "", getattr(command, "short_help", None) or ""]
    texts += [getattr(p, "help", None) or "" for p in command.params]
    return [t for t in texts if t]


def _is_markup(body: str) -> bool:
    """``[bold]``, ``[red on white]``, ``[/]``, ``[/bold]``: markup on purpose, not a literal."""
    if body.startswith("/"):
        return True
    try:
        Style.parse(body)
    except StyleSyntaxError:
        return False
    return bool(body.strip())


def literal_brackets(text: str) -> list[str]:
    """The ``[…]`` a reader of ``text`` should see: escaped ones, and unescaped ones that are not
    Rich markup (Rich leaves ``[1]`` alone but swallows ``[redacted]``: both must show)."""
    found = []
    for match in BRACKETS.finditer(text):
        escaped = len(match.group(1)) % 2 == 1
        if escaped or not _is_markup(match.group(2)):
            found.append(f"[{match.group(2)}]")
    return found


def normalised(rendered: str) -> str:
    """Rendered help with panel borders removed and whitespace collapsed (wrapped lines join)."""
    return " ".join(rendered.translate(BOX).split())


ALL = list(commands(typer.main.get_command(app)))


def test_the_walk_covers_every_command() -> None:
    names = {" ".join(path) for path, _ in ALL}
    assert {"", "sessions export", "sessions list", "recall", "profiles validate", "profiles list", "tasks validate",
            "bench run", "bench compare", "sim serve", "doctor"} <= names, names
    assert len(names) >= 20


def test_some_help_has_literal_brackets() -> None:
    """The test is not vacuous: sessions export documents ``[redacted]`` and ``[l,t,r,b]``."""
    export = dict(ALL)[("sessions", "export")]
    assert {"[redacted]", "[l,t,r,b]", "[w, h]"} <= set(literal_brackets(export.help))


@pytest.mark.parametrize(("path", "command"), ALL, ids=[" ".join(p) or "artemis" for p, _ in ALL])
def test_no_bracket_is_lost_in_help(path: tuple[str, ...], command: Any) -> None:
    wanted = [b for text in raw_help(command) for b in literal_brackets(text)]
    for width in ("80", "200"):
        res = CliRunner().invoke(app, [*path, "--help"], env={"COLUMNS": width})
        assert res.exit_code == 0, res.output
        shown = normalised(res.output)
        missing = [b for b in wanted if normalised(b) not in shown]
        assert not missing, f"artemis {' '.join(path)} --help lost {missing}:\n{res.output}"
        assert "\\[" not in res.output, res.output  # an escape shown instead of applied


def test_the_check_catches_a_lost_bracket() -> None:
    """A help text with an unescaped ``[redacted]`` fails the check; with literal() it passes."""
    from artemis_cli.cli.helptext import literal

    for text, lost in (("password text as [redacted]", True), (literal("password text as [redacted]"), False)):
        probe = typer.Typer()

        @probe.command(help=text)
        def one() -> None: ...

        @probe.command()
        def two() -> None: ...

        res = CliRunner().invoke(probe, ["one", "--help"])
        command = typer.main.get_command(probe).commands["one"]  # type: ignore[attr-defined]
        wanted = [b for t in raw_help(command) for b in literal_brackets(t)]
        assert wanted == ["[redacted]"]
        assert (wanted[0] not in normalised(res.output)) is lost, res.output


def test_plain_help_without_rich_shows_brackets_without_escapes() -> None:
    """``TYPER_USE_RICH=0``: Click's plain help; literal() adds no backslashes there."""
    res = subprocess.run([sys.executable, "-m", "artemis_cli", "sessions", "export", "--help"], capture_output=True,
                         text=True, cwd=REPO, env={**os.environ, "TYPER_USE_RICH": "0", "COLUMNS": "80"}, timeout=120)
    assert res.returncode == 0, res.stderr
    shown = " ".join(res.stdout.split())
    assert "[redacted]" in shown and "[l,t,r,b]" in shown and "[w, h]" in shown and "\\[" not in shown
