"""Run a task end to end: session row, device setup, the operator loop, success checks, result.

This is the Python API behind ``artemis run``::

    from artemis_cli.runner import run_task
    result = run_task(task, profile, device, model, engine)
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any

from artemis_cli.device.protocol import Device
from artemis_cli.engine.db import DataEngine
from artemis_cli.engine.records import EventRecord, SessionRecord
from artemis_cli.errors import DeviceError
from artemis_cli.models.base import Model
from artemis_cli.operators.checks import CheckResult, evaluate_checks
from artemis_cli.operators.flash import FlashLoop, LoopOutcome, StepReport, now_iso

EXIT_OK, EXIT_FAILED, EXIT_USAGE, EXIT_UNAVAILABLE = 0, 1, 2, 3


@dataclass
class RunResult:
    session_id: str
    status: str  # succeeded | failed | interrupted | aborted
    success: bool
    steps: int
    stop_reason: str
    message: str
    answer: str
    model: str
    model_label: str
    offline_model: bool
    checks: list[CheckResult] = field(default_factory=list)
    prompt_tokens: int = 0
    cached_tokens: int = 0
    completion_tokens: int = 0
    elapsed_s: float = 0.0
    data_dir: str = ""

    @property
    def exit_code(self) -> int:
        if self.status == "succeeded":
            return EXIT_OK
        if self.stop_reason in ("device_offline", "model_unavailable", "model_error"):
            return EXIT_UNAVAILABLE
        return EXIT_FAILED

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["exit_code"] = self.exit_code
        return data


def _decide_status(outcome: LoopOutcome, checks: list[CheckResult], has_checks: bool) -> tuple[str, bool, str]:
    if outcome.stop_reason in ("device_offline", "model_unavailable"):
        return "interrupted", False, outcome.stop_message
    if outcome.stop_reason == "model_error":
        return "aborted", False, outcome.stop_message
    if has_checks:
        ok = all(c.passed for c in checks)
        failed = [c.check for c in checks if not c.passed]
        msg = "all success checks passed" if ok else "success checks failed: " + "; ".join(failed)
        return ("succeeded" if ok else "failed"), ok, msg
    if outcome.finished:
        ok = bool(outcome.model_success)
        return ("succeeded" if ok else "failed"), ok, "the model finished with success=" + str(ok).lower()
    return "failed", False, f"stopped after {outcome.steps} steps without finishing (max_steps)"


def run_task(
    task: Any,
    profile: Any,
    device: Device,
    model: Model,
    engine: DataEngine,
    *,
    max_steps: int | None = None,
    real_time: bool = True,
    on_start: Callable[[str], None] | None = None,
    on_step: Callable[[StepReport], None] | None = None,
    on_notice: Callable[[str], None] | None = None,
) -> RunResult:
    info = device.info()
    steps_budget = max_steps or task.max_steps
    coordinates = getattr(profile, "coordinates", "pixels")
    session_id = engine.new_session_id()
    engine.create_session(
        SessionRecord(
            id=session_id,
            task_id=task.id,
            goal=task.goal,
            profile=getattr(profile, "name", "flash"),
            loop="flash",
            device_serial=info.serial,
            device_kind=info.kind,
            screen_width=info.width,
            screen_height=info.height,
            models={"operator": model.name},
            model_label=model.label,
            status="running",
            started_at=now_iso(),
            config={
                # the reference solution may hold credentials: store its length, not its text
                "task": task.model_dump(mode="json", exclude={"reference"}),
                "reference_steps": len(task.reference),
                "profile": profile.model_dump(mode="json") if hasattr(profile, "model_dump") else {},
                "max_steps": steps_budget,
                "offline_model": model.offline,
            },
        )
    )
    if on_start:
        on_start(session_id)

    loop = FlashLoop(
        session_id=session_id,
        engine=engine,
        device=device,
        model=model,
        goal=task.goal,
        app=task.app,
        max_steps=steps_budget,
        screen=(info.width, info.height),
        coordinates=coordinates,
        injections=_injections(task),
        real_time=real_time,
        on_step=on_step,
        on_notice=on_notice,
    )
    try:
        for setup in task.setup:
            out = device.shell(setup.shell)
            engine.record_event(EventRecord(session_id=session_id, step=None, kind="setup",
                                            payload={"shell": setup.shell, "output": out[:2000]}))
        if task.app:
            device.launch(task.app)
        outcome = loop.run()
    except DeviceError as exc:
        outcome = LoopOutcome(stop_reason="device_offline", stop_message=str(exc))
    except KeyboardInterrupt:
        engine.finish_session(session_id, "interrupted", {"stop_reason": "interrupted by the user"})
        raise

    checks: list[CheckResult] = []
    if outcome.stop_reason not in ("device_offline",) and task.success:
        checks = evaluate_checks(task.success, device, outcome.final)
    status, success, message = _decide_status(outcome, checks, bool(task.success))
    result = RunResult(
        session_id=session_id,
        status=status,
        success=success,
        steps=outcome.steps,
        stop_reason=outcome.stop_reason,
        message=message,
        answer=outcome.answer,
        model=model.name,
        model_label=model.label,
        offline_model=model.offline,
        checks=checks,
        prompt_tokens=outcome.prompt_tokens,
        cached_tokens=outcome.cached_tokens,
        completion_tokens=outcome.completion_tokens,
        elapsed_s=loop.offset_ms() / 1000,
        data_dir=str(engine.data_dir),
    )
    engine.finish_session(session_id, status, result.to_dict())
    return result


def _injections(task: Any) -> dict[int, list[str]]:
    out: dict[int, list[str]] = {}
    for inj in getattr(task, "inject", []) or []:
        out.setdefault(inj.at_step, []).append(inj.text)
    return out
