"""The Ray backend of :mod:`artemis_cli.bench.scheduler` (``--ray ADDRESS``, docs/scale.md).

One Ray actor per phone, pinned to the node that owns it by the custom resource
``artemis_device:<serial>`` (declared with ``ray start --resources``; a phone found by asking a
node's adb server whose node does not declare it is pinned to that node by node affinity). The
actor talks to the phone through its own host's adb server, records the pair into a DataEngine
in a work directory on that host and ships the finished session back as a bundle (bytes), which
the driver imports into its own data directory (the same ``<out>-sessions/<task>-<mode>`` folders
as a local run). Nothing crosses the network per step: the pair job goes out, the bundle comes
back.

An actor that dies (its node lost, its process killed: ``RayActorError``) or whose phone goes
away (``DeviceError``) is retired and its work dir on its host is removed (by a task pinned to
that node); the scheduler re-queues its in-flight item once on another phone. Busy actors are
asked for their step count every ``STEP_INTERVAL_S`` (an actor runs its item in one thread and
answers ``steps`` in another), so progress is per step as with local workers.

Ray is imported only inside these functions: nothing imports it unless ``--ray`` is given.
"""

from __future__ import annotations

import contextlib
import logging
import os
import re
import shutil
import socket
import tempfile
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from artemis_cli.bench.cluster_file import DEFAULT_ADB_PORT, ClusterFile, device_resource, load_cluster_file
from artemis_cli.errors import DeviceError, UsageError

if TYPE_CHECKING:
    from artemis_cli.bench.runner import BenchConfig, Progress
    from artemis_cli.bench.scheduler import Runner, SchedulerEvents, WorkItem

RAY_HINT = "install the extra: pip install 'artemis-cli[ray]' (docs/scale.md)"
#: how long the actors get to come up (a node must start a worker process and import Artemis)
START_TIMEOUT_S = 120.0
DISCOVERY_TIMEOUT_S = 60.0
BUNDLE_NAME = "session.bundle"
#: how long a cleanup of a dead actor's work dir may take at the end of the run
CLEANUP_TIMEOUT_S = 10.0

Note = Callable[[str], None]


# -- what runs on the nodes (plain Python; Ray wraps it at run time) -------------------------------


def _node_info() -> dict[str, Any]:
    import ray

    return {"node_id": ray.get_runtime_context().get_node_id(), "ip": ray.util.get_node_ip_address(),
            "hostname": socket.gethostname(), "pid": os.getpid()}


def list_adb_devices(adb_port: int | None = None, adb_host: str = "127.0.0.1") -> dict[str, Any]:
    """Run on a node: the phones (state ``device``) that node's own adb server lists. ``adb_port``
    None: the node's ANDROID_ADB_SERVER_PORT, else 5037."""
    import adbutils

    port = adb_port or _env_port()
    found: dict[str, Any] = {"adb_port": port, "serials": [], "error": None}
    try:
        found["serials"] = [d.serial for d in adbutils.AdbClient(host=adb_host, port=port, socket_timeout=10)
                            .device_list()]
    except Exception as exc:  # a node without adb is reported, not fatal
        found["error"] = f"{type(exc).__name__}: {exc}"
    return found


def _discover_on_node(adb_port: int | None) -> dict[str, Any]:
    return {**_node_info(), **list_adb_devices(adb_port)}


def _env_port() -> int:
    try:
        return int(os.environ.get("ANDROID_ADB_SERVER_PORT") or DEFAULT_ADB_PORT)
    except ValueError:
        return DEFAULT_ADB_PORT


def _safe(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "_", text)


