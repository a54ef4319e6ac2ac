"""Maestro flow export: a recorded run as ``appId`` + a list of Maestro commands.

One recorded action becomes one command: ``launch_app`` → ``launchApp``; ``tap`` → ``tapOn``
and ``long_press`` → ``longPressOn`` by ``id`` (a resource-id unique on the recorded screen),
else by ``text`` (the element's own text or content-desc), else by ``point`` (percentages);
``type_text`` → ``inputText`` (typed into the focused field; a typed-into field that was not
focused is tapped first with a ``tapOn``); password text → ``inputText: ${PASSWORD}`` (Maestro
env var; the text is never stored); ``press_key`` back → ``back``, home/enter/delete/tab →
``pressKey``; ``swipe`` → ``swipe`` with start/end percentages. Actions Maestro cannot express
(``finish``, ``wait``, notes, other keys) are written as ``# step N: …`` comments.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from artemis_cli.engine.db import DataEngine
from artemis_cli.engine.records import SessionRecord, StepRecord
from artemis_cli.errors import HierarchyParseError
from artemis_cli.perception.hierarchy import parse_hierarchy
from artemis_cli.perception.types import Target, UITree

PASSWORD_VAR = "${PASSWORD}"
_KEYS = {"home": "Home", "enter": "Enter", "delete": "Backspace", "tab": "Tab"}


@dataclass
class MaestroStep:
    step: int
    action: str
    commands: list[Any] = field(default_factory=list)  # Maestro commands (str or one-key dict)
    comment: str = ""  # why there is no command


@dataclass
class MaestroFlow:
    app_id: str
    steps: list[MaestroStep] = field(default_factory=list)

    @property
    def commands(self) -> list[Any]:
        return [c for s in self.steps for c in s.commands]

    def to_yaml(self) -> str:
        lines = [yaml.safe_dump({"appId": self.app_id}, allow_unicode=True, sort_keys=False).rstrip(), "---"]
        for s in self.steps:
            if s.comment:
                lines.append(f"# step {s.step}: {s.comment}".replace("\n", " "))
            for c in s.commands:
                lines.append(yaml.safe_dump([c], allow_unicode=True, sort_keys=False, width=1000).rstrip())
        return "\n".join(lines) + "\n"


def _pct(x: int | None, y: int | None, size: tuple[int, int]) -> str:
    w, h = size
    return f"{round(100 * (x or 0) / max(1, w))}%,{round(100 * (y or 0) / max(1, h))}%"


def _tree(engine: DataEngine, step: StepRecord, size: tuple[int, int]) -> UITree | None:
    if not step.ui_xml or not engine.blobs.exists(step.ui_xml):
        return None
    try:
        return parse_hierarchy(engine.blob(step.ui_xml), screen_size=size)
    except HierarchyParseError:
        return None


def _selector(step: StepRecord, tree: UITree | None, size: tuple[int, int]) -> dict[str, Any]:
    t = Target.from_dict(step.target)
    if t.label_source != "none":
        if t.resource_id and tree is not None and sum(1 for n in tree.nodes if n.resource_id == t.resource_id) == 1:
            return {"id": t.resource_id}
        if t.text and " · " not in t.text:  # " · " joins labels borrowed from children
            return {"text": t.text}
        if t.content_desc:
            return {"text": t.content_desc}
        if t.resource_id and tree is None:
            return {"id": t.resource_id}
    return {"point": _pct(step.x, step.y, size)}


def _step(engine: DataEngine, step: StepRecord, size: tuple[int, int]) -> MaestroStep:
    a = step.action_args or {}
    t = step.action_type
    out = MaestroStep(step.number, t)
    if t == "launch_app":
        out.commands.append({"launchApp": {"appId": a.get("package") or a.get("app")}})
    elif t in ("tap", "long_press"):
        out.commands.append({"tapOn" if t == "tap" else "longPressOn": _selector(step, _tree(engine, step, size), size)})
    elif t == "type_text":
        secret = bool(a.get("redacted") or (step.target or {}).get("password"))
        if "index" in a and step.x is not None:
            out.commands.append({"tapOn": _selector(step, _tree(engine, step, size), size)})
        if a.get("clear"):
            out.commands.append({"eraseText": 200})
        out.commands.append({"inputText": PASSWORD_VAR if secret else str(a.get("text", ""))})
        if a.get("submit"):
            out.commands.append({"pressKey": "Enter"})
        if secret:
            out.comment = f"password field: run with -e PASSWORD=… ({PASSWORD_VAR})"
    elif t == "press_key":
        key = str(a.get("key", ""))
        if key == "back":
            out.commands.append("back")
        elif key in _KEYS:
            out.commands.append({"pressKey": _KEYS[key]})
        else:
            out.comment = f"press_key {key!r} has no Maestro equivalent"
    elif t == "swipe" and step.x is not None and step.x2 is not None:
        out.commands.append({"swipe": {"start": _pct(step.x, step.y, size), "end": _pct(step.x2, step.y2, size)}})
    elif t == "finish":
        out.comment = f"finish success={a.get('success')} {a.get('answer', '')}".rstrip()
    else:
        out.comment = f"{t} {a} has no Maestro equivalent"
    return out


def maestro_flow(engine: DataEngine, session: str) -> MaestroFlow:
    rec: SessionRecord = engine.get_session(session)
    steps = engine.get_steps(rec.id)
    size = (rec.screen_width or 1080, rec.screen_height or 2400)
    task_app = ((rec.config or {}).get("task") or {}).get("app")
    first_launch = next((s.action_args.get("package") for s in steps if s.action_type == "launch_app"), None)
    first_fg = next((s.foreground_app for s in steps if s.foreground_app and "launcher" not in s.foreground_app), None)
    app_id = task_app or first_launch or first_fg or "com.android.launcher3"
    flow = MaestroFlow(app_id)
    if task_app:
        flow.steps.append(MaestroStep(0, "launch", ["launchApp"], "the task's app, launched before step 1"))
    flow.steps.extend(_step(engine, s, size) for s in steps)
    return flow


def export_maestro(engine: DataEngine, session: str, output: Path | str) -> MaestroFlow:
    flow = maestro_flow(engine, session)
    path = Path(output)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(flow.to_yaml(), encoding="utf-8")
    return flow
