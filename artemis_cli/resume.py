"""Resuming an interrupted session: the transcript rebuilt from the DataEngine (no model call), a
simulated phone fast-forwarded, the model the session ran on (or an override within its provider),
and the loop going on from the next step number under the session's lease."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from artemis_cli.device.protocol import Device
from artemis_cli.engine.clock import now_iso
from artemis_cli.engine.db import DataEngine
from artemis_cli.engine.lease import Lease
from artemis_cli.engine.records import EventRecord, SessionRecord
from artemis_cli.engine.segments import FAST_FORWARD_EVENT, RESUME_EVENT
from artemis_cli.memory.service import StepMemoryService
from artemis_cli.models.base import Model
from artemis_cli.operators.flash import FlashLoop, LoopOutcome, StepReport
from artemis_cli.operators.recording import pending_lens_jobs, responses_from_dicts
from artemis_cli.operators.secrets import resolve_secrets, task_secrets
from artemis_cli.runner import (
    Callbacks,
    RunResult,
    build_loop,
    drive,
    finish_run,
    finish_session,
    guard_budget,
    new_ledger,
    priced,
)
from artemis_cli.stopping import SessionInterrupted, as_stop


def resume_session(
    session_id: str,
    engine: DataEngine,
    *,
    device: Device | None = None,
    model: Model | None = None,
    real_time: bool = True,
    on_start: Callable[[str], None] | None = None,
    on_step: Callable[[StepReport], None] | None = None,
    on_notice: Callable[[str], None] | None = None,
    lease: Lease | None = None,
    override: dict[str, Any] | None = None,
    max_cost: float | None = None,
) -> RunResult:
    """Continue an interrupted session from the DataEngine: the transcript is rebuilt from stored
    records (no model call), a simulated phone is fast-forwarded, and the loop goes on from the
    next step number. The session's lease is taken first (``lease``, if the caller already holds
    it): a session another live process owns is refused before the device is touched.
    ``override`` (``registry.resume_choice``): ``model`` was built from another model name or
    endpoint than the session's; it is recorded on the resume event and in the session's run
    config (the next resume goes on from there). ``max_cost`` (USD) limits the whole session —
    what earlier segments spent counts toward it; None keeps the limit the session last ran with
    (or the profile's ``max_cost``)."""
    rec = engine.get_session(session_id)
    session_id = rec.id
    ensure_resumable(rec)
    with lease or engine.acquire_lease(session_id, "resume") as held:
        try:
            loop, service, device, model, task, spec, start, last = _prepare_resume(
                rec, engine, device, model, real_time, Callbacks(on_start, on_step, on_notice), override or {}, held)
        except KeyboardInterrupt as exc:
            stop = as_stop(exc)
            step = engine.last_step_number(session_id)
            finish_session(engine, session_id, "interrupted", {"stop_reason": "interrupted",
                                                                "signal": stop.signum, "steps": step})
            raise SessionInterrupted(stop.signum, session_id, step) from None
        pending = responses_from_dicts((last.meta or {}).get("replies_out")) if last else []
        from artemis_cli.budget import check_priced

        limit = max_cost if max_cost is not None else ((rec.result or {}).get("max_cost") or spec.profile.max_cost)
        check_priced(model, spec.profile, limit)

        def body() -> LoopOutcome:
            # summaries a stop cut off (or cancelled) are made now: they stayed pending
            for job in pending_lens_jobs(engine, engine.get_steps(session_id)):
                service.submit(job)
            if last is not None and last.result_status == "finished":
                return LoopOutcome(steps=last.number, finished=True, stop_reason="finished",
                                   model_success=bool((last.action_args or {}).get("success")),
                                   answer=str((last.action_args or {}).get("answer", "")),
                                   final=loop.observe(None))
            return loop.run(start_step=start, pending=pending)

        with priced(engine, session_id, model, spec.profile) as pricer:
            guard_budget(loop, engine, session_id, pricer, limit)
            outcome = drive(engine, session_id, loop, service, model, body)
            result = finish_run(session_id, task, spec.profile, device, model, engine, loop, service, outcome)
        result.max_cost = limit
        return result


def ensure_resumable(rec: SessionRecord) -> None:
    """A session that ended (succeeded or failed) has nothing left to resume: UsageError."""
    from artemis_cli.engine.records import LIBRARY_LOOP, MCP_LOOP, continue_command
    from artemis_cli.errors import UsageError

    if rec.status in ("succeeded", "failed"):
        raise UsageError(f"session {rec.id} already ended ({rec.status}); there is nothing to resume")
    if rec.loop == MCP_LOOP:  # an outside agent decided its steps: there is no model loop to go on with
        raise UsageError(f"session {rec.id} was driven by an MCP client ({rec.model_label or 'unknown'})",
                         hint=f"continue it with: {continue_command(rec.id, rec.loop)}")
    if rec.loop == LIBRARY_LOOP:  # a Python program decided its steps: only it can go on
        raise UsageError(f"session {rec.id} was driven by a Python program through artemis_cli.Phone",
                         hint=continue_command(rec.id, rec.loop))


def resume_model(rec: SessionRecord, engine: DataEngine, model: str | None = None,
                 base_url: str | None = None) -> tuple[Model, dict[str, Any]]:
    """The model a resume of ``rec`` runs on (the recorded one, or ``model`` / ``base_url`` /
    ``$ARTEMIS_OPENAI_BASE_URL`` within the same provider) and the override to record
    (``registry.resume_choice``); not yet checked (``preflight.check_model``)."""
    from artemis_cli.memory.restore import SessionSpec

    spec = SessionSpec.load(engine, rec.id)
    return _model_for(spec, _task_for(spec), model, base_url)


def _model_for(spec: Any, task: Any, model: str | None = None,
               base_url: str | None = None) -> tuple[Model, dict[str, Any]]:
    """The one rule for what a resume runs on (``registry.resume_choice``), built for ``task``."""
    from artemis_cli.models.registry import build_model, resume_choice

    name, url, override = resume_choice(spec.run, model, base_url, spec.profile)
    return build_model(name, task=task, profile=spec.profile, base_url=url), override


def _prepare_resume(
    rec: SessionRecord, engine: DataEngine, device: Device | None, model: Model | None, real_time: bool,
    callbacks: Callbacks, override: dict[str, Any], lease: Lease | None = None,
) -> tuple[FlashLoop, StepMemoryService, Device, Model, Any, Any, int, Any]:
    """Everything ``resume_session`` does before the loop runs again: the model, the device (a
    simulated phone fast-forwarded), the rebuilt ledger and loop state."""
    from artemis_cli.memory.ledger_lines import action_phrase
    from artemis_cli.memory.restore import SessionSpec, rebuild_ledger
    from artemis_cli.operators.recording import StepTrace, action_key

    session_id = rec.id
    spec = SessionSpec.load(engine, session_id)
    task = _task_for(spec)
    if model is None:
        model, override = _model_for(spec, task)
    steps = engine.get_steps(session_id)
    # the task's secrets, from the environment or a prompt, before the device is touched
    secrets = resolve_secrets(task_secrets(task), task_id=task.id)
    if device is None:
        device = recorded_device(spec.run, rec.device_serial)
        if device.info().kind == "sim":
            restore_sim(engine, session_id, device, task, steps, callbacks.on_notice, secrets)
    ledger = new_ledger(task, spec.profile, engine, spec.max_steps, spec.prompt)
    rebuild_ledger(engine, session_id, ledger)
    loop, service = build_loop(session_id, task, spec.profile, device, model, engine, max_steps=spec.max_steps,
                               real_time=real_time, callbacks=callbacks, ledger=ledger, lease=lease,
                               secrets=secrets)
    loop.offset_base_ms = resumed_offset_ms(rec)
    loop.writer.history = [
        StepTrace(s.number, s.pre_dhash or "", s.offset_ms or 0, action_phrase(s),
                  action_key(s.action_type or "", s.action_args, s.target))
        for s in steps
    ]
    last = steps[-1] if steps else None
    if override:  # never a key: the model name and the endpoint only
        run = {**spec.run, "model": override["model"], "base_url": override["base_url"]}
        engine.update_session(session_id, status="running", config={**(rec.config or {}), "run": run},
                              models={**(rec.models or {}), "operator": model.name}, model_label=model.label)
    else:
        engine.update_session(session_id, status="running")
    if loop.compressor is not None:
        loop.compressor.restore(ledger.decisions)
    _restore_pro_state(loop, engine, session_id, steps)
    engine.record_event(EventRecord(session_id=session_id, step=None, kind=RESUME_EVENT,
                                    payload={"after_step": last.number if last else 0,
                                             "entries": len(ledger.entries), "device": device.info().serial,
                                             "model": model.label, **({"override": override} if override else {})}))
    if callbacks.on_start:
        callbacks.on_start(session_id)
    start = (last.number + 1) if last else 1
    if any(d.op == "turn" and d.at == start for d in ledger.decisions):
        loop.decided_turn = start  # the interrupted turn's decisions stand; it is not re-decided
    return loop, service, device, model, task, spec, start, last


def _restore_pro_state(loop: Any, engine: DataEngine, session_id: str, steps: list[Any]) -> None:
    """The Pro loop's plan and milestone stamps, from the plan events and the step records."""
    if not hasattr(loop, "stamps"):
        return
    from artemis_cli.operators.pro.loop import PLAN_EVENT
    from artemis_cli.operators.pro.plan import Plan

    plans = engine.events(session_id, kind=PLAN_EVENT)
    if plans:
        loop.plan = Plan.from_dict(plans[-1].payload["plan"])
    loop.stamps = {s.number: (s.subgoal_hash, s.milestone or "") for s in steps if s.subgoal_hash}


def recorded_device(run: dict[str, Any], serial: str | None,
                    notice: Callable[[str], None] | None = None) -> Device:
    """The device a session ran on, from its run config (``run``: device spec, backend, and a
    simulated phone's world, seed and options), else its recorded serial."""
    from artemis_cli.device.select import resolve_device

    sim = dict(run.get("sim") or {})
    return resolve_device(run.get("device") or serial, backend=run.get("backend", "auto"),
                          sim_seed=sim.pop("seed", 0), sim_world=sim.pop("world", None), sim_options=sim,
                          notice=notice)


def restore_sim(engine: DataEngine, session_id: str, device: Device, task: Any, steps: list[Any],
                notice: Callable[[str], None] | None = None, secrets: Mapping[str, str] | None = None) -> None:
    """Bring a fresh simulated phone to where the session left it: its setup and every recorded
    action again (``operators.fastforward``; ``secrets``: the task's values by name, retyped
    where a step typed one), recorded as a ``fast_forward`` event; ``notice`` is told when the
    restored screen differs from the last recorded one."""
    from artemis_cli.operators.fastforward import fast_forward

    distance = fast_forward(device, task, steps, secrets)
    engine.record_event(EventRecord(session_id=session_id, step=None, kind=FAST_FORWARD_EVENT,
                                    payload={"steps": len(steps), "dhash_distance": distance}))
    if distance and notice:
        notice(f"the restored simulated screen differs from the last recorded one by {distance} bits")


def resumed_offset_ms(rec: SessionRecord) -> int:
    """Where a resumed segment's session clock starts: the time since the session first started."""
    from datetime import UTC, datetime

    started = datetime.fromisoformat(rec.started_at or now_iso())
    return int((datetime.now(UTC) - started).total_seconds() * 1000)


def task_for_session(engine: DataEngine, session_id: str) -> Any:
    """The task ``session_id`` ran (its file when it still exists, else the stored copy)."""
    from artemis_cli.memory.restore import SessionSpec

    return _task_for(SessionSpec.load(engine, session_id))


def _task_for(spec: Any) -> Any:
    """The task a session ran: its file when it still exists (reference, checks), else the stored copy."""
    from pathlib import Path

    from artemis_cli.config.task import Task, load_task

    path = spec.run.get("task_file")
    if path and Path(path).is_file():
        return load_task(path)
    return Task.model_validate(spec.task)
