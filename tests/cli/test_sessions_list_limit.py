"""`sessions list` says when --limit cuts the list, and its plain rows have the columns its help names."""

from __future__ import annotations

import re
from pathlib import Path

from typer.testing import CliRunner

from artemis_cli.cli.app import app
from artemis_cli.engine.db import DataEngine
from artemis_cli.engine.records import SessionRecord


def test_the_limit_is_said_when_it_cuts_and_plain_rows_match_the_help(tmp_path: Path) -> None:
    data = tmp_path / "data"
    with DataEngine.open(data) as engine:
        for n in range(3):
            engine.create_session(SessionRecord(goal=f"session {n}", task_id="t"))
    runner = CliRunner()
    cut = runner.invoke(app, ["sessions", "list", "-n", "2", "--plain", "--data-dir", str(data)])
    assert cut.exit_code == 0, cut.output
    rows = cut.stdout.splitlines()
    assert len(rows) == 2 and "2 of 3 sessions; --limit 3 shows all" in cut.stderr
    whole = runner.invoke(app, ["sessions", "list", "--plain", "--data-dir", str(data)])
    assert len(whole.stdout.splitlines()) == 3 and "of 3 sessions" not in whole.stderr
    quiet = runner.invoke(app, ["sessions", "list", "-n", "1", "-q", "--data-dir", str(data)])
    assert len(quiet.stdout.splitlines()) == 1 and "1 of 3 sessions" in quiet.stderr
    # the help names each tab-separated column of a plain row
    helped = runner.invoke(app, ["sessions", "list", "--help"], terminal_width=400)
    named = re.search(r"no header: (.+?)\.", " ".join(helped.output.replace("│", " ").split()))
    assert named is not None, helped.output
    columns = re.sub(r"\s*\([^)]*\)", "", named.group(1)).split(", ")
    assert all(len(row.split("\t")) == len(columns) for row in rows), (columns, rows)
