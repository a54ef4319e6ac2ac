"""One ``artemis test`` case as a picklable job, and the runner the scheduler calls with it.

:func:`run_case_job` runs a task as ``artemis run`` does (the task's profile or ``--profile``,
``--model`` through the model registry, the task's sim settings) with
:func:`artemis_cli.runner.run_task`, recording into the case's own data dir under ``work_dir``
(no two processes write one SQLite file). The driver imports the session afterwards."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any


@dataclass(frozen=True)
class CaseJob:
    task_file: str  # a task case's file ("" for a session case)
    model: str | None
    profile: str | None
    attempt: int = 1
    #: a session case: the session to replay, shipped as a bundle into the case's data dir (and its
    #: promoted baseline's bundle, which the replay then replays)
    session: str = ""
    source_bundle: str = ""
    baseline_bundle: str = ""


def replay_options(model: str | None, profile: str | None, source: Any) -> Any:
    """The options every session case replays with: healing on, with ``--model`` or, without one,
    the rule of ``replay --heal`` (the profile's model with an API key, else the offline healer)."""
    from artemis_cli.replay import ReplayOptions
    from artemis_cli.replay.heal import healing_model

    heal_model, prof, _ = healing_model(model, profile, source)
    return ReplayOptions(heal=True, model=heal_model, profile=prof)


def case_cost(engine: Any, session_id: str) -> dict[str, Any]:
    """The case's cost: total USD (None when a price is unknown) and per role, every call priced as
    it was recorded (``engine.token_usage.session_costs``)."""
    from artemis_cli.engine.token_usage import session_costs

    return session_costs(engine, session_id).to_dict()


def checks_phrase(checks: list[dict[str, Any]]) -> str:
    failed = [c.get("check", "?") + (f" ({c['detail']})" if c.get("detail") else "")
              for c in checks if not c.get("passed")]
    return "failed check: " + "; ".join(failed) if failed else ""


def _step_counter(on_step: Callable[[int], None] | None) -> Callable[[Any], None]:
    """A per-step callback (run or replay) that reports the running step count to ``on_step``."""
    count = 0

    def step(_report: Any) -> None:
        nonlocal count
        count += 1
        if on_step is not None:
            on_step(count)

    return step


def run_case_job(job: CaseJob, device: str, work_dir: Path,
                 on_step: Callable[[int], None] | None = None) -> dict[str, Any]:
    """Run the task of ``job`` on ``device`` (``sim``/``sim#N`` or an adb serial) into
    ``work_dir`` (its own data dir); return the case row. A device that drops raises ``DeviceOffline``."""
    if job.session:
        return run_session_job(job, device, work_dir, on_step)
    from artemis_cli.bench.worker import PairInterrupted, is_sim, reset_served_sim, sim_world_of
    from artemis_cli.config.profile import load_profile
    from artemis_cli.config.task import load_task
    from artemis_cli.device.select import resolve_device
    from artemis_cli.engine.db import DataEngine
    from artemis_cli.engine.token_usage import token_usage
    from artemis_cli.models.registry import build_model, default_model_name
    from artemis_cli.runner import run_task

    task = load_task(job.task_file)
    prof = load_profile(job.profile or task.profile)
    model_name = job.model or default_model_name(prof)
    mdl = build_model(model_name, task=task, profile=prof)
    sim_opts = task.sim.model_dump() if task.sim is not None else {}
    world = sim_world_of(device) or sim_opts.pop("world", "default")  # a sim:<world> device: that world
    sim_opts.pop("world", None)
    seed = sim_opts.pop("seed", 0)
    if is_sim(device):
        dev = resolve_device("sim", sim_seed=seed, sim_options=sim_opts, sim_world=world,
                             sim_task=task.id if task.written_for_sim else None)
    else:
        dev = resolve_device(device, backend="adb")
        reset_served_sim(dev, task)
    engine = DataEngine.open(Path(work_dir))
    run_config = {"task_file": job.task_file, "model": model_name, "device": device, "backend": "auto",
                  "sim": {"world": world, "seed": seed, **sim_opts} if is_sim(device) else {}}
    try:
        result = run_task(task, prof, dev, mdl, engine, run_config=run_config, on_step=_step_counter(on_step))
    finally:
        dev.close()
    usage = token_usage(engine, result.session_id)
    data = result.to_dict()
    faults = app_faults(engine, result.session_id)
    row = {
        "session_id": result.session_id, "task_id": task.id, "status": result.status,
        "passed": result.success, "steps": result.steps,
        "model_calls": usage.total.calls,
        "tokens": usage.to_dict(),
        "cost": case_cost(engine, result.session_id),
        "kind": "task",
        "message": result.message, "checks": data["checks"],
        "failure": "" if result.success else _with_faults(checks_phrase(data["checks"]) or result.message, faults),
        "elapsed_s": result.elapsed_s,
        "app_faults": faults,
    }
    engine.close()
    if result.stop_reason == "device_offline":
        raise PairInterrupted(f"device {device!r} went offline during {task.id}: {result.message}", row)
    return row


def run_session_job(job: CaseJob, device: str, work_dir: Path,
                    on_step: Callable[[int], None] | None = None) -> dict[str, Any]:
    """Replay ``job.session`` with healing on ``device`` (a sim takes the world and seed of the
    session replayed — the recording, or its promoted baseline — as ``artemis replay`` does, unless
    the device is ``sim:<world>``) into ``work_dir``; return the case row naming the diverged or
    last matched step when it fails."""
    from artemis_cli.bench.worker import PairInterrupted, is_sim, sim_world_of
    from artemis_cli.device.select import resolve_device
    from artemis_cli.engine.bundle import import_bundle
    from artemis_cli.engine.db import DataEngine
    from artemis_cli.engine.token_usage import token_usage
    from artemis_cli.errors import ArtemisError, DeviceError
    from artemis_cli.replay.place import replay_place
    from artemis_cli.replay.replayer import replay_session

    engine = DataEngine.open(Path(work_dir))
    import_bundle(engine, Path(job.source_bundle))
    if job.baseline_bundle:  # the recording's promoted baseline: promoted again here, so it is replayed
        from artemis_cli.replay.lineage import promote

        promote(engine, engine.get_session(import_bundle(engine, Path(job.baseline_bundle)).session_id))
    source = engine.get_session(job.session)
    place = replay_place(engine, source)  # the rule of artemis replay: the baseline's world after a promote
    if is_sim(device):
        dev = resolve_device("sim", sim_seed=place.seed, sim_options=place.sim_options,
                             sim_world=sim_world_of(device) or place.world or "default")
    else:
        dev = resolve_device(device, backend="adb")
    try:
        result = replay_session(engine, dev, source.id, replay_options(job.model, job.profile, source),
                                on_step=_step_counter(on_step))
    except DeviceError:
        raise  # the scheduler re-queues the case on another device
    except ArtemisError as exc:  # e.g. a password step with no secret set: this case fails, not the suite
        engine.close()
        return _unstarted_row(source, str(exc))
    finally:
        dev.close()
    data = result.to_dict()
    usage = token_usage(engine, result.session_id)
    passed = result.status == "succeeded"
    faults = app_faults(engine, result.session_id)
    row = {
        "session_id": result.session_id, "task_id": source.task_id or source.id, "status": result.status,
        "passed": passed, "steps": len(result.steps), "model_calls": result.model_calls,
        "tokens": usage.to_dict(), "cost": case_cost(engine, result.session_id),
        "message": result.message, "checks": data["checks"],
        "failure": "" if passed else _with_faults(checks_phrase(data["checks"]) or result.message, faults),
        "app_faults": faults,
        "elapsed_s": None, "kind": "session", "source_session": source.id,
        "replay": {k: data[k] for k in ("replayed", "retargeted", "healed", "diverged", "first_divergence",
                                        "last_matched", "baseline_of", "model_label")},
    }
    engine.close()
    if result.status == "interrupted":
        raise PairInterrupted(f"device {device!r} went away while replaying {source.id}: {result.message}", row)
    return row


def app_faults(engine: Any, session_id: str) -> list[str]:
    """``step 3: com.foo crashed: "java.lang.IllegalStateException: boom"``: each step whose app
    crashed or stopped responding (its stored detail quotes the device's words)."""
    from artemis_cli.engine.records import APP_FAULT_STATUSES

    return [f"step {s.number}: {s.result_detail or s.result_status}" for s in engine.get_steps(session_id)
            if s.result_status in APP_FAULT_STATUSES]


def _with_faults(failure: str, faults: list[str]) -> str:
    """The failure message naming the app crashes (ANRs) of the session, the first three."""
    if not faults:
        return failure
    more = f" (and {len(faults) - 3} more)" if len(faults) > 3 else ""
    said = f"app crash{'es' if len(faults) > 1 else ''}: {'; '.join(faults[:3])}{more}"
    return f"{failure}; {said}" if failure else said


def _unstarted_row(source: Any, why: str) -> dict[str, Any]:
    """The row of a session case whose replay could not start (no session was recorded)."""
    return {"session_id": None, "task_id": source.task_id or source.id, "status": "failed", "passed": False,
            "steps": 0, "model_calls": 0, "tokens": None, "cost": None, "message": why, "checks": [],
            "failure": f"the replay could not start: {why}", "elapsed_s": None, "kind": "session",
            "source_session": source.id, "replay": None}
