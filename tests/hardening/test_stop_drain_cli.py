"""Every stop is quiet and loses nothing (issue 35), at the CLI: SIGINT, SIGTERM, SIGHUP and a
double Ctrl-C land while background lens jobs are provably in flight — the fake Gemini server
holds every lens request on an event until the run has exited — and the run must exit 130/143/129
with the session ``interrupted``, whole steps, its lease released and NOTHING but its own lines on
stderr (no ``Traceback``, no "closed database"); the summaries cut off stay ``pending`` with no
model call recorded, and ``artemis resume`` finishes the task and makes them, each call once.

The fast, default-suite version of benchmarks/fault_matrix.py's signal rows (the full matrix
stays a benchmark). The last test is the same stop in-process, where the order is exact: a job
answered after the stop has returned must write nothing (it did before the drain)."""

from __future__ import annotations

import json
import logging
import os
import signal
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest
from run_support import Stderr, StopAtSecondTap

from artemis_cli.config.profile import load_profile
from artemis_cli.config.task import load_task
from artemis_cli.engine.db import DataEngine
from artemis_cli.engine.health import integrity_problems, missing_blobs
from artemis_cli.memory.lens import LENS_SYSTEM_PROMPT
from artemis_cli.models.fakes.gemini import FakeGeminiServer, FakeReply, FakeRequest
from artemis_cli.models.gemini import GeminiModel
from artemis_cli.models.offline.scripted import script_policy
from artemis_cli.models.registry import reference_script
from artemis_cli.runner import run_task
from artemis_cli.stopping import SessionInterrupted

REPO = Path(__file__).resolve().parents[2]
TASK = REPO / "tasks" / "demo.yaml"  # 4 steps


class HeldLens:
    """The task's reference solution for the operator; step-lens requests are held: the first
    until ``release`` (set once the run has exited: its job is cut off), the later ones until
    ``release_rest`` (set once the stop has begun: they finish within its bound)."""

    def __init__(self) -> None:
        self.play = script_policy(reference_script(load_task(TASK)))
        self.release, self.release_rest = threading.Event(), threading.Event()
        self._arrived = threading.Condition()
        self._count = 0

    def __call__(self, request: FakeRequest) -> FakeReply:
        if request.system == LENS_SYSTEM_PROMPT and not self.release.is_set():
            with self._arrived:
                self._count += 1
                first = self._count == 1
                self._arrived.notify_all()
            assert (self.release if first else self.release_rest).wait(120), "the test never released the lens"
        return self.play(request)  # type: ignore[no-any-return]

    def wait_in_flight(self, count: int, timeout_s: float = 120) -> bool:
        with self._arrived:
            return self._arrived.wait_for(lambda: self._count >= count, timeout_s)


def _env(server: FakeGeminiServer) -> dict[str, str]:
    env = {**os.environ, "GEMINI_API_KEY": "dummy", "ARTEMIS_GEMINI_BASE_URL": server.base_url,
           "ARTEMIS_GEMINI_TIMEOUT_S": "120", "PYTHONUNBUFFERED": "1"}
    for key in ("ARTEMIS_DEBUG", "ARTEMIS_HOME"):
        env.pop(key, None)
    return env


def _cli(*args: str, data: Path) -> list[str]:
    return [sys.executable, "-m", "artemis_cli", *args, "--json", "--no-live", "--data-dir", str(data)]


def _facts(data: Path) -> dict[str, Any]:
    with DataEngine.open(data) as engine:
        session = engine.latest_session()
        assert session is not None
        steps = engine.get_steps(session.id)
        return {
            "id": session.id, "status": session.status, "lease": engine.lease_owner(session.id),
            "numbers": [s.number for s in steps],
            "whole": missing_blobs(engine) == [] and integrity_problems(engine) == [],
            "pending": [s.number for s in steps if s.summary_status == "pending"],
            "lens_summaries": [s.number for s in steps if s.summary_status == "ready"
                               and s.summary_source == "visual_lens"],
            "lens_calls": [c for c in engine.llm_calls(session.id) if c.role == "lens"],
        }


@pytest.mark.slow
@pytest.mark.parametrize("signals", [(signal.SIGINT,), (signal.SIGTERM,), (signal.SIGHUP,),
                                     (signal.SIGINT, signal.SIGINT)],
                         ids=["SIGINT", "SIGTERM", "SIGHUP", "ctrl-c-twice"])
