"""The pytest plugin (``artemis_cli.library.pytest_plugin``, entry point ``pytest11: artemis``), run
as a user runs it: pytest's own ``pytester`` writes a test file and runs pytest on it, the plugin
loaded from the installed entry point. Each run's sessions land in a data dir of its own, read
back with the DataEngine; JUnit XML is parsed as a CI system reads it."""

from __future__ import annotations

import re
import subprocess
import sys
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from pathlib import Path

import pytest

from artemis_cli.engine.db import DataEngine
from artemis_cli.engine.records import SessionRecord

pytest_plugins = ["pytester"]

#: a passing test, a test that fails after a step, a skipped one and one that never touches the phone
TESTS = '''
import pytest

def test_adds_a_contact(phone):
    phone.launch("Contacts")
    phone.tap("Create contact")
    phone.type("First name", "Sofia")
    phone.tap("Save")
    assert phone.sees("Sofia")

def test_wrong_name(phone):
    phone.launch("Contacts")
    assert phone.sees("Nobody Here"), "the contact list has no Nobody Here"

def test_skipped_midway(phone):
    phone.launch("Contacts")
    pytest.skip("not today")

def test_never_touches_it(phone):
    assert phone.session_id is None
'''


def _sessions(data: Path) -> dict[str, SessionRecord]:
    """The data dir's sessions by goal (a test's node id)."""
    with DataEngine.open(data, create=False) as engine:
        return {rec.goal: rec for rec in engine.list_sessions()}


def _junit(path: Path) -> dict[str, dict[str, str]]:
    """testcase name → its properties."""
    root = ET.parse(path).getroot()
    return {case.get("name", ""): {p.get("name", ""): p.get("value", "") for p in case.iter("property")}
            for case in root.iter("testcase")}


@dataclass(frozen=True)
class Run:
    out: str
    data: Path
    junit: Path


@pytest.fixture(scope="module")
def one_run(tmp_path_factory: pytest.TempPathFactory) -> Run:
    """TESTS run once by pytest in a child process (as ``runpytest_subprocess`` would; an in-process
    run would unload the modules it imported while this process still holds their classes)."""
    where = tmp_path_factory.mktemp("one_run")
    (where / "test_phone.py").write_text(TESTS, encoding="utf-8")
    data, junit = where / "data", where / "junit.xml"
    res = subprocess.run([sys.executable, "-m", "pytest", "--artemis-device", "sim", "--artemis-data-dir", str(data),
                          f"--junitxml={junit}", "-p", "no:cacheprovider", "-rA"], cwd=where, capture_output=True,
                         text=True, timeout=120)
    assert res.returncode == pytest.ExitCode.TESTS_FAILED, res.stdout + res.stderr
    assert re.search(r"\b1 failed, 2 passed, 1 skipped\b", res.stdout), res.stdout
    return Run(res.stdout, data, junit)


def test_each_test_is_a_session_named_after_it_and_closed_with_its_outcome(one_run: Run) -> None:
    assert "record_property is incompatible" not in one_run.out  # no warning under junit_family xunit2
    sessions = _sessions(one_run.data)
    assert {goal: rec.status for goal, rec in sessions.items()} == {
        "test_phone.py::test_adds_a_contact": "succeeded",
        "test_phone.py::test_wrong_name": "failed",
        "test_phone.py::test_skipped_midway": "interrupted",
    }  # a test that did nothing on the phone leaves no session
    assert all(rec.loop == "library" and rec.device_serial == "sim" for rec in sessions.values())


def test_a_failed_test_names_its_session_and_report_under_the_failure(one_run: Run) -> None:
    data, out = one_run.data, one_run.out
    failed = _sessions(data)["test_phone.py::test_wrong_name"]
    lines = out.splitlines()
    section = lines[next(i for i, line in enumerate(lines) if re.fullmatch(r"-+ artemis -+", line)):]
    assert section[1:4] == [f"artemis session: {failed.id}", section[2], f"its steps: artemis sessions show {failed.id}"]
    report = data / "reports"
    named = [line.split("artemis report: ", 1)[1].strip() for line in out.splitlines() if "artemis report: " in line]
    assert len(named) == 1, out  # only the failed test has a report
    path = Path(named[0])
    assert path.is_file() and path.parent == report
    html = path.read_text(encoding="utf-8")
    assert failed.id in html and "failed" in html
    # the failure itself is still the test's own assertion, above the artemis section
    assert out.index("the contact list has no Nobody Here") < out.index(f"artemis session: {failed.id}")


