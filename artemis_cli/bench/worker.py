"""One bench pair as a self-contained, picklable job: what a worker process (or a Ray task) runs.

:class:`PairJob` holds only plain data (the task file's path, not the parsed task), so it crosses
process boundaries cheaply; :func:`run_pair_job` loads the task and the profile again in the worker
and runs the pair with :func:`artemis_cli.bench.runner.run_pair_result` on ``device``:

* ``"sim"`` (also ``"sim#2"``, a numbered sim slot): a fresh in-process simulated phone with the
  task's sim settings, exactly as a one-device bench run;
* anything else: an adb serial (a phone, or ``artemis sim serve`` attached with ``adb connect``),
  opened with ``resolve_device(serial, backend="adb")``.

A device that cannot be reached raises the usual :class:`~artemis_cli.errors.DeviceOffline` /
:class:`~artemis_cli.errors.DeviceNotFound`; a pair the runner stopped because the device went
offline mid-run raises :class:`PairInterrupted` (a ``DeviceOffline``) carrying the interrupted
pair's row. The caller re-queues either on another device.
"""

from __future__ import annotations

import resource
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from artemis_cli.errors import DeviceError, DeviceOffline

if TYPE_CHECKING:
    from artemis_cli.bench.runner import BenchConfig


@dataclass(frozen=True)
class PairJob:
    """One task × mode pair, as plain data (picklable, small)."""

    task_file: str  # absolute path of the task file
    mode: str
    profile: str  # profile name or path
    model_kind: str  # scripted | heuristic
    lens: str  # mechanical | server
    probe_facts: list[dict[str, Any]] | None  # the task's probe facts as plain dicts (or None)


class PairInterrupted(DeviceOffline):
    """The device went offline during the pair: the run stopped as interrupted (``row`` is its row)."""

    def __init__(self, message: str, row: dict[str, Any] | None = None, *, hint: str | None = None) -> None:
        super().__init__(message, hint=hint)
        self.row = row

    def __reduce__(self) -> tuple[Any, ...]:  # picklable (Ray, multiprocessing)
        return (_rebuild_interrupted, (str(self), self.row, self.hint))


def _rebuild_interrupted(message: str, row: dict[str, Any] | None, hint: str | None) -> PairInterrupted:
    return PairInterrupted(message, row, hint=hint)


def is_sim(device: str) -> bool:
    """``sim``, a numbered sim slot ``sim#N`` or a world's ``sim:<world>`` (``artemis test``): the
    pair runs on an in-process simulated phone."""
    return device == "sim" or device.startswith(("sim#", "sim:"))


def sim_world_of(device: str) -> str | None:
    """The world a ``sim:<world>`` device slot names (None for any other device)."""
    return device[4:] if device.startswith("sim:") else None


def cpu_seconds() -> float:
    """User + system CPU of this process so far (its threads included, its children not)."""
    ru = resource.getrusage(resource.RUSAGE_SELF)
    return ru.ru_utime + ru.ru_stime


def run_pair_job(job: PairJob, device: str, work_dir: Path,
                 on_step: Callable[[int], None] | None = None) -> dict[str, Any]:
    """Run one pair on ``device`` (``'sim'`` or an adb serial), recording into ``work_dir`` (the
    pair's own data dir); return the pair's result row (the dict ``run_pair`` returns, with
    ``session_id``, plus ``device`` and ``cpu_s``: this process's CPU seconds during the pair).

    Raises ``DeviceOffline``/``DeviceNotFound`` when the device cannot be reached, and
    :class:`PairInterrupted` when it went offline during the pair."""
    from artemis_cli.bench.fidelity import ProbeFact
    from artemis_cli.bench.runner import run_pair_result
    from artemis_cli.config.profile import load_profile
    from artemis_cli.config.task import load_task

    cpu0 = cpu_seconds()
    task = load_task(job.task_file)
    profile = load_profile(job.profile)
    facts = [ProbeFact(**f) for f in job.probe_facts] if job.probe_facts is not None else None
    phone: Any = None
    if not is_sim(device):
        from artemis_cli.device.select import resolve_device

        phone = resolve_device(device, backend="adb")
        reset_served_sim(phone, task)
    row, result = run_pair_result(task, job.mode, profile, job.model_kind, Path(work_dir), on_step=on_step,
                                  lens=job.lens, facts=facts, device=phone)
    row = {**row, "session_id": result.session_id, "device": device, "cpu_s": round(cpu_seconds() - cpu0, 3)}
    if result.stop_reason == "device_offline":
        raise PairInterrupted(f"device {device!r} went offline during {task.id} · {job.mode}: {result.message}",
                              row, hint="the pair is re-queued on another device")
    return row


