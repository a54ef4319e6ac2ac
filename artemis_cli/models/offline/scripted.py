"""The scripted model: plays a fixed list of actions (a task's ``reference``, or a test's list).

It is stateless: its position in the script is read back from its own earlier messages
(``[script k/n]`` markers), so a resumed session continues where it stopped. Selectors are
resolved against the element list in the current observation — the same text a real model
reads — so a script exercises exactly the path a model would. A known pop-up ("No thanks",
"Dismiss"...) covering the screen is dismissed without advancing the script; an entry the device
answered ``failed`` (typed text that did not land) is played again, at most ``MAX_REPLAYS`` times.

Reference vocabulary (see ``artemis_cli.config.task``): ``tap``/``long_press`` a selector,
``type`` {text | secret, into?, clear?, submit?}, ``swipe`` direction | {direction, on?} | {from, to},
``key``, ``launch``, ``wait``, ``note`` {key, content}, ``finish`` {success, answer}.
A selector has ``text``, ``text_contains``, ``id``, ``desc``, ``class``, ``nth`` or ``x``/``y``.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from artemis_cli.memory.lens import ACTION_MARKER, AFTER_MARKER, neutralize_verdict_words
from artemis_cli.models.base import FunctionCall, Message, ModelRequest, ModelResponse, Part, Usage
from artemis_cli.models.conversation import ConversationView, view_from_request, view_from_rest
from artemis_cli.models.fakes.gemini_wire import FakeReply
from artemis_cli.perception.elements import ParsedElement, parse_element_lines

MARKER_RE = re.compile(r"\[script (\d+)/(\d+)( popup| retry)?\]")
#: Times one script entry is played again after the device reported it ``failed`` (typed text
#: that did not land, a field that did not take focus).
MAX_REPLAYS = 2
POPUP_DISMISS_LABELS = ("No thanks", "Not now", "Dismiss", "Close", "Skip")
POPUP_TITLES = ("Special offer!",)


class ScriptError(Exception):
    pass


@dataclass(frozen=True)
class ScriptDecision:
    thought: str
    call: FunctionCall


def _norm(s: str) -> str:
    return " ".join(s.casefold().split())


def _matches(el: ParsedElement, sel: dict[str, Any]) -> bool:
    label = el.label or ""
    desc = el.desc or ""
    # A container borrows its children's texts as "A · B": each part counts as its text.
    texts = {_norm(label), *(_norm(p) for p in label.split(" · "))}
    if not label and el.hint:
        texts.add(_norm(el.hint))  # an empty field is named by its hint
    if "text" in sel and sel["text"] is not None and _norm(str(sel["text"])) not in texts:
        return False
    if sel.get("text_contains") and _norm(str(sel["text_contains"])) not in _norm(label + " " + desc):
        return False
    if sel.get("desc") and _norm(str(sel["desc"])) not in {_norm(desc), _norm(label)}:
        return False
    if sel.get("id"):
        want = str(sel["id"]).rsplit("/", 1)[-1]
        if (el.short_id or "") != want:
            return False
    cls = sel.get("class") or sel.get("class_")
    return not (cls and (el.short_class or "") != str(cls).rsplit(".", 1)[-1])


def find_element(elements: list[ParsedElement], selector: dict[str, Any]) -> ParsedElement | None:
    hits = [el for el in elements if _matches(el, selector)]
    nth = int(selector.get("nth") or 0)
    return hits[nth] if len(hits) > nth else None


def _describe(selector: dict[str, Any]) -> str:
    return ", ".join(f"{k}={v!r}" for k, v in selector.items() if v is not None and k != "nth")


def quoted(value: Any) -> str:
    return json.dumps(str(value), ensure_ascii=False)


def selector_phrase(selector: Any) -> str:
    """A reference selector in words: ``the element described "Cart"``, ``the point (540, 900)``."""
    if not isinstance(selector, dict):
        return f"the element with text {quoted(selector)}"
    if selector.get("x") is not None and selector.get("y") is not None:
        return f"the point ({selector['x']}, {selector['y']})"
    parts = []
    for key, words in (("text", "with text"), ("text_contains", "whose text contains"), ("desc", "described"),
                       ("id", "with id")):
        if selector.get(key) is not None:
            parts.append(f"{words} {quoted(selector[key])}")
    cls = selector.get("class") or selector.get("class_")
    what = f"the {str(cls).rsplit('.', 1)[-1]}" if cls else "the element"
    nth = int(selector.get("nth") or 0)
    return what + (f" (match {nth + 1})" if nth else "") + (" " + " and ".join(parts) if parts else "")


#: Reference entries whose value is one word or number: their sentence.
_PLAIN_STEPS = {"key": "press the {} key", "launch": "launch {}", "wait": "wait {} s"}


def step_sentence(kind: str, value: Any) -> str:
    """A reference or plan entry as the sentence a scripted or healing model's thought says:
    ``tap the element described "Cart"``, not ``tap {'desc': 'Cart'}``."""
    if kind in ("tap", "long_press"):
        return f"{kind.replace('_', ' ')} {selector_phrase(value)}"
    if kind == "type" and isinstance(value, dict):
        secret = value.get("secret")
        what = quoted(value["text"]) if "text" in value else (
            f"the secret {secret}" if isinstance(secret, str) else "the password")
        into = f" into {selector_phrase(value['into'])}" if value.get("into") else ""
        return (f"type {what}{into}" + (", clearing it first" if value.get("clear") else "")
                + (", then submit" if value.get("submit") else ""))
    if kind == "swipe":
        if isinstance(value, dict) and "from" in value:
            return f"swipe from {selector_phrase(value['from'])} to {selector_phrase(value.get('to'))}"
        if isinstance(value, dict):
            on = f" on {selector_phrase(value['on'])}" if value.get("on") else ""
            return f"swipe {value.get('direction', '')}{on}".rstrip()
        return f"swipe {value}"
    if kind in _PLAIN_STEPS:
        return _PLAIN_STEPS[kind].format(value)
    if kind == "note" and isinstance(value, dict):
        return f"note {quoted(value.get('key', ''))}: {value.get('content', '')}"
    if kind == "finish" and isinstance(value, dict):
        answer = f", answering {quoted(value['answer'])}" if value.get("answer") else ""
        return f"finish ({'success' if value.get('success') else 'failure'}{answer})"
    return f"{kind} {json.dumps(value, ensure_ascii=False, default=str)}"


def _one_key(action: dict[str, Any]) -> tuple[str, Any]:
    items = [(k, v) for k, v in action.items() if v is not None]
    if len(items) != 1:
        raise ScriptError(f"a reference action must have exactly one key, got {sorted(action)}")
    return items[0]


class ScriptPlayer:
    """Turns (script, conversation view) into the next decision."""

    def __init__(self, script: list[dict[str, Any]]) -> None:
        self.script = [dict(a) for a in script]

    def position(self, view: ConversationView) -> int:
        """Number of script entries already played (0-based index of the next one)."""
        for text in reversed(view.model_texts):
            m = MARKER_RE.search(text)
            if m:
                # "[script k/n]" played entry k; "[script k/n popup]" dismissed a pop-up after k
                return int(m.group(1))
        return 0

    def decide(self, view: ConversationView) -> ScriptDecision:
        n = len(self.script)
        pos = self.position(view)
        retry = self._replay(view, pos)
        if retry:
            pos -= 1  # the entry just played failed: play it again (after any pop-up)
        elements = parse_element_lines(view.observation_text)
        if not retry and pos < n and self._typed_already(pos, elements, view):
            pos += 1  # its text shows in its field after all (a pop-up hid the field from the check)
        if pos >= n:
            return ScriptDecision(
                f"[script {n}/{n}] The script is complete.",
                FunctionCall("finish", {"success": True, "answer": "reference script completed"}),
            )
        kind, value = _one_key(self.script[pos])
        label = f"[script {pos + 1}/{n}{' retry' if retry else ''}]"
        # A modal pop-up swallows taps meant for what is under it (the element list still shows
        # those): dismiss it first unless this script step itself targets the pop-up.
        popup = self._popup_dismiss(elements)
        if popup is not None and not self._targets_popup(value):
            return ScriptDecision(
                f"[script {pos}/{n} popup] A pop-up is in the way; dismissing it.",
                FunctionCall("tap", {"index": popup.index}),
            )
        try:
            call = self._call_for(kind, value, elements, view)
        except ScriptError as exc:
            popup = self._popup_dismiss(elements)
            if popup is not None:
                return ScriptDecision(
                    f"[script {pos}/{n} popup] A pop-up is in the way; dismissing it.",
                    FunctionCall("tap", {"index": popup.index}),
                )
            return ScriptDecision(
                f"{label} Cannot play {kind}: {exc}",
                FunctionCall("finish", {"success": False, "answer": f"script step {pos + 1}: {exc}"}),
            )
        return ScriptDecision(f"{label} {step_sentence(kind, value)}", call)

    @staticmethod
    def _replay(view: ConversationView, pos: int) -> bool:
        """True when entry ``pos`` (1-based) was just played and the device answered ``failed``,
        and it has been played fewer than 1 + MAX_REPLAYS times."""
        if pos < 1 or not any(r.get("status") == "failed" for r in view.last_responses):
            return False
        last = next((m for t in reversed(view.model_texts) if (m := MARKER_RE.search(t))), None)
        if last is None or last.group(3) == " popup" or int(last.group(1)) != pos:
            return False
        plays = sum(1 for t in view.model_texts if (m := MARKER_RE.search(t)) and int(m.group(1)) == pos
                    and m.group(3) != " popup")
        return plays <= MAX_REPLAYS

    def _typed_already(self, pos: int, elements: list[ParsedElement], view: ConversationView) -> bool:
        """True when entry ``pos`` (0-based) is a ``type`` that was played before and its field now
        shows the text: a pop-up that covered the field after typing made the step ``failed``
        (the dump of the active window did not have the field), and typing again would append."""
        kind, value = _one_key(self.script[pos])
        if kind != "type" or not isinstance(value, dict) or not isinstance(value.get("into"), dict):
            return False
        played = any((m := MARKER_RE.search(t)) and int(m.group(1)) == pos + 1 and m.group(3) != " popup"
                     for t in view.model_texts)
        field = find_element(elements, value["into"]) if played else None
        return field is not None and "edit" in field.flags and field.label == str(value.get("text"))

    @staticmethod
    def _targets_popup(value: Any) -> bool:
        sel = value if isinstance(value, dict) else {}
        sel = sel.get("into", sel) if isinstance(sel.get("into"), dict) else sel
        text = str(sel.get("text") or sel.get("text_contains") or "")
        return text in POPUP_DISMISS_LABELS or text in ("View offer",) or "promo" in str(sel.get("id") or "")

    @staticmethod
    def _popup_dismiss(elements: list[ParsedElement]) -> ParsedElement | None:
        labels = {el.label for el in elements}
        if not any(t in labels for t in POPUP_TITLES):
            return None
        for el in elements:
            if el.label in POPUP_DISMISS_LABELS:
                return el
        return None

    def _target(self, selector: Any, elements: list[ParsedElement], view: ConversationView) -> dict[str, Any]:
        if not isinstance(selector, dict):
            selector = {"text": str(selector)}
        if selector.get("x") is not None and selector.get("y") is not None:
            x, y = float(selector["x"]), float(selector["y"])
            size = view.screen_size
            if view.normalized and size:
                x, y = round(x * 1000 / size[0]), round(y * 1000 / size[1])
            return {"x": x, "y": y}
        el = find_element(elements, selector)
        if el is None:
            raise ScriptError(f"no element matches {_describe(selector)}")
        return {"index": el.index}

    def _call_for(
        self, kind: str, value: Any, elements: list[ParsedElement], view: ConversationView
    ) -> FunctionCall:
        if kind in ("tap", "double_tap", "long_press"):
            return FunctionCall(kind, self._target(value, elements, view))
        if kind == "scroll":
            spec = {"direction": value} if isinstance(value, str) else value
            args: dict[str, Any] = {"direction": spec["direction"]}
            if spec.get("on"):
                args.update(self._target(spec["on"], elements, view))
            if spec.get("to_end"):
                args["to_end"] = True
            return FunctionCall("scroll", args)
        if kind == "drag":
            src = self._target(value["from"], elements, view)
            dst = self._target(value["to"], elements, view)
            args = {"index": src["index"]} if "index" in src else {"x1": src["x"], "y1": src["y"]}
            args.update({"to_index": dst["index"]} if "index" in dst else {"x2": dst["x"], "y2": dst["y"]})
            return FunctionCall("drag", args)
        if kind == "type":
            # a secret by its name: the operator types its value (the reference holds none)
            args = {"secret": str(value["secret"])} if value.get("secret") else {"text": str(value["text"])}
            if value.get("into"):
                args.update(self._target(value["into"], elements, view))
            if value.get("clear"):
                args["clear"] = True
            if value.get("submit"):
                args["submit"] = True
            return FunctionCall("type_text", args)
        if kind == "swipe":
            if isinstance(value, str):
                return FunctionCall("swipe", {"direction": value})
            if value.get("direction"):
                args = {"direction": value["direction"]}
                if value.get("on"):
                    args.update(self._target(value["on"], elements, view))
                return FunctionCall("swipe", args)
            (x1, y1), (x2, y2) = value["from"], value["to"]
            return FunctionCall("swipe", {"x1": x1, "y1": y1, "x2": x2, "y2": y2})
        if kind == "key":
            return FunctionCall("press_key", {"key": str(value)})
        if kind == "launch":
            return FunctionCall("launch_app", {"app": str(value)})
        if kind == "open_url":
            return FunctionCall("open_url", {"url": str(value)})
        if kind == "stop":
            return FunctionCall("stop_app", {"package": str(value)})
        if kind == "wait":
            return FunctionCall("wait", {"seconds": float(value)})
        if kind == "note":
            return FunctionCall("save_note", {"key": str(value["key"]), "content": str(value["content"])})
        if kind == "finish":
            value = value or {}
            return FunctionCall(
                "finish", {"success": bool(value.get("success", True)), "answer": str(value.get("answer", ""))}
            )
        raise ScriptError(f"unknown reference action {kind!r}")


class ScriptedModel:
    """Model protocol over a ScriptPlayer; offline and labelled as such."""

    offline = True

    def __init__(self, script: list[dict[str, Any]], *, name: str = "scripted") -> None:
        self.player = ScriptPlayer(script)
        self.name = name
        self.label = "scripted (plays the task's reference solution; offline)"

    def generate(self, request: ModelRequest) -> ModelResponse:
        t0 = time.perf_counter()
        decision = self.player.decide(view_from_request(request))
        message = Message("model", [Part(text=decision.thought), Part(function_call=decision.call)])
        return ModelResponse(message, Usage(), self.name, (time.perf_counter() - t0) * 1000)


class GoalScriptedModel:
    """One offline model per goal: the request whose ``# TASK`` names a goal (``Goal: …``) is
    answered by that goal's model. The Python API's AI steps each start their own transcript, so a
    program of several ``phone.act`` calls needs one script per goal. ``make`` builds each goal's
    model from its script (``ScriptedModel``; ``models.offline.healer.HealerModel`` follows it loosely)."""

    offline = True

    def __init__(self, scripts: dict[str, list[dict[str, Any]]],
                 make: Callable[[list[dict[str, Any]]], Any] = ScriptedModel) -> None:
        if not scripts:
            raise ValueError("GoalScriptedModel needs at least one goal")
        # the longest goal first: one goal may begin with another
        self.models = {goal: make(script) for goal, script in sorted(scripts.items(), key=lambda kv: -len(kv[0]))}
        first = next(iter(self.models.values()))
        self.name, self.label = first.name, first.label

    def generate(self, request: ModelRequest) -> ModelResponse:
        text = "\n".join(p.text for m in request.messages for p in m.parts if p.text)
        for goal, model in self.models.items():
            if f"Goal: {goal}" in text:
                return model.generate(request)
        raise ScriptError("no script for this request's goal: " + _line_after(text, "Goal: "))


#: ``modelVersion`` of the fake server's stub lens answers: what the session records as the
#: summary's model (never a real model's name — the stub does not look at the screenshot).
STUB_LENS_MODEL = "stub-lens (fake server)"
STUB_CHUNK_LENS_MODEL = "stub-chunk-lens (fake server)"
_STUB_ACTION_CHARS = 300


@dataclass
class StubReply(FakeReply):
    """A fake-server reply labelled as stub text: the server reports ``model_version`` as the
    response's ``modelVersion`` (instead of the requested model's name)."""

    model_version: str | None = STUB_LENS_MODEL


def _clip(text: str, limit: int) -> str:
    """``text`` on one line, cut to ``limit`` characters, its double quotes kept balanced (an
    unbalanced quote would make the verdict-word check read the rest of a line as quoted)."""
    text = " ".join(text.split())
    if len(text) > limit:
        text = text[:limit] + "…"
        if text.count('"') % 2:
            text += '"'
    return text


def _line_after(text: str, marker: str) -> str:
    for line in text.splitlines():
        if line.startswith(marker):
            return line[len(marker):].strip()
    return ""


def describe_request(request: Any) -> str:
    """A neutral, deterministic stub description for a visual-lens request (no tools declared),
    derived from the request: the recorded action (``ACTION TAKEN:``) and its marker, and whether
    an after-screenshot came with it. It says it is stub text: the images are not analysed."""
    text = request.last_user_text() or ""
    action = _clip(_line_after(text, ACTION_MARKER), _STUB_ACTION_CHARS)
    marker = _line_after(text, "Marker:").rstrip(".")
    pieces = ["The screenshot shows an app screen with the action marker drawn on it"]
    if action:
        pieces[0] += f" for the recorded action {action}"
    if marker:
        pieces[0] += f" ({marker})"
    pieces[0] += "."
    pieces.append("An after-screenshot was sent too." if AFTER_MARKER in text else "No after-screenshot was sent.")
    pieces.append("Stub text from the fake server: no image was analysed.")
    return neutralize_verdict_words(" ".join(pieces))


_SEGMENT_RE = re.compile(r"SEGMENT: steps (\d+)[–-](\d+)")
_NOTE_RE = re.compile(r'^- ("(?:[^"\\]|\\.)*") \(step', re.M)


_LEDGER_RE = re.compile(r"^\s*ledger: - Step (\d+) \(T\+[\d:]+\): (.*)$", re.M)


def chunk_lens_reply(request: Any) -> str:
    """A valid chunk-lens answer for the segment in the request: bands ① and ②, neutral, with
    intervals covering the segment exactly and every note named. Stub text derived from the
    request's ledger lines (first and last action of each half), marked as such."""
    text = request.last_user_text() or ""
    m = _SEGMENT_RE.search(text)
    start, end = (int(m.group(1)), int(m.group(2))) if m else (1, 1)
    notes = _NOTE_RE.findall(text)
    actions = {int(n): _clip(a, 120) for n, a in _LEDGER_RE.findall(text)}

    def span(a: int, b: int) -> str:
        first, last = actions.get(a), actions.get(b)
        if first is None:
            return "as in the step ledger"
        return f"from {first}" + (f" to {last}" if b != a and last is not None else "")

    mid = (start + end) // 2
    intervals = (
        [f"Step {start}: {span(start, start)}."]
        if start == end
        else [f"Steps {start}–{mid}: {span(start, mid)}.", f"Steps {mid + 1}–{end}: {span(mid + 1, end)}."]
        if mid >= start and mid < end
        else [f"Steps {start}–{end}: {span(start, end)}."]
    )
    band = {
        "purpose": f"Stub chunk summary from the fake server for steps {start}–{end} ({len(actions)} ledger lines).",
        "done": f"Actions {span(start, end)}.",
        "effects": "Notes written: " + ", ".join(notes) + "." if notes else "No notes written.",
        "entry_state": f"The screen at step {start}.",
        "exit_state": f"The screen after step {end}.",
        "verified_facts": [],
        "unresolved": [],
        "failed_paths": [],
        "entities": [],
        "intervals": intervals,
    }
    band = {k: neutralize_verdict_words(v) if isinstance(v, str) else
            [neutralize_verdict_words(x) for x in v] for k, v in band.items()}
    return json.dumps(band, ensure_ascii=False)


