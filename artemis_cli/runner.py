"""Run a task end to end: session row, device setup, the operator loop, success checks, result.

This is the Python API behind ``artemis run`` and ``artemis resume``::

    from artemis_cli.runner import run_task
    result = run_task(task, profile, device, model, engine)
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Callable
from dataclasses import asdict, dataclass, field, replace
from typing import Any, NoReturn

from artemis_cli.budget import BudgetExceeded, BudgetGuard
from artemis_cli.device.protocol import Device
from artemis_cli.engine.clock import now_iso
from artemis_cli.engine.db import DataEngine
from artemis_cli.engine.errors import SessionTakenOver
from artemis_cli.engine.lease import Lease
from artemis_cli.engine.records import EventRecord, SessionRecord
from artemis_cli.engine.storage import disk_full, is_disk_full
from artemis_cli.errors import DeviceError
from artemis_cli.memory.ledger import LedgerSettings, TranscriptLedger
from artemis_cli.memory.lens import Lens
from artemis_cli.memory.recall import Recall
from artemis_cli.memory.service import StepMemoryService
from artemis_cli.models.base import Model, ToolDecl
from artemis_cli.operators.background import STOP_BOUND_S, stop_background
from artemis_cli.operators.budget_floor import ContextBudget, image_cost
from artemis_cli.operators.checks import CheckResult, evaluate_checks
from artemis_cli.operators.compression import CompressionPolicy, Compressor
from artemis_cli.operators.flash import FlashLoop, LoopOutcome, StepReport
from artemis_cli.operators.memory_tools import MemoryTools
from artemis_cli.operators.prompts import system_prompt, task_message
from artemis_cli.operators.recording import StepWriter
from artemis_cli.operators.roles import (
    LENS_CHOICES,
    make_chunk_lenses,
    make_lens,
    make_pro_agents,
)
from artemis_cli.operators.secrets import resolve_secrets, task_secrets
from artemis_cli.operators.tools import tool_declarations
from artemis_cli.plural import counted
from artemis_cli.stopping import SessionInterrupted, as_stop, exit_code_for, signal_name

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
    elapsed_s: float = 0.0  # ACTIVE time: the run and resume segments, not the time spent stopped
    wall_s: float = 0.0  # first start to the end, stops included
    interruptions: int = 0  # segments before this one that stopped short
    data_dir: str = ""
    signal: int | None = None  # the stop signal, when one ended the run
    #: every role's calls (operator, lenses, Pro roles), not the operator's alone
    thoughts_tokens: int = 0
    model_calls: int = 0
    #: ``engine.token_usage.CostSummary.to_dict()``: USD in total and per role (None: unknown)
    cost: dict[str, Any] = field(default_factory=dict)
    max_cost: float | None = None  # the run's limit in USD (``--max-cost``/profile ``max_cost``)

    @property
    def exit_code(self) -> int:
        if self.status == "succeeded":
            return EXIT_OK
        if self.signal is not None:
            return exit_code_for(self.signal)
        if self.stop_reason == "storage_full":
            return EXIT_UNAVAILABLE
        if self.stop_reason in ("device_offline", "model_unavailable", "model_error"):
            return EXIT_UNAVAILABLE
        if self.stop_reason == "model_config":  # the API key was rejected: a usage error
            return EXIT_USAGE
        if self.stop_reason == "budget":  # stopped cleanly before passing --max-cost, as a stop signal would
            return exit_code_for(2)
        return EXIT_FAILED  # also model_refused and model_no_action: the model, not an outage

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["exit_code"] = self.exit_code
        return data


@dataclass
class Callbacks:
    on_start: Callable[[str], None] | None = None
    on_step: Callable[[StepReport], None] | None = None
    on_notice: Callable[[str], None] | None = None


def _decide_status(outcome: LoopOutcome, checks: list[CheckResult], has_checks: bool,
                   max_steps: int | None = None) -> tuple[str, bool, str]:
    if outcome.stop_reason in ("device_offline", "model_unavailable", "storage_full"):
        return "interrupted", False, outcome.stop_message
    if outcome.stop_reason in ("model_config", "budget"):  # fix the key / raise the limit, then resume
        return "interrupted", False, outcome.stop_message
    # a rejected request, a refusal, or no usable action from any model of the chain: the run
    # was ended, not judged (aborted, not failed), and stays resumable to try the step again
    if outcome.stop_reason in ("model_error", "model_refused", "model_no_action"):
        return "aborted", False, outcome.stop_message
    # the step budget ran out before the model called finish: said first, whatever the checks say
    ran_out = "" if outcome.finished or outcome.stop_reason != "max_steps" else (
        f"stopped at max_steps {max_steps if max_steps is not None else outcome.steps} without finish")
    if has_checks:
        ok = all(c.passed for c in checks)
        failed = [c.check for c in checks if not c.passed]
        msg = "all success checks passed" if ok else "success checks failed: " + "; ".join(failed)
        return ("succeeded" if ok else "failed"), ok, f"{ran_out}; {msg}" if ran_out else msg
    if outcome.finished:
        ok = bool(outcome.model_success)
        return ("succeeded" if ok else "failed"), ok, "the model finished with success=" + str(ok).lower()
    return "failed", False, ran_out or f"stopped after {counted(outcome.steps, 'step')} without finishing"


def session_prompt(profile: Any, task: Any = None) -> dict[str, Any]:
    """The S zone a new session starts with: the system text (naming ``task``'s secrets, never
    their values) and the tool declarations, as plain JSON. It is stored in the session's config,
    so resume and ``sessions prompt`` rebuild the very prefix the session was sent even after
    Artemis's own prompt text or tools change."""
    tools = [{"name": t.name, "description": t.description, "parameters": t.parameters}
             for t in tool_declarations(profile.coordinates)]
    system = system_prompt(marks=profile.screenshot.marks, secrets=task_secrets(task), knowhow=profile.knowhow)
    return {"system": system, "tools": tools}


