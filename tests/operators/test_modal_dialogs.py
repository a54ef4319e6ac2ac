"""Issue 34 item 2: a modal window takes the touch, and the model is told so.

With a dialog up on the simulated phone — the Clock's "Set alarm", Contacts' "Delete this
contact?", the permission prompt, the crash dialog — what a model reads (the element list fenced
into its request, the marks on its screenshot) offers nothing behind the dialog, only a line that
counts it; a tap behind it, by coordinates, is refused before anything reaches the phone and the
answer names the dialog. On the in-process sim (uiautomator2-style dumps of every window) and
through the adb backend, whose `uiautomator dump` holds the dialog alone and `dumpsys window`
the rest (the sim's own shell behind an adb server at its protocol boundary; against
`artemis sim serve` with Debian's adb in tests/adbd/test_modal_over_adb.py)."""

from __future__ import annotations

import re
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from outcome_support import index_of, look, tap

from artemis_cli.config.profile import load_profile
from artemis_cli.config.task import SimOptions, Task
from artemis_cli.device.adb import AdbDevice
from artemis_cli.device.protocol import Device
from artemis_cli.device.select import sim_for
from artemis_cli.engine.db import DataEngine
from artemis_cli.models.base import FunctionCall, ModelRequest, ModelResponse
from artemis_cli.models.offline.scripted import ScriptedModel
from artemis_cli.operators.act import plan_action
from artemis_cli.operators.observe import Observation
from artemis_cli.operators.tools import ToolCallError, validate_call
from artemis_cli.perception.hittest import HitIndex
from artemis_cli.perception.marks import marks_from_json, marks_of
from artemis_cli.runner import run_task
from artemis_cli.sim.hierarchy_xml import dump
from artemis_cli.sim.phone import SimPhone

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "device"))
from fake_adb_server import FakeAdbServer, FakeShell

CLOCK, CONTACTS, SETTINGS = "com.android.deskclock", "com.android.contacts", "com.android.settings"
SYSTEM_UI = "com.android.systemui"
BEHIND = re.compile(r"^(\d+) elements behind (the dialog(?: \"[^\n]*\")?) \(not listed: it takes every touch\)$",
                    re.M)


def _phone() -> SimPhone:
    phone = sim_for(SimOptions(popups=False, seed=21))
    assert isinstance(phone, SimPhone)
    return phone


def _set_alarm(phone: SimPhone, device: Device) -> str:
    phone.grant(CLOCK, "android.permission.POST_NOTIFICATIONS")
    phone.launch(CLOCK)
    tap(device, desc="Add alarm")
    return 'the dialog "Set alarm"'


def _delete_contact(phone: SimPhone, device: Device) -> str:
    phone.launch(CONTACTS)
    tap(device, text="Alice Anderson")
    tap(device, text="Delete")
    return 'the dialog "Delete this contact?"'


def _permission(phone: SimPhone, device: Device) -> str:
    phone.launch(CLOCK)  # its first launch asks for notifications
    return 'the dialog "Allow Clock to send you notifications?"'


def _crash(phone: SimPhone, device: Device) -> str:
    phone.launch(SETTINGS)
    phone.errors.crash(SETTINGS)  # the app dies; "Settings keeps stopping" over the launcher
    return 'the dialog "Settings keeps stopping"'


def _promotion(phone: SimPhone, device: Device) -> str:
    """Another app's overlay (com.artemis.promo) over the Contacts: modal by its AlertDialog frame
    in a dump of every window, by its flags over adb."""
    phone.launch(CONTACTS)
    phone.popup_visible = True
    phone.invalidate()
    return 'the dialog "Special offer!"'


DIALOGS: dict[str, Callable[[SimPhone, Device], str]] = {
    "set-alarm": _set_alarm, "delete-contact": _delete_contact, "permission": _permission, "crash": _crash,
    "promotion": _promotion}


