"""A session with the new actions (scroll, scroll to the end, double_tap, drag), recorded with the
scripted model on the sim, then replayed on a fresh phone by element and by coordinates (the
effects happen again), exported to Maestro, and phrased in the ledger lines."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator

import pytest

from artemis_cli.config.profile import load_profile
from artemis_cli.config.task import Task, load_task
from artemis_cli.engine.db import DataEngine
from artemis_cli.export import maestro_flow
from artemis_cli.memory.ledger_lines import action_phrase
from artemis_cli.models.offline.scripted import ScriptedModel
from artemis_cli.models.registry import reference_script
from artemis_cli.operators.tools import MAX_SCROLLS
from artemis_cli.replay import ReplayOptions, replay_session
from artemis_cli.replay.secrets import ENV_SECRET
from artemis_cli.runner import run_task
from artemis_cli.sim.phone import SimPhone

TASK = """\
id: gestures-like-and-reorder
goal: Like the Wireless Mouse in the Shop, then put the Ideas note first
max_steps: 12
sim: {world: default, seed: 5, popups: false}
setup:
  - shell: am force-stop com.artemis.shop
success:
  - shell: content query --uri content://com.artemis.notes/notes
    matches: "^Row: 0 _id=3"
reference:
  - launch: com.artemis.shop
  - type: {text: demo, into: {id: username}}
  - type: {text: artemis123, into: {id: password}, submit: true}
  - scroll: down
  - scroll: {direction: up, to_end: true}
  - double_tap: {text: Wireless Mouse}
  - launch: com.artemis.notes
  - drag: {from: {desc: Ideas}, to: {desc: Groceries}}
  - finish: {success: true, answer: done}
"""
NEW = ["scroll", "scroll", "double_tap", "drag"]


def _phone() -> SimPhone:
    return SimPhone(seed=5, popups=False)


def _effects(phone: SimPhone) -> tuple[object, list[str]]:
    notes = [str(n["title"]) for n in phone.apps["com.artemis.notes"].query("notes") or []]
    return phone.apps["com.artemis.shop"].snapshot().get("liked"), notes


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[DataEngine, str, Task]]:
    root = tmp_path_factory.mktemp("gestures")
    path = root / "task.yaml"
    path.write_text(TASK, encoding="utf-8")
    task = load_task(path)
    engine = DataEngine.open(root / "data")
    phone = _phone()
    result = run_task(task, load_profile("flash"), phone, ScriptedModel(reference_script(task)), engine,
                      real_time=False)
    assert result.success, result.message
    assert _effects(phone) == (["Wireless Mouse"], ["Ideas", "Groceries", "Meeting notes"])
    yield engine, result.session_id, task
    engine.close()


def test_the_recording_holds_the_new_actions_with_ok_outcomes(recorded: tuple[DataEngine, str, Task]) -> None:
    engine, sid, _ = recorded
    steps = [s for s in engine.get_steps(sid) if s.action_type in NEW]
    assert [s.action_type for s in steps] == NEW
    assert all((s.outcome or {}).get("status") == "ok" for s in steps), [s.outcome for s in steps]
    assert all(None not in (s.x, s.y) for s in steps)
    drag = steps[-1]
    assert drag.target and drag.target["content_desc"] == "Ideas"
    assert drag.target_end and drag.target_end["content_desc"] == "Groceries"
    phrases = [action_phrase(s) for s in steps]
    assert phrases[0] == "scroll down" and phrases[1] == "scroll up to the end"
    assert phrases[2].startswith("double_tap ") and "Wireless Mouse" in phrases[2]
    assert phrases[3].startswith("drag ") and "Ideas" in phrases[3] and " to " in phrases[3] and "Groceries" in phrases[3]


@pytest.mark.parametrize("by", ["semantics", "coordinates"])
def test_replay_does_it_again_on_a_fresh_phone(recorded: tuple[DataEngine, str, Task], by: str,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(ENV_SECRET, "artemis123")  # the Shop's password: a session never stores it
    engine, sid, _ = recorded
    phone = _phone()
    result = replay_session(engine, phone, sid, ReplayOptions(by=by))  # type: ignore[arg-type]
    counts = Counter(s.status for s in result.steps)
    assert counts == {"replayed": len(result.steps)}, [(s.number, s.status, s.detail) for s in result.steps]
    assert _effects(phone) == (["Wireless Mouse"], ["Ideas", "Groceries", "Meeting notes"])


def test_maestro_export_of_the_new_actions(recorded: tuple[DataEngine, str, Task]) -> None:
    engine, sid, _ = recorded
    flow = maestro_flow(engine, sid)
    by_kind = {s.action: s for s in flow.steps if s.action in ("double_tap", "drag")}
    scrolls = [s for s in flow.steps if s.action == "scroll"]
    assert list(scrolls[0].commands[0]) == ["swipe"]
    assert scrolls[1].commands[0]["repeat"]["times"] == MAX_SCROLLS
    assert list(scrolls[1].commands[0]["repeat"]["commands"][0]) == ["swipe"]
    assert list(by_kind["double_tap"].commands[0]) == ["doubleTapOn"]
    assert by_kind["drag"].commands == [] and "no Maestro equivalent" in (by_kind["drag"].comment or "")
    text = flow.to_yaml()
    assert "doubleTapOn" in text and "# drag has no Maestro equivalent" in text


def test_replay_plan_describes_the_new_actions(recorded: tuple[DataEngine, str, Task]) -> None:
    from artemis_cli.replay import plan

    engine, sid, _ = recorded
    rows = {p.action: p.locate for p in plan(engine, sid)}
    assert rows["scroll"].startswith("scroll (") and rows["scroll"].endswith(" scaled")
    assert rows["double_tap"].startswith("by ")
    assert rows["drag"].startswith("drag by ")