def new_ledger(task: Any, profile: Any, engine: DataEngine, max_steps: int,
               prompt: dict[str, Any] | None = None, started_after: int = 0) -> TranscriptLedger:
    """An empty ledger for a session (``task`` needs ``goal`` and ``app``); ``prompt`` is the
    session's stored S zone (:func:`session_prompt`), None for a new session or one recorded
    before sessions stored it (the current text then). ``started_after``: the steps a program
    took before this goal (``phone.act``), which the task text tells the model."""
    prompt = prompt or session_prompt(profile, task)
    return TranscriptLedger(
        system=prompt["system"],
        tools=[ToolDecl(t["name"], t["description"], t["parameters"]) for t in prompt["tools"]],
        task_text=task_message(task.goal, app=task.app, max_steps=max_steps, started_after=started_after),
        settings=LedgerSettings.from_profile(profile),
        load_image=engine.blob,
    )


def build_loop(
    session_id: str,
    task: Any,
    profile: Any,
    device: Device,
    model: Model,
    engine: DataEngine,
    *,
    max_steps: int,
    real_time: bool,
    callbacks: Callbacks,
    lens: Lens | None = None,
    ledger: TranscriptLedger | None = None,
    user_inbox: Callable[[], list[str]] | None = None,
    lenses: str = "auto",
    lease: Lease | None = None,
    secrets: dict[str, str] | None = None,
) -> tuple[FlashLoop, StepMemoryService]:
    """The operator loop of a session; ``secrets``: the task's secret values by name
    (``operators.secrets.resolve_secrets``), typed on ``type_text(secret=NAME)``."""
    info = device.info()
    mem = profile.memory
    recall = Recall(engine)
    service = StepMemoryService(
        engine,
        lens or make_lens(model, profile, engine, session_id, lenses),
        max_concurrency=mem.runtime.max_concurrency,
        retry_limit=mem.runtime.retry_limit,
        on_ready=lambda step, text: recall.index_summary(session_id, step, text),
    )
    ledger = ledger or new_ledger(task, profile, engine, max_steps)
    chunk_lens, chunk_fallback = make_chunk_lenses(model, profile, engine, session_id, lenses)
    policy = CompressionPolicy.from_profile(profile)
    budget = session_budget(engine, session_id)
    if budget is not None:  # the effective budget the run started with (the server's window may be smaller)
        policy = replace(policy, budget_tokens=budget.tokens)
    compressor = Compressor(engine, session_id, ledger, policy, chunk_lens, chunk_fallback, goal=task.goal)
    loop_class: Any = FlashLoop
    extra: dict[str, Any] = {}
    if profile.loop == "pro":
        from artemis_cli.operators.pro.loop import ProLoop

        loop_class = ProLoop
        extra = {"agents": make_pro_agents(model, profile, engine, session_id), "goal": task.goal,
                 "secrets_told": task_secrets(task)}
    loop = loop_class(
        **extra,
        session_id=session_id,
        engine=engine,
        device=device,
        model=model,
        ledger=ledger,
        writer=StepWriter(engine, session_id, recall, service),
        memory=MemoryTools(engine, session_id, recall, enabled=mem.recall.enabled,
                           max_results=mem.recall.max_results, max_text_tokens=mem.recall.max_text_tokens),
        max_steps=max_steps,
        screen=(info.width, info.height),
        coordinates=profile.coordinates,
        marks=profile.screenshot.marks,
        compressor=compressor,
        similarity_hint=mem.transcript.similarity_hint,
        similarity_max_distance=mem.transcript.similarity_max_distance,
        injections=_injections(task),
        user_inbox=user_inbox,
        real_time=real_time,
        settle_s=(profile.settle_ms or 0) / 1000,
        settle_max_s=profile.settle_max_ms / 1000,
        on_step=callbacks.on_step,
        on_notice=callbacks.on_notice,
        lease=lease,
        secrets=dict(secrets or {}),
    )
    loop.meter.image_cost = image_cost(getattr(model, "provider", None) or "gemini",
                                       getattr(getattr(model, "options", None), "max_image_side", None))
    if isinstance(loop, FlashLoop) and hasattr(loop, "plan"):
        compressor.plan_state = lambda: loop.plan.checklist() if getattr(loop, "plan", None) else ""
    else:  # the model's own plan (the plan tool), as the observation recites it
        compressor.plan_state = lambda: loop.memory.recited_plan() or ""
    return loop, service