@pytest.fixture(params=["sim", "adb"])
def backend(request: pytest.FixtureRequest) -> Iterator[tuple[SimPhone, Device, FakeShell | None]]:
    """The sim in-process, or the adb backend reading the same phone's shell."""
    phone = _phone()
    if request.param == "sim":
        yield phone, phone, None
        return
    shell = FakeShell(rules={"": phone.shell_bytes})
    with FakeAdbServer({"emulator-5554": "device"}, shell=shell) as server:
        yield phone, AdbDevice("emulator-5554", port=server.port, sleep=lambda s: None), shell


def _behind(obs: Observation) -> list[int]:
    """Node indices of what is drawn under the modal window, bar the system bars (unlisted)."""
    index = HitIndex.of(obs.tree)
    assert obs.modal is not None
    return [i for i, w in index.window_of.items() if w < obs.modal.position and not obs.tree.nodes[i].synthetic]


def _refused(obs: Observation, name: str, **args: Any) -> str:
    with pytest.raises(ToolCallError) as err:
        plan_action(validate_call(FunctionCall(name, args)), obs)
    return str(err.value)


@pytest.mark.parametrize("dialog", DIALOGS)
def test_nothing_behind_the_dialog_is_offered_and_a_tap_behind_it_is_not_sent(
        backend: tuple[SimPhone, Device, FakeShell | None], dialog: str) -> None:
    phone, device, shell = backend
    named = DIALOGS[dialog](phone, device)
    obs = look(device)
    assert obs.modal is not None and obs.modal.name == named, obs.element_list
    window = obs.modal.window
    listed = obs.element_list.splitlines()
    # every element offered (and marked) is the dialog's or the system bars'
    for element in obs.elements:
        assert element.node.package == SYSTEM_UI or element.node.path.startswith(window.path), element
    bars = [w.bounds for w in HitIndex.of(obs.tree).windows if w.package == SYSTEM_UI]
    for _, left, top, right, bottom in marks_of(obs.elements):  # the marks drawn on the screenshot
        assert any(r.left <= left and r.top <= top and right <= r.right and bottom <= r.bottom
                   for r in [window.bounds, *bars]), (left, top, right, bottom)
    behind = _behind(obs)
    counted = BEHIND.findall(obs.element_list)
    if shell is None:  # every window dumped: what is behind is known, counted in one line, the last
        assert behind and counted == [(str(obs.behind_modal), named)] and BEHIND.match(listed[-1])
    else:  # the dialog dumped alone: nothing known behind it, nothing to count
        assert not behind and counted == [] and obs.behind_modal == 0
    assert len(counted) <= 1 and sum(named in line for line in listed) <= 1
    # a coordinate tap outside the dialog, where the screen behind shows: refused, nothing sent
    x, y = window.bounds.left + window.bounds.width // 2, max(window.bounds.top - 120, 200)
    before = dump(phone.windows())
    sent = list(shell.commands) if shell else []
    for name, args in (("tap", {"x": x, "y": y}), ("long_press", {"x": x, "y": y}),
                       ("double_tap", {"x": x, "y": y}), ("swipe", {"x1": x, "y1": y, "x2": x, "y2": y + 300})):
        assert _refused(obs, name, **args) == (
            f"{named} is in front; dismiss it or use its buttons (press_key back closes most dialogs); "
            "nothing was sent")
    assert (shell.commands if shell else []) == sent
    assert dump(phone.windows()) == before
    # inside it, and on the navigation bar, taps go as before
    back = plan_action(validate_call(FunctionCall("tap", {"x": 270, "y": 2337})), obs)  # ◁ on the navigation bar
    assert back.target.content_desc in ("Back", "Navigation bar") and back.y == 2337
    inside = obs.elements[next(e.index for e in obs.elements if e.node.path.startswith(window.path + "."))]
    assert plan_action(validate_call(FunctionCall("tap", {"x": inside.center[0], "y": inside.center[1]})), obs)


