"""Band ③ step-ledger lines (SPEC §10.3): the single place that formats one line per step.

Formats (pinned by golden tests in ``tests/memory/test_ledger_lines.py``)::

    - Step 12 (T+03:05): tap Switch "Wi-Fi" (id wifi_switch) @(962,348) -> ok
    - Step 13 (T+03:09): swipe up 900px from @(540,1600) -> ok
    - Step 14 (T+03:20): type "[redacted]" into EditText "Password" (id password) @(540,900) -> ok
    - Step 15 (T+03:31): tap @(10,10) -> error: DeviceError: tap failed
    - Step 16 (T+03:40): finish success=true answer="3 alarms" -> finished
    User @ Step 16: "Also turn on Bluetooth"

When the model said what it expected (the action's ``intent``), it follows the action, quoted
and cut like screen text, so the expectation sits beside what was seen::

    - Step 17 (T+03:52): tap Button "Save" (id save) @(540,1800) (intent "saves the note") -> ok

Pro steps carry the validator's verdict after the result (SPEC §10.2: the Controller/Validator
result is on every line); failure-analyzer recovery actions are indented sub-lines with the same
element semantics as the step line::

    - Step 7 (T+01:02): tap Button "Save" (id save) @(540,1800) -> ok; validator: progress "the note list shows \"Chore 2\""
    - Step 8 (T+01:09): tap @(10,10) -> no visible change; validator: no_effect "nothing changed"
      - recovery: press back -> ok
      - recovery: tap TextView "Notes" (id title) @(120,220) -> ok

With a recorded action outcome (SPEC §15) the result says what was seen::

    - Step 3 (T+00:12): tap Switch "OFF" (id wifi_switch) @(962,348) -> ok, Switch (id wifi_switch) now ON
    - Step 4 (T+00:15): swipe up 900px from @(540,1600) -> no visible change
    - Step 5 (T+00:21): type "+1 555-0177" into EditText "+1 555-0102" (id phone) @(540,900) (clear) -> failed: text did not land: the field shows "+"

The element is named by its text, else its content-desc, else only its class and id. When its
text repeats on the screen the step was taken on (another element shows the same text), the
content-desc that tells it apart follows (``text_repeats``: the record's own fact when the target
has one, else the element list of the stored observation — a pure function of the stored step)::

    - Step 4 (T+00:20): tap Button "Add to cart" ("Add USB-C Cable to cart") (id add_to_cart) @(867,814) -> ok

Every string that comes from the device or the model is JSON-quoted (``ensure_ascii=False``) or
has its whitespace collapsed, so it can never break a line. Typed text is shown as recorded: the
DataEngine already redacted password fields, and this module redacts again whenever the record
says the field is a password (it never un-redacts).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Sequence
from dataclasses import replace
from typing import Any

from artemis_cli.engine.clock import format_offset
from artemis_cli.engine.records import REDACTED, StepRecord
from artemis_cli.perception.bytecache import cost_of, memoize
from artemis_cli.perception.elements import MAX_LABEL_CHARS, ParsedElement, parse_element_lines
from artemis_cli.perception.quoting import MAX_QUOTED_CHARS, quote_untrusted
from artemis_cli.perception.structure import LABEL_JOIN
from artemis_cli.perception.types import Target

#: Bytes one parsed element line holds (the dataclass, its strings and tuples), an upper bound
#: measured with tracemalloc over sim screens (``tests/memory/test_ledger_element_names.py``).
PARSED_ELEMENT_BYTES = 1_200

__all__ = [
    "MAX_DETAIL_CHARS",
    "MAX_QUOTED_CHARS",
    "action_phrase",
    "describe_target",
    "intent_phrase",
    "ledger_line",
    "ledger_lines",
    "outcome_phrase",
    "quote",
    "recovery_line",
    "result_phrase",
    "step_header",
    "text_repeats",
    "user_line",
    "user_lines",
    "verdict_phrase",
]

MAX_DETAIL_CHARS = 160
_WS = re.compile(r"\s+")


quote = quote_untrusted  # device text in ledger lines: JSON-quoted, one line, no fence


def _flat(text: str, limit: int = MAX_DETAIL_CHARS) -> str:
    text = _WS.sub(" ", text).strip()
    return text if len(text) <= limit else text[:limit] + "…"


def _needs_desc(t: Target) -> bool:
    """The element has its own text and a content-desc that says something else: the desc can
    tell it apart from other elements with the same text."""
    return bool(t.text and t.content_desc and t.text != t.content_desc and LABEL_JOIN not in t.text
                and t.label_source != "none")


def _cut(text: str, limit: int = MAX_QUOTED_CHARS) -> str:
    return text if len(text) <= limit else text[:limit] + "…"


def text_repeats(target: dict[str, Any] | None, screen: Sequence[ParsedElement] | None) -> bool:
    """Does another element of the step's screen show the same text as the target, so that its
    text alone does not say which one it was?

    The record-time fact ``target["text_repeats"]`` wins when the target has it; else the
    element list the model was shown before the step (``screen``, parsed from the stored
    observation) is searched for an element with the target's text and another content-desc.
    A pure function of the stored step: the same record always gives the same answer."""
    if not target:
        return False
    if "text_repeats" in target:
        return bool(target["text_repeats"])
    t = Target.from_dict(target)
    if not screen or not _needs_desc(t):
        return False
    # element lists cut labels to 80 characters before issue 22, to MAX_LABEL_CHARS since
    labels = {_cut(t.text), _cut(t.text, MAX_LABEL_CHARS)}
    descs = {_cut(t.content_desc), _cut(t.content_desc, MAX_LABEL_CHARS)}
    return any(el.label in labels and el.desc not in descs for el in screen)


def describe_target(target: dict[str, Any] | None, repeats: bool = False) -> str:
    """``Switch "Wi-Fi" (id wifi_switch)``; "" when the action had no element under it.

    The element is named by its text, else its content-desc (else only its class and id). When
    its text ``repeats`` on the screen, the content-desc that tells it apart follows the text:
    ``Button "Add to cart" ("Add USB-C Cable to cart") (id add_to_cart)``."""
    if not target or target.get("label_source", "none") == "none":
        return ""
    t = Target.from_dict(target)
    phrase = t.describe(limit=MAX_QUOTED_CHARS)
    if not (repeats and _needs_desc(t)):
        return phrase
    head = replace(t, resource_id="").describe(limit=MAX_QUOTED_CHARS)  # class and text
    return f"{head} ({quote(t.content_desc)}){phrase[len(head):]}"


def _point(x: int | None, y: int | None) -> str:
    return f"@({x},{y})" if x is not None and y is not None else ""


def _at(target: dict[str, Any] | None, x: int | None, y: int | None,
        screen: Sequence[ParsedElement] | None = None) -> str:
    """``Switch "Wi-Fi" (id wifi_switch) @(962,348)``, ``@(10,10)`` or ``element`` fallbacks."""
    described = describe_target(target, text_repeats(target, screen))
    return " ".join(bit for bit in (described, _point(x, y)) if bit)


def _screen(step: StepRecord) -> Sequence[ParsedElement] | None:
    """The element list shown to the model before the step (from the stored observation), parsed
    only when a target could need it."""
    undecided = [t for t in (step.target, step.target_end) if t and "text_repeats" not in t]
    if not any(_needs_desc(Target.from_dict(t)) for t in undecided):
        return None
    observation = (step.meta or {}).get("observation")
    return _parsed_screen(observation) if isinstance(observation, str) and observation else None


#: A step's phrase is made when the step is indexed for recall and again when its chunk is
#: built and rendered: the one observation's element list parsed once for all of them. Bound:
#: 512 KB (~25 sim screens: an observation of a few KB and ~15 parsed elements of ~550-700 B each).
@memoize("memory.parsed_screens", 512 * 1024,
         lambda args, parsed: cost_of(args) + PARSED_ELEMENT_BYTES * len(parsed))
def _parsed_screen(observation: str) -> tuple[ParsedElement, ...]:
    return tuple(parse_element_lines(observation))


def _swipe_phrase(direction: Any, x: int | None, y: int | None, x2: int | None, y2: int | None) -> str:
    """``swipe up 900px from @(540,1600)``: a finger's stroke, its direction (the finger's, from
    its ends when the call gave none: the longer axis), length and start. The elements under its
    ends are not named: "from TextView … to TextView …" reads like a drag between them."""
    if None in (x, y, x2, y2):
        return f"swipe {_flat(str(direction), 20)}" if direction else "swipe"
    dx, dy = x2 - x, y2 - y  # type: ignore[operator]
    if not direction and (dx or dy):
        direction = ("left" if dx < 0 else "right") if abs(dx) > abs(dy) else ("up" if dy < 0 else "down")
    length = round((dx * dx + dy * dy) ** 0.5)
    head = f"swipe {_flat(str(direction), 20)}" if direction else "swipe"
    return f"{head} {length}px from {_point(x, y)}"


def _typed_text(step: StepRecord) -> str:
    args = step.action_args
    text = args.get("text")
    target = step.target or {}
    if args.get("redacted") or args.get("password") or target.get("password"):
        return REDACTED
    return text if isinstance(text, str) else ""


def action_phrase(step: StepRecord) -> str:
    """What the step did, with the element semantics of its coordinates."""
    kind = step.action_type
    args = step.action_args
    pointed = ("tap", "double_tap", "long_press", "scroll", "drag", "type_text", "type", "input_text")
    screen = _screen(step) if kind in pointed else None
    if kind in ("tap", "double_tap", "long_press"):
        where = _at(step.target, step.x, step.y, screen)
        return f"{kind} {where}" if where else kind
    if kind == "swipe":
        return _swipe_phrase(args.get("direction"), step.x, step.y, step.x2, step.y2)
    if kind == "scroll":  # the content's direction; where the finger went is swipe's business
        phrase = f"scroll {_flat(str(args.get('direction', '')), 20)}"
        if "index" in args:
            inside = _at(step.target, step.x, step.y, screen)
            phrase += f" in {inside}" if inside else ""
        return phrase + (" to the end" if args.get("to_end") else "")
    if kind == "drag":
        start = _at(step.target, step.x, step.y, screen)
        end = _at(step.target_end, step.x2, step.y2, screen)
        return "drag" + (f" {start}" if start else "") + (f" to {end}" if end else "")
    if kind in ("type_text", "type", "input_text"):
        phrase = f"type {quote(_typed_text(step))}"
        where = _at(step.target, step.x, step.y, screen)
        if where:
            phrase += f" into {where}"
        flags = [name for name in ("clear", "submit") if args.get(name)]
        return phrase + (f" ({', '.join(flags)})" if flags else "")
    if kind == "press_key":
        return f"press {_flat(str(args.get('key', '')), 40)}"
    if kind == "launch_app":
        package = args.get("package") or args.get("app") or ""
        app = args.get("app")
        if app and package and app != package:
            return f"launch {quote(str(app))} ({_flat(str(package), MAX_QUOTED_CHARS)})"
        return f"launch {_flat(str(package), MAX_QUOTED_CHARS)}"
    if kind == "open_url":
        return f"open {quote(str(args.get('url', '')))}"
    if kind == "stop_app":
        return f"stop {_flat(str(args.get('package') or args.get('app') or ''), MAX_QUOTED_CHARS)}"
    if kind == "wait":
        return f"wait {args.get('seconds')}s"
    if kind == "finish":
        success = "true" if args.get("success") else "false"
        answer = args.get("answer")
        return f"finish success={success}" + (f" answer={quote(str(answer))}" if answer else "")
    if args:
        return f"{_flat(kind, 40)} {_flat(json.dumps(args, ensure_ascii=False, sort_keys=True))}"
    return _flat(kind, 40)


def outcome_phrase(outcome: dict[str, Any]) -> str:
    """``ok``, ``ok, <what was seen>``, ``no visible change``, ``failed: <why>; <what was seen>``,
    ``error: <detail>``, ``finished`` from an outcome's ``status``, ``detail`` and ``summary``."""
    status = str(outcome.get("status") or "")
    detail = _flat(str(outcome.get("detail") or ""))
    if status == "finished":
        return "finished"
    seen = _flat(str(outcome.get("summary") or ""))
    if status == "ok":
        return f"ok, {seen}" if seen else "ok"
    if status == "no_change":
        head = "no visible change"
        if detail and detail != head:
            head += f": {detail}"
        return f"{head}; {seen}" if seen else head
    head = f"{status}: {detail}" if detail else status
    return f"{head}; {seen}" if seen else head


