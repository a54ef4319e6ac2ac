"""The shipped task files (tasks/*.yaml): they load, their ids are unique, the suite has long tasks,
every reference solution really solves its task on the simulated phone, and every task's success
checks fail when nothing is done (so a check cannot pass by accident)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from artemis_cli.config.profile import load_profile
from artemis_cli.config.task import Task, load_task
from artemis_cli.engine.db import DataEngine
from artemis_cli.models.offline.scripted import ScriptedModel
from artemis_cli.models.registry import reference_script
from artemis_cli.runner import RunResult, run_task
from artemis_cli.sim.phone import SimPhone

TASKS_DIR = Path(__file__).resolve().parents[2] / "tasks"
TASK_FILES = sorted(TASKS_DIR.glob("*.yaml"))
LONG_TASK_STEPS = 60
SHOP_PASSWORD = "artemis123"
SIMULATED_APPS = {
    "com.android.settings",
    "com.android.deskclock",
    "com.android.contacts",
    "com.artemis.notes",
    "com.artemis.shop",
}


def _ids(paths: list[Path]) -> list[str]:
    return [p.stem for p in paths]


def _play(task: Task, script: list[dict[str, Any]], data_dir: Path,
          tails: list[str] | None = None) -> RunResult:
    sim = task.sim
    assert sim is not None, f"{task.id}: every shipped task pins its simulated phone (sim: …)"
    # the phone `artemis run` builds for the task: permission prompts and the lock screen included
    phone = SimPhone(world=sim.world, seed=sim.seed, popups=sim.popups, permission_prompts=sim.permission_prompts,
                     locked=sim.locked)
    engine = DataEngine.open(data_dir)
    try:
        result = run_task(
            task, load_profile(task.profile), phone, ScriptedModel(script), engine, real_time=False
        )
        if tails is not None:  # what each step's request told the model about its screen
            tails.extend(str(s.meta.get("observation", "")) for s in engine.get_steps(result.session_id))
        return result
    finally:
        engine.close()


def _apps_touched(task: Task) -> set[str]:
    """Packages the reference works in: launches, the task's ``app`` and ids in success checks."""
    apps = {step.launch for step in task.reference if step.launch}
    if task.app:
        apps.add(task.app)
    for check in task.success:
        apps.update(app for app in SIMULATED_APPS if check.shell and app.rsplit(".", 1)[-1] in check.shell)
        if check.shell and "settings " in check.shell:
            apps.add("com.android.settings")
    return apps


def test_there_are_at_least_ten_task_files() -> None:
    assert len(TASK_FILES) >= 10, [p.name for p in TASK_FILES]


@pytest.mark.parametrize("path", TASK_FILES, ids=_ids(TASK_FILES))
def test_task_file_loads_with_a_pinned_sim_and_a_reference(path: Path) -> None:
    task = load_task(path)
    assert task.reference, f"{path.name}: no reference solution"
    assert task.reference[-1].kind == "finish", f"{path.name}: the reference should end with finish"
    assert task.success, f"{path.name}: no success checks"
    assert task.sim is not None
    assert task.max_steps >= len(task.reference), f"{path.name}: max_steps below the reference length"


def test_task_ids_are_unique() -> None:
    ids = [load_task(p).id for p in TASK_FILES]
    duplicates = sorted({i for i in ids if ids.count(i) > 1})
    assert not duplicates, duplicates


def test_at_least_two_long_tasks() -> None:
    long_tasks = [t.id for t in map(load_task, TASK_FILES) if len(t.reference) >= LONG_TASK_STEPS]
    assert len(long_tasks) >= 2, long_tasks


def test_every_simulated_app_has_a_task() -> None:
    covered: set[str] = set()
    for task in map(load_task, TASK_FILES):
        covered |= _apps_touched(task)
    assert covered >= SIMULATED_APPS, sorted(SIMULATED_APPS - covered)


def test_shop_tasks_keep_the_promotion_popup_on() -> None:
    shop = [t for t in map(load_task, TASK_FILES) if "com.artemis.shop" in _apps_touched(t)]
    assert shop
    assert all(t.sim is not None and t.sim.popups for t in shop), [t.id for t in shop]


@pytest.mark.parametrize("path", sorted(TASKS_DIR.rglob("*.yaml")), ids=lambda p: p.stem)
def test_no_task_file_holds_the_shop_password(path: Path) -> None:
    """The Shop password is the tasks' secret shop_password: the device gets it from
    $ARTEMIS_SECRET_SHOP_PASSWORD, never from a task file (nor its goal, nor its reference)."""
    assert SHOP_PASSWORD not in path.read_text(encoding="utf-8"), f"{path.name} holds the Shop password"


@pytest.mark.parametrize("path", TASK_FILES, ids=_ids(TASK_FILES))
def test_reference_solves_the_task(path: Path, tmp_path: Path) -> None:
    task = load_task(path)
    tails: list[str] = []
    result = _play(task, reference_script(task), tmp_path, tails)
    failed = [f"{c.check}: {c.detail}" for c in result.checks if not c.passed]
    assert result.success, (result.message, failed)
    assert result.exit_code == 0
    assert result.steps <= task.max_steps
    # a solution that never loops is never told it is looping (issue 34 item 5)
    assert [n for n, tail in enumerate(tails, 1) if "closely resembles" in tail] == []


@pytest.mark.parametrize("path", TASK_FILES, ids=_ids(TASK_FILES))
def test_success_checks_fail_when_nothing_is_done(path: Path, tmp_path: Path) -> None:
    task = load_task(path)
    result = _play(task, [{"finish": {"success": True, "answer": "did nothing"}}], tmp_path)
    assert not result.success
    assert result.exit_code == 1
    assert any(not c.passed for c in result.checks)


def test_typed_password_never_reaches_the_data_engine(tmp_path: Path) -> None:
    shop = [
        t
        for t in map(load_task, TASK_FILES)
        if any(s.type is not None and s.type.secret == "shop_password" for s in t.reference)
    ]
    assert shop
    task = min(shop, key=lambda t: len(t.reference))
    assert _play(task, reference_script(task), tmp_path).success
    stored = [p for p in tmp_path.rglob("*") if p.is_file() and SHOP_PASSWORD.encode() in p.read_bytes()]
    assert not stored, stored
