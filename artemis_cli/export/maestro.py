"""Maestro flow export: a recorded run as ``appId`` + a list of Maestro commands that replays it.

Layout of the flow::

    appId: com.artemis.shop
    ---
    # setup (task shop-office-order): run before the recorded steps
    # setup: am force-stop com.artemis.shop
    - stopApp: com.artemis.shop
    # step 1: launch com.artemis.shop
    - launchApp: {appId: com.artemis.shop, stopApp: false}
    # step 4: tap Button "Add to cart" ("Add USB-C Cable to cart") (id add_to_cart) @(867,814)
    - tapOn: {text: Add USB-C Cable to cart}

**Setup.**  The task's ``setup:`` shell commands run before the recorded run started.  Maestro has
no shell command, so only those with a faithful Maestro command are translated (``am force-stop
P`` -> ``stopApp: P``, ``pm clear P`` -> ``clearState: P``); every other line is written as a
comment with the exact ``adb shell …`` line to run before the flow.  A task that names its app
had it launched by the runner before step 1: that is a ``launchApp``.

**Steps.**  Every recorded step gets a ``# step N: …`` comment (its ledger phrase), then its
commands: ``launch_app`` -> ``launchApp`` (``stopApp: false``: the agent's launch brings the app to
the front, it does not restart it); ``tap`` -> ``tapOn`` and ``long_press`` -> ``longPressOn`` with
a selector chosen on the step's recorded pre-step screen (:mod:`.maestro_select`: resource-id,
content-desc, text, id + text, then one of those with ``index``, each kept only when it finds the
recorded element alone), else a ``point`` (percentages); ``type_text`` -> ``inputText`` (a field
typed into by index is tapped first; password text -> ``${PASSWORD}`` (a named secret -> ``${SHOP_PASSWORD}``), a Maestro env var: the text
is never stored; a step whose typed-text check sent nothing keeps only its tap); ``press_key`` back -> ``back``,
home/enter/delete/tab/volume_up/volume_down -> ``pressKey``; ``open_url`` -> ``openLink``; ``stop_app`` ->
``stopApp``; ``swipe`` -> ``swipe`` with start/end percentages.  Actions Maestro cannot express
(``finish``, ``wait``, other keys) are comments only.

**Pop-ups.**  A step that dismissed a pop-up (:func:`dismissed_popup`) may find none on replay: its
``tapOn`` is ``optional: true``; a back press that closed one runs only while the pop-up's text
is visible (``runFlow`` with ``when: visible``).
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from artemis_cli.engine.db import DataEngine
from artemis_cli.engine.records import SessionRecord, StepRecord
from artemis_cli.errors import HierarchyParseError
from artemis_cli.export.maestro_select import choose_selector, matches, regex_literal
from artemis_cli.memory.ledger_lines import action_phrase
from artemis_cli.operators.secrets import step_secret
from artemis_cli.operators.tools import MAX_SCROLLS
from artemis_cli.operators.typing import NOTHING_TYPED
from artemis_cli.perception.hierarchy import parse_hierarchy
from artemis_cli.perception.structure import TreeStructure
from artemis_cli.perception.types import Target, UITree
from artemis_cli.perception.windows import Layer, order_windows

__all__ = ["MaestroFlow", "MaestroStep", "dismissed_popup", "export_maestro", "maestro_flow", "setup_commands"]

PASSWORD_VAR = "${PASSWORD}"


def secret_var(step: StepRecord) -> str:
    """The Maestro variable a redacted type_text takes its text from: the secret's name upper-cased
    (``shop_password`` → ``SHOP_PASSWORD``) for a step that typed one of the task's secrets, else
    ``PASSWORD``."""
    name = step_secret(step)
    return re.sub(r"[^A-Za-z0-9]", "_", name).upper() if name else PASSWORD_VAR[2:-1]
_KEYS = {"home": "Home", "enter": "Enter", "delete": "Backspace", "tab": "Tab", "volume_up": "Volume Up",
         "volume_down": "Volume Down"}
#: The scripted model's thought when it dismissed a pop-up: ``[script k/n popup]``.
_POPUP_MARKER = re.compile(r"\[script \d+/\d+ popup\]")
#: Labels of buttons that dismiss a pop-up rather than act in the app.
DISMISS_LABELS = frozenset({"no thanks", "not now", "dismiss", "close", "skip", "maybe later", "later",
                            "no, thanks", "got it", "cancel"})
#: The package of framework resource ids (``android:id/button1``) that apps' own dialogs use.
_FRAMEWORK = "android"
_PACKAGE = r"[A-Za-z][\w]*(?:\.[A-Za-z][\w]*)+"
_FORCE_STOP = re.compile(rf"^\s*am\s+force-stop\s+(?:--user\s+\S+\s+)?({_PACKAGE})\s*$")
_PM_CLEAR = re.compile(rf"^\s*pm\s+clear\s+(?:--user\s+\S+\s+)?({_PACKAGE})\s*$")


@dataclass
class MaestroStep:
    step: int  # the recorded step number; 0 for what ran before step 1 (setup, the task's app)
    action: str
    commands: list[Any] = field(default_factory=list)  # Maestro commands (str or one-key dict)
    comment: str = ""  # why there is no command, or what to know about the commands
    label: str = ""  # the step's ledger phrase, written as "# step N: <label>"
    popup: bool = False  # the step dismissed a pop-up: its command is optional on replay
    setup: list[str] = field(default_factory=list)  # comment lines before the commands (setup)


def _comment(text: str) -> str:
    """One YAML comment line: line breaks become spaces, nothing else changes (an adb line stays
    exact)."""
    return "# " + re.sub(r"[\r\n\u2028\u2029\x85]+", " ", text)


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
            lines += [_comment(line) for line in s.setup]
            if s.label:
                lines.append(_comment(f"step {s.step}: {s.label}"))
            if s.comment:
                lines.append(_comment(s.comment if s.label else f"step {s.step}: {s.comment}"))
            for c in s.commands:
                lines.append(yaml.safe_dump([c], allow_unicode=True, sort_keys=False, width=1000).rstrip())
        return "\n".join(lines) + "\n"


def _pct(x: int | None, y: int | None, size: tuple[int, int]) -> str:
    w, h = size
    return f"{round(100 * (x or 0) / max(1, w))}%,{round(100 * (y or 0) / max(1, h))}%"


def _tree(engine: DataEngine, step: StepRecord, size: tuple[int, int]) -> UITree | None:
    """The screen recorded before the step (its ``ui_xml``), parsed; None when not stored."""
    if not step.ui_xml or not engine.blobs.exists(step.ui_xml):
        return None
    try:
        return parse_hierarchy(engine.blob(step.ui_xml), screen_size=size)
    except HierarchyParseError:
        return None


def _unverified(t: Target) -> dict[str, Any] | None:
    """Without the recorded screen: the element's own id or label, as before (not checked)."""
    if t.resource_id:
        return {"id": regex_literal(t.resource_id)}
    label = t.content_desc or (t.text if " · " not in t.text else "")  # " · " joins borrowed labels
    return {"text": regex_literal(label)} if label else None


