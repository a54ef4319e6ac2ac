"""Settling without an extra capture (issue 26): a post-action observation that already shows the
action's effect is kept as it is (settle mode ``observed``, no screenshot taken only to confirm
stillness), and a screen that changes again after it is caught by the next step's observation,
which re-assesses the earlier step before the model reads it (``operators.settling``)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from artemis_cli.config.profile import load_profile
from artemis_cli.config.task import task_from_goal
from artemis_cli.engine.db import DataEngine
from artemis_cli.models.base import FunctionCall, Message, ModelRequest, ModelResponse, Part, Usage
from artemis_cli.operators.observe import Observation, observe, settle
from artemis_cli.operators.settling import LATE_EVENT
from artemis_cli.runner import RunResult, run_task
from artemis_cli.sim.phone import SimPhone

SCREEN = (1080, 2400)
SETTINGS = "com.android.settings"


class LateScreen:
    """A sim phone whose screen changes once more after the post-action observation: the
    ``after``-th screenshot following the last action first applies ``change`` (a crash, a
    redirect: what a phone does a few hundred ms after the first frame), then captures."""

    def __init__(self, phone: SimPhone, change: Callable[[], None] | None = None, after: int = 2) -> None:
        self.phone = phone
        self.change = change
        self.after = after
        self.screenshots = 0
        self._since_action: int | None = None

    def screenshot(self) -> bytes:
        self.screenshots += 1
        if self._since_action is not None:
            self._since_action += 1
            if self._since_action == self.after and self.change is not None:
                self.change()
                self.change = None
        return self.phone.screenshot()

    def launch(self, package: str) -> None:
        self.phone.launch(package)
        self._since_action = 0

    def __getattr__(self, name: str) -> Any:  # the rest of the Device protocol: the phone's own
        return getattr(self.phone, name)


class ListModel:
    """A model double at the Model boundary: answers each call with the next canned call and
    keeps the requests it was sent."""

    offline = True
    name = "list"
    label = "list (test double)"

    def __init__(self, replies: list[FunctionCall]) -> None:
        self.replies = list(replies)
        self.requests: list[ModelRequest] = []

    def generate(self, request: ModelRequest) -> ModelResponse:
        self.requests.append(request)
        call = self.replies.pop(0) if self.replies else FunctionCall("finish", {"success": False})
        return ModelResponse(Message("model", [Part(text="thinking"), Part(function_call=call)]),
                             Usage(10, 0, 2, 0), self.name, 0.1)


def launch_then_finish(dev: Any, tmp_path: Path) -> tuple[RunResult, DataEngine, ListModel]:
    model = ListModel([FunctionCall("launch_app", {"app": SETTINGS}), FunctionCall("finish", {"success": True})])
    engine = DataEngine.open(tmp_path / "data")
    result = run_task(task_from_goal("Open Settings", max_steps=3), load_profile("flash"), dev, model, engine,
                      real_time=True)
    return result, engine, model


def test_settle_keeps_an_observation_that_shows_the_effect_without_a_screenshot() -> None:
    dev = LateScreen(SimPhone(popups=False))
    taken: list[Observation] = []

    def take() -> Observation:
        taken.append(observe(dev, SCREEN, "pixels", sleep=lambda s: None))  # type: ignore[arg-type]
        return taken[-1]

    res = settle(dev, take, max_s=30, sleep=lambda s: None, judge=lambda obs: True)  # type: ignore[arg-type]
    assert (res.mode, res.stable, res.captures, len(taken), dev.screenshots) == ("observed", True, 0, 1, 1)
    assert res.obs.settle_mode == "observed" and res.obs.settle_ms is not None and res.obs.settle_ms >= 0
    # an observation that does not show it is watched as before: one cheap screenshot confirms it
    res = settle(dev, take, max_s=30, sleep=lambda s: None, judge=lambda obs: False)  # type: ignore[arg-type]
    assert (res.mode, res.captures, len(taken), dev.screenshots) == ("watch", 1, 2, 3)


def test_a_step_whose_post_shows_the_launch_takes_no_confirming_screenshot(tmp_path: Path) -> None:
    dev = LateScreen(SimPhone(popups=False))
    result, engine, _ = launch_then_finish(dev, tmp_path)
    with engine:
        steps = engine.get_steps(result.session_id)
        late = engine.events(result.session_id, LATE_EVENT)
    assert [s.result_status for s in steps] == ["ok", "finished"]
    meta = steps[0].meta or {}
    assert meta["settle_mode"] == "observed" and isinstance(meta["settle_ms"], float)
    # the first observation, step 1's post observation, and the next step's cheap screenshot
    # (the confirmation, on a device read one call at a time): the screen was still, no event
    assert dev.screenshots == 3 and late == []


def test_a_crash_after_the_post_observation_reassesses_the_step_before_the_model_reads(tmp_path: Path) -> None:
    phone = SimPhone(popups=False)
    # Settings shows its first frame (the post observation: "app now com.android.settings"),
    # then crashes before the next step's observation
    dev = LateScreen(phone, lambda: phone.errors.crash(SETTINGS))
    result, engine, model = launch_then_finish(dev, tmp_path)
    with engine:
        steps = engine.get_steps(result.session_id)
        late = engine.events(result.session_id, LATE_EVENT)
    assert len(late) == 1 and late[0].step == 1
    payload = late[0].payload
    assert payload["was"]["status"] == "ok" and payload["now"]["status"] == "app_crashed", payload
    assert payload["amended"] is True and payload["outcome"]["fault"]["package"] == SETTINGS
    # nothing swapped: step 1 keeps the post observation it was judged on; step 2 starts from
    # the later screen, and the model read the correction in step 2's observation
    assert steps[0].post_dhash == payload["post_dhash"] != payload["later_dhash"] == steps[1].pre_dhash
    told = (steps[1].meta or {})["observation"]
    assert "step 1 came to" in told and "crashed" in told and "reported as ok" in told
    assert "step 1 came to" in model.requests[-1].canonical_json()  # what the model was sent


def test_no_confirming_screenshot_on_a_concurrent_device_by_default(tmp_path: Path) -> None:
    phone = SimPhone(popups=False)
    dev = LateScreen(phone, lambda: phone.errors.crash(SETTINGS))
    # adb, u2: reads overlap, and a background capture would outlast recording the step
    dev.concurrent_reads = True  # type: ignore[attr-defined]
    result, engine, _ = launch_then_finish(dev, tmp_path)
    with engine:
        late = engine.events(result.session_id, LATE_EVENT)
        steps = engine.get_steps(result.session_id)
    assert (steps[0].meta or {})["settle_mode"] == "observed"
    assert late == [] and dev.screenshots == 2  # the first observation and step 1's post: nothing else


def test_a_later_change_that_leaves_the_outcome_as_it_was_is_recorded_but_not_told(tmp_path: Path) -> None:
    phone = SimPhone(popups=False)
    # the dark theme applies after Settings' first frame: a new picture, the same UI; the launch
    # still came to "app now com.android.settings"
    def dark() -> None:
        phone.settings.put("secure", "ui_night_mode", "2")
        phone.invalidate()

    dev = LateScreen(phone, dark)
    result, engine, model = launch_then_finish(dev, tmp_path)
    with engine:
        steps = engine.get_steps(result.session_id)
        late = engine.events(result.session_id, LATE_EVENT)
    assert len(late) == 1 and late[0].payload["amended"] is False, [e.payload for e in late]
    assert late[0].payload["now"]["status"] == "ok" and steps[1].pre_dhash == late[0].payload["later_dhash"]
    assert "step 1 came to" not in (steps[1].meta or {})["observation"]
    assert "changed again" not in model.requests[-1].canonical_json()
