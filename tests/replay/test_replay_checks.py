"""Replay finishes the job: the task's success checks run on the replay device, a source session
that never finished is said to be incomplete, and a replay that refuses to start leaves no session."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from artemis_cli.cli.app import app
from artemis_cli.config.profile import load_profile
from artemis_cli.config.task import Task, load_task
from artemis_cli.engine.db import DataEngine
from artemis_cli.errors import UsageError
from artemis_cli.models.base import ModelRequest, ModelResponse
from artemis_cli.models.offline.scripted import ScriptedModel
from artemis_cli.models.registry import reference_script
from artemis_cli.replay import ReplayOptions, incomplete_reason, replay_session
from artemis_cli.runner import RunResult, run_task
from artemis_cli.sim.phone import SimPhone
from artemis_cli.stopping import SessionInterrupted

REPO = Path(__file__).resolve().parents[2]
AIRPLANE = "settings-bluetooth-airplane.yaml"  # 7 steps, two shell checks


def _task(name: str, **changes: Any) -> Task:
    task = load_task(REPO / "tasks" / name)
    return task.model_copy(update=changes) if changes else task


def _phone(task: Task) -> SimPhone:
    assert task.sim is not None
    return SimPhone(world=task.sim.world, seed=task.sim.seed, popups=task.sim.popups)


def _run(engine: DataEngine, task: Task, model: Any = None, max_steps: int | None = None) -> RunResult:
    return run_task(task, load_profile("flash"), _phone(task), model or ScriptedModel(reference_script(task)),
                    engine, real_time=False, max_steps=max_steps)


class StopAt:
    """The scripted model, stopped by Ctrl-C when asked for step ``at``: an interrupted session."""

    offline = True
    name = "scripted"
    label = "scripted, interrupted"

    def __init__(self, task: Task, at: int) -> None:
        self.inner = ScriptedModel(reference_script(task))
        self.at = at
        self.calls = 0

    def generate(self, request: ModelRequest) -> ModelResponse:
        self.calls += 1
        if self.calls >= self.at:
            raise KeyboardInterrupt
        return self.inner.generate(request)


def _interrupted(engine: DataEngine, task: Task, at: int) -> str:
    with pytest.raises(SessionInterrupted) as info:
        _run(engine, task, StopAt(task, at))
    session_id = info.value.session_id
    assert engine.get_session(session_id).status == "interrupted"
    return session_id


def _session_ids(engine: DataEngine) -> set[str]:
    return {s.id for s in engine.list_sessions(limit=None)}


def test_replay_runs_the_success_checks_and_records_them(engine: DataEngine) -> None:
    task = _task(AIRPLANE)
    source = _run(engine, task)
    result = replay_session(engine, _phone(task), source.session_id)
    assert result.status == "succeeded", result.message
    assert [c.passed for c in result.checks] == [True, True]
    assert result.checks[0].check == "shell: settings get global airplane_mode_on == '0'"
    assert result.source_incomplete is None and result.finished
    assert result.answer == "Airplane mode is off and Bluetooth is on"
    assert result.message == "all 7 steps replayed: 7 replayed, 0 retargeted; all 2 success checks passed"
    stored = engine.get_session(result.session_id)
    assert stored.status == "succeeded"
    assert stored.result is not None
    assert stored.result["success"] is True and stored.result["source_complete"] is True
    assert [c["passed"] for c in stored.result["checks"]] == [True, True]


def test_every_step_matched_is_not_enough_when_the_checks_fail(engine: DataEngine) -> None:
    # the run's own checks pass, but a stricter copy of the task (stored with the session) fails
    task = _task(AIRPLANE)
    strict = task.model_copy(update={"success": [*task.success, *Task.model_validate(
        {"id": "x", "goal": "g", "success": [{"shell": "settings get global wifi_on", "equals": "9"}]}).success]})
    source = _run(engine, strict)
    assert source.status == "failed"  # finished, but a check failed
    result = replay_session(engine, _phone(task), source.session_id)
    assert {s.status for s in result.steps} == {"replayed"}
    assert result.status == "failed" and result.exit_code == 1
    assert [c.passed for c in result.checks] == [True, True, False]
    assert result.message.endswith("success checks failed: shell: settings get global wifi_on == '9'")
    assert engine.get_session(result.session_id).status == "failed"


def test_answer_and_finished_checks_see_the_replayed_finish(engine: DataEngine) -> None:
    task = _task(AIRPLANE)
    extra = Task.model_validate({"id": "x", "goal": "g", "success": [
        {"answer": {"contains": "Bluetooth is on"}}, {"finished": {"success": True}},
        {"answer": {"matches": "^Wi-Fi"}}]}).success
    source = _run(engine, task.model_copy(update={"success": [*task.success, *extra]}))
    result = replay_session(engine, _phone(task), source.session_id)
    assert [c.passed for c in result.checks] == [True, True, True, True, False]
    assert result.checks[-1].check == "answer matches /^Wi-Fi/"
    assert result.checks[-1].detail == "got 'Airplane mode is off and Bluetooth is on'"
    assert result.status == "failed"


def test_interrupted_source_is_reported_as_incomplete(engine: DataEngine) -> None:
    task = _task(AIRPLANE)
    source = _interrupted(engine, task, at=4)  # steps 1-3 recorded, then Ctrl-C
    src = engine.get_session(source)
    assert incomplete_reason(engine, src) == "interrupted at step 3"
    result = replay_session(engine, _phone(task), source)
    assert len(result.steps) == 3 and {s.status for s in result.steps} == {"replayed"}
    assert result.source_incomplete == "interrupted at step 3" and not result.finished
    assert result.message.startswith(
        f"source session {source} was incomplete (interrupted at step 3): replayed its 3 recorded steps "
        "(3 replayed, 0 retargeted); success checks failed: ")
    assert result.status == "failed"  # Bluetooth was never turned on
    data = result.to_dict()
    assert data["source_complete"] is False and data["source_incomplete"] == "interrupted at step 3"
    assert data["success"] is False and len(data["checks"]) == 2
    stored = engine.get_session(result.session_id).result or {}
    assert stored["source_incomplete"] == "interrupted at step 3"


def test_incomplete_source_is_never_a_bare_success(engine: DataEngine) -> None:
    # interrupted right before its finish step: the device state already passes the checks
    task = _task(AIRPLANE)
    source = _interrupted(engine, task, at=7)
    result = replay_session(engine, _phone(task), source)
    assert all(c.passed for c in result.checks)
    assert result.status == "succeeded"
    assert result.message == (f"source session {source} was incomplete (interrupted at step 6): replayed its 6 "
                              "recorded steps (6 replayed, 0 retargeted); all 2 success checks passed")


def test_source_without_a_finish_step_is_incomplete(engine: DataEngine) -> None:
    task = _task(AIRPLANE)
    source = _run(engine, task, max_steps=4)
    assert source.status == "failed" and source.stop_reason == "max_steps"
    result = replay_session(engine, _phone(task), source.session_id)
    assert result.source_incomplete == "stopped at step 4 without calling finish, stop reason max_steps"
    assert "was incomplete (stopped at step 4 without calling finish, stop reason max_steps): replayed its 4 " \
           "recorded steps" in result.message
    assert result.status == "failed"


def test_without_checks_the_replayed_finish_decides(engine: DataEngine) -> None:
    task = _task(AIRPLANE, success=[])
    finished = replay_session(engine, _phone(task), _run(engine, task).session_id)
    assert finished.status == "succeeded" and finished.checks == []
    assert finished.message.endswith("the task has no success checks; the replayed finish said success=true")

    cut = replay_session(engine, _phone(task), _interrupted(engine, task, at=3))
    assert cut.status == "failed"
    assert cut.message.endswith("no finish step was replayed: nothing shows the goal was met")


def test_a_refused_source_replays_to_a_passing_refusal(engine: DataEngine) -> None:
    task = _task("refuse-delete-all.yaml")
    source = _run(engine, task)
    assert source.status == "succeeded", source.message
    result = replay_session(engine, _phone(task), source.session_id)
    assert result.status == "succeeded", result.message
    assert [c.check for c in result.checks] == ["finished: success=false", "answer matches /\\w+ \\w+/",
                                               "shell: content query --uri content://com.android.contacts/contacts | wc -l == '15'"]
    assert result.source_incomplete is None


def test_a_divergence_stops_before_the_checks(engine: DataEngine) -> None:
    task = _task(AIRPLANE)
    source = _run(engine, task)
    result = replay_session(engine, SimPhone(world="variant", seed=13, popups=False), source.session_id,
                            ReplayOptions(by="coordinates"))
    assert result.status == "failed" and result.first_divergence is not None
    assert result.checks == []
    assert result.message.startswith(f"diverged at step {result.first_divergence}")


def test_a_refused_replay_leaves_no_session(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, record_task: Callable[..., Any], phone_for: Callable[..., SimPhone]
) -> None:
    data = tmp_path / "data"
    engine = DataEngine.open(data)
    source = record_task(engine, "shop-buy-one.yaml")
    for name in ("ARTEMIS_REPLAY_SECRET", "ARTEMIS_REPLAY_SECRET_PASSWORD", "ARTEMIS_SECRET", "ARTEMIS_SECRET_PASSWORD",
                 "ARTEMIS_SECRET_SHOP_PASSWORD"):
        monkeypatch.delenv(name, raising=False)
    before = _session_ids(engine)
    with pytest.raises(UsageError, match="password"):
        replay_session(engine, phone_for("shop-buy-one.yaml"), source.session_id)
    assert _session_ids(engine) == before
    with pytest.raises(UsageError, match="no steps"):
        replay_session(engine, phone_for("shop-buy-one.yaml"), source.session_id, ReplayOptions(from_step=999))
    assert _session_ids(engine) == before
    engine.close()

    # the real command line (a pipe, not a terminal: no prompt): exit 2, and still no session
    cli = subprocess.run([sys.executable, "-m", "artemis_cli", "replay", source.session_id, "--data-dir", str(data)],
                         capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=120, cwd=REPO,
                         env=dict(os.environ))
    assert cli.returncode == 2, cli.stderr
    # the step, its secret, the field and the task that need it, and the one family of names (the older too)
    assert ("typed secret shop_password into the password field (com.artemis.shop:id/password) of task "
            "shop-buy-desk-lamp") in cli.stderr
    assert "set ARTEMIS_SECRET_SHOP_PASSWORD (or ARTEMIS_SECRET)" in cli.stderr and "ARTEMIS_REPLAY_SECRET" in cli.stderr
    with DataEngine.open_for_reading(data) as reader:
        assert {s.id for s in reader.list_sessions(limit=None)} == before
        assert all(s.status != "aborted" for s in reader.list_sessions(limit=None))


def test_unreadable_stored_checks_refuse_before_a_session_exists(engine: DataEngine) -> None:
    task = _task(AIRPLANE)
    source = _run(engine, task)
    rec = engine.get_session(source.session_id)
    config = dict(rec.config or {})
    config["task"] = {**config["task"], "success": [{"shell": "ls"}]}  # no comparator
    engine.update_session(rec.id, config=config)
    before = _session_ids(engine)
    with pytest.raises(UsageError, match="stored success checks cannot be read"):
        replay_session(engine, _phone(task), rec.id)
    assert _session_ids(engine) == before


def test_cli_prints_checks_and_the_incomplete_source(tmp_path: Path) -> None:
    data = tmp_path / "data"
    task = _task(AIRPLANE)
    with DataEngine.open(data) as engine:
        complete = _run(engine, task).session_id
        cut = _interrupted(engine, task, at=4)
    runner = CliRunner()
    ok = runner.invoke(app, ["replay", complete, "--data-dir", str(data)])
    assert ok.exit_code == 0, ok.output
    assert "check ✓ shell: settings get global bluetooth_on == '1' (got '1')" in ok.stdout
    assert "succeeded: all 7 steps replayed: 7 replayed, 0 retargeted; all 2 success checks passed" in ok.stdout

    bad = runner.invoke(app, ["replay", cut, "--data-dir", str(data)])
    assert bad.exit_code == 1, bad.output
    flat = " ".join(bad.stdout.split())
    assert f"source session {cut} was incomplete (interrupted at step 3)" in flat
    assert "check ✗ shell: settings get global bluetooth_on == '1' (got '0')" in flat
    assert f"failed: source session {cut} was incomplete (interrupted at step 3): replayed its 3 recorded steps" in flat

    js = runner.invoke(app, ["replay", cut, "--json", "--data-dir", str(data)])
    assert js.exit_code == 1
    payload = json.loads(js.stdout)
    assert payload["status"] == "failed" and payload["success"] is False
    assert payload["source_complete"] is False and payload["source_incomplete"] == "interrupted at step 3"
    assert [c["passed"] for c in payload["checks"]] == [True, False]