def _selector(step: StepRecord, tree: UITree | None, size: tuple[int, int]) -> dict[str, Any]:
    t = Target.from_dict(step.target)
    sel: dict[str, Any] | None = None
    if t.label_source != "none":
        sel = choose_selector(tree, t) if tree is not None else _unverified(t)
    return sel if sel is not None else {"point": _pct(step.x, step.y, size)}


def _package_of(resource_id: str) -> str:
    return resource_id.split(":id/", 1)[0] if ":id/" in resource_id else ""


def dismissed_popup(step: StepRecord, app_id: str) -> bool:
    """Did this tap / back press dismiss a pop-up?  Yes when the scripted model said so (its
    ``[script k/n popup]`` thought), or when the action closed a window (the recorded outcome)
    and either its element belongs to another package than the app (an overlay) or it is a
    dismiss button ("No thanks", "Not now", "Close", …)."""
    if step.action_type not in ("tap", "press_key"):
        return False
    if step.action_type == "press_key" and (step.action_args or {}).get("key") != "back":
        return False
    if _POPUP_MARKER.search(step.thought or ""):
        return True
    outcome = step.outcome or {}
    if not outcome.get("windows_closed") or outcome.get("app_before") != outcome.get("app_after"):
        return False
    if step.action_type == "press_key":
        return True
    t = Target.from_dict(step.target)
    package = _package_of(t.resource_id)
    home = {p for p in (app_id, step.foreground_app) if p}
    label = " ".join((t.text or t.content_desc).split()).casefold()
    # ``android:id/button1`` is the framework's id in the app's own dialog ("Delete this
    # contact?" -> Delete): confirming it is the task's progress, not an overlay's dismissal.
    foreign = bool(package) and package != _FRAMEWORK and package not in home
    return foreign or label in DISMISS_LABELS