def session_budget(engine: DataEngine, session_id: str) -> ContextBudget | None:
    """The context budget a session started with (its config's ``context_budget``), or None for
    one recorded before sessions stored it (the profile's budget then)."""
    rec = engine.get_session(session_id)
    return ContextBudget.from_dict((rec.config or {}).get("context_budget")) if rec is not None else None


def context_budget(profile: Any, model: Model, screen: tuple[int, int],
                   secrets: dict[str, str] | None = None) -> ContextBudget:
    """The run's budget and floor, unfitted: refuses a budget below the floor (``UsageError``)
    before any model call and before a session exists (:func:`fitted_context` fits instead)."""
    return fitted_context(profile, model, screen, secrets, fit=False)[1]


def fitted_context(profile: Any, model: Model, screen: tuple[int, int], secrets: dict[str, str] | None = None,
                   fit: bool = True) -> tuple[Any, ContextBudget]:
    """The profile a run uses and its budget (``operators.budget_fit``): the server's context
    window is asked once (an OpenAI-compatible model's ``context_window``: vLLM, llama.cpp, Ollama
    say it; others do not) and its tokenizer counts the S zone when it has one (the model's
    ``count_tokens``: vLLM's or llama.cpp's ``/tokenize``, Gemini's ``countTokens``). Below the floor the run is fitted (``fit``) or refused (``UsageError``)
    before any operator call and before a session exists."""
    from artemis_cli.operators.budget_fit import fit_budget

    reader = getattr(model, "context_window", None)
    window = reader() if callable(reader) and not model.offline else None
    counter = getattr(model, "count_tokens", None)
    measure = None
    if callable(counter) and not model.offline:
        counted: dict[str, Any] = {}

        def measure(system: str, tools: list[Any]) -> Any:  # one request per distinct system text
            if system not in counted:
                counted[system] = counter(system, tools)
            return counted[system]

    return fit_budget(profile, screen, model, window, secrets, measure, fit=fit)


