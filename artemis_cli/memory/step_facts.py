"""Step facts (SPEC §10.3): what a recorded step was OBSERVED to change, as short phrases.

The compressed history (mechanical chunk bands, era and period paragraphs) and the chunk lens's
input are built from these facts, so a folded range still says what the run got done::

    "Wi-Fi" OFF→ON                       a switch or check box the outcome saw flip
    typed "Alice" into "Name"            text the field showed afterwards (its hint names it;
                                         a clause says "typed" once for a run of them)
    typed ‹secret shop_password› into "Password"   a secret: its name, never its value
    "Notes" shows "Milk, eggs, bananas"  a field that holds more than what was typed
    answered "Delete this contact?" with "Delete"  a dialog closed by a tap on one of its buttons
    "50%" → "40%"                        one screen text replaced by another
    "David Evans" appeared / "Ideas" gone    a list row that appeared or went (not a new screen)
    pressed "Save"                       a confirming button whose tap changed the screen
    opened "Display"                     a list row that led to another screen
    opened com.android.settings          another app came to the front

Facts come from the step's stored outcome (``steps.outcome``: states, field, windows, app, text
changes), never from what the action meant to do: a step that changed nothing (``no_change``),
failed to reach the device (``error``) or finished yields none, and a typed-into field counts
only when the text landed. Device text is JSON-quoted (one line, cut); a password field shows
``[redacted]``; the text of a step typed from a secret shows ``‹secret NAME›``.

:func:`merge_facts` reduces the facts of a range: the same control keeps its latest state (first
``before``, last ``now``), repeated facts show once, navigation goes last (it matters least);
:func:`facts_clause` joins them within a character bound, counting what did not fit.
Deterministic: the same records always give the same text.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from artemis_cli.engine.records import REDACTED, StepRecord
from artemis_cli.perception.elements import parse_element_lines
from artemis_cli.perception.quoting import quote_untrusted
from artemis_cli.perception.structure import LABEL_JOIN

__all__ = ["FACT_QUOTE_CHARS", "StepFact", "facts_clause", "merge_facts", "range_facts", "step_facts"]

#: Characters of device text quoted in a fact.
FACT_QUOTE_CHARS = 40
#: Statuses whose outcome was observed on the device (the others yield no fact).
_OBSERVED = ("ok", "failed", "app_crashed", "app_not_responding")
#: Labels of buttons that confirm or commit something (matched as whole words, case-insensitive).
_COMMIT = re.compile(r"\b(save|done|ok|add|create|apply|confirm|send|submit|delete|remove|set|allow|accept|"
                     r"log ?in|sign ?in|buy|pay|place order|check ?out|update|install)\b", re.IGNORECASE)
_ROW_CLASSES = ("LinearLayout", "ViewGroup", "RelativeLayout", "FrameLayout", "ConstraintLayout", "TextView",
                "CardView", "ListView")
_ID_SUFFIX = re.compile(r" \(id [^)]*\)$")
_WINDOW = re.compile(r'^(".*") \([^()]*\)$')
_SECRET_LABEL = "‹secret {}›"
#: Fact kinds: what changed, then where the run went (:data:`NAVIGATION`, listed last).
KINDS = ("state", "typed", "value", "item", "dialog", "pressed", "screen", "app")
NAVIGATION = ("screen", "app")


@dataclass(frozen=True)
class StepFact:
    """One observed fact: ``kind`` (:data:`KIND_ORDER`), ``key`` (facts with one key describe
    one control: the latest wins), the text, the step it was seen at; for a state, its ends."""

    kind: str
    key: str
    text: str
    step: int
    before: str = ""
    now: str = ""


def _q(text: str, limit: int = FACT_QUOTE_CHARS) -> str:
    return quote_untrusted(" ".join(str(text).split()), limit)


def _label(target: dict[str, Any] | None) -> str:
    """The element's own label (text, else content-desc), its first part (a row's title)."""
    t = target or {}
    label = str(t.get("text") or t.get("content_desc") or "").strip()
    return label.split(LABEL_JOIN)[0].strip()


def _short_class(target: dict[str, Any] | None) -> str:
    return str((target or {}).get("class_name") or "").rsplit(".", 1)[-1]


def _element(step: StepRecord) -> Any:
    """The target's line in the element list the step was decided on (None: not known)."""
    index = (step.target or {}).get("element_index")
    if index is None:
        index = (step.action_args or {}).get("index")
    observation = (step.meta or {}).get("observation")
    if not isinstance(index, int) or not isinstance(observation, str) or not observation:
        return None
    return next((e for e in parse_element_lines(observation) if e.index == index), None)


