"""Usage errors, oversized inputs, unwritable outputs and ARTEMIS_DEBUG, at the process boundary.

Every test drives the installed CLI as a subprocess (``python -m artemis_cli``) and checks what a
user sees: exit code 2, Click's usage text on stderr, a one-line error naming the problem, and
never "unexpected …" (the crash path).  These hold whichever click Typer carries (the separate
package up to Typer 0.25, its bundled ``typer._click`` since 0.26).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from artemis_cli.config.yaml_source import MAX_FILE_BYTES
from artemis_cli.engine.db import DataEngine
from artemis_cli.errors import debug_enabled, parse_flag

REPO = Path(__file__).resolve().parent.parent
DEMO = REPO / "tasks" / "demo.yaml"


def cli(*args: str | Path, env: dict[str, str] | None = None, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "artemis_cli", *map(str, args)], capture_output=True, text=True,
                          env={**os.environ, "COLUMNS": "100", **(env or {})}, timeout=timeout, cwd=REPO)


def assert_usage_error(res: subprocess.CompletedProcess[str], usage: str, *errors: str) -> None:
    """Exit 2 with Click's own text: ``Usage: …``, ``Try '… --help' for help.``, ``Error: …`` (the
    error line holds every one of ``errors``; Click's wording varies a little between versions)."""
    assert res.returncode == 2, res.stderr
    lines = res.stderr.splitlines()
    assert lines and lines[0].startswith(f"Usage: {usage} "), res.stderr
    assert lines[1] == f"Try '{usage} --help' for help.", res.stderr
    assert lines[-1].startswith("Error: "), res.stderr
    for text in errors:
        assert text in lines[-1], res.stderr
    assert "unexpected" not in res.stderr and "Traceback" not in res.stderr, res.stderr
    assert res.stdout == ""


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """One real session (the demo task, offline heuristic model): (data dir, session id)."""
    data = tmp_path_factory.mktemp("usage-data")
    res = cli("run", DEMO, "--model", "heuristic", "--json", "--no-live", "--data-dir", data)
    assert res.returncode == 0, res.stderr
    return data, json.loads(res.stdout)["session_id"]


# --- bad options and commands: exit 2 with Click's usage text ----------------------------------


def test_unknown_option_and_command() -> None:
    assert_usage_error(cli("run", "--bogus"), "artemis run", "No such option", "--bogus")
    assert_usage_error(cli("bogus"), "artemis", "No such command", "bogus")


def test_bad_option_values(recorded: tuple[Path, str]) -> None:
    data, sid = recorded
    assert_usage_error(cli("sessions", "list", "-n", "abc", "--data-dir", data), "artemis sessions list",
                       "Invalid value for '--limit'")
    assert_usage_error(cli("sessions", "prompt", sid, "--step", "-1", "--data-dir", data),
                       "artemis sessions prompt", "Invalid value for '--step'")
    assert_usage_error(cli("recall", sid, "-alarm", "--data-dir", data), "artemis recall",
                       "No such option", "-a")
    assert_usage_error(cli("recall", sid, "--steps", "two-four", "--data-dir", data), "artemis recall",
                       "Invalid value for '--steps'")


def test_a_reversed_step_range_is_a_usage_error_not_silently_reversed(recorded: tuple[Path, str]) -> None:
    data, sid = recorded
    res = cli("recall", sid, "query", "--steps", "3-1", "--data-dir", data)
    assert_usage_error(res, "artemis recall", "Invalid value for '--steps'", "'3-1'", "1-3")
    ok = cli("recall", sid, "--steps", "1-3", "--json", "--data-dir", data)  # the same range, forwards
    assert ok.returncode == 0, ok.stderr
    assert json.loads(ok.stdout)["step_range"] == [1, 3]


@pytest.mark.parametrize("group", [[], ["tasks"], ["sessions"], ["bench"], ["sim"]])
def test_a_group_without_a_subcommand_shows_its_help_and_exits_2(group: list[str]) -> None:
    res = cli(*group)
    assert res.returncode == 2, res.stderr
    assert res.stdout == ""
    assert " ".join(["Usage: artemis", *group, "[OPTIONS] COMMAND"]) in res.stderr
    assert "Commands" in res.stderr and "unexpected" not in res.stderr
    helped = cli(*group, "--help")  # asking for help is still a success, on stdout
    assert helped.returncode == 0 and "Usage: artemis" in helped.stdout, helped.stderr


def test_end_of_input_at_a_confirmation_prompt_aborts_cleanly(recorded: tuple[Path, str]) -> None:
    """typer.Abort (Click's Abort before Typer 0.26, Typer's own since) ends with "Aborted." and 130."""
    import pty

    data, sid = recorded
    master, slave = pty.openpty()  # `sessions rm` only asks when stdin is a terminal
    try:
        proc = subprocess.Popen([sys.executable, "-m", "artemis_cli", "sessions", "rm", sid, "--data-dir", str(data)],
                                stdin=slave, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=REPO)
        os.write(master, b"\x04")  # Ctrl-D: end of input at the "Delete …?" prompt
        _, err = proc.communicate(timeout=120)
    finally:
        os.close(slave)
        os.close(master)
    assert proc.returncode == 130, err
    assert err.strip().splitlines()[-1] == "Aborted." and "unexpected" not in err
    assert cli("sessions", "show", sid, "--data-dir", data).returncode == 0  # nothing was removed