class DeviceWorker:
    """The actor behind one phone: runs items on it through this host's adb server and records them
    under a work directory on this host (started with ``max_concurrency=2``: ``steps`` answers
    while ``run`` runs)."""

    def __init__(self, serial: str, adb_port: int, work_root: str | None) -> None:
        # the item's device code reads the adb server from the same variables adb does
        os.environ["ANDROID_ADB_SERVER_HOST"] = "127.0.0.1"
        os.environ["ANDROID_ADB_SERVER_PORT"] = str(adb_port)
        self.serial = serial
        base = Path(work_root) if work_root else Path(tempfile.gettempdir()) / "artemis-ray"
        self.root = base / f"{_safe(serial)}-{uuid.uuid4().hex[:8]}"
        self.root.mkdir(parents=True, exist_ok=True)
        self.step_count = 0

    def info(self) -> dict[str, Any]:
        return {**_node_info(), "work_dir": str(self.root)}

    def steps(self) -> int:
        return self.step_count

    def run(self, runner: Runner, job: Any, key: str, files: dict[str, bytes]) -> tuple[dict[str, Any], bytes]:
        """Run one item; return its row and its session as a bundle. ``files``: the driver's copies
        of files the job names (a task file): a host without an identical one runs the copy."""
        from artemis_cli.engine.bundle import write_bundle
        from artemis_cli.engine.db import DataEngine

        work = self.root / _safe(key)
        shutil.rmtree(work, ignore_errors=True)  # an item run again on this phone starts clean
        work.mkdir(parents=True)
        for i, (path, text) in enumerate(sorted(files.items())):
            here = Path(path)
            if not (here.is_file() and here.read_bytes() == text):
                copy = work / f"file{i}" / here.name  # the same name: a task without an id keeps its id
                copy.parent.mkdir(parents=True)
                copy.write_bytes(text)
                job = _relocate(job, path, str(copy))
        data = work / "data"
        data.mkdir()
        self.step_count = 0

        def on_step(n: int) -> None:
            self.step_count = n

        row = runner(job, self.serial, data, on_step=on_step)
        bundle = work / BUNDLE_NAME
        engine = DataEngine.open(Path(row.get("data_dir") or data))
        try:
            write_bundle(engine, str(row["session_id"]), bundle)
        finally:
            engine.close()
        try:
            return row, bundle.read_bytes()
        finally:
            bundle.unlink(missing_ok=True)

    def forget(self, key: str) -> None:
        """The driver has imported the item's bundle: drop the host's copy."""
        shutil.rmtree(self.root / _safe(key), ignore_errors=True)

    def close(self) -> None:
        """The run is over: drop this actor's work dir on the host."""
        shutil.rmtree(self.root, ignore_errors=True)


def _relocate(job: Any, old: str, new: str) -> Any:
    """``job`` with its string fields equal to ``old`` pointed at ``new`` (a dataclass job)."""
    import dataclasses

    if not dataclasses.is_dataclass(job) or isinstance(job, type):
        return job
    changes = {f.name: new for f in dataclasses.fields(job) if getattr(job, f.name) == old}
    return dataclasses.replace(job, **changes) if changes else job


def _remove_dir(path: str) -> bool:
    """Run on a node: remove a dead actor's work dir there."""
    shutil.rmtree(path, ignore_errors=True)
    return not Path(path).exists()


# -- the driver ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class DeviceSlot:
    """One phone of the cluster and where its actor runs."""

    serial: str
    host: str  # the host's address (cluster file) or the node's IP
    node_id: str
    adb_port: int
    resource: str | None  # the custom resource that pins the actor; None: node affinity
    work_dir: str | None = None

    @property
    def label(self) -> str:
        return f"{self.serial} on {self.host}"


def actor_name(slot: DeviceSlot) -> str:
    """The (job-scoped) name of the slot's actor: ``ray.get_actor(actor_name(slot))``."""
    return f"artemis-device:{slot.node_id[:12]}:{slot.serial}"


def parse_ray_address(value: str) -> tuple[str | None, bool]:
    """``--ray`` value -> (address for ``ray.init``, start a local Ray?). ``auto``: the cluster this
    machine belongs to (RAY_ADDRESS or the one ``ray start`` left here); ``local``: start Ray in this
    process, one node declaring the local phones; anything else: a head ``HOST:PORT`` or
    ``ray://HOST:10001``."""
    text = value.strip()
    if not text:
        raise UsageError("--ray needs a value", hint="auto | local | HOST:PORT | ray://HOST:10001")
    if text == "local":
        return None, True
    return text, False


