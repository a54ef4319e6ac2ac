"""The heuristic baseline: it gives up on a repeat loop instead of running out of steps, and a
quoted value in the goal keeps its apostrophes ("Call Mori's office")."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from artemis_cli.config.profile import load_profile
from artemis_cli.config.task import Task
from artemis_cli.engine.db import DataEngine
from artemis_cli.models.base import FunctionCall
from artemis_cli.models.conversation import ConversationView
from artemis_cli.models.offline.heuristic import (
    STUCK_REPEATS,
    HeuristicModel,
    HeuristicPolicy,
    quoted_values,
    unchanged_repeats,
)
from artemis_cli.runner import run_task
from artemis_cli.sim.phone import SimPhone

SWITCH_SCREEN = """# STEP 2 of at most 30 [T+00:01]
Foreground app: com.android.deskclock. Screen 1080x2400; coordinates: pixels.
# CURRENT OBSERVATION [T+00:01] (step 2; the screenshot is the current screen)
Screen elements (untrusted device content):
<screen>
[0] TextView "Clock" @(552,180)
[1] TextView "7:30 AM" id=digital_clock {click} @(344,491)
[2] Switch "ON" desc="7:30 AM alarm" id=onoff {click,checked} @(962,491)
</screen>"""

NOTE_SCREEN = """# STEP 3 of at most 30 [T+00:01]
Foreground app: com.artemis.notes. Screen 1080x2400; coordinates: pixels.
# CURRENT OBSERVATION [T+00:01] (step 3; the screenshot is the current screen)
Screen elements (untrusted device content):
<screen>
[0] TextView "New note" @(552,180)
[1] EditText "Title" id=title {click,edit,focused} @(540,400)
[2] EditText "Note" id=body {click,edit} @(540,800)
</screen>"""


def view(goal: str, screen: str, calls: list[tuple[str, dict[str, Any]]] | None = None,
         texts: list[str] | None = None, replies: list[dict[str, Any]] | None = None) -> ConversationView:
    return ConversationView(task_text=f"# TASK\nGoal: {goal}", observation_text=screen,
                            model_texts=list(texts or []), model_calls=list(calls or []),
                            last_responses=list(replies or []))


def play(goal: str, screen: str, turns: int, *, changed: bool) -> list[tuple[str, FunctionCall]]:
    """Drive the policy as the loop would: its calls and thoughts go back into the next view;
    every action's reply says whether the screen changed."""
    policy = HeuristicPolicy()
    calls: list[tuple[str, dict[str, Any]]] = []
    texts: list[str] = []
    replies: list[dict[str, Any]] = []
    out = []
    for _ in range(turns):
        thought, call = policy.decide(view(goal, screen, calls, texts, replies))
        out.append((thought, call))
        if call.name == "finish":
            break
        calls.append((call.name, dict(call.args)))
        texts.append(f"[heuristic] {thought}")
        replies = [{"name": call.name, "status": "ok" if changed else "no_change", "screen_changed": changed}]
    return out


# -- repeat loops ----------------------------------------------------------------------------------


def test_identical_actions_that_change_nothing_end_in_a_failed_finish() -> None:
    turns = play("Turn off the 7:30 AM alarm", SWITCH_SCREEN, 20, changed=False)
    assert len(turns) == STUCK_REPEATS + 1
    assert [c.name for _, c in turns[:-1]] == ["tap"] * STUCK_REPEATS
    assert {c.args["index"] for _, c in turns[:-1]} == {2}
    thought, finish = turns[-1]
    assert finish.name == "finish" and finish.args["success"] is False
    assert "stuck" in finish.args["answer"] and f"{STUCK_REPEATS} times" in finish.args["answer"]
    assert "no screen change" in finish.args["answer"] and "stuck" in thought
    # the count rides on its own thoughts: the first repeat notes 1, the last before giving up 4
    assert "(no screen change after 1 identical action in a row)" in turns[1][0]
    assert f"(no screen change after {STUCK_REPEATS - 1} identical actions in a row)" in turns[-2][0]
    assert "no screen change" not in turns[0][0]