def _popup_visible(tree: UITree | None) -> dict[str, Any] | None:
    """A text selector for the topmost app-layer window of ``tree`` (the pop-up), or None."""
    if tree is None:
        return None
    structure = TreeStructure.of(tree)
    wins = [w for w in order_windows(tree, structure) if w.layer == Layer.APP and w.catches_touches]
    if len(wins) < 2:
        return None
    top = wins[-1]
    for i in range(top.root, top.end):
        node = tree.nodes[i]
        for label in (node.text, node.content_desc):
            if label.strip() and structure.visible(i):
                sel = {"text": regex_literal(label)}
                found = matches(tree, sel)
                if len(found) == 1 and top.root <= found[0] < top.end:
                    return sel
    return None


def _step(engine: DataEngine, step: StepRecord, size: tuple[int, int], app_id: str) -> MaestroStep:
    a = step.action_args or {}
    t = step.action_type
    out = MaestroStep(step.number, t, label=" ".join(action_phrase(step).split()))
    out.popup = dismissed_popup(step, app_id)
    if t == "launch_app":
        out.commands.append({"launchApp": {"appId": a.get("package") or a.get("app"), "stopApp": False}})
    elif t == "open_url":
        out.commands.append({"openLink": str(a.get("url", ""))})
    elif t == "stop_app":
        out.commands.append({"stopApp": a.get("package") or a.get("app")})
    elif t in ("tap", "double_tap", "long_press"):
        sel = _selector(step, _tree(engine, step, size), size)
        if out.popup:
            sel = {**sel, "optional": True}
            out.comment = "pop-up dismissal: optional (the pop-up may not show on replay)"
        out.commands.append({{"tap": "tapOn", "double_tap": "doubleTapOn"}.get(t, "longPressOn"): sel})
    elif t == "type_text":
        secret = bool(a.get("redacted") or (step.target or {}).get("password"))
        if "index" in a and step.x is not None:
            out.commands.append({"tapOn": _selector(step, _tree(engine, step, size), size)})
        if step.result_status == "failed" and NOTHING_TYPED in (step.result_detail or ""):
            # the typed-text check sent no text (the field never took focus): typing it in the flow
            # would put it wherever the focus is
            out.comment = f"{NOTHING_TYPED} in the recorded step: no inputText"
            return out
        if a.get("clear"):
            out.commands.append({"eraseText": 200})
        var = secret_var(step) if secret else None
        out.commands.append({"inputText": f"${{{var}}}" if var else str(a.get("text", ""))})
        if a.get("submit"):
            out.commands.append({"pressKey": "Enter"})
        if var:
            name = step_secret(step)
            what = f"secret {name}" if name else "password field"
            out.comment = f"{what}: run with -e {var}=… (${{{var}}})"
    elif t == "press_key":
        key = str(a.get("key", ""))
        if key == "back":
            visible = _popup_visible(_tree(engine, step, size)) if out.popup else None
            if visible is not None:
                out.commands.append({"runFlow": {"when": {"visible": visible}, "commands": ["back"]}})
                out.comment = "pop-up dismissal: only while the pop-up shows"
            else:
                out.commands.append("back")
        elif key in _KEYS:
            out.commands.append({"pressKey": _KEYS[key]})
        else:
            out.comment = f"press_key {key!r} has no Maestro equivalent"
    elif t in ("swipe", "scroll") and step.x is not None and step.x2 is not None:
        swipe = {"swipe": {"start": _pct(step.x, step.y, size), "end": _pct(step.x2, step.y2, size)}}
        if t == "scroll" and a.get("to_end"):  # Maestro's own `scroll` only goes down the screen's middle
            out.commands.append({"repeat": {"times": MAX_SCROLLS, "commands": [swipe]}})
            out.comment = f"scroll to the end: the recorded swipe, {MAX_SCROLLS} times (more does nothing)"
        else:
            out.commands.append(swipe)
    elif t == "drag":
        out.comment = (f"drag has no Maestro equivalent (press and hold at ({step.x},{step.y}), move to "
                       f"({step.x2},{step.y2}), release)")
    elif t == "finish":
        pass  # the label says it all: "finish success=true answer=…"
    else:
        out.comment = f"{t} has no Maestro equivalent"
    return out


