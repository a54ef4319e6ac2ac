"""Re-execute a recorded session without a model (SPEC §11).

For each recorded step: observe; find the recorded target by its semantics (``match``), else at
its coordinates scaled to the current screen; act; observe again and compare with the recorded
post-state (``verify``). The step is recorded in a new session (``loop="replay"``,
``parent_session`` = the source) exactly like an operator step — screenshots, UI XML, target
semantics, dHash — with ``meta["replay"]`` holding the verdict, and a ``replay_step`` event.

Each step's kind is one of ``replay.kinds`` (replayed, retargeted, healed, diverged; their
meanings are there). Replay stops at the first divergence unless ``continue_on_divergence``, or
``heal`` hands the diverged stretch to a model.

``from_step`` > 1 assumes the device already shows step N's screen: the task's setup commands
and app launch run only for a replay from step 1.

After the last step the task's success checks (the ones ``artemis run`` evaluates, stored with
the source session; ``operators.checks``) run against the replay device: a replay succeeds only
when every step replayed without diverging and the checks pass (with no checks: when the
replayed ``finish`` said success, as for a run). A source session that never finished
(interrupted, aborted, still running, or no ``finish`` step) is said so in the message and the
result (``source_incomplete``), never reported as a bare success.

Everything that can refuse a replay (options, steps to replay, the stored checks, password text)
is settled before the replay session is created: a refused replay leaves no session behind.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from artemis_cli.device.protocol import Device
from artemis_cli.engine.db import DataEngine
from artemis_cli.engine.records import EventRecord, SessionRecord, StepRecord
from artemis_cli.errors import DeviceOffline, HierarchyParseError, UsageError
from artemis_cli.operators.act import ActionResult, PlannedAction
from artemis_cli.operators.checks import Finish, evaluate_checks
from artemis_cli.operators.observe import Observation, observe
from artemis_cli.operators.perform import Settling, perform
from artemis_cli.perception.dhash import hamming
from artemis_cli.perception.hierarchy import parse_hierarchy
from artemis_cli.perception.types import UITree
from artemis_cli.replay.kinds import ReplayKind
from artemis_cli.replay.place import as_recorded, step_phrase
from artemis_cli.replay.planning import Located, Planner
from artemis_cli.replay.results import (
    BY_CHOICES,
    REPLAY_MODEL_LABEL,
    ReplayOptions,
    ReplayResult,
    ReplayStepResult,
)
from artemis_cli.replay.secrets import env_or_prompt, is_secret_step
from artemis_cli.replay.source import STROKES, incomplete_reason, success_checks
from artemis_cli.replay.verdict import word_verdict
from artemis_cli.replay.verify import (
    DHASH_MATCH_MAX,
    check_change,
    finishes_here,
    step_done,
)
from artemis_cli.stopping import SessionInterrupted, as_stop, signal_name

_NO_DEVICE_ACTION = {"finish", "wait", "save_note", "none", "recall_history"}
#: How long a replayed action's screen may take to settle on a real device (the profile's default).
SETTLE_MAX_S = 2.0


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds")


# --- replay -----------------------------------------------------------------------------------


def _tree(engine: DataEngine, sha: str | None, size: tuple[int, int]) -> UITree | None:
    if not sha or not engine.blobs.exists(sha):
        return None
    try:
        return parse_hierarchy(engine.blob(sha), screen_size=size)
    except HierarchyParseError:
        return None


class Replayer:
    def __init__(self, engine: DataEngine, device: Device, source: str, options: ReplayOptions | None = None,
                 on_step: Callable[[ReplayStepResult], None] | None = None) -> None:
        self.engine = engine
        self.device = device
        self.opts = options or ReplayOptions()
        if self.opts.by not in BY_CHOICES:
            raise UsageError(f"unknown --by {self.opts.by!r}", hint="use semantics or coordinates")
        if self.opts.from_step < 1:
            raise UsageError("--from-step must be 1 or more")
        self.src = engine.get_session(source)
        self.baseline_of: str | None = None
        if self.opts.use_baseline:
            from artemis_cli.replay.lineage import resolve

            base = resolve(engine, self.src)
            if base.substituted:
                self.baseline_of, self.src = base.source, engine.get_session(base.replayed)
        #: the goal a heal works towards (the Python API's cached AI step sets its own)
        self.goal = self.src.goal
        if self.opts.heal:
            self._heal_defaults()
        self.lease: Any = None
        self._heal_spent: dict[int, int] = {}  # recorded index -> model steps spent healing it
        self.on_step = on_step
        self.secret = self.opts.secret or env_or_prompt(task_id=self.src.task_id)
        info = device.info()
        self.info = info
        self.size = (info.width, info.height)
        self.rec_size = (self.src.screen_width or info.width, self.src.screen_height or info.height)
        self.session_id = ""
        self.t0 = time.monotonic()
        self.secrets: dict[int, str] = {}  # source step number -> password text, asked before the start
        self.checks: list[Any] = []  # the source task's success checks
        self.incomplete: str | None = None  # why the source session never finished
        self._finish: Finish | None = None  # the replayed finish step
        self.planner = Planner(self.opts.by, self.rec_size, self.size, self._secret_of)

    # -- helpers --------------------------------------------------------------------------------

    def _heal_defaults(self) -> None:
        if self.opts.profile is None:
            from artemis_cli.config.profile import load_profile

            self.opts.profile = load_profile("flash")
        if self.opts.model is None:
            from artemis_cli.models.offline.healer import HealerModel

            self.opts.model = HealerModel()

    def tree_of(self, sha: str | None) -> UITree | None:
        return _tree(self.engine, sha, self.rec_size)

    def _sleep(self, seconds: float) -> None:
        if self.opts.real_time:
            time.sleep(seconds)

    def _observe(self) -> Observation:
        return observe(self.device, self.size, "pixels", sleep=self._sleep)

    def _secret_of(self, rec: StepRecord) -> str:
        """The password text recorded step ``rec`` types (settled before the start when it can be)."""
        return self.secrets[rec.number] if rec.number in self.secrets else self.secret(rec)

    def _perform(self, action: PlannedAction, pre: Observation) -> tuple[ActionResult, Observation, ActionResult]:
        """(what the device answered, the screen after it, what was observed of it): a device
        action is sent, settled and judged by ``operators.perform`` as the loops' and ``artemis
        mcp``'s are, and the step is recorded with that judgement (``ok`` only when its effect was
        seen); the replay's own verdict compares with the recording (``verify.check_change``: an
        effect off the screen, a count in a closed menu, is no divergence) from what the device
        answered. Steps with nothing to do on the device leave the screen as it is."""
        if action.type == "none":
            nothing = ActionResult("ok", "nothing to replay: the recorded step had no valid action")
            return nothing, pre, nothing
        if action.type in ("save_note", "recall_history"):
            skipped = ActionResult("ok", f"{action.type} is not a device action; skipped")
            return skipped, pre, skipped
        if action.type == "wait":
            self._sleep(float(action.args.get("seconds", 0) or 0))
            return ActionResult("ok"), pre, ActionResult("ok")
        # As the operator does (flash.py): text goes only into a field that took focus, read on
        # the screen between the focusing tap and the typing, never blind.
        settling = Settling(floor_s=0.0, max_s=SETTLE_MAX_S, watch=self.opts.real_time, early=False)
        done = perform(action, self.device, pre, self._observe, settling, real_time=self.opts.real_time,
                       sleep=self._sleep, before_send=self.lease.check if self.lease is not None else None)
        if done.post is None:
            raise DeviceOffline(done.offline or "the device went away after the action")
        return done.sent, done.post, done.result

    # -- the loop -------------------------------------------------------------------------------

    def _create_session(self) -> str:
        src = self.src
        task_cfg = (src.config or {}).get("task") or {}
        return self.engine.create_session(SessionRecord(
            task_id=src.task_id,
            goal=src.goal,
            profile=src.profile,
            loop="replay",
            device_serial=self.info.serial,
            device_kind=self.info.kind,
            screen_width=self.info.width,
            screen_height=self.info.height,
            models={"operator": self.opts.model.name} if self.opts.heal else {},
            model_label=f"{REPLAY_MODEL_LABEL}; heals with {self.opts.model.label}" if self.opts.heal
            else REPLAY_MODEL_LABEL,
            status="running",
            started_at=_now(),
            parent_session=src.id,
            config={
                "replay": {"source_session": src.id, "by": self.opts.by, "from_step": self.opts.from_step,
                           "continue_on_divergence": self.opts.continue_on_divergence,
                           "heal": self.opts.heal, "baseline_of": self.baseline_of},
                "task": task_cfg,
            },
        ))

    def _prepare_device(self) -> None:
        if self.opts.from_step != 1:
            return
        task_cfg = (self.src.config or {}).get("task") or {}
        for setup in task_cfg.get("setup") or []:
            command = setup.get("shell") if isinstance(setup, dict) else None
            if not command:
                continue
            out = self.device.shell(command)
            self.engine.record_event(EventRecord(session_id=self.session_id, kind="setup",
                                                 payload={"shell": command, "output": out[:2000]}))
        if task_cfg.get("app"):
            self.device.launch(task_cfg["app"])

    def _step(self, number: int) -> str:
        """``step N`` of the user's recording, for a message (not the promoted baseline's N)."""
        return step_phrase(self.engine, self.src.id, number, self.baseline_of)

    def run(self) -> ReplayResult:
        # everything that can refuse the replay comes first: a refusal leaves no session behind
        recorded = self.engine.get_steps(self.src.id, start=self.opts.from_step)
        if not recorded:
            raise UsageError(f"session {self.src.id} has no steps from step {self.opts.from_step}",
                             hint="check the number with `artemis sessions show`")
        self.checks = success_checks(self.src)
        self.incomplete = incomplete_reason(self.engine, self.src)
        # asked by the step number of the user's recording (not the promoted baseline's)
        self.secrets = {rec.number: self.secret(as_recorded(self.engine, rec, self.baseline_of))
                        for rec in recorded if is_secret_step(rec)}
        self.session_id = self._create_session()
        with self.engine.acquire_lease(self.session_id, "replay") as lease:
            self.lease = lease
            return self._run(recorded)

    def _run(self, recorded: list[StepRecord]) -> ReplayResult:
        result = ReplayResult(self.session_id, self.src.id, self.opts.by, "running",
                              source_incomplete=self.incomplete, heal=self.opts.heal,
                              model_label=self.opts.model.label if self.opts.heal else "",
                              baseline_of=self.baseline_of)
        obs: Observation | None = None
        try:
            self._prepare_device()
            obs = self._replay_steps(result, recorded, self._observe(), 1)
        except DeviceOffline as exc:
            result.status = "interrupted"
            result.message = f"the device went away: {exc}"
        except KeyboardInterrupt as exc:  # a stop signal: mark it, say how to go on from there
            stop = as_stop(exc)
            done = result.steps[-1].source_step if result.steps else self.opts.from_step - 1
            result.status = "interrupted"
            result.message = f"stopped by {signal_name(stop.signum)} after source step {done}"
            with contextlib.suppress(Exception):
                self.engine.finish_session(self.session_id, "interrupted", result.to_dict())
            raise SessionInterrupted(
                stop.signum, self.session_id, len(result.steps), result,
                next_command=f"artemis replay {self.src.id} --from-step {done + 1}",
            ) from None
        except BaseException:
            self.engine.finish_session(self.session_id, "aborted", {"message": "replay aborted"})
            raise
        result.model_calls = len(self.engine.llm_calls(self.session_id))
        if result.status == "running":
            self._judge(result, recorded, obs)
        self.engine.finish_session(self.session_id, result.status, result.to_dict())
        return result

    def replay_into(self, session_id: str, lease: Any, t0: float, recorded: list[StepRecord], number: int,
                    pre: Observation) -> tuple[ReplayResult, Observation]:
        """Replay ``recorded`` into a session another owner runs (the Python API's cached AI step:
        ``session_id`` under ``lease``, its clock started at monotonic ``t0``), its steps numbered
        from ``number`` on from the screen ``pre``; no session is created or judged here. The
        result says how far it got (``message`` when a heal did not rejoin) and its replayed finish."""
        self.session_id, self.lease, self.t0 = session_id, lease, t0
        # the password text is settled before the first step, as ``run`` does (a heal types it too)
        self.secrets = {rec.number: self.secret(rec) for rec in recorded if is_secret_step(rec)}
        result = ReplayResult(session_id, self.src.id, self.opts.by, "running", heal=self.opts.heal)
        return result, self._replay_steps(result, recorded, pre, number)

    @property
    def replayed_finish(self) -> Finish | None:
        """The recording's finish as it was replayed (None: none was)."""
        return self._finish

    def _replay_steps(self, result: ReplayResult, recorded: list[StepRecord], obs: Observation,
                      number: int) -> Observation:
        """Replay ``recorded`` in order into this replay's session, its steps numbered from
        ``number``, healing a divergence when the options say so; returns the screen after the
        last. Stops at the first divergence that is not healed (unless ``continue_on_divergence``)."""
        index = 0
        while index < len(recorded):
            rec = recorded[index]
            step_result, obs, stored = self._replay_step(number, rec, obs)
            number += 1 if stored else 0
            if step_result.status == "diverged" and self.opts.heal:
                if stored:  # done, only not as recorded: retargeted; an attempt that did nothing: healed
                    step_result.status = "retargeted" if step_result.took_effect else "healed"
                    self._mark(step_result.number, step_result.status)
                    result.steps.append(step_result)
                    if self.on_step:
                        self.on_step(step_result)
                if result.first_divergence is None:
                    result.first_divergence = rec.number
                healed = self._heal(result, recorded, index, step_result, number, obs)
                number = self.engine.last_step_number(self.session_id) + 1
                if healed is None:
                    break
                index, obs = healed
                continue
            result.steps.append(step_result)
            if self.on_step:
                self.on_step(step_result)
            if step_result.status != "diverged":
                result.last_matched = rec.number
            if stored:
                self._mark(step_result.number, step_result.status)
            if rec.action_type == "finish" and step_result.status != "diverged":
                result.finished = True
                result.answer = str(rec.action_args.get("answer", "") or "")
                self._finish = Finish(True, bool(rec.action_args.get("success")), result.answer)
            if step_result.status == "diverged":
                if result.first_divergence is None:
                    result.first_divergence = rec.number
                if not self.opts.continue_on_divergence:
                    break
            index += 1
        return obs

    def _judge(self, result: ReplayResult, recorded: list[StepRecord], final: Observation | None) -> None:
        """The verdict once the steps are replayed: divergence first, then the task's success
        checks on the replay device (with none, the replayed finish), and the source's state."""
        replayed_all = result.finished or len(result.steps) == len(recorded)
        if replayed_all and self.checks:
            try:
                result.checks = evaluate_checks(self.checks, self.device, final, finish=self._finish)
            except DeviceOffline as exc:
                result.status, result.message = "interrupted", f"the device went away during the success checks: {exc}"
                return
        word_verdict(result, recorded, self.opts, has_checks=bool(self.checks), finish=self._finish, step=self._step,
                     replay_id=self.baseline_of or self.src.id, source_id=self.src.id, incomplete=self.incomplete)

    def _mark(self, number: int, mark: str) -> None:
        from artemis_cli.replay.lineage import set_mark

        set_mark(self.engine, self.session_id, number, mark)

    def _heal(self, result: ReplayResult, recorded: list[StepRecord], index: int, diverged: ReplayStepResult,
              number: int, current: Observation) -> tuple[int, Observation] | None:
        """Heal from ``recorded[index]``: (index to go on from, screen) once rejoined; None (and
        the result's message says why) when the heal did not rejoin."""
        from artemis_cli.replay.heal import run_heal

        def on_model_step(n: int) -> None:
            self._mark(n, "healed")
            step = ReplayStepResult(number=n, source_step=recorded[index].number,
                                    action=self.engine.get_step(self.session_id, n).action_type,
                                    status="healed", how="model")
            result.steps.append(step)
            if self.on_step:
                self.on_step(step)

        spent = self._heal_spent.get(index, 0)
        healed = run_heal(self, recorded, index, diverged.detail, number, on_model_step, spent,
                          done=diverged.took_effect, current=current)
        self._heal_spent[index] = spent + healed.model_steps
        last = self._step(result.last_matched) if result.last_matched is not None else "no step"
        if healed.rejoin is None or healed.final is None:
            result.message = (f"diverged at {self._step(recorded[index].number)}; the heal did not rejoin the "
                              f"recording: {healed.message}; last matched {last}")
            return None
        self.engine.record_event(EventRecord(session_id=self.session_id, kind="heal_rejoined", payload={
            "diverged": recorded[index].number, "rejoined": recorded[healed.rejoin].number,
            "model_steps": healed.model_steps}))
        return healed.rejoin, healed.final

    def _replay_step(self, number: int, rec: StepRecord,
                     pre: Observation) -> tuple[ReplayStepResult, Observation, bool]:
        started_at = _now()
        step_t0 = time.monotonic()
        rec_pre = _tree(self.engine, rec.ui_xml, self.rec_size)
        rec_post = _tree(self.engine, rec.post_ui_xml, self.rec_size)
        action, loc = self.planner.plan(rec, pre, rec_pre)
        if action is not None and action.type == "finish" and not finishes_here(rec, rec_pre, pre, self.rec_size, self.size):
            # the recording's verdict holds only where it was given: a finish on another screen
            # (a confirmation the update added, still unanswered) is a divergence, not a success
            action, loc = None, Located(None, "the screen is not the one the recording finished on")
        status: ReplayKind
        dist: int | None = None
        overlap: float | None = None
        post = pre
        performed = action is not None
        if action is None:
            status, detail = "diverged", loc.detail or "the recorded target is not on this screen"
            result = observed = ActionResult("error", detail)
            action = PlannedAction(rec.action_type, dict(rec.action_args))
        else:
            result, post, observed = self._perform(action, pre)
            check = check_change(
                rec_pre, rec_post, pre.tree, post.tree,
                rec_foreground=(rec.meta or {}).get("post_foreground_app"), cur_foreground=post.foreground,
            )
            overlap = check.overlap
            if rec.post_dhash:
                dist = hamming(rec.post_dhash, post.dhash)
            notes = [d for d in (loc.detail, check.detail) if d]
            # an error that was not recorded, or a failure (e.g. no field took focus, nothing
            # typed) where the recorded step was ok: the replay did not do what the recording did
            failed = (result.status == "error" and rec.result_status != "error") or (
                result.status == "failed" and rec.result_status == "ok")
            if failed:
                notes.append(f"the action failed: {result.detail}")
            if not check.ok or failed:
                status = "diverged"
            elif rec.action_type in _NO_DEVICE_ACTION or rec.action_type in ("press_key", "launch_app", "open_url", "stop_app",
                                                                                         *STROKES):
                status = "replayed" if dist is None or dist <= DHASH_MATCH_MAX else "retargeted"
            else:
                m = loc.match
                placed = m is None or (m.how == "coordinates" and self.opts.by == "coordinates") or bool(m and m.exact)
                status = "replayed" if placed and (dist is None or dist <= DHASH_MATCH_MAX) else "retargeted"
                if m is not None and m.how == "semantics" and not m.exact:
                    notes.append("target found elsewhere on the screen or relabelled")
            if status == "retargeted" and dist is not None and dist > DHASH_MATCH_MAX:
                notes.append(f"the screen afterwards looks different from the recording ({dist} of 64 picture bits differ)")
            detail = "; ".join(notes)
        m = loc.match
        step_result = ReplayStepResult(
            number=number, source_step=rec.number, action=rec.action_type, status=status,
            how=m.how if m is not None else "none", detail=detail, x=action.x, y=action.y,
            score=m.score if m is not None and m.how == "semantics" else None,
            dhash_distance=dist, change_overlap=overlap,
            took_effect=performed and result.status == "ok" and step_done(action, pre, post, loc.match,
                                                                          blind=self.planner.blind(rec, loc.match)),
        )
        if performed or not self.opts.heal:  # a heal records only what was done on the device
            self._record(number, started_at, step_t0, rec, pre, post, action, observed, step_result)
            return step_result, post, True
        return step_result, post, False

    def _record(self, number: int, started_at: str, step_t0: float, rec: StepRecord, pre: Observation,
                post: Observation, action: PlannedAction, result: ActionResult, outcome: ReplayStepResult) -> None:
        replay_meta = {"source_session": self.src.id, **outcome.to_dict()}
        blobs: dict[str, tuple[bytes, str]] = {
            "pre_screenshot": (pre.png, "screenshot"),
            "ui_xml": (pre.xml.encode("utf-8"), "ui_xml"),
            "post_screenshot": (post.png, "screenshot"),
            "post_ui_xml": (post.xml.encode("utf-8"), "ui_xml"),
        }
        self.engine.record_step(
            StepRecord(
                session_id=self.session_id,
                number=number,
                started_at=started_at,
                ended_at=_now(),
                offset_ms=int((step_t0 - self.t0) * 1000),
                thought=f"replay of recorded step {rec.number}",  # its kind is the step's replay mark (a heal may relabel it)
                action_type=action.type,
                action_args=action.recorded_args,
                x=action.x, y=action.y, x2=action.x2, y2=action.y2,
                target=action.target.to_dict(),
                target_end=action.target_end.to_dict() if action.target_end else None,
                result_status=result.status,
                result_detail=result.detail or outcome.detail or None,
                pre_dhash=pre.dhash,
                post_dhash=post.dhash,
                foreground_app=pre.foreground,
                summary_status="pending",
                meta={"replay": replay_meta, "post_foreground_app": post.foreground,
                      "dhash_distance": hamming(pre.dhash, post.dhash)},
            ),
            blobs=blobs,
            events=[EventRecord(kind="replay_step", payload=replay_meta)],
        )


def replay_session(engine: DataEngine, device: Device, source: str, options: ReplayOptions | None = None,
                   on_step: Callable[[ReplayStepResult], None] | None = None) -> ReplayResult:
    """Replay ``source`` (id, prefix or ``latest``) on ``device``; returns the verdict per step."""
    return Replayer(engine, device, source, options, on_step).run()


def device_spec_for(session: SessionRecord) -> tuple[str, int, dict[str, Any], str | None]:
    """The default device for replaying ``session``: (spec, sim seed, sim options, sim world)."""
    task_cfg = (session.config or {}).get("task") or {}
    sim = dict(task_cfg.get("sim") or {})
    world = sim.pop("world", None)
    seed = int(sim.pop("seed", 0) or 0)
    options = {k: v for k, v in sim.items() if v is not None}
    if session.device_kind == "sim" or not session.device_serial:
        serial = session.device_serial or "sim"
        spec = serial if serial.startswith("sim") else "sim"
        return spec, seed, options, world
    return session.device_serial, seed, options, world
