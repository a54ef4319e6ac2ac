"""A run whose server window is below the profile's floor is fitted to it (``operators.budget_fit``):
the fake OpenAI server plays vLLM serving ``--max-model-len 8192`` (a 400 for a request over the
window) through the real openai SDK. The fitted run sends no request over the window, names what
was changed in its header, ``sessions show`` (and ``--json``) and ``doctor --model``, stores the
fitted profile (so ``sessions prompt`` re-renders its turns to the recorded hashes and resume
rebuilds the same S zone); ``--no-fit`` and a window too small for any configuration refuse."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from typer.testing import CliRunner

from artemis_cli.cli.app import app
from artemis_cli.config.task import load_task
from artemis_cli.engine.db import DataEngine
from artemis_cli.memory.restore import SessionSpec
from artemis_cli.models.fakes.openai import FakeOpenAIServer, script_policy
from artemis_cli.models.registry import reference_script

REPO = Path(__file__).resolve().parents[2]
TASK = REPO / "tasks" / "shop-office-order.yaml"
FITTED = ("screenshot.max_side 1152 → 1024", "memory.transcript.min_active_steps 5 → 2", "knowhow full → short")


def invoke(*args: str) -> object:
    return CliRunner().invoke(app, list(args), env={"COLUMNS": "250", "ARTEMIS_SECRET": "artemis123"})


def run_on_window(n: int, *extra: str, steps: int = 6) -> tuple[object, FakeOpenAIServer]:
    with FakeOpenAIServer(script_policy(reference_script(load_task(TASK))), max_model_len=n) as server:
        res = invoke("run", str(TASK), "--model", "openai:local-vl", "--base-url", server.base_url,
                     "--no-live", "--max-steps", str(steps), *extra)
    return res, server


def refused_on_window(n: int, *extra: str) -> tuple[subprocess.CompletedProcess[str], FakeOpenAIServer]:
    """``artemis run`` as a user runs it (the error line and exit code are the entry point's)."""
    env = {**os.environ, "COLUMNS": "250", "ARTEMIS_SECRET": "artemis123"}
    with FakeOpenAIServer(max_model_len=n) as server:
        proc = subprocess.run([sys.executable, "-m", "artemis_cli", "run", str(TASK), "--model", "openai:local-vl",
                               "--base-url", server.base_url, "--no-live", *extra], cwd=REPO, capture_output=True,
                              text=True, timeout=120, stdin=subprocess.DEVNULL, env=env)
    return proc, server


def test_a_run_on_an_8k_window_is_fitted_says_so_and_never_overflows(data_home: Path) -> None:
    res, server = run_on_window(8192)
    out = res.output  # type: ignore[attr-defined]
    assert res.exit_code in (0, 1), out  # type: ignore[attr-defined]  # (6 steps do not finish the task)
    assert server.errors == [] and server.overflows == [] and server.max_prompt_tokens <= 8192 - 1024
    assert not any(r.status == 400 for r in server.requests)
    lines = [ln.strip() for ln in out.splitlines()]
    assert any(ln.startswith("budget 7,168 tokens (server window 8,192") for ln in lines)
    assert "fitted to the budget: " + ", ".join(FITTED) in lines  # the run header's own line
    with DataEngine.open_for_reading(data_home) as engine:
        (rec,) = engine.list_sessions()
        assert engine.last_step_number(rec.id) == 6
        spec = SessionSpec.load(engine, rec.id)  # what resume rebuilds the run from
    assert spec.profile.screenshot.max_side == 1024 and spec.profile.knowhow == "short"
    assert spec.profile.memory.transcript.min_active_steps == 2
    assert spec.prompt is not None and "Android know-how (short):" in spec.prompt["system"]
    shown = " ".join(invoke("sessions", "show", rec.id).output.split())  # type: ignore[attr-defined]
    assert "context: budget 7,168 tokens" in shown
    assert "context fitted to the budget: " + ", ".join(FITTED) in shown
    data = json.loads(invoke("sessions", "show", rec.id, "--json").output)  # type: ignore[attr-defined]
    assert data["context_budget"]["fitted"] == list(FITTED)
    assert data["context_budget"]["measured_by"] == "vLLM POST /tokenize"  # the server's own count
    assert data["context_budget"]["floor_tokens"] <= data["context_budget"]["tokens"] == 7168
    for step in (1, 6):  # the fitted session's turns re-render to what was sent
        check = json.loads(invoke("sessions", "prompt", rec.id, "--step", str(step), "--json").output)  # type: ignore[attr-defined]
        assert check["match"] is True, check


def test_no_fit_refuses_the_8k_window_before_the_session(data_home: Path) -> None:
    proc, server = refused_on_window(8192, "--no-fit")
    assert proc.returncode == 2 and proc.stdout == ""
    out = " ".join(proc.stderr.split())
    assert "below its floor" in out and "server's context window (8,192 tokens" in out
    assert "fitted as far as it goes" not in out and "fitted:" not in out
    assert not [r for r in server.requests if "You are Artemis" in json.dumps(r.body)]  # only the pre-flight probe
    if (data_home / "artemis.db").exists():
        with DataEngine.open_for_reading(data_home) as engine:
            assert engine.list_sessions() == []


def test_a_window_too_small_for_any_configuration_is_refused_with_the_hint(data_home: Path) -> None:
    proc, server = refused_on_window(4096)  # Ollama's default context
    assert proc.returncode == 2 and proc.stdout == ""
    out = " ".join(proc.stderr.split())
    assert "less 1,024 for the reply leaves 3,072 tokens" in out
    assert ("fitted as far as it goes (screenshot.max_side 1152 → 1024, memory.transcript.min_active_steps 5 → 2, "
            "knowhow full → short) it still needs") in out
    assert "--max-model-len" in out  # the hint: what to serve instead
    assert not [r for r in server.requests if "You are Artemis" in json.dumps(r.body)]  # only the pre-flight probe
    if (data_home / "artemis.db").exists():
        with DataEngine.open_for_reading(data_home) as engine:
            assert engine.list_sessions() == []


def test_doctor_names_the_fitted_settings(data_home: Path) -> None:
    with FakeOpenAIServer(max_model_len=8192) as server:
        res = invoke("doctor", "--model", "openai:local-vl", "--base-url", server.base_url)
    out = " ".join(res.output.split())  # type: ignore[attr-defined]
    assert "budget 7,168 tokens" in out and "fitted to the budget: screenshot.max_side 1152 → 1024" in out
    assert "S zone: vLLM POST /tokenize" in out
    with FakeOpenAIServer(max_model_len=4096) as server:
        res = invoke("doctor", "--model", "openai:local-vl", "--base-url", server.base_url)
    out = " ".join(res.output.split())  # type: ignore[attr-defined]
    assert "a run would be refused" in out and "fitted as far as it goes" in out
