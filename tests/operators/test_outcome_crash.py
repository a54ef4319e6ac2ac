"""A crash or ANR of the app in front when the action ran is the step's outcome (issue 25); one of
another app is kept in the outcome's logs and changes nothing. The sim's own logcat, read through
``log_events`` in the observation, as the Flash loop reads it."""

from __future__ import annotations

from outcome_support import look

from artemis_cli.config.task import SimOptions
from artemis_cli.device.select import sim_for
from artemis_cli.models.base import FunctionCall
from artemis_cli.operators.act import execute, plan_action
from artemis_cli.operators.observe import settle
from artemis_cli.operators.outcome import assess
from artemis_cli.operators.tools import validate_call

SETTINGS = "com.android.settings"
CLOCK = "com.android.deskclock"


def _step(phone, name: str, inject=None, **args):  # type: ignore[no-untyped-def]
    pre = look(phone)
    action = plan_action(validate_call(FunctionCall(name, args)), pre, [SETTINGS, CLOCK])
    if inject is not None:
        inject()
    result = execute(action, phone, real_time=False, pre=pre.tree)
    post = settle(phone, lambda: look(phone), watch=False).obs
    return assess(action, result, pre, post), post


def test_a_crash_of_the_app_in_front_is_app_crashed_with_the_exception_line() -> None:
    phone = sim_for(SimOptions(popups=False, faults="crash:1.0"))
    look(phone)  # the baseline
    out, post = _step(phone, "launch_app", app=SETTINGS)  # the launched app crashes at once
    assert out.status == "app_crashed" and out.fault is not None
    assert out.detail == f'{SETTINGS} crashed: "{out.fault.detail}"'
    assert out.fault.detail.startswith("java.lang.")
    assert out.to_dict()["fault"]["package"] == SETTINGS
    assert post.foreground != SETTINGS


def test_a_background_crash_is_recorded_and_the_outcome_stands() -> None:
    phone = sim_for(SimOptions(popups=False))
    phone.launch(CLOCK)
    look(phone)
    out, _ = _step(phone, "press_key", key="back", inject=lambda: phone.errors.crash(SETTINGS))
    assert out.status in ("ok", "no_change")
    assert out.logs is not None and [f.package for f in out.logs.faults] == [SETTINGS]
    assert out.to_dict()["logs"]["faults"][0]["package"] == SETTINGS and out.fault is None


def test_an_anr_of_the_app_in_front_is_app_not_responding() -> None:
    phone = sim_for(SimOptions(popups=False))
    phone.launch(CLOCK)
    look(phone)
    out, _ = _step(phone, "press_key", key="back", inject=lambda: phone.errors.anr(CLOCK))
    assert out.status == "app_not_responding"
    assert out.detail.startswith(f"{CLOCK} is not responding: ")


def test_the_app_that_was_in_front_counts_though_the_crash_took_it_away() -> None:
    phone = sim_for(SimOptions(popups=False))
    phone.launch(CLOCK)
    look(phone)
    out, post = _step(phone, "press_key", key="back", inject=lambda: phone.errors.crash(CLOCK))
    assert post.foreground != CLOCK  # the crash took it out of the foreground
    assert out.status == "app_crashed" and out.fault is not None and out.fault.package == CLOCK
