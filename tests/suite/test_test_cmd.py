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
    assert "nope.yaml: no such task file, folder or bundle" in res.stderr


def test_strict_broken_task_file_names_the_file_before_anything_runs(tmp_path: Path) -> None:
    bad = tmp_path / "broken.yaml"
    bad.write_text("id: broken\ngoal: x\nmax_steps: lots\n")
    res = _cli(str(DARK), str(bad), "--strict", "--model", "scripted", tmp=tmp_path)
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


@pytest.fixture(scope="module")
def session_cases(tmp_path_factory: pytest.TempPathFactory) -> tuple[subprocess.CompletedProcess[str], Path, str]:
    """A recorded session (by id) and the same session as a bundle, run as one suite with reports."""
    tmp = tmp_path_factory.mktemp("sessions")
    env = {**os.environ, "ARTEMIS_HOME": str(tmp / "home"), "COLUMNS": "200"}
    env.pop("GEMINI_API_KEY", None)
    run = subprocess.run([sys.executable, "-m", "artemis_cli", "run", str(DARK), "--model", "scripted", "--json",
                          "--no-live"], capture_output=True, text=True, env=env, cwd=tmp, timeout=120)
    assert run.returncode == 0, run.stderr
    sid = json.loads(run.stdout)["session_id"]
    bundle = tmp / "dark.artemis"
    exported = subprocess.run([sys.executable, "-m", "artemis_cli", "sessions", "export", sid, "--format", "bundle",
                               "-o", str(bundle)], capture_output=True, text=True, env=env, cwd=tmp, timeout=60)
    assert exported.returncode == 0, exported.stderr
    res = _cli(sid, str(bundle), "--report-dir", str(tmp / "reports"), "--junit", str(tmp / "s.xml"), "--json",
               tmp=tmp)
    return res, tmp, sid


def test_session_cases_replay_with_healing_and_say_what_the_replay_did(session_cases: tuple) -> None:
    res, tmp, sid = session_cases
    assert res.returncode == 0, res.stderr
    suite = json.loads(res.stdout)
    assert [c["kind"] for c in suite["cases"]] == ["session", "session"]
    for case in suite["cases"]:
        assert case["status"] == "passed" and case["session_id"] != sid, case
        assert case["replay"]["diverged"] == 0 and case["replay"]["replayed"] + case["replay"]["retargeted"] \
            == case["steps"] > 0
        assert "healer" in case["replay"]["model_label"]  # healing is on, with the offline healer
    cases = {tc.name: tc for ts in JUnitXml.fromfile(str(tmp / "s.xml")) for tc in ts}
    props = {p.name: p.value for tc in cases.values() for p in next(iter(tc.iterchildren(Properties)))}
    assert props["kind"] == "session" and props["cost_usd"] == "0" and "replay.healed" in props


def test_report_dir_has_every_cases_report_and_an_index_linking_them(session_cases: tuple) -> None:
    import re

    res, tmp, _sid = session_cases
    suite = json.loads(res.stdout)
    index = (tmp / "reports" / "index.html").read_text()
    links = re.findall(r'<a href="([^"]+)">', index)
    assert sorted(links) == sorted(Path(c["report"]).name for c in suite["cases"])
    assert all((tmp / "reports" / link).is_file() for link in links)
    # the structure, with ids and numbers normalised (golden)
    shape = re.sub(r"suite-[0-9a-f]{10}", "SUITE", index)
    shape = re.sub(r"\d{8}-\d{6}-[0-9a-f]{4}", "SESSION", shape)
    from golden_files import assert_golden

    assert_golden(Path(__file__).parent / "golden" / "index.html", shape)


def test_an_index_escapes_what_came_from_a_device_or_a_model(tmp_path: Path) -> None:
    from artemis_cli.suite.index import render_index

    case = {"name": "<script>x</script>", "status": "failed", "flaky": False, "kind": "task", "device": "sim",
            "steps": 1, "model_calls": 1, "cost": {"total_usd": None}, "session_id": "s",
            "failure": 'failed check: visible "<img src=x onerror=alert(1)>"', "report": str(tmp_path / "a&b.html")}
    page = render_index({"id": "suite-x", "status": "failed", "cases": [case],
                         "totals": {"cases": 1, "passed": 0, "failed": 1, "flaky": 0}}, tmp_path)
    assert "<script>" not in page and "<img" not in page and 'href="a&amp;b.html"' in page
    assert "unknown" in page  # a cost nobody prices is not shown as $0


