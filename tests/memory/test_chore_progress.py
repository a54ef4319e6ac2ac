"""The model keeps track of what is done (issue 34 item 4), measured on the long chore.

A scripted run of tasks/chore-new-phone-setup.yaml (flash profile, mechanical lenses, F's budget
at its 1,000-token floor so the oldest steps fold into a period paragraph); at its last step the
request — read the way ``artemis sessions prompt ID --step N`` reads it — names every subgoal the
run was observed to reach: as a fact in the compressed history, or in the ledger line or reply
of a step still shown.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from artemis_cli.cli.prompt_cmd import render_request_text
from artemis_cli.config.profile import Profile, load_profile
from artemis_cli.config.task import Task, load_task
from artemis_cli.engine.db import DataEngine
from artemis_cli.memory.frozen_levels import PERIOD_CHARS
from artemis_cli.memory.ledger_lines import ledger_line
from artemis_cli.memory.step_facts import step_facts
from artemis_cli.memory.turn_check import check_turn
from artemis_cli.models.offline.scripted import ScriptedModel
from artemis_cli.models.registry import reference_script
from artemis_cli.runner import run_task
from artemis_cli.sim.phone import SimPhone

TASK = Path(__file__).resolve().parents[2] / "tasks" / "chore-new-phone-setup.yaml"

#: Each success check of the task (by what its shell command reads) -> the observed fact that
#: says the run reached it. Checks that only count rows follow from the others.
SUBGOALS: dict[str, str] = {
    "wifi_on": r'"Wi-Fi" OFF→ON',
    "mobile_data": r'"Mobile data" ON→OFF',
    "bluetooth_on": r'"Bluetooth" OFF→ON',
    "ui_night_mode": r'"Dark theme" OFF→ON',
    "screen_off_timeout": r'answered "Screen timeout" with "2 minutes"',
    "screen_brightness": r'"50%" → "40%"',
    "device_name": r'typed "Field Phone 3"',
    # a new contact: any of its values seen typed into the form
    "Sofia Romero": r'typed "(Sofia|Romero|\+1 555-0201|sofia\.romero@example\.com)"',
    "Tom Becker": r'typed "(Tom|Becker|\+1 555-0202)"',
    "Yuki Tanaka": r'typed "(Yuki|Tanaka|\+1 555-0203|yuki\.t@example\.com)"',
    "Ben Brooks": r'typed "\+1 555-0177"',
    "David Evans": r'answered "Delete this contact\?" with "Delete"',
    "Onboarding": r'typed "Badge, laptop, van keys, safety training on Monday"',
    "Groceries": r'shows "Milk, eggs, bread, coffee, bananas"',
    "Ideas": r'answered "Delete this note\?" with "Delete"',
}
COUNTS = ("wc -l",)


def _profile() -> Profile:
    data = load_profile("flash").model_dump(mode="json")
    data["memory"]["chunking"]["frozen_budget_tokens"] = 1000  # the floor: folding starts early
    return Profile.model_validate(data)


@pytest.fixture(scope="module")
def chore(tmp_path_factory: pytest.TempPathFactory) -> tuple[Task, DataEngine, str, int]:
    task = load_task(TASK)
    assert task.sim is not None
    engine = DataEngine.open(tmp_path_factory.mktemp("chore"))
    result = run_task(task, _profile(), SimPhone(world=task.sim.world, seed=task.sim.seed, popups=False),
                      ScriptedModel(reference_script(task)), engine, real_time=False, lenses="mechanical")
    assert result.success, result.message
    return task, engine, result.session_id, result.steps


def _subgoal(shell: str) -> str | None:
    if any(c in shell for c in COUNTS):
        return None
    names = [name for name in SUBGOALS if name in shell]
    assert len(names) == 1, f"no subgoal (or several) for success check {shell!r}: extend SUBGOALS"
    return names[0]


def test_the_last_request_names_every_subgoal_the_run_observed(chore: tuple[Task, DataEngine, str, int]) -> None:
    task, engine, sid, last = chore
    check = check_turn(engine, sid, last)
    assert check.match, check.rows  # what `sessions prompt --step N` shows is what was sent
    request = render_request_text(check.requests[0])
    shown = request.split("# EARLIER STEPS", 1)[1]  # after the task (whose goal names every value)
    history = shown.split("# STEP ", 1)[0]
    assert "[Period " in history  # the oldest steps are folded: only their paragraph is left
    steps = engine.get_steps(sid)
    subgoals = [s for s in (_subgoal(c.shell) for c in task.success) if s is not None]
    assert sorted(subgoals) == sorted(SUBGOALS)  # every subgoal of the task is measured
    missing = []
    for name in subgoals:
        pattern = re.compile(SUBGOALS[name])
        seen = [(s, f.text) for s in steps for f in step_facts(s) if pattern.search(f.text)]
        assert seen, f"the run never observed {name!r}"  # the scripted reference reaches every subgoal
        named = any(text in shown or text.removeprefix("typed ") in history or ledger_line(s) in shown
                    or f"# STEP {s.number} of" in shown for s, text in seen)
        if not named:
            missing.append(name)
    assert not missing, f"the last request does not name {missing}"


def test_the_period_paragraph_says_what_was_done_not_how_many_actions(chore: tuple[Task, DataEngine, str, int]) -> None:
    _, engine, sid, last = chore
    request = render_request_text(check_turn(engine, sid, last).requests[0])
    period = next(line for line in request.splitlines() if line.startswith("[Period 1 |"))
    paragraph = period.split("] ", 1)[1]
    assert len(paragraph) <= PERIOD_CHARS
    assert "Steps 1–12: " in paragraph and '"Wi-Fi" OFF→ON' in paragraph and '"Bluetooth" OFF→ON' in paragraph
    assert '"Dark theme" OFF→ON' in paragraph
    assert '× "tap"' not in paragraph  # no counts of actions where facts fit


def test_no_outcome_lists_a_text_twice(chore: tuple[Task, DataEngine, str, int]) -> None:
    """Feedback says each thing once: the brightness dialog's "40%" and the setting's summary are
    two nodes with one text, one change to read."""
    _, engine, sid, _ = chore
    lists = [(s.number, key, (s.outcome or {}).get("text", {}).get(key) or [])
             for s in engine.get_steps(sid) for key in ("appeared", "disappeared")]
    assert any(texts for _, _, texts in lists)
    twice = [(n, key, texts) for n, key, texts in lists if len(texts) != len(set(texts))]
    assert not twice, twice
