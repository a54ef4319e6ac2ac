"""Record sessions in-process with the scripted model on the simulated phone (real DataEngine).

Fixtures return functions: ``record_task(engine, "clock-ten-alarms.yaml")`` records a task's
reference solution; ``phone_for("clock-ten-alarms.yaml", world)`` builds a fresh simulated phone
with the task's seed and options (in another world when asked).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from artemis_cli.config.profile import load_profile
from artemis_cli.config.task import Task, load_task
from artemis_cli.engine.db import DataEngine
from artemis_cli.models.registry import reference_script
from artemis_cli.models.scripted import ScriptedModel
from artemis_cli.runner import RunResult, run_task
from artemis_cli.sim.phone import SimPhone

REPO = Path(__file__).resolve().parents[2]


def _task(task: str | Task) -> Task:
    return task if isinstance(task, Task) else load_task(REPO / "tasks" / task)


def _phone(task: str | Task, world: str | None = None) -> SimPhone:
    t = _task(task)
    opts = t.sim.model_dump() if t.sim is not None else {}
    recorded_world = opts.pop("world", "default")
    seed = opts.pop("seed", 0)
    return SimPhone(world=world or recorded_world, seed=seed, **{k: v for k, v in opts.items() if v is not None})


def _record(engine: DataEngine, task: str | Task) -> RunResult:
    t = _task(task)
    result = run_task(t, load_profile("flash"), _phone(t), ScriptedModel(reference_script(t)), engine,
                      real_time=False)
    assert result.success, result.message
    return result


@pytest.fixture(scope="session")
def record_task() -> Callable[[DataEngine, str | Task], RunResult]:
    return _record


@pytest.fixture(scope="session")
def phone_for() -> Callable[..., SimPhone]:
    return _phone