def _field_name(step: StepRecord) -> str:
    """A typed-into field's name: its hint, else its content-desc, else its resource id."""
    element = _element(step)
    if element is not None and element.hint:
        return _q(element.hint)
    t = step.target or {}
    if t.get("content_desc"):
        return _q(str(t["content_desc"]))
    rid = str(t.get("resource_id") or "").rsplit("/", 1)[-1]
    return _q(rid) if rid else "the field"


def _typed_value(step: StepRecord, field: dict[str, Any]) -> tuple[str, bool]:
    """(the quoted text the field holds, whether it is exactly what was typed)."""
    args = step.action_args or {}
    secret = args.get("secret")
    typed = args.get("text")
    if isinstance(secret, str) and secret:
        return _SECRET_LABEL.format(secret), True
    if isinstance(typed, str) and typed.startswith("‹secret ") and typed.endswith("›"):
        return typed, True
    if field.get("password") or args.get("redacted") or args.get("password") or (step.target or {}).get("password"):
        return REDACTED, True
    shows = field.get("shows")
    if not isinstance(shows, str):
        return "", False
    exact = isinstance(typed, str) and " ".join(typed.split()) == " ".join(shows.split())
    return _q(shows, 60), exact


def _state_facts(step: StepRecord, outcome: dict[str, Any]) -> list[StepFact]:
    out = []
    for change in outcome.get("states") or []:
        if not isinstance(change, dict):
            continue
        element = str(change.get("element") or "")
        name = _ID_SUFFIX.sub("", element) if '"' in element else element
        name = name.split(" ", 1)[1] if name.count('"') >= 2 and " " in name else name  # drop the class
        before, now = str(change.get("before") or ""), str(change.get("now") or "")
        key = "state:" + str(change.get("resource_id") or element)
        out.append(StepFact("state", key, f"{name} {before}→{now}", step.number, before, now))
    return out


def _typed_facts(step: StepRecord, outcome: dict[str, Any]) -> list[StepFact]:
    field = outcome.get("field")
    if step.action_type not in ("type_text", "type", "input_text") or not isinstance(field, dict) \
            or not field.get("landed"):
        return []
    value, exact = _typed_value(step, field)
    if not value:
        return []
    name = _field_name(step)
    text = f"typed {value} into {name}" if exact else f"{name} shows {value}"
    if field.get("submitted"):
        text += " (submitted)"
    return [StepFact("typed", f"typed:{step.number}", text, step.number)]


def _window_title(phrase: str) -> str:
    match = _WINDOW.match(phrase.strip())
    return match.group(1) if match else ""


def _text_facts(step: StepRecord, outcome: dict[str, Any]) -> list[StepFact]:
    """A value replaced by another, or a row that appeared or went: short changes on a screen that
    stayed (not a new screen, not a scroll, not the typing itself)."""
    text = outcome.get("text") or {}
    if step.action_type not in ("tap", "double_tap", "long_press", "press_key", "drag") or not isinstance(text, dict) \
            or text.get("replaced") or text.get("appeared_more") or text.get("disappeared_more"):
        return []
    appeared = list(dict.fromkeys(str(t) for t in text.get("appeared") or []))
    gone = list(dict.fromkeys(str(t) for t in text.get("disappeared") or []))
    if len(appeared) + len(gone) > 2 or any(len(t) > FACT_QUOTE_CHARS for t in [*appeared, *gone]):
        return []
    if len(appeared) == 1 and len(gone) == 1:
        return [StepFact("value", f"value:{step.number}", f"{_q(gone[0])} → {_q(appeared[0])}", step.number)]
    return ([StepFact("item", f"item:{t}", f"{_q(t)} appeared", step.number) for t in appeared]
            + [StepFact("item", f"item:{t}", f"{_q(t)} gone", step.number) for t in gone])