def setup_commands(shell: str) -> list[Any]:
    """The Maestro command doing what the setup shell line does, when there is one."""
    if m := _FORCE_STOP.match(shell):
        return [{"stopApp": m.group(1)}]
    if m := _PM_CLEAR.match(shell):
        return [{"clearState": m.group(1)}]
    return []


def _setup(engine: DataEngine, rec: SessionRecord, task: dict[str, Any]) -> list[MaestroStep]:
    """The task's setup (from the session's task; else the ``setup`` events the run recorded),
    one entry per shell line, in order."""
    shells = [str(s.get("shell")) for s in task.get("setup") or [] if isinstance(s, dict) and s.get("shell")]
    if not shells and not task:
        shells = [str(e.payload.get("shell")) for e in engine.events(rec.id, kind="setup") if e.payload.get("shell")]
    out: list[MaestroStep] = []
    for k, shell in enumerate(shells):
        entry = MaestroStep(0, "setup", setup_commands(shell))
        if k == 0:
            name = f" (task {task['id']})" if task.get("id") else ""
            entry.setup.append(f"setup{name}: the recorded run started after these device shell commands")
        if entry.commands:
            entry.setup.append(f"setup: {shell}")
        else:
            entry.setup.append(f"setup: Maestro has no shell command: run this with adb before the flow: "
                               f"adb shell {shlex.quote(shell)}")
        out.append(entry)
    return out


def maestro_flow(engine: DataEngine, session: str) -> MaestroFlow:
    rec: SessionRecord = engine.get_session(session)
    steps = engine.get_steps(rec.id)
    size = (rec.screen_width or 1080, rec.screen_height or 2400)
    task = (rec.config or {}).get("task") or {}
    task_app = task.get("app")
    first_launch = next((s.action_args.get("package") for s in steps if s.action_type == "launch_app"), None)
    first_fg = next((s.foreground_app for s in steps if s.foreground_app and "launcher" not in s.foreground_app), None)
    app_id = task_app or first_launch or first_fg or "com.android.launcher3"
    flow = MaestroFlow(app_id)
    flow.steps += _setup(engine, rec, task)
    if task_app:
        flow.steps.append(MaestroStep(0, "launch", [{"launchApp": {"appId": task_app, "stopApp": False}}],
                                      "the task's app, launched before step 1"))
    flow.steps.extend(_step(engine, s, size, app_id) for s in steps)
    return flow


def export_maestro(engine: DataEngine, session: str, output: Path | str) -> MaestroFlow:
    flow = maestro_flow(engine, session)
    path = Path(output)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(flow.to_yaml(), encoding="utf-8")
    return flow
