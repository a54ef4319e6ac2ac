"""A provider-neutral view of a conversation, for the offline policies.

The heuristic and scripted models see only what a real model sees: the request. This module
pulls out the pieces they read — the task text, the latest observation text, the model's own
earlier texts and calls — from our ``ModelRequest`` or from a Gemini REST body (the fake server's
scripted policy plays the same script through the real SDK).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from artemis_cli.models.base import ModelRequest

_SCREEN_RE = re.compile(r"Screen (\d+)x(\d+); coordinates: ([^.\n]+)\.")


@dataclass
class ConversationView:
    task_text: str = ""
    observation_text: str = ""
    #: Every text the model wrote earlier, oldest first (its thoughts/markers).
    model_texts: list[str] = field(default_factory=list)
    #: Names of every function the model called earlier, oldest first.
    model_calls: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    #: Function responses in the newest user message (results of the model's last calls).
    last_responses: list[dict[str, Any]] = field(default_factory=list)

    @property
    def screen_size(self) -> tuple[int, int] | None:
        m = _SCREEN_RE.search(self.observation_text)
        return (int(m.group(1)), int(m.group(2))) if m else None

    @property
    def normalized(self) -> bool:
        m = _SCREEN_RE.search(self.observation_text)
        return bool(m and "normalised" in m.group(3))

    @property
    def goal(self) -> str:
        for line in self.task_text.splitlines():
            if line.startswith("Goal:"):
                return line[len("Goal:") :].strip()
        return self.task_text.strip()


def _is_observation(text: str) -> bool:
    return "# CURRENT OBSERVATION" in text


def _is_observation_head(text: str) -> bool:
    """The head of an observation (``# STEP N of at most M [T+mm:ss]``, the foreground app,
    user instructions); the ledger sends it, then the screenshot, then the body."""
    return text.startswith("# STEP ")


def _observation(head: str, body: str) -> str:
    return f"{head}\n{body}" if head else body


def view_from_request(request: ModelRequest) -> ConversationView:
    view = ConversationView()
    for msg in request.messages:
        if msg.role == "model":
            for part in msg.parts:
                if part.text and not part.thought:
                    view.model_texts.append(part.text)
                if part.function_call:
                    view.model_calls.append((part.function_call.name, dict(part.function_call.args)))
            continue
        responses = [
            {"name": p.function_response.name, **p.function_response.response}
            for p in msg.parts
            if p.function_response is not None
        ]
        view.last_responses = responses
        head = ""
        for part in msg.parts:
            if part.text and "# TASK" in part.text and not view.task_text:
                view.task_text = part.text
            if part.text and _is_observation_head(part.text):
                head = part.text
            if part.text and _is_observation(part.text):
                view.observation_text = _observation(head, part.text)
    return view


def view_from_rest(contents: list[dict[str, Any]]) -> ConversationView:
    """The same view over Gemini REST ``contents`` (camelCase parts)."""
    view = ConversationView()
    for content in contents:
        parts = content.get("parts") or []
        if content.get("role") == "model":
            for part in parts:
                if part.get("text") and not part.get("thought"):
                    view.model_texts.append(part["text"])
                fc = part.get("functionCall")
                if fc:
                    view.model_calls.append((fc.get("name", ""), dict(fc.get("args") or {})))
            continue
        view.last_responses = [
            {"name": p["functionResponse"].get("name", ""), **(p["functionResponse"].get("response") or {})}
            for p in parts
            if "functionResponse" in p
        ]
        head = ""
        for part in parts:
            text = part.get("text")
            if text and "# TASK" in text and not view.task_text:
                view.task_text = text
            if text and _is_observation_head(text):
                head = text
            if text and _is_observation(text):
                view.observation_text = _observation(head, text)
    return view
