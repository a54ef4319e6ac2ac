"""Every stop is a clean stop (issue 11): SIGINT, SIGTERM and SIGHUP during `artemis run` or
`artemis resume` leave the session `interrupted` with whole steps only, say how to continue, and
exit 128 + the signal; a second process cannot take a session a live one owns.

Driven through the installed CLI as a subprocess on the simulated phone, slowed by its
`latency_ms` fault so that a signal lands mid-run."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
import yaml
from run_support import Stderr, StopAtSecondTap

from artemis_cli.config.profile import load_profile
from artemis_cli.config.task import load_task
from artemis_cli.engine.db import DataEngine
from artemis_cli.engine.health import integrity_problems, missing_blobs
from artemis_cli.models.offline.scripted import ScriptedModel
from artemis_cli.models.registry import reference_script
from artemis_cli.runner import run_task
from artemis_cli.stopping import SessionInterrupted

REPO = Path(__file__).resolve().parents[2]


def _slow_task(tmp_path: Path, latency_ms: int = 250, name: str = "clock-ten-alarms.yaml") -> Path:
    task = yaml.safe_load((REPO / "tasks" / name).read_text())
    task.setdefault("sim", {})["faults"] = f"latency_ms:{latency_ms}"
    path = tmp_path / "slow-clock.yaml"
    path.write_text(yaml.safe_dump(task, sort_keys=False))
    return path


def _cli(*args: str, data: Path) -> list[str]:
    return [sys.executable, "-m", "artemis_cli", *args, "--data-dir", str(data)]


def _start(args: list[str]) -> subprocess.Popen[str]:
    return subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=REPO,
                            env={**os.environ, "PYTHONUNBUFFERED": "1"})


def _wait_for_steps(data: Path, at_least: int, timeout_s: float = 60) -> str:
    """The newest session's id once it has recorded ``at_least`` steps (read by another process)."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if (data / "artemis.db").exists():
            with DataEngine.open(data) as engine:
                latest = engine.latest_session()
                if latest is not None and engine.last_step_number(latest.id) >= at_least:
                    return latest.id
        time.sleep(0.1)
    raise AssertionError(f"no session reached step {at_least} in {timeout_s} s")


def _check_whole_steps(data: Path, session_id: str) -> int:
    """Steps are numbered 1..n without gaps and every blob they name is on disk."""
    with DataEngine.open(data) as engine:
        steps = engine.get_steps(session_id)
        assert [s.number for s in steps] == list(range(1, len(steps) + 1))
        for s in steps:
            for sha in s.blob_refs().values():
                assert engine.blobs.exists(sha)
        assert missing_blobs(engine) == [] and integrity_problems(engine) == []
        return len(steps)


def _status(data: Path, session_id: str) -> tuple[str, Any]:
    with DataEngine.open(data) as engine:
        return engine.get_session(session_id).status, engine.lease_owner(session_id)


@pytest.mark.slow
@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM, signal.SIGHUP], ids=lambda s: s.name)
def test_a_signal_mid_run_stops_cleanly_and_resume_finishes(sig: signal.Signals, tmp_path: Path) -> None:
    data = tmp_path / "data"
    task = _slow_task(tmp_path, 300, "demo.yaml")  # 4 steps: stopped after 1, resumed for 3
    run = _start(_cli("run", str(task), "--model", "scripted", "--json", "--no-live", data=data))
    session_id = _wait_for_steps(data, 1)
    run.send_signal(sig)
    stdout, stderr = run.communicate(timeout=60)
    assert run.returncode == 128 + sig, stderr
    assert "Traceback" not in stderr and "unexpected" not in stderr
    steps = _check_whole_steps(data, session_id)
    assert f"Interrupted at step {steps}. Continue with: artemis resume {session_id}" in stderr
    result = json.loads(stdout)
    assert result["status"] == "interrupted" and result["exit_code"] == 128 + sig
    assert result["steps"] == steps
    status, owner = _status(data, session_id)
    assert status == "interrupted" and owner is None

    done = subprocess.run(_cli("resume", session_id, "--json", "--no-live", data=data),
                          capture_output=True, text=True, timeout=600, cwd=REPO)
    assert done.returncode == 0, done.stderr[-2000:]
    assert json.loads(done.stdout)["status"] == "succeeded"
    assert _check_whole_steps(data, session_id) > steps


