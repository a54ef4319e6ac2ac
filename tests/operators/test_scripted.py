"""The scripted model plays a reference solution from the element list a model would read."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from artemis_cli.config.profile import load_profile
from artemis_cli.config.task import task_from_goal
from artemis_cli.engine.db import DataEngine
from artemis_cli.models.offline.scripted import ScriptedModel
from artemis_cli.runner import run_task
from artemis_cli.sim.phone import SimPhone


def test_a_pop_up_is_dismissed_without_advancing_the_script(tmp_path: Path) -> None:
    script = [
        {"launch": "com.artemis.shop"},
        {"type": {"text": "demo", "into": {"id": "username"}}},
        {"type": {"text": "artemis123", "into": {"id": "password"}, "submit": True}},
        *[{"tap": {"desc": "Add Wireless Mouse to cart"}} for _ in range(16)],
        {"finish": {"success": True}},
    ]
    phone = SimPhone(seed=3, popups=True)
    engine = DataEngine.open(tmp_path)
    result = run_task(task_from_goal("Add 16 mice", max_steps=40), load_profile("flash"), phone,
                      ScriptedModel(script), engine, real_time=False)
    assert result.success
    cart = phone.shell("content query --uri content://com.artemis.shop/cart")
    assert "quantity=16" in cart
    dismissals = [s for s in engine.get_steps(result.session_id) if "popup" in (s.thought or "")]
    assert dismissals, "seed 3 shows the pop-up during these taps"
    assert result.steps == len(script) + len(dismissals)


def test_a_missing_element_ends_the_script_honestly(tmp_path: Path) -> None:
    engine = DataEngine.open(tmp_path)
    result = run_task(task_from_goal("x", max_steps=5), load_profile("flash"), SimPhone(popups=False),
                      ScriptedModel([{"tap": {"text": "No such button"}}]), engine, real_time=False)
    assert not result.success
    assert "no element matches text='No such button'" in result.answer


def test_a_step_the_device_reports_failed_is_played_again_a_bounded_number_of_times(tmp_path: Path) -> None:
    """A type_text the device reports failed (no field has the focus) is played again (twice at
    most), then the script moves on."""
    from artemis_cli.models.offline.scripted import MAX_REPLAYS

    script: list[dict[str, Any]] = [
        {"launch": "com.android.settings"},
        {"type": {"text": "x"}},  # into the focused field: none is, so nothing is typed
        {"finish": {"success": True, "answer": "done"}},
    ]
    engine = DataEngine.open(tmp_path)
    result = run_task(task_from_goal("x", max_steps=10), load_profile("flash"), SimPhone(popups=False),
                      ScriptedModel(script), engine, real_time=False)
    steps = engine.get_steps(result.session_id)
    typed = [s for s in steps if s.action_type == "type_text"]
    assert len(typed) == 1 + MAX_REPLAYS
    assert all(s.result_status == "failed" for s in typed)
    assert [("retry" in (s.thought or "")) for s in typed] == [False] + [True] * MAX_REPLAYS
    assert steps[-1].action_type == "finish" and result.steps == 2 + len(typed)