def script_policy(script: list[dict[str, Any]]) -> Callable[[Any], Any]:
    """A FakeGeminiServer policy that plays ``script`` through the real SDK.

    Requests that declare no tools (lens calls) get stub text derived from the request, labelled
    with a ``stub-…`` ``modelVersion`` (:data:`STUB_LENS_MODEL`, :data:`STUB_CHUNK_LENS_MODEL`)
    so that a recorded summary never carries a real model's name.
    """
    player = ScriptPlayer(script)

    def policy(request: Any) -> Any:
        if not request.tools:
            if (request.system or "").startswith("You compress a segment"):
                return StubReply(parts=[{"text": chunk_lens_reply(request)}], model_version=STUB_CHUNK_LENS_MODEL)
            return StubReply(parts=[{"text": describe_request(request)}], model_version=STUB_LENS_MODEL)
        decision = player.decide(view_from_rest(request.contents))
        call = {"name": decision.call.name, "args": decision.call.args}
        return FakeReply(parts=[{"text": decision.thought}, {"functionCall": call}])

    return policy



def goal_policy(scripts: dict[str, list[dict[str, Any]]]) -> Callable[[Any], Any]:
    """A FakeGeminiServer policy that plays ``scripts[goal]`` (:func:`script_policy`) for the
    request whose ``# TASK`` names that goal (``Goal: …``): the Python API's AI steps each start
    their own transcript, as :class:`GoalScriptedModel` plays them offline. A request with no task
    text (a lens call) gets the first script's stub."""
    policies = {goal: script_policy(script) for goal, script in sorted(scripts.items(), key=lambda kv: -len(kv[0]))}

    def policy(request: Any) -> Any:
        text = json.dumps(request.contents, ensure_ascii=False)
        play = next((p for goal, p in policies.items() if f"Goal: {goal}" in text), None)
        return (play or next(iter(policies.values())))(request)

    return policy
