"""``artemis bench run --devices``: the pairs of a suite on several phones at once.

Design:

* **one worker process per device** (``multiprocessing``'s *spawn* context: a fresh interpreter,
  no forked locks or threads), started once for the whole run. Each worker has its own inbox
  queue; the scheduler (this process) hands a worker its next pair only when it is idle, so a
  slow device never holds pairs another device could run. All workers report on one shared
  outbox queue: ``start`` / ``step`` (throttled) / ``done`` with the pair's row / ``offline`` /
  ``error`` / ``bye`` (the worker's own CPU seconds when it exits).
* each pair runs through :func:`artemis_cli.bench.worker.run_pair_job` (or an injected runner
  with the same signature) and records into its own data dir ``<work>/<task id>-<mode>`` — the
  same layout as a one-device run; the scheduler keeps the state file (finished pairs) up to date
  after every pair, so an interrupted run resumes as before.
* **a dropped device**: its worker exits (a ``DeviceOffline``/``DeviceNotFound`` before or during
  a pair) or dies (no ``bye``, the process is gone). The device takes no more pairs; its in-flight
  pair is marked interrupted and re-queued at the front of the queue, to run on another device,
  ONCE. The pair's row then says ``attempts: 2`` and ``requeued_from: <device>``; a pair that is
  interrupted again, or has no device left to run on, is reported in ``unfinished`` (and, not being
  in the state file, runs again when the bench is started again).
* any other error in a worker (a broken task file, a bug) stops the whole run, as it would a
  one-device run.
"""

from __future__ import annotations

import contextlib
import multiprocessing as mp
import os
import pickle
import queue
import signal
import time
import traceback
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from artemis_cli.bench.worker import (
    PairInterrupted,
    PairJob,
    cpu_seconds,
    pair_dir,
    run_pair_job,
    tasks_and_jobs,
)
from artemis_cli.errors import DeviceError, UsageError

if TYPE_CHECKING:
    from artemis_cli.bench.runner import BenchConfig, Progress
    from artemis_cli.config.task import Task

#: ``runner(job, device, work_dir, on_step=…)`` → the pair's row (see :func:`run_pair_job`)
PairRunner = Callable[..., dict[str, Any]]

MAX_SIMS = 64
#: how often a worker reports its step count (seconds)
STEP_INTERVAL_S = 0.25
#: a dropped pair runs at most this many times in all
MAX_ATTEMPTS = 2


@dataclass(frozen=True)
class DeviceSlot:
    """One device of ``--devices``: ``name`` is shown and recorded; ``spec`` goes to the runner
    (``sim``/``sim#N`` for an in-process simulated phone, else an adb serial)."""

    name: str
    spec: str


def parse_devices(value: str | Iterable[str]) -> list[DeviceSlot]:
    """``sim*2,127.0.0.1:7555`` → ``sim#1``, ``sim#2``, ``127.0.0.1:7555``. A single plain ``sim``
    stays ``sim``; several sims are numbered in order."""
    entries = [e.strip() for e in (value.split(",") if isinstance(value, str) else value)]
    entries = [e for e in entries if e]
    if not entries:
        raise UsageError("--devices is empty", hint="e.g. --devices sim*2 or --devices SERIAL,SERIAL")
    kinds: list[tuple[str, int]] = []  # ("sim", n) or (serial, 0)
    for e in entries:
        if e == "sim":
            kinds.append(("sim", 1))
        elif e.startswith("sim*"):
            try:
                n = int(e[4:])
            except ValueError:
                n = 0
            if not 1 <= n <= MAX_SIMS:
                raise UsageError(f"bad --devices entry {e!r}", hint=f"sim*N takes N from 1 to {MAX_SIMS}, e.g. sim*2")
            kinds.append(("sim", n))
        elif e.startswith("sim"):
            raise UsageError(f"bad --devices entry {e!r}",
                             hint="sims take each task's own world and seed: use sim or sim*N")
        else:
            kinds.append((e, 0))
    sims = sum(n for k, n in kinds if k == "sim")
    out: list[DeviceSlot] = []
    number = 0
    for kind, n in kinds:
        if kind != "sim":
            if any(s.name == kind for s in out):
                raise UsageError(f"device {kind!r} is listed twice in --devices")
            out.append(DeviceSlot(kind, kind))
            continue
        for _ in range(n):
            number += 1
            name = "sim" if sims == 1 else f"sim#{number}"
            out.append(DeviceSlot(name, name))
    return out


@dataclass
class PairItem:
    """A pair waiting for, or running on, a device."""

    pid: str  # "<task id>|<mode>", the state file's key
    task_id: str
    mode: str
    max_steps: int
    job: PairJob
    data_dir: Path
    attempts: int = 0
    requeued_from: str | None = None
    interruptions: list[dict[str, Any]] = field(default_factory=list)


@dataclass
class _Worker:
    slot: DeviceSlot
    proc: Any  # multiprocessing Process (spawn context)
    inbox: Any  # its Queue
    current: PairItem | None = None
    gone: bool = False  # exited (bye), dropped or died: takes no more pairs
    dropped: str | None = None  # why the device dropped
    pairs: int = 0
    cpu_s: float | None = None


