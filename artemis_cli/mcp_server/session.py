"""A session whose operator is an outside agent: every action an MCP client asks for is a step.

``DrivenSession`` is the synchronous core of ``artemis mcp`` (no MCP here: ``mcp_server.server``
wires it to the SDK). It owns one device and, from the first tool call on, one DataEngine session
under its lease. Each action is planned on the screen the client last saw (its element indices,
hit-tested), performed and judged exactly as Artemis's own operator's are (``operators.perform``),
and written as a step with pre and post screenshots and UI XML (``operators.recording``). An
action whose target the client picked on a screen that has changed since is not sent: the answer
is the new screen. Whether it changed is first asked of one screenshot: when it is the screen the
client saw, pixel for pixel, that observation stands (``operators.observe.seen_again``) and no
hierarchy is dumped; the screen an action was answered with is the next call's that way, and a
screen that moved on since confirms that answer (a ``late_change``, as the loops record one).
``observe``, ``recall`` and ``note`` become events of the step they precede.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from artemis_cli.device.app_list import installed_packages, launchable_packages
from artemis_cli.device.protocol import Device
from artemis_cli.engine.clock import now_iso
from artemis_cli.engine.db import DataEngine
from artemis_cli.engine.lease import Lease
from artemis_cli.engine.records import MCP_LOOP, EventRecord, SessionRecord, continue_command
from artemis_cli.errors import DeviceOffline, UsageError
from artemis_cli.mcp_server.answers import StepAnswer, ViewAnswer
from artemis_cli.memory.mechanical import MechanicalLens
from artemis_cli.memory.recall import Recall
from artemis_cli.memory.service import StepMemoryService
from artemis_cli.models.base import FunctionCall, FunctionResponse, Message, Part
from artemis_cli.operators.act import PlannedAction, plan_action
from artemis_cli.operators.memory_tools import MemoryTools
from artemis_cli.operators.observe import Observation, observe, seen_again
from artemis_cli.operators.outcome import action_reply
from artemis_cli.operators.perform import Settling, perform
from artemis_cli.operators.recording import StepWriter
from artemis_cli.operators.settling import (
    LATE_EVENT,
    Unconfirmed,
    late_notice,
    late_payload,
    moved_on,
    reassess,
)
from artemis_cli.operators.tools import ToolCall, ToolCallError, validate_call
from artemis_cli.operators.turn import TurnResult
from artemis_cli.perception.types import Target

#: Event kinds of the calls that are not actions (recorded on the step they precede).
OBSERVE_EVENT, RECALL_EVENT, NOTE_EVENT = "mcp_observe", "mcp_recall", "mcp_note"
#: An action refused before it was sent (the screen changed under it, an app not allowed…).
REFUSED_EVENT = "mcp_refused"
#: The client that connected (name, version), on session start and on each resume.
CLIENT_EVENT = "mcp_client"
#: A step whose wait or settling a stop cut short (the client left, the server was stopped).
CUT_SHORT_EVENT = "mcp_cut_short"
#: Actions whose point or element the client picked on the screen it saw.
_AIMED = ("tap", "double_tap", "long_press", "drag")
#: Keys that leave an app not on the allow-list.
_ESCAPE_KEYS = ("back", "home")


def check_resumable(rec: SessionRecord) -> None:
    """UsageError unless ``rec`` is an MCP session that has not ended (``artemis mcp --resume``)."""
    from artemis_cli.resume import ensure_resumable

    if rec.loop != MCP_LOOP:
        raise UsageError(f"session {rec.id} was not driven over MCP",
                         hint=f"continue it with: {continue_command(rec.id, rec.loop)}")
    if rec.status in ("succeeded", "failed"):
        ensure_resumable(rec)


class ToolRefused(Exception):
    """A call that cannot be served (bad arguments, read-only, an app not allowed); the message is
    the client's answer, nothing was sent to the device."""


@dataclass(frozen=True)
class ClientInfo:
    name: str = "unknown-client"
    version: str = ""
    #: who drives: an MCP client, or a Python program (``library.session``)
    kind: str = "MCP client"

    @property
    def label(self) -> str:
        return f"{self.kind} {self.name}" + (f" {self.version}" if self.version else "")


@dataclass
class Policy:
    """What the server lets a client do: ``allow_apps`` (empty: any app) and ``read_only``."""

    allow_apps: tuple[str, ...] = ()
    read_only: bool = False

    def allows(self, package: str | None) -> bool:
        return not self.allow_apps or (package is not None and package in self.allow_apps)


