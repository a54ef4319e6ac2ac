"""Settling by watching the screen after an action (operators.observe.settle) and its use in the
Flash loop: a still screen costs one cheap screenshot, a changing one is waited for (bounded)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from artemis_cli.config.profile import load_profile
from artemis_cli.config.task import task_from_goal
from artemis_cli.engine.db import DataEngine
from artemis_cli.models.base import FunctionCall, Message, ModelRequest, ModelResponse, Part, Usage
from artemis_cli.operators.observe import Observation, observe, settle
from artemis_cli.runner import run_task
from artemis_cli.sim.phone import SimPhone

SCREEN = (1080, 2400)


class Animating:
    """A sim phone still moving after an action: each screenshot first applies the next pending
    change (the frames an animation would show), then captures."""

    def __init__(self, phone: SimPhone, changes: list[Callable[[], None]]) -> None:
        self.phone = phone
        self.changes = list(changes)
        self.screenshots = 0

    def screenshot(self) -> bytes:
        self.screenshots += 1
        if self.changes:
            self.changes.pop(0)()
        return self.phone.screenshot()

    def hierarchy(self) -> str:
        return self.phone.hierarchy()

    def current_app(self) -> str | None:
        return self.phone.current_app()

    def __getattr__(self, name: str) -> Any:  # the rest of the Device protocol: the phone's own
        return getattr(self.phone, name)


def taker(dev: Any) -> tuple[Callable[[], Observation], list[Observation]]:
    taken: list[Observation] = []

    def take() -> Observation:
        taken.append(observe(dev, SCREEN, "pixels", sleep=lambda s: None))
        return taken[-1]

    return take, taken


def test_a_still_screen_costs_one_screenshot_and_no_extra_observation() -> None:
    dev = Animating(SimPhone(popups=False), [])
    take, taken = taker(dev)
    res = settle(dev, take, max_s=30, sleep=lambda s: None)  # type: ignore[arg-type]
    assert (res.mode, res.stable, res.captures, len(taken)) == ("watch", True, 1, 1)
    assert res.obs is taken[0] and res.obs.settle_mode == "watch" and res.obs.settle_ms is not None


def test_a_changing_screen_is_observed_once_it_stops() -> None:
    phone = SimPhone(popups=False)
    dev = Animating(phone, [lambda: phone.do_launch("com.android.contacts"),
                            lambda: phone.do_launch("com.android.settings")])
    take, taken = taker(dev)
    res = settle(dev, take, max_s=30, sleep=lambda s: None)  # type: ignore[arg-type]
    assert taken[0].foreground == "com.android.contacts"  # mid-animation
    assert res.stable and res.obs.foreground == "com.android.settings" and len(taken) == 2
    assert res.captures == 3  # changed, same again (re-observe), equal to the new observation


def test_a_screen_that_never_stops_is_bounded_by_max() -> None:
    phone = SimPhone(popups=False)
    cycle: list[Callable[[], None]] = [lambda: phone.do_launch("com.android.contacts"),
                                       lambda: phone.do_launch("com.android.settings"),
                                       lambda: phone.do_launch("com.android.deskclock"),
                                       lambda: phone.do_key("home")]
    dev = Animating(phone, cycle * 10)  # four different frames, over and over
    now = [0.0]

    def clock() -> float:
        now[0] += 0.1
        return now[0]

    take, taken = taker(dev)
    res = settle(dev, take, max_s=0.35, sleep=lambda s: None, clock=clock)  # type: ignore[arg-type]
    assert not res.stable and res.mode == "watch" and res.captures == 3
    assert res.obs is taken[-1] and len(taken) == 2  # the first, and the screen as it was at the bound


def test_an_observation_slower_than_the_bound_is_confirmed_not_taken_again() -> None:
    dev = Animating(SimPhone(popups=False), [])
    now = [0.0]

    def clock() -> float:  # each reading 1 s later: the observation alone outlasts max_s
        now[0] += 1.0
        return now[0]

    take, taken = taker(dev)
    res = settle(dev, take, max_s=0.5, sleep=lambda s: None, clock=clock)  # type: ignore[arg-type]
    assert (res.stable, res.captures, len(taken)) == (True, 1, 1)
    assert res.obs is taken[0]


def test_fixed_mode_sleeps_the_floor_and_takes_no_screenshot() -> None:
    dev = Animating(SimPhone(popups=False), [])
    take, taken = taker(dev)
    slept: list[float] = []
    res = settle(dev, take, floor_s=0.25, max_s=2, watch=False, sleep=slept.append)  # type: ignore[arg-type]
    assert (res.mode, slept, len(taken), dev.screenshots) == ("fixed", [0.25], 1, 1)  # the observation's own


class ListModel:
    """A model double at the Model boundary: answers each call with the next canned message."""

    offline = True
    name = "list"
    label = "list (test double)"

    def __init__(self, replies: list[list[FunctionCall]]) -> None:
        self.replies = list(replies)

    def generate(self, request: ModelRequest) -> ModelResponse:
        calls = self.replies.pop(0) if self.replies else [FunctionCall("finish", {"success": False})]
        parts = [Part(text="thinking")] + [Part(function_call=c) for c in calls]
        return ModelResponse(Message("model", parts), Usage(10, 0, 2, 0), self.name, 0.1)


@pytest.mark.parametrize("real_time", [False, True])
def test_the_loop_settles_by_watching_only_in_real_time(tmp_path: Path, real_time: bool) -> None:
    phone = SimPhone(popups=False)
    dev = Animating(phone, [])
    model = ListModel([[FunctionCall("tap", {"x": 540, "y": 1200})], [FunctionCall("finish", {"success": True})]])
    with DataEngine.open(tmp_path / "data") as engine:
        result = run_task(task_from_goal("Look around", max_steps=3), load_profile("flash"), dev, model,  # type: ignore[arg-type]
                          engine, real_time=real_time)
    assert result.steps == 2
    # the first observation and step 1's post observation; in real time one cheap screenshot
    # confirms that post observation (the screen is still), in simulated runs nothing more
    assert dev.screenshots == (3 if real_time else 2)
