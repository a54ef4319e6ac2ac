"""Every command's ``--help`` describes every option, breaks no line mid-sentence and shows no
``<bool>`` for a flag; ``artemis --version`` prints the version.

The walk covers the whole Click command tree (shared with test_help_brackets), so a new command
or option without help fails here without touching this file."""

from __future__ import annotations

import subprocess
import sys
from importlib import metadata
from itertools import pairwise
from pathlib import Path
from typing import Any

import pytest
from test_help_brackets import ALL
from typer.testing import CliRunner

from artemis_cli.cli.app import app
from artemis_cli.cli.helptext import unwrap

REPO = Path(__file__).resolve().parents[2]
IDS = [" ".join(p) or "artemis" for p, _ in ALL]


def broken_lines(text: str) -> list[str]:
    """Lines of ``text`` that a hard break ends mid-paragraph (Rich help would show the break):
    a paragraph's single newline, unless the paragraph is ``\\b`` (as written) or the next line
    starts a list item or is indented."""
    found = []
    for paragraph in text.split("\n\n"):
        if paragraph.startswith("\b"):
            continue
        lines = paragraph.split("\n")
        found += [a for a, b in pairwise(lines) if not b.startswith((" ", "- ", "* "))]
    return found


@pytest.mark.parametrize(("path", "command"), ALL, ids=IDS)
def test_every_option_has_help(path: tuple[str, ...], command: Any) -> None:
    shown = [p for p in command.params if not getattr(p, "hidden", False)]
    bare = [p.opts[0] if p.param_type_name == "option" else p.name for p in shown
            if not (getattr(p, "help", None) or "").strip()]
    assert not bare, f"artemis {' '.join(path)}: no help for {bare}"
    assert (command.help or "").strip(), f"artemis {' '.join(path)} has no help"


@pytest.mark.parametrize(("path", "command"), ALL, ids=IDS)
def test_no_help_breaks_a_line_mid_sentence(path: tuple[str, ...], command: Any) -> None:
    texts = [command.help or "", *(getattr(p, "help", None) or "" for p in command.params)]
    broken = [line for text in texts for line in broken_lines(text)]
    assert not broken, f"artemis {' '.join(path)} help breaks after: {broken}"


def test_the_break_check_catches_a_wrapped_docstring() -> None:
    wrapped = "Check adb, attached devices, the API key and the data dir (database, blobs,\nfree space)."
    assert broken_lines(wrapped) == ["Check adb, attached devices, the API key and the data dir (database, blobs,"]
    assert broken_lines(unwrap(wrapped)) == []
    assert unwrap("Keep:\n- one\n- two\n\n\bas\nwritten") == "Keep:\n- one\n- two\n\n\bas\nwritten"


def test_doctor_help_reads_as_sentences_at_a_wide_terminal() -> None:
    res = CliRunner().invoke(app, ["doctor", "--help"], env={"COLUMNS": "200"})
    assert res.exit_code == 0, res.output
    assert "the data dir (database, blobs, writable, free space); with --model openai:NAME" in res.output


@pytest.mark.parametrize("path", [(), ("doctor",), ("sessions", "list"), ("replay",)], ids=str)
def test_flags_show_no_type(path: tuple[str, ...]) -> None:
    res = CliRunner().invoke(app, [*path, "--help"], env={"COLUMNS": "120"})
    assert res.exit_code == 0, res.output
    assert "<bool>" not in res.output and "--help" in res.output
    assert path == () or "<path>" in res.output  # a value-taking option still shows its type


@pytest.mark.parametrize("flag", ["--version", "-V"])
def test_version_prints_the_package_version(flag: str) -> None:
    res = CliRunner().invoke(app, [flag])
    assert res.exit_code == 0, res.output
    assert res.output == f"artemis {metadata.version('artemis-cli')}\n"


def test_version_from_the_real_entry_point() -> None:
    res = subprocess.run([sys.executable, "-m", "artemis_cli", "--version"], capture_output=True, text=True,
                         cwd=REPO, timeout=60)
    assert (res.returncode, res.stdout, res.stderr) == (0, f"artemis {metadata.version('artemis-cli')}\n", "")
