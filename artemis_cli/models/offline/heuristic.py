"""The heuristic model: an offline, deterministic baseline policy (SPEC §8).

It sees only what a model sees — the task text and the latest observation in the request — and
follows simple rules: dismiss pop-ups, route to an app by keywords, flip a matching switch to the
state the goal asks for, type quoted values into fields, tap the element whose label best matches
the goal, scroll when nothing matches, go back when stuck, and finish when it believes the goal is
met. It is a baseline, not an agent, and says so wherever its results appear.

Repeat loops: it keeps no state between calls, so when it repeats its last action after one that
changed nothing on screen (the action's reply says ``screen_changed: false``), its thought notes
how many identical actions in a row have now changed nothing; the next request carries that
thought back. After :data:`STUCK_REPEATS` of them it gives up with ``finish`` success=false.
"""

from __future__ import annotations

import re
import time
from typing import Any

from artemis_cli.models.base import FunctionCall, Message, ModelRequest, ModelResponse, Part, Usage
from artemis_cli.models.conversation import ConversationView, view_from_request
from artemis_cli.perception.elements import ParsedElement, parse_element_lines

LABEL = "heuristic (offline baseline, not an LLM)"

# App routing: launcher name -> goal keywords.
APP_KEYWORDS: dict[str, tuple[str, ...]] = {
    "Settings": ("wifi", "bluetooth", "airplane", "dark", "brightness", "timeout", "display", "settings",
                 "mobile", "network", "about"),
    "Clock": ("alarm", "alarms", "clock", "timer"),
    "Contacts": ("contact", "contacts"),
    "Notes": ("note", "notes"),
    "Shop": ("shop", "cart", "buy", "order", "checkout", "purchase"),
}
# Goal word -> labels that lead towards it.
SYNONYMS: dict[str, tuple[str, ...]] = {
    "wifi": ("wifi", "network", "internet", "wlan"),
    "airplane": ("airplane", "network", "internet", "flight"),
    "mobile": ("mobile", "network", "internet"),
    "bluetooth": ("bluetooth", "connected", "devices"),
    "dark": ("dark", "display", "theme"),
    "brightness": ("brightness", "display"),
    "timeout": ("timeout", "display"),
    "alarm": ("alarm",),
    "contact": ("contact", "create"),
    "note": ("note", "new"),
}
STOP = frozenset(
    ["a", "an", "the", "to", "and", "or", "of", "for", "in", "on", "off", "my", "me", "please", "turn", "switch", "toggle", "enable", "disable", "set", "open", "app", "then", "it", "is", "be", "with", "from", "into", "at", "by", "that", "this"]
)
POPUP_DISMISS = ("no thanks", "not now", "dismiss", "skip", "later", "cancel")
OFF_WORDS = ("turn off", "switch off", "disable", "deactivate")
ON_WORDS = ("turn on", "switch on", "enable", "activate")
#: Quoted values in a goal. Double quotes ("…", “…”, „…“) hold anything but their closing quote,
#: apostrophes included. A single quote ('…', ‘…’) opens only where no word character comes
#: before it and closes only where none comes after it, so the apostrophe of "Mori's" or "don't"
#: neither opens nor ends a value: 'Ken Mori's desk' is one value.
QUOTED_RE = re.compile(
    r'"([^"\n]+)"'
    r"|[“„]([^”“\"\n]+)[”“\"]"
    r"|(?<!\w)['‘](\S(?:[^\n]*?\S)?)['’](?!\w)"
)
#: Identical consecutive actions that changed nothing on screen before it gives up.
STUCK_REPEATS = 5
#: The note its thought carries while it repeats an action that changed nothing.
REPEAT_NOTE = "(no screen change after {n} identical action{s} in a row)"
REPEAT_NOTE_RE = re.compile(r"\(no screen change after (\d+) identical actions? in a row\)")
FOREGROUND_RE = re.compile(r"Foreground app: ([^.\s]+(?:\.[^.\s]+)*)\.")


def _name(e: ParsedElement) -> str:
    """A switch's name: its description when its text is only a state word (ON/OFF)."""
    label = e.label or ""
    return e.desc or label if label.upper() in ("ON", "OFF", "") else label


