"""launch_app by name through whole runs on a simulated phone carrying a real phone's package list:
the name resolves to the package a person means there and the step records how; a name that is not
installed is answered with the launchable apps whose name is like it (else with the launchable
apps), and the model can then pick one."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from artemis_cli.config.profile import load_profile
from artemis_cli.config.task import task_from_goal
from artemis_cli.engine.db import DataEngine
from artemis_cli.models.base import FunctionCall, Message, ModelRequest, ModelResponse, Part, Usage
from artemis_cli.models.offline.scripted import ScriptedModel
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


def test_a_name_that_is_not_installed_is_answered_with_similar_apps(tmp_path: Path) -> None:
    model = Replies([[FunctionCall("launch_app", {"app": "Simple Calendar Pro"})],
                     [FunctionCall("launch_app", {"app": "com.samsung.android.calendar"})],
                     [FunctionCall("finish", {"success": True})]])
    result, engine = _run(model, tmp_path)
    answer = [p.function_response.response for p in model.requests[1].messages[-1].parts
              if p.function_response is not None]
    assert answer == [{"error": "no installed app matches 'Simple Calendar Pro'; apps with a similar name: "
                                "com.samsung.android.calendar; call launch_app again with one of these package "
                                "names if it is the app you mean"}]
    steps = engine.get_steps(result.session_id)
    assert steps[0].action_args["package"] == "com.samsung.android.calendar"
    assert steps[0].action_args["resolved_by"] == "package"
    engine.close()


def test_a_name_like_no_app_is_answered_with_the_launchable_apps_never_the_launcher(tmp_path: Path) -> None:
    """The issue's case: ``launch_app Calendar`` on the simulated phone (no calendar) answered "the
    closest installed apps are com.android.launcher3". It now lists the apps a person can open
    there (the package manager's launcher activities), the launcher not among them."""
    model = Replies([[FunctionCall("launch_app", {"app": "Calendar"})], [FunctionCall("finish", {"success": False})]])
    engine = DataEngine.open(tmp_path / "data")
    run_task(task_from_goal("Open my calendar", max_steps=3), load_profile("flash"), SimPhone(popups=False), model,
             engine, real_time=False)
    answer = [p.function_response.response for p in model.requests[1].messages[-1].parts
              if p.function_response is not None]
    assert answer == [{"error": "no installed app matches 'Calendar', and no app's name is like it; the apps on this "
                                "phone are com.android.settings, com.android.deskclock, com.android.contacts, "
                                "com.artemis.notes, com.artemis.shop; call launch_app again with one of these "
                                "package names if one is the app you mean"}]
    engine.close()


def test_a_misspelt_name_offers_the_launchable_app_it_is_like(tmp_path: Path) -> None:
    """On a real phone's package list: "Telegarm" offers Telegram, not Microsoft Teams (less alike)
    nor anything the launcher cannot open."""
    model = Replies([[FunctionCall("launch_app", {"app": "Telegarm"})], [FunctionCall("finish", {"success": False})]])
    _, engine = _run(model, tmp_path)
    answer = [p.function_response.response for p in model.requests[1].messages[-1].parts
              if p.function_response is not None]
    assert answer == [{"error": "no installed app matches 'Telegarm'; apps with a similar name: org.telegram.messenger; "
                                "call launch_app again with one of these package names if it is the app you mean"}]
    engine.close()
