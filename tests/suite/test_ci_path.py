"""The CI engineer's path through ``artemis test`` (issue 36 A), through the real CLI (a subprocess
of ``python -m artemis_cli``) on simulated phones, with the JUnit file read back by junitparser:
output paths refused before any work, the model named (and the keyless baseline refused), the
results table at 80 and 120 columns, an invalid task as one failed case, folders recursed as
``tasks validate`` does, ``--json`` on a suite that cannot start, a stable classname."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from junitparser import Failure, JUnitXml
from rich.console import Console

ROOT = Path(__file__).resolve().parents[2]
DARK = ROOT / "tasks" / "settings-dark-theme.yaml"
SGR = re.compile(r"\x1b\[[0-9;]*m")
LONG_CHECK = "settings get secure ui_night_mode " + "and a very long explanation of what went wrong " * 4


def _cli(*args: str | Path, tmp: Path, width: int = 200, terminal: bool = False,
         env_extra: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "ARTEMIS_HOME": str(tmp / "home"), "COLUMNS": str(width), **(env_extra or {})}
    if terminal:  # Rich lays tables out for a terminal of $COLUMNS although stdout is a pipe
        env.update({"TTY_COMPATIBLE": "1", "NO_COLOR": "1"})
    for key in ("GEMINI_API_KEY", "GOOGLE_API_KEY", "ARTEMIS_DEBUG"):
        env.pop(key, None)
    res = subprocess.run([sys.executable, "-m", "artemis_cli", *map(str, args)], capture_output=True, text=True,
                         env=env, cwd=tmp, timeout=300, stdin=subprocess.DEVNULL)
    res.stdout = SGR.sub("", res.stdout)
    return res


def _sessions(home: Path) -> list[str]:
    from artemis_cli.engine.db import DataEngine
    from artemis_cli.engine.errors import NoArtemisData

    try:
        with DataEngine.open_for_reading(home) as engine:
            return [s.id for s in engine.list_sessions(limit=None)]
    except NoArtemisData:
        return []


def _failing_task(folder: Path, long: bool = False) -> Path:
    text = DARK.read_text().replace("id: settings-dark-theme", "id: dark-wrong-check").replace('equals: "2"',
                                                                                                 'equals: "7"')
    if long:
        text = text.replace("settings get secure ui_night_mode", LONG_CHECK)
    path = folder / "dark-wrong-check.yaml"
    path.write_text(text)
    return path


# -- 1. every output path is checked before any work, by one rule ------------------------------------


@pytest.mark.parametrize("option", ["--junit", "--report-dir"])
def test_an_output_path_in_a_missing_directory_is_refused_before_any_case_runs(tmp_path: Path, option: str) -> None:
    target = tmp_path / "ci-out" / "nodir" / "out.xml"
    res = _cli("test", DARK, "--model", "scripted", option, target, "--json", tmp=tmp_path)
    assert res.returncode == 2, res.stderr
    assert f"cannot write {target}: the directory {target.parent} does not exist" in res.stderr
    assert f"Hint: create it first (mkdir -p {target.parent}), or give {option}" in res.stderr
    assert "start settings-dark-theme" not in res.stderr and _sessions(tmp_path / "home") == []
    assert not target.parent.exists()  # the rule: nothing is created
    doc = json.loads(res.stdout)  # --json: exactly one document, also for a suite that could not start
    assert doc["status"] == "error" and doc["exit_code"] == 2 and "does not exist" in doc["error"]
    assert doc["hint"].startswith("create it first")


def test_report_assets_and_sessions_export_follow_the_same_rule(tmp_path: Path) -> None:
    """The one helper (cli/output.check_output) behind report -o/--assets and sessions export -o."""
    run = _cli("run", DARK, "--model", "scripted", "--json", "--no-live", tmp=tmp_path)
    assert run.returncode == 0, run.stderr
    sid = json.loads(run.stdout)["session_id"]
    missing = tmp_path / "nodir" / "sub"
    for args, option in ((("report", sid, "--assets", missing / "shots"), "--assets"),
                         (("report", sid, "-o", missing / "r.html"), "-o"),
                         (("sessions", "export", sid, "-o", missing / "s.jsonl"), "-o")):
        res = _cli(*args, tmp=tmp_path)
        assert res.returncode == 2, (args, res.stderr)
        assert f"the directory {missing}" in res.stderr and f"give {option}" in res.stderr, res.stderr
    assert not (tmp_path / "nodir").exists()
    # an output folder is itself created inside an existing directory
    ok = _cli("report", sid, "-o", tmp_path / "r.html", "--assets", tmp_path / "shots", tmp=tmp_path)
    assert ok.returncode == 0, ok.stderr
    assert (tmp_path / "shots" / "thumbs").is_dir()


# -- 2. the model is named; the keyless heuristic baseline is refused ---------------------------------


def test_without_model_or_key_the_suite_is_refused_with_a_hint(tmp_path: Path) -> None:
    res = _cli("test", DARK, "--json", tmp=tmp_path)
    assert res.returncode == 2, res.stderr
    assert "the task cases would run on the offline heuristic baseline" in res.stderr
    assert "Hint: set GEMINI_API_KEY, or pass --model" in res.stderr and "--model heuristic" in res.stderr
    assert json.loads(res.stdout)["status"] == "error"
    assert _sessions(tmp_path / "home") == []


def test_the_model_and_why_on_stderr_in_json_and_junit(tmp_path: Path) -> None:
    xml = tmp_path / "out.xml"
    res = _cli("test", DARK, "--model", "scripted", "--junit", xml, "--json", tmp=tmp_path)
    assert res.returncode == 0, res.stderr
    first = res.stderr.splitlines()[0]
    assert first == "model scripted (--model scripted)", res.stderr  # said before the first case starts
    suite = json.loads(res.stdout)
    assert suite["model"]["name"] == "scripted" and suite["model"]["why"] == "--model scripted"
    (ts,) = list(JUnitXml.fromfile(str(xml)))
    props = {p.name: p.value for p in ts.properties()}
    assert props["model"] == "scripted" and props["model.why"] == "--model scripted"
    assert props["suite_id"] == suite["id"]


def test_heuristic_given_explicitly_runs_and_says_it_is_the_baseline(tmp_path: Path) -> None:
    res = _cli("test", ROOT / "tasks" / "refuse-delete-all.yaml", "--model", "heuristic", "--json", tmp=tmp_path)
    assert res.returncode in (0, 1), res.stderr
    assert "model heuristic (--model heuristic: the offline baseline, not an LLM)" in res.stderr
    assert json.loads(res.stdout)["model"]["name"] == "heuristic"


# -- 8. a stable JUnit classname -------------------------------------------------------------------------


def test_junit_classname_is_the_suite_name_whatever_path_was_typed(tmp_path: Path) -> None:
    folder = tmp_path / "suite"
    folder.mkdir()
    shutil.copy(DARK, folder / "dark.yaml")
    names = set()
    for typed, extra in (("./suite/", ()), (str(folder / "dark.yaml"), ()), ("suite", ("--name", "nightly"))):
        xml = tmp_path / "j.xml"
        res = _cli("test", typed, "--model", "scripted", "--junit", xml, *extra, tmp=tmp_path)
        assert res.returncode == 0, res.stderr
        (ts,) = list(JUnitXml.fromfile(str(xml)))
        names.add((ts.name, tuple(tc.classname for tc in ts)))
    assert names == {("artemis", ("artemis",)), ("nightly", ("nightly",))}


# -- 4 and 5. invalid tasks fail as cases; folders recurse as tasks validate does -------------------------


@pytest.fixture(scope="module")
def folder_suite(tmp_path_factory: pytest.TempPathFactory) -> tuple[subprocess.CompletedProcess[str], Path]:
    tmp = tmp_path_factory.mktemp("folder")
    suite = tmp / "suite"
    (suite / "nested").mkdir(parents=True)
    (suite / ".hidden").mkdir()
    shutil.copy(DARK, suite / "dark.yaml")
    shutil.copy(ROOT / "tasks" / "refuse-delete-all.yaml", suite / "nested" / "refuse.yml")
    shutil.copy(DARK, suite / ".hidden" / "not-a-case.yaml")
    (suite / "broken.yaml").write_text("id: broken\ngoal: x\nmax_steps: lots\n")
    res = _cli("test", "suite", "--model", "scripted", "--junit", tmp / "out.xml", "--json", tmp=tmp)
    return res, tmp


def test_an_invalid_task_is_one_failed_case_while_the_others_run(folder_suite: tuple) -> None:
    res, tmp = folder_suite
    assert res.returncode == 1, res.stderr
    suite = json.loads(res.stdout)
    by = {c["name"]: c for c in suite["cases"]}
    assert by["broken"]["status"] == "failed" and by["broken"]["kind"] == "invalid"
    assert "broken.yaml:3" in by["broken"]["failure"] and "max_steps" in by["broken"]["failure"]
    assert by["settings-dark-theme"]["status"] == "passed" and by["settings-dark-theme"]["session_id"]
    xml = JUnitXml.fromfile(str(tmp / "out.xml"))
    broken = next(tc for ts in xml for tc in ts if tc.name == "broken")
    assert isinstance(broken.result[0], Failure) and "max_steps" in (broken.result[0].message or "")


def test_a_folder_is_recursed_as_tasks_validate_does(folder_suite: tuple) -> None:
    res, tmp = folder_suite
    suite = json.loads(res.stdout)
    assert sorted(c["name"] for c in suite["cases"]) == ["broken", "refuse-delete-all-contacts", "settings-dark-theme"]
    validated = _cli("tasks", "validate", "suite", "--json", tmp=tmp)
    listed = json.loads(validated.stdout)
    files = sorted(Path(tmp / f["path"]).resolve().name for f in listed)
    assert files == ["broken.yaml", "dark.yaml", "refuse.yml"]  # the same files: .hidden/ left out by both


def test_strict_keeps_fail_fast(tmp_path: Path) -> None:
    (tmp_path / "s").mkdir()
    shutil.copy(DARK, tmp_path / "s" / "dark.yaml")
    (tmp_path / "s" / "broken.yaml").write_text("id: broken\ngoal: x\nmax_steps: lots\n")
    res = _cli("test", "s", "--model", "scripted", "--strict", "--json", tmp=tmp_path)
    assert res.returncode == 2 and "broken.yaml:3" in res.stderr, res.stderr
    assert "start" not in res.stderr and json.loads(res.stdout)["status"] == "error"


# -- 3. the results table at 80 and 120 columns -----------------------------------------------------------


def _suite_with_long_failure() -> dict:
    failure = "failed check: shell (" + LONG_CHECK.strip() + ")"
    return {"id": "suite-0123456789", "status": "failed", "totals": {}, "cases": [
        {"name": "settings-dark-theme", "status": "passed", "flaky": False, "device": "sim#1", "steps": 3,
         "cost": {"total_usd": 0.0}, "session_id": "20261206-021012-f567", "failure": None},
        {"name": "dark-wrong-check", "status": "failed", "flaky": False, "device": "sim#2", "steps": 3,
         "cost": {"total_usd": 0.0}, "session_id": "20261206-021017-3ba0", "failure": failure},
        {"name": "broken", "status": "failed", "flaky": False, "device": None, "steps": 0, "cost": None,
         "session_id": None, "failure": "invalid task file: broken.yaml:3: max_steps: not an integer"}]}


@pytest.mark.parametrize("width", [80, 120])
def test_results_table_keeps_case_status_and_device_whole(width: int) -> None:
    from golden_files import assert_golden

    from artemis_cli.cli.test_cmd import results_table

    with open(os.devnull, "w") as sink:
        console = Console(width=width, record=True, no_color=True, force_terminal=False, file=sink)
        console.print(results_table(_suite_with_long_failure()).build(width))
    text = console.export_text()
    assert all(len(line) <= width for line in text.splitlines()), text
    for ident in ("settings-dark-theme", "dark-wrong-check", "sim#1", "sim#2", "passed", "failed"):
        assert re.search(rf"(?<![\w-]){re.escape(ident)}(?![\w-])", text), (ident, text)
    assert "…" in text  # the long failure is cut, not the columns beside it
    assert_golden(Path(__file__).parent / "golden" / f"results-{width}.txt", text)


@pytest.mark.parametrize("width", [80, 120])
def test_the_cli_table_fits_the_terminal_with_a_long_failure(tmp_path: Path, width: int) -> None:
    bad = _failing_task(tmp_path, long=True)
    res = _cli("test", DARK, bad, "--model", "scripted", tmp=tmp_path, width=width, terminal=True)
    assert res.returncode == 1, res.stderr
    assert all(len(line) <= width for line in res.stdout.splitlines()), res.stdout
    rows = [line for line in res.stdout.splitlines() if "dark-wrong-check" in line]
    assert rows and "failed" in rows[0] and re.search(r"\bsim\b", rows[0]) and "failed check" in rows[0], res.stdout


# -- 7. --json is one document, also when a run cannot start; a run out of steps says so -----------------


def test_run_json_prints_one_document_when_the_run_cannot_start(tmp_path: Path) -> None:
    res = _cli("run", DARK, "--model", "no-such-model", "--json", "--no-live", tmp=tmp_path)
    assert res.returncode == 2, res.stderr
    doc = json.loads(res.stdout)  # exactly one document: json.loads refuses trailing data
    assert doc == {"status": "error", "error": "unknown model 'no-such-model'", "hint": doc["hint"], "exit_code": 2}
    assert doc["hint"] and "Error: unknown model 'no-such-model'" in res.stderr


def test_a_run_that_used_up_max_steps_says_so(tmp_path: Path) -> None:
    res = _cli("run", ROOT / "tasks" / "notes-new.yaml", "--model", "scripted", "--max-steps", "2", "--json",
               "--no-live", tmp=tmp_path)
    doc = json.loads(res.stdout)
    assert res.returncode == 1 and doc["status"] == "failed", doc
    assert doc["message"].startswith("stopped at max_steps 2 without finish; success checks failed"), doc["message"]
