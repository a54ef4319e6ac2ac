"""The Pro operator loop (SPEC §9): the Flash step cycle plus a planner, a validator, a failure
analyzer and an asynchronous checker, on the same transcript and compression runtime.

- The planner writes the plan (a milestone checklist) at the first step and revises it when the
  loop detector fires; the operator sees the plan recited in the tail every turn.
- Every step is stamped with the hash of the milestone it served. A milestone switch is
  confirmed only by a stamped step whose hash differs from the previous step's — a plan write
  alone (which a later revision may roll back) never closes a segment.
- The validator judges each action from pre/post evidence; its verdict is stored on the step. A
  verdict saying the milestone is complete marks it done (a plan write, recorded as an event).
- After repeated failed verdicts the failure analyzer proposes recovery actions, executed inside
  the step and recorded as sub-actions (events), which band ③ shows as indented lines.
- When a milestone is marked done the checker verifies it in the background; its verdict is
  recorded as an event and annotates the chunks of that milestone by a new chunk version.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from artemis_cli.engine.records import APP_FAULT_STATUSES, EventRecord
from artemis_cli.errors import DeviceOffline
from artemis_cli.memory.chunk_store import ChunkRow, append_chunk_version, newest_chunks
from artemis_cli.memory.similarity import repeated_action
from artemis_cli.operators.act import ActionResult, PlannedAction, plan_action
from artemis_cli.operators.flash import FlashLoop
from artemis_cli.operators.observe import Observation, carry_logs
from artemis_cli.operators.perform import perform
from artemis_cli.operators.pro.checker import Checker
from artemis_cli.operators.pro.failure_analyzer import RECOVERY_EVENT, FailureAnalyzer, recovery_payload
from artemis_cli.operators.pro.plan import Plan
from artemis_cli.operators.pro.planner import Planner
from artemis_cli.operators.pro.policies import compile_view, policy_for, screenshots_for
from artemis_cli.operators.pro.validator import Validator
from artemis_cli.operators.recording import redact_turn, stated_intent
from artemis_cli.operators.tools import ToolCallError, validate_call
from artemis_cli.operators.turn import TurnResult, model_text

PLAN_EVENT = "plan"
CHECKER_EVENT = "checker"
FAILED_VERDICTS = ("no_effect", "regress")


@dataclass
class ProAgents:
    planner: Planner
    validator: Validator
    failure_analyzer: FailureAnalyzer
    checker: Checker


@dataclass
class ProLoop(FlashLoop):
    agents: ProAgents | None = None
    goal: str = ""
    #: the task's secrets by name and description (never values), told to the planner
    secrets_told: dict[str, str] = field(default_factory=dict)
    failures_before_recovery: int = 2
    plan: Plan | None = None
    stamps: dict[int, tuple[str, str]] = field(default_factory=dict)
    _failed_in_a_row: int = 0
    _checks: ThreadPoolExecutor = field(default_factory=lambda: ThreadPoolExecutor(1, thread_name_prefix="artemis-checker"))

    # -- plan --------------------------------------------------------------------------------

    def _view(self, role: str, upto: int) -> str:
        digests = [ln for ln in self.ledger.f_body.splitlines() if ln.startswith(("[Chunk", "[Era", "[Period"))]
        return compile_view(self.engine, self.session_id, policy_for(role), upto, digests)

    def _screenshots(self, role: str, **pngs: bytes | None) -> list[tuple[str, bytes]]:
        """The screenshots ``role``'s context policy sends, scaled like the operator's."""
        return screenshots_for(role, self.ledger.settings.image_max_side, **pngs)

    def _write_plan(self, number: int, plan: Plan, why: str) -> None:
        self.plan = plan
        self._event(number, PLAN_EVENT, {"why": why, "plan": plan.to_dict()})

    def prepare_turn(self, number: int, obs: Observation) -> None:
        assert self.agents is not None
        if self.plan is None:
            first = self.agents.planner.plan(self.goal, self._view("planner", number - 1),
                                             self._screenshots("planner", current=obs.png), self.secrets_told)
            self._write_plan(number, first, "initial")
            return
        history = self.writer.history
        if len(history) >= 2 and repeated_action([(h.step, h.dhash, h.key) for h in history[-2:]], obs.dhash,
                                                  history[-1].key, times=3):
            revised = self.agents.planner.revise(self.plan, self.goal, self._view("planner", number - 1),
                                                 reason=f"the same action ({history[-1].phrase}) repeated on one screen",
                                                 screenshots=self._screenshots("planner", current=obs.png),
                                                 secrets=self.secrets_told)
            self._write_plan(number, revised, "loop detected")

    def plan_recitation(self, number: int) -> str | None:
        """The planner's plan; then the operator's own (``plan`` tool), when it set one."""
        own = super().plan_recitation(number)
        planner = self.plan.recitation() if self.plan is not None else None
        return "\n".join(p for p in (planner, own) if p) or None

    def stamp(self) -> tuple[str, str] | None:
        current = self.plan.current() if self.plan is not None else None
        return (current.id, current.title) if current is not None else None

    def milestone_switch(self, number: int) -> tuple[int, str | None] | None:
        last, before = self.stamps.get(number - 1), self.stamps.get(number - 2)
        if last is not None and before is not None and last[0] != before[0]:
            return number - 1, before[1]
        return None

    # -- after the action --------------------------------------------------------------------

    def after_action(
        self, number: int, pre: Observation, post: Observation | None, action: PlannedAction, turn: TurnResult,
        result: ActionResult,
    ) -> tuple[dict[str, Any] | None, list[EventRecord], Observation | None]:
        assert self.agents is not None
        if post is None or action.type in ("finish", "none"):
            return None, [], post
        milestone = self.plan.current() if self.plan is not None else None
        # the operator's note as stored (typed passwords redacted): the validator's reason may quote it
        note = model_text(redact_turn(turn.messages, [*turn.secrets, action.secret or ""]))
        verdict = self.agents.validator.judge(pre.element_list.splitlines(), action.phrase(),
                                              post.element_list.splitlines(), milestone, operator_note=note,
                                              intent=stated_intent(turn, action),
                                              screenshots=self._screenshots("validator", pre=pre.png, post=post.png))
        events: list[EventRecord] = []
        self._failed_in_a_row = self._failed_in_a_row + 1 if (
            verdict.verdict in FAILED_VERDICTS or result.status in ("error", "failed", *APP_FAULT_STATUSES)) else 0
        if self._failed_in_a_row >= self.failures_before_recovery:
            actions = self.agents.failure_analyzer.recover(self._view("failure_analyzer", number - 1),
                                                           post.element_list.splitlines(), milestone)
            for rec in actions:
                try:  # planned (hit-tested) on the screen it acts on
                    planned = plan_action(validate_call(rec.to_call()), post, self.packages(), secrets=self.secrets)
                except ToolCallError as exc:
                    events.append(EventRecord(session_id=self.session_id, step=number, kind=RECOVERY_EVENT,
                                              payload={**rec.to_payload(), "result": f"rejected: {exc}"}))
                    continue
                # sent, settled and judged as any action is (operators.perform): its result is
                # what was seen, ok only when its effect was observed
                def take(n: int = number) -> Observation:
                    return self.observe(n)

                def dropped(detail: str, n: int = number) -> None:  # never re-sent: its effect is unknown
                    self._event(n, "device_fault", {"what": "recovery", "detail": detail})

                done = perform(planned, self.device, post, take, self._settling(), real_time=self.real_time,
                               sleep=self._sleep, before_send=self.check_owner, on_drop=dropped)
                if done.post is None:
                    raise DeviceOffline(done.offline or "the device went away after a recovery action")
                after, seen = done.post, done.outcome
                events.append(EventRecord(session_id=self.session_id, step=number, kind=RECOVERY_EVENT,
                                          payload=recovery_payload(rec, planned, seen)))
                post = carry_logs(post, after)  # the step's outcome reads all of its log lines
            if actions:
                self._failed_in_a_row = 0
        return verdict.to_dict(), events, post

    def after_commit(self, number: int, stored: Any) -> None:
        if stored.subgoal_hash:
            self.stamps[number] = (stored.subgoal_hash, stored.milestone or "")
            if len(self.stamps) > 2:  # milestone_switch reads the last two steps only; the DB has the rest
                self.stamps = {k: v for k, v in self.stamps.items() if k >= number - 1}
        verdict = stored.verdict or {}
        if self.plan is None or not verdict.get("milestone_complete"):
            return
        current = self.plan.current()
        if current is None:
            return
        self._write_plan(number, self.plan.mark_done(current.id), f"milestone complete at step {number}")
        self._checks.submit(self._check, number, current)

    def _check(self, number: int, milestone: Any) -> None:
        assert self.agents is not None
        try:
            verdict = self.agents.checker.verify(milestone, self._view("checker", number))
        except Exception as exc:  # an auxiliary agent never takes the run down
            self._event(number, CHECKER_EVENT, {"milestone_id": milestone.id, "error": repr(exc)[:300]})
            return
        payload = verdict.to_dict() if hasattr(verdict, "to_dict") else dict(vars(verdict))
        self._event(number, CHECKER_EVENT, payload)
        # late verdicts bump the chunk version; F shows them only at its next compression event
        for row in newest_chunks(self.engine, self.session_id):
            if row.milestone == milestone.title and row.status == "ready":
                append_chunk_version(self.engine, ChunkRow(
                    session_id=row.session_id, start_step=row.start_step, end_step=row.end_step, status="ready",
                    milestone=row.milestone, band1=row.band1, band2=row.band2, band3=row.band3,
                    rendered=row.rendered, source=row.source, checker=payload))

    def close_agents(self) -> None:
        self._checks.shutdown(wait=True, cancel_futures=False)
