"""``artemis test`` through the real CLI (a subprocess of ``python -m artemis_cli``) on sims."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from junitparser import Failure, JUnitXml, Properties

ROOT = Path(__file__).resolve().parents[2]
DARK = ROOT / "tasks" / "settings-dark-theme.yaml"


def _cli(*args: str, tmp: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "ARTEMIS_HOME": str(tmp / "home"), "COLUMNS": "200"}
    env.pop("GEMINI_API_KEY", None)
    return subprocess.run([sys.executable, "-m", "artemis_cli", "test", *args], capture_output=True, text=True,
                          env=env, cwd=tmp, timeout=120)


@pytest.fixture(scope="module")
def failing_task(tmp_path_factory: pytest.TempPathFactory) -> Path:
    d = tmp_path_factory.mktemp("failing")
    text = DARK.read_text().replace("id: settings-dark-theme", "id: dark-wrong-check").replace('equals: "2"', 'equals: "7"')
    (d / "dark-wrong-check.yaml").write_text(text)
    return d / "dark-wrong-check.yaml"


@pytest.fixture(scope="module")
def two_cases(tmp_path_factory: pytest.TempPathFactory, failing_task: Path) -> tuple[subprocess.CompletedProcess[str], Path]:
    tmp = tmp_path_factory.mktemp("run")
    res = _cli(str(DARK), str(failing_task), "--model", "scripted", "--devices", "sim*2", "--retries", "1",
               "--junit", str(tmp / "out.xml"), "--json", tmp=tmp)
    return res, tmp


def test_one_failing_case_fails_the_suite_and_json_has_every_case(two_cases: tuple) -> None:
    res, _tmp = two_cases
    assert res.returncode == 1, res.stderr
    suite = json.loads(res.stdout)
    by = {c["name"]: c for c in suite["cases"]}
    assert by["settings-dark-theme"]["status"] == "passed"
    assert by["settings-dark-theme"]["attempts"] == 1
    bad = by["dark-wrong-check"]
    assert bad["status"] == "failed" and bad["attempts"] == 2 and not bad["flaky"]  # retried once
    assert "settings get secure ui_night_mode" in bad["failure"]
    assert suite["totals"] == {**suite["totals"], "cases": 2, "passed": 1, "failed": 1}
    assert {c["device"] for c in suite["cases"]} <= {"sim#1", "sim#2"}
    assert "start settings-dark-theme" in res.stderr and "retry 1" in res.stderr


def test_junit_has_one_testcase_per_case_with_device_and_failure(two_cases: tuple) -> None:
    _res, tmp = two_cases
    xml = JUnitXml.fromfile(str(tmp / "out.xml"))
    cases = [tc for ts in xml for tc in ts]
    assert sorted(tc.name for tc in cases) == ["dark-wrong-check", "settings-dark-theme"]
    for tc in cases:
        props = {p.name: p.value for p in tc.child(Properties)}
        assert props["device"] in ("sim#1", "sim#2")
        assert props["session_id"]
    bad = next(tc for tc in cases if tc.name == "dark-wrong-check")
    assert isinstance(bad.result[0], Failure)
    assert "ui_night_mode" in (bad.result[0].message or "")
    good = next(tc for tc in cases if tc.name == "settings-dark-theme")
    assert good.is_passed


def test_sessions_are_imported_into_the_users_data_dir(two_cases: tuple) -> None:
    res, tmp = two_cases
    from artemis_cli.engine.db import DataEngine

    suite = json.loads(res.stdout)
    with DataEngine.open_for_reading(tmp / "home") as engine:
        for case in suite["cases"]:
            assert engine.get_session(case["session_id"]) is not None


def test_all_passing_exits_0(tmp_path: Path) -> None:
    res = _cli(str(DARK), "--model", "scripted", tmp=tmp_path)
    assert res.returncode == 0, res.stderr
    assert "settings-dark-theme" in res.stdout and "passed" in res.stdout


def test_missing_path_is_a_usage_error(tmp_path: Path) -> None:
    res = _cli(str(tmp_path / "nope.yaml"), tmp=tmp_path)
    assert res.returncode == 2
    assert "nope.yaml: no such task file or folder" in res.stderr


def test_broken_task_file_names_the_file_before_anything_runs(tmp_path: Path) -> None:
    bad = tmp_path / "broken.yaml"
    bad.write_text("id: broken\ngoal: x\nmax_steps: lots\n")
    res = _cli(str(DARK), str(bad), tmp=tmp_path)
    assert res.returncode == 2, res.stderr
    assert "broken.yaml" in res.stderr and "max_steps" in res.stderr
    assert "start" not in res.stderr


def test_sessions_list_suite_lists_the_suites_sessions(two_cases: tuple) -> None:
    res, tmp = two_cases
    suite = json.loads(res.stdout)
    env = {**os.environ, "ARTEMIS_HOME": str(tmp / "home")}
    out = subprocess.run([sys.executable, "-m", "artemis_cli", "sessions", "list", "--suite", suite["id"], "-q"],
                         capture_output=True, text=True, env=env, timeout=60)
    assert out.returncode == 0, out.stderr
    listed = set(out.stdout.split())
    # every case's last session, and the failed case's first attempt too
    assert {c["session_id"] for c in suite["cases"]} <= listed and len(listed) == 3
    none = subprocess.run([sys.executable, "-m", "artemis_cli", "sessions", "list", "--suite", "suite-nope"],
                          capture_output=True, text=True, env=env, timeout=60)
    assert none.returncode == 2 and "no suite 'suite-nope'" in none.stderr