def test_a_stop_with_lens_jobs_in_flight_is_quiet_and_resume_makes_their_summaries(
        signals: tuple[signal.Signals, ...], tmp_path: Path) -> None:
    data, held = tmp_path / "data", HeldLens()
    sig = signals[0]
    with FakeGeminiServer(held) as server:
        env = _env(server)
        run = subprocess.Popen(_cli("run", str(TASK), "--model", "gemini", data=data), cwd=REPO, env=env,
                               stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            err = Stderr(run)
            assert held.wait_in_flight(2), err.text()  # two steps' lens jobs are in flight, held
            run.send_signal(sig)
            err.wait_for(f"stopping on {sig.name}: finishing")  # the stop has begun: it drains
            if len(signals) > 1:  # an impatient user: a second Ctrl-C while the stop drains
                run.send_signal(signals[1])
            held.release_rest.set()  # the second job's answer comes back within the stop's bound
            out, stderr = err.finish(run)
        finally:
            if run.poll() is None:
                run.kill()
                run.wait()
        held.release.set()  # only now: the first job's answer comes after the run has exited

        assert run.returncode == 128 + sig, stderr
        assert "Traceback" not in stderr and "closed database" not in stderr, stderr
        assert "Error" not in stderr and "failed" not in stderr, stderr  # nothing but the run's own lines
        facts = _facts(data)
        sid = facts["id"]
        assert stderr.rstrip().endswith(f"Continue with: artemis resume {sid}"), stderr
        assert json.loads(out)["status"] == "interrupted"
        assert facts["status"] == "interrupted" and facts["lease"] is None
        assert facts["numbers"] == list(range(1, len(facts["numbers"]) + 1)) and facts["whole"]
        # the job answered within the bound is written whole: its summary and its one call ...
        assert len(facts["lens_summaries"]) == 1 and len(facts["lens_calls"]) == 1, facts
        # ... the one held past the run's exit was cut off: pending, with no call half-recorded
        assert facts["pending"] and not set(facts["pending"]) & set(facts["lens_summaries"]), facts

        done = subprocess.run(_cli("resume", sid, data=data), cwd=REPO, env=env, stdin=subprocess.DEVNULL,
                              capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    assert json.loads(done.stdout)["status"] == "succeeded"
    assert "Traceback" not in done.stderr
    after = _facts(data)
    assert after["pending"] == []
    assert set(facts["pending"]) <= set(after["lens_summaries"])  # the cut-off summaries exist now
    assert len(after["lens_calls"]) == len(after["lens_summaries"])  # each made by one recorded call


def test_after_the_stop_no_background_job_writes_and_the_one_inside_the_bound_is_whole(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    task, held = load_task(TASK), HeldLens()
    assert task.sim is not None
    engine = DataEngine.open(tmp_path / "data")
    notices: list[str] = []

    def on_notice(text: str) -> None:
        notices.append(text)
        if text.startswith("stopping on SIGINT: finishing"):
            held.release_rest.set()  # the stop has begun: the second job answers within its bound

    with FakeGeminiServer(held) as server, caplog.at_level(logging.INFO):
        model = GeminiModel(["gemini-2.5-flash"], api_key="k", base_url=server.base_url, timeout_s=120,
                            sleep=lambda s: None)
        # Ctrl-C lands at step 3's tap, once two lens jobs are provably in flight
        phone = StopAtSecondTap(lambda: held.wait_in_flight(2) or pytest.fail("no lens job in flight"),
                                world=task.sim.world, seed=task.sim.seed)
        with pytest.raises(SessionInterrupted) as stopped:
            run_task(task, load_profile("flash"), phone, model, engine, real_time=False, on_notice=on_notice)
        sid = stopped.value.session_id
        before = _facts(tmp_path / "data")
        held.release.set()  # the cut-off job's answer comes back after the stop returned ...
        for worker in [t for t in threading.enumerate() if t.name.startswith("artemis-lens")]:
            worker.join(60)  # ... and its worker has ended
            assert not worker.is_alive()
        after = _facts(tmp_path / "data")
    engine.close()
    assert notices[-1].startswith("stopping on SIGINT: finishing 2 background summaries")
    assert before["status"] == "interrupted" and before["numbers"] == [1, 2] and before["id"] == sid
    # written within the bound: one summary, one call; the cut-off one: pending, nothing recorded
    assert len(before["lens_summaries"]) == 1 and len(before["lens_calls"]) == 1, before
    assert len(before["pending"]) == 1, before
    assert after == before  # the late answer wrote nothing
    assert [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING] == []
