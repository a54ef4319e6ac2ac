"""One operator turn: call the model until it yields exactly one valid action (SPEC §9).

Memory tools are pre-decision: they are answered inside the turn and the model is called again.
Malformed calls (unknown tool, bad arguments, an index that does not exist, two actions at once)
are answered with an error the model can correct. A turn that produces no valid action within
``max_calls`` model calls ends without an action; the step records that as an error.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from artemis_cli.models.base import FunctionResponse, Message, ModelRequest, ModelResponse, Part
from artemis_cli.operators.act import PlannedAction, plan_action
from artemis_cli.operators.observe import Observation
from artemis_cli.operators.tools import ToolCall, ToolCallError, validate_call

MemoryHandler = Callable[[ToolCall], dict[str, Any]]


@dataclass
class TurnResult:
    action: PlannedAction | None
    call: ToolCall | None
    messages: list[Message] = field(default_factory=list)
    responses: list[ModelResponse] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    #: Replies to memory calls made in the same message as the action; sent with its result.
    pending_replies: list[FunctionResponse] = field(default_factory=list)

    @property
    def thought(self) -> str:
        texts: list[str] = []
        for m in self.messages:
            if m.role == "model":
                texts.extend(p.text for p in m.parts if p.text)
        return "\n".join(texts)


def not_available(call: ToolCall) -> dict[str, Any]:
    return {"error": f"{call.name} is not available yet in this version of Artemis"}


def run_turn(
    build_request: Callable[[list[Message]], ModelRequest],
    generate: Callable[[ModelRequest], ModelResponse],
    obs: Observation,
    *,
    packages: Callable[[], list[str]],
    memory: MemoryHandler = not_available,
    max_calls: int = 6,
) -> TurnResult:
    result = TurnResult(action=None, call=None)
    for _ in range(max_calls):
        response = generate(build_request(result.messages))
        result.responses.append(response)
        message = response.message
        result.messages.append(message)
        calls = message.function_calls()
        if not calls:
            result.problems.append("no tool call")
            result.messages.append(
                Message("user", [Part(text="Call exactly one action tool (or finish) to continue.")])
            )
            continue
        replies: list[FunctionResponse] = []
        images: list[bytes] = []

        def answer(tc: ToolCall, images: list[bytes] = images) -> FunctionResponse:
            data = dict(memory(tc))
            image = data.pop("_image_png", None)
            if isinstance(image, bytes):
                images.append(image)
            return FunctionResponse(tc.name, data, tc.call.id)

        valid: list[tuple[ToolCall, Any]] = []
        errors = 0
        for fc in calls:
            try:
                tc = validate_call(fc)
                planned = plan_action(tc, obs, packages() if tc.name == "launch_app" else None) if tc.is_action else None
                valid.append((tc, planned))
            except ToolCallError as exc:
                errors += 1
                replies.append(FunctionResponse(fc.name, {"error": str(exc)}, fc.id))
                valid.append((None, None))  # type: ignore[arg-type]
        actions = [(tc, p) for tc, p in valid if tc is not None and tc.is_action]
        if len(actions) == 1 and errors == 0:
            # Answer memory calls made alongside the action, then the action ends the turn.
            for tc, _ in valid:
                if not tc.is_action:
                    replies.append(answer(tc))
            result.call, result.action = actions[0]
            result.pending_replies = replies
            return result
        if len(actions) > 1:
            result.problems.append("several actions in one turn")
        for tc, _ in valid:
            if tc is None:
                continue
            if tc.is_action:
                why = (
                    "exactly one action per turn; none was executed"
                    if len(actions) > 1
                    else "not executed because another call in this turn was invalid"
                )
                replies.append(FunctionResponse(tc.name, {"error": why}, tc.call.id))
            else:
                replies.append(answer(tc))
        if errors:
            result.problems.append("invalid tool call")
        parts = [Part(function_response=r) for r in ordered_responses(calls, replies)]
        parts += [Part(image_png=img) for img in images]
        result.messages.append(Message("user", parts))
    return result


def ordered_responses(calls: list[Any], replies: list[FunctionResponse]) -> list[FunctionResponse]:
    """Function responses in the order of the calls (one per call)."""
    pool = list(replies)
    out = []
    for fc in calls:
        for i, r in enumerate(pool):
            if r.name == fc.name and r.id == fc.id:
                out.append(pool.pop(i))
                break
    return out + pool
