"""``artemis bench run … --ray ADDRESS``: the task × mode pairs on a Ray cluster (docs/scale.md).

One Ray actor per phone, pinned to the node that owns it by the custom resource
``artemis_device:<serial>`` (declared with ``ray start --resources``; a phone found by asking a
node's adb server whose node does not declare it is pinned to that node by node affinity). The
actor talks to the phone through its own host's adb server, records the pair into a DataEngine
in a work directory on that host and ships the finished session back as a bundle (bytes), which
the driver imports into its own data directory (the same ``<out>-sessions/<task>-<mode>`` folders
as a local run). Nothing crosses the network per step: the pair job goes out, the bundle comes
back.

An actor that dies (its node lost, its process killed: ``RayActorError``) or whose phone goes
away (``DeviceError``) is retired; its in-flight pair is queued once more on another phone and
the row says ``requeued_from``. Finished pairs are kept in the bench state file as they come in,
so a run whose driver dies resumes when the same command is run again.

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
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from artemis_cli.bench.cluster_file import DEFAULT_ADB_PORT, ClusterFile, device_resource, load_cluster_file
from artemis_cli.errors import DeviceError, UsageError

if TYPE_CHECKING:
    from artemis_cli.bench.parallel import PairItem
    from artemis_cli.bench.runner import BenchConfig, Progress
    from artemis_cli.bench.worker import PairJob

RAY_HINT = "install the extra: pip install 'artemis-cli[ray]' (docs/scale.md)"
#: how long the actors get to come up (a node must start a worker process and import Artemis)
START_TIMEOUT_S = 120.0
DISCOVERY_TIMEOUT_S = 60.0
BUNDLE_NAME = "session.bundle"
#: a dropped pair runs at most this many times in all (as with --devices)
MAX_ATTEMPTS = 2

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
    """The actor behind one phone: runs pairs on it through this host's adb server and records them
    under a work directory on this host."""

    def __init__(self, serial: str, adb_port: int, work_root: str | None) -> None:
        # the pair's device code reads the adb server from the same variables adb does
        os.environ["ANDROID_ADB_SERVER_HOST"] = "127.0.0.1"
        os.environ["ANDROID_ADB_SERVER_PORT"] = str(adb_port)
        self.serial = serial
        base = Path(work_root) if work_root else Path(tempfile.gettempdir()) / "artemis-ray"
        self.root = base / f"{_safe(serial)}-{uuid.uuid4().hex[:8]}"
        self.root.mkdir(parents=True, exist_ok=True)

    def info(self) -> dict[str, Any]:
        return {**_node_info(), "work_dir": str(self.root)}

    def run(self, job: PairJob, pair_key: str, task_text: bytes) -> tuple[dict[str, Any], bytes]:
        """Run one pair; return its result row and the finished session as a bundle. ``task_text``
        is the task file as the driver read it: a host without the suite at the same path (or
        with another version of it) runs the driver's copy."""
        import dataclasses

        from artemis_cli.bench.worker import run_pair_job
        from artemis_cli.engine.bundle import write_bundle
        from artemis_cli.engine.db import DataEngine

        work = self.root / _safe(pair_key)
        shutil.rmtree(work, ignore_errors=True)  # a pair run again on this phone starts clean
        work.mkdir(parents=True)
        task_file = Path(job.task_file)
        if not (task_file.is_file() and task_file.read_bytes() == task_text):
            copy = work / "task" / task_file.name  # the same name: a task without an id keeps its id
            copy.parent.mkdir(parents=True)
            copy.write_bytes(task_text)
            job = dataclasses.replace(job, task_file=str(copy))
        data = work / "data"
        data.mkdir()
        row = run_pair_job(job, self.serial, data)
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

    def forget(self, pair_key: str) -> None:
        """The driver has imported the pair's bundle: drop the host's copy."""
        shutil.rmtree(self.root / _safe(pair_key), ignore_errors=True)

    def close(self) -> None:
        """The run is over: drop this actor's work dir on the host."""
        shutil.rmtree(self.root, ignore_errors=True)


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


