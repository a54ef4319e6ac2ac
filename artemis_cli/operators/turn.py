"""One operator turn: call the model until it yields exactly one valid action (SPEC §9).

Memory tools are pre-decision: they are answered inside the turn and the model is called again.
Malformed calls (unknown tool, bad arguments, an index that does not exist, two actions at once)
are answered with an error the model can correct; a reply without a tool call gets a corrective
user text. The model's reply stays in the turn unchanged (thought signatures are echoed).

A reply with nothing to answer (``ModelOutputError``: ``MALFORMED_FUNCTION_CALL``, an empty
candidate) is retried with the identical request: there is no model content to put in the
transcript (an empty model turn is invalid, a made-up one would be a lie), so nothing is added.
The prompt stays byte-stable, and the attempts re-render to the same recorded hash
(``memory.turn_check`` counts a repeated request once), so resume and ``sessions prompt`` keep
matching.

Every reply without a usable action counts against the answering model: after
``MAX_CORRECTIVE_RETRIES`` corrective retries the turn goes on with the next model of the
fallback chain (``fallbacks``). When the last model has used up its retries, a reply with
nothing in it ends the run (``ModelOutputError``, exit 1, naming the finish reason); replies
with content keep being corrected until ``max_calls`` replies, after which the turn ends without
an action and the step records that as an error.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from artemis_cli.errors import ModelOutputError
from artemis_cli.models.base import FunctionResponse, Message, ModelRequest, ModelResponse, Part
from artemis_cli.operators.act import PlannedAction, plan_action
from artemis_cli.operators.observe import Observation
from artemis_cli.operators.tools import ToolCall, ToolCallError, validate_call

MemoryHandler = Callable[[ToolCall], dict[str, Any]]
Generate = Callable[[ModelRequest], ModelResponse]

#: Corrective retries one model gets within a turn after replies without a usable action
#: (malformed or empty answers, no tool call, invalid calls); then the next model of the chain.
MAX_CORRECTIVE_RETRIES = 2


@dataclass
class TurnResult:
    action: PlannedAction | None
    call: ToolCall | None
    messages: list[Message] = field(default_factory=list)
    responses: list[ModelResponse] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    #: Replies to memory calls made in the same message as the action; sent with its result.
    pending_replies: list[FunctionResponse] = field(default_factory=list)
    #: Text any call of this turn meant to type into a password field (the action's and any
    #: rejected call's): never recorded; the step writer redacts it from the stored turn.
    secrets: list[str] = field(default_factory=list)

    @property
    def thought(self) -> str:
        return model_text(self.messages)


def model_text(messages: list[Message]) -> str:
    """The model's text parts, one per line."""
    return "\n".join(p.text for m in messages if m.role == "model" for p in m.parts if p.text)


def not_available(call: ToolCall) -> dict[str, Any]:
    return {"error": f"{call.name} is not available yet in this version of Artemis"}


def run_turn(
    build_request: Callable[[list[Message]], ModelRequest],
    generate: Callable[[ModelRequest], ModelResponse],
    obs: Observation,
    *,
    packages: Callable[[], list[str]],
    launchable: Callable[[], list[str] | None] | None = None,
    memory: MemoryHandler = not_available,
    max_calls: int = 6,
    fallbacks: Sequence[Generate] = (),
    secrets: Mapping[str, str] | None = None,
) -> TurnResult:
    """Call ``generate`` (then each of ``fallbacks`` in turn, see the module docstring) until
    one valid action; ``max_calls`` bounds the replies with content; ``secrets``: the task's
    secret values by name, for ``type_text(secret=NAME)``."""
    result = TurnResult(action=None, call=None)
    chain = [generate, *fallbacks]
    current = 0  # the model of the chain answering now
    faults = 0  # its replies without a usable action in this turn
    failed = 0  # such replies in this turn, every model
    answered = 0  # replies with content
    tried: list[str] = []
    while answered < max_calls:
        if faults > MAX_CORRECTIVE_RETRIES and current + 1 < len(chain):
            result.problems.append(f"no usable action from {tried[-1]} after {faults} replies; next model of the chain")
            current, faults = current + 1, 0
        try:
            response = chain[current](build_request(result.messages))
        except ModelOutputError as exc:
            attempts = getattr(exc, "attempts", None) or []
            model = attempts[-1].model if attempts else f"model {current + 1} of the chain"
            _note_model(tried, model)
            faults, failed = faults + 1, failed + 1
            result.problems.append(f"{exc.reason} from {model}")
            if faults > MAX_CORRECTIVE_RETRIES and current + 1 >= len(chain):
                what = _REASON_TEXT.get(exc.reason, f"finish reason {exc.reason}")
                raise ModelOutputError(
                    f"the model gave no usable action after {failed} attempts ({what}; tried {', '.join(tried)})",
                    reason=exc.reason,
                    finish_message=exc.finish_message,
                ) from None
            continue  # the identical request again: nothing came back to put in the transcript
        answered += 1
        _note_model(tried, response.model)
        result.responses.append(response)
        message = response.message
        result.messages.append(message)
        calls = message.function_calls()
        if not calls:
            faults, failed = faults + 1, failed + 1
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
                launch = tc.name in ("launch_app", "stop_app")
                planned = plan_action(tc, obs, packages() if launch else None,
                                      launchable=launchable if launch else None,
                                      secrets=secrets) if tc.is_action else None
                if planned is not None and planned.secret:
                    result.secrets.append(planned.secret)
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
        if errors or actions:  # a memory-only round is pre-decision work, not a fault
            faults, failed = faults + 1, failed + 1
        parts = [Part(function_response=r) for r in ordered_responses(calls, replies)]
        parts += [Part(image_png=img) for img in images]
        result.messages.append(Message("user", parts))
    return result


_REASON_TEXT = {
    "EMPTY_CANDIDATE": "empty candidates",
    "NO_CANDIDATES": "no candidates",
    # OpenAI-compatible endpoints (models/openai_wire.py)
    "MALFORMED_ARGUMENTS": "tool-call arguments that are not JSON",
    "LENGTH": "replies cut off at the token limit",
    "NO_JSON_ACTION": "replies without a JSON action (tool_calls: text)",
    "NO_CHOICES": "no choices",
    "EMPTY_MESSAGE": "empty messages",
}


def _note_model(tried: list[str], model: str) -> None:
    if model not in tried:
        tried.append(model)


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
