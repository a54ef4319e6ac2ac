"""The context budget on the command line: a budget below the floor is refused before any session
(one error line naming the floor and what to change, exit 2); a run on a server that says its
window (the fake OpenAI server playing vLLM) names the effective budget in its header and in
``sessions show`` (and ``--json``), and never sends a request over the window."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from typer.testing import CliRunner

from artemis_cli.cli.app import app
from artemis_cli.engine.db import DataEngine
from artemis_cli.models.fakes.openai import FakeOpenAIServer, heuristic_policy

REPO = Path(__file__).resolve().parents[2]
SMALL_WINDOW = "extends: flash\nscreenshot: {max_side: 768}\nmemory:\n  transcript: {min_active_steps: 2}\n"


def invoke(*args: str) -> object:
    return CliRunner().invoke(app, list(args), env={"COLUMNS": "200"})


def test_a_budget_below_the_floor_is_refused_before_the_session(tmp_path: Path, data_home: Path) -> None:
    profile = tmp_path / "tiny.yaml"
    profile.write_text("extends: flash\nmemory:\n  transcript: {context_budget_tokens: 5000}\n", encoding="utf-8")
    proc = subprocess.run([sys.executable, "-m", "artemis_cli", "run", "tasks/demo.yaml", "--model", "heuristic",
                           "--profile", str(profile), "--no-live"], cwd=REPO, capture_output=True, text=True,
                          timeout=120, stdin=subprocess.DEVNULL)
    assert proc.returncode == 2, proc.stderr
    errors = [ln for ln in proc.stderr.splitlines() if ln.startswith("Error:")]
    assert len(errors) == 1 and proc.stdout == ""
    assert "context_budget_tokens is 5,000" in errors[0] and "below its floor" in errors[0]
    assert "needs at least " in errors[0]
    assert "min_active_steps" in proc.stderr and "screenshot.max_side" in proc.stderr
    if (data_home / "artemis.db").exists():
        with DataEngine.open_for_reading(data_home) as engine:
            assert engine.list_sessions() == []


def test_a_run_on_a_server_window_names_its_budget_and_never_overflows(tmp_path: Path, data_home: Path) -> None:
    profile = tmp_path / "small-window.yaml"
    profile.write_text(SMALL_WINDOW, encoding="utf-8")
    # 9,216: a window this profile fits as it is, so the header names the plain budget; a window
    # below the floor is fitted to it (screenshot side, active steps, know-how: test_budget_fit.py)
    with FakeOpenAIServer(heuristic_policy(), max_model_len=9216) as server:
        res = invoke("run", "tasks/demo.yaml", "--model", "openai:local-vl", "--base-url", server.base_url,
                     "--profile", str(profile), "--no-live", "--max-steps", "4")
    assert server.errors == [] and server.overflows == []
    assert server.max_prompt_tokens <= 9216 - 1024
    out = res.output  # type: ignore[attr-defined]
    assert res.exit_code in (0, 1), out  # type: ignore[attr-defined]  # (4 steps may not finish the task)
    line = "budget 8,192 tokens (server window 9,216 from vLLM GET /v1/models max_model_len, less 1,024 for the reply"
    assert line in out  # the run header
    with DataEngine.open_for_reading(data_home) as engine:
        (rec,) = engine.list_sessions()
    shown = invoke("sessions", "show", rec.id)
    assert "context: " + line in shown.output  # type: ignore[attr-defined]
    data = json.loads(invoke("sessions", "show", rec.id, "--json").output)  # type: ignore[attr-defined]
    assert data["context_budget"]["tokens"] == 8192 and data["context_budget"]["window_tokens"] == 9216
