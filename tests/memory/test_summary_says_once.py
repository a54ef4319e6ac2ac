"""Issue 34 item 5: a change stated in a step's outcome (what the runtime observed, which the
model reads beside the step) is not stated again in that step's visual summary; a bare
punctuation mark is no text that appeared. Read from a scripted run's stored summaries."""

from __future__ import annotations

import json
from pathlib import Path

from artemis_cli.config.profile import load_profile
from artemis_cli.config.task import SimOptions, load_task
from artemis_cli.device.select import sim_for
from artemis_cli.engine.db import DataEngine
from artemis_cli.models.offline.scripted import ScriptedModel
from artemis_cli.models.registry import reference_script
from artemis_cli.runner import run_task

TASKS = Path(__file__).resolve().parents[2] / "tasks"


def _run(engine: DataEngine, name: str) -> str:
    task = load_task(TASKS / name)
    assert task.sim is not None
    phone = sim_for(SimOptions(world=task.sim.world, seed=task.sim.seed, popups=False))
    result = run_task(task, load_profile("flash"), phone, ScriptedModel(reference_script(task)), engine,
                      real_time=False)
    assert result.success, result.message
    return result.session_id


def test_the_summary_leaves_out_what_the_outcome_says(engine: DataEngine) -> None:
    session = _run(engine, "clock-add-alarm.yaml")
    checked = 0
    for step in engine.get_steps(session):
        outcome = step.outcome or {}
        assert step.summary_status == "ready" and step.summary, step.number
        summary = step.summary
        for state in outcome.get("states") or []:
            element = state["element"].split(" (id ")[0]  # RadioButton "PM"
            assert f"{element} shows" not in summary and f"id {state['resource_id'].rsplit('/', 1)[-1]}) shows" not in summary, (summary, state)
            checked += 1
        field = outcome.get("field") or {}
        if field.get("shows"):
            assert f'-> {json.dumps(field["shows"])}' not in summary, summary
            checked += 1
        for window in outcome.get("windows_opened") or []:
            title = window.split(" (")[0]  # '"Set alarm"'
            assert title not in summary.split("After:", 1)[-1], summary
            checked += 1
        after = summary.split("After:", 1)[-1]
        assert '":"' not in after and "\", \":\"" not in after, summary
    assert checked >= 5, "the alarm run opens a dialog, types into fields and checks a radio button"
