"""The similarity hint in the tail (SPEC §10.5), on a simulated path that returns to a screen."""

from __future__ import annotations

from pathlib import Path

from artemis_cli.config.profile import load_profile
from artemis_cli.config.task import task_from_goal
from artemis_cli.engine.db import DataEngine
from artemis_cli.models.offline.scripted import ScriptedModel
from artemis_cli.runner import run_task
from artemis_cli.sim.phone import SimPhone

PATH = [  # the screen each step starts on, then its action
    {"launch": "com.android.settings"},  # 1: launcher
    {"key": "home"},  # 2: settings
    {"launch": "com.artemis.notes"},  # 3: launcher (step 1 is recent: silent)
    {"key": "home"},  # 4: notes
    {"launch": "com.android.deskclock"},  # 5: launcher again, reached by home as at 3 (recent: silent)
    {"key": "home"},  # 6: clock
    {"launch": "com.android.contacts"},  # 7: launcher (5 is recent: silent)
    {"key": "home"},  # 8: contacts
    {"launch": "com.android.settings"},  # 9: launcher (7 is recent: silent)
    {"tap": {"text": "Network & internet"}},  # 10: settings, reached by launching it from the launcher as at 2
    {"finish": {"success": True}},  # 11: network & internet
]


def test_hint_appears_when_a_screen_is_reached_again_the_same_way(tmp_path: Path) -> None:
    engine = DataEngine.open(tmp_path)
    result = run_task(task_from_goal("wander", max_steps=12), load_profile("flash"), SimPhone(popups=False),
                      ScriptedModel(PATH), engine, real_time=False)
    assert result.success
    tails = {s.number: s.meta["observation"] for s in engine.get_steps(result.session_id)}
    assert ("This screen closely resembles step 2 (T+00:00), reached the same way (launch com.android.settings); "
            "there you press home.") in tails[10]
    for n in (1, 2, 3, 4, 5, 6, 7, 8, 9, 11):
        assert "closely resembles" not in tails[n], n