@pytest.mark.slow
def test_ctrl_c_twice_and_ctrl_c_during_resume_leave_interrupted_not_running(tmp_path: Path) -> None:
    data = tmp_path / "data"
    run = _start(_cli("run", str(_slow_task(tmp_path)), "--model", "scripted", "--no-live", data=data))
    err = Stderr(run)
    session_id = _wait_for_steps(data, 1)
    run.send_signal(signal.SIGINT)
    err.wait_for("stopping on SIGINT")  # the first one is being handled: the stop has begun
    run.send_signal(signal.SIGINT)  # impatient user: must not break the shutdown
    _, stderr = err.finish(run, 60)
    assert run.returncode == 130, stderr
    assert "Traceback" not in stderr and "Continue with: artemis resume" in stderr
    assert _status(data, session_id) == ("interrupted", None)
    before = _check_whole_steps(data, session_id)

    resume = _start(_cli("resume", session_id, "--no-live", data=data))
    _wait_for_steps(data, before + 1)
    resume.send_signal(signal.SIGINT)
    _, stderr = resume.communicate(timeout=60)
    assert resume.returncode == 130, stderr
    assert "Traceback" not in stderr
    assert f"Continue with: artemis resume {session_id}" in stderr
    assert _status(data, session_id) == ("interrupted", None)
    _check_whole_steps(data, session_id)


@pytest.mark.slow
def test_resume_while_the_run_is_alive_is_refused_before_the_device(tmp_path: Path) -> None:
    data = tmp_path / "data"
    run = _start(_cli("run", str(_slow_task(tmp_path)), "--model", "scripted", "--no-live", data=data))
    try:
        session_id = _wait_for_steps(data, 1)
        with DataEngine.open(data) as engine:
            events_before = len(engine.events(session_id))
        second = subprocess.run(_cli("resume", session_id, "--no-live", data=data), capture_output=True,
                                text=True, timeout=60, cwd=REPO)
        assert second.returncode == 2, second.stderr
        assert f"is in use by process {run.pid} on this host (artemis run" in second.stderr
        assert f"kill {run.pid}" in second.stderr and "Traceback" not in second.stderr
        with DataEngine.open(data) as engine:
            kinds = [e.kind for e in engine.events(session_id)[events_before:]]
            # the refused process recorded nothing: no fast-forward of a device, no resume
            assert "fast_forward" not in kinds and "resume" not in kinds
            assert engine.lease_owner(session_id).pid == run.pid  # type: ignore[union-attr]
        listed = subprocess.run(_cli("sessions", "list", "--json", data=data), capture_output=True, text=True,
                                timeout=60, cwd=REPO)
        assert json.loads(listed.stdout)[0]["status"] == "running"
    finally:
        run.kill()  # kill -9: no chance to clean up
        run.wait()
    listed = subprocess.run(_cli("sessions", "list", "--json", data=data), capture_output=True, text=True,
                            timeout=60, cwd=REPO)
    row = json.loads(listed.stdout)[0]
    assert row["status"] == "interrupted" and row["resume"] == f"artemis resume {session_id}"
    shown = subprocess.run(_cli("sessions", "show", session_id, data=data), capture_output=True, text=True,
                           timeout=60, cwd=REPO)
    assert "interrupted" in shown.stdout and f"continue with: artemis resume {session_id}" in shown.stdout


def test_a_stop_that_lands_inside_a_write_still_leaves_the_session_interrupted(tmp_path: Path) -> None:
    """The final status and the lease release must not nest in the cut-short write (they were lost
    with it when the process exited: the session stayed ``running`` with its lease held)."""
    task = load_task(REPO / "tasks" / "demo.yaml")
    assert task.sim is not None
    engine = DataEngine.open(tmp_path / "data")
    # at its second tap, inside a DataEngine write: the write's ``BEGIN IMMEDIATE`` has run and the
    # signal's KeyboardInterrupt comes before its ``try`` (where write_transaction cannot roll back)
    phone = StopAtSecondTap(lambda: engine.db.conn.execute("BEGIN IMMEDIATE"), world=task.sim.world,
                            seed=task.sim.seed)
    with pytest.raises(SessionInterrupted) as stopped:
        run_task(task, load_profile("flash"), phone, ScriptedModel(reference_script(task)), engine, real_time=False)
    engine.close()  # as the process exiting does: what was not committed is gone
    sid = stopped.value.session_id
    assert _status(tmp_path / "data", sid) == ("interrupted", None)  # what another process (resume) reads
    with DataEngine.open(tmp_path / "data") as other:
        assert other.last_step_number(sid) == 2  # the steps before the stop (launch, first tap), whole
