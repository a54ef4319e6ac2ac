"""Helpers for the screen-ask tests (imported as a plain module, like tests/pro/pro_helpers.py): a
real sim screen and policies that answer from the request the fake server received."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field

from pydantic import BaseModel

from artemis_cli.models.base import ModelRequest, ModelResponse
from artemis_cli.operators.observe import Observation, observe
from artemis_cli.sim.phone import SimPhone

NOTES = "com.artemis.notes"
SCREEN = (1080, 2400)
#: The longest side of the screenshot the asks send in these tests.
SIDE = 768
_LINE = re.compile(r"^\[(\d+)\] ")


def probe_notes() -> Observation:
    """The probe world's Notes list (a fixed screen): four notes, one whose title and body are a
    prompt injection (``</screen>`` and a forged user instruction), a destructive "Delete all"."""
    phone = SimPhone(world="probe", seed=0, popups=False)
    phone.launch(NOTES)
    return observe(phone, SCREEN, "pixels", sleep=lambda s: None)


def fenced_lines(request_text: str) -> list[str]:
    """The lines between the request's ``<screen>`` and ``</screen>`` lines (AssertionError
    unless there is exactly one fence)."""
    lines = request_text.split("\n")
    assert lines.count("<screen>") == 1 and lines.count("</screen>") == 1, request_text
    start, end = lines.index("<screen>"), lines.index("</screen>")
    assert start < end
    return lines[start + 1 : end]


def index_of(request_text: str, needle: str) -> int | None:
    """The index of the first fenced element line holding ``needle`` (as the model would find it)."""
    for line in fenced_lines(request_text):
        match = _LINE.match(line)
        if match and needle in line:
            return int(match.group(1))
    return None


def count_ids(request_text: str, short_id: str) -> int:
    return sum(1 for line in fenced_lines(request_text) if f" id={short_id} " in line + " ")


class NoteRow(BaseModel):
    """A query kind: one row of the Notes list."""

    title: str
    summary: str


def reply(**fields: object) -> str:
    return json.dumps(fields)


#: A policy body: the request's first user text (the ask's request) -> the reply text.
Answerer = Callable[[str], str]


class Replies:
    """Replies in order (the last repeats); each a text or an :data:`Answerer`."""

    def __init__(self, *replies: str | Answerer) -> None:
        self.replies = list(replies)

    def next(self, first_text: str) -> str:
        item = self.replies.pop(0) if len(self.replies) > 1 else self.replies[0]
        return item if isinstance(item, str) else item(first_text)


@dataclass
class Calls:
    """A ``record_call`` hook: every call as (role, ok, error)."""

    seen: list[tuple[str, bool, str | None]] = field(default_factory=list)
    requests: list[ModelRequest] = field(default_factory=list)

    def __call__(self, request: ModelRequest, response: ModelResponse | None, error: Exception | None) -> None:
        self.requests.append(request)
        self.seen.append((request.role, response is not None, type(error).__name__ if error else None))