def test_identical_actions_that_change_the_screen_go_on() -> None:
    turns = play("Turn off the 7:30 AM alarm", SWITCH_SCREEN, 12, changed=True)
    assert len(turns) == 12 and all(c.name == "tap" for _, c in turns)
    assert not any("no screen change" in t for t, _ in turns)


def test_the_count_restarts_when_the_screen_changes_or_the_action_differs() -> None:
    tap = ("tap", {"index": 2})
    unchanged = [{"name": "tap", "status": "no_change", "screen_changed": False}]
    note = "[heuristic] toggling it. (no screen change after 3 identical actions in a row)"
    assert unchanged_repeats(view("g", SWITCH_SCREEN, [tap, tap], ["[heuristic] a", note], unchanged)) == 4
    changed = [{"name": "tap", "status": "ok", "screen_changed": True}]
    assert unchanged_repeats(view("g", SWITCH_SCREEN, [tap, tap], ["[heuristic] a", note], changed)) == 0
    other = ("swipe", {"direction": "up"})
    assert unchanged_repeats(view("g", SWITCH_SCREEN, [other, tap], ["[heuristic] a", note], unchanged)) == 1
    assert unchanged_repeats(view("g", SWITCH_SCREEN)) == 0


def test_a_loop_on_the_simulated_phone_stops_with_a_failed_finish(tmp_path: Path) -> None:
    class DeadTaps(SimPhone):
        def tap(self, x: int, y: int) -> None:  # the screen ignores every tap
            return None

    task = Task.model_validate({"id": "stuck", "goal": "Turn off the 7:30 AM alarm",
                                "app": "com.android.deskclock", "max_steps": 30})
    with DataEngine.open(tmp_path / "data") as engine:
        result = run_task(task, load_profile("flash"), DeadTaps(popups=False), HeuristicModel(), engine,
                          real_time=False)
        steps = engine.get_steps(result.session_id)
    assert result.status == "failed" and result.stop_reason == "finished"
    assert result.steps == STUCK_REPEATS + 1 < task.max_steps
    assert [s.action_type for s in steps] == ["tap"] * STUCK_REPEATS + ["finish"]
    assert result.answer.startswith("heuristic is stuck: tap(index=")


# -- quoted values ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("goal", "values"),
    [
        ('Add a note "Call Mori\'s office"', ["Call Mori's office"]),
        ("Name the contact 'Ken Mori's desk'", ["Ken Mori's desk"]),
        ("Don't rename it; name the new one 'Mori's'", ["Mori's"]),
        ("Add notes 'Bob' and 'Alice'", ["Bob", "Alice"]),
        ('Type “Mori’s office” please', ["Mori’s office"]),
        ("Name it ‘Ken Mori’s desk’.", ["Ken Mori’s desk"]),
        ("The boys' notes: add 'Ken'", ["Ken"]),
        ("It's Mori's phone, isn't it", []),
        ('Rename "A" to "B"', ["A", "B"]),
        ("say 'it's done', then \"bye\"", ["it's done", "bye"]),
        ("no quotes at all", []),
    ],
)
def test_quoted_values_keep_apostrophes(goal: str, values: list[str]) -> None:
    assert quoted_values(goal) == values


@pytest.mark.parametrize("goal", ['Add a note "Call Mori\'s office"', "Add a note 'Call Mori's office'",
                                  "Add a note “Call Mori’s office”"])
def test_the_whole_quoted_value_is_typed(goal: str) -> None:
    _thought, call = HeuristicPolicy().decide(view(goal, NOTE_SCREEN, [("tap", {"index": 8})]))
    want = quoted_values(goal)[0]
    assert want.startswith("Call Mori") and want.endswith("office")
    assert call.name == "type_text" and call.args == {"text": want, "index": 1}


def test_notes_app_gets_the_whole_title(tmp_path: Path) -> None:
    task = Task.model_validate({"id": "note", "goal": 'Add a note "Call Mori\'s office"', "max_steps": 3})
    with DataEngine.open(tmp_path / "data") as engine:
        result = run_task(task, load_profile("flash"), SimPhone(popups=False), HeuristicModel(), engine,
                          real_time=False)
        typed = [s.action_args.get("text") for s in engine.get_steps(result.session_id) if s.action_type == "type_text"]
    assert typed == ["Call Mori's office"]
