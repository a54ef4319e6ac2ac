"""Discovery of ``artemis test`` cases from PATH arguments.

A PATH is a folder (its task files, recursively, as ``tasks validate`` finds them:
``config.task_files``), a task file, a session bundle (``sessions export --format bundle``), or
the id (or unique prefix) of a session recorded in the data dir. Task cases run as ``artemis run``
would; session cases are replayed with healing on. Every task file is loaded and every session
looked up here, before anything runs. An invalid task file becomes a case that fails with the
config loader's error (file:line: field: message) while the others run; with ``strict`` it is a
usage error before anything runs. A PATH that is nothing at all is always a usage error."""

from __future__ import annotations

import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from artemis_cli.errors import UsageError


@dataclass(frozen=True)
class Case:
    key: str  # unique: the task id, or "<task id>@<session>" (suffixed when two paths give the same)
    task_id: str  # the JUnit testcase name
    task_file: str  # absolute path ("" for a session case)
    source: str  # the PATH argument it came from (the JUnit classname)
    session: str = ""  # session case: the recorded session to replay (in the user's data dir)
    bundle: str = ""  # session case from a bundle file: imported into the data dir first
    invalid: str = ""  # a task file that does not load: its error, the case's failure (it never runs)
    profile: str = ""  # a task case: the task's own profile (``--profile`` overrides it)

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


def discover(paths: list[str], data_dir: Path | None = None, *, strict: bool = False) -> list[Case]:
    from artemis_cli.config.task import load_task
    from artemis_cli.config.task_files import task_files_in
    from artemis_cli.errors import ConfigError

    if not paths:
        raise UsageError("give at least one PATH (a folder, task files, session ids or bundles)",
                         hint="artemis test tasks/")
    cases: list[Case] = []
    seen: set[str] = set()
    for arg in paths:
        p = Path(arg)
        if p.is_dir():
            files = task_files_in(p)
            if not files:
                raise UsageError(f"{arg}: no task files (*.yaml, *.yml) in this folder",
                                 hint="give a folder of task files, task files, session ids or bundles")
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
            try:
                task = load_task(f)  # a ConfigError names file/line/field
            except ConfigError as exc:
                if strict:
                    raise
                cases.append(Case(key=_unique(f.stem, seen), task_id=f.stem, task_file=str(f.resolve()),
                                  source=arg, invalid=str(exc)))
                continue
            cases.append(Case(key=_unique(task.id, seen), task_id=task.id, task_file=str(f.resolve()), source=arg,
                              profile=task.profile))
    return cases


def _session_case(arg: str, data_dir: Path | None, seen: set[str]) -> Case:
    from artemis_cli.engine.db import DataEngine
    from artemis_cli.engine.errors import NoArtemisData
    from artemis_cli.errors import SessionNotFound

    looks_like_path = "/" in arg or arg.endswith((".yaml", ".yml", ".artemis", ".zip"))
    if looks_like_path or data_dir is None:
        raise UsageError(f"{arg}: no such task file, folder or bundle",
                         hint="give a folder of task files, task files, session ids or bundles")
    try:
        with DataEngine.open_for_reading(data_dir) as engine:
            rec = engine.get_session(arg)
    except (SessionNotFound, NoArtemisData) as exc:
        raise UsageError(f"{arg}: not a task file, folder or bundle, nor a recorded session ({exc})",
                         hint="artemis sessions list shows the recorded sessions") from None
    name = rec.task_id or rec.id
    return Case(key=_unique(f"{name}@{rec.id}", seen), task_id=name, task_file="", source=arg, session=rec.id)


@dataclass(frozen=True)
class SuiteModels:
    """Which model the suite's task cases run on and its session cases heal with, and why."""

    tasks: dict[str, str]  # model name -> why it was chosen (one entry unless the tasks' profiles differ)
    healing: dict[str, str]  # the same for session cases ({} without any)

    def to_dict(self) -> dict[str, Any]:
        def one(chosen: dict[str, str]) -> dict[str, str] | None:
            return {"name": ", ".join(chosen), "why": "; ".join(dict.fromkeys(chosen.values()))} if chosen else None

        return {**(one(self.tasks) or {"name": None, "why": None}), "healing": one(self.healing)}

    def lines(self) -> list[str]:
        """What ``artemis test`` says on stderr before the first case starts."""
        data = self.to_dict()
        out = [f"model {data['name']} ({data['why']})"] if self.tasks else []
        if data["healing"]:
            out.append(f"session cases heal with {data['healing']['name']} ({data['healing']['why']})")
        return out


def suite_models(cases: list[Case], model: str | None, profile: str | None) -> SuiteModels:
    """The models of a suite, chosen as ``artemis run`` and ``replay --heal`` choose them
    (``models.registry.model_choice``). Without ``--model`` a task case that would run on the
    heuristic baseline (no API key) refuses the suite: its failures would read as broken tests."""
    from artemis_cli.config.profile import load_profile
    from artemis_cli.models.registry import NO_KEY_REASON, model_choice
    from artemis_cli.replay.heal import healing_choice

    tasks: dict[str, str] = {}
    healing: dict[str, str] = {}
    for c in cases:
        if c.invalid:
            continue
        if c.kind == "task":
            name, why = model_choice(model, load_profile(profile or c.profile or "flash"))
            tasks.setdefault(name, why)
        else:
            name, why, _ = healing_choice(model, load_profile(profile or "flash"))
            healing.setdefault(name, why)
    if model is None and "heuristic" in tasks:
        raise UsageError(f"{NO_KEY_REASON}: the task cases would run on the offline heuristic baseline (not an "
                         "LLM), whose failures read as broken tests",
                         hint="set GEMINI_API_KEY, or pass --model (scripted plays each task's reference; "
                              "--model heuristic runs the baseline on purpose)")
    if "heuristic" in tasks:
        tasks["heuristic"] += ": the offline baseline, not an LLM"
    return SuiteModels(tasks, healing)