def _import_ray() -> Any:
    try:
        import ray
    except ImportError as exc:
        raise UsageError("--ray needs Ray, which is not installed", hint=RAY_HINT) from exc
    return ray


def _local_serials(cluster: ClusterFile | None) -> list[str]:
    if cluster is None:
        found = list_adb_devices(None)
        return list(found["serials"])
    serials: list[str] = []
    for host in cluster.hosts:
        serials += host.devices if host.devices else list_adb_devices(host.adb_port)["serials"]
    return serials


def _connect(ray: Any, address: str | None, local: bool, cluster: ClusterFile | None) -> bool:
    """Connect (or start Ray); True when this call did, so the caller shuts it down."""
    if ray.is_initialized():
        return False
    quiet = {"log_to_driver": False, "logging_level": logging.WARNING}
    if local:
        resources = {device_resource(s): 1.0 for s in dict.fromkeys(_local_serials(cluster))}
        ray.init(resources=resources, include_dashboard=False, **quiet)
        return True
    try:
        ray.init(address=address, **quiet)
    except (ConnectionError, RuntimeError, ValueError) as exc:
        raise UsageError(f"cannot connect to the Ray cluster at {address}: {exc}",
                         hint="start one with `ray start --head …` (docs/scale.md), or use --ray local") from exc
    return True


def _alive_nodes(ray: Any) -> list[dict[str, Any]]:
    return [n for n in ray.nodes() if n.get("Alive")]


def _discover(ray: Any, nodes: list[dict[str, Any]], adb_port: int | None) -> list[dict[str, Any]]:
    from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

    task = ray.remote(_discover_on_node)
    refs = [task.options(num_cpus=0, scheduling_strategy=NodeAffinitySchedulingStrategy(n["NodeID"], soft=False))
            .remote(adb_port) for n in nodes]
    try:
        return list(ray.get(refs, timeout=DISCOVERY_TIMEOUT_S))
    except Exception as exc:
        raise DeviceError(f"asking the nodes' adb servers for their phones failed: {exc}",
                          hint="list the phones in --devices-file instead (docs/scale.md)") from exc


def inventory(ray: Any, cluster: ClusterFile | None, note: Note) -> list[DeviceSlot]:
    """Every phone of the cluster with the node its actor must run on."""
    nodes = _alive_nodes(ray)
    owner: dict[str, dict[str, Any]] = {}
    for node in nodes:
        for res in node.get("Resources", {}):
            if res.startswith(device_resource("")):
                owner[res] = node
    slots: list[DeviceSlot] = []
    missing: list[str] = []
    to_discover: list[tuple[str | None, int | None, str | None, list[dict[str, Any]]]] = []
    if cluster is None:
        to_discover.append((None, None, None, nodes))
    else:
        for host in cluster.hosts:
            if host.devices:
                for serial in host.devices:
                    holder = owner.get(device_resource(serial))
                    if holder is None:
                        missing.append(f"{serial} ({host.address})")
                        continue
                    node = holder
                    if node["NodeManagerAddress"] != host.address:
                        note(f"{serial}: its resource is on node {node['NodeManagerAddress']}, the devices file "
                             f"says {host.address}; running it there")
                    slots.append(DeviceSlot(serial, host.address, node["NodeID"], host.adb_port,
                                            device_resource(serial), host.work_dir))
            else:
                here = [n for n in nodes if host.address in (n["NodeManagerAddress"], n.get("NodeManagerHostname"))]
                if not here:
                    known = ", ".join(sorted({n["NodeManagerAddress"] for n in nodes})) or "none"
                    raise UsageError(f"no live Ray node has the address {host.address} (nodes: {known})",
                                     hint="use the address `ray status` / ray.nodes() shows for that host")
                to_discover.append((host.address, host.adb_port, host.work_dir, here))
    if missing:
        raise DeviceError("no live Ray node declares the resource of: " + ", ".join(missing),
                          hint="start each host with `ray start … --resources='{\"artemis_device:SERIAL\": 1}'` "
                               "(docs/scale.md), or leave its devices out to ask its adb server")
    taken = {s.serial for s in slots}
    seen: set[tuple[str, int, str]] = set()  # (machine, adb port, serial): one phone
    for address, port, work_dir, where in to_discover:
        for found in _discover(ray, where, port):
            node = next(n for n in where if n["NodeID"] == found["node_id"])
            if found["error"]:
                note(f"node {node['NodeManagerAddress']}: adb server on port {found['adb_port']} did not answer "
                     f"({found['error']})")
            for serial in found["serials"]:
                res = device_resource(serial)
                if serial in taken or (res in owner and owner[res]["NodeID"] != node["NodeID"]):
                    continue  # listed in the file, or declared by another node
                key = (node["NodeManagerAddress"], int(found["adb_port"]), serial)
                if key in seen:
                    continue
                seen.add(key)
                slots.append(DeviceSlot(serial, address or node["NodeManagerAddress"], node["NodeID"],
                                        int(found["adb_port"]), res if res in owner else None, work_dir))
    if not slots:
        raise DeviceError("the Ray cluster has no phones: no node's adb server lists one and no devices file names one",
                          hint="`adb devices` on each host, or --devices-file cluster.yaml (docs/scale.md)")
    return slots