def test_ctrl_c_stops_the_suite_and_leaves_the_running_case_resumable(tmp_path: Path) -> None:
    """SIGINT mid-case: exit 130, the suite is interrupted, and the case's session is in the user's
    data dir as interrupted, which `artemis resume` then finishes."""
    import signal
    import time

    env = {**os.environ, "ARTEMIS_HOME": str(tmp_path / "home"), "COLUMNS": "200"}
    env.pop("GEMINI_API_KEY", None)
    long_task = ROOT / "tasks" / "shop-office-order.yaml"
    proc = subprocess.Popen([sys.executable, "-m", "artemis_cli", "test", str(long_task), "--model", "scripted",
                             "--json"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
                            cwd=tmp_path)
    assert proc.stderr is not None
    for line in proc.stderr:  # wait until the case is a few steps in
        if " · step " in line:  # throttled: the first line comes at step 10 or later
            break
    else:
        raise AssertionError("the case never reported its steps")
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 130, err
    suite = json.loads(out)
    assert suite["status"] == "interrupted"
    listed = subprocess.run([sys.executable, "-m", "artemis_cli", "sessions", "list", "--suite", suite["id"],
                             "--json"], capture_output=True, text=True, env=env, cwd=tmp_path, timeout=60)
    assert listed.returncode == 0, listed.stderr
    sessions = json.loads(listed.stdout)
    assert [s["status"] for s in sessions] == ["interrupted"], sessions
    t0 = time.monotonic()
    resumed = subprocess.run([sys.executable, "-m", "artemis_cli", "resume", sessions[0]["id"], "--no-live"],
                             capture_output=True, text=True, env={**env, "ARTEMIS_SECRET": "artemis123"},
                             cwd=tmp_path, timeout=300)  # the login's password is never stored
    assert resumed.returncode == 0, (resumed.stdout + resumed.stderr, time.monotonic() - t0)


def test_a_case_that_fails_once_then_passes_is_flaky_and_counts_as_passed(tmp_path: Path) -> None:
    """A real model is flaky: the fake Gemini server's model gives up on its very first turn (a
    `finish` with success false), then plays the task's reference every time after. With
    --retries 1 the case fails, runs again, passes, and is marked flaky; the suite passes."""
    import threading

    from artemis_cli.config.task import load_task
    from artemis_cli.models.fakes.gemini import FakeGeminiServer
    from artemis_cli.models.fakes.gemini_wire import FakeReply
    from artemis_cli.models.offline.scripted import script_policy
    from artemis_cli.models.registry import reference_script

    play = script_policy(reference_script(load_task(DARK)))
    gave_up = threading.Event()

    def flaky(request: object) -> object:
        if getattr(request, "tools", None) and not gave_up.is_set():
            gave_up.set()
            return FakeReply(parts=[{"functionCall": {"name": "finish", "args": {
                "success": False, "answer": "I could not find the setting", "intent": "give up"}}}])
        return play(request)

    with FakeGeminiServer(flaky) as server:
        env = {**os.environ, "ARTEMIS_HOME": str(tmp_path / "home"), "COLUMNS": "200", "GEMINI_API_KEY": "fake-key",
               "ARTEMIS_GEMINI_BASE_URL": server.base_url}
        res = subprocess.run([sys.executable, "-m", "artemis_cli", "test", str(DARK), "--model", "gemini-2.5-flash",
                              "--retries", "1", "--junit", str(tmp_path / "f.xml"), "--json"],
                             capture_output=True, text=True, env=env, cwd=tmp_path, timeout=180)
    assert gave_up.is_set()
    assert res.returncode == 0, res.stderr
    suite = json.loads(res.stdout)
    (case,) = suite["cases"]
    assert case["status"] == "passed" and case["flaky"] and case["attempts"] == 2, case
    assert suite["totals"]["flaky"] == 1 and suite["status"] == "passed"
    assert case["cost"]["total_usd"] > 0  # a priced model: the retry's cost is the case's
    (tc,) = [tc for ts in JUnitXml.fromfile(str(tmp_path / "f.xml")) for tc in ts]
    props = {p.name: p.value for p in next(iter(tc.iterchildren(Properties)))}
    assert props["flaky"] == "true" and props["attempts"] == "2" and float(props["cost_usd"]) > 0


def test_a_session_case_that_cannot_start_fails_alone(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A recording whose replay needs a password no one gave fails its own case with that reason;
    the other cases still run and the suite says failed (exit 1), not a usage error."""
    env = {**os.environ, "ARTEMIS_HOME": str(tmp_path / "home"), "COLUMNS": "200"}
    for key in ("GEMINI_API_KEY", "ARTEMIS_SECRET", "ARTEMIS_REPLAY_SECRET"):
        env.pop(key, None)
    buy = ROOT / "tasks" / "shop-buy-one.yaml"
    run = subprocess.run([sys.executable, "-m", "artemis_cli", "run", str(buy), "--model", "scripted", "--json",
                          "--no-live"], capture_output=True, text=True, env=env, cwd=tmp_path, timeout=120)
    assert run.returncode == 0, run.stderr
    sid = json.loads(run.stdout)["session_id"]
    # the recording typed secret shop_password: without its variable its replay cannot start
    monkeypatch.delenv("ARTEMIS_SECRET_SHOP_PASSWORD")
    res = _cli(sid, str(DARK), "--model", "scripted", "--json", tmp=tmp_path)
    assert res.returncode == 1, res.stderr
    by = {c["kind"]: c for c in json.loads(res.stdout)["cases"]}
    assert by["task"]["status"] == "passed"
    assert by["session"]["status"] == "failed" and "password" in by["session"]["failure"], by["session"]
