"""launch_app by name through whole runs on a simulated phone carrying a real phone's package list:
the name resolves to the package a person means there and the step records how; a name that is not
installed is answered with the closest installed packages, and the model can then pick one."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from artemis_cli.config.profile import load_profile
from artemis_cli.config.task import task_from_goal
from artemis_cli.engine.db import DataEngine
from artemis_cli.models.base import FunctionCall, Message, ModelRequest, ModelResponse, Part, Usage
from artemis_cli.models.scripted import ScriptedModel
from artemis_cli.runner import run_task
from artemis_cli.sim.phone import SimPhone

SAMSUNG = Path(__file__).resolve().parents[2] / "fixtures" / "packages" / "samsung-galaxy-j6.txt"


class Replies:
    """A model double at the Model boundary: answers each call with the next canned calls and
    keeps the requests, to read what the loop told the model."""

    offline = True
    name = "replies"
    label = "replies (test double)"

    def __init__(self, replies: list[list[FunctionCall]]) -> None:
        self.replies = list(replies)
        self.requests: list[ModelRequest] = []

    def generate(self, request: ModelRequest) -> ModelResponse:
        self.requests.append(request)
        calls = self.replies.pop(0) if self.replies else [FunctionCall("finish", {"success": False})]
        return ModelResponse(Message("model", [Part(text="…")] + [Part(function_call=c) for c in calls]),
                             Usage(10, 0, 2, 0), self.name, 0.1)


def _run(model: Any, tmp_path: Path) -> tuple[Any, DataEngine]:
    phone = SimPhone(packages=SAMSUNG, popups=False)
    engine = DataEngine.open(tmp_path / "data")
    result = run_task(task_from_goal("Open my messages", max_steps=4), load_profile("flash"), phone, model, engine,
                      real_time=False)
    return result, engine


def test_the_models_launch_app_messages_opens_samsung_messages(tmp_path: Path) -> None:
    model = ScriptedModel([{"launch": "Messages"}, {"finish": {"success": True}}])
    result, engine = _run(model, tmp_path)
    steps = engine.get_steps(result.session_id)
    assert steps[0].action_type == "launch_app" and steps[0].result_status == "ok"
    assert steps[0].action_args == {"app": "Messages", "package": "com.samsung.android.messaging",
                                    "resolved_by": "alias"}
    assert steps[1].foreground_app == "com.samsung.android.messaging"
    engine.close()


def test_a_name_that_is_not_installed_is_answered_with_the_closest_packages(tmp_path: Path) -> None:
    model = Replies([[FunctionCall("launch_app", {"app": "Simple Calendar Pro"})],
                     [FunctionCall("launch_app", {"app": "com.samsung.android.calendar"})],
                     [FunctionCall("finish", {"success": True})]])
    result, engine = _run(model, tmp_path)
    answer = [p.function_response.response for p in model.requests[1].messages[-1].parts
              if p.function_response is not None]
    assert answer == [{"error": "no installed app matches 'Simple Calendar Pro'; the closest installed apps are "
                                "com.samsung.android.calendar; call launch_app again with one of these package "
                                "names if it is the app you mean"}]
    steps = engine.get_steps(result.session_id)
    assert steps[0].action_args["package"] == "com.samsung.android.calendar"
    assert steps[0].action_args["resolved_by"] == "package"
    engine.close()