def _dead_actor_errors(ray: Any) -> tuple[type[BaseException], ...]:
    ex = ray.exceptions
    return tuple(getattr(ex, n) for n in ("RayActorError", "WorkerCrashedError", "NodeDiedError", "ObjectLostError")
                 if hasattr(ex, n))


def _cause(exc: BaseException) -> BaseException:
    cause = getattr(exc, "cause", None)
    return cause if isinstance(cause, BaseException) else exc


def device_names(slots: list[DeviceSlot]) -> list[str]:
    """Each slot's name in the results: its serial, or ``serial@host`` when two hosts have that serial."""
    count: dict[str, int] = {}
    for s in slots:
        count[s.serial] = count.get(s.serial, 0) + 1
    return [s.serial if count[s.serial] == 1 else f"{s.serial}@{s.host}" for s in slots]


def run_bench_ray(config: BenchConfig, address: str, devices_file: Path | None = None,
                  progress: Progress | None = None, *,
                  on_dispatch: Callable[[str, str, DeviceSlot], None] | None = None,
                  start_timeout: float = START_TIMEOUT_S) -> dict[str, Any]:
    """The bench with its pairs on the phones of a Ray cluster: :func:`artemis_cli.bench.runner.run_bench`
    with ``ray_address``. The results have the shape of a local ``--devices`` run (rows also name
    ``host`` and ``ray_node``) and a ``ray`` section saying where each phone's actor ran.
    ``on_dispatch(task id, mode, slot)`` is called as a pair is handed to a phone (tests use it
    to kill that actor)."""
    from artemis_cli.bench.runner import run_bench

    def dispatched(item: WorkItem, slot: DeviceSlot) -> None:
        if on_dispatch is not None:
            task_id, mode = item.key.split("|", 1)
            on_dispatch(task_id, mode, slot)

    return run_bench(config, progress, ray_address=address, devices_file=devices_file, on_dispatch=dispatched,
                     start_timeout=start_timeout)


@dataclass
class _Live:
    name: str  # the device's name in the results: its serial (``serial@host`` if two hosts share one)
    slot: DeviceSlot
    actor: Any
    info: dict[str, Any] = field(default_factory=dict)
    cpu_s: float = 0.0
    dropped: str | None = None
    steps: int = 0