@dataclass
class _Live:
    name: str  # the device's name in the results: its serial (``serial@host`` if two hosts share one)
    slot: DeviceSlot
    actor: Any
    info: dict[str, Any] = field(default_factory=dict)
    pairs: int = 0
    cpu_s: float = 0.0
    dropped: str | None = None


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
    """Run the bench with its pairs spread over the phones of a Ray cluster. The results have the
    shape of a local ``--devices`` run (rows name their ``device``, plus ``host`` and ``ray_node``;
    ``devices``, ``device_stats`` and ``unfinished`` at the top) and a ``ray`` section saying where
    each phone's actor ran. ``on_dispatch(task id, mode, slot)`` is called as a pair is handed
    to a phone (tests use it to kill that actor)."""
    from artemis_cli.bench.runner import Progress as BenchProgress

    config.check()
    cluster = load_cluster_file(devices_file) if devices_file is not None else None
    ray_address, local = parse_ray_address(address)
    ray = _import_ray()
    started = _connect(ray, ray_address, local, cluster)
    try:
        return _Driver(ray, config, progress or BenchProgress(), on_dispatch, start_timeout).run(cluster)
    finally:
        if started:
            ray.shutdown()


class _Driver:
    def __init__(self, ray: Any, config: BenchConfig, progress: Progress,
                 on_dispatch: Callable[[str, str, DeviceSlot], None] | None, start_timeout: float) -> None:
        self.ray = ray
        self.config = config
        self.progress = progress
        self.on_dispatch = on_dispatch
        self.start_timeout = start_timeout
        self.live: list[_Live] = []
        self.unfinished: list[dict[str, Any]] = []

    def note(self, device: str, text: str) -> None:
        if self.progress.on_device_note:
            self.progress.on_device_note(device, text)

    # -- actors ------------------------------------------------------------------------------------

    def start_actors(self, slots: list[DeviceSlot]) -> list[_Live]:
        ray = self.ray
        from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

        actor_cls = ray.remote(DeviceWorker)
        pending: dict[Any, _Live] = {}
        for name, slot in zip(device_names(slots), slots, strict=True):
            opts: dict[str, Any] = {"num_cpus": 0, "max_restarts": 0, "max_task_retries": 0,
                                    "name": actor_name(slot)}
            if slot.resource:
                opts["resources"] = {slot.resource: 1}
            else:
                opts["scheduling_strategy"] = NodeAffinitySchedulingStrategy(slot.node_id, soft=False)
            actor = actor_cls.options(**opts).remote(slot.serial, slot.adb_port, slot.work_dir)
            entry = _Live(name, slot, actor)
            self.live.append(entry)
            pending[actor.info.remote()] = entry
        ready, late = ray.wait(list(pending), num_returns=len(pending), timeout=self.start_timeout)
        started: list[_Live] = []
        for ref in ready:
            entry = pending[ref]
            try:
                entry.info = ray.get(ref)
            except Exception as exc:
                self._retire(entry, f"its actor did not start: {_cause(exc)}")
                continue
            started.append(entry)
        for ref in late:
            self._retire(pending[ref], f"its actor did not start within {self.start_timeout:.0f} s (node gone, or "
                                       "its device resource held by another run?)")
        return started

    def _stop_actors(self) -> None:
        """Each live actor drops its work dir on its host; then every actor goes."""
        closing = [e.actor.close.remote() for e in self.live if e.dropped is None]
        with contextlib.suppress(Exception):
            self.ray.wait(closing, num_returns=len(closing), timeout=10)
        for entry in self.live:
            with contextlib.suppress(Exception):
                self.ray.kill(entry.actor, no_restart=True)

    def _retire(self, entry: _Live, why: str) -> None:
        entry.dropped = why
        self.note(entry.name, f"device dropped: {why}")
        with contextlib.suppress(Exception):
            self.ray.kill(entry.actor, no_restart=True)

    # -- the run -------------------------------------------------------------------------------------

    def run(self, cluster: ClusterFile | None) -> dict[str, Any]:
        from artemis_cli.bench.parallel import PairItem
        from artemis_cli.bench.runner import _load_state, _save_state, assemble, state_key
        from artemis_cli.bench.suite import load_suite
        from artemis_cli.bench.worker import pair_dir, tasks_and_jobs

        config, progress = self.config, self.progress
        tasks = load_suite(config.suite, only=config.tasks)
        state = _load_state(config.state_path)
        key = state_key(config)
        if state.get("key") != key:
            state = {"key": key, "pairs": {}, "synthetic": {}}
        pairs: dict[str, Any] = state["pairs"]

        def save() -> None:
            _save_state(config.state_path, state)

        queue: deque[PairItem] = deque()
        for task, job in tasks_and_jobs(config, tasks):  # a broken probe file fails here, no phone busy yet
            pid = f"{task.id}|{job.mode}"
            if pid in pairs:
                if progress.on_pair_done:
                    progress.on_pair_done(task.id, job.mode, None)  # resumed: kept from the earlier run
                continue
            queue.append(PairItem(pid, task.id, job.mode, task.max_steps, job, pair_dir(config, task.id, job.mode)))
        t0 = time.perf_counter()
        slots: list[DeviceSlot] = []
        if queue:
            if progress.on_phase:
                progress.on_phase("finding the cluster's phones")
            slots = inventory(self.ray, cluster, lambda text: self.note("-", text))
            if progress.on_phase:
                progress.on_phase(f"starting {len(slots)} device actor(s) on the Ray cluster")
            started = self.start_actors(slots)
            if not started:
                raise DeviceError("no device actor started: " + "; ".join(f"{e.name}: {e.dropped}" for e in self.live),
                                  hint="docs/scale.md: each phone's resource, adb server and Artemis install")
            try:
                self._loop(queue, started, pairs, save)
            finally:
                self._stop_actors()
        self._synthetic(state, save)
        results = assemble(config, tasks, state, time.perf_counter() - t0)
        results["devices"] = [e.name for e in self.live]
        results["device_stats"] = {e.name: {"spec": e.slot.serial, "host": e.slot.host,
                                            "ray_node": e.info.get("node_id", e.slot.node_id), "pairs": e.pairs,
                                            "cpu_s": round(e.cpu_s, 3), "dropped": e.dropped} for e in self.live}
        results["unfinished"] = self.unfinished
        results["ray"] = {"nodes": len({s.node_id for s in slots}),
                          "devices": [{"device": e.name, "host": e.slot.host, "ray_node": e.slot.node_id,
                                       "pinned_by": e.slot.resource or "node affinity",
                                       "work_dir": e.info.get("work_dir")} for e in self.live]}
        return results

    def _loop(self, queue: deque[PairItem], started: list[_Live], pairs: dict[str, Any],
              save: Callable[[], None]) -> None:
        ray, progress = self.ray, self.progress
        dead_errors = _dead_actor_errors(ray)
        idle: deque[_Live] = deque(started)
        inflight: dict[Any, tuple[_Live, PairItem]] = {}
        while inflight or (queue and idle):
            while queue and idle:
                entry, pair = idle.popleft(), queue.popleft()
                pair.attempts += 1
                ref = entry.actor.run.remote(pair.job, pair.pid, Path(pair.job.task_file).read_bytes())
                inflight[ref] = (entry, pair)
                if progress.on_device_start:
                    progress.on_device_start(entry.name, pair.task_id, pair.mode, pair.max_steps)
                elif progress.on_pair_start:
                    progress.on_pair_start(pair.task_id, pair.mode, pair.max_steps)
                if self.on_dispatch:
                    self.on_dispatch(pair.task_id, pair.mode, entry.slot)
            if not inflight:
                break
            [ref], _ = ray.wait(list(inflight), num_returns=1)
            entry, pair = inflight.pop(ref)
            try:
                row, bundle = ray.get(ref)
            except dead_errors as exc:
                self._interrupt(entry, pair, f"its actor died ({type(exc).__name__})", None, queue, idle, inflight)
                continue
            except Exception as exc:
                cause = _cause(exc)
                if not isinstance(cause, DeviceError):  # a broken task, a bug: stops the run, as locally
                    if hasattr(cause, "add_note"):
                        cause.add_note(f"on device {entry.name} ({entry.slot.host}): {pair.task_id} · {pair.mode}")
                    raise cause from None
                self._interrupt(entry, pair, f"{type(cause).__name__}: {cause}", getattr(cause, "row", None),
                                queue, idle, inflight)
                continue
            pairs[pair.pid] = self._import(entry, pair, row, bundle)
            save()
            entry.actor.forget.remote(pair.pid)
            entry.pairs += 1
            entry.cpu_s += float(row.get("cpu_s") or 0)
            idle.append(entry)
            if progress.on_device_step:
                progress.on_device_step(entry.name, int(row.get("steps", 0)))
            if progress.on_pair_done:
                progress.on_pair_done(pair.task_id, pair.mode, pairs[pair.pid])
        for pair in queue:
            self._give_up(pair, "no device left")

    def _interrupt(self, entry: _Live, pair: PairItem, why: str, row: dict[str, Any] | None, queue: deque[PairItem],
                   idle: deque[_Live], inflight: dict[Any, tuple[_Live, PairItem]]) -> None:
        """``entry``'s phone or actor is gone: retire it; its pair runs once more on another phone."""
        self._retire(entry, why)
        pair.interruptions.append({"device": entry.name, "host": entry.slot.host, "reason": why,
                                   "session_id": (row or {}).get("session_id")})
        others = list(idle) + [e for e, _ in inflight.values()]
        if pair.attempts >= MAX_ATTEMPTS:
            self._give_up(pair, f"interrupted {pair.attempts} times; last: {why}")
        elif not others:
            self._give_up(pair, f"interrupted, and no other device is left; {why}")
        else:
            pair.requeued_from = entry.name
            queue.appendleft(pair)
            self.note(entry.name, f"{pair.task_id} · {pair.mode}: interrupted, re-queued on another device")

    def _give_up(self, pair: PairItem, reason: str) -> None:
        self.unfinished.append({"task": pair.task_id, "mode": pair.mode, "attempts": pair.attempts,
                                "requeued_from": pair.requeued_from, "reason": reason,
                                "interruptions": pair.interruptions})
        self.note(pair.interruptions[-1]["device"] if pair.interruptions else "-",
                  f"{pair.task_id} · {pair.mode}: not finished ({reason})")

    def _import(self, entry: _Live, pair: PairItem, row: dict[str, Any], bundle: bytes) -> dict[str, Any]:
        """Import the pair's bundle into the driver's data dir (a local run's layout)."""
        from artemis_cli.engine.bundle import import_bundle
        from artemis_cli.engine.db import DataEngine

        dest = pair.data_dir
        dest.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryDirectory(prefix="artemis-bundle-") as tmp:
            path = Path(tmp) / BUNDLE_NAME
            path.write_bytes(bundle)
            engine = DataEngine.open(dest)
            try:
                imported = import_bundle(engine, path)
            finally:
                engine.close()
        out = {**row, "session_id": imported.session_id, "data_dir": str(dest), "device": entry.name,
               "host": entry.slot.host, "ray_node": entry.info.get("node_id", entry.slot.node_id),
               "bundle_bytes": len(bundle), "attempts": pair.attempts, "requeued_from": pair.requeued_from}
        if pair.interruptions:
            out["interruptions"] = pair.interruptions
        return out

    def _synthetic(self, state: dict[str, Any], save: Callable[[], None]) -> None:
        """The synthetic overhead and recall runs need no phone: they run here, as in a local run."""
        from artemis_cli.bench.synthetic import overhead_run, recall_latency
        from artemis_cli.config.profile import load_profile

        config, progress = self.config, self.progress
        synthetic: dict[str, Any] = state["synthetic"]
        profile = load_profile(config.profile)
        for mode in [m for m in config.modes if m in config.synthetic_modes]:
            sk = f"overhead|{mode}|{config.synthetic_steps}"
            if sk not in synthetic:
                if progress.on_phase:
                    progress.on_phase(f"synthetic {config.synthetic_steps}-step run ({mode})")
                synthetic[sk] = overhead_run(mode, profile, config.synthetic_steps,
                                             config.work / f"synthetic-{mode}", on_step=progress.on_step)
                save()
        rk = f"recall|{config.recall_steps}"
        if rk not in synthetic:
            if progress.on_phase:
                progress.on_phase(f"recall latency on a synthetic {config.recall_steps}-step session")
            synthetic[rk] = recall_latency(config.recall_steps, config.work / "recall-10k")
            save()
