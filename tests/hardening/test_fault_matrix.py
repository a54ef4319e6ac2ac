"""The fault matrix (benchmarks/fault_matrix.py): no fault makes `artemis run` crash (issue 8).

The representative subset runs the real CLI in subprocesses against the fake Gemini server; the
classifier tests prove the verdict can come out ``crashed``.
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

REPO = Path(__file__).resolve().parents[2]
SCRIPT = REPO / "benchmarks" / "fault_matrix.py"
# one of each kind: a device drop that must stop (exit 3 + resume), garbage XML, a 503 storm that
# exhausts the fallback chain (then resumed), a 400, and a malformed function call
SUBSET = ("drop_long", "garbage_xml", "gemini_503_exhausted", "gemini_400", "call_two_actions")


def _matrix() -> ModuleType:
    spec = importlib.util.spec_from_file_location("fault_matrix", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["fault_matrix"] = module
    spec.loader.exec_module(module)
    return module


def test_fault_matrix_subset_never_crashes(tmp_path: Path) -> None:
    args = [sys.executable, str(SCRIPT), "--json"]
    for name in SUBSET:
        args += ["--only", name]
    done = subprocess.run(args, cwd=REPO, capture_output=True, text=True, timeout=600)
    report = json.loads(done.stdout)
    runs = report["runs"]
    assert [r["fault"] for r in runs] == list(SUBSET)
    crashed = [(r["fault"], r["reason"], r["message"]) for r in runs if r["outcome"] == "crashed"]
    assert report["crashed"] == 0, crashed
    assert done.returncode == 0, done.stderr[-2000:]
    matrix = _matrix()
    for r in runs:
        assert r["outcome"] in ("finished", "stopped-resumable"), r
        assert r["session_id"] and r["injected"] > 0, r  # the fault really happened
        if r["outcome"] != "finished":
            assert matrix.NEXT_STEP_RE.search(r["message"]), r  # says what to do next
            assert f"artemis resume {r['session_id']}" in r["message"]
            assert r["resume"]["outcome"] != "crashed", r
    by = {r["fault"]: r for r in runs}
    assert by["drop_long"]["exit_code"] == 3 and by["drop_long"]["outcome"] == "stopped-resumable"
    assert by["gemini_503_exhausted"]["exit_code"] == 3
    assert by["gemini_503_exhausted"]["resume"]["exit_code"] == 0  # recovered once the storm passed
    assert by["call_two_actions"]["exit_code"] == 0


# issue 11: a second process resuming a live session, malformed replies, a refusal, a bad key.
# The matrix's signal rows and password_A (36 s of the suite) are left to the benchmark; their fast
# version is tests/hardening/test_stop_drain_cli.py (SIGINT, SIGTERM, SIGHUP and a double Ctrl-C
# with lens jobs in flight: exit code, interrupted, whole steps, lease released, no traceback or
# "closed database" on stderr, and a resume that makes the cut-off summaries);
# tests/hardening/test_clean_stops.py stops a run with each signal and resumes it, and
# tests/hardening/test_password_turns.py kills and resumes the one-character password run.
ISSUE_11_SUBSET = ("resume_while_running", "gemini_malformed_x2", "gemini_safety", "gemini_invalid_key")
# These four rows (38 s, and load-sensitive: under a heavy load the first run could end before the
# second process started) run with ARTEMIS_BENCH_FULL=1 or as `benchmarks/fault_matrix.py --only …`;
# the suite checks each of them in-process or at the CLI elsewhere:
# resume_while_running: test_clean_stops.py::test_resume_while_the_run_is_alive_is_refused_before_the_device;
# malformed x2, safety, invalid key: tests/operators/test_model_faults.py (asked again and succeeds,
# refusals exit 1 saying refused, an invalid key through the CLI exits 2 with the fix).


@pytest.mark.slow
@pytest.mark.skipif(not os.environ.get("ARTEMIS_BENCH_FULL"), reason="the issue-11 matrix rows: ARTEMIS_BENCH_FULL=1")
def test_issue_11_rows_stop_cleanly_and_show_what_they_must() -> None:
    args = [sys.executable, str(SCRIPT), "--json"]
    for name in ISSUE_11_SUBSET:
        args += ["--only", name]
    done = subprocess.run(args, cwd=REPO, capture_output=True, text=True, timeout=600)
    report = json.loads(done.stdout)
    by = {r["fault"]: r for r in report["runs"]}
    assert list(by) == list(ISSUE_11_SUBSET)
    failing = [(r["fault"], r["exit_code"], r["outcome"], r["reason"], r["message"][-300:]) for r in report["runs"]
               if r["outcome"] == "crashed" or any(v is False for v in r["checks"].values())]
    assert report["crashed"] == 0 and report["failed_checks"] == [], (report["failed_checks"], failing)
    assert done.returncode == 0, done.stderr[-2000:]
    assert by["resume_while_running"]["checks"]["second_exit"] == 2
    assert by["resume_while_running"]["checks"]["second_process_device_actions"] == 0
    assert by["gemini_malformed_x2"]["exit_code"] == 0 and by["gemini_malformed_x2"]["injected"] == 2
    assert by["gemini_safety"]["exit_code"] == 1 and "refused" in by["gemini_safety"]["message"]
    assert by["gemini_invalid_key"]["exit_code"] == 2


def test_a_failed_check_fails_the_matrix() -> None:
    matrix = _matrix()
    ok = matrix.RunRecord("x", "finished", 0, "", 1, "s", checks={"a": True, "n": 0})
    bad = matrix.RunRecord("y", "finished", 0, "", 1, "s", checks={"second_refused": False})
    assert matrix.summary([ok])["failed_checks"] == []
    assert matrix.summary([ok, bad])["failed_checks"] == ["y: second_refused"]


def test_a_signal_exit_is_documented_only_for_the_signal_sent() -> None:
    classify = _matrix().classify
    said = "Interrupted at step 2. Continue with: artemis resume s\nHint: x\n"
    assert classify(143, "", said, signalled=15).outcome == "stopped-resumable"
    assert classify(143, "", said).outcome == "crashed"  # no signal was sent: 143 is not documented
    assert classify(130, "", said, signalled=15).outcome == "crashed"  # the wrong code for SIGTERM


# --- the classifier can fail ------------------------------------------------------------------

TRACEBACK = """Session 20260101-000000-abcd · task x
Traceback (most recent call last):
  File "artemis_cli/runner.py", line 1, in run_task