def finish_run(
    session_id: str,
    task: Any,
    profile: Any,
    device: Device,
    model: Model,
    engine: DataEngine,
    loop: FlashLoop,
    service: StepMemoryService,
    outcome: LoopOutcome,
) -> RunResult:
    disk_full = outcome.stop_reason == "storage_full"
    checks: list[CheckResult] = []
    try:  # a stop signal while the summaries finish or the checks run is a stop like any other
        stop_background(loop, service, 0 if disk_full else profile.memory.runtime.flush_timeout_s)
        loop.check_owner()  # taken over since the last step: the checks and the final write are not ours
        if outcome.stop_reason not in ("device_offline", "storage_full") and task.success:
            checks = evaluate_checks(task.success, device, outcome.final, finish=outcome)
    except KeyboardInterrupt as exc:
        interrupt(engine, session_id, loop, service, model, exc)
    status, success, message = _decide_status(outcome, checks, bool(task.success), loop.max_steps)
    if status == "interrupted" and outcome.stop_reason == "budget":
        message += (f" — the session is saved; continue it with a higher limit: artemis resume {session_id} "
                    f"--max-cost {_next_limit(outcome)}")
    elif status == "interrupted" and outcome.stop_reason != "storage_full":  # that message says it already
        message += f" — the session is saved; continue it with: artemis resume {session_id}"
    elif status == "aborted":  # the service rejected the request (never retried): say what now
        message += (f" — the session is saved; inspect it with: artemis sessions show {session_id}; "
                    f"to try the step again: artemis resume {session_id}")
    result = RunResult(
        session_id=session_id,
        status=status,
        success=success,
        steps=engine.last_step_number(session_id),
        stop_reason=outcome.stop_reason,
        message=message,
        answer=outcome.answer,
        model=model.name,
        model_label=model.label,
        offline_model=model.offline,
        checks=checks,
        elapsed_s=loop.offset_ms() / 1000,
        data_dir=str(engine.data_dir),
    )
    count_usage(engine, result)
    finish_session(engine, session_id, status, result)
    return result


def _next_limit(outcome: LoopOutcome) -> str:
    """A limit to suggest after a budget stop: twice the old one, or what was spent plus twice the
    refused call's estimate when that is more, rounded up to two significant digits."""
    spent, estimate, limit = outcome.budget_usd or (0.0, 0.0, 0.0)
    want = max(limit * 2, spent + 2 * estimate)
    if want <= 0:
        return "1"
    step = 10 ** (math.floor(math.log10(want)) - 1)
    return f"{math.ceil(want / step - 1e-9) * step:.10g}"


def count_usage(engine: DataEngine, result: RunResult) -> None:
    """Fill ``result``'s tokens, calls and cost from every role's recorded calls of the session
    (``engine.token_usage``): not the operator's alone."""
    from artemis_cli.engine.token_usage import session_costs, token_usage

    total = token_usage(engine, result.session_id).total
    result.prompt_tokens, result.cached_tokens = total.prompt, total.cached
    result.completion_tokens, result.thoughts_tokens = total.completion, total.thoughts
    result.model_calls = total.calls
    result.cost = session_costs(engine, result.session_id).to_dict()


def interrupt(engine: DataEngine, session_id: str, loop: Any, service: StepMemoryService, model: Model,
              exc: KeyboardInterrupt) -> NoReturn:
    """A stop signal: the background work is stopped, then the session is marked ``interrupted``
    (whole steps only) and ``SessionInterrupted`` raised for the CLI, which closes the engine."""
    stop = as_stop(exc)
    stop_background(loop, service, STOP_BOUND_S, signal_name(stop.signum))
    step = engine.last_step_number(session_id)
    result = RunResult(
        session_id=session_id, status="interrupted", success=False, steps=step,
        stop_reason="interrupted",
        message=(f"stopped by {signal_name(stop.signum)} after step {step} — the session is saved; "
                 f"continue it with: artemis resume {session_id}"),
        answer="", model=model.name, model_label=model.label, offline_model=model.offline,
        elapsed_s=loop.offset_ms() / 1000, data_dir=str(engine.data_dir), signal=stop.signum,
    )
    finish_session(engine, session_id, "interrupted", result)
    raise SessionInterrupted(stop.signum, session_id, step, result) from None