def result_phrase(step: StepRecord) -> str:
    """What the step's action came to.

    With a recorded outcome (SPEC §15): ``ok``, ``ok, <what was seen>``, ``no visible change``,
    ``failed: <why>; <what was seen>``, ``error: <detail>``, ``finished``; after Pro recovery
    actions, what it came to before them, then ``after recovery: <the outcome measured after
    them>``. Steps recorded before outcomes existed: ``ok``, ``error: <detail>``,
    ``ignored: <detail>``, ``finished``.
    """
    outcome = step.outcome or {}
    phrase = outcome_phrase({"status": step.result_status, "detail": step.result_detail or "",
                             "summary": outcome.get("summary")})
    before = outcome.get("before_recovery")
    if isinstance(before, dict) and step.result_status != "finished":
        return f"{outcome_phrase(before)}; after recovery: {phrase}"
    return phrase


def step_header(number: int, offset_ms: int | None) -> str:
    """``Step 12 (T+03:05)``: how every line that cites a step names it."""
    return f"Step {number} ({format_offset(offset_ms or 0)})"


def verdict_phrase(verdict: dict[str, Any] | None, limit: int | None = MAX_QUOTED_CHARS) -> str:
    """``progress "the switch reads ON"``, ``progress, milestone complete "…"``,
    ``unclear (no verdict)`` for the validator's fallback; "" without a verdict. The reason is
    model text that may quote the screen: it is JSON-quoted (one line, cut to ``limit``)."""
    if not verdict or not verdict.get("verdict"):
        return ""
    word = _flat(str(verdict["verdict"]), 20)
    if verdict.get("fallback"):
        return f"{word} (no verdict)"
    if verdict.get("milestone_complete"):
        word += ", milestone complete"
    reason = _flat(str(verdict.get("reason") or ""), 10_000)
    return f"{word} {quote(reason, limit)}" if reason else word