KeyError: 'bounds'
"""


def test_a_traceback_on_stderr_is_crashed_whatever_the_exit_code() -> None:
    classify = _matrix().classify
    for code in (0, 1, 3):
        verdict = classify(code, "", TRACEBACK)
        assert verdict.outcome == "crashed" and "traceback" in verdict.reason


def test_other_crash_signs() -> None:
    classify = _matrix().classify
    assert classify(None, "", "", timed_out=True).outcome == "crashed"  # a hang
    assert classify(139, "", "").outcome == "crashed"  # undocumented exit code
    unexpected = "Error: unexpected KeyError: 'x'\nHint: rerun with ARTEMIS_DEBUG=1 for the full traceback\n"
    assert classify(1, "", unexpected).outcome == "crashed"
    silent = json.dumps({"status": "interrupted", "message": "device 'sim' offline", "session_id": "s"})
    assert classify(3, silent, "").outcome == "crashed"  # stopped without saying what to do next
    told = json.dumps({"status": "interrupted", "session_id": "s",
                       "message": "device offline — continue it with: artemis resume s"})
    assert classify(3, told, "").outcome == "stopped-resumable"
    assert classify(3, told, "", resumable=False).outcome == "crashed"  # the resume itself crashed


def test_normal_endings_are_finished() -> None:
    classify = _matrix().classify
    assert classify(0, json.dumps({"status": "succeeded", "message": "ok"}), "").outcome == "finished"
    failed = json.dumps({"status": "failed", "message": "success checks failed: x"})
    assert classify(1, failed, "").outcome == "finished"