def finish_session(engine: DataEngine, session_id: str, status: str, result: RunResult | dict[str, Any]) -> None:
    """The final status write. On a full disk it may fail: the session then shows as interrupted
    anyway (``running`` with no live owner), so the failure is not an error of its own. A write
    that a stop signal cut short is rolled back first, or this one would nest in it and be lost.

    An interrupted segment is marked by an ``interrupted`` event (where and why it stopped), and
    the result's time becomes the session's (``artemis_cli.engine.segments``): ``elapsed_s`` is
    the ACTIVE time (the sum of the run and resume segments), ``wall_s`` first start to now."""
    from artemis_cli.engine.segments import INTERRUPTED_EVENT, session_time

    try:
        engine.abandon_interrupted_write()
        data = result if isinstance(result, dict) else result.to_dict()
        times: dict[str, Any] = {}
        try:  # the stop's mark and the time first; on a full disk the status write is still tried
            if status == "interrupted":
                signum = data.get("signal")
                engine.record_event(EventRecord(session_id=session_id, step=None, kind=INTERRUPTED_EVENT, payload={
                    "after_step": data.get("steps", 0),
                    "reason": signal_name(signum) if signum else data.get("stop_reason") or "interrupted"}))
            timing = session_time(engine, engine.get_session(session_id), running=status != "interrupted")
            times = {"elapsed_s": round(timing.active_s, 3), "wall_s": round(timing.wall_s, 3),
                     "interruptions": timing.interruptions}
            if isinstance(result, RunResult):
                result.elapsed_s, result.wall_s, result.interruptions = (
                    times["elapsed_s"], times["wall_s"], timing.interruptions)
        except Exception as exc:
            if not is_disk_full(exc):
                raise
        engine.finish_session(session_id, status, {**data, **times})
    except Exception as exc:
        if not is_disk_full(exc):
            raise


