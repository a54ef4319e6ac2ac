"""Regressions for what the fault matrix found (benchmarks/fault_matrix.py, issue 8)."""

from __future__ import annotations

from pathlib import Path

from artemis_cli.config.profile import load_profile
from artemis_cli.config.task import load_task
from artemis_cli.engine.db import DataEngine
from artemis_cli.models.fakes.gemini import FakeGeminiServer
from artemis_cli.models.gemini import GeminiModel
from artemis_cli.models.offline.scripted import script_policy
from artemis_cli.models.registry import reference_script
from artemis_cli.operators.observe import observe
from artemis_cli.resume import resume_session
from artemis_cli.runner import run_task
from artemis_cli.sim.phone import SimPhone

REPO = Path(__file__).resolve().parents[2]
TASK = REPO / "tasks" / "settings-dark-theme.yaml"
SCREEN = (1080, 2400)


def test_a_four_call_drop_is_ridden_out_not_a_stop() -> None:
    """The sim's drop lasts the dropping call plus 1-3 more: 4 failures in a row. Observe used to
    give up after 4 attempts, ending any run that met the longest drop at step 1."""
    phone = SimPhone()
    phone.faults.offline_calls = 4
    seen: list[str] = []
    obs = observe(phone, SCREEN, "pixels", sleep=lambda s: None, on_problem=lambda w, d: seen.append(w))
    assert obs.tree.nodes and seen == ["screenshot"] * 4
    # a drop met by current_app (after the dump) is retried too, not raised at once
    phone.faults.offline_calls = 0
    calls = {"n": 0}
    real = phone.current_app

    def flaky_current_app() -> str | None:
        calls["n"] += 1
        if calls["n"] == 1:
            phone.faults.offline_calls = 2
        return real()

    phone.current_app = flaky_current_app  # type: ignore[method-assign]
    obs = observe(phone, SCREEN, "pixels", sleep=lambda s: None)
    assert obs.foreground and calls["n"] == 3  # two offline answers, then the real one


def test_a_model_request_error_says_what_to_do_next_and_resumes(tmp_path: Path) -> None:
    """A 400 used to stop the run (exit 3) with only the service's error text."""
    task = load_task(TASK)
    with FakeGeminiServer(script_policy(reference_script(task))) as server:
        model = GeminiModel(["gemini-2.5-flash", "gemini-2.0-flash"], api_key="test-key",
                            base_url=server.base_url, sleep=lambda s: None, backoff_s=0.0)
        engine = DataEngine.open(tmp_path / "data")
        server.inject("400", 1, "gemini-2.5-flash")
        phone = SimPhone(world=task.sim.world, seed=task.sim.seed, popups=task.sim.popups)
        result = run_task(task, load_profile("flash"), phone, model, engine, real_time=False)
        assert result.status == "aborted" and result.exit_code == 3
        assert f"artemis resume {result.session_id}" in result.message
        assert f"artemis sessions show {result.session_id}" in result.message
        again = resume_session(result.session_id, engine, device=phone, model=model, real_time=False)
        assert again.success and again.exit_code == 0


def test_a_device_error_before_step_one_is_recorded(tmp_path: Path) -> None:
    task = load_task(TASK)
    engine = DataEngine.open(tmp_path / "data")
    phone = SimPhone(world=task.sim.world, seed=task.sim.seed, faults="drop:1")
    from artemis_cli.models.offline.scripted import ScriptedModel

    result = run_task(task, load_profile("flash"), phone, ScriptedModel(reference_script(task)), engine,
                      real_time=False)
    assert result.exit_code == 3 and f"artemis resume {result.session_id}" in result.message
    (fault,) = engine.events(result.session_id, kind="device_fault")
    assert fault.payload["detail"].startswith("DeviceOffline")
