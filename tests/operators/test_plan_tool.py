"""The ``plan`` tool (issue 34 item 4): a bounded todo/done checklist the Flash operator keeps,
recorded in the DataEngine, recited every turn beside the notes, restored by resume, and rendered
as the same list as the Pro planner's plan."""

from __future__ import annotations

import re
from typing import Any

import pytest

from artemis_cli.cli.prompt_cmd import render_request_text
from artemis_cli.config.profile import load_profile
from artemis_cli.config.task import Task
from artemis_cli.engine.db import DataEngine
from artemis_cli.errors import ModelUnavailable
from artemis_cli.memory.checklist import MAX_ITEM_CHARS, MAX_ITEMS, PLAN_SET_EVENT, plan_before
from artemis_cli.memory.turn_check import check_turn
from artemis_cli.models.base import FunctionCall, Message, ModelRequest, ModelResponse, Part, Usage
from artemis_cli.models.offline.scripted import ScriptedModel
from artemis_cli.operators.pro.plan import Plan
from artemis_cli.operators.tools import ToolCallError, validate_call
from artemis_cli.replay.replayer import replay_session
from artemis_cli.resume import resume_session
from artemis_cli.runner import run_task
from artemis_cli.sim.phone import SimPhone

SCRIPT = [{"launch": "com.android.settings"}, {"tap": {"text": "Network & internet"}},
          {"tap": {"id": "wifi_switch"}}, {"key": "back"}, {"finish": {"success": True, "answer": "Wi-Fi toggled"}}]
FIRST = [{"text": "Open Network & internet", "status": "todo"}, {"text": "Toggle Wi-Fi", "status": "todo"}]
LATER = [{"text": "Open Network & internet", "status": "done"}, {"text": "Toggle Wi-Fi", "status": "done"}]


def plan_call(items: Any) -> FunctionCall:
    return FunctionCall("plan", {"items": items})


# --- the tool's arguments ----------------------------------------------------------------------


def test_a_plan_within_its_bounds_is_accepted_as_sent() -> None:
    call = validate_call(plan_call([{"text": "  Turn on\nWi-Fi ", "status": "done"}, {"text": "Dark theme", "status": "todo"}]))
    assert call.args == {"items": [{"text": "Turn on Wi-Fi", "status": "done"}, {"text": "Dark theme", "status": "todo"}]}
    assert validate_call(plan_call([])).args == {"items": []}  # clears it


@pytest.mark.parametrize(("items", "says"), [
    ([{"text": f"goal {n}", "status": "todo"} for n in range(MAX_ITEMS + 1)], f"at most {MAX_ITEMS} items"),
    ([{"text": "x" * (MAX_ITEM_CHARS + 1), "status": "todo"}], f"at most {MAX_ITEM_CHARS}"),
    ([{"text": "Wi-Fi", "status": "maybe"}], "todo or done"),
    ([{"text": "Wi-Fi", "status": "done", "priority": 1}], "takes no `priority`"),
    ([{"text": " ", "status": "todo"}], "non-empty `text`"),
    (["Turn on Wi-Fi"], "must be an object"),
    ("Turn on Wi-Fi", "must be a list"),
    (None, "must be a list"),
])
def test_a_plan_over_its_bounds_or_malformed_is_refused_saying_why(items: Any, says: str) -> None:
    with pytest.raises(ToolCallError, match=re.escape(says)):
        validate_call(plan_call(items))


def test_unknown_arguments_are_refused() -> None:
    with pytest.raises(ToolCallError, match="plan takes no `subgoals`"):
        validate_call(FunctionCall("plan", {"items": [], "subgoals": []}))


# --- a run that keeps a plan -------------------------------------------------------------------


