"""Self-healing replay through the simulated phone: a dialog the recording never saw is healed by
the offline healer, the replay rejoins the recording, and a promoted heal is the new baseline."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from golden_files import assert_golden
from typer.testing import CliRunner

from artemis_cli.cli.app import app
from artemis_cli.engine.db import DataEngine
from artemis_cli.replay import ReplayOptions, replay_session
from artemis_cli.replay.lineage import marks
from artemis_cli.sim.phone import SimPhone

GOLDEN = Path(__file__).parent / "golden"


def _phone(popup_after: int | None = 2, storm: bool = False) -> SimPhone:
    """The task's phone, with the Shop's promotion pop-up due after ``popup_after`` actions: a
    dialog the recording (first pop-up after the 14th action) never saw."""
    phone = SimPhone(seed=57, faults="popup_storm" if storm else None)
    if popup_after is not None:
        phone.popups.shop_gap = popup_after
    return phone


@pytest.fixture
def recorded(tmp_path: Path, record_task: Callable[..., Any], monkeypatch: pytest.MonkeyPatch) -> tuple[DataEngine, str]:
    monkeypatch.setenv("ARTEMIS_SECRET", "artemis123")
    engine = DataEngine.open(tmp_path / "data")
    return engine, record_task(engine, "shop-buy-one.yaml").session_id


def test_heal_rejoins_after_a_dialog_and_marks_steps(recorded: tuple[DataEngine, str]) -> None:
    engine, source = recorded
    plain = replay_session(engine, _phone(), source)
    assert plain.status == "failed" and plain.first_divergence == 2  # without healing it stops
    result = replay_session(engine, _phone(), source, ReplayOptions(heal=True))
    data = result.to_dict()
    assert result.status == "succeeded", result.message
    assert data["healed"] >= data["model_calls"] >= 1 and data["replayed"] + data["retargeted"] >= 7
    assert "healer (offline, follows a plan; not an LLM)" in data["model_label"]
    rejoined = [e.payload for e in engine.events(result.session_id, "heal_rejoined")]
    assert rejoined[0] == {"diverged": 2, "rejoined": 2, "model_steps": 1}
    stored = marks(engine, result.session_id)
    assert "healed" in stored.values() and set(stored.values()) <= {"replayed", "retargeted", "healed"} and len(stored) == engine.step_count(result.session_id)
    # the JSON counts are the stored marks, step for step
    assert [(s["number"], s["status"]) for s in data["steps"]] == sorted(stored.items())
    assert engine.get_session(result.session_id).parent_session == source


def test_heal_fails_after_max_steps_naming_the_last_matched_step(recorded: tuple[DataEngine, str]) -> None:
    engine, source = recorded
    # under a pop-up storm (one every 3 actions) a heal of one model step may rejoin once, but the
    # next pop-up comes before the recording's next screen: the replay fails, each heal one step long
    result = replay_session(engine, _phone(None, storm=True), source, ReplayOptions(heal=True, heal_max_steps=1))
    assert result.status == "failed"
    assert "heal.max_steps=1" in result.message and "last matched step 1" in result.message, result.message
    rejoined = [e.payload for e in engine.events(result.session_id, "heal_rejoined")]
    assert all(r["model_steps"] == 1 for r in rejoined), rejoined
    assert result.count("healed") == len(rejoined) + 1  # every heal took one step; the last did not rejoin


def test_promote_then_plain_replay_has_zero_healed(recorded: tuple[DataEngine, str], data_home: Path) -> None:
    engine, source = recorded
    data = str(engine.data_dir)
    runner = CliRunner()
    refused = runner.invoke(app, ["sessions", "promote", source, "--data-dir", data])
    assert refused.exit_code != 0 and "not a replay" in str(refused.exception or refused.output)
    healed = replay_session(engine, _phone(), source, ReplayOptions(heal=True))
    ok = runner.invoke(app, ["sessions", "promote", healed.session_id, "--data-dir", data])
    assert ok.exit_code == 0, ok.output
    again = replay_session(engine, _phone(), source)  # the recording now replays its baseline
    assert again.status == "succeeded", again.message
    assert again.baseline_of == source and again.source_session == healed.session_id
    assert again.count("healed") == 0 and again.model_calls == 0
    shown = runner.invoke(app, ["sessions", "show", healed.session_id, "--json", "--data-dir", data])
    assert '"replay_mark": "healed"' in shown.stdout


def test_heal_prompt_and_healer_label_golden() -> None:
    from artemis_cli.config.profile import load_profile
    from artemis_cli.config.task import load_task
    from artemis_cli.engine.records import StepRecord
    from artemis_cli.models.offline.healer import parse_plan
    from artemis_cli.models.registry import build_model
    from artemis_cli.replay.heal import heal_goal

    task = load_task(Path(__file__).parents[2] / "tasks" / "shop-buy-one.yaml")
    model = build_model("healer", task=task, profile=load_profile("flash"))
    assert model.label == "healer (offline, follows a plan; not an LLM)" and model.offline
    plan = [{"type": {"text": "demo", "into": {"id": "username"}}}, {"tap": {"text": "Checkout"}},
            {"finish": {"success": True, "answer": "done"}}]
    rec = StepRecord(session_id="s", number=2, started_at="", action_type="type_text")
    text = heal_goal(task.goal, "20260101-000000-abcd", rec, "the target is not on this screen", plan,
                     ["Username", "Password", "Log in"], "com.artemis.shop")
    assert parse_plan(text) == plan
    assert_golden(GOLDEN / "heal_prompt.txt", text)