def test_under_set_alarm_the_switch_behind_is_not_listed_and_tapping_it_is_refused(
        backend: tuple[SimPhone, Device, FakeShell | None]) -> None:
    """The issue's case: `[6] Switch "ON" desc="7:30 AM alarm" id=onoff` was offered with its tap
    point pushed outside the dialog, and a tap there answered no_change."""
    phone, device, _ = backend
    phone.grant(CLOCK, "android.permission.POST_NOTIFICATIONS")
    phone.launch(CLOCK)
    plain = look(device)
    switch = plain.elements[index_of(plain, desc="7:30 AM alarm")]
    tap(device, desc="Add alarm")
    obs = look(device)
    assert "onoff" not in obs.element_list and "7:30 AM alarm" not in obs.element_list
    assert all(e.node.resource_id != switch.node.resource_id for e in obs.elements)
    assert obs.modal is not None
    dialog, b = obs.modal.window.bounds, switch.node.bounds
    assert b.right > dialog.right  # the part of the switch the dialog leaves: where the list sent taps
    alarms = phone.apps[CLOCK].snapshot()
    for x, y in ((1026, 491), ((dialog.right + b.right) // 2, b.top + 1), ((dialog.right + b.right) // 2, b.bottom - 1)):
        assert 'the dialog "Set alarm" is in front' in _refused(obs, "tap", x=x, y=y)
    assert phone.apps[CLOCK].snapshot() == alarms  # still ON


class Recording(ScriptedModel):
    """The scripted model, keeping every request it was sent."""

    def __init__(self, script: list[dict[str, Any]]) -> None:
        super().__init__(script)
        self.requests: list[ModelRequest] = []

    def generate(self, request: ModelRequest) -> ModelResponse:
        self.requests.append(request)
        return super().generate(request)


def test_a_run_reads_the_dialog_and_its_tap_behind_is_answered_not_sent(tmp_path: Path) -> None:
    """clock-add-alarm's first reference step opens "Set alarm"; the model then taps the 7:30 switch
    behind it by coordinates (refused within the turn, the answer naming the dialog, the switch still
    ON), then cancels. The request it read has no element behind the dialog, one line counting them,
    and the step's stored marks are the listed elements' only."""
    phone = _phone()
    phone.grant(CLOCK, "android.permission.POST_NOTIFICATIONS")
    model = Recording([{"tap": {"desc": "Add alarm"}}, {"tap": {"x": 1026, "y": 491}}, {"tap": {"text": "Cancel"}},
                       {"finish": {"success": False, "answer": "stopped"}}])
    task = Task.model_validate({"id": "modal", "goal": "Look at the alarms", "app": CLOCK, "max_steps": 6})
    engine = DataEngine.open(tmp_path / "data")
    result = run_task(task, load_profile("flash"), phone, model, engine, real_time=False)
    texts = ["\n".join(p.text or "" for p in r.messages[-1].parts) for r in model.requests]
    under = next(i for i, t in enumerate(texts) if "# STEP 2 " in t)
    screen = re.search(r"<screen>\n(.*?)\n</screen>", texts[under], re.S)
    assert screen is not None
    lines = screen.group(1).splitlines()
    assert not any("onoff" in ln or "7:30 AM" in ln or "Add alarm" in ln for ln in lines), lines
    assert BEHIND.match(lines[-1]) and '"Set alarm"' in lines[-1]
    answers = [p.function_response.response for p in model.requests[under + 1].messages[-1].parts
               if p.function_response is not None]
    assert {"error": 'the dialog "Set alarm" is in front; dismiss it or use its buttons (press_key back closes '
                     "most dialogs); nothing was sent"} in answers
    steps = engine.get_steps(result.session_id)
    assert [s.action_type for s in steps][:2] == ["tap", "tap"]  # the refused tap is no step
    assert steps[1].action_args.get("index") is not None  # the second step is Cancel, by index
    marks = marks_from_json((steps[1].meta or {}).get("marks"))
    assert marks and [m[0] for m in marks] == list(range(len(marks)))
    assert len(marks) == len([ln for ln in lines if ln.startswith("[")])
    after = next(t for t in texts if "# STEP 3 " in t)
    assert 'Switch "ON" desc="7:30 AM alarm"' in after  # the tap behind the dialog never reached it
