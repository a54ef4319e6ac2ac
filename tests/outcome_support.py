"""Acting on a device the way the Flash loop does (observe, plan, execute with the focus probe,
observe, assess), for the outcome tests: the simulated phone in-process or behind its adbd."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from artemis_cli.config.profile import load_profile
from artemis_cli.config.task import SimOptions, Task, load_task
from artemis_cli.device.protocol import Device
from artemis_cli.device.select import sim_for
from artemis_cli.engine.db import DataEngine
from artemis_cli.models.base import FunctionCall
from artemis_cli.operators.act import ActionResult, PlannedAction, execute, plan_action
from artemis_cli.operators.observe import Observation, observe
from artemis_cli.operators.outcome import ActionOutcome, assess
from artemis_cli.operators.tools import validate_call
from artemis_cli.operators.typing import probe_tree
from artemis_cli.runner import RunResult, run_task
from artemis_cli.sim.phone import SimPhone

TASKS = Path(__file__).resolve().parent.parent / "tasks"


@dataclass
class Acted:
    outcome: ActionOutcome
    result: ActionResult
    action: PlannedAction
    pre: Observation
    post: Observation


def look(device: Device) -> Observation:
    info = device.info()
    return observe(device, (info.width, info.height), "pixels", sleep=lambda _: None)


def index_of(obs: Observation, rid: str = "", text: str = "", desc: str = "") -> int:
    for el in obs.elements:
        n = el.node
        if ((not rid or n.resource_id.endswith(f"/{rid}"))
                and (not text or text in (n.text, *el.label.split(" · ")))
                and (not desc or n.content_desc == desc)):
            return el.index
    raise AssertionError(f"no element rid={rid!r} text={text!r} desc={desc!r} in\n{obs.element_list}")


def act(device: Device, name: str, packages: list[str] | None = None, **args: Any) -> Acted:
    pre = look(device)
    action = plan_action(validate_call(FunctionCall(name, args)), pre, packages or [])
    size = (pre.space.width, pre.space.height)
    result = execute(action, device, real_time=False, pre=pre.tree, probe=lambda: probe_tree(device, size))
    post = look(device)
    return Acted(assess(action, result, pre, post), result, action, pre, post)


def tap(device: Device, **sel: str) -> Acted:
    return act(device, "tap", index=index_of(look(device), **sel))


def type_into(device: Device, text: str, rid: str, **flags: bool) -> Acted:
    return act(device, "type_text", text=text, index=index_of(look(device), rid=rid), **flags)


def storm_task(seed: int, max_steps: int = 24) -> Task:
    """tasks/clock-add-alarm.yaml with the promotion pop-up every 3 actions (``popup_storm``)."""
    task = load_task(TASKS / "clock-add-alarm.yaml")
    assert task.sim is not None
    sim = task.sim.model_copy(update={"seed": seed, "popups": True, "faults": "popup_storm"})
    return task.model_copy(update={"sim": sim, "max_steps": max_steps})


def record_storm(engine: DataEngine, seed: int, max_steps: int = 24) -> RunResult:
    """Run the storm task in-process with the scripted model (its reference solution)."""
    from artemis_cli.models.offline.scripted import ScriptedModel
    from artemis_cli.models.registry import reference_script

    task = storm_task(seed, max_steps)
    assert task.sim is not None
    phone = sim_for(SimOptions(world=task.sim.world, seed=task.sim.seed, popups=True, faults="popup_storm"))
    return run_task(task, load_profile("flash"), phone, ScriptedModel(reference_script(task)), engine,
                    real_time=False)


def check_gestures(device: Device, phone: SimPhone) -> None:
    """double_tap, drag and scroll (to the end too) through ``device`` (the sim in-process, or behind
    its adbd through adb or uiautomator2): each one's effect happened on the phone and its outcome
    says ``ok``; a scroll at the end of its content is ``no_change``."""
    shop = phone.apps["com.artemis.shop"]
    phone.do_launch("com.artemis.shop")
    shop.user = "demo"  # type: ignore[attr-defined]  # logged in (the login screen is not what this checks)
    phone.invalidate()
    liked = act(device, "double_tap", index=index_of(look(device), rid="product_name", text="Wireless Mouse"))
    assert liked.outcome.status == "ok", liked.outcome
    assert shop.snapshot().get("liked") == ["Wireless Mouse"]
    assert "Liked" in [n.text for n in liked.post.tree.nodes]

    down = act(device, "scroll", direction="down")
    assert down.action.y is not None and down.action.y2 is not None and down.action.y > down.action.y2  # finger up
    assert down.outcome.status == "ok" and shop.ui_state.scroll["catalogue"] > 0
    top = act(device, "scroll", direction="up", to_end=True)
    assert top.outcome.status == "ok" and shop.ui_state.scroll["catalogue"] == 0
    assert top.result.at_end and top.result.swipes == 2
    assert "scrolled 1 time, reached the end" in top.outcome.summary
    again = act(device, "scroll", direction="up", to_end=True)
    assert again.outcome.status == "no_change" and again.result.swipes == 1

    phone.do_launch("com.artemis.notes")
    obs = look(device)
    moved = act(device, "drag", index=index_of(obs, desc="Ideas"), to_index=index_of(obs, desc="Groceries"))
    assert moved.outcome.status == "ok", moved.outcome
    assert [n["title"] for n in phone.apps["com.artemis.notes"].query("notes") or []] == [
        "Ideas", "Groceries", "Meeting notes"]
    assert moved.action.target.content_desc == "Ideas" and moved.action.target_end is not None
    assert moved.action.target_end.content_desc == "Groceries"


def check_links_stops_and_keys(device: Device, phone: SimPhone) -> None:
    """open_url, stop_app and the keys beyond back/home on ``device`` (the sim, or the sim behind
    its adbd): each answered by what was observed after it."""
    phone.do_launch("com.android.launcher3")
    opened = act(device, "open_url", url="artemis-shop://catalog")
    assert (opened.outcome.status, opened.post.foreground) == ("ok", "com.artemis.shop"), opened.outcome
    assert opened.action.phrase() == "open artemis-shop://catalog"
    stopped = act(device, "stop_app", packages=phone.packages(), package="com.artemis.shop")
    assert stopped.outcome.status == "ok" and "com.artemis.shop stopped" in stopped.outcome.notes, stopped.outcome
    assert phone.foreground == "com.android.launcher3" and phone.am.pid("com.artemis.shop") is None
    nowhere = act(device, "open_url", url="https://example.com/page")
    assert nowhere.outcome.status == "failed" and "no app on the phone opens" in nowhere.outcome.detail
    assert nowhere.post.foreground == "com.android.launcher3"
    phone.do_launch("com.android.settings")
    escaped = act(device, "press_key", key="escape")  # no view takes ESCAPE: it falls back to BACK
    assert escaped.outcome.status == "ok" and escaped.post.foreground == "com.android.launcher3", escaped.outcome
    for key in ("tab", "search", "menu", "volume_up", "volume_down"):
        pressed = act(device, "press_key", key=key)
        assert pressed.outcome.status != "error", (key, pressed.outcome)
