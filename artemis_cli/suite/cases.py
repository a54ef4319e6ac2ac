"""Discovery of ``artemis test`` cases from PATH arguments (folders and task files).

A folder gives its ``*.yaml`` tasks (not recursing; ``tasks/bench`` only when named itself).
Every task file is loaded here, before anything runs, so a broken one is a one-line error with
its file/line/field (the config loader's own error)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from artemis_cli.errors import UsageError


@dataclass(frozen=True)
class Case:
    key: str  # unique: the task id (suffixed when two paths give the same id)
    task_id: str
    task_file: str  # absolute path
    source: str  # the PATH argument it came from (the JUnit classname)


def discover(paths: list[str]) -> list[Case]:
    from artemis_cli.config.task import load_task

    if not paths:
        raise UsageError("give at least one PATH (a folder or task files)", hint="artemis test tasks/")
    cases: list[Case] = []
    seen: set[str] = set()
    for arg in paths:
        p = Path(arg)
        if p.is_dir():
            files = sorted(f for f in p.glob("*.yaml") if f.is_file())
            if not files:
                raise UsageError(f"{arg}: no *.yaml task files in this folder")
        elif p.is_file():
            files = [p]
        else:
            raise UsageError(f"{arg}: no such task file or folder")
        for f in files:
            task = load_task(f)  # a ConfigError names file/line/field
            key, n = task.id, 1
            while key in seen:
                n += 1
                key = f"{task.id}#{n}"
            seen.add(key)
            cases.append(Case(key=key, task_id=task.id, task_file=str(f.resolve()), source=arg))
    return cases