def test_junit_carries_every_tests_session_figures(one_run: Run) -> None:
    data, junit = one_run.data, one_run.junit
    sessions = _sessions(data)
    props = _junit(junit)
    passed, failed = props["test_adds_a_contact"], props["test_wrong_name"]
    assert passed["session_id"] == sessions["test_phone.py::test_adds_a_contact"].id
    assert passed["steps"] == "4" and passed["model_calls"] == "0" and passed["healed_steps"] == "0"
    assert passed["cost_usd"] == "0" and passed["device"] == "sim" and "report" not in passed
    assert failed["session_id"] == sessions["test_phone.py::test_wrong_name"].id and failed["steps"] == "1"
    assert Path(failed["report"]).is_file()
    assert props["test_never_touches_it"] == {}  # no session, nothing to attach


def test_two_xdist_workers_each_take_their_own_sim(pytester: pytest.Pytester, tmp_path: Path) -> None:
    """``-n 2 --artemis-devices 'sim*2'``: gw0 runs on sim#1, gw1 on sim#2, both recording into
    one data dir (SQLite shared by two processes)."""
    pytester.makepyfile(test_pair='''
import os
import pytest

@pytest.mark.parametrize("n", range(4))
def test_one(phone, record_property, n):
    record_property("worker", os.environ["PYTEST_XDIST_WORKER"])
    phone.launch("Contacts")
    phone.tap("Create contact")
    phone.type("First name", f"Sofia {n}")
    phone.tap("Save")
    assert phone.sees(f"Sofia {n}")
''')
    data, junit = tmp_path / "data", tmp_path / "junit.xml"
    result = pytester.runpytest_subprocess("-n", "2", "--artemis-devices", "sim*2", "--artemis-data-dir", str(data),
                                           f"--junitxml={junit}", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=4)
    props = _junit(junit)
    assert {p["worker"]: p["device"] for p in props.values()} == {"gw0": "sim#1", "gw1": "sim#2"}
    sessions = _sessions(data)
    assert sorted(p["session_id"] for p in props.values()) == sorted(rec.id for rec in sessions.values())
    assert all(rec.status == "succeeded" and rec.device_serial == "sim" for rec in sessions.values())
    # each session records the slot it ran on, as its worker's JUnit properties say
    slots = {rec.id: (rec.config or {}).get("run", {}).get("device") for rec in sessions.values()}
    assert {p["session_id"]: p["device"] for p in props.values()} == slots


def test_more_workers_than_devices_is_a_usage_error(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_x="def test_x(phone):\n    pass\n")
    result = pytester.runpytest_subprocess("-n", "3", "--artemis-devices", "sim*2", "-p", "no:cacheprovider")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*3 xdist workers but 2 devices in --artemis-devices sim*2*-n 2*"])


@pytest.mark.parametrize(("args", "error"), [
    (["--artemis-device", "sim", "--artemis-devices", "sim*2"], "*--artemis-device or --artemis-devices, not both*"),
    (["--artemis-devices", "sim*0"], "*--artemis-devices: bad --devices entry 'sim*0'*sim*N takes N from 1*"),
])
def test_contradicting_or_bad_device_options_are_usage_errors(pytester: pytest.Pytester, args: list[str],
                                                              error: str) -> None:
    pytester.makepyfile(test_x="def test_x(phone):\n    pass\n")
    result = pytester.runpytest_subprocess(*args, "-p", "no:cacheprovider")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([error])


def test_loading_the_plugin_imports_nothing_heavy() -> None:
    """pytest loads the plugin in every run (this suite's too): importing it and configuring a run
    that does not use it must not pull in Artemis's engine, devices, models or the Phone API."""
    code = ("import sys, artemis_cli.library.pytest_plugin\n"
            "heavy = [m for m in sys.modules if m.startswith(('artemis_cli.', 'google', 'openai', 'sqlite_utils',"
            " 'PIL')) and m not in ('artemis_cli.library', 'artemis_cli.library.pytest_plugin')]\n"
            "print(heavy)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_a_run_stopped_by_ctrl_c_leaves_the_tests_session_interrupted(pytester: pytest.Pytester,
                                                                      tmp_path: Path) -> None:
    pytester.makepyfile(test_stop='def test_stopped(phone):\n    phone.launch("Contacts")\n    raise KeyboardInterrupt\n')
    data = tmp_path / "data"
    result = pytester.runpytest_subprocess("--artemis-device", "sim", "--artemis-data-dir", str(data),
                                           "-p", "no:cacheprovider")
    assert result.ret == pytest.ExitCode.INTERRUPTED
    assert {goal: rec.status for goal, rec in _sessions(data).items()} == {"test_stop.py::test_stopped": "interrupted"}