def _tap_facts(step: StepRecord, outcome: dict[str, Any]) -> list[StepFact]:
    if step.action_type not in ("tap", "press_key"):
        return []
    label = _label(step.target)
    closed = [_window_title(w) for w in outcome.get("windows_closed") or [] if isinstance(w, str)]
    if closed:
        title = closed[0] or "a dialog"
        if step.action_type == "press_key":
            return [StepFact("dialog", f"dialog:{step.number}", f"dismissed {title}", step.number)]
        if label:
            return [StepFact("dialog", f"dialog:{step.number}", f"answered {title} with {_q(label)}", step.number)]
        return []
    if step.action_type != "tap" or not label or not outcome.get("screen_changed"):
        return []
    if outcome.get("app_before") != outcome.get("app_after") or outcome.get("windows_opened"):
        return []
    replaced = bool((outcome.get("text") or {}).get("replaced"))
    if _COMMIT.search(label) and _short_class(step.target) not in _ROW_CLASSES:
        return [StepFact("pressed", f"pressed:{step.number}", f"pressed {_q(label)}", step.number)]
    if replaced and _short_class(step.target) in _ROW_CLASSES:
        return [StepFact("screen", f"screen:{label}", f"opened {_q(label)}", step.number)]
    return []


def step_facts(step: StepRecord) -> list[StepFact]:
    """The facts one recorded step's observed outcome shows ([] when nothing was observed)."""
    outcome = step.outcome
    if not isinstance(outcome, dict) or step.result_status not in _OBSERVED:
        return []
    answered = _tap_facts(step, outcome)
    # a dialog answered says what was chosen: the text it changed behind it is its consequence
    texts = [] if any(f.kind == "dialog" for f in answered) else _text_facts(step, outcome)
    facts = [*_state_facts(step, outcome), *_typed_facts(step, outcome), *texts, *answered]
    before, after = outcome.get("app_before"), outcome.get("app_after")
    if isinstance(after, str) and after and after != before:
        facts.append(StepFact("app", f"app:{after}", f"opened {after}", step.number))
    return facts


def merge_facts(facts: Iterable[StepFact]) -> list[StepFact]:
    """The facts of a range: one per key (a state keeps its first ``before`` and last ``now``;
    a control back where it started says so), identical texts once, in the order of the steps,
    navigation (:data:`NAVIGATION`: screens and apps opened) last."""
    merged: dict[str, StepFact] = {}
    for fact in facts:
        old = merged.get(fact.key)
        if old is not None and fact.kind == "state":
            name = fact.text.rsplit(" ", 1)[0]
            text = (f"{name} {old.before}→{fact.now}" if old.before != fact.now
                    else f"{name} back to {fact.now}")
            fact = StepFact("state", fact.key, text, old.step, old.before, fact.now)
        elif old is not None:
            continue
        merged[fact.key] = fact
    seen: set[str] = set()
    out: list[StepFact] = []
    for fact in sorted(merged.values(), key=lambda f: (f.kind in NAVIGATION, f.step)):
        if fact.text not in seen:
            seen.add(fact.text)
            out.append(fact)
    return out


def range_facts(steps: Sequence[StepRecord]) -> list[StepFact]:
    """:func:`merge_facts` of every step's facts."""
    return merge_facts(f for s in steps for f in step_facts(s))


def _shown(facts: Sequence[StepFact]) -> list[str]:
    """The texts as a clause shows them: a typing fact right after another says "typed" once
    (``typed "Tom" into "First name", "Becker" into "Last name"``)."""
    out = []
    for i, fact in enumerate(facts):
        typing = fact.kind == "typed" and fact.text.startswith("typed ")
        after_typing = i > 0 and facts[i - 1].kind == "typed" and facts[i - 1].text.startswith("typed ")
        out.append(fact.text.removeprefix("typed ") if typing and after_typing else fact.text)
    return out


def facts_clause(facts: Sequence[StepFact], limit: int, sep: str = ", ") -> str:
    """The fact texts joined by ``sep`` while they fit in ``limit`` characters, then
    ``(+N more)``; "" without facts. Never cuts a fact (a first fact too long is left out and
    counted)."""
    out: list[str] = []
    used = 0
    texts = _shown(facts)
    for i, text in enumerate(texts):
        rest = len(texts) - i - 1
        more = len(f"{sep}(+{rest} more)") if rest else 0
        cost = len(text) + (len(sep) if out else 0)
        if used + cost + more > limit:
            left = len(texts) - i
            mark = f"(+{left} more)"
            return sep.join([*out, mark]) if out else mark
        out.append(text)
        used += cost
    return sep.join(out)
