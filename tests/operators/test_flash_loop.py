"""The Flash loop on the simulated phone: turn structure, malformed calls, recording invariants."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from artemis_cli.config.profile import load_profile
from artemis_cli.config.task import task_from_goal
from artemis_cli.engine.db import DataEngine
from artemis_cli.models.base import FunctionCall, Message, ModelRequest, ModelResponse, Part, Usage
from artemis_cli.runner import run_task
from artemis_cli.sim.phone import SimPhone


class ListModel:
    """A model double at the Model boundary: answers each call with the next canned message."""

    offline = True
    name = "list"
    label = "list (test double)"

    def __init__(self, replies: list[list[FunctionCall]]) -> None:
        self.replies = list(replies)
        self.requests: list[ModelRequest] = []

    def generate(self, request: ModelRequest) -> ModelResponse:
        self.requests.append(request)
        calls = self.replies.pop(0) if self.replies else [FunctionCall("finish", {"success": False})]
        parts = [Part(text="thinking")] + [Part(function_call=c) for c in calls]
        return ModelResponse(Message("model", parts), Usage(10, 0, 2, 0), self.name, 0.1)


def _run(model: Any, tmp_path: Path, goal: str = "Open Settings", max_steps: int = 5, phone: Any = None):
    engine = DataEngine.open(tmp_path / "data")
    task = task_from_goal(goal, max_steps=max_steps)
    result = run_task(task, load_profile("flash"), phone or SimPhone(popups=False), model, engine, real_time=False)
    return result, engine


def _responses(request: ModelRequest) -> list[dict[str, Any]]:
    last = request.messages[-1]
    return [p.function_response.response for p in last.parts if p.function_response is not None]


def test_malformed_calls_are_answered_and_the_run_goes_on(tmp_path: Path) -> None:
    model = ListModel(
        [
            [FunctionCall("open_door", {})],  # unknown tool
            [FunctionCall("tap", {"index": "four"})],  # wrong argument type
            [FunctionCall("tap", {"index": 999})],  # index that does not exist
            [FunctionCall("tap", {"index": 0}), FunctionCall("press_key", {"key": "home"})],  # two actions
            [],  # no call at all
            [FunctionCall("launch_app", {"app": "Settings"})],  # finally a valid action
            [FunctionCall("finish", {"success": True, "answer": "done"})],
        ]
    )
    result, engine = _run(model, tmp_path)
    assert result.success and result.steps == 2
    errors = [r.get("error", "") for req in model.requests[1:6] for r in _responses(req)]
    assert any("unknown tool 'open_door'" in e for e in errors)
    assert any("`index` must be an integer" in e for e in errors)
    assert any("no element with index 999" in e for e in errors)
    assert sum("exactly one action per turn" in e for e in errors) == 2
    assert "Call exactly one action tool" in (model.requests[5].messages[-1].parts[0].text or "")
    steps = engine.get_steps(result.session_id)
    assert steps[0].action_type == "launch_app" and steps[0].result_status == "ok"
    assert steps[0].meta["model_calls"] == 6
    assert steps[0].foreground_app == "com.android.launcher3"
    assert steps[1].foreground_app == "com.android.settings"


def test_a_turn_without_a_valid_action_is_recorded_not_fatal(tmp_path: Path) -> None:
    model = ListModel([[FunctionCall("bogus", {})]] * 6 + [[FunctionCall("finish", {"success": True})]])
    result, engine = _run(model, tmp_path)
    steps = engine.get_steps(result.session_id)
    assert steps[0].action_type == "none" and steps[0].result_status == "error"
    assert "no valid action" in (steps[0].result_detail or "")
    assert result.steps == 2 and result.status == "succeeded"


def test_memory_tools_are_pre_decision_and_answered_in_the_same_turn(tmp_path: Path) -> None:
    model = ListModel(
        [
            [FunctionCall("read_note", {"key": "pin"})],
            [FunctionCall("save_note", {"key": "pin", "content": "4711"})],
            [FunctionCall("press_key", {"key": "home"})],
            [FunctionCall("read_note", {"key": "pin"}), FunctionCall("recall_history", {})],
            [FunctionCall("finish", {"success": True})],
        ]
    )
    result, _ = _run(model, tmp_path)
    assert result.steps == 2  # three memory calls did not consume a step
    (missing,) = _responses(model.requests[1])
    assert missing == {"error": "no note named 'pin'"}
    (saved,) = _responses(model.requests[2])
    assert saved["saved"] == "pin" and saved["version"] == 1
    note, recall = _responses(model.requests[4])
    assert note["content"] == "4711" and note["written_at_step"] == 1
    assert "needs a query" in recall["error"]


class CommitSpy:
    """Wraps the simulated phone; at every action, records how many steps the DB holds."""

    def __init__(self, phone: SimPhone, data_dir: Path) -> None:
        self.phone = phone
        self.data_dir = data_dir
        self.seen: list[tuple[str, int]] = []

    def __getattr__(self, name: str) -> Any:
        return getattr(self.phone, name)

    def _committed(self) -> int:
        import sqlite3

        conn = sqlite3.connect(self.data_dir / "artemis.db")
        try:
            return conn.execute("select count(*) from steps").fetchone()[0]
        finally:
            conn.close()

    def tap(self, x: int, y: int) -> None:
        self.seen.append(("tap", self._committed()))
        self.phone.tap(x, y)

    def key(self, name: str) -> None:
        self.seen.append(("key", self._committed()))
        self.phone.key(name)

    def launch(self, package: str) -> None:
        self.seen.append(("launch", self._committed()))
        self.phone.launch(package)


def test_each_step_is_committed_before_the_next_action(tmp_path: Path) -> None:
    """SPEC §5 invariant 2, observed from a second SQLite connection at each device action."""
    spy = CommitSpy(SimPhone(popups=False), tmp_path / "data")
    model = ListModel(
        [
            [FunctionCall("launch_app", {"app": "Settings"})],
            [FunctionCall("press_key", {"key": "back"})],
            [FunctionCall("launch_app", {"app": "Clock"})],
            [FunctionCall("press_key", {"key": "home"})],
            [FunctionCall("finish", {"success": True})],
        ]
    )
    result, _ = _run(model, tmp_path, phone=spy)
    assert result.steps == 5
    # action k (1-based) is sent when exactly k-1 steps are committed and visible to others
    assert [n for _, n in spy.seen] == [0, 1, 2, 3]


def test_stored_records_are_never_truncated(tmp_path: Path) -> None:
    """SPEC §5 invariant 1: the stored XML and screenshot are byte-identical to what the device gave."""
    phone = SimPhone(popups=False)
    phone.launch("com.artemis.shop")
    png_before = phone.screenshot()
    given: list[str] = []  # every dump the device gave (the sim's list the windows in a new order each time)
    dump = phone.hierarchy

    def hierarchy() -> str:
        given.append(dump())
        return given[-1]

    phone.hierarchy = hierarchy  # type: ignore[method-assign]
    model = ListModel([[FunctionCall("finish", {"success": True})]])
    result, engine = _run(model, tmp_path, phone=phone)
    step = engine.get_steps(result.session_id)[0]
    assert engine.blob(step.ui_xml).decode("utf-8") == given[0]
    assert engine.blob(step.pre_screenshot) == png_before


def test_identical_screens_are_stored_once(tmp_path: Path) -> None:
    model = ListModel([[FunctionCall("wait", {"seconds": 0})]] * 4 + [[FunctionCall("finish", {"success": True})]])
    result, engine = _run(model, tmp_path, max_steps=6)
    steps = engine.get_steps(result.session_id)
    shas = {s.pre_screenshot for s in steps} | {s.post_screenshot for s in steps}
    assert len(shas) == 1  # nothing changed on screen: one blob for ten references
    # the dumps list the same windows in a new order each time (uiautomator2 collects them in a
    # set): each distinct dump is stored once, like the one screenshot
    dumps = {s.ui_xml for s in steps} | {s.post_ui_xml for s in steps if s.post_ui_xml}
    assert 1 < len(dumps) <= 2 * len(steps)
    files = len(list((tmp_path / "data" / "blobs").rglob("*"))) - len(list((tmp_path / "data" / "blobs").glob("*")))
    assert files == 1 + len(dumps)


def test_offsets_are_monotonic(tmp_path: Path) -> None:
    model = ListModel([[FunctionCall("wait", {"seconds": 0})]] * 3 + [[FunctionCall("finish", {"success": True})]])
    t0 = time.monotonic()
    result, engine = _run(model, tmp_path)
    offsets = [s.offset_ms for s in engine.get_steps(result.session_id)]
    assert offsets == sorted(offsets) and offsets[-1] <= (time.monotonic() - t0) * 1000 + 1