def test_a_report_that_cannot_be_written_is_said_under_the_failure(pytester: pytest.Pytester, tmp_path: Path) -> None:
    """The report is written inside pytest's report hook, where an exception would be an internal
    error: a data dir whose reports/ is a file still gives the failure, the session and why."""
    data = tmp_path / "data"
    data.mkdir()
    (data / "reports").write_text("not a directory")
    pytester.makepyfile(test_fails='def test_fails(phone):\n    phone.launch("Contacts")\n    assert False\n')
    result = pytester.runpytest_subprocess("--artemis-device", "sim", "--artemis-data-dir", str(data),
                                           "-p", "no:cacheprovider")
    result.assert_outcomes(failed=1)
    assert "INTERNALERROR" not in result.stdout.str() + result.stderr.str()
    (session,) = _sessions(data).values()
    assert session.status == "failed"
    result.stdout.fnmatch_lines([f"artemis session: {session.id}",
                                 "artemis report: not written (*Error: *); write it with: artemis report "
                                 f"{session.id} -o report.html"])


def test_a_tests_ai_steps_are_cached_under_its_node_id_and_update_records_them_again(
        pytester: pytest.Pytester, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Through the real google-genai SDK against the fake Gemini server: the first run's act calls
    the model, the second replays it (0 model calls), ``--artemis-update`` calls the model again
    (that the re-recorded run is the new baseline is tests/library/test_phone_cache.py's)."""
    from artemis_cli.models.fakes.gemini import FakeGeminiServer
    from artemis_cli.models.offline.scripted import script_policy

    script = [{"launch": "com.android.contacts"}, {"tap": {"desc": "Create contact"}},
              {"type": {"text": "Sofia", "into": {"id": "first_name"}}}, {"tap": {"text": "Save"}},
              {"finish": {"success": True, "answer": "added"}}]
    pytester.makepyfile(test_ai='def test_add(phone):\n    phone.act("add a contact named Sofia")\n'
                                '    assert phone.sees("Sofia")\n')
    data = tmp_path / "data"
    runs = []
    with FakeGeminiServer(script_policy(script)) as server:
        monkeypatch.setenv("GEMINI_API_KEY", "fake-key")
        monkeypatch.setenv("ARTEMIS_GEMINI_BASE_URL", server.base_url)
        for extra in ([], [], ["--artemis-update"]):
            junit = tmp_path / f"junit{len(runs)}.xml"
            # ``--opt=value``: a path given as its own argument that exists moves pytest's rootdir
            # (and so every node id, the cache key) once the first run has created it
            result = pytester.runpytest_subprocess("--artemis-device", "sim", "--artemis-model=gemini-2.5-flash",
                                                   f"--artemis-data-dir={data}", f"--junitxml={junit}",
                                                   "-p", "no:cacheprovider", *extra)
            result.assert_outcomes(passed=1)
            props = _junit(junit)["test_add"]
            runs.append((int(props["model_calls"]), int(props["replayed_steps"])))
    (first, first_replayed), second, updated = runs
    assert first > 0 and first_replayed == 0
    assert second == (0, 5)  # the five steps (the finish too) replayed, no model call
    assert updated[0] > 0 and updated[1] == 0
    with DataEngine.open(data, create=False) as engine:
        sessions = engine.list_sessions()
    assert len(sessions) == 3 and {rec.goal for rec in sessions} == {"test_ai.py::test_add"}
    assert {(rec.models or {}).get("ai") for rec in sessions} == {"gemini-2.5-flash"}  # --artemis-model reached them


def test_a_phone_that_cannot_be_opened_is_the_tests_error_with_the_clis_message(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_x="def test_x(phone):\n    pass\n")
    result = pytester.runpytest_subprocess("--artemis-device", "sim", "--artemis-profile", "no-such-profile",
                                           "-p", "no:cacheprovider")
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(["*ERROR at setup of test_x*", "artemis: *no-such-profile*", "Hint: *"])
    assert "Traceback" not in result.stdout.str() and "phone.py" not in result.stdout.str()
