"""What a model is sent for ``phone.act``: the Flash request with the act's own goal and budget,
told where in the program's session it starts; ``sessions prompt`` re-renders every such turn."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from library_support import SCRIPTS, SHOP_SECRETS, run_shop

from artemis_cli import Phone
from artemis_cli.engine.db import DataEngine
from artemis_cli.memory.turn_check import ai_step_span, check_turn
from artemis_cli.models.fakes.gemini import FakeGeminiServer
from artemis_cli.models.gemini import GeminiModel
from artemis_cli.models.offline.scripted import goal_policy
from artemis_cli.operators.prompts import task_message

#: The task text of a goal given after the program's own steps (golden: a model reads it).
AFTER_FOUR = (
    "# TASK\n"
    "Goal: add a Desk Lamp to the cart and check out\n"
    "Step budget: 20 actions.\n"
    "Steps 1-4 of this session came before this goal (the program that drives this phone took them, or had "
    "them taken for its earlier goals); your steps are numbered from 5. Start from the screen as it is now."
)


def test_task_text_of_a_goal_inside_a_program() -> None:
    assert task_message("add a Desk Lamp to the cart and check out", app=None, max_steps=20, started_after=4) == AFTER_FOUR
    plain = task_message("g", app=None, max_steps=20)
    assert plain == "# TASK\nGoal: g\nStep budget: 20 actions."  # a run's task text is unchanged
    assert "Step 1 of this session came" in task_message("g", app=None, max_steps=5, started_after=1)


def test_every_act_turn_re_renders_to_what_was_sent(tmp_path: Path) -> None:
    with FakeGeminiServer(goal_policy(SCRIPTS)) as srv:
        model = GeminiModel(["gemini-2.5-flash"], api_key="k", base_url=srv.base_url, sleep=lambda s: None,
                            backoff_s=0.0)
        with Phone.open("sim", data_dir=tmp_path, model=model, secrets=SHOP_SECRETS, real_time=False) as phone:
            run_shop(phone)
        sent = [r for r in srv.requests if r.tools]
    sid = phone.session_id or ""
    assert sent[-1].contents[0]["parts"][0]["text"].startswith(AFTER_FOUR)  # the buy request as the server got it
    with DataEngine.open_for_reading(tmp_path) as engine:
        spans = {n: ai_step_span(engine, sid, n) for n in range(1, 10)}
        assert spans[1] is None and spans[2] is not None and spans[2].first_step == 2
        assert spans[9] is not None and (spans[9].first_step, spans[9].last_step) == (5, 9)
        for n in range(2, 10):
            check = check_turn(engine, sid, n)
            assert check.match, (n, check.rows)
    proc = subprocess.run([sys.executable, "-m", "artemis_cli", "sessions", "prompt", sid, "--step", "1",
                           "--data-dir", str(tmp_path)], capture_output=True, text=True, check=False)
    assert proc.returncode == 2 and "was a Python API call (launch_app)" in proc.stderr and "Hint:" in proc.stderr
