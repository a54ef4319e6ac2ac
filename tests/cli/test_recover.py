"""Sessions recoverable by construction (issue 23 item 3): ``artemis run`` checks its model before
a session exists, and ``artemis resume --base-url`` finishes a session whose endpoint went away.
The real CLI (a subprocess) and the real openai SDK against FakeOpenAIServer, on the simulated phone."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from pathlib import Path

from artemis_cli.engine.db import DataEngine
from artemis_cli.models.endpoint_check import PING_TOOL
from artemis_cli.models.fakes.openai import (
    FakeOpenAIReply,
    FakeOpenAIRequest,
    FakeOpenAIServer,
    heuristic_policy,
)

REPO = Path(__file__).resolve().parents[2]
SERVED = ["fake-operator"]


def artemis(*args: str, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "artemis_cli", *args], cwd=REPO, capture_output=True, text=True,
                          timeout=120, stdin=subprocess.DEVNULL, env={**os.environ, **env})


def sessions(home: Path) -> list[str]:
    if not (home / "artemis.db").exists():
        return []
    with DataEngine.open_for_reading(home) as engine:
        return [s.id for s in engine.list_sessions()]


def is_step(req: FakeOpenAIRequest) -> bool:
    """An operator request of the run (the pre-flight ping declares only report_ok)."""
    return bool(req.tools) and PING_TOOL not in req.tool_names


def test_a_model_the_server_does_not_serve_is_a_usage_error_and_leaves_no_session(data_home: Path) -> None:
    with FakeOpenAIServer(heuristic_policy(), models=SERVED) as server:
        proc = artemis("run", "tasks/demo.yaml", "--device", "sim", "--model", "openai:nosuch",
                       "--base-url", server.base_url, "--no-live")
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "nosuch" in proc.stderr and "not served" in proc.stderr and "fake-operator" in proc.stderr
    assert "Traceback" not in proc.stderr
    assert sessions(data_home) == []
    assert not any(is_step(r) for r in server.requests)  # no step was asked for


def test_a_dead_endpoint_is_a_usage_error_before_the_session(data_home: Path) -> None:
    with FakeOpenAIServer(models=SERVED) as server:
        url = server.base_url  # stopped on leaving: nothing listens there any more
    proc = artemis("run", "tasks/demo.yaml", "--device", "sim", "--model", "openai:fake-operator",
                   "--base-url", url, "--no-live")
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "connection refused" in proc.stderr
    assert sessions(data_home) == []


def test_a_session_whose_endpoint_went_away_finishes_on_another_server(data_home: Path) -> None:
    policy = heuristic_policy()
    steps: list[int] = []

    def stops_after_step_2(req: FakeOpenAIRequest) -> FakeOpenAIReply:
        if is_step(req):
            steps.append(1)
            if len(steps) == 3:  # the server goes away while step 3 is asked for: nothing listens
                threading.Thread(target=first.stop, daemon=True).start()
        if len(steps) >= 3:  # and a kept-alive connection only hears it going down
            raise RuntimeError("server going down")
        return policy(req)

    first = FakeOpenAIServer(stops_after_step_2, models=SERVED).start()
    first_url = first.base_url
    try:
        run = artemis("run", "tasks/demo.yaml", "--device", "sim", "--model", "openai:fake-operator",
                      "--base-url", first_url, "--json", "--no-live")
    finally:
        first.stop()
    assert run.returncode == 3, run.stdout + run.stderr
    interrupted = json.loads(run.stdout)
    sid = interrupted["session_id"]
    assert interrupted["status"] == "interrupted" and interrupted["steps"] == 2
    with DataEngine.open_for_reading(data_home) as engine:
        assert engine.last_step_number(sid) == 2

    # the same endpoint is still dead: the resume fails fast with exit 2 and the session stays resumable
    again = artemis("resume", sid, "--no-live")
    assert again.returncode == 2, again.stdout + again.stderr
    assert "connection refused" in again.stderr
    with DataEngine.open_for_reading(data_home) as engine:
        assert engine.get_session(sid).status == "interrupted"

    with FakeOpenAIServer(heuristic_policy(), models=SERVED) as second:
        second_url = second.base_url
        done = artemis("resume", sid, "--base-url", second_url, "--json", "--no-live")
    assert second.errors == []
    assert done.returncode == 0, done.stdout + done.stderr
    result = json.loads(done.stdout)
    assert result["session_id"] == sid and result["status"] == "succeeded" and result["steps"] > 2
    with DataEngine.open_for_reading(data_home) as engine:
        rec = engine.get_session(sid)
        assert rec.config["run"]["base_url"] == second_url  # the next resume goes on from here
        assert second_url.split("/")[2] in (rec.model_label or "")
        (event,) = engine.events(sid, kind="resume")
        assert event.payload["override"]["base_url"] == second_url
        assert event.payload["override"]["was"]["base_url"] == first_url
        assert "key" not in json.dumps(rec.config["run"]).lower()
    assert [r for r in second.requests if is_step(r)]  # the rest ran on the second server
