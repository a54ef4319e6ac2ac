"""The healing model: offline, follows a plan; not an LLM.

It reads only what a model reads — the request's task text (goal and ``# PLAN``), its own
earlier markers, and the element list of the current observation — and plays the plan's next
step (the reference vocabulary of ``models.offline.scripted``). When that step's target is not on the
screen it adapts generically, as a careful tester would:

- a first-run or promotional dialog ("Got it", "No thanks", "Not now"…) is dismissed first;
- a confirmation screen (an affirmative button beside a "Back…"/"Cancel" one) is accepted with
  the affirmative button whose words fit the plan's intent (the goal, the step's own words);
- a renamed target is found by its words (every word of the old label in the new one, and the
  new one not much longer: "Checkout" → "Proceed to checkout");
- an overflow menu ("More options") is opened to look for the target there.

Otherwise it gives up with ``finish(success=false)`` naming the step. Its position in the plan is
read back from its own ``[plan k/n]`` markers, so it is stateless like the scripted model.

For ``artemis run TASK --model healer`` the plan is the task's ``reference``; for ``artemis
replay --heal`` it is the recording's remaining steps, rendered in the task text by
:func:`render_plan` (so a real model reads the same plan).
"""

from __future__ import annotations

import json
import re
import time
from typing import Any

from artemis_cli.models.base import FunctionCall, Message, ModelRequest, ModelResponse, Part, Usage
from artemis_cli.models.conversation import ConversationView, view_from_request
from artemis_cli.models.offline.scripted import (
    ScriptDecision,
    ScriptError,
    ScriptPlayer,
    _one_key,
    find_element,
    quoted,
    step_sentence,
)
from artemis_cli.perception.elements import ParsedElement, parse_element_lines

HEALER_LABEL = "healer (offline, follows a plan; not an LLM)"
PLAN_HEADER = "# PLAN"
PLAN_INTRO = ("The recorded steps still to do, in order (reference actions as JSON). The app may have "
              "changed since they were recorded: follow them, adapting to what is on the screen.")
_PLAN_LINE = re.compile(r"^\s*(\d+)\. (\{.*\})\s*$")
_MARKER = re.compile(r"\[plan (\d+)/(\d+)( [a-z]+)?\]")

DISMISS_LABELS = ("got it", "no thanks", "not now", "dismiss", "skip", "maybe later", "later", "close")
NEGATIVE_WORDS = ("back", "cancel", "no", "not now", "close")
OVERFLOW_LABELS = ("more options", "more", "overflow", "⋮")
_STOP = {"a", "an", "the", "to", "of", "and", "or", "in", "on", "for", "your", "my", "button", "btn", "id"}


def render_plan(actions: list[dict[str, Any]]) -> str:
    """The plan as the task text carries it: a header, one line of intent, one JSON action a line."""
    lines = [PLAN_HEADER, PLAN_INTRO]
    lines += [f"{i}. {json.dumps(a, ensure_ascii=False, sort_keys=True)}" for i, a in enumerate(actions, start=1)]
    return "\n".join(lines)


def parse_plan(task_text: str) -> list[dict[str, Any]]:
    """The plan's actions from a task text (empty when it has none)."""
    if PLAN_HEADER not in task_text:
        return []
    out: list[dict[str, Any]] = []
    for line in task_text.split(PLAN_HEADER, 1)[1].splitlines():
        m = _PLAN_LINE.match(line)
        if m:
            try:
                value = json.loads(m.group(2))
            except json.JSONDecodeError:
                continue
            if isinstance(value, dict):
                out.append(value)
    return out


def _words(text: str) -> set[str]:
    return {w for w in re.split(r"[^0-9a-z]+", text.casefold().replace("_", " ")) if w and w not in _STOP}