class Planning:
    """A model double: the scripted model, which also sets ``plans[step]`` with the plan tool at
    the start of those steps' turns (a memory call, answered in the turn)."""

    offline = True

    def __init__(self, script: list[dict[str, Any]], plans: dict[int, Any], fail_at: int | None = None) -> None:
        self.inner = ScriptedModel(script)
        self.plans = plans
        self.fail_at = fail_at
        self.name = "scripted-planning"
        self.label = "scripted, with a plan (test double)"

    def generate(self, request: ModelRequest) -> ModelResponse:
        text = "\n".join(p.text for m in request.messages if m.role == "user" for p in m.parts if p.text)
        steps = re.findall(r"# STEP (\d+) of at most", text)
        step = int(steps[-1]) if steps else 0
        if step == self.fail_at:
            raise ModelUnavailable("the service is down (test)")
        last = request.messages[-1]
        answered = any(p.function_response is not None and p.function_response.name == "plan" for p in last.parts)
        if step in self.plans and not answered:
            return ModelResponse(Message("model", [Part(function_call=plan_call(self.plans[step]))]), Usage(),
                                 self.name, 0.0)
        return self.inner.generate(request)


def _task() -> Task:
    return Task.model_validate({"id": "plan-tool", "goal": "Toggle Wi-Fi in Network & internet", "max_steps": 8})


def _observation(engine: DataEngine, sid: str, step: int) -> str:
    rec = engine.get_step(sid, step)
    assert rec is not None
    return str(rec.meta["observation"])


def test_the_plan_is_recited_every_turn_beside_the_notes_and_sessions_prompt_shows_it(engine: DataEngine) -> None:
    result = run_task(_task(), load_profile("flash"), SimPhone(seed=3, popups=False), Planning(SCRIPT, {1: FIRST, 3: LATER}),
                      engine, real_time=False)
    assert result.success, result.message
    sid = result.session_id
    assert "Your plan" not in _observation(engine, sid, 1)  # set during step 1's turn: shown from step 2 on
    second = _observation(engine, sid, 2)
    assert ('Your plan (set at step 1, 0 of 2 done; keep it up to date with plan):\n'
            '- [ ] "Open Network & internet"\n- [ ] "Toggle Wi-Fi"\n') in second
    assert second.index("Your plan") < second.index("Screen elements")
    assert '- [x] "Open Network & internet"\n- [x] "Toggle Wi-Fi"' in _observation(engine, sid, 4)
    assert [e.payload["version"] for e in engine.events(sid, kind=PLAN_SET_EVENT)] == [1, 2]
    # sessions prompt re-renders every turn of the session that used it, to its recorded hash
    for step in (1, 2, 3, 4):
        check = check_turn(engine, sid, step)
        assert check.match, (step, check.rows)
    shown = render_request_text(check_turn(engine, sid, 3).requests[-1])
    assert "[call plan " in shown and '- [ ] "Toggle Wi-Fi"' in shown
    # a replay sends the device actions only (the plan is the model's memory, not an action)
    replayed = replay_session(engine, SimPhone(seed=3, popups=False), sid)
    assert replayed.status == "succeeded" and replayed.first_divergence is None, replayed.message


def test_the_plan_survives_a_resume(engine: DataEngine) -> None:
    phone = SimPhone(seed=3, popups=False)
    result = run_task(_task(), load_profile("flash"), phone, Planning(SCRIPT, {1: FIRST}, fail_at=3), engine,
                      real_time=False)
    assert result.steps == 2 and not result.success
    sid = result.session_id
    resumed = resume_session(sid, engine, device=phone, model=Planning(SCRIPT, {}), real_time=False)
    assert resumed.success, resumed.message
    after = _observation(engine, sid, 3)  # the first turn after the resume
    assert '- [ ] "Open Network & internet"\n- [ ] "Toggle Wi-Fi"' in after
    plan = plan_before(engine, sid)
    assert plan is not None and [i.text for i in plan.items] == ["Open Network & internet", "Toggle Wi-Fi"]


def test_the_pro_planner_plan_is_the_same_list() -> None:
    plan = Plan.from_titles(["Open Network & internet", "Toggle Wi-Fi"])
    plan = plan.mark_done(plan.milestones[0].id)
    assert plan.recitation().splitlines()[1:] == ['- [x] "Open Network & internet"', '- [ ] "Toggle Wi-Fi"']
