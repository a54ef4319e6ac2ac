"""A session keeps the S zone it was sent (system text and tools, in its config), so a past turn
re-renders to its recorded hash and a resume sends the same prefix after Artemis's own prompt text
changes (SPEC §5 invariant 4 across upgrades). Sessions recorded before the S zone was stored fall
back to the current text, and so stop matching once it changes."""

from __future__ import annotations

from pathlib import Path

import pytest

import artemis_cli.runner as runner
from artemis_cli.config.profile import load_profile
from artemis_cli.config.task import load_task
from artemis_cli.engine.db import DataEngine
from artemis_cli.memory.turn_check import check_turn
from artemis_cli.models.offline.scripted import ScriptedModel
from artemis_cli.models.registry import reference_script
from artemis_cli.sim.phone import SimPhone

REPO = Path(__file__).resolve().parents[2]


def _demo_session(engine: DataEngine) -> str:
    task = load_task(REPO / "tasks" / "demo.yaml")
    assert task.sim is not None
    result = runner.run_task(task, load_profile("flash"), SimPhone(world=task.sim.world, seed=task.sim.seed),
                             ScriptedModel(reference_script(task)), engine, real_time=False)
    assert result.success, result.message
    return result.session_id


def _upgrade_the_prompt(monkeypatch: pytest.MonkeyPatch) -> None:
    """What a later Artemis looks like to an old session: other system text, another tool."""
    monkeypatch.setattr(runner, "system_prompt", lambda **_: "You are a later Artemis.\n")
    real = runner.tool_declarations
    monkeypatch.setattr(runner, "tool_declarations", lambda coordinates="pixels": real(coordinates)[1:])


def test_a_session_re_renders_with_the_prompt_it_was_sent_after_the_text_changes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    engine = DataEngine.open(tmp_path / "data")
    sid = _demo_session(engine)
    stored = engine.get_session(sid).config["prompt"]
    assert stored["system"].startswith("You are Artemis") and stored["tools"][0]["name"] == "tap"
    _upgrade_the_prompt(monkeypatch)
    for step in engine.get_steps(sid):
        check = check_turn(engine, sid, step.number)
        assert check.match, (step.number, check.rows)
        assert check.requests[0].system == stored["system"]


def test_a_session_recorded_before_the_prompt_was_stored_uses_the_current_text(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    engine = DataEngine.open(tmp_path / "data")
    sid = _demo_session(engine)
    config = dict(engine.get_session(sid).config)
    del config["prompt"]
    engine.update_session(sid, config=config)
    assert check_turn(engine, sid, 2).match  # the text has not changed yet
    _upgrade_the_prompt(monkeypatch)
    check = check_turn(engine, sid, 2)
    assert not check.match and check.requests[0].system == "You are a later Artemis.\n"
