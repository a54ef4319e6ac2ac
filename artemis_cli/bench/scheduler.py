"""The one scheduler of ``bench`` and ``test``: generic work items on devices, two backends.

How a command uses it (``artemis bench run`` does exactly this in :mod:`artemis_cli.bench.runner`)::

    from artemis_cli.bench.scheduler import WorkItem, SchedulerEvents, run_items
    from artemis_cli.bench.parallel import parse_devices

    def run_case(job, device_spec, work_dir, on_step):   # module level: spawn and Ray import it
        ...record into a DataEngine under work_dir, call on_step(n) after each step...
        return {"session_id": ..., "steps": n, ...}        # the row (plain, picklable data)

    class Show(SchedulerEvents):
        def done(self, item, device, row): ...             # in the driver; item.work_dir holds its data

    result = run_items([WorkItem(key, label, job, work_dir) for ...], run_case,
                       devices=parse_devices("sim*2"), events=Show())
    # or: run_items(items, run_case, ray_address="auto", devices_file=Path("cluster.yaml"), events=Show())
    result.rows        # {key: row}; each row also has device, attempts, requeued_from (+ interruptions)
    result.unfinished  # [key] not finished: dropped twice, no device left, or Ctrl-C
    result.interrupted # True after Ctrl-C (KeyboardInterrupt is not re-raised: the caller reports)

The contract:

* ``runner(job, device_spec, work_dir, on_step)`` runs one item on one device and returns its row
  (a dict with at least ``session_id`` when it records a session: the Ray backend bundles that
  session back). It raises ``DeviceOffline``/``DeviceNotFound`` (any ``DeviceError``, e.g.
  :class:`artemis_cli.bench.worker.PairInterrupted` carrying a ``row``) when the device drops;
  anything else is a bug or a broken input and stops the whole run (re-raised in the driver).
* idle-slot handout: an item goes to a device only when that device is idle, in queue order.
* a dropped device takes no more items; its in-flight item is re-queued at the FRONT, once
  (:data:`MAX_ATTEMPTS` runs in all), and its row then says ``attempts: 2`` and
  ``requeued_from: <device>``; otherwise the item is unfinished.
* ``events`` fire in the driver: ``start``, ``step`` (throttled to :data:`STEP_INTERVAL_S`),
  ``done``, ``requeued``, ``note`` (a device dropped, an item given up).
* Ctrl-C (KeyboardInterrupt in the driver): every worker is stopped (processes terminated, actors
  killed, their work dirs removed); in-flight and pending items are ``unfinished`` and
  ``interrupted`` is True. Nothing of an unfinished item is in ``rows``, so a caller that keeps a
  state file of finished keys resumes them by running again.
* ``WorkItem.files``: driver-side files the runner reads (a task file). Under Ray a host that has
  no identical copy runs the driver's copy: string fields of a dataclass ``job`` equal to the path
  are pointed at the copy.

Backends: :class:`artemis_cli.bench.parallel.LocalBackend` (spawned worker processes, one per
device) and :class:`artemis_cli.bench.ray_backend.RayBackend` (one Ray actor per phone; the item
runs in an actor-local temp dir and comes back as a verified bundle imported into
``item.work_dir`` before ``done`` fires). Ray is imported only when ``ray_address`` is given.
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from artemis_cli.bench.parallel import DeviceSlot, parse_devices

#: how often a busy device reports its step count (seconds)
STEP_INTERVAL_S = 0.25
#: a dropped item runs at most this many times in all
MAX_ATTEMPTS = 2

#: ``runner(job, device_spec, work_dir, on_step)`` -> row
Runner = Callable[..., dict[str, Any]]


@dataclass
class WorkItem:
    key: str  # unique id of the item (state-file key)
    label: str  # shown in progress lines
    job: Any  # picklable; handed to the runner unchanged
    work_dir: Path  # driver-side dir where the item's data dir must end up
    attempts: int = 0
    requeued_from: str | None = None
    interruptions: list[dict[str, Any]] = field(default_factory=list)
    files: tuple[str, ...] = ()  # driver-side files the runner reads (shipped to Ray hosts)


class SchedulerEvents:
    """Subclass and override; every default does nothing. All are called in the driver."""

    def start(self, item: WorkItem, device: str) -> None: ...

    def step(self, item: WorkItem, device: str, steps: int) -> None: ...

    def done(self, item: WorkItem, device: str, row: dict[str, Any]) -> None: ...

    def requeued(self, item: WorkItem, device: str, why: str) -> None: ...

    def note(self, device: str, text: str) -> None: ...


@dataclass
class ScheduleResult:
    rows: dict[str, dict[str, Any]]
    unfinished: list[str]  # keys, in the order they were given up
    devices: dict[str, dict[str, Any]]  # device name -> stats (spec, items, cpu_s, dropped, …)
    interrupted: bool = False
    unfinished_detail: dict[str, dict[str, Any]] = field(default_factory=dict)  # key -> reason, attempts, …
    wall_s: float = 0.0
    backend: dict[str, Any] = field(default_factory=dict)  # backend-specific summary (Ray: nodes, actors)


class Backend(Protocol):
    """What the scheduler needs of a backend. Messages from :meth:`poll` are tuples:
    ``("start", dev, key)``, ``("step", dev, key, n)``, ``("done", dev, key, row)``,
    ``("offline", dev, key, why, row)``, ``("error", dev, key, exc)``, ``("gone", dev, why)``."""

    def start(self, events: SchedulerEvents) -> list[str]: ...

    def dispatch(self, device: str, item: WorkItem) -> None: ...

    def poll(self, timeout: float) -> list[tuple[Any, ...]]: ...

    def stop(self, now: bool = False) -> None: ...  # now: Ctrl-C, do not wait for busy workers

    def stats(self) -> dict[str, dict[str, Any]]: ...

    def summary(self) -> dict[str, Any]: ...


def run_items(items: list[WorkItem], runner: Runner, *, devices: list[DeviceSlot] | None = None,
              ray_address: str | None = None, devices_file: Path | None = None,
              events: SchedulerEvents | None = None, step_interval: float = STEP_INTERVAL_S,
              **backend_options: Any) -> ScheduleResult:
    """Run ``items`` with ``runner`` on ``devices`` (local worker processes) or on the phones of
    the Ray cluster at ``ray_address`` (see the module doc). ``backend_options`` go to the Ray
    backend (``on_dispatch``, ``start_timeout``)."""
    backend: Backend
    if ray_address is not None:
        from artemis_cli.bench.ray_backend import RayBackend

        backend = RayBackend(ray_address, devices_file, runner, step_interval=step_interval, **backend_options)
    else:
        from artemis_cli.bench.parallel import LocalBackend

        if not devices:
            raise ValueError("run_items needs devices or ray_address")
        backend = LocalBackend(devices, runner, step_interval=step_interval)
    return schedule(items, backend, events or SchedulerEvents())


def schedule(items: list[WorkItem], backend: Backend, events: SchedulerEvents) -> ScheduleResult:
    """The scheduling loop itself, on any :class:`Backend`."""
    t0 = time.perf_counter()
    by_key = {it.key: it for it in items}
    pending: deque[WorkItem] = deque(items)
    current: dict[str, WorkItem | None] = {}
    gone: dict[str, str | None] = {}  # device -> why it dropped (None: stopped normally)
    done_count: dict[str, int] = {}
    rows: dict[str, dict[str, Any]] = {}
    unfinished: list[str] = []
    detail: dict[str, dict[str, Any]] = {}
    interrupted = False

    def give_up(item: WorkItem, reason: str) -> None:
        unfinished.append(item.key)
        detail[item.key] = {"key": item.key, "label": item.label, "attempts": item.attempts,
                            "requeued_from": item.requeued_from, "reason": reason,
                            "interruptions": item.interruptions}
        events.note(item.interruptions[-1]["device"] if item.interruptions else "-",
                    f"{item.label}: not finished ({reason})")

    def drop(dev: str, why: str, row: dict[str, Any] | None) -> None:
        """``dev`` dropped: re-queue its in-flight item once on another device."""
        if dev in gone:
            return
        gone[dev] = why
        events.note(dev, f"device dropped: {why}")
        item, current[dev] = current.get(dev), None
        if item is None:
            return
        item.interruptions.append({"device": dev, "reason": why, "session_id": (row or {}).get("session_id")})
        others = [d for d in current if d not in gone]
        if item.attempts >= MAX_ATTEMPTS:
            give_up(item, f"interrupted {item.attempts} times; last: {why}")
        elif not others:
            give_up(item, f"interrupted, and no other device is left; {why}")
        else:
            item.requeued_from = dev
            pending.appendleft(item)
            events.requeued(item, dev, why)
            events.note(dev, f"{item.label}: interrupted, re-queued on another device")

    def handle(msg: tuple[Any, ...]) -> None:
        kind, dev = msg[0], msg[1]
        if kind == "gone":
            if current.get(dev) is not None:
                drop(dev, str(msg[2]), None)
            else:
                gone.setdefault(dev, None)
            return
        item = by_key[msg[2]]
        if current.get(dev) is not item:  # a late message of an item already moved on
            return
        if kind == "start":
            events.start(item, dev)
        elif kind == "step":
            events.step(item, dev, int(msg[3]))
        elif kind == "done":
            row = {**msg[3], "device": dev, "attempts": item.attempts, "requeued_from": item.requeued_from}
            if item.interruptions:
                row["interruptions"] = item.interruptions
            current[dev] = None
            done_count[dev] = done_count.get(dev, 0) + 1
            rows[item.key] = row
            events.step(item, dev, int(row.get("steps", 0)))
            events.done(item, dev, row)
        elif kind == "offline":
            drop(dev, str(msg[3]), msg[4])
        elif kind == "error":
            exc: BaseException = msg[3]
            if hasattr(exc, "add_note"):
                exc.add_note(f"on device {dev}: {item.label}")
            raise exc

    try:
        if items:
            for dev in backend.start(events):
                current[dev] = None
            for dev, why in backend_dropped(backend).items():
                gone[dev] = why
                current.setdefault(dev, None)
        while pending or any(v is not None for v in current.values()):
            for dev in list(current):
                if dev not in gone and current[dev] is None and pending:
                    item = pending.popleft()
                    item.attempts += 1
                    current[dev] = item
                    backend.dispatch(dev, item)
            if pending and all(d in gone for d in current):
                while pending:
                    give_up(pending.popleft(), "no device left")
                break
            for msg in backend.poll(0.2):
                handle(msg)
    except KeyboardInterrupt:
        interrupted = True
        for dev, running in list(current.items()):
            if running is not None:
                current[dev] = None
                give_up(running, "stopped by Ctrl-C while running")
        while pending:
            give_up(pending.popleft(), "stopped by Ctrl-C before it started")
    finally:
        backend.stop(now=interrupted)
    stats = backend.stats() if items else {}
    for dev, s in stats.items():
        s["items"] = done_count.get(dev, 0)
        s["dropped"] = s.get("dropped") or gone.get(dev)
    return ScheduleResult(rows, unfinished, stats, interrupted, detail, time.perf_counter() - t0,
                          backend.summary() if items else {})


def backend_dropped(backend: Backend) -> dict[str, str]:
    """Devices the backend knows of that could not start (their names and why)."""
    return dict(getattr(backend, "dropped_at_start", {}) or {})


__all__ = ["MAX_ATTEMPTS", "STEP_INTERVAL_S", "Backend", "DeviceSlot", "ScheduleResult", "SchedulerEvents",
           "WorkItem", "parse_devices", "run_items", "schedule"]