class RayBackend:
    """One actor per phone of the cluster (see the module doc); the scheduler's :class:`Backend`."""

    def __init__(self, address: str, devices_file: Path | None, runner: Runner, *, step_interval: float,
                 on_dispatch: Callable[[WorkItem, DeviceSlot], None] | None = None,
                 start_timeout: float = START_TIMEOUT_S) -> None:
        self.cluster = load_cluster_file(devices_file) if devices_file is not None else None
        self.address, self.local = parse_ray_address(address)
        self.ray = _import_ray()
        self.runner = runner
        self.step_interval = step_interval
        self.on_dispatch = on_dispatch
        self.start_timeout = start_timeout
        self.started_ray = False
        self.live: dict[str, _Live] = {}
        self.slots: list[DeviceSlot] = []
        self.inflight: dict[Any, tuple[_Live, WorkItem]] = {}
        self.queued: list[tuple[Any, ...]] = []
        self.cleanups: list[Any] = []
        self.dropped_at_start: dict[str, str] = {}
        self.last_steps_poll = 0.0

    # -- the Backend protocol -------------------------------------------------------------------------

    def start(self, events: SchedulerEvents) -> list[str]:
        ray = self.ray
        from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

        self.started_ray = _connect(ray, self.address, self.local, self.cluster)
        self.slots = inventory(ray, self.cluster, lambda text: events.note("-", text))
        actor_cls = ray.remote(DeviceWorker)
        pending: dict[Any, _Live] = {}
        for name, slot in zip(device_names(self.slots), self.slots, strict=True):
            opts: dict[str, Any] = {"num_cpus": 0, "max_restarts": 0, "max_task_retries": 0,
                                    "max_concurrency": 2, "name": actor_name(slot)}
            if slot.resource:
                opts["resources"] = {slot.resource: 1}
            else:
                opts["scheduling_strategy"] = NodeAffinitySchedulingStrategy(slot.node_id, soft=False)
            actor = actor_cls.options(**opts).remote(slot.serial, slot.adb_port, slot.work_dir)
            self.live[name] = entry = _Live(name, slot, actor)
            pending[actor.info.remote()] = entry
        ready, late = ray.wait(list(pending), num_returns=len(pending), timeout=self.start_timeout)
        started: list[str] = []
        for ref in ready:
            entry = pending[ref]
            try:
                entry.info = ray.get(ref)
            except Exception as exc:
                self._retire(entry, f"its actor did not start: {_cause(exc)}")
                continue
            started.append(entry.name)
        for ref in late:
            self._retire(pending[ref], f"its actor did not start within {self.start_timeout:.0f} s (node gone, or "
                                       "its device resource held by another run?)")
        for entry in self.live.values():
            if entry.dropped:
                events.note(entry.name, f"device dropped: {entry.dropped}")
        if not started:
            raise DeviceError("no device actor started: " + "; ".join(f"{e.name}: {e.dropped}"
                                                                      for e in self.live.values()),
                              hint="docs/scale.md: each phone's resource, adb server and Artemis install")
        return started

    def dispatch(self, device: str, item: WorkItem) -> None:
        entry = self.live[device]
        files = {f: Path(f).read_bytes() for f in item.files}
        entry.steps = 0
        self.inflight[entry.actor.run.remote(self.runner, item.job, item.key, files)] = (entry, item)
        self.queued.append(("start", device, item.key))
        if self.on_dispatch:
            self.on_dispatch(item, entry.slot)

    def poll(self, timeout: float) -> list[tuple[Any, ...]]:
        ray = self.ray
        out, self.queued = self.queued, []
        if not self.inflight:
            return out
        ready, _ = ray.wait(list(self.inflight), num_returns=1, timeout=min(timeout, self.step_interval))
        for ref in ready:
            out.append(self._finished(ref))
        if self.inflight and time.monotonic() - self.last_steps_poll >= self.step_interval:
            self.last_steps_poll = time.monotonic()
            asks = {e.actor.steps.remote(): (e, item) for e, item in self.inflight.values()}
            answered, _ = ray.wait(list(asks), num_returns=len(asks), timeout=1.0)
            for ref in answered:
                entry, item = asks[ref]
                with contextlib.suppress(Exception):  # a dead actor is reported by its run call
                    n = int(ray.get(ref))
                    if n != entry.steps:
                        entry.steps = n
                        out.append(("step", entry.name, item.key, n))
        return out

    def _finished(self, ref: Any) -> tuple[Any, ...]:
        ray = self.ray
        entry, item = self.inflight.pop(ref)
        try:
            row, bundle = ray.get(ref)
        except _dead_actor_errors(ray) as exc:
            why = f"its actor died ({type(exc).__name__})"
            self._retire(entry, why)
            return ("offline", entry.name, item.key, why, None)
        except Exception as exc:
            cause = _cause(exc)
            if not isinstance(cause, DeviceError):  # a broken task, a bug: stops the run, as locally
                if hasattr(cause, "add_note"):
                    cause.add_note(f"on {entry.slot.host}")
                return ("error", entry.name, item.key, cause)
            why = f"{type(cause).__name__}: {cause}"
            self._retire(entry, why)
            return ("offline", entry.name, item.key, why, getattr(cause, "row", None))
        row = self._import(entry, item, row, bundle)
        entry.actor.forget.remote(item.key)
        entry.cpu_s += float(row.get("cpu_s") or 0)
        return ("done", entry.name, item.key, row)

    def stop(self, now: bool = False) -> None:
        """Each live actor drops its work dir on its host; then every actor goes; the dead actors'
        work dirs are removed; Ray is shut down if this backend started it."""
        ray = self.ray
        try:
            closing = [e.actor.close.remote() for e in self.live.values() if e.dropped is None]
            with contextlib.suppress(Exception):
                ray.wait(closing, num_returns=len(closing), timeout=10)
            for entry in self.live.values():
                with contextlib.suppress(Exception):
                    ray.kill(entry.actor, no_restart=True)
            if self.cleanups:
                with contextlib.suppress(Exception):
                    ray.wait(self.cleanups, num_returns=len(self.cleanups), timeout=CLEANUP_TIMEOUT_S)
        finally:
            if self.started_ray:
                ray.shutdown()

    def stats(self) -> dict[str, dict[str, Any]]:
        return {e.name: {"spec": e.slot.serial, "host": e.slot.host,
                         "ray_node": e.info.get("node_id", e.slot.node_id), "cpu_s": round(e.cpu_s, 3),
                         "dropped": e.dropped} for e in self.live.values()}

    def summary(self) -> dict[str, Any]:
        return {"nodes": len({s.node_id for s in self.slots}),
                "devices": [{"device": e.name, "host": e.slot.host, "ray_node": e.slot.node_id,
                             "pinned_by": e.slot.resource or "node affinity",
                             "work_dir": e.info.get("work_dir")} for e in self.live.values()]}

    # -- helpers ---------------------------------------------------------------------------------------

    def _retire(self, entry: _Live, why: str) -> None:
        """``entry``'s phone or actor is gone: kill the actor and remove its work dir on its host."""
        from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

        entry.dropped = why
        with contextlib.suppress(Exception):
            self.ray.kill(entry.actor, no_restart=True)
        work_dir = entry.info.get("work_dir")
        if work_dir:
            with contextlib.suppress(Exception):
                task = self.ray.remote(_remove_dir).options(
                    num_cpus=0, scheduling_strategy=NodeAffinitySchedulingStrategy(entry.slot.node_id, soft=False))
                self.cleanups.append(task.remote(work_dir))

    def _import(self, entry: _Live, item: WorkItem, row: dict[str, Any], bundle: bytes) -> dict[str, Any]:
        """Import the item's bundle into ``item.work_dir`` at the driver (a local run's layout)."""
        from artemis_cli.engine.bundle import import_bundle
        from artemis_cli.engine.db import DataEngine

        dest = item.work_dir
        dest.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryDirectory(prefix="artemis-bundle-") as tmp:
            path = Path(tmp) / BUNDLE_NAME
            path.write_bytes(bundle)
            engine = DataEngine.open(dest)
            try:
                imported = import_bundle(engine, path)
            finally:
                engine.close()
        return {**row, "session_id": imported.session_id, "data_dir": str(dest), "host": entry.slot.host,
                "ray_node": entry.info.get("node_id", entry.slot.node_id), "bundle_bytes": len(bundle)}
