"""The similarity hint in the tail (SPEC §10.5), on a simulated path that returns to a screen."""

from __future__ import annotations

from pathlib import Path

from artemis_cli.config.profile import load_profile
from artemis_cli.config.task import task_from_goal
from artemis_cli.engine.db import DataEngine
from artemis_cli.models.scripted import ScriptedModel
from artemis_cli.runner import run_task
from artemis_cli.sim.phone import SimPhone

PATH = [
    {"launch": "com.android.settings"},  # 1: launcher
    {"tap": {"text": "Network & internet"}},  # 2: settings
    {"key": "back"},  # 3: network & internet
    {"key": "home"},  # 4: settings again (2 steps after step 2: a recent match, silent)
    {"launch": "com.artemis.notes"},  # 5: launcher again, 4 steps after step 1
    {"key": "home"},  # 6: notes
    {"finish": {"success": True}},  # 7: launcher, again recent (step 5): silent
]


def test_hint_appears_when_returning_to_a_screen_seen_more_than_three_steps_ago(tmp_path: Path) -> None:
    engine = DataEngine.open(tmp_path)
    result = run_task(task_from_goal("wander", max_steps=10), load_profile("flash"), SimPhone(popups=False),
                      ScriptedModel(PATH), engine, real_time=False)
    assert result.success
    tails = {s.number: s.meta["observation"] for s in engine.get_steps(result.session_id)}
    assert "This screen closely resembles step 1 (T+00:00), where you launch com.android.settings." in tails[5]
    for n in (1, 2, 3, 4, 6, 7):
        assert "closely resembles" not in tails[n], n
