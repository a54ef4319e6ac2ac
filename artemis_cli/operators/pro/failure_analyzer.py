"""The Pro failure analyzer (SPEC §9): recovery actions after repeated failures.

Actions are in the operator's tool vocabulary and are validated with the operator's own
``validate_call`` (memory tools and ``finish`` are refused). The loop executes them inside the
step and records each as a sub-action: an ``EventRecord(kind=RECOVERY_EVENT, payload=
recovery_payload(...))`` on the step (the hit-tested target, as for a normal action), which band ③
shows as ``  - recovery: tap Switch "Wi-Fi" (id wifi_switch) @(962,348) -> ok`` and
``compile_view`` by its ``phrase``. Fallback when the model gives up: no actions (``[]``).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from artemis_cli.engine.db import DataEngine
from artemis_cli.memory.ledger_lines import recovery_line
from artemis_cli.models.base import FunctionCall, Model
from artemis_cli.operators.act import PlannedAction
from artemis_cli.operators.outcome import ActionOutcome
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
    "recovery_payload",
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
        """The proposal alone (a recovery that was rejected before it ran)."""
        return {"tool": self.tool, "args": dict(self.args), "phrase": self.phrase()}

    @classmethod
    def from_payload(cls, payload: dict[str, Any]) -> RecoveryAction:
        return cls(str(payload.get("tool", "")), dict(payload.get("args") or {}))


def recovery_payload(rec: RecoveryAction, planned: PlannedAction, result: ActionOutcome) -> dict[str, Any]:
    """The ``RECOVERY_EVENT`` payload of an executed recovery action: the recorded args (a typed
    password stays redacted), the hit-tested target(s) and point(s) it was sent to, its observed
    outcome (``assess``: ok only when its effect was seen; with what was seen),
    and ``phrase``, the action with its element semantics (``tap Switch "Wi-Fi" (id wifi_switch)
    @(962,348)``) as band ③ sub-lines and the auxiliary views show it; ``proposal`` is what the
    analyzer asked for (``tap index 4``)."""
    payload: dict[str, Any] = {
        "tool": planned.type,
        "args": planned.recorded_args,
        "proposal": rec.phrase(),
        "x": planned.x,
        "y": planned.y,
        "target": planned.target.to_dict(),
    }
    if planned.x2 is not None:
        payload.update(x2=planned.x2, y2=planned.y2)
    if planned.target_end is not None:
        payload["target_end"] = planned.target_end.to_dict()
    payload["phrase"] = recovery_line(payload)
    head = result.status if not result.detail or result.status == "ok" else f"{result.status}: {result.detail}"
    if result.summary:  # what was seen: the operator is told what the recovery did
        head += (", " if result.status == "ok" else "; ") + result.summary
    payload["result"] = head
    return payload


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


def recovery_lines(engine: DataEngine, session_id: str, start: int, end: int) -> dict[int, list[str]]:
    """Step -> its failure-analyzer recovery sub-lines (band ③ text, with element semantics)."""
    out: dict[int, list[str]] = {}
    if start > end:
        return out
    for ev in engine.events(session_id, kind=RECOVERY_EVENT):
        if ev.step is not None and start <= ev.step <= end:
            out.setdefault(ev.step, []).append(recovery_line(ev.payload))
    return out
