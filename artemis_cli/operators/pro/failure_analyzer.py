"""The Pro failure analyzer (SPEC §9): recovery actions after repeated failures.

Actions are in the operator's tool vocabulary and are validated with the operator's own
``validate_call`` (memory tools and ``finish`` are refused). The loop executes them inside the
step and records each as a sub-action: an ``EventRecord(kind=RECOVERY_EVENT, payload=
RecoveryAction.to_payload())`` on the step, which ``compile_view`` and band ③ show as
``  - recovery: <phrase>``. Fallback when the model gives up: no actions (``[]``).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from artemis_cli.models.base import FunctionCall, Model
from artemis_cli.operators.prompts import screen_fence
from artemis_cli.operators.tools import ToolCallError, validate_call

from .plan import Milestone
from .prompts import FAILURE_ANALYZER_SYSTEM_PROMPT, history_block
from .structured import Outcome, RecordCall, ReplyError, ask_structured

__all__ = [
    "MAX_RECOVERY_ACTIONS",
    "RECOVERY_EVENT",
    "RECOVERY_TOOLS",
    "FailureAnalyzer",
    "RecoveryAction",
    "failure_analyzer_request_text",
    "parse_failure_analyzer_reply",
]

RECOVERY_EVENT = "recovery_action"
RECOVERY_TOOLS = ("press_key", "tap", "long_press", "swipe", "launch_app", "wait", "type_text")
MAX_RECOVERY_ACTIONS = 3


@dataclass(frozen=True)
class RecoveryAction:
    tool: str
    args: dict[str, Any] = field(default_factory=dict)

    def to_call(self) -> FunctionCall:
        """The operator-tool call to execute."""
        return FunctionCall(self.tool, dict(self.args))

    def phrase(self) -> str:
        """``press_key back``, ``tap index 4``, ``swipe up``: the recovery sub-line text."""
        a = self.args
        if self.tool == "press_key":
            return f"press_key {a.get('key')}"
        if self.tool in ("tap", "long_press"):
            if "index" in a:
                return f"{self.tool} index {a['index']}"
            return f"{self.tool} @({a.get('x')},{a.get('y')})"
        if self.tool == "swipe" and "direction" in a:
            return f"swipe {a['direction']}" + (f" on index {a['index']}" if "index" in a else "")
        if self.tool == "launch_app":
            return f"launch_app {a.get('app')}"
        if self.tool == "wait":
            return f"wait {a.get('seconds')}s"
        return f"{self.tool} {json.dumps(a, ensure_ascii=False, sort_keys=True)}"

    def to_payload(self) -> dict[str, Any]:
        return {"tool": self.tool, "args": dict(self.args), "phrase": self.phrase()}

    @classmethod
    def from_payload(cls, payload: dict[str, Any]) -> RecoveryAction:
        return cls(str(payload.get("tool", "")), dict(payload.get("args") or {}))


def parse_failure_analyzer_reply(data: Any) -> list[RecoveryAction]:
    if isinstance(data, dict):
        raw = data.get("actions")
    else:
        raw = data
    if not isinstance(raw, list):
        raise ReplyError('expected an object with an "actions" list')
    if len(raw) > MAX_RECOVERY_ACTIONS:
        raise ReplyError(f"propose at most {MAX_RECOVERY_ACTIONS} actions, not {len(raw)}")
    out: list[RecoveryAction] = []
    for i, item in enumerate(raw):
        if not isinstance(item, dict):
            raise ReplyError(f"actions[{i}] must be an object with tool and args")
        tool = item.get("tool") or item.get("name")
        args = item.get("args", {})
        if not isinstance(tool, str) or not isinstance(args, dict):
            raise ReplyError(f'actions[{i}] needs a "tool" string and an "args" object')
        if tool not in RECOVERY_TOOLS:
            raise ReplyError(f"actions[{i}]: {tool!r} is not a recovery action; use one of {', '.join(RECOVERY_TOOLS)}")
        try:
            checked = validate_call(FunctionCall(tool, args))
        except ToolCallError as exc:
            raise ReplyError(f"actions[{i}] ({tool}): {exc}") from None
        out.append(RecoveryAction(checked.name, dict(checked.args)))
    return out


def failure_analyzer_request_text(
    compiled_history: str, elements: str | Sequence[str], milestone: Milestone | None
) -> str:
    body = elements if isinstance(elements, str) else "\n".join(elements)
    ms = f"{milestone.title} ({milestone.tag})" if milestone is not None else "(no milestone)"
    return "\n".join(
        [
            "# MILESTONE",
            ms,
            "",
            *history_block(compiled_history),
            "",
            "# CURRENT SCREEN",
            *screen_fence(body.strip(), "(no elements)"),
            "",
            "Propose the recovery actions.",
        ]
    )


class FailureAnalyzer:
    role = "failure_analyzer"

    def __init__(self, model: Model, *, record_call: RecordCall | None = None) -> None:
        self.model = model
        self.record_call = record_call
        self.last_outcome: Outcome[list[RecoveryAction]] | None = None

    def recover(
        self, compiled_history: str, elements: str | Sequence[str], milestone: Milestone | None
    ) -> list[RecoveryAction]:
        outcome = ask_structured(
            self.model,
            role=self.role,
            system=FAILURE_ANALYZER_SYSTEM_PROMPT,
            user_text=failure_analyzer_request_text(compiled_history, elements, milestone),
            parse=parse_failure_analyzer_reply,
            record_call=self.record_call,
        )
        self.last_outcome = outcome
        return list(outcome.value or [])
