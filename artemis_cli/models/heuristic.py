"""The heuristic model: an offline, deterministic baseline policy (SPEC §8).

It sees only what a model sees — the task text and the latest observation in the request — and
follows simple rules: dismiss pop-ups, route to an app by keywords, flip a matching switch to the
state the goal asks for, type quoted values into fields, tap the element whose label best matches
the goal, scroll when nothing matches, go back when stuck, and finish when it believes the goal is
met. It is a baseline, not an agent, and says so wherever its results appear.
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
QUOTED_RE = re.compile(r"[\"“']([^\"”']+)[\"”']")
FOREGROUND_RE = re.compile(r"Foreground app: ([^.\s]+(?:\.[^.\s]+)*)\.")


def _name(e: ParsedElement) -> str:
    """A switch's name: its description when its text is only a state word (ON/OFF)."""
    label = e.label or ""
    return e.desc or label if label.upper() in ("ON", "OFF", "") else label


def tokens(text: str) -> list[str]:
    return re.findall(r"[a-z0-9]+", text.casefold().replace("-", ""))


class HeuristicPolicy:
    def decide(self, view: ConversationView) -> tuple[str, FunctionCall]:
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
        for value in QUOTED_RE.findall(goal):
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
            label_tokens = set(tokens(f"{e.label or ''} {e.desc or ''}"))
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
