"""The Flash operator loop (SPEC §9): observe → decide → act → record, one step at a time.

Each step is committed to the DataEngine in one transaction (pre/post screenshots, UI XML,
action with hit-tested semantics, hashes) before the next action is sent. The post-observation of
step N is the pre-observation of step N+1, so the device is captured once per step.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from artemis_cli.device.protocol import Device
from artemis_cli.engine.db import DataEngine
from artemis_cli.engine.records import EventRecord, LlmCallRecord, StepRecord
from artemis_cli.errors import DeviceOffline, ModelError, ModelUnavailable
from artemis_cli.models.base import FunctionResponse, Message, Model, ModelRequest, ModelResponse
from artemis_cli.operators.act import REDACTED, ActionResult, PlannedAction, execute
from artemis_cli.operators.history import History, TurnInput
from artemis_cli.operators.observe import Observation, observe
from artemis_cli.operators.prompts import SYSTEM_PROMPT, observation_text, task_message
from artemis_cli.operators.tools import tool_declarations
from artemis_cli.operators.turn import TurnResult, ordered_responses, run_turn
from artemis_cli.perception.dhash import hamming


def now_iso() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds")


@dataclass
class StepReport:
    """What the live display shows for one step."""

    number: int
    phrase: str
    target: str
    status: str
    detail: str
    prompt_tokens: int
    cached_tokens: int
    elapsed_s: float
    thought: str


@dataclass
class LoopOutcome:
    steps: int = 0
    finished: bool = False
    model_success: bool | None = None
    answer: str = ""
    stop_reason: str = "max_steps"  # finished | max_steps | device_offline | model_unavailable | model_error
    stop_message: str = ""
    final: Observation | None = None
    prompt_tokens: int = 0
    cached_tokens: int = 0
    completion_tokens: int = 0


@dataclass
class FlashLoop:
    session_id: str
    engine: DataEngine
    device: Device
    model: Model
    goal: str
    max_steps: int
    screen: tuple[int, int]
    coordinates: str = "pixels"
    app: str | None = None
    injections: dict[int, list[str]] = field(default_factory=dict)
    real_time: bool = True
    on_step: Callable[[StepReport], None] | None = None
    on_notice: Callable[[str], None] | None = None
    t0: float = field(default_factory=time.monotonic)
    _packages: list[str] | None = None

    def __post_init__(self) -> None:
        self.history = History(SYSTEM_PROMPT, tool_declarations(self.coordinates))
        self.task_text = task_message(self.goal, app=self.app, max_steps=self.max_steps)

    # -- helpers -----------------------------------------------------------------------------

    def offset_ms(self, at: float | None = None) -> int:
        return int(((at if at is not None else time.monotonic()) - self.t0) * 1000)

    def packages(self) -> list[str]:
        if self._packages is None:
            out = self.device.shell("pm list packages")
            self._packages = [ln.split(":", 1)[1].strip() for ln in out.splitlines() if ln.startswith("package:")]
        return self._packages

    def _event(self, step: int | None, kind: str, payload: dict[str, Any]) -> None:
        self.engine.record_event(EventRecord(session_id=self.session_id, step=step, kind=kind, payload=payload))

    def observe(self, step: int | None) -> Observation:
        def problem(what: str, detail: str) -> None:
            self._event(step, "device_fault", {"what": what, "detail": detail})
            if self.on_notice:
                self.on_notice(f"{what}: {detail} (retrying)")

        return observe(self.device, self.screen, self.coordinates, on_problem=problem, sleep=self._sleep)

    def _sleep(self, seconds: float) -> None:
        if self.real_time:
            time.sleep(seconds)

    def _generate(self, step: int) -> Callable[[ModelRequest], ModelResponse]:
        def generate(request: ModelRequest) -> ModelResponse:
            try:
                response = self.model.generate(request)
            except ModelError as exc:
                for attempt in getattr(exc, "attempts", []) or []:
                    self._record_call(step, request, attempt.model, attempt.usage, attempt.latency_ms,
                                      attempt.status, attempt.error_class)
                raise
            attempts = response.attempts
            if attempts:
                for attempt in attempts:
                    self._record_call(step, request, attempt.model, attempt.usage, attempt.latency_ms,
                                      attempt.status, attempt.error_class)
            else:
                self._record_call(step, request, response.model, response.usage, response.latency_ms, "ok", None)
            return response

        return generate

    def _record_call(self, step: int, request: ModelRequest, model: str, usage: Any, latency_ms: float,
                     status: str, error_class: str | None) -> None:
        self.engine.record_llm_call(
            LlmCallRecord(
                session_id=self.session_id,
                step=step,
                role=request.role,
                model=model,
                prompt_tokens=usage.prompt_tokens,
                cached_tokens=usage.cached_tokens,
                completion_tokens=usage.completion_tokens,
                thoughts_tokens=usage.thoughts_tokens,
                latency_ms=latency_ms,
                status=status,
                error_class=error_class,
                prefix_hash=request.prefix_hash(),
                request_hash=request.request_hash(),
            )
        )

    # -- the loop ----------------------------------------------------------------------------

    def run(self, start_step: int = 1) -> LoopOutcome:
        out = LoopOutcome()
        try:
            obs = self.observe(start_step)
        except DeviceOffline as exc:
            out.stop_reason, out.stop_message = "device_offline", str(exc)
            return out
        pending: list[FunctionResponse] = []
        for number in range(start_step, self.max_steps + 1):
            step_t0 = time.monotonic()
            started_at = now_iso()
            users = self.injections.get(number, [])
            for text in users:
                self._event(number, "user_instruction", {"text": text, "source": "task"})
            notices = list(obs.problems)
            current = TurnInput(
                step=number,
                responses=pending,
                observation_text=observation_text(
                    step=number,
                    max_steps=self.max_steps,
                    offset_ms=self.offset_ms(obs.captured_at),
                    foreground_app=obs.foreground,
                    screen_size=self.screen,
                    coordinates=self.coordinates,
                    element_list=obs.element_list,
                    notices=notices,
                    user_instructions=users,
                ),
                image_png=obs.png,
                task_text=self.task_text if number == start_step and not self.history.committed else None,
            )
            def build(msgs: list[Message], cur: TurnInput = current) -> ModelRequest:
                return self.history.request(cur, msgs)

            try:
                turn = run_turn(
                    build,
                    self._generate(number),
                    obs,
                    packages=self.packages,
                )
            except ModelError as exc:
                out.stop_reason = "model_unavailable" if isinstance(exc, ModelUnavailable) else "model_error"
                out.stop_message = str(exc)
                self._event(number, "model_error", {"error": type(exc).__name__, "message": str(exc)})
                out.final = obs
                return out
            for r in turn.responses:
                out.prompt_tokens += r.usage.prompt_tokens
                out.cached_tokens += r.usage.cached_tokens
                out.completion_tokens += r.usage.completion_tokens

            post = obs
            if turn.action is None:
                result = ActionResult("error", "the model produced no valid action: " + "; ".join(turn.problems))
                action = PlannedAction("none", {})
            else:
                action = turn.action
                try:
                    result = execute(action, self.device, real_time=self.real_time)
                except DeviceOffline as exc:
                    # The action's effect is unknown: never re-send it; re-observe first.
                    self._event(number, "device_fault", {"what": "action", "detail": str(exc)})
                    result = ActionResult("error", f"connection dropped during the action; effect unknown ({exc})")
                if result.status != "finished":
                    try:
                        post = self.observe(number)
                    except DeviceOffline as exc:
                        self._record(number, started_at, step_t0, obs, None, action, result, turn, users)
                        out.steps = number
                        out.stop_reason, out.stop_message = "device_offline", str(exc)
                        out.final = obs
                        return out
            self._record(number, started_at, step_t0, obs, post, action, result, turn, users)
            out.steps = number
            last = turn.responses[-1].usage if turn.responses else None
            if self.on_step:
                self.on_step(
                    StepReport(
                        number=number,
                        phrase=action.phrase(),
                        target=action.target.text or action.target.content_desc or action.target.resource_id,
                        status=result.status,
                        detail=result.detail,
                        prompt_tokens=last.prompt_tokens if last else 0,
                        cached_tokens=last.cached_tokens if last else 0,
                        elapsed_s=time.monotonic() - self.t0,
                        thought=turn.thought,
                    )
                )
            if result.status == "finished":
                out.finished = True
                out.model_success = bool(action.args.get("success"))
                out.answer = str(action.args.get("answer", ""))
                out.stop_reason = "finished"
                out.final = post
                return out
            if turn.call is not None:
                changed = post.dhash != obs.dhash or post.xml_sha != obs.xml_sha
                reply: dict[str, Any] = {"status": result.status, "screen_changed": changed}
                if result.detail:
                    reply["detail"] = result.detail
                action_reply = FunctionResponse(turn.call.name, reply, turn.call.call.id)
                last_model = next(m for m in reversed(turn.messages) if m.role == "model")
                pending = ordered_responses(last_model.function_calls(), [*turn.pending_replies, action_reply])
            else:
                pending = []
            self.history.commit(current, turn.messages)
            obs = post
        out.final = obs
        return out

    def _record(
        self,
        number: int,
        started_at: str,
        step_t0: float,
        pre: Observation,
        post: Observation | None,
        action: PlannedAction,
        result: ActionResult,
        turn: TurnResult,
        users: list[str],
    ) -> None:
        messages = [m.to_dict() for m in turn.messages]
        thought = turn.thought
        if action.secret:  # text typed into a password field is never stored (SPEC §5.5)
            raw = json.dumps(messages, ensure_ascii=False).replace(
                json.dumps(action.secret, ensure_ascii=False)[1:-1], REDACTED
            )
            messages = json.loads(raw)
            thought = thought.replace(action.secret, REDACTED)
        blobs: dict[str, tuple[bytes, str]] = {
            "pre_screenshot": (pre.png, "screenshot"),
            "ui_xml": (pre.xml.encode("utf-8"), "ui_xml"),
        }
        if post is not None and post is not pre:
            blobs["post_screenshot"] = (post.png, "screenshot")
            blobs["post_ui_xml"] = (post.xml.encode("utf-8"), "ui_xml")
        elif post is pre:
            blobs["post_screenshot"] = (pre.png, "screenshot")
            blobs["post_ui_xml"] = (pre.xml.encode("utf-8"), "ui_xml")
        step = StepRecord(
            session_id=self.session_id,
            number=number,
            started_at=started_at,
            ended_at=now_iso(),
            offset_ms=self.offset_ms(step_t0),
            thought=thought,
            action_type=action.type,
            action_args=action.recorded_args,
            x=action.x,
            y=action.y,
            x2=action.x2,
            y2=action.y2,
            target=action.target.to_dict(),
            target_end=action.target_end.to_dict() if action.target_end else None,
            label_source=action.target.label_source,
            target_text=action.target.text or action.target.content_desc,
            target_resource_id=action.target.resource_id,
            target_class=action.target.class_name,
            result_status=result.status,
            result_detail=result.detail,
            pre_dhash=pre.dhash,
            post_dhash=post.dhash if post is not None else None,
            foreground_app=pre.foreground,
            user_instruction="\n".join(users) if users else None,
            summary_status="pending",
            meta={
                "messages": messages,
                "problems": turn.problems,
                "model_calls": len(turn.responses),
                "post_foreground_app": post.foreground if post is not None else None,
                "dhash_distance": hamming(pre.dhash, post.dhash) if post is not None else None,
            },
        )
        self.engine.record_step(step, blobs=blobs)