def _stem(word: str) -> str:
    """A word without its inflection, enough to tell that "Place order" fits "Ordered one lamp"."""
    for suffix in ("ing", "ed", "es", "s"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            return word[: -len(suffix)]
    return word


def _label(el: ParsedElement) -> str:
    return el.label or el.desc or ""


def _selector_words(selector: Any) -> set[str]:
    if not isinstance(selector, dict):
        return _words(str(selector))
    for key in ("text", "text_contains", "desc"):
        if selector.get(key):
            return _words(str(selector[key]))
    return _words(str(selector.get("id") or "").rsplit("/", 1)[-1])


def fuzzy_find(elements: list[ParsedElement], selector: Any) -> ParsedElement | None:
    """The element whose names (label and content-desc) share the most words with the
    selector's, when they share at least half of all their words (word Jaccard >= 0.5): a
    renamed button ("Checkout" -> "Proceed to checkout", "Cart, 48 items" -> "Cart (48)"), not
    an element that merely mentions one word ("Add Desk Lamp to cart" for "Add Laptop Stand to
    cart", "Add to cart" / "Add Lunch Box to cart" for the id ``cart_button``)."""
    want = _selector_words(selector)
    if not want:
        return None
    best: tuple[float, ParsedElement] | None = None
    for el in elements:
        have = _words(el.label) | _words(el.desc)  # all it is called: "Add to cart" is "Add Lunch Box to cart"
        if not have or not ({"click", "edit"} & set(el.flags)):  # a control, not a text about it ("In cart: 2")
            continue
        score = len(want & have) / len(want | have)
        if score >= 0.5 and (best is None or score > best[0]):
            best = (score, el)
    return best[1] if best else None


def _target_of(kind: str, value: Any) -> Any:
    if kind in ("tap", "double_tap", "long_press"):
        return value
    if kind == "type" and isinstance(value, dict):
        return value.get("into")
    return None


class HealPlayer(ScriptPlayer):
    """Plays a plan with the adaptations above; ``script`` empty: the plan comes from the request."""

    def position(self, view: ConversationView) -> int:
        for text in reversed(view.model_texts):
            m = _MARKER.search(text)
            if m:
                return int(m.group(1))
        return 0

    def _last_extra(self, view: ConversationView) -> str:
        for text in reversed(view.model_texts):
            m = _MARKER.search(text)
            if m:
                return (m.group(3) or "").strip()
        return ""

    def decide(self, view: ConversationView) -> ScriptDecision:
        plan = self.script or parse_plan(view.task_text)
        n = len(plan)
        pos = self.position(view)
        elements = parse_element_lines(view.observation_text)
        if pos >= n:
            return ScriptDecision(f"[plan {n}/{n}] The plan is complete.",
                                  FunctionCall("finish", {"success": True, "answer": "plan completed"}))
        while pos < n - 1 and self._needless_dismissal(plan[pos], elements):
            pos += 1  # the plan dismissed a dialog that is not here this time
        kind, value = _one_key(plan[pos])
        intent = _words(view.goal) | _words(json.dumps(value, ensure_ascii=False) if value is not None else "")

        def adapt(why: str, el: ParsedElement, tag: str) -> ScriptDecision:
            return ScriptDecision(f"[plan {pos}/{n} {tag}] {why}: tapping {quoted(_label(el))}.",
                                  FunctionCall("tap", {"index": el.index}))

        target = _target_of(kind, value)
        dialog = self._dismissable(elements, target)
        if dialog is not None:
            return adapt("A dialog covers the app", dialog, "dismiss")
        label = f"[plan {pos + 1}/{n}]"
        if kind == "finish" or (target is not None and find_element(elements, self._as_selector(target)) is None):
            confirm = self._confirmation(elements, intent)
            if confirm is not None:
                return adapt("A confirmation screen asks to go on", confirm, "confirm")
        if kind == "finish":
            return ScriptDecision(f"{label} {step_sentence(kind, value)}", self._call_for(kind, value, elements, view))
        if target is not None and find_element(elements, self._as_selector(target)) is None:
            renamed = fuzzy_find(elements, target)
            if renamed is not None:
                planned, value = step_sentence(kind, value), self._retarget(kind, value, renamed)
                return ScriptDecision(f"{label} {planned}: that element is now labelled {quoted(_label(renamed))}",
                                      self._call_for(kind, value, elements, view))
            overflow = self._overflow(elements)
            if overflow is not None and self._last_extra(view) != "menu":
                return adapt("The target may be in the overflow menu", overflow, "menu")
        if kind == "type" and isinstance(value, dict) and "text" not in value and not isinstance(value.get("secret"), str):
            return ScriptDecision(f"{label} Cannot type a password: the plan does not carry it",
                                  FunctionCall("finish", {"success": False,
                                                          "answer": f"plan step {pos + 1} types a password"}))
        try:
            call = self._call_for(kind, value, elements, view)
        except ScriptError as exc:
            return ScriptDecision(f"{label} Cannot play {kind}: {exc}",
                                  FunctionCall("finish", {"success": False, "answer": f"plan step {pos + 1}: {exc}"}))
        return ScriptDecision(f"{label} {step_sentence(kind, value)}", call)

    def _needless_dismissal(self, step: dict[str, Any], elements: list[ParsedElement]) -> bool:
        """A plan step that taps a dialog's dismiss button ("No thanks") which is not on screen."""
        kind, value = _one_key(step)
        if kind != "tap":
            return False
        selector = self._as_selector(value)
        label = " ".join(sorted(_selector_words(selector)))
        dismiss = {" ".join(sorted(_words(w))) for w in DISMISS_LABELS}
        return label in dismiss and find_element(elements, selector) is None

    @staticmethod
    def _as_selector(target: Any) -> dict[str, Any]:
        return target if isinstance(target, dict) else {"text": str(target)}

    @staticmethod
    def _retarget(kind: str, value: Any, el: ParsedElement) -> Any:
        if kind == "type":
            return {**value, "into": {"index_of": el.index}}
        return {"index_of": el.index}

    def _target(self, selector: Any, elements: list[ParsedElement], view: ConversationView) -> dict[str, Any]:
        if isinstance(selector, dict) and "index_of" in selector:
            return {"index": int(selector["index_of"])}
        return super()._target(selector, elements, view)

    @staticmethod
    def _dismissable(elements: list[ParsedElement], target: Any) -> ParsedElement | None:
        wanted = _selector_words(target) if target is not None else set()
        for el in elements:
            label = _label(el).casefold().strip()
            if label in DISMISS_LABELS and not (wanted and wanted <= _words(label)):
                return el
        return None

    @staticmethod
    def _confirmation(elements: list[ParsedElement], intent: set[str]) -> ParsedElement | None:
        def negative(el: ParsedElement) -> bool:
            label = _label(el).casefold()
            return any(label == w or label.startswith(w + " ") for w in NEGATIVE_WORDS)

        buttons = [el for el in elements if "Button" in el.short_class and _label(el)]
        if not any(negative(el) for el in buttons):
            return None
        stems = {_stem(w) for w in intent}
        fits = [(len({_stem(w) for w in _words(_label(el))} & stems), el) for el in buttons if not negative(el)]
        fits = [f for f in fits if f[0] > 0]
        return max(fits, key=lambda f: f[0])[1] if fits else None

    @staticmethod
    def _overflow(elements: list[ParsedElement]) -> ParsedElement | None:
        for el in elements:
            if (el.desc or el.label or "").casefold().strip() in OVERFLOW_LABELS:
                return el
        return None


class HealerModel:
    """Model protocol over a HealPlayer; offline and labelled as what it is."""

    offline = True

    def __init__(self, plan: list[dict[str, Any]] | None = None, *, name: str = "healer") -> None:
        self.player = HealPlayer(plan or [])
        self.name = name
        self.label = HEALER_LABEL

    def generate(self, request: ModelRequest) -> ModelResponse:
        t0 = time.perf_counter()
        decision = self.player.decide(view_from_request(request))
        message = Message("model", [Part(text=decision.thought), Part(function_call=decision.call)])
        return ModelResponse(message, Usage(), self.name, (time.perf_counter() - t0) * 1000)