@dataclass
class DrivenSession:
    engine: DataEngine
    device: Device
    profile: Any
    goal: str = ""
    policy: Policy = field(default_factory=Policy)
    #: what ``sessions show`` and a resume need to find the device again
    run_config: dict[str, Any] = field(default_factory=dict)
    #: an interrupted MCP session to continue on the first tool call (``artemis mcp --resume``)
    resume_id: str | None = None
    real_time: bool = True
    notice: Callable[[str], None] | None = None
    session_id: str | None = None
    #: the session closed last (the report resource shows it until the next one starts)
    last_session_id: str | None = None
    client: ClientInfo = field(default_factory=ClientInfo)
    #: the screen the client last saw (its element list is what its indices refer to)
    seen: Observation | None = None
    #: ``seen`` is the still screen an action was answered with (not an ``observe``'s)
    _answered: bool = False
    #: the last step, when its answer was kept on a first sight of its effect (settled
    #: ``observed``): the next look at the screen confirms it (``operators.settling``)
    _unconfirmed: Unconfirmed | None = None
    _lease: Lease | None = None
    _writer: StepWriter | None = None
    _memory: MemoryTools | None = None
    _service: StepMemoryService | None = None
    _packages: list[str] | None = None
    _launchable: tuple[list[str] | None] | None = None
    _t0: float = 0.0
    _offset_base_ms: int = 0
    _last_step: int = 0
    #: set when the process is stopping or the client left: the step in flight ends its wait and
    #: settling now, so it is written whole before a client's SIGKILL (``hurry``)
    _hurry: threading.Event = field(default_factory=threading.Event)
    #: what the first answer to a client says of the session it got (continued, started), once
    opening: str | None = None
    _continues: str | None = None  # why the session to continue stopped (``continue_next``)
    _resumed: bool = False  # the open session was resumed (kept even with no step of its own)

    # -- the session's life ------------------------------------------------------------------

    @property
    def screen(self) -> tuple[int, int]:
        info = self.device.info()
        return info.width, info.height

    def start(self, client: ClientInfo) -> str:
        """The session, created (or resumed) on the first tool call; its id."""
        if self.session_id is not None:
            return self.session_id
        self.client = client
        if self.resume_id is not None:
            why = self._continues
            self._resume(self.resume_id, restore=why is None)  # refused (another owner): the next call tries again
            self.opening = (f"Session {self.resume_id} continues after step {self._last_step}"
                            + (f": {why}" if why else " (artemis mcp --resume)."))
            self.resume_id, self._continues = None, None
        else:
            self._create()
        assert self.session_id is not None
        self._event(None, CLIENT_EVENT, {"name": client.name, "version": client.version})
        return self.session_id

    #: the session row's loop, and the goal it gets when the driver gave none
    loop = MCP_LOOP
    no_goal = "driven by an MCP client (no goal given)"

    def _run_record(self) -> dict[str, Any]:
        """What the session's config keeps of how it was run (``run``)."""
        return {**self.run_config, "mcp": {"allow_apps": list(self.policy.allow_apps),
                                           "read_only": self.policy.read_only}}

    def _create(self) -> None:
        from artemis_cli.config.task import task_from_goal

        info = self.device.info()
        goal = self.goal or self.no_goal
        task = task_from_goal(goal)
        session_id = self.engine.new_session_id()
        self.engine.create_session(SessionRecord(
            id=session_id, task_id=task.id, goal=goal, profile=self.profile.name, loop=self.loop,
            device_serial=info.serial, device_kind=info.kind, screen_width=info.width, screen_height=info.height,
            models={"operator": f"{self.loop}:{self.client.name}"}, model_label=self.client.label, status="running",
            started_at=now_iso(),
            config={"task": task.model_dump(mode="json", exclude={"reference"}), "reference_steps": 0,
                    "profile": self.profile.model_dump(mode="json"), "max_steps": 0, "offline_model": False,
                    "run": self._run_record()},
        ))
        self._own(session_id)
        self._t0 = time.monotonic()

    def handover(self, client: ClientInfo) -> None:
        """The driving client is back on a new connection (its old one had nothing open): the
        session goes on uninterrupted; the connection is recorded and the first answer says so."""
        if self.session_id is None:
            return
        self._event(None, CLIENT_EVENT, {"name": client.name, "version": client.version, "new_connection": True})
        self.opening = (f"Session {self.session_id} continues after step {self._last_step}: {client.label} "
                        "again, on a new connection.")

    def continue_next(self, session_id: str, why: str) -> None:
        """Let the next client's first call continue ``session_id``, interrupted in this process a
        moment ago (the phone is where it left it: nothing to restore); ``why`` it stopped."""
        self.resume_id, self._continues = session_id, f"{why}; the phone is as that client left it."
        self.last_session_id = session_id

    def _resume(self, session_id: str, restore: bool = True) -> None:
        from artemis_cli.engine.segments import RESUME_EVENT
        from artemis_cli.resume import restore_sim, resumed_offset_ms, task_for_session

        rec = self.engine.get_session(session_id)
        check_resumable(rec)
        self._own(rec.id)
        steps = self.engine.get_steps(rec.id)
        if restore and self.device.info().kind == "sim":  # the simulated phone starts over: replay what was done
            restore_sim(self.engine, rec.id, self.device, task_for_session(self.engine, rec.id), steps, self.notice)
        self._last_step = steps[-1].number if steps else 0
        self._offset_base_ms = resumed_offset_ms(rec)
        self._t0 = time.monotonic()
        self._resumed = True
        self.engine.update_session(rec.id, status="running", models={**(rec.models or {}),
                                   "operator": f"mcp:{self.client.name}"}, model_label=self.client.label)
        self._event(None, RESUME_EVENT, {"after_step": self._last_step, "device": self.device.info().serial,
                                         "model": self.client.label})

    def _own(self, session_id: str) -> None:
        lease = self.engine.acquire_lease(session_id, "mcp")
        self.session_id, self._lease = session_id, lease
        recall = Recall(self.engine)
        self._service = StepMemoryService(self.engine, MechanicalLens(),
                                          on_ready=lambda step, text: recall.index_summary(session_id, step, text))
        self._writer = StepWriter(self.engine, session_id, recall, self._service)
        mem = self.profile.memory
        self._memory = MemoryTools(self.engine, session_id, recall, enabled=mem.recall.enabled,
                                   max_results=mem.recall.max_results, max_text_tokens=mem.recall.max_text_tokens)

    def end(self, status: str, result: dict[str, Any]) -> None:
        """Close the session: ``succeeded``/``failed`` on finish, ``interrupted`` when the client
        went away (whole steps only: this runs between tool calls, never inside one)."""
        from artemis_cli.runner import finish_session

        if self.session_id is None:
            return
        session_id = self.session_id
        empty = False
        try:
            if self._service is not None:
                self._service.flush(5.0)
                self._service.close()
            if self._lease is not None:
                self._lease.check()  # taken over: the final write is not ours
            steps = self.engine.last_step_number(session_id)
            empty = not steps and not self._resumed
            if not empty:
                finish_session(self.engine, session_id, status,
                               {"steps": steps, "model": self.client.label,
                                "model_label": self.client.label, "offline_model": False, **result})
        finally:
            if self._lease is not None:
                self._lease.release()
            self._hurry.clear()
            self.last_session_id = session_id
            self._resumed = False
            self.session_id, self._lease, self._writer, self._memory, self._service = None, None, None, None, None
            self.seen, self._last_step, self._answered, self._unconfirmed = None, 0, False, None
        if empty:  # only looked at the phone (observe, recall): nothing to keep, replay or resume
            self.engine.remove_session(session_id)
            self.last_session_id = None

    def interrupt(self, reason: str) -> str | None:
        """The client went away (or the server was stopped): the session stays resumable. Returns
        the id of the session left ``interrupted`` (None: there was none, or it had no step and
        is not kept)."""
        if self.session_id is None:
            self._hurry.clear()
            return None
        session_id = self.session_id
        self.end("interrupted", {"stop_reason": reason,
                                 "message": f"{reason} after step {self._last_step} — continue it with: "
                                            f"{continue_command(session_id, MCP_LOOP)}"})
        return self.last_session_id

    def hurry(self) -> None:
        """The process is stopping or the client left: the step in flight (if any) cuts its wait
        and settling short and is written whole; cleared when the session is closed."""
        self._hurry.set()

    # -- helpers -----------------------------------------------------------------------------

    def _offset_ms(self, at: float | None = None) -> int:
        return self._offset_base_ms + int(((at if at is not None else time.monotonic()) - self._t0) * 1000)

    def _event(self, step: int | None, kind: str, payload: dict[str, Any]) -> None:
        assert self.session_id is not None
        if self._lease is not None:
            self._lease.check()
        self.engine.record_event(EventRecord(session_id=self.session_id, step=step, kind=kind, payload=payload))

    def _look(self) -> Observation:
        def problem(what: str, detail: str) -> None:
            self._event(self._last_step + 1, "device_fault", {"what": what, "detail": detail})

        return observe(self.device, self.screen, self.profile.coordinates, on_problem=problem, backoff_s=0.25,
                       sleep=time.sleep)

    def _now(self, glance: bool = True) -> tuple[Observation, str | None, bool]:
        """The screen now, for a call of the driving client: with ``glance``, the screen it last
        saw when a screenshot shows it unchanged (``operators.observe.seen_again``: a screenshot
        instead of a full observation, whose answer is the observation it already has), else
        observed; what the client is told of the last step when the screen moved on after its
        answer; and whether the glance found it unchanged."""
        again = seen_again(self.device, self.seen) if glance else None
        if again is not None:
            self._unconfirmed = None  # the answer's screen, still: confirmed
            return again, None, True
        return (*self._confirmed(self._look()), False)

    def _confirmed(self, now: Observation) -> tuple[Observation, str | None]:
        """``now`` as the confirmation of the last step's answer when that was kept on a first
        sight of its effect: a screen that moved on since (by the outcome's visual-change bar,
        not a clock's tick) has the step's outcome measured on it again, recorded as a
        ``late_change`` event on that step (its record stays what it was judged on), and the
        client is told when that changed what the step came to (as the loops tell their model)."""
        u, self._unconfirmed = self._unconfirmed, None
        if u is None or not moved_on(u, now.dhash):
            return now, None
        payload = late_payload(u, now, reassess(u, now))
        self._event(u.step, LATE_EVENT, payload)
        return now, late_notice(u.step, payload)

    def packages(self) -> list[str]:
        if self._packages is None:
            self._packages = installed_packages(self.device)
        return self._packages

    def launchable(self) -> list[str] | None:
        """The packages with a launcher activity (None: the device cannot say), read once."""
        if self._launchable is None:
            self._launchable = (launchable_packages(self.device),)
        return self._launchable[0]

    def _sleep(self, seconds: float) -> None:
        if self.real_time:
            self._hurry.wait(seconds)

    # -- calls that are not actions ----------------------------------------------------------

    def observe(self) -> ViewAnswer:
        """The screen now. Right after an action's answer it is first asked of one screenshot
        (the client most often wants the picture of the screen it was just told about); after an
        observe it is observed in full (a client that asks again is waiting for a change)."""
        obs, late, unchanged = self._now(glance=self._answered)
        self.seen, self._answered = obs, False
        step = self._last_step + 1
        self._event(step, OBSERVE_EVENT, {"dhash": obs.dhash, "foreground_app": obs.foreground,
                                          "elements": len(obs.elements), **({"unchanged": True} if unchanged else {})})
        return ViewAnswer(obs, step=step, session_id=self.session_id or "", notes=self._notes(),
                          allow_apps=self.policy.allow_apps, late=late)

    def peek(self) -> ViewAnswer:
        """The screen now for a client that does not drive the session: nothing is recorded and
        the screen the driving client last saw (what its indices refer to) stays as it was."""
        obs = observe(self.device, self.screen, self.profile.coordinates, backoff_s=0.25, sleep=time.sleep)
        return ViewAnswer(obs, step=self._last_step + 1, session_id=self.session_id or "",
                          allow_apps=self.policy.allow_apps)

    def _notes(self) -> list[str]:
        return self._memory.recited() if self._memory is not None else []

    def memory_call(self, name: str, args: dict[str, Any]) -> dict[str, Any]:
        """``recall`` (recall_history, or a saved note by ``note``) and ``note`` (save_note)."""
        assert self._memory is not None
        step = self._last_step + 1
        if name == "note":
            tool, kind = "save_note", NOTE_EVENT
        elif args.get("note") is not None:
            tool, kind, args = "read_note", RECALL_EVENT, {"key": args.get("note")}
        else:
            tool, kind = "recall_history", RECALL_EVENT
        try:
            call = validate_call(FunctionCall(tool, dict(args), None))
        except ToolCallError as exc:
            raise ToolRefused(str(exc)) from None
        answer = self._memory.handler(step)(call)
        logged = {k: v for k, v in call.args.items() if k != "content"}
        self._event(step, kind, {"tool": tool, "args": logged,
                                 **({"error": answer["error"]} if "error" in answer else {}),
                                 **({"steps": answer.get("steps")} if "steps" in answer else {})})
        return answer

    # -- actions -----------------------------------------------------------------------------

    def act(self, name: str, args: dict[str, Any], pre: Observation | None = None) -> StepAnswer | ViewAnswer:
        """Perform one action and record it as the next step; a ``ViewAnswer`` (the new screen,
        nothing sent) when the client aimed at a screen that has changed since it saw it.
        ``pre``: the screen the caller observed a moment ago and picked the target on (the Python
        API); None looks at it now (an MCP client's model thought for a while since it saw it):
        a screenshot, and a full observation only when the screen is not the one it saw."""
        assert self.session_id is not None and self._writer is not None
        if self.policy.read_only:
            raise ToolRefused(f"{name} is not available: this server is read-only (observe and recall only)")
        call_id = f"mcp-{self._last_step + 1}"
        try:
            call = validate_call(FunctionCall(name, dict(args), call_id))
        except ToolCallError as exc:
            raise ToolRefused(str(exc)) from None
        step_t0, started_at = time.monotonic(), now_iso()
        if pre is None:
            pre, late, _ = self._now()  # the screen now: time passed while the client's model thought
        else:
            pre, late = self._confirmed(pre)
            self.seen = pre
        number = self._last_step + 1
        packages = self.packages() if name in ("launch_app", "stop_app") else None
        try:
            try:
                stale = self._stale(call, pre)
                planned = None if stale else plan_action(call, pre, packages, launchable=self.launchable)
            except ToolCallError as exc:
                raise ToolRefused(str(exc)) from None
            if planned is not None:
                self._check_allowed(planned, pre)
        except ToolRefused as exc:  # nothing was sent; the refusal is kept with the step it preceded
            self._event(number, REFUSED_EVENT, {"tool": name, "args": _loggable(call), "why": str(exc)})
            raise
        if planned is None:
            self.seen, self._answered = pre, False
            self._event(number, REFUSED_EVENT, {"tool": name, "args": _loggable(call), "why": stale})
            return ViewAnswer(pre, step=number, session_id=self.session_id, notes=self._notes(),
                              allow_apps=self.policy.allow_apps, refused=stale, late=late)
        return self._step(number, call, planned, pre, step_t0, started_at, late)

    def _stale(self, call: ToolCall, pre: Observation) -> str | None:
        """Why the client's target may not be what it meant, or None. An element index or a point
        is resolved on the screen the client saw and on the screen now: unless both reach the same
        element (class, id, bounds; its text when it has no id) it is not sent — a screen that only
        changed elsewhere (a clock, a progress bar) does not stop it. Keys, launches, waits and
        untargeted scrolls and swipes aim at nothing on screen. A ToolCallError (an index that does
        not exist) is the client's to correct."""
        a = call.args
        aimed = call.name in _AIMED or "index" in a or (call.name == "swipe" and "x1" in a)
        if not aimed:
            return None
        if self.seen is None:
            return "you have not seen this screen yet; pick the target from the element list below"
        meant = plan_action(call, self.seen)
        try:
            now = plan_action(call, pre)
        except ToolCallError:
            now = None
        if now is not None and all(_same(x, y) for x, y in ((meant.target, now.target),
                                                            (meant.target_end, now.target_end))):
            return None
        return ("the screen changed since you last saw it and what you picked is now something else (or gone); "
                "the current screen follows — pick the target again")

    def _check_allowed(self, planned: PlannedAction, pre: Observation) -> None:
        policy = self.policy
        if not policy.allow_apps:
            return
        allowed = ", ".join(policy.allow_apps)
        if planned.type in ("launch_app", "stop_app"):
            package = planned.args.get("package")
            if not policy.allows(package):
                raise ToolRefused(f"not sent: {package} is not an allowed app (--allow-app: {allowed})")
            return
        if planned.type == "open_url":  # whichever app handles the link would come to the front
            raise ToolRefused(f"not sent: a link may open any app, and only some may be operated (--allow-app: "
                              f"{allowed}); use launch_app")
        if planned.type in ("wait", "finish") or (planned.type == "press_key"
                                                  and planned.args.get("key") in _ESCAPE_KEYS):
            return
        if not policy.allows(pre.foreground):
            raise ToolRefused(f"not sent: {pre.foreground or 'an unknown app'} is in the foreground and is not an "
                              f"allowed app (--allow-app: {allowed}); launch_app one that is, or press_key back/home")

    def _step(self, number: int, call: ToolCall, planned: PlannedAction, pre: Observation, step_t0: float,
              started_at: str, late: str | None = None) -> StepAnswer:
        assert self._writer is not None and self.session_id is not None

        def take() -> Observation:
            return self._look()

        def dropped(detail: str) -> None:
            self._event(number, "device_fault", {"what": "action", "detail": detail})

        # an answer that already shows the action's effect is kept without a confirming capture,
        # as the loops keep theirs: the client's next call looks at the screen first (_now), and
        # a screen that moved on since is that confirmation (_confirmed: a late_change event)
        settling = Settling(floor_s=(self.profile.settle_ms or 0) / 1000, max_s=self.profile.settle_max_ms / 1000,
                            watch=self.real_time and self.profile.settle_max_ms > 0)
        lease = self._lease
        done = perform(planned, self.device, pre, take, settling, real_time=self.real_time, sleep=self._sleep,
                       on_drop=dropped, before_send=lease.check if lease is not None else None, hurry=self._hurry)
        if self._hurry.is_set():  # the record says the wait or settling was shorter than asked
            self._event(number, CUT_SHORT_EVENT, {"tool": call.name, "after_s": round(time.monotonic() - step_t0, 3),
                                                  "why": "the client left or the server was stopped"})
        reply = action_reply(done.outcome, call.intent)
        function_call = FunctionCall(call.name, dict(call.call.args), call.call.id)
        turn = TurnResult(action=planned, call=call, messages=[Message("model", [Part(function_call=function_call)])],
                          secrets=[planned.secret] if planned.secret else [])
        notes = self._notes()  # the same before and after: no note is saved inside an action
        view = ViewAnswer(pre, step=number, session_id=self.session_id, notes=notes,
                          allow_apps=self.policy.allow_apps)
        if lease is not None:
            lease.check()
        self._writer.write(
            number=number, started_at=started_at, offset_ms=self._offset_ms(step_t0), pre=pre, post=done.post,
            action=planned, result=done.result, turn=turn, users=[], observation=view.text(),
            replies_in=[], replies_out=[FunctionResponse(call.name, reply, call.call.id)], outcome=done.outcome,
        )
        self._last_step = number
        self.seen, self._answered = done.post, done.post is not None
        if done.post is None:
            raise DeviceOffline(done.offline or "the device went away after the action")
        self._unconfirmed = Unconfirmed(number, planned, done.sent, pre, done.post, done.outcome) \
            if done.post.settle_mode == "observed" else None
        return StepAnswer(number, planned, done.outcome, reply,
                          ViewAnswer(done.post, step=number + 1, session_id=self.session_id, notes=notes,
                                     allow_apps=self.policy.allow_apps, late=late))

    def finish(self, args: dict[str, Any]) -> StepAnswer:
        """The client's ``finish(success, answer)``: recorded as the last step, then the session
        is closed (succeeded or failed as the client says: an MCP session has no success checks)."""
        step = self.act("finish", args)  # validated as the operator's finish is
        assert isinstance(step, StepAnswer)
        success, answer = bool(step.action.args["success"]), str(step.action.args.get("answer", ""))
        session_id = self.session_id
        self.end("succeeded" if success else "failed",
                 {"status": "succeeded" if success else "failed", "success": success, "answer": answer,
                  "stop_reason": "finished",
                  "message": f"the MCP client finished with success={str(success).lower()}"})
        step.closed = session_id
        return step


def _same(meant: Target | None, now: Target | None) -> bool:
    """Whether two hit-test results name the same element."""
    if meant is None or now is None:
        return meant is now
    same = (meant.class_name, meant.resource_id, meant.bounds) == (now.class_name, now.resource_id, now.bounds)
    return same and (bool(meant.resource_id) or (meant.text, meant.content_desc) == (now.text, now.content_desc))


def _loggable(call: ToolCall) -> dict[str, Any]:
    """A refused call's arguments as an event keeps them: typed text left out (it may be a
    password meant for a field the call never reached)."""
    return {k: ("(text not kept)" if k == "text" else v) for k, v in call.args.items()}
