"""Warnings about a valid task file (``artemis tasks validate``): things that load but will fail at
run time. Warnings never make a file invalid; each is a :class:`ConfigIssue` with file, line and
field path, like an error.

- ``reference[i].type`` with no ``into`` when no earlier reference step will have focused a text
  field: the step types into nothing and the run stops with "no text field is focused". A tap,
  double tap or long press may focus the field it touches, and a ``type`` leaves its field
  focused; ``wait``, ``note`` and ``key: delete`` keep the focus as it was; every other action
  (``launch``, a swipe or scroll, another key, …) is taken to leave nothing focused.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from artemis_cli.config.issues import ConfigIssue
from artemis_cli.config.task import ReferenceAction, Task
from artemis_cli.config.yaml_source import FieldPath

__all__ = ["task_warnings", "unfocused_type_steps"]

#: Actions that may leave a text field focused (the field they touched).
_FOCUSING = frozenset({"tap", "double_tap", "long_press", "type"})
#: Actions that leave the focus as it was.
_NEUTRAL = frozenset({"wait", "note"})

UNFOCUSED_TYPE = ("no text field will be focused here (no earlier reference step taps one): add "
                  "'into: {id: …}' to name the field, or the run stops with \"no text field is focused\"")


def unfocused_type_steps(reference: list[ReferenceAction]) -> list[int]:
    """Indices of ``type`` steps without ``into`` that no earlier step leaves a field focused for."""
    found: list[int] = []
    focused = False
    for index, action in enumerate(reference):
        kind = action.kind
        if kind == "type" and action.type is not None and action.type.into is None and not focused:
            found.append(index)
        if kind in _FOCUSING:
            focused = True
        elif kind in _NEUTRAL or (kind == "key" and action.key == "delete"):
            pass
        else:
            focused = False
    return found


def task_warnings(task: Task, path: Path | None = None) -> list[ConfigIssue]:
    """Every warning for ``task`` (loaded from ``path``, default its source file), in file order."""
    steps = unfocused_type_steps(task.reference)
    if not steps:
        return []  # the file is read again for line numbers only when there is something to say
    source = path if path is not None else task.source_path
    lines = _line_finder(source)
    return [ConfigIssue(str(source or "command line"), lines(("reference", i, "type")),
                        f"reference[{i}].type", UNFOCUSED_TYPE)
            for i in steps]


def _line_finder(source: Path | None) -> Callable[[FieldPath], int | None]:
    """``path -> line`` in the task's YAML (None without a file, or when it cannot be read)."""
    from artemis_cli.config.yaml_source import load_yaml_file
    from artemis_cli.errors import ConfigError

    if source is None:
        return lambda _path: None
    try:
        doc = load_yaml_file(source)
    except ConfigError:
        return lambda _path: None
    return doc.line_of
