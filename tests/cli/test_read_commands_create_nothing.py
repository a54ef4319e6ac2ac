"""Read commands never create a data dir (issue 23 item 8): a mistyped --data-dir is a named
error and leaves nothing behind; the default data dir before the first run is an empty list, not
an error; a filter that matches nothing says how many sessions there are in all."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from artemis_cli.engine.db import DataEngine
from artemis_cli.engine.records import SessionRecord

REPO = Path(__file__).resolve().parents[2]


def artemis(*args: str | Path, home: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "ARTEMIS_HOME": str(home)}
    return subprocess.run([sys.executable, "-m", "artemis_cli", *map(str, args)], cwd=REPO, capture_output=True,
                          text=True, timeout=120, env=env)


READERS = {
    "sessions list": ["sessions", "list"],
    "sessions list --json": ["sessions", "list", "--json"],
    "sessions show": ["sessions", "show", "latest"],
    "sessions prompt": ["sessions", "prompt", "latest", "--step", "1"],
    "sessions export": ["sessions", "export", "latest"],
    "report": ["report", "latest", "-o", "{out}/r.html"],
    "recall": ["recall", "latest", "wifi"],
    "replay --dry-run": ["replay", "latest", "--dry-run"],
    "replay": ["replay", "latest"],
    "resume": ["resume", "latest"],
    "sessions rm": ["sessions", "rm", "latest", "--yes"],
}


@pytest.mark.parametrize("name", list(READERS))
def test_a_missing_data_dir_is_a_named_error_and_nothing_is_created(name: str, tmp_path: Path) -> None:
    missing = tmp_path / "no-such-dir"
    args = [a.replace("{out}", str(tmp_path)) for a in READERS[name]]
    res = artemis(*args, "--data-dir", missing, home=tmp_path / "home")
    assert res.returncode == 2, res.stdout + res.stderr
    lines = res.stderr.splitlines()
    assert f"Error: no Artemis data in {missing}" in lines, res.stderr
    assert lines[lines.index(f"Error: no Artemis data in {missing}") + 1].startswith("Hint: pass the --data-dir")
    assert sorted(p.name for p in tmp_path.iterdir()) == []  # no data dir, no home, no report


def test_an_existing_dir_without_a_database_is_refused_and_left_empty(tmp_path: Path) -> None:
    res = artemis("sessions", "list", "--data-dir", tmp_path, home=tmp_path / "home")
    assert res.returncode == 2 and f"Error: no Artemis data in {tmp_path}" in res.stderr
    assert list(tmp_path.iterdir()) == []


def test_the_default_data_dir_before_the_first_run_lists_no_sessions_and_stays_absent(tmp_path: Path) -> None:
    home = tmp_path / "fresh-home"
    res = artemis("sessions", "list", home=home)
    assert res.returncode == 0, res.stderr
    assert res.stdout == ""  # a pipe gets data rows only: the note is on stderr
    assert res.stderr.strip() == "No sessions yet. Try: artemis run tasks/demo.yaml"
    res = artemis("sessions", "list", "--json", home=home)
    assert res.returncode == 0 and json.loads(res.stdout) == []
    assert not home.exists()


def test_a_filter_that_matches_nothing_counts_the_sessions_there_are(tmp_path: Path) -> None:
    with DataEngine.open(tmp_path / "data") as engine:
        for _ in range(3):
            engine.create_session(SessionRecord(goal="g", task_id="demo", status="succeeded"))
    res = artemis("sessions", "list", "--task", "nosuch", "--data-dir", tmp_path / "data", home=tmp_path)
    assert res.returncode == 0, res.stderr
    assert res.stdout == "" and res.stderr.strip() == "No sessions of task nosuch (3 sessions in all)."
    res = artemis("sessions", "list", "--task", "nosuch", "--status", "failed", "--data-dir", tmp_path / "data",
                  home=tmp_path)
    assert res.stderr.strip() == "No sessions of task nosuch with status failed (3 sessions in all)."