@dataclass
class DevicesReport:
    rows: dict[str, dict[str, Any]]
    unfinished: list[dict[str, Any]]
    stats: dict[str, dict[str, Any]]
    wall_s: float


class WorkerFailed(RuntimeError):
    """A worker hit an error that is not a device dropping (it stops the run)."""


def _portable(exc: BaseException) -> bytes | None:
    try:
        blob = pickle.dumps(exc)
        pickle.loads(blob)
        return blob
    except Exception:
        return None


def _worker_main(name: str, spec: str, runner: PairRunner, inbox: Any, outbox: Any, step_interval: float) -> None:
    """A device's worker: run the pairs its inbox hands it until ``None``; then say ``bye``."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the scheduler stops the workers on Ctrl-C
    parent = os.getppid()
    try:
        while True:
            try:
                msg = inbox.get(timeout=1.0)
            except queue.Empty:
                if os.getppid() != parent:  # the scheduler is gone: stop
                    return
                continue
            if msg is None:
                return
            pid, job, work_dir = msg
            outbox.put(("start", name, pid))
            last = [0.0]

            def on_step(n: int, pid: str = pid, last: list[float] = last) -> None:
                now = time.monotonic()
                if now - last[0] >= step_interval:
                    last[0] = now
                    outbox.put(("step", name, pid, n))

            try:
                row = runner(job, spec, Path(work_dir), on_step=on_step)
            except PairInterrupted as exc:
                outbox.put(("offline", name, pid, f"{exc}", exc.row))
                return
            except DeviceError as exc:
                outbox.put(("offline", name, pid, f"{type(exc).__name__}: {exc}", None))
                return
            except BaseException as exc:
                outbox.put(("error", name, pid, _portable(exc), f"{type(exc).__name__}: {exc}",
                            traceback.format_exc()))
                return
            outbox.put(("done", name, pid, row))
    finally:
        outbox.put(("bye", name, round(cpu_seconds(), 3)))


def run_on_devices(items: list[PairItem], slots: list[DeviceSlot], *,
                   on_done: Callable[[PairItem, dict[str, Any]], None] | None = None,
                   progress: Progress | None = None, runner: PairRunner = run_pair_job,
                   step_interval: float = STEP_INTERVAL_S) -> DevicesReport:
    """Run ``items`` on ``slots``, one worker process per device (see the module doc)."""
    from artemis_cli.bench.runner import Progress

    progress = progress or Progress()
    t0 = time.perf_counter()
    ctx = mp.get_context("spawn")
    outbox = ctx.Queue()
    workers: dict[str, _Worker] = {}
    by_pid = {it.pid: it for it in items}
    pending: deque[PairItem] = deque(items)
    rows: dict[str, dict[str, Any]] = {}
    unfinished: list[dict[str, Any]] = []
    resolved: set[str] = set()

    def note(device: str, text: str) -> None:
        if progress.on_device_note:
            progress.on_device_note(device, text)

    def give_up(item: PairItem, reason: str) -> None:
        resolved.add(item.pid)
        unfinished.append({"task": item.task_id, "mode": item.mode, "attempts": item.attempts,
                           "requeued_from": item.requeued_from, "reason": reason,
                           "interruptions": item.interruptions})
        note(item.interruptions[-1]["device"] if item.interruptions else "-",
             f"{item.task_id} · {item.mode}: not finished ({reason})")

    def interrupt(w: _Worker, reason: str, row: dict[str, Any] | None) -> None:
        """``w``'s device dropped: re-queue its in-flight pair once on another device."""
        w.gone, w.dropped = True, reason
        note(w.slot.name, f"device dropped: {reason}")
        item, w.current = w.current, None
        if item is None:
            return
        item.interruptions.append({"device": w.slot.name, "reason": reason,
                                   "session_id": (row or {}).get("session_id")})
        others = [o for o in workers.values() if not o.gone and o is not w]
        if item.attempts >= MAX_ATTEMPTS:
            give_up(item, f"interrupted {item.attempts} times; last: {reason}")
        elif not others:
            give_up(item, f"interrupted, and no other device is left; {reason}")
        else:
            item.requeued_from = w.slot.name
            pending.appendleft(item)
            note(w.slot.name, f"{item.task_id} · {item.mode}: interrupted, re-queued on another device")

    def handle(msg: tuple[Any, ...]) -> None:
        kind, name = msg[0], msg[1]
        w = workers[name]
        if kind == "bye":
            w.cpu_s = msg[2]
            if not w.gone and w.current is not None:  # should not happen: treat as a drop
                interrupt(w, "the worker stopped mid-pair", None)
            w.gone = True
            return
        item = by_pid[msg[2]]
        if kind == "start":
            if progress.on_device_start:
                progress.on_device_start(name, item.task_id, item.mode, item.max_steps)
        elif kind == "step":
            if progress.on_device_step:
                progress.on_device_step(name, int(msg[3]))
        elif kind == "done":
            row = {**msg[3], "device": name, "attempts": item.attempts, "requeued_from": item.requeued_from}
            if item.interruptions:
                row["interruptions"] = item.interruptions
            w.current, w.pairs = None, w.pairs + 1
            rows[item.pid] = row
            resolved.add(item.pid)
            if progress.on_device_step:
                progress.on_device_step(name, int(row.get("steps", 0)))
            if on_done:
                on_done(item, row)
        elif kind == "offline":
            interrupt(w, str(msg[3]), msg[4])
        elif kind == "error":
            blob, text, tb = msg[3], msg[4], msg[5]
            exc: BaseException = pickle.loads(blob) if blob else WorkerFailed(text)
            if hasattr(exc, "add_note"):
                exc.add_note(f"in the worker of device {name} ({item.task_id} · {item.mode}):\n{tb}")
            raise exc

    def drain() -> None:
        while True:
            try:
                handle(outbox.get_nowait())
            except queue.Empty:
                return

    try:
        for slot in slots:
            inbox = ctx.Queue()
            proc = ctx.Process(target=_worker_main, name=f"artemis-bench {slot.name}", daemon=True,
                               args=(slot.name, slot.spec, runner, inbox, outbox, step_interval))
            proc.start()
            workers[slot.name] = _Worker(slot, proc, inbox)
        while len(resolved) < len(items):
            for w in workers.values():
                if not w.gone and w.current is None and pending:
                    item = pending.popleft()
                    item.attempts += 1
                    w.current = item
                    w.inbox.put((item.pid, item.job, str(item.data_dir)))
            if pending and all(w.gone for w in workers.values()):
                while pending:
                    give_up(pending.popleft(), "no device left")
                break
            with contextlib.suppress(queue.Empty):
                handle(outbox.get(timeout=0.2))
            for w in workers.values():
                if not w.gone and not w.proc.is_alive():
                    drain()  # its last messages first
                    if not w.gone:
                        interrupt(w, f"the worker process died (exit code {w.proc.exitcode})", None)
        _stop_workers(workers, outbox, handle)
    finally:
        for w in workers.values():
            if w.proc.is_alive():
                w.proc.terminate()
        for w in workers.values():
            w.proc.join(timeout=5)
            if w.proc.is_alive():
                w.proc.kill()
                w.proc.join(timeout=5)
    stats = {name: {"spec": w.slot.spec, "pairs": w.pairs, "cpu_s": w.cpu_s, "dropped": w.dropped}
             for name, w in workers.items()}
    return DevicesReport(rows, unfinished, stats, time.perf_counter() - t0)


