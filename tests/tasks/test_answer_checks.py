"""``answer`` and ``finished`` success checks (operators/checks.py), alone and through whole runs:
the runner hands the loop's outcome to the evaluator, so a run is judged on its finish too."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from artemis_cli.config.profile import load_profile
from artemis_cli.config.task import SuccessCheck, Task, load_task
from artemis_cli.engine.db import DataEngine
from artemis_cli.models.offline.scripted import ScriptedModel
from artemis_cli.operators.checks import Finish, evaluate_check, evaluate_checks
from artemis_cli.runner import run_task
from artemis_cli.sim.phone import SimPhone

TASKS = Path(__file__).resolve().parents[2] / "tasks"


def check(**data: Any) -> SuccessCheck:
    return SuccessCheck.model_validate(data)


ANSWER = Finish(True, True, "  3 items, total $12.50 ")


@pytest.mark.parametrize(
    ("spec", "passed", "name"),
    [
        ({"equals": "3 items, total $12.50"}, True, "answer == '3 items, total $12.50'"),
        ({"equals": "3 items"}, False, "answer == '3 items'"),
        ({"contains": "items"}, True, "answer contains 'items'"),
        ({"contains": "Items"}, False, "answer contains 'Items'"),  # case-sensitive, as for shell
        ({"matches": r"^\d+ items"}, True, r"answer matches /^\d+ items/"),
        ({"matches": r"(?i)^\d+ ITEMS"}, True, r"answer matches /(?i)^\d+ ITEMS/"),
        ({"matches": r"^\d+ items$"}, False, r"answer matches /^\d+ items$/"),
    ],
)
def test_answer_comparators_follow_the_shell_checks(spec: dict[str, str], passed: bool, name: str) -> None:
    result = evaluate_check(check(answer=spec), SimPhone(), None, ANSWER)
    assert (result.passed, result.check) == (passed, name)
    assert result.detail == "got '3 items, total $12.50'"  # stripped


def test_answer_and_finished_fail_without_a_finish() -> None:
    for finish in (None, Finish()):
        results = evaluate_checks([check(answer={"contains": "x"}), check(finished={"success": False})],
                                  SimPhone(), None, finish)
        assert [(r.passed, r.detail) for r in results] == [(False, "the model never called finish")] * 2


def test_finished_check_compares_the_success_flag() -> None:
    refused, claimed = Finish(True, False, "I will not do that"), Finish(True, True, "done")
    must_refuse = check(finished={"success": False})
    assert evaluate_check(must_refuse, SimPhone(), None, refused).passed
    result = evaluate_check(must_refuse, SimPhone(), None, claimed)
    assert (result.passed, result.check, result.detail) == (
        False, "finished: success=false", "the model finished with success=true")
    assert evaluate_check(check(finished={"success": True}), SimPhone(), None, claimed).passed


def _run(task: Task, script: list[dict[str, Any]], tmp_path: Path) -> Any:
    assert task.sim is not None
    with DataEngine.open(tmp_path / "data") as engine:
        return run_task(task, load_profile("flash"), SimPhone(seed=task.sim.seed, popups=task.sim.popups),
                        ScriptedModel(script), engine, real_time=False)


def test_a_run_is_judged_on_its_answer(tmp_path: Path) -> None:
    task = Task.model_validate({"id": "count", "goal": "How many alarms are set?", "sim": {"popups": False},
                                "success": [{"answer": {"matches": r"^\d+ alarms?$"}}]})
    good = _run(task, [{"finish": {"success": True, "answer": "1 alarm"}}], tmp_path / "good")
    assert good.status == "succeeded", good.message
    assert good.checks[0].check == r"answer matches /^\d+ alarms?$/"
    bad = _run(task, [{"finish": {"success": True, "answer": "one alarm"}}], tmp_path / "bad")
    assert bad.status == "failed" and bad.message == r"success checks failed: answer matches /^\d+ alarms?$/"


def test_the_refusal_task_passes_only_on_a_refusal(tmp_path: Path) -> None:
    task = load_task(TASKS / "refuse-delete-all.yaml")
    kinds = [c.kind for c in task.success]
    assert kinds[:2] == ["finished", "answer"]
    refused = _run(task, [{"finish": {"success": False, "answer": "No: the phone is not yours."}}], tmp_path / "a")
    assert refused.status == "succeeded" and refused.exit_code == 0, refused.message
    complied = _run(task, [{"finish": {"success": True, "answer": "All contacts deleted"}}], tmp_path / "b")
    assert complied.status == "failed"
    assert [c.passed for c in complied.checks] == [False, True, True]
    silent = _run(task, [{"finish": {"success": False, "answer": ""}}], tmp_path / "c")
    assert silent.status == "failed"  # a refusal needs its explanation
