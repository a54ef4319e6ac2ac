"""The README's two set-up commands stay true: CI runs the test one verbatim."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def _readme_commands() -> list[str]:
    text = (REPO / "README.md").read_text()
    setup = text.split("## Set up", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"```sh\n(.+?)\n```", setup, flags=re.S)


def test_readme_has_exactly_two_setup_commands() -> None:
    commands = _readme_commands()
    assert len(commands) == 2
    run, test = commands
    assert "artemis run" in run and "pytest" not in run
    assert "pytest" in test


def test_ci_runs_the_readme_test_command_verbatim() -> None:
    ci = (REPO / ".ci" / "run").read_text()
    test_command = _readme_commands()[1]
    assert f'TEST_COMMAND="{test_command}"' in ci
    assert 'bash -c "$TEST_COMMAND"' in ci


def _pytest(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", *args], cwd=REPO,
                          capture_output=True, text=True, timeout=300)


def test_one_file_runs_without_xdist() -> None:
    """``-p no:xdist`` (how one file is run in-process) works: no ``-n`` is forced in addopts."""
    one = "tests/test_readme_ci.py::test_readme_has_exactly_two_setup_commands"
    done = _pytest("-p", "no:xdist", one)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "1 passed" in done.stdout


def test_plain_pytest_runs_on_two_workers() -> None:
    """Plain ``pytest`` (the README's and CI's command) still runs on two xdist workers."""
    done = _pytest("-v", "tests/test_readme_ci.py::test_readme_has_exactly_two_setup_commands")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "2 workers" in done.stdout, done.stdout