def tokens(text: str) -> list[str]:
    return re.findall(r"[a-z0-9]+", text.casefold().replace("-", ""))


def quoted_values(text: str) -> list[str]:
    """The quoted values of a goal, in order: ``Add a note "Call Mori's office"`` ->
    ``["Call Mori's office"]``; ``Name it 'Ken Mori's desk'`` -> ``["Ken Mori's desk"]``."""
    values = []
    for m in QUOTED_RE.finditer(text):
        value = next(g for g in m.groups() if g is not None).strip()
        if value:
            values.append(value)
    return values


def unchanged_repeats(view: ConversationView) -> int:
    """How many identical actions in a row, ending with the last one, changed nothing on screen.

    The last action counts when its reply says ``screen_changed: false``; the ones before it
    come from the note in the previous thought (written only when that thought repeated the
    action before it), so the count survives without any state in the policy."""
    if not view.model_calls:
        return 0
    name, args = view.model_calls[-1]
    replies = [r for r in view.last_responses if r.get("name") == name]
    if not any(r.get("screen_changed") is False for r in replies):
        return 0
    before = 0
    if len(view.model_calls) >= 2 and view.model_calls[-2] == (name, args) and view.model_texts:
        note = REPEAT_NOTE_RE.search(view.model_texts[-1])
        before = int(note.group(1)) if note else 0
    return before + 1


def _phrase(name: str, args: dict[str, Any]) -> str:
    shown = ", ".join(f"{k}={v!r}" for k, v in args.items())
    return f"{name}({shown})"


