"""The Flash operator loop (SPEC §9): observe → decide → act → record, one step at a time.

The prompt is the session's transcript ledger (SPEC §10.2). Each step is committed to the
DataEngine in one transaction (pre/post screenshots, UI XML, the action with hit-tested
semantics, hashes, and everything the ledger needs to rebuild this turn) before the next action
is sent; the ledger's decisions are recorded as events, so a resumed session re-renders the same
requests without a model call. The post-observation of step N is the pre-observation of N+1;
a post observation that already shows the action's effect is kept without a confirming capture
(settle mode ``observed``) and a later change of screen re-assesses step N before the model reads
step N+1 (``operators.settling``).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from artemis_cli.device.app_list import installed_packages, launchable_packages
from artemis_cli.device.protocol import Device
from artemis_cli.engine.clock import now_iso
from artemis_cli.engine.db import DataEngine
from artemis_cli.engine.lease import Lease
from artemis_cli.engine.records import EventRecord, LlmCallRecord
from artemis_cli.errors import (
    DeviceOffline,
    ModelAuthError,
    ModelError,
    ModelOutputError,
    ModelRefused,
    ModelUnavailable,
)
from artemis_cli.memory.ledger import LedgerDecision, Tail, TokenMeter, TranscriptLedger
from artemis_cli.memory.ledger_lines import recovery_line, verdict_phrase
from artemis_cli.memory.restore import LEDGER_EVENT, entry_from_step
from artemis_cli.memory.similarity import repeated_action, similar_step
from artemis_cli.models.base import FunctionResponse, Message, Model, ModelRequest, ModelResponse
from artemis_cli.operators.act import ActionResult, PlannedAction
from artemis_cli.operators.compression import Compressor
from artemis_cli.operators.memory_tools import MemoryTools
from artemis_cli.operators.observe import Observation, carry_logs, observe
from artemis_cli.operators.outcome import ActionOutcome, action_reply, assess, screen_fingerprint
from artemis_cli.operators.perform import Settling, perform
from artemis_cli.operators.prompts import observation_text
from artemis_cli.operators.recording import StepWriter, stated_intent
from artemis_cli.operators.settling import (
    LATE_EVENT,
    LateCheck,
    Unconfirmed,
    late_notice,
    late_payload,
    reassess,
)
from artemis_cli.operators.turn import Generate, TurnResult, ordered_responses, run_turn
from artemis_cli.perception.marks import marks_of

__all__ = ["FlashLoop", "LoopOutcome", "StepReport"]

#: The validator's reason in the action's function reply is cut to this many characters.
MAX_REPLY_REASON_CHARS = 160


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
    context_tokens: int = 0


@dataclass
class LoopOutcome:
    steps: int = 0
    finished: bool = False
    model_success: bool | None = None
    answer: str = ""
    #: finished | max_steps | device_offline | model_unavailable | model_error (a 4xx) |
    #: model_no_action (every model of the chain answered with nothing usable) | model_refused
    #: (a SAFETY stop, a blocked prompt) | model_config (the API key was rejected) | budget (the
    #: next call would pass ``--max-cost``) | rejoined (a heal found the recording again)
    stop_reason: str = "max_steps"
    stop_message: str = ""
    #: for ``budget``: (spent, the refused call's estimate, limit) in USD
    budget_usd: tuple[float, float, float] | None = None
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
    ledger: TranscriptLedger
    writer: StepWriter
    memory: MemoryTools
    max_steps: int
    screen: tuple[int, int]
    coordinates: str = "pixels"
    #: draw the element list's indices on the operator's screenshot (profile ``screenshot.marks``)
    marks: bool = True
    compressor: Compressor | None = None
    similarity_hint: bool = True
    similarity_max_distance: int = 5
    injections: dict[int, list[str]] = field(default_factory=dict)
    #: the task's secret values by name (``operators.secrets``): typed on ``type_text(secret=NAME)``,
    #: never sent to the model nor recorded
    secrets: dict[str, str] = field(default_factory=dict, repr=False)
    #: Lines the user typed during the run (stdin), taken at the start of the next step.
    user_inbox: Callable[[], list[str]] | None = None
    real_time: bool = True
    #: the floor: always wait this long after an action before observing
    settle_s: float = 0.0
    #: then watch the screen until it stops changing, at most this long from the action's end
    #: (0: fixed settle only); not in fast (simulated, real_time=False) runs
    settle_max_s: float = 2.0
    on_step: Callable[[StepReport], None] | None = None
    on_notice: Callable[[str], None] | None = None
    #: called with (step, post observation) once each step is committed; True ends the run with
    #: stop reason ``rejoined`` (a self-healing replay takes over again, ``replay.heal``)
    after_step: Callable[[int, Observation], bool] | None = None
    t0: float = field(default_factory=time.monotonic)
    offset_base_ms: int = 0  # a resumed session continues its clock
    decided_turn: int | None = None  # a resumed turn whose decisions are already recorded
    meter: TokenMeter = field(default_factory=TokenMeter)
    #: the session's lease: a process whose lease was taken over stops (``check_owner``)
    lease: Lease | None = None
    _packages: list[str] | None = None
    _launchable: tuple[list[str] | None] | None = None
    _context_tokens: int = 0
    _late: LateCheck | None = None

    # -- helpers -----------------------------------------------------------------------------

    def offset_ms(self, at: float | None = None) -> int:
        return self.offset_base_ms + int(((at if at is not None else time.monotonic()) - self.t0) * 1000)

    def packages(self) -> list[str]:
        if self._packages is None:
            self._packages = installed_packages(self.device)
        return self._packages

    def launchable(self) -> list[str] | None:
        """The packages with a launcher activity (None: the device cannot say), read once."""
        if self._launchable is None:
            self._launchable = (launchable_packages(self.device),)
        return self._launchable[0]

    def _event(self, step: int | None, kind: str, payload: dict[str, Any]) -> None:
        self.check_owner()
        self.engine.record_event(EventRecord(session_id=self.session_id, step=step, kind=kind, payload=payload))

    def check_owner(self) -> None:
        """``SessionTakenOver`` when another process took the session over: called before each
        step, each device action (recovery actions too) and each write of the loop (steps,
        events, model calls), so a process that lost its lease neither acts on the device nor
        writes to the session again."""
        if self.lease is not None:
            self.lease.check()

    def observe(self, step: int | None) -> Observation:
        def problem(what: str, detail: str) -> None:
            self._event(step, "device_fault", {"what": what, "detail": detail})
            if self.on_notice:
                self.on_notice(f"{what}: {detail} (retrying)")

        # reconnect backoff is real time even in fast (simulated) runs: a device needs it to return
        return observe(self.device, self.screen, self.coordinates, on_problem=problem, backoff_s=0.25,
                       sleep=time.sleep)

    def _sleep(self, seconds: float) -> None:
        if self.real_time:
            time.sleep(seconds)

    def _chain(self) -> list[Model]:
        """The operator model, then one model per later entry of its fallback chain (a model
        without a chain is its own chain): the turn moves along it when a model keeps giving
        no usable action (``operators.turn``)."""
        chain = getattr(self.model, "chain", None)
        with_chain = getattr(self.model, "with_chain", None)
        if not isinstance(chain, list) or len(chain) < 2 or with_chain is None:
            return [self.model]
        return [self.model, *(with_chain(chain[i:]) for i in range(1, len(chain)))]

    def _generate(self, step: int, model: Model | None = None) -> Generate:
        model = model or self.model

        def generate(request: ModelRequest) -> ModelResponse:
            try:
                response = model.generate(request)
            except (ModelError, ModelAuthError) as exc:
                for attempt in getattr(exc, "attempts", []) or []:
                    self._record_call(step, request, attempt.model, attempt.usage, attempt.latency_ms,
                                      attempt.status, attempt.error_class, attempt.wire_hash)
                if isinstance(exc, ModelOutputError):  # the turn asks again (or the next model)
                    attempts = getattr(exc, "attempts", None) or []
                    name = attempts[-1].model if attempts else model.name
                    self._event(step, "model_fault", {"model": name, "reason": exc.reason})
                    if self.on_notice:
                        self.on_notice(f"{name} gave no usable reply ({exc.reason})")
                raise
            if response.attempts:
                for attempt in response.attempts:
                    self._record_call(step, request, attempt.model, attempt.usage, attempt.latency_ms,
                                      attempt.status, attempt.error_class, attempt.wire_hash)
            else:
                self._record_call(step, request, response.model, response.usage, response.latency_ms, "ok", None)
            self.meter.observe(request, response.usage.prompt_tokens)
            return response

        return generate

    def _record_call(self, step: int, request: ModelRequest, model: str, usage: Any, latency_ms: float,
                     status: str, error_class: str | None, wire_hash: str | None = None) -> None:
        self.check_owner()
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
                wire_hash=wire_hash,
            )
        )

    # -- the turn's prompt -------------------------------------------------------------------

    def _notices(self, number: int, obs: Observation) -> list[str]:
        notices = list(obs.problems)
        history = self.writer.history
        if self.similarity_hint:
            hint = similar_step(
                history,  # StepTraces are tuples in the layout similar_step reads
                obs.dhash,
                current_screen=screen_fingerprint(obs),
                current_step=number,
                max_distance=self.similarity_max_distance,
            )
            if hint is not None:
                notices.append(hint.render())
        if len(history) >= 2:
            last = history[-1]
            # the last two recorded steps are all three-in-a-row looks at (history is in step order)
            if repeated_action([(h.step, h.dhash, h.key) for h in history[-2:]], obs.dhash, last.key, times=3):
                notices.append(
                    f"You did the same action ({last.phrase}) on this same screen in the last two steps "
                    "and the screen did not change; try something different."
                )
        return notices

    # -- hooks the Pro loop fills in (the Flash loop has the model's own plan, no validator or milestones) --

    def prepare_turn(self, number: int, obs: Observation) -> None:
        return None

    def plan_recitation(self, number: int) -> str | None:
        """The plan recited in step ``number``'s observation: the model's own (``plan`` tool)."""
        return self.memory.recited_plan(number)

    def stamp(self) -> tuple[str, str] | None:
        """(milestone hash, milestone title) this step serves."""
        return None

    def after_action(
        self, number: int, pre: Observation, post: Observation | None, action: PlannedAction, turn: TurnResult,
        result: ActionResult,
    ) -> tuple[dict[str, Any] | None, list[EventRecord], Observation | None]:
        """(validator verdict, sub-action events, post observation) once the action ran."""
        return None, [], post

    def after_commit(self, number: int, stored: Any) -> None:
        return None

    def milestone_switch(self, number: int) -> tuple[int, str | None] | None:
        """(switch step, previous milestone) when the last committed step's stamp differs from the
        one before it; the Flash loop has no milestones."""
        return None

    def _begin_turn(self, number: int, tail: Tail) -> None:
        def summaries(step: int) -> tuple[str, str | None]:
            rec = self.engine.get_step(self.session_id, step)
            return rec.summary_status, rec.summary

        probe = self.ledger.request(tail, [])
        self._context_tokens = self.meter.context_tokens(probe)
        measured = [self.ledger.applied, self._context_tokens]

        def measure() -> int:
            """This turn's request as the decisions so far left it (rendered again only after a
            decision changed the ledger: the budget check asks after each of its steps)."""
            if self.ledger.applied != measured[0]:
                measured[:] = [self.ledger.applied, self.meter.context_tokens(self.ledger.request(tail, []))]
            return measured[1]

        if number == self.decided_turn:
            return  # resumed mid-turn: this turn's decisions were taken and replayed already
        compressor = self.compressor

        def compress() -> list[LedgerDecision]:
            if compressor is None:
                return []
            try:
                return compressor.on_turn(number, self._context_tokens, self.milestone_switch(number),
                                          measure=measure)
            except Exception as exc:  # compression is an optimisation: never let it end a run
                self._event(number, "compression_error", {"error": f"{type(exc).__name__}: {exc}"[:500]})
                if self.on_notice:
                    self.on_notice(f"compression skipped this turn: {exc}")
                return []

        decisions = self.ledger.begin_turn(number, summaries, compress=compress)
        self.check_owner()  # the turn's decisions and the "turn" event closing them: one write
        self.engine.record_events(EventRecord(session_id=self.session_id, step=number, kind=LEDGER_EVENT,
                                              payload=d.to_dict())
                                  for d in [*decisions, LedgerDecision("turn", at=number)])

    # -- a late change after a step's observed settle ---------------------------------------

    def _confirm(self, number: int, obs: Observation) -> tuple[Observation, list[str]]:
        """This step's observation and the notices it adds: when the screen changed after the
        previous step's post observation (settled ``observed``), the screen is observed again and
        the previous step's outcome measured on it, recorded as a ``late_change`` event on that
        step and told to the model; the stored post observation stays what it was judged on."""
        u = self._late.changed() if self._late is not None else None
        if u is None:
            return obs, []
        try:
            later = carry_logs(obs, self.observe(number))
        except DeviceOffline:
            return obs, []  # the observation stands; the next observation will fail in turn
        payload = late_payload(u, later, reassess(u, later))
        self._event(u.step, LATE_EVENT, payload)
        notice = late_notice(u.step, payload)
        return later, [notice] if notice else []

    def _watching(self) -> bool:
        return self.real_time and self.settle_max_s > 0

    def _settling(self) -> Settling:
        return Settling(floor_s=self.settle_s, max_s=self.settle_max_s, watch=self._watching())

    # -- the loop ----------------------------------------------------------------------------

    def run(self, start_step: int = 1, pending: list[FunctionResponse] | None = None) -> LoopOutcome:
        out = LoopOutcome()
        try:
            obs = self.observe(start_step)
        except DeviceOffline as exc:
            out.stop_reason, out.stop_message = "device_offline", str(exc)
            return out
        pending = list(pending or [])
        if self._watching():
            self._late = LateCheck(self.device)
        return self._run(out, obs, start_step, pending)

    def _run(self, out: LoopOutcome, obs: Observation, start_step: int, pending: list[FunctionResponse]) -> LoopOutcome:
        for number in range(start_step, self.max_steps + 1):
            self.check_owner()
            step_t0 = time.monotonic()
            started_at = now_iso()
            obs, late = self._confirm(number, obs)
            self.prepare_turn(number, obs)
            stamp = self.stamp()
            typed = self.user_inbox() if self.user_inbox else []
            users = [*self.injections.get(number, []), *typed]
            for text in users:
                source = "stdin" if text in typed else "task"
                self._event(number, "user_instruction", {"text": text, "source": source})
            observation = observation_text(
                step=number,
                max_steps=self.max_steps,
                offset_ms=self.offset_ms(obs.captured_at),
                foreground_app=obs.foreground,
                screen_size=(obs.space.width, obs.space.height),
                coordinates=self.coordinates,
                element_list=obs.element_list,
                notices=[*late, *self._notices(number, obs)],
                user_instructions=users,
                plan=self.plan_recitation(number),
                keyboard_shown=obs.keyboard_shown,
                notes=self.memory.recited(),
            )
            tail = Tail(step=number, replies_in=pending, observation=observation, image_png=obs.model_screenshot(),
                        marks=marks_of(obs.elements) if self.marks else ())
            self._begin_turn(number, tail)

            def build(msgs: list[Message], tail: Tail = tail) -> ModelRequest:
                return self.ledger.request(tail, msgs)

            chain = self._chain()
            try:
                turn = run_turn(build, self._generate(number), obs, packages=self.packages,
                                launchable=self.launchable, memory=self.memory.handler(number),
                                fallbacks=[self._generate(number, m) for m in chain[1:]], secrets=self.secrets)
            except (ModelError, ModelAuthError) as exc:
                out.stop_reason, out.stop_message = _model_stop(exc)
                self._event(number, "model_error", {"error": type(exc).__name__, "message": str(exc)})
                out.final = obs
                return out
            for r in turn.responses:
                out.prompt_tokens += r.usage.prompt_tokens
                out.cached_tokens += r.usage.cached_tokens
                out.completion_tokens += r.usage.completion_tokens

            post: Observation | None = obs
            if turn.action is None:
                result = ActionResult("error", "the model produced no valid action: " + "; ".join(turn.problems))
                action = PlannedAction("none", {})
                outcome = assess(action, result, obs, post)
                sent, result = result, ActionResult(outcome.status, outcome.detail, result.typing)
            else:
                action = turn.action

                def take(n: int = number) -> Observation:
                    return self.observe(n)

                def dropped(detail: str, n: int = number) -> None:
                    # the action's effect is unknown: never re-send it; re-observe first
                    self._event(n, "device_fault", {"what": "action", "detail": detail})

                # the lease is checked again just before the device is touched: the model's turn
                # may have outlasted it
                done = perform(action, self.device, obs, take, self._settling(), real_time=self.real_time,
                               sleep=self._sleep, on_drop=dropped, before_send=self.check_owner)
                post, sent, result, outcome = done.post, done.sent, done.result, done.outcome
                if done.offline is not None:
                    out.stop_reason, out.stop_message = "device_offline", done.offline
            verdict, sub_events, after = self.after_action(number, obs, post, action, turn, result)
            if sub_events and after is not None:
                # sub-actions (Pro recovery) ran inside the step: what it came to is measured again,
                # on the screen they left, and said to be so
                outcome = assess(action, sent, obs, after).after_recovery(
                    outcome, [recovery_line(e.payload) for e in sub_events])
                result = ActionResult(outcome.status, outcome.detail, result.typing)
            post = after
            replies_out = self._replies(turn, outcome, verdict, stated_intent(turn, action))
            self.check_owner()
            stored = self.writer.write(
                number=number,
                started_at=started_at,
                offset_ms=self.offset_ms(step_t0),
                pre=obs,
                post=post,
                action=action,
                result=result,
                turn=turn,
                users=users,
                observation=observation,
                marks=tail.marks,
                replies_in=pending,
                replies_out=replies_out,
                verdict=verdict,
                outcome=outcome,
                subgoal_hash=stamp[0] if stamp else None,
                milestone=stamp[1] if stamp else None,
                events=sub_events,
            )
            # the ledger holds exactly what was stored (typed passwords redacted), so a rebuild
            # from the DataEngine renders the same bytes
            self.ledger.commit(entry_from_step(self.engine, stored))
            self.after_commit(number, stored)
            if (self._late is not None and post is not None and not sub_events
                    and post.settle_mode == "observed" and result.status != "finished"):
                self._late.start(Unconfirmed(number, action, sent, obs, post, outcome))
            out.steps = number
            self._report(number, action, result, turn)
            if post is None:
                out.final = obs
                return out
            if result.status == "finished":
                out.finished = True
                out.model_success = bool(action.args.get("success"))
                out.answer = str(action.args.get("answer", ""))
                out.stop_reason = "finished"
                out.final = post
                return out
            if self.after_step is not None and self.after_step(number, post):
                out.stop_reason, out.final = "rejoined", post
                return out
            pending = replies_out
            obs = post
        out.final = obs
        return out

    @staticmethod
    def _replies(turn: TurnResult, outcome: ActionOutcome, verdict: dict[str, Any] | None = None,
                 intent: str | None = None) -> list[FunctionResponse]:
        """The answers to this turn's last calls; they open the next step. The action's answer
        says what it came to: its status, whether the screen changed, what the model expected
        (its ``intent``, beside what was seen, so the two can be compared), what was seen and, when
        it is not ``ok``, why; in the Pro loop also the validator's verdict (verdict word and
        short reason, quoted: ``progress "the switch reads ON"``)."""
        if turn.call is None:
            return []
        reply = action_reply(outcome, intent)
        judged = verdict_phrase(verdict, MAX_REPLY_REASON_CHARS)
        if judged:
            reply["validator"] = judged
        answered = FunctionResponse(turn.call.name, reply, turn.call.call.id)
        last_model = next(m for m in reversed(turn.messages) if m.role == "model")
        return ordered_responses(last_model.function_calls(), [*turn.pending_replies, answered])

    def _report(self, number: int, action: PlannedAction, result: ActionResult, turn: TurnResult) -> None:
        if not self.on_step:
            return
        last = turn.responses[-1].usage if turn.responses else None
        self.on_step(
            StepReport(
                number=number,
                phrase=action.phrase(),
                target=action.target.text or action.target.content_desc or action.target.resource_id,
                status=result.status,
                detail=result.detail,
                prompt_tokens=last.prompt_tokens if last else 0,
                cached_tokens=last.cached_tokens if last else 0,
                elapsed_s=self.offset_ms() / 1000,
                thought=turn.thought,
                context_tokens=self._context_tokens,
            )
        )


def _model_stop(exc: Exception) -> tuple[str, str]:
    """(stop reason, message) of a model failure that ends the run."""
    if isinstance(exc, ModelAuthError):  # the user must fix the key: say how
        return "model_config", f"{exc}; {exc.hint}" if exc.hint else str(exc)
    if isinstance(exc, ModelUnavailable):
        return "model_unavailable", str(exc)
    if isinstance(exc, ModelRefused):
        return "model_refused", str(exc)
    if isinstance(exc, ModelOutputError):
        return "model_no_action", str(exc)
    return "model_error", str(exc)
