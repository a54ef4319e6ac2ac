"""The local backend of :mod:`artemis_cli.bench.scheduler`: one worker process per device.

* **one worker process per device** (``multiprocessing``'s *spawn* context: a fresh interpreter,
  no forked locks or threads), started once for the whole run. Each worker has its own inbox
  queue; the scheduler hands a worker its next item only when it is idle. All workers report on
  one shared outbox queue: ``start`` / ``step`` (throttled) / ``done`` with the item's row /
  ``offline`` / ``error`` / ``bye`` (the worker's own CPU seconds when it exits).
* a worker whose device drops (a ``DeviceError`` from the runner) reports ``offline`` and exits;
  a worker that dies (no ``bye``, the process is gone) is reported ``gone``. The scheduler decides
  what happens to the item (re-queued once at the front, or unfinished).
* any other error in a worker is sent back (pickled when it can be) and re-raised in the driver.
* Ctrl-C: workers ignore SIGINT; the driver's :meth:`LocalBackend.stop` terminates them.

It also holds the ``--devices`` syntax (:func:`parse_devices`, :class:`DeviceSlot`).
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
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from artemis_cli.bench.worker import PairInterrupted, cpu_seconds
from artemis_cli.errors import DeviceError, UsageError

if TYPE_CHECKING:
    from artemis_cli.bench.scheduler import WorkItem

#: ``runner(job, device_spec, work_dir, on_step=…)`` → the item's row
Runner = Callable[..., dict[str, Any]]

MAX_SIMS = 64


@dataclass(frozen=True)
class DeviceSlot:
    """One device of ``--devices``: ``name`` is shown and recorded; ``spec`` goes to the runner
    (``sim``/``sim#N`` for an in-process simulated phone, else an adb serial)."""

    name: str
    spec: str


def parse_devices(value: str | Iterable[str], *, worlds: bool = False) -> list[DeviceSlot]:
    """``sim*2,127.0.0.1:7555`` → ``sim#1``, ``sim#2``, ``127.0.0.1:7555``. A single plain ``sim``
    stays ``sim``; several sims are numbered in order. With ``worlds`` (``artemis test``) a
    ``sim:<world>`` entry is a simulated phone of that world (``sim:drift``; listed twice:
    ``sim:drift#2``), which every case on it uses instead of its own."""
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
        elif worlds and e.startswith("sim:"):
            from artemis_cli.sim.worlds import WORLDS

            if e[4:] not in WORLDS:
                raise UsageError(f"bad --devices entry {e!r}: no sim world {e[4:]!r}",
                                 hint=f"worlds: {', '.join(sorted(WORLDS))}")
            kinds.append((e, -1))
        elif e.startswith("sim"):
            raise UsageError(f"bad --devices entry {e!r}",
                             hint="sim:<world> (e.g. sim:drift), sim or sim*N" if worlds
                             else "sims take each task's own world and seed: use sim or sim*N")
        else:
            kinds.append((e, 0))
    sims = sum(n for k, n in kinds if k == "sim")
    out: list[DeviceSlot] = []
    number = 0
    for kind, n in kinds:
        if n < 0:  # sim:<world>
            same = sum(1 for s in out if s.spec == kind)
            out.append(DeviceSlot(kind if not same else f"{kind}#{same + 1}", kind))
            continue
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
class _Worker:
    slot: DeviceSlot
    proc: Any  # multiprocessing Process (spawn context)
    inbox: Any  # its Queue
    reported: bool = False  # "gone" was reported (bye, offline or died)
    cpu_s: float | None = None


class WorkerFailed(RuntimeError):
    """A worker hit an error that is not a device dropping (it stops the run)."""


def _portable(exc: BaseException) -> bytes | None:
    try:
        blob = pickle.dumps(exc)
        pickle.loads(blob)
        return blob
    except Exception:
        return None


def _worker_main(name: str, spec: str, runner: Runner, inbox: Any, outbox: Any, step_interval: float) -> None:
    """A device's worker: run the items its inbox hands it until ``None``; then say ``bye``."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the driver stops the workers on Ctrl-C
    parent = os.getppid()
    try:
        while True:
            try:
                msg = inbox.get(timeout=1.0)
            except queue.Empty:
                if os.getppid() != parent:  # the driver is gone: stop
                    return
                continue
            if msg is None:
                return
            key, job, work_dir = msg
            outbox.put(("start", name, key))
            last = [0.0]

            def on_step(n: int, key: str = key, last: list[float] = last) -> None:
                now = time.monotonic()
                if now - last[0] >= step_interval:
                    last[0] = now
                    outbox.put(("step", name, key, n))

            try:
                row = runner(job, spec, Path(work_dir), on_step=on_step)
            except DeviceError as exc:
                why = str(exc) if isinstance(exc, PairInterrupted) else f"{type(exc).__name__}: {exc}"
                outbox.put(("offline", name, key, why, getattr(exc, "row", None)))
                return
            except BaseException as exc:
                outbox.put(("error", name, key, _portable(exc), f"{type(exc).__name__}: {exc}",
                            traceback.format_exc()))
                return
            outbox.put(("done", name, key, row))
    finally:
        outbox.put(("bye", name, round(cpu_seconds(), 3)))


class LocalBackend:
    """Spawned worker processes, one per :class:`DeviceSlot` (see the module doc)."""

    def __init__(self, slots: list[DeviceSlot], runner: Runner, *, step_interval: float) -> None:
        self.slots = slots
        self.runner = runner
        self.step_interval = step_interval
        self.ctx = mp.get_context("spawn")
        self.outbox: Any = None
        self.workers: dict[str, _Worker] = {}

    def start(self, events: Any) -> list[str]:
        self.outbox = self.ctx.Queue()
        for slot in self.slots:
            inbox = self.ctx.Queue()
            proc = self.ctx.Process(target=_worker_main, name=f"artemis-worker {slot.name}", daemon=True,
                                    args=(slot.name, slot.spec, self.runner, inbox, self.outbox, self.step_interval))
            proc.start()
            self.workers[slot.name] = _Worker(slot, proc, inbox)
        return list(self.workers)

    def dispatch(self, device: str, item: WorkItem) -> None:
        self.workers[device].inbox.put((item.key, item.job, str(item.work_dir)))

    def _translate(self, msg: tuple[Any, ...], out: list[tuple[Any, ...]]) -> None:
        kind, name = msg[0], msg[1]
        w = self.workers[name]
        if kind == "bye":
            w.cpu_s = msg[2]
            if not w.reported:
                w.reported = True
                out.append(("gone", name, "the worker stopped"))
        elif kind == "error":
            blob, text, tb = msg[3], msg[4], msg[5]
            exc: BaseException = pickle.loads(blob) if blob else WorkerFailed(text)
            if hasattr(exc, "add_note"):
                exc.add_note(f"in the worker of device {name}:\n{tb}")
            out.append(("error", name, msg[2], exc))
        else:
            if kind == "offline":
                w.reported = True
            out.append(msg)

    def _drain(self, out: list[tuple[Any, ...]]) -> None:
        while True:
            try:
                self._translate(self.outbox.get_nowait(), out)
            except queue.Empty:
                return

    def poll(self, timeout: float) -> list[tuple[Any, ...]]:
        out: list[tuple[Any, ...]] = []
        with contextlib.suppress(queue.Empty):
            self._translate(self.outbox.get(timeout=timeout), out)
        self._drain(out)
        for name, w in self.workers.items():
            if not w.reported and not w.proc.is_alive():
                self._drain(out)  # its last messages first
                if not w.reported:
                    w.reported = True
                    out.append(("gone", name, f"the worker process died (exit code {w.proc.exitcode})"))
        return out

    def stop(self, now: bool = False, timeout: float = 30.0) -> None:
        """Ask every worker to stop and collect its ``bye`` (its CPU seconds); terminate the rest
        (``now``, on Ctrl-C: terminate them at once)."""
        if self.outbox is None:  # never started
            return
        if now:
            timeout = 0.0
        try:
            for w in self.workers.values():
                if w.proc.is_alive():
                    with contextlib.suppress(OSError, ValueError):
                        w.inbox.put(None)
            deadline = time.monotonic() + timeout
            sink: list[tuple[Any, ...]] = []
            while time.monotonic() < deadline and any(w.cpu_s is None and w.proc.is_alive()
                                                      for w in self.workers.values()):
                with contextlib.suppress(queue.Empty):
                    self._translate(self.outbox.get(timeout=0.2), sink)
            with contextlib.suppress(queue.Empty):
                while True:  # a bye that came in as the process exited
                    self._translate(self.outbox.get(timeout=0.05), sink)
        finally:
            for w in self.workers.values():
                if w.proc.is_alive():
                    w.proc.terminate()
            for w in self.workers.values():
                w.proc.join(timeout=5)
                if w.proc.is_alive():
                    w.proc.kill()
                    w.proc.join(timeout=5)

    def stats(self) -> dict[str, dict[str, Any]]:
        return {name: {"spec": w.slot.spec, "cpu_s": w.cpu_s} for name, w in self.workers.items()}

    def summary(self) -> dict[str, Any]:
        return {}


__all__ = ["DeviceSlot", "LocalBackend", "WorkerFailed", "parse_devices"]