def _stop_workers(workers: dict[str, _Worker], outbox: Any, handle: Callable[[tuple[Any, ...]], None],
                  timeout: float = 30.0) -> None:
    """Ask every idle worker to stop and collect its ``bye`` (its CPU seconds)."""
    for w in workers.values():
        if w.proc.is_alive():
            with contextlib.suppress(OSError, ValueError):
                w.inbox.put(None)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and any(w.cpu_s is None and w.proc.is_alive() for w in workers.values()):
        with contextlib.suppress(queue.Empty):
            handle(outbox.get(timeout=0.2))
    try:  # a bye that came in as the process exited
        while True:
            handle(outbox.get(timeout=0.05))
    except queue.Empty:
        pass


def run_suite_on_devices(config: BenchConfig, tasks: list[Task], state: dict[str, Any], progress: Progress,
                         save: Callable[[], None], runner: PairRunner = run_pair_job) -> dict[str, Any]:
    """The pairs phase of :func:`artemis_cli.bench.runner.run_bench` on ``config.devices``:
    finished pairs go into ``state["pairs"]`` (saved after each); returns the results' extra
    top-level keys: ``devices`` (names), ``device_stats`` and ``unfinished``."""
    slots = parse_devices(config.devices or [])
    pairs: dict[str, Any] = state["pairs"]
    items: list[PairItem] = []
    for task, job in tasks_and_jobs(config, tasks):
        pid = f"{task.id}|{job.mode}"
        if pid in pairs:
            if progress.on_pair_done:
                progress.on_pair_done(task.id, job.mode, None)  # resumed: kept from the earlier run
            continue
        items.append(PairItem(pid, task.id, job.mode, task.max_steps, job, pair_dir(config, task.id, job.mode)))

    def done(item: PairItem, row: dict[str, Any]) -> None:
        pairs[item.pid] = row
        save()
        if progress.on_pair_done:
            progress.on_pair_done(item.task_id, item.mode, row)

    report = run_on_devices(items, slots, on_done=done, progress=progress, runner=runner) if items else None
    return {"devices": [s.name for s in slots],
            "device_stats": report.stats if report else {},
            "unfinished": report.unfinished if report else []}


__all__ = ["DeviceSlot", "DevicesReport", "PairItem", "WorkerFailed", "parse_devices", "run_on_devices",
           "run_suite_on_devices"]
