"""Recall hands back what was seen (issue 13), on a session recorded on the simulated phone: facts
that were on screen but never typed are found by a natural-language question and by a step-range
lookup, and ``artemis recall ID --steps 40-40`` prints step 40's screen text."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from artemis_cli.cli.app import app
from artemis_cli.config.profile import load_profile
from artemis_cli.config.task import task_from_goal
from artemis_cli.engine.db import DataEngine
from artemis_cli.memory.recall import Recall
from artemis_cli.memory.recall_text import screen_text
from artemis_cli.models.offline.scripted import ScriptedModel
from artemis_cli.operators.prompts import format_offset
from artemis_cli.runner import run_task
from artemis_cli.sim.phone import SimPhone

# A tour of the default world: 43 steps, the shop's order confirmation is the screen of step 40.
TOUR: list[dict[str, Any]] = [
    {"launch": "com.android.settings"},
    {"tap": {"text": "Network & internet"}},
    {"key": "back"},
    {"tap": {"text": "About phone"}},  # step 5 shows About phone: device name, build number
    {"key": "back"},
    {"tap": {"text": "Display"}},  # steps 7-9: brightness, screen timeout
    {"tap": {"text": "Screen timeout"}},
    {"tap": {"text": "Cancel"}},
    {"key": "back"},
    {"tap": {"text": "Connected devices"}},
    {"key": "back"},
    {"key": "home"},
    {"launch": "com.android.contacts"},
    {"tap": {"desc": "Alice Anderson"}},  # step 15: Alice's card
    {"key": "back"},
    {"tap": {"desc": "Ben Brooks"}},  # step 17: Ben's card
    {"key": "back"},
    {"swipe": {"from": [540, 2000], "to": [540, 900]}},
    {"tap": {"desc": "Oscar Quinn"}},  # step 20: Oscar's card
    {"key": "back"},
    {"swipe": {"from": [540, 900], "to": [540, 2000]}},
    {"key": "home"},
    {"launch": "com.android.deskclock"},  # alarms
    {"tap": {"id": "tab_clock"}},
    {"tap": {"id": "tab_alarm"}},
    {"key": "home"},
    {"launch": "com.artemis.notes"},  # the notes list
    {"tap": {"desc": "Meeting notes"}},
    {"key": "back"},
    {"key": "home"},
    {"launch": "com.artemis.shop"},
    {"type": {"text": "demo", "into": {"id": "username"}}},
    {"type": {"text": "artemis123", "into": {"id": "password"}, "submit": True}},
    {"swipe": {"from": [540, 2100], "to": [540, 700]}},
    {"tap": {"desc": "Add Desk Lamp to cart"}},
    {"swipe": {"from": [540, 2100], "to": [540, 700]}},
    {"swipe": {"from": [540, 700], "to": [540, 2100]}},
    {"tap": {"id": "cart_button"}},
    {"tap": {"text": "Checkout"}},
    {"tap": {"text": "Continue shopping"}},  # step 40: "Order number: ART-10001"
    {"key": "home"},
    {"launch": "com.android.settings"},
    {"finish": {"success": True}},
]

# (question, the fact that was on screen) — none of these was typed
FACTS = [
    ("what was the order number?", "ART-10001"),
    ("how much did the desk lamp cost?", "$27.99"),
    ("phone number of Alice", "+1 555-0101"),
    ("what is Ben Brooks's email address?", "ben.brooks@example.com"),
    ("what is Oscar Quinn's phone number?", "+1 555-0115"),
    ("what is the build number?", "AP1A.240305.019"),
    ("what is the device name?", "Artemis Sim"),
    ("what was the screen timeout?", "After 30 seconds of inactivity"),
    ("what is the brightness level?", "50%"),
    ("when does the bedtime alarm ring?", "9:00 PM"),
    ("what was on the groceries list?", "Milk, eggs, bread, coffee"),
    ("what is the meeting about?", "Discuss Q3 roadmap with the team"),
]


@pytest.fixture(scope="module")
def tour(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[DataEngine, str]]:
    with DataEngine.open(tmp_path_factory.mktemp("tour")) as engine:
        result = run_task(task_from_goal("look around the phone", max_steps=60), load_profile("flash"),
                          SimPhone(popups=False), ScriptedModel(TOUR), engine, real_time=False)
        assert result.success and result.steps == len(TOUR)
        typed = " ".join(str(s.action_args.get("text", "")) for s in engine.get_steps(result.session_id))
        assert not any(fact in typed for _, fact in FACTS)
        yield engine, result.session_id


def screens(engine: DataEngine, sid: str) -> dict[int, str]:
    return {s.number: " | ".join(screen_text(engine.blob(s.ui_xml)).labels())
            for s in engine.get_steps(sid) if s.ui_xml}


def test_natural_language_questions_find_facts_that_were_on_screen(tour: tuple[DataEngine, str]) -> None:
    engine, sid = tour
    shown = screens(engine, sid)
    recall = Recall(engine)
    for question, fact in FACTS:
        result = recall.recall(sid, question)
        text = result.render()
        assert fact in text, (question, text)
        assert len(text) <= 2000 * 4
        # and the hit that shows it names a step whose screen had it
        hit = next(h for h in result.hits if fact in h.text())
        assert hit.kind != "step" or fact in shown[hit.step] or fact in hit.text().split("summary:", 1)[-1]


def test_a_step_range_lookup_returns_every_facts_screen_text(tour: tuple[DataEngine, str]) -> None:
    engine, sid = tour
    shown = screens(engine, sid)
    recall = Recall(engine)
    for _, fact in FACTS:
        steps = [n for n, text in shown.items() if fact in text]
        assert steps, fact
        for n in steps[:2]:
            result = recall.recall(sid, step_range=f"{n}-{n}")
            assert fact in "\n".join(v.text() for v in result.views), (fact, n)


def test_device_name_ranks_the_about_phone_screen_first(tour: tuple[DataEngine, str]) -> None:
    engine, sid = tour
    result = Recall(engine).recall(sid, "device name")
    assert result.steps[0] == 5 and "Device name · Artemis Sim" in result.hits[0].text()


def test_package_and_time_lookups_on_a_recorded_run(tour: tuple[DataEngine, str]) -> None:
    engine, sid = tour
    steps = {s.number: s for s in engine.get_steps(sid)}
    contacts = Recall(engine).recall(sid, package="com.android.contacts")
    assert contacts.lead == ["Steps in com.android.contacts: 14-22 (9 steps)."]
    result = Recall(engine).recall(sid, "phone", package="com.android.contacts")
    assert result.steps and all(steps[n].foreground_app == "com.android.contacts" for n in result.steps)
    at = format_offset(steps[40].offset_ms or 0)
    # the step at or just before that whole second; the first step when the run was faster than 1 s
    at_or_before = [n for n, s in steps.items() if (s.offset_ms or 0) <= ((steps[40].offset_ms or 0) // 1000) * 1000]
    anchor = max(at_or_before, default=min(steps))
    timed = Recall(engine).recall(sid, at=at)
    assert timed.at_step == anchor and anchor in [v.step for v in timed.views]


def test_cli_recall_steps_40_prints_the_screen_text_of_step_40(tour: tuple[DataEngine, str]) -> None:
    engine, sid = tour
    res = CliRunner().invoke(app, ["recall", sid, "--steps", "40-40", "--data-dir", str(engine.data_dir)])
    assert res.exit_code == 0, res.output
    out = res.stdout
    assert "Ledger of steps 40-40" in out and "- Step 40 (T+" in out
    assert "Screen of step 40 (" in out and "com.artemis.shop), before its action:" in out
    for line in ('TextView "Order placed"', 'TextView "Thank you for your order!"',
                 'TextView "Order number: ART-10001"', 'TextView "Total: $27.99"', 'Button "Continue shopping"'):
        assert f"  {line}" in out, line
    data = json.loads(CliRunner().invoke(app, ["recall", sid, "--steps", "40-40", "--json", "--data-dir",
                                               str(engine.data_dir)]).stdout)
    assert 'TextView "Order number: ART-10001"' in data["screens"][0]["screen"]


def test_cli_natural_language_question(tour: tuple[DataEngine, str], tmp_path: Path) -> None:
    engine, sid = tour
    res = CliRunner().invoke(app, ["recall", sid, "what was the order number?", "--data-dir", str(engine.data_dir)])
    assert res.exit_code == 0, res.output
    assert "Order number: ART-10001" in res.stdout
