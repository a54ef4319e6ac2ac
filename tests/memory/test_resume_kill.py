"""A running `artemis run` killed with SIGKILL mid-task resumes exactly (SPEC §10.6).

The operator is the gemini model through the real SDK against the fake Gemini server, which
lives in this test process and so survives the killed runner, like the real service would.
"""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

from artemis_cli.config.task import load_task
from artemis_cli.engine.db import DataEngine
from artemis_cli.models.fakes.gemini import FakeGeminiServer
from artemis_cli.models.offline.scripted import script_policy
from artemis_cli.models.registry import reference_script

REPO = Path(__file__).resolve().parents[2]
TASK = REPO / "tasks" / "clock-ten-alarms.yaml"


def _steps(db: Path) -> int:
    try:
        conn = sqlite3.connect(db)
        try:
            return conn.execute("select count(*) from steps").fetchone()[0]
        finally:
            conn.close()
    except sqlite3.Error:
        return 0


def _artemis(args: list[str], env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "artemis_cli", *args], cwd=REPO, env=env, capture_output=True,
                          text=True, timeout=600)


def test_sigkill_then_resume(tmp_path: Path) -> None:
    task = load_task(TASK)
    home = tmp_path / "home"
    with FakeGeminiServer(script_policy(reference_script(task))) as server:
        env = {**os.environ, "ARTEMIS_HOME": str(home), "GEMINI_API_KEY": "test-key",
               "ARTEMIS_GEMINI_BASE_URL": server.base_url}
        proc = subprocess.Popen([sys.executable, "-m", "artemis_cli", "run", str(TASK), "--model", "gemini",
                                 "--no-live", "--json"], cwd=REPO, env=env, stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 300
        while _steps(home / "artemis.db") < 25 and time.monotonic() < deadline and proc.poll() is None:
            time.sleep(0.05)
        assert proc.poll() is None, "the run ended before it could be killed"
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()

        engine = DataEngine.open(home)
        (session,) = engine.list_sessions()
        assert session.status == "interrupted"  # killed: nobody marked it, and its owner is gone
        before = engine.last_step_number(session.id)
        calls_before = len(engine.llm_calls(session.id))
        resumed_at = time.time()

        done = _artemis(["resume", session.id, "--json", "--no-live"], env)
        assert done.returncode == 0, done.stderr[-3000:]
        result = json.loads(done.stdout)
        assert result["success"] and result["session_id"] == session.id

        steps = engine.get_steps(session.id)
        numbers = [s.number for s in steps]
        assert numbers == list(range(1, len(numbers) + 1))  # contiguous, no duplicates
        assert numbers[-1] > before
        events = engine.events(session.id)
        (resume,) = [e for e in events if e.kind == "resume"]
        assert resume.payload["after_step"] == before
        # no model call while rebuilding: every call after the kill belongs to a new step
        new_calls = engine.llm_calls(session.id)[calls_before:]
        assert new_calls and all(c.created_at >= resume.created_at for c in new_calls)
        operator_new = [c for c in new_calls if c.role == "operator"]
        assert all(c.step > before for c in operator_new)
        # the first request after the resume reuses the cached prefix as well as any turn before
        # the kill did (each turn's scrub edge invalidates only the last few steps)
        old_calls = [c for c in engine.llm_calls(session.id)[:calls_before] if c.role == "operator"]
        ratios = [c.cached_tokens / c.prompt_tokens for c in old_calls[-5:]]
        first = operator_new[0]
        assert first.cached_tokens / first.prompt_tokens >= min(ratios) - 0.02
        assert resumed_at > 0

        for step in (3, before - 1, before + 1, numbers[-2]):
            check = _artemis(["sessions", "prompt", session.id, "--step", str(step), "--json"], env)
            assert check.returncode == 0, check.stdout + check.stderr
            assert json.loads(check.stdout)["match"] is True