@dataclass(frozen=True)
class SyntheticJob:
    """One of the bench's synthetic runs (``artemis_cli.bench.synthetic``) as a job: ``overhead``
    (the long overhead run in ``mode``) or ``recall`` (the recall-latency session); ``steps`` is
    its length. It runs on its own simulated phone, whatever the device slot."""

    kind: str  # overhead | recall
    mode: str
    profile: str
    steps: int

    @property
    def key(self) -> str:
        """Its key in the state file's ``synthetic`` (as the one-process bench writes it)."""
        return f"overhead|{self.mode}|{self.steps}" if self.kind == "overhead" else f"recall|{self.steps}"


def run_bench_job(job: PairJob | SyntheticJob, device: str, work_dir: Path,
                  on_step: Callable[[int], None] | None = None) -> dict[str, Any]:
    """The bench's runner for the scheduler: a pair (:func:`run_pair_job`) or a synthetic run."""
    if not isinstance(job, SyntheticJob):
        return run_pair_job(job, device, work_dir, on_step)
    from artemis_cli.bench.synthetic import overhead_run, recall_latency
    from artemis_cli.config.profile import load_profile

    cpu0 = cpu_seconds()
    if job.kind == "overhead":
        row = overhead_run(job.mode, load_profile(job.profile), job.steps, Path(work_dir), on_step=on_step)
    else:
        row = recall_latency(job.steps, Path(work_dir))
    return {**row, "device": device, "cpu_s": round(cpu_seconds() - cpu0, 3)}


SIM_MODEL = "Artemis Sim"


def reset_served_sim(phone: Any, task: Any) -> None:
    """A simulated phone served over adb (``artemis sim serve``) starts the pair as the task's
    ``sim:`` settings say (world, seed, pop-ups, lock screen, permission prompts), as the in-process one does; a real phone is
    left as it is (its state is the phone's)."""
    if phone.shell("getprop ro.product.model").strip() != SIM_MODEL or task.sim is None:
        return
    flags = " ".join(("--popups" if task.sim.popups else "--no-popups",
                      "--locked" if task.sim.locked else "--unlocked",
                      "--permission-prompts" if task.sim.permission_prompts else "--no-permission-prompts"))
    out = phone.shell(f"artemis-sim reset --world {task.sim.world} --seed {int(task.sim.seed)} {flags}")
    if not out.startswith("reset to"):
        raise DeviceError(f"the served sim would not reset to the task's world: {out.strip()[:200]}")


def jobs_for(config: BenchConfig) -> list[PairJob]:
    """The suite's pairs in run order (task files sorted by name, then ``config.modes``)."""
    return [job for _task, job in tasks_and_jobs(config)]


def tasks_and_jobs(config: BenchConfig, tasks: list[Any] | None = None) -> list[tuple[Any, PairJob]]:
    """(task, job) for every pair of the suite, in run order (``tasks``: the suite already loaded)."""
    from artemis_cli.bench.fidelity import load_probe
    from artemis_cli.bench.suite import load_suite

    if tasks is None:
        tasks = load_suite(config.suite, only=config.tasks)
    probes = load_probe(config.suite)
    profile = str(Path(config.profile).resolve()) if Path(config.profile).is_file() else config.profile
    out: list[tuple[Any, PairJob]] = []
    for task in tasks:
        source = task.source_path
        if source is None:
            raise ValueError(f"bench task {task.id!r} has no task file")
        facts = probes.get(task.id)
        for mode in config.modes:
            out.append((task, PairJob(task_file=str(Path(source).resolve()), mode=mode, profile=profile,
                                      model_kind=config.model, lens=config.lens,
                                      probe_facts=[asdict(f) for f in facts] if facts is not None else None)))
    return out


def pair_dir(config: BenchConfig, task_id: str, mode: str) -> Path:
    """The pair's data dir: ``<work>/<task id>-<mode>``, the same layout as a one-device run."""
    return config.work / f"{task_id}-{mode}"


__all__ = ["PairInterrupted", "PairJob", "SyntheticJob", "cpu_seconds", "is_sim", "jobs_for", "pair_dir",
           "run_bench_job", "run_pair_job", "tasks_and_jobs"]
