"""Scripted answers for the Pro auxiliary agents, for FakeGeminiServer runs through the real SDK.

``pro_script_policy(script)`` extends ``script_policy(script)``: operator requests (they declare
tools) and lens requests go to the scripted operator/lens policy unchanged; planner, validator,
failure-analyzer and checker requests — recognised by the first line of their system
instruction — get deterministic answers derived from the script:

* **milestones** are the script's segments split at each ``launch`` entry (a launch opens a new
  segment; entries before the first launch form a segment of their own), titled
  ``Work in <package> (#k)`` (``Work in the current app (#1)`` for a leading segment without
  a launch);
* the **validator** finds the entry just executed from the operator's ``[script k/n]`` marker in
  the request's operator-note section and answers ``progress``, with ``milestone_complete`` true
  exactly when entry k is the last entry of its segment (a ``[script k/n popup]`` dismissal is
  progress, never completion; no marker: ``unclear``);
* the **checker** verifies with evidence text; the **failure analyzer** answers ``press_key back``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from artemis_cli.models.fakes.gemini import FakeReply, FakeRequest
from artemis_cli.models.offline.scripted import MARKER_RE, script_policy
from artemis_cli.operators.pro.prompts import role_of_system

__all__ = ["ScriptSegment", "first_user_text", "pro_script_policy", "script_position", "script_segments"]

_NOTE_HEADER = "# OPERATOR'S NOTE"
_MILESTONE_HEADER = "# MILESTONE TO VERIFY"


@dataclass(frozen=True)
class ScriptSegment:
    """Script entries ``start..end`` (0-based, inclusive) = one milestone."""

    number: int  # 1-based
    start: int
    end: int
    title: str

    def contains(self, index: int) -> bool:
        return self.start <= index <= self.end


def _kind(entry: dict[str, Any]) -> str:
    keys = [k for k, v in entry.items() if v is not None]
    return keys[0] if len(keys) == 1 else ""


MAX_MILESTONES = 12  # what the planner accepts


def script_segments(script: list[dict[str, Any]]) -> list[ScriptSegment]:
    """The milestones of a script: segments split at each ``launch`` entry (every other launch,
    and so on, when there would be more than the planner's 12 milestones)."""
    starts = [i for i, entry in enumerate(script) if _kind(entry) == "launch"]
    if not script:
        return []
    if not starts or starts[0] != 0:
        starts = [0, *starts]
    stride = -(-len(starts) // MAX_MILESTONES)  # ceil
    starts = starts[::stride]
    out: list[ScriptSegment] = []
    for k, start in enumerate(starts, 1):
        end = (starts[k] - 1) if k < len(starts) else len(script) - 1
        entry = script[start]
        where = str(entry["launch"]) if _kind(entry) == "launch" else "the current app"
        out.append(ScriptSegment(k, start, end, f"Work in {where} (#{k})"))
    return out


def first_user_text(request: FakeRequest) -> str:
    """The request's first user text (the agent's input; later user texts are retry notes)."""
    for content in request.contents:
        if content.get("role", "user") != "user":
            continue
        texts = [p["text"] for p in content.get("parts", []) if isinstance(p, dict) and isinstance(p.get("text"), str)]
        if texts:
            return "\n".join(texts)
    return ""


def _section(text: str, header: str) -> str:
    """The lines after the line starting with ``header`` up to the next ``# `` header."""
    lines = text.splitlines()
    for i, line in enumerate(lines):
        if line.startswith(header):
            body: list[str] = []
            for nxt in lines[i + 1 :]:
                if nxt.startswith("# "):
                    break
                body.append(nxt)
            return "\n".join(body).strip()
    return ""


def script_position(validator_text: str) -> tuple[int, bool] | None:
    """``(k, popup)`` from the ``[script k/n]`` marker in a validator request's operator note."""
    m = MARKER_RE.search(_section(validator_text, _NOTE_HEADER))
    if m is None:
        return None
    return int(m.group(1)), bool(m.group(3))


def _json_reply(data: dict[str, Any]) -> FakeReply:
    return FakeReply.text(json.dumps(data, ensure_ascii=False))


def pro_script_policy(
    script: list[dict[str, Any]],
    *,
    toolless: Callable[[FakeRequest], FakeReply] | None = None,
) -> Callable[[FakeRequest], FakeReply]:
    """A FakeGeminiServer policy playing ``script`` for the operator, the lens and the Pro agents.

    ``toolless`` (optional) answers tool-less requests that are not Pro-agent requests (e.g. a
    chunk-lens policy that itself delegates visual-lens requests); default: ``script_policy``.
    """
    base = script_policy(script)
    segments = script_segments(script)

    def planner(_: FakeRequest) -> FakeReply:
        return _json_reply({"milestones": [{"title": s.title} for s in segments]})

    def validator(req: FakeRequest) -> FakeReply:
        pos = script_position(first_user_text(req))
        if pos is None:
            return _json_reply(
                {"verdict": "unclear", "milestone_complete": False, "reason": "no script marker in the operator note"}
            )
        k, popup = pos
        if popup:
            return _json_reply(
                {"verdict": "progress", "milestone_complete": False, "reason": f"pop-up dismissed after entry {k}"}
            )
        index = k - 1
        seg = next((s for s in segments if s.contains(index)), None)
        complete = seg is not None and index == seg.end
        reason = f"script entry {k} played" + (f"; {seg.title} reached" if complete and seg else "")
        return _json_reply({"verdict": "progress", "milestone_complete": complete, "reason": reason})

    def checker(req: FakeRequest) -> FakeReply:
        target = _section(first_user_text(req), _MILESTONE_HEADER).split("\n", 1)[0]
        title = re.sub(r"\s*\(m:[0-9a-f]+\)\s*$", "", target) or "the milestone"
        return _json_reply({"verified": True, "evidence": f"scripted check: the steps of {title} played their entries"})

    def failure_analyzer(_: FakeRequest) -> FakeReply:
        return _json_reply(
            {"actions": [{"tool": "press_key", "args": {"key": "back"}}], "reason": "scripted recovery: go back"}
        )

    routes: dict[str, Callable[[FakeRequest], FakeReply]] = {
        "planner": planner,
        "validator": validator,
        "checker": checker,
        "failure_analyzer": failure_analyzer,
    }

    def policy(request: FakeRequest) -> FakeReply:
        role = None if request.tools else role_of_system(request.system)
        if role is not None:
            return routes[role](request)
        if toolless is not None and not request.tools:
            return toolless(request)
        reply: FakeReply = base(request)
        return reply

    return policy
