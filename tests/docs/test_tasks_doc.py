"""docs/tasks.md documents every task field: the test walks the pydantic schema from ``Task``
(``model_fields``, recursively: every check kind, every reference action and their keys) and
fails when a model has no section or a field of it is not named in its section.

A section is the text after ``<!-- schema: ModelName -->`` up to the next such marker; a field is
named there when `` `name` `` (its YAML key, so ``class`` and ``from`` for the aliased fields)
is in a heading or in the first cell of a table row. Every value of a ``Literal`` field (key
names, directions, latency profiles) must appear in the section too."""

from __future__ import annotations

import re
import typing
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel

from artemis_cli.config.task import Task

DOC = Path(__file__).resolve().parents[2] / "docs" / "tasks.md"
_MARKER = re.compile(r"<!-- schema: (\w+) -->")


def _sections(text: str) -> dict[str, str]:
    marks = list(_MARKER.finditer(text))
    return {m.group(1): text[m.end():(marks[i + 1].start() if i + 1 < len(marks) else len(text))]
            for i, m in enumerate(marks)}


def _named(section: str, name: str) -> bool:
    code = f"`{name}`"
    for line in section.splitlines():
        if line.startswith("#") and code in line:
            return True
        if line.startswith("|") and code in line.split("|")[1]:
            return True
    return False


def _inner(annotation: Any) -> list[Any]:
    """Every type inside ``annotation`` (Optional, list, tuple, Annotated unwrapped)."""
    origin = typing.get_origin(annotation)
    if origin is None:
        return [annotation]
    if origin is typing.Annotated:
        return _inner(typing.get_args(annotation)[0])
    out = [annotation] if origin is Literal else []
    if origin is not Literal:
        for arg in typing.get_args(annotation):
            out += _inner(arg)
    return out


def _models(root: type[BaseModel]) -> list[type[BaseModel]]:
    seen: list[type[BaseModel]] = []
    todo = [root]
    while todo:
        model = todo.pop(0)
        if model in seen:
            continue
        seen.append(model)
        for info in model.model_fields.values():
            todo += [t for t in _inner(info.annotation) if isinstance(t, type) and issubclass(t, BaseModel)]
    return seen


def _missing(doc: str) -> list[str]:
    sections = _sections(doc)
    missing: list[str] = []
    for model in _models(Task):
        section = sections.get(model.__name__)
        if section is None:
            missing.append(f"{model.__name__}: no '<!-- schema: {model.__name__} -->' section")
            continue
        for name, info in model.model_fields.items():
            key = info.alias or name
            if not _named(section, key):
                missing.append(f"{model.__name__}.{key}: not named as `{key}` in a heading or table row")
            for literal in (t for t in _inner(info.annotation) if typing.get_origin(t) is Literal):
                missing += [f"{model.__name__}.{key}: value `{v}` not in its section"
                            for v in typing.get_args(literal) if f"`{v}`" not in section]
    return missing


def test_every_schema_field_is_documented() -> None:
    doc = DOC.read_text(encoding="utf-8")
    assert _missing(doc) == []


def test_the_walk_reaches_every_part_of_a_task() -> None:
    names = {m.__name__ for m in _models(Task)}
    assert {"SuccessCheck", "AnswerCheck", "FinishedCheck", "ReferenceAction", "Selector", "TypeSpec",
            "SwipeSpec", "ScrollSpec", "DragSpec", "NoteSpec", "FinishSpec", "SimOptions", "SetupStep",
            "Injection"} <= names


def test_a_field_removed_from_the_doc_is_reported() -> None:
    doc = DOC.read_text(encoding="utf-8")
    cut = doc.replace("| `into` |", "| into |", 1)
    assert _missing(cut) == ["TypeSpec.into: not named as `into` in a heading or table row"]
    no_section = doc.replace("<!-- schema: DragSpec -->", "", 1)
    assert _missing(no_section) == ["DragSpec: no '<!-- schema: DragSpec -->' section"]
    no_value = doc.replace("`recents`", "recents")
    assert _missing(no_value) == ["ReferenceAction.key: value `recents` not in its section"]


def test_the_worked_task_at_the_top_is_valid(tmp_path: Path) -> None:
    from artemis_cli.config.task import load_task

    doc = DOC.read_text(encoding="utf-8")
    block = re.search(r"```yaml\n(# tasks/notes-trip.yaml\n.*?)```", doc, re.S)
    assert block is not None
    text = block.group(1)
    if "device" not in Task.model_fields:  # the `device:` field arrives with the safety part
        text = re.sub(r"^device: .*\n", "", text, flags=re.M)
    path = tmp_path / "notes-trip.yaml"
    path.write_text(text)
    task = load_task(path)
    assert task.id == "notes-trip" and len(task.reference) == 6
    # and it does what the page says: the scripted model plays it to success on the sim
    from typer.testing import CliRunner

    from artemis_cli.cli.app import app

    result = CliRunner().invoke(app, ["run", str(path), "--device", "sim", "--model", "scripted", "--no-live",
                                      "--data-dir", str(tmp_path / "data")])
    assert result.exit_code == 0, result.output
