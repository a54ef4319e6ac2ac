"""examples/pytest runs as its docstring says (issue 37's "what it must show"): ``pytest
examples/pytest --artemis-device sim`` passes and ``artemis sessions list`` lists a session per
test; the failing variant, run by name, fails and names its session and report."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
EXAMPLES = REPO / "examples" / "pytest"


def _pytest(*args: str, home: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "ARTEMIS_HOME": str(home), "COLUMNS": "200"}
    return subprocess.run([sys.executable, "-m", "pytest", *args, "--artemis-device", "sim", "-p", "no:cacheprovider"],
                          cwd=REPO, env=env, capture_output=True, text=True, timeout=120)


def test_the_example_passes_and_its_sessions_are_listed(tmp_path: Path) -> None:
    home = tmp_path / "home"
    res = _pytest("examples/pytest", home=home)
    assert res.returncode == 0, res.stdout + res.stderr
    assert re.search(r"\b3 passed\b", res.stdout), res.stdout
    listed = subprocess.run([sys.executable, "-m", "artemis_cli", "sessions", "list"], env={
        **os.environ, "ARTEMIS_HOME": str(home), "COLUMNS": "400"}, capture_output=True, text=True, check=True).stdout
    rows = [line.split("\t") for line in listed.splitlines() if "\t" in line]
    assert sorted(r[4].removeprefix("Python API ") for r in rows) == [
        "examples/pytest/test_contacts.py::test_add_a_contact",
        "examples/pytest/test_contacts.py::test_back_returns_to_the_list",
        "examples/pytest/test_contacts.py::test_search_finds_one_contact",
    ], listed
    assert {r[2] for r in rows} == {"succeeded"}


def test_the_failing_variant_names_its_session_and_report(tmp_path: Path) -> None:
    home = tmp_path / "home"
    res = _pytest(str(EXAMPLES / "failing_contacts.py"), home=home)
    assert res.returncode == 1, res.stdout + res.stderr
    session = re.search(r"^artemis session: (\S+)$", res.stdout, re.M)
    report = re.search(r"^artemis report: (\S+)$", res.stdout, re.M)
    assert session and report, res.stdout
    assert Path(report.group(1)).is_file() and Path(report.group(1)).parent == home / "reports"
    assert session.group(1) in Path(report.group(1)).read_text(encoding="utf-8")
    assert "the saved contact should read Sofia Ortega" in res.stdout
