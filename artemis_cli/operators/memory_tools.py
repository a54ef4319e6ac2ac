"""The pre-decision memory tools (SPEC §10.5): save_note, read_note, plan, recall_history.

Their answers return inside the same turn. A bad request (empty key, empty query without a
range, a backwards range, a malformed time) is answered with an error the model can correct;
nothing here ends a run. ``read_note`` returns at most ``notes.READ_MAX_CHARS`` characters of a
note, with a line saying how much was cut.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from artemis_cli.engine.db import DataEngine
from artemis_cli.errors import ArtemisError
from artemis_cli.memory.checklist import parse_items, plan_before, recited_plan, save_plan
from artemis_cli.memory.notes import list_notes, read_note, readable_content, recited_notes, save_note
from artemis_cli.memory.recall import Recall
from artemis_cli.operators.tools import ToolCall


def _text_arg(call: ToolCall, name: str) -> str | None:
    """An optional string argument. Taken from the validated args, else from what the model sent
    (``at`` and ``package`` are newer than the validator's list)."""
    value = call.args.get(name, call.call.args.get(name) if call.call is not None else None)
    if value is None or isinstance(value, str):
        return value
    return str(value)


@dataclass
class MemoryTools:
    engine: DataEngine
    session_id: str
    recall: Recall
    enabled: bool = True
    max_results: int = 5
    max_text_tokens: int = 2000

    def recited(self) -> list[str]:
        """The saved notes as the current observation recites them (newest first, bounded)."""
        return recited_notes(list_notes(self.engine, self.session_id))

    def recited_plan(self, step: int | None = None) -> str | None:
        """The plan the model set (``plan``) as the observation of ``step`` recites it: the newest
        one set before this turn (``step`` None: the newest); None when it never set one."""
        return recited_plan(plan_before(self.engine, self.session_id, step))

    def handler(self, step: int) -> Callable[[ToolCall], dict[str, Any]]:
        def handle(call: ToolCall) -> dict[str, Any]:
            try:
                return self._handle(call, step)
            except ArtemisError as exc:
                return {"error": str(exc) + (f" ({exc.hint})" if exc.hint else "")}

        return handle

    def _handle(self, call: ToolCall, step: int) -> dict[str, Any]:
        a = call.args
        if call.name == "save_note":
            version = save_note(self.engine, self.session_id, a["key"], a["content"], step)
            return {"saved": a["key"], "version": version}
        if call.name == "plan":
            plan = save_plan(self.engine, self.session_id, parse_items(a["items"]), step)
            return {"saved": "plan", "version": plan.version, "items": len(plan.items), "done": plan.done,
                    "shown": "from the next turn on, with every observation"}
        if call.name == "read_note":
            note = read_note(self.engine, self.session_id, a["key"])
            if note is None:
                return {"error": f"no note named {a['key']!r}"}
            content, cut = readable_content(note.content)
            reply: dict[str, Any] = {"key": note.key, "content": content, "written_at_step": note.step,
                                     "version": note.version}
            if cut:
                reply["truncated"] = True
                reply["total_chars"] = len(note.content)
            return reply
        if not self.enabled:
            return {"error": "recall_history is disabled in this profile"}
        result = self.recall.recall(
            self.session_id,
            a.get("query") or "",
            step_range=a.get("step_range"),
            at=_text_arg(call, "at"),
            package=_text_arg(call, "package"),
            include_details=bool(a.get("include_details")),
            include_images=bool(a.get("include_images")),
            max_results=min(int(a.get("max_results") or self.max_results), self.max_results),
            max_text_tokens=self.max_text_tokens,
        )
        answer: dict[str, Any] = {"results": result.render(), "steps": result.steps}
        if result.image is not None:
            answer["_image_png"] = result.image.png  # sent as an image part after the answers
        return answer
