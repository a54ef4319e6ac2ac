"""Which files of a folder are task files: one rule for ``tasks validate``, ``tasks list`` and
``artemis test``.

A folder means every ``*.yaml``/``*.yml`` file under it, recursively (``tasks/`` includes
``tasks/bench/``), in path order, leaving out hidden files and everything under a hidden folder
(``.git/``, ``.github/``, ``.venv/``): those hold CI workflows and tools' settings, not tasks."""

from __future__ import annotations

from pathlib import Path

TASK_SUFFIXES = (".yaml", ".yml")


def task_files_in(folder: Path) -> list[Path]:
    """The task files under ``folder`` (see the module doc), sorted by path."""
    found = []
    for p in folder.rglob("*"):
        hidden = any(part.startswith(".") for part in p.relative_to(folder).parts)
        if p.suffix.lower() in TASK_SUFFIXES and not hidden and p.is_file():
            found.append(p)
    return sorted(found)