class HeuristicPolicy:
    def decide(self, view: ConversationView) -> tuple[str, FunctionCall]:
        repeats = unchanged_repeats(view)
        if repeats >= STUCK_REPEATS:
            name, args = view.model_calls[-1]
            what = _phrase(name, args)
            return (f"I repeated {what} {repeats} times and the screen never changed; I am stuck.",
                    FunctionCall("finish", {"success": False, "answer": (
                        f"heuristic is stuck: {what} repeated {repeats} times with no screen change")}))
        thought, call = self._decide(view)
        if repeats and view.model_calls and (call.name, dict(call.args)) == view.model_calls[-1]:
            thought += " " + REPEAT_NOTE.format(n=repeats, s="" if repeats == 1 else "s")
        return thought, call

    def _decide(self, view: ConversationView) -> tuple[str, FunctionCall]:
        goal = view.goal
        goal_l = goal.casefold()
        elements = parse_element_lines(view.observation_text)
        fg_match = FOREGROUND_RE.search(view.observation_text)
        foreground = fg_match.group(1) if fg_match else ""
        calls = view.model_calls

        dismiss = self._popup(elements, goal_l)
        if dismiss is not None:
            return f"A pop-up covers the screen; dismissing it via {dismiss.label!r}.", FunctionCall(
                "tap", {"index": dismiss.index}
            )

        app = self._route(goal)
        launched = [a for n, a in calls if n == "launch_app"]
        if app and "launcher" in foreground and not any(a.get("app") == app for a in launched[-1:]):
            return f"The goal concerns the {app} app; opening it.", FunctionCall("launch_app", {"app": app})
        if app and not launched and foreground and not self._in_app(foreground, app):
            return f"The goal concerns the {app} app; opening it.", FunctionCall("launch_app", {"app": app})

        subject = [t for t in tokens(goal) if t not in STOP]
        desired = self._desired_state(goal_l)
        if desired is not None:
            switch = self._best(elements, subject, require=lambda e: "checked" in e.flags or "unchecked" in e.flags)
            if switch is not None:
                is_on = "checked" in switch.flags
                name = _name(switch)
                if is_on == desired:
                    state = "on" if desired else "off"
                    return f"{name!r} is {state}, as the goal asks.", FunctionCall(
                        "finish", {"success": True, "answer": f"{name} is {state}"}
                    )
                return f"{name!r} is in the wrong state; toggling it.", FunctionCall(
                    "tap", {"index": switch.index}
                )

        typed = {str(a.get("text")) for n, a in calls if n == "type_text"}
        for value in quoted_values(goal):
            if value in typed:
                continue
            field = next((e for e in elements if "edit" in e.flags and (e.label or "") != value), None)
            if field is not None:
                return f"Typing {value!r} into the field {field.label!r}.", FunctionCall(
                    "type_text", {"text": value, "index": field.index}
                )

        recent_taps = [a.get("index") for n, a in calls[-3:] if n == "tap"]
        unchanged = any(r.get("screen_changed") is False for r in view.last_responses)
        best = self._best(elements, subject, exclude=set(recent_taps) if unchanged else set())
        if best is not None:
            return f"{best.label!r} matches the goal best; tapping it.", FunctionCall("tap", {"index": best.index})

        if app and self._in_app(foreground, app) and goal_l.startswith("open"):
            return f"{app} is open.", FunctionCall("finish", {"success": True, "answer": f"{app} is open"})

        recent = [n for n, _ in calls[-4:]]
        if any("scroll" in e.flags for e in elements) and recent.count("swipe") < 3:
            return "Nothing on screen matches the goal; scrolling for more.", FunctionCall(
                "swipe", {"direction": "up"}
            )
        if recent.count("press_key") < 2:
            return "Nothing here matches the goal; going back.", FunctionCall("press_key", {"key": "back"})
        return "I cannot find a way to reach the goal.", FunctionCall(
            "finish", {"success": False, "answer": "heuristic found no matching element"}
        )

    @staticmethod
    def _popup(elements: list[ParsedElement], goal_l: str) -> ParsedElement | None:
        if "offer" in goal_l:
            return None
        labels = " ".join((e.label or "").casefold() for e in elements)
        if "offer" not in labels and "promotion" not in labels:
            return None
        for e in elements:
            if (e.label or "").casefold() in POPUP_DISMISS:
                return e
        return None

    @staticmethod
    def _route(goal: str) -> str | None:
        words = set(tokens(goal))
        best, score = None, 0
        for app, keys in APP_KEYWORDS.items():
            s = sum(1 for k in keys if k in words or k + "s" in words)
            if s > score:
                best, score = app, s
        return best

    @staticmethod
    def _in_app(foreground: str, app: str) -> bool:
        return app.casefold() in foreground.casefold() or (app == "Clock" and "deskclock" in foreground)

    @staticmethod
    def _desired_state(goal_l: str) -> bool | None:
        if any(w in goal_l for w in OFF_WORDS):
            return False
        if any(w in goal_l for w in ON_WORDS):
            return True
        return None

    @staticmethod
    def _best(
        elements: list[ParsedElement],
        subject: list[str],
        *,
        require: Any = None,
        exclude: set[Any] | None = None,
    ) -> ParsedElement | None:
        wanted: set[str] = set()
        for word in subject:
            wanted.update(SYNONYMS.get(word, (word,)))
        best, best_score = None, 0.0
        for e in elements:
            if require is not None and not require(e):
                continue
            if exclude and e.index in exclude:
                continue
            if "click" not in e.flags and "checked" not in e.flags and "unchecked" not in e.flags:
                continue
            label_tokens = set(tokens(f"{e.label or ''} {e.desc or ''} {e.hint}"))
            if not label_tokens:
                continue
            direct = len(label_tokens & set(subject))
            related = len(label_tokens & wanted)
            score = direct * 2 + related - 0.01 * len(label_tokens)
            if (direct or related) and score > best_score:
                best, best_score = e, score
        return best


class HeuristicModel:
    """Model protocol over HeuristicPolicy; offline and labelled as such."""

    offline = True
    name = "heuristic"
    label = LABEL

    def __init__(self) -> None:
        self.policy = HeuristicPolicy()

    def generate(self, request: ModelRequest) -> ModelResponse:
        t0 = time.perf_counter()
        thought, call = self.policy.decide(view_from_request(request))
        message = Message("model", [Part(text=f"[heuristic] {thought}"), Part(function_call=call)])
        return ModelResponse(message, Usage(), self.name, (time.perf_counter() - t0) * 1000)