def drive(
    engine: DataEngine,
    session_id: str,
    loop: FlashLoop,
    service: StepMemoryService,
    model: Model,
    body: Callable[[], LoopOutcome],
) -> LoopOutcome:
    """Run ``body`` (setup and the loop) and turn every way it can stop into an outcome:
    a device that went away, a full disk, or a stop signal (the session is marked
    ``interrupted`` and ``SessionInterrupted`` is raised for the CLI). A lease taken over
    (``SessionTakenOver``) is raised as it is: the session is not ours to write any more."""
    try:
        return body()
    except BudgetExceeded as exc:  # stopped before the call that would pass the limit: resumable
        with contextlib.suppress(Exception):
            engine.record_event(EventRecord(session_id=session_id, step=None, kind="budget",
                                            payload={"spent_usd": exc.spent, "estimate_usd": exc.estimate,
                                                     "limit_usd": exc.limit}))
        return LoopOutcome(stop_reason="budget", stop_message=str(exc),
                           budget_usd=(exc.spent, exc.estimate, exc.limit))
    except SessionTakenOver:  # the session is another process's now: no checks, no final write
        stop_background(loop, service, 0)
        raise
    except DeviceError as exc:  # setup, launch, or a device error the loop does not handle itself
        with contextlib.suppress(Exception):
            engine.record_event(EventRecord(session_id=session_id, step=None, kind="device_fault",
                                            payload={"what": "run", "detail": f"{type(exc).__name__}: {exc}"}))
        return LoopOutcome(stop_reason="device_offline", stop_message=str(exc))
    except KeyboardInterrupt as exc:
        interrupt(engine, session_id, loop, service, model, exc)
    except Exception as exc:
        if not is_disk_full(exc):
            raise
        return LoopOutcome(stop_reason="storage_full", stop_message=str(disk_full(engine.data_dir, session_id)),
                           final=None)


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
    lens: Lens | None = None,
    run_config: dict[str, Any] | None = None,
    user_inbox: Callable[[], list[str]] | None = None,
    ledger_factory: Callable[[TranscriptLedger], TranscriptLedger] | None = None,
    lenses: str = "auto",
    max_cost: float | None = None,
    on_budget: Callable[[ContextBudget], None] | None = None,
    secrets: dict[str, str] | None = None,
    fit: bool = True,
) -> RunResult:
    """Create a session and run ``task`` to its end. ``run_config`` is what `resume` needs to
    rebuild the same run (the CLI passes the task file, model and device options).
    ``ledger_factory`` turns the session's new ledger into another projection of it (``artemis
    bench`` memory modes, ``artemis_cli.memory.modes``); None keeps the transcript ledger.
    ``lenses`` (:data:`LENS_CHOICES`): ``mechanical`` keeps step and chunk summaries off the model
    even when the operator is a Gemini model (the bench's scripted runs). ``max_cost`` (USD; None:
    the profile's ``max_cost``) stops the run before the model call that would pass it. The context
    budget (``operators.budget_floor``) is planned first — a budget below its floor is a
    ``UsageError`` before the session exists, unless the run can be fitted to it (``fit``;
    ``operators.budget_fit``: the session then runs and stores the fitted profile) — and
    ``on_budget`` is told it. ``secrets``: values
    of the task's secrets already known (taken before the environment and the prompt)."""
    if lenses not in LENS_CHOICES:
        raise ValueError(f"lenses must be one of {LENS_CHOICES}, got {lenses!r}")
    info = device.info()
    steps_budget = max_steps or profile.max_steps or task.max_steps
    from artemis_cli.models.registry import check_role_models

    check_role_models(model, profile, lenses=lenses == "auto")
    from artemis_cli.budget import check_priced

    limit = max_cost if max_cost is not None else profile.max_cost
    check_priced(model, profile, limit)
    profile, budget = fitted_context(profile, model, (info.width, info.height), task_secrets(task), fit=fit)
    # a secret nothing supplies is a usage error before the session exists (its variable named)
    secrets = resolve_secrets(task_secrets(task), task_id=task.id, have=secrets)
    if on_budget is not None:
        on_budget(budget)
    session_id = engine.new_session_id()
    prompt = session_prompt(profile, task)
    engine.create_session(
        SessionRecord(
            id=session_id,
            task_id=task.id,
            goal=task.goal,
            profile=profile.name,
            loop=profile.loop,
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
                "profile": profile.model_dump(mode="json"),
                "max_steps": steps_budget,
                "offline_model": model.offline,
                "prompt": prompt,
                "run": run_config or {},
                "context_budget": budget.to_dict(),
            },
        )
    )
    with engine.acquire_lease(session_id, "run") as lease, priced(engine, session_id, model, profile) as pricer:
        if on_start:
            on_start(session_id)
        ledger = new_ledger(task, profile, engine, steps_budget, prompt)
        if ledger_factory is not None:
            ledger = ledger_factory(ledger)
        loop, service = build_loop(session_id, task, profile, device, model, engine, max_steps=steps_budget,
                                   real_time=real_time, callbacks=Callbacks(on_start, on_step, on_notice),
                                   lens=lens, ledger=ledger, user_inbox=user_inbox, lenses=lenses, lease=lease,
                                   secrets=secrets)
        guard_budget(loop, engine, session_id, pricer, limit)

        def body() -> LoopOutcome:
            for setup in task.setup:
                out = device.shell(setup.shell)
                engine.record_event(EventRecord(session_id=session_id, step=None, kind="setup",
                                                payload={"shell": setup.shell, "output": out[:2000]}))
            if task.app:
                device.launch(task.app)
            return loop.run()

        outcome = drive(engine, session_id, loop, service, model, body)
        result = finish_run(session_id, task, profile, device, model, engine, loop, service, outcome)
        result.max_cost = limit
        return result


@contextlib.contextmanager
def priced(engine: DataEngine, session_id: str, model: Model, profile: Any) -> Any:
    """Price every call of ``session_id`` as it is recorded while the block runs; yields the pricer."""
    from artemis_cli.models.pricing import pricer_for

    pricer = pricer_for(model, profile)
    engine.set_pricer(session_id, pricer)
    try:
        yield pricer
    finally:
        engine.set_pricer(session_id, None)


def guard_budget(loop: FlashLoop, engine: DataEngine, session_id: str, pricer: Any, limit: float | None) -> None:
    """With a limit, every call of the operator's model and of the role models made from it first
    checks the budget (``artemis_cli.budget``); without one, a check left from an earlier run of
    the same model is removed. Offline models have no gate and cost nothing."""
    gate = getattr(loop.model, "gate", None)
    if gate is not None:
        gate.check = None if limit is None else BudgetGuard(engine, session_id, pricer, limit).check


def _injections(task: Any) -> dict[int, list[str]]:
    out: dict[int, list[str]] = {}
    for inj in getattr(task, "inject", []) or []:
        out.setdefault(inj.at_step, []).append(inj.text)
    return out