# --- inputs over 1 MB are refused before they are parsed ---------------------------------------


def _task_file(path: Path, size: int) -> Path:
    """A valid task file padded with comment lines to exactly ``size`` bytes."""
    head = "id: padded\ngoal: Turn on Wi-Fi\nmax_steps: 3\n"
    line = "# " + "x" * 97 + "\n"
    body = line * ((size - len(head)) // len(line))
    path.write_text(head + body + "#" * (size - len(head) - len(body) - 1) + "\n", encoding="ascii")
    assert path.stat().st_size == size
    return path


def test_task_and_profile_files_over_1mb_are_refused_quickly(tmp_path: Path) -> None:
    big = _task_file(tmp_path / "big.yaml", 2 * 1024 * 1024)
    cases: list[list[str | Path]] = [["run", big, "--model", "heuristic", "--no-live"],
                                     ["run", DEMO, "--profile", big, "--model", "heuristic", "--no-live"]]
    for args in cases:
        t0 = time.monotonic()
        res = cli(*args, "--data-dir", tmp_path / "data")
        assert time.monotonic() - t0 < 30  # was 253 s and 1.1 GB before "document too large"
        assert res.returncode == 2, res.stderr
        assert res.stderr.splitlines()[0] == (f"Error: {big}: file too large: 2.0 MB (2,097,152 bytes); "
                                              "the limit is 1.0 MB (1,048,576 bytes)")
        assert "unexpected" not in res.stderr


def test_tasks_validate_reports_an_oversized_file_like_other_invalid_files(tmp_path: Path) -> None:
    folder = tmp_path / "suite"
    folder.mkdir()
    _task_file(folder / "a-limit.yaml", MAX_FILE_BYTES)  # exactly the limit: accepted
    _task_file(folder / "b-over.yaml", MAX_FILE_BYTES + 1)
    res = cli("tasks", "validate", folder, "--json")
    assert res.returncode == 2, res.stderr
    by_name = {Path(r["path"]).name: r for r in json.loads(res.stdout)}
    assert by_name["a-limit.yaml"]["ok"] is True
    assert by_name["b-over.yaml"]["ok"] is False
    assert by_name["b-over.yaml"]["errors"][0]["message"].startswith("file too large: 1.0 MB (1,048,577 bytes)")


# --- unwritable output targets: exit 2, one line naming the file, a hint -----------------------


def assert_cannot_write(res: subprocess.CompletedProcess[str], path: Path | str, reason: str) -> None:
    assert res.returncode == 2, res.stderr
    lines = res.stderr.splitlines()
    assert f"Error: cannot write {path}: {reason}" in lines, res.stderr
    assert lines[lines.index(f"Error: cannot write {path}: {reason}") + 1].startswith("Hint: ")
    assert "unexpected" not in res.stderr and "Traceback" not in res.stderr


needs_dev_full = pytest.mark.skipif(not os.path.exists("/dev/full"), reason="no /dev/full on this system")


@needs_dev_full
@pytest.mark.parametrize("command", [["report"], ["sessions", "export"], ["sessions", "export", "--format", "maestro"]])
def test_no_space_left_on_the_output_device(recorded: tuple[Path, str], command: list[str]) -> None:
    data, sid = recorded
    assert_cannot_write(cli(*command, sid, "-o", "/dev/full", "--data-dir", data), "/dev/full",
                        "No space left on device")


@pytest.mark.parametrize("command", [["report"], ["sessions", "export"]])
def test_output_under_a_file_is_not_a_directory(recorded: tuple[Path, str], command: list[str],
                                                tmp_path: Path) -> None:
    data, sid = recorded
    (tmp_path / "plain").write_text("x")
    target = tmp_path / "plain" / "sub" / "out.txt"
    assert_cannot_write(cli(*command, sid, "-o", target, "--data-dir", data), target, "Not a directory")


def test_export_to_a_directory_is_refused_and_report_writes_inside_it(recorded: tuple[Path, str],
                                                                       tmp_path: Path) -> None:
    data, sid = recorded
    assert_cannot_write(cli("sessions", "export", sid, "-o", tmp_path, "--data-dir", data), tmp_path,
                        "Is a directory")
    res = cli("report", sid, "-o", tmp_path, "--data-dir", data)  # documented: the default name inside
    assert res.returncode == 0, res.stderr
    assert (tmp_path / f"artemis-report-{sid}.html").read_text(encoding="utf-8").startswith("<!DOCTYPE html>")


@pytest.mark.parametrize("command", [["report"], ["sessions", "export"]])
def test_an_output_in_a_missing_directory_is_refused_and_nothing_is_created(recorded: tuple[Path, str],
                                                                           command: list[str], tmp_path: Path) -> None:
    data, sid = recorded
    target = tmp_path / "new" / "deeper" / "steps.jsonl"
    res = cli(*command, sid, "-o", target, "--data-dir", data)
    assert_cannot_write(res, target, f"the directory {target.parent} does not exist")
    assert not (tmp_path / "new").exists()


def test_outputs_leave_no_temporary_files(recorded: tuple[Path, str], tmp_path: Path) -> None:
    data, sid = recorded
    target = tmp_path / "out" / "steps.jsonl"
    target.parent.mkdir()
    res = cli("sessions", "export", sid, "-o", target, "--data-dir", data)
    assert res.returncode == 0, res.stderr
    assert [json.loads(line)["number"] for line in target.read_text().splitlines()] == [1, 2, 3, 4]
    assert sorted(p.name for p in target.parent.iterdir()) == ["steps.jsonl"]


@pytest.mark.parametrize("where", ["directory", "under-a-file"])
def test_bench_out_is_checked_before_the_run(tmp_path: Path, where: str) -> None:
    (tmp_path / "plain").write_text("x")
    out = tmp_path if where == "directory" else tmp_path / "plain" / "r.json"
    reason = "Is a directory" if where == "directory" else "Not a directory"
    # the smallest bench there is, so that a missing early check costs seconds, not minutes
    res = cli("bench", "run", REPO / "tasks" / "bench", "--memory", "naive", "--tasks", "bench-clock-alarm-week",
              "--synthetic-steps", "20", "--recall-steps", "10", "--out", out)
    assert_cannot_write(res, out, reason)
    assert "--out" in res.stderr.splitlines()[-1]  # the hint names the option
    assert res.stdout == ""  # refused before any pair ran
    assert sorted(p.name for p in tmp_path.iterdir()) == ["plain"]  # no state file, no sessions dir


# --- ARTEMIS_DEBUG -----------------------------------------------------------------------------


@pytest.mark.parametrize(("value", "expected"), [
    *[(v, True) for v in ("1", "true", "TRUE", "Yes", "on", " ON ")],
    *[(v, False) for v in ("0", "false", "False", "no", "NO", "off", "Off", "", None)],
    *[(v, None) for v in ("2", "maybe", "enable", "0.0")],
])
def test_parse_flag(value: str | None, expected: bool | None, monkeypatch: pytest.MonkeyPatch) -> None:
    assert parse_flag(value) is expected
    if value is None:
        monkeypatch.delenv("ARTEMIS_DEBUG", raising=False)
    else:
        monkeypatch.setenv("ARTEMIS_DEBUG", value)
    assert debug_enabled() is (expected is True)  # unrecognised values count as off


@pytest.mark.parametrize(("value", "traceback"), [("0", False), ("off", False), ("maybe", False),
                                                  ("1", True), ("TRUE", True), ("yes", True)])
def test_artemis_debug_on_the_command_line(value: str, traceback: bool, tmp_path: Path) -> None:
    DataEngine.open(tmp_path).close()  # an empty data dir: the session is what is missing
    res = cli("recall", "no-such-session", "query", "--data-dir", tmp_path, env={"ARTEMIS_DEBUG": value})
    if traceback:
        assert res.returncode != 2 and "Traceback" in res.stderr, res.stderr
        assert "SessionNotFound" in res.stderr
    else:
        assert res.returncode == 2, res.stderr
        assert "Traceback" not in res.stderr
        assert "Error: no session matches 'no-such-session'" in res.stderr.splitlines()
        assert ("Note: ARTEMIS_DEBUG='maybe'" in res.stderr) is (value == "maybe")


# --- every input error says what to do next ---------------------------------------------------


def test_every_input_error_prints_a_hint(tmp_path: Path) -> None:
    """``Error: …`` then ``Hint: …`` for input errors with and without a hint of their own: an
    invalid task file (the README promises the Hint), an unknown model, a bad fault value."""
    bad = tmp_path / "bad.yaml"
    bad.write_text("id: x\ngoal: 3\nbogus: 1\n")
    data = ["--data-dir", str(tmp_path / "data")]
    cases = {
        "invalid task": (["run", bad, "--model", "heuristic", "--no-live", *data], "artemis tasks validate FILE"),
        "unknown model": (["run", DEMO, "--model", "nosuch", "--no-live", *data], "use one of: gemini ("),
        "bad fault": (["sim", "serve", "--port", "0", "--faults", "latency_ms:99999"],
                      "see `artemis sim serve --help`"),
    }
    for name, (args, hint) in cases.items():
        res = cli(*args)
        assert res.returncode == 2, (name, res.stderr)
        lines = res.stderr.splitlines()
        assert lines[0].startswith("Error: ") and lines[-1].startswith("Hint: "), (name, res.stderr)
        assert hint in lines[-1], (name, res.stderr)
