"""A bench suite: a folder of task files (``*.yaml``), each with fixed sim options and a reference."""

from __future__ import annotations

from pathlib import Path

from artemis_cli.config.task import Task, load_task
from artemis_cli.errors import UsageError


def load_suite(path: Path, only: list[str] | None = None) -> list[Task]:
    """The suite's tasks sorted by file name; ``only`` keeps those ids (unknown ids are an error)."""
    if path.is_file():
        files = [path]
    elif path.is_dir():
        files = sorted(path.glob("*.yaml")) + sorted(path.glob("*.yml"))
    else:
        raise UsageError(f"no bench suite at {path}", hint="pass a folder of task files, e.g. tasks/bench")
    tasks = [load_task(f) for f in files]
    if not tasks:
        raise UsageError(f"the suite {path} has no task files (*.yaml)")
    if only:
        ids = {t.id for t in tasks}
        missing = [i for i in only if i not in ids]
        if missing:
            raise UsageError(f"no task(s) {', '.join(missing)} in {path}", hint="ids: " + ", ".join(sorted(ids)))
        tasks = [t for t in tasks if t.id in only]
    return tasks
