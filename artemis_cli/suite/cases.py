"""Discovery of ``artemis test`` cases from PATH arguments.

A PATH is a folder (its ``*.yaml`` tasks, not recursing; ``tasks/bench`` only when named
itself), a task file, a session bundle (``sessions export --format bundle``), or the id (or
unique prefix) of a session recorded in the data dir. Task cases run as ``artemis run`` would;
session cases are replayed with healing on. Every task file is loaded and every session looked up
here, before anything runs, so a broken one is a one-line error naming the file/line/field (the
config loader's own error) or the session."""

from __future__ import annotations

import zipfile
from dataclasses import dataclass
from pathlib import Path

from artemis_cli.errors import UsageError


@dataclass(frozen=True)
class Case:
    key: str  # unique: the task id, or "<task id>@<session>" (suffixed when two paths give the same)
    task_id: str  # the JUnit testcase name
    task_file: str  # absolute path ("" for a session case)
    source: str  # the PATH argument it came from (the JUnit classname)
    session: str = ""  # session case: the recorded session to replay (in the user's data dir)
    bundle: str = ""  # session case from a bundle file: imported into the data dir first

    @property
    def kind(self) -> str:
        return "session" if self.session or self.bundle else "task"


def _unique(key: str, seen: set[str]) -> str:
    out, n = key, 1
    while out in seen:
        n += 1
        out = f"{key}#{n}"
    seen.add(out)
    return out


def _is_bundle(p: Path) -> bool:
    return p.suffix.lower() not in (".yaml", ".yml") and zipfile.is_zipfile(p)


def discover(paths: list[str], data_dir: Path | None = None) -> list[Case]:
    from artemis_cli.config.task import load_task

    if not paths:
        raise UsageError("give at least one PATH (a folder, task files, session ids or bundles)",
                         hint="artemis test tasks/")
    cases: list[Case] = []
    seen: set[str] = set()
    for arg in paths:
        p = Path(arg)
        if p.is_dir():
            files = sorted(f for f in p.glob("*.yaml") if f.is_file())
            if not files:
                raise UsageError(f"{arg}: no *.yaml task files in this folder")
        elif p.is_file() and _is_bundle(p):
            cases.append(Case(key=_unique(f"bundle:{p.stem}", seen), task_id=p.stem, task_file="", source=arg,
                              bundle=str(p.resolve())))
            continue
        elif p.is_file():
            files = [p]
        else:
            cases.append(_session_case(arg, data_dir, seen))
            continue
        for f in files:
            task = load_task(f)  # a ConfigError names file/line/field
            cases.append(Case(key=_unique(task.id, seen), task_id=task.id, task_file=str(f.resolve()), source=arg))
    return cases


def _session_case(arg: str, data_dir: Path | None, seen: set[str]) -> Case:
    from artemis_cli.engine.db import DataEngine
    from artemis_cli.engine.errors import NoArtemisData
    from artemis_cli.errors import SessionNotFound

    looks_like_path = "/" in arg or arg.endswith((".yaml", ".yml", ".artemis", ".zip"))
    if looks_like_path or data_dir is None:
        raise UsageError(f"{arg}: no such task file, folder or bundle")
    try:
        with DataEngine.open_for_reading(data_dir) as engine:
            rec = engine.get_session(arg)
    except (SessionNotFound, NoArtemisData) as exc:
        raise UsageError(f"{arg}: not a task file, folder or bundle, nor a recorded session ({exc})") from None
    name = rec.task_id or rec.id
    return Case(key=_unique(f"{name}@{rec.id}", seen), task_id=name, task_file="", source=arg, session=rec.id)