def intent_phrase(intent: str | None) -> str:
    """`` (intent "opens the Wi-Fi settings")``: what the model expected the action to do, quoted
    (a model may copy device text into it) and cut to MAX_QUOTED_CHARS; "" without one."""
    return f" (intent {quote(intent)})" if intent else ""


def ledger_line(step: StepRecord, *, verdict: bool = True) -> str:
    """``- Step N (T+mm:ss): <action with element semantics>[ (intent "…")] -> <result>[; validator:
    <verdict>]`` (``verdict=False``: without it, for a prompt that shows the verdict on a line of
    its own)."""
    line = (f"- {step_header(step.number, step.offset_ms)}: {action_phrase(step)}{intent_phrase(step.intent)}"
            f" -> {result_phrase(step)}")
    judged = verdict_phrase(step.verdict) if verdict else ""
    return f"{line}; validator: {judged}" if judged else line


def recovery_line(payload: dict[str, Any] | str) -> str:
    """One failure-analyzer recovery action (its ``recovery_action`` event payload) as the
    indented sub-line text: ``<action with element semantics> -> <result>``. The payload carries
    the recorded args, the hit-tested ``target`` (and ``target_end``) and the point(s) the action
    was sent to; an older payload with only a ``phrase`` shows the phrase."""
    if isinstance(payload, str):
        return _flat(payload)
    tool = payload.get("tool")
    if "target" in payload and isinstance(tool, str):
        rec = StepRecord(
            session_id="", number=0, action_type=tool, action_args=dict(payload.get("args") or {}),
            x=payload.get("x"), y=payload.get("y"), x2=payload.get("x2"), y2=payload.get("y2"),
            target=payload.get("target"), target_end=payload.get("target_end"),
        )
        text = action_phrase(rec)
    else:
        text = _flat(str(payload.get("phrase") or tool or "recovery"))
    result = payload.get("result")
    return f"{text} -> {_flat(str(result))}" if result else text


def user_line(step_number: int, text: str) -> str:
    """``User @ Step N: "<text verbatim>"`` (JSON-quoted, never cut)."""
    return f"User @ Step {step_number}: {quote(text, limit=None)}"


def user_lines(step: StepRecord) -> list[str]:
    """The user instruction injected at this step, if any, verbatim as one line."""
    return [user_line(step.number, step.user_instruction)] if step.user_instruction else []


def ledger_lines(step: StepRecord, recoveries: Iterable[str] = (), *, verdict: bool = True) -> list[str]:
    """All band ③ lines of a step: the user line (the instruction arrived before the action),
    the step line (``verdict``: with the validator's verdict), then failure-analyzer recovery
    actions as indented sub-lines."""
    lines = [*user_lines(step), ledger_line(step, verdict=verdict)]
    lines += [f"  - recovery: {_flat(text)}" for text in recoveries]  # texts from recovery_line
    return lines
