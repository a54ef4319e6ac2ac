"""After the failure analyzer's recovery actions ran inside a step, the operator's next reply says
so (issue 22, Feedback): each recovery action with its observed outcome, and the step's outcome
measured AFTER them — against the screen they left, the one the operator is shown next.

Through the real SDK against the fake Gemini server, on the simulated phone; the validator calls
two steps in a row no_effect, so the analyzer steps in (the scripted roles answer ``press back``).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from artemis_cli.config.profile import load_profile
from artemis_cli.config.task import Task
from artemis_cli.engine.db import DataEngine
from artemis_cli.memory.ledger_lines import ledger_line, outcome_phrase, recovery_line
from artemis_cli.memory.turn_check import check_turn
from artemis_cli.models.fakes.gemini import FakeGeminiServer, FakeReply, FakeRequest
from artemis_cli.models.gemini import GeminiModel
from artemis_cli.models.offline.scripted_roles import (
    first_user_text,
    pro_script_policy,
    role_of_system,
    script_position,
)
from artemis_cli.operators.pro.failure_analyzer import RECOVERY_EVENT
from artemis_cli.runner import run_task
from artemis_cli.sim.phone import SimPhone

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
from long_run import chore_script

NO_EFFECT_AT = (4, 5)  # the second Wi-Fi tap, then back to Settings: the analyzer presses back again
LAUNCHER = "com.android.launcher3"


def _policy(script: list[dict[str, Any]]) -> Any:
    base = pro_script_policy(script)

    def policy(req: FakeRequest) -> FakeReply:
        if not req.tools and role_of_system(req.system) == "validator":
            pos = script_position(first_user_text(req))
            if pos is not None and pos[0] in NO_EFFECT_AT:
                return FakeReply.text(json.dumps({"verdict": "no_effect", "milestone_complete": False,
                                                  "reason": "nothing the milestone needs happened"}))
        reply: FakeReply = base(req)
        return reply

    return policy


def _sent_replies(server: FakeGeminiServer) -> list[dict[str, Any]]:
    return [part["functionResponse"]["response"] for req in server.requests if req.tools
            for content in req.contents for part in content.get("parts", []) if "functionResponse" in part]


def test_the_next_reply_lists_the_recovery_and_the_outcome_measured_after_it(tmp_path: Path) -> None:
    script, _ = chore_script(10)
    task = Task.model_validate({"id": "pro-recovery", "goal": "Do the daily phone chores", "max_steps": 12})
    with DataEngine.open(tmp_path / "data") as engine, FakeGeminiServer(_policy(script)) as server:
        model = GeminiModel(["gemini-2.5-pro"], api_key="k", base_url=server.base_url)
        result = run_task(task, load_profile("pro"), SimPhone(seed=7, popups=False), model, engine, real_time=False)
        sid = result.session_id
        events = engine.events(sid, kind=RECOVERY_EVENT)
        assert events, "the analyzer ran"
        at = events[0].step
        assert at is not None
        step = engine.get_steps(sid, at, at)[0]
        sent = _sent_replies(server)
        for number in (at, at + 1):  # `sessions prompt --step N` re-renders what was sent, byte for byte
            assert check_turn(engine, sid, number).match, number
    lines = [recovery_line(e.payload) for e in events if e.step == at]
    assert lines == ["press back -> ok, app now com.android.launcher3"]
    outcome = step.outcome or {}
    before = outcome["before_recovery"]
    # before the recovery the back key had only left the Wi-Fi screen; after it, Settings is closed
    assert "app now" not in before["summary"] and before["status"] == "ok"
    assert outcome["app_after"] == LAUNCHER and f"app now {LAUNCHER}" in outcome["summary"]
    assert outcome["recovery"] == lines
    reply = dict((step.meta or {})["replies_out"][-1]["response"])
    assert reply["status"] == step.result_status == outcome["status"]
    assert reply["observed"] == outcome["summary"]
    assert reply["recovery_actions"] == lines
    assert reply["before_recovery"] == outcome_phrase(before)
    assert reply["measured"].startswith("after the recovery actions")
    assert reply in sent, "the operator was sent it"
    # band ③ says what the step came to before and after the recovery
    assert f"-> {outcome_phrase(before)}; after recovery: ok, app now {LAUNCHER}" in ledger_line(step)
