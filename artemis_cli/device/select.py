"""Choosing a device: `--device`, the simulated phone for a task written for it, else
$ANDROID_SERIAL, the one attached phone, or the simulated phone.

Also what `artemis devices` lists and what `artemis doctor` reports about adb.
"""

from __future__ import annotations

import importlib
import logging
import os
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

import adbutils

from artemis_cli.device.adb_link import ADB_HINT, adb_server_reachable
from artemis_cli.device.protocol import Device
from artemis_cli.errors import DeviceError, DeviceNotFound, UsageError

log = logging.getLogger(__name__)

Backend = Literal["auto", "adb", "u2"]
BACKENDS: tuple[str, ...] = ("auto", "adb", "u2")
DEFAULT_WORLD = "default"
BACKEND_ENV = "ARTEMIS_DEVICE_BACKEND"
_LIST_TIMEOUT = 2.0


@dataclass(frozen=True)
class DeviceListing:
    serial: str  # what to pass to --device
    kind: Literal["sim", "adb"]
    state: str  # adb state ("device", "offline", "unauthorized", …) or "available" for sims
    model: str
    detail: str


@dataclass(frozen=True)
class AdbStatus:
    adb_binary: str | None  # `adb` on PATH
    host: str
    port: int
    server_reachable: bool
    server_version: int | None  # e.g. 41 for adb 1.0.41
    error: str | None


def adb_address() -> tuple[str, int]:
    """The adb server address, from the same environment variables adb and adbutils read."""
    host = os.environ.get("ANDROID_ADB_SERVER_HOST") or "127.0.0.1"
    try:
        port = int(os.environ.get("ANDROID_ADB_SERVER_PORT") or 5037)
    except ValueError:
        port = 5037
    return host, port


def _adb_entries(host: str, port: int) -> list[adbutils.AdbDeviceInfo]:
    """Everything the adb server lists; [] when there is no reachable adb server (fast)."""
    if not adb_server_reachable(host, port):
        return []
    try:
        return adbutils.AdbClient(host=host, port=port, socket_timeout=_LIST_TIMEOUT).list(extended=True)
    except (adbutils.AdbError, OSError, EOFError) as e:
        log.debug("adb server at %s:%s did not list devices: %s", host, port, e)
        return []


def format_multiple_devices(serials: list[str]) -> str:
    return (
        f"{len(serials)} devices are attached ({', '.join(serials)}); "
        "choose one with --device SERIAL (or set ANDROID_SERIAL)"
    )


def multiple_devices_error(serials: list[str]) -> UsageError:
    return UsageError(
        format_multiple_devices(serials),
        hint=f"e.g. --device {serials[0]}" if serials else None,
    )


def parse_sim_spec(spec: str) -> str | None:
    """World name for "sim" / "sim:<world>"; None when ``spec`` is not a sim spec."""
    if spec == "sim":
        return DEFAULT_WORLD
    if spec.startswith("sim:"):
        world = spec[4:].strip()
        if not world:
            raise UsageError("empty world in --device sim:<world>", hint="e.g. --device sim:default")
        return world
    return None


def sim_for(sim: Any) -> Device:
    """The simulated phone a task's ``sim:`` settings describe (``config.task.SimOptions``): its
    world, seed, pop-ups, faults and shop password variable, and its latency profile charged."""
    opts = sim.model_dump()
    world, seed = opts.pop("world"), opts.pop("seed")
    return _make_sim(world, seed, {k: v for k, v in opts.items() if v is not None})


def _make_sim(world: str, seed: int, options: dict[str, Any] | None) -> Device:
    try:
        from artemis_cli.sim.phone import SimPhone
    except ImportError as e:
        raise DeviceNotFound(f"the simulated phone is not available: {e}") from e
    opts = dict(options or {})
    latency = opts.pop("latency", None)  # a task's sim.latency: charged per call (sim/latency.py)
    phone: Device = SimPhone(world=world, seed=seed, **opts)
    if latency not in (None, "off"):
        from artemis_cli.sim.latency import Latency, charge_device

        charge_device(phone, Latency(latency, seed))
    return phone


def _make_real(serial: str, backend: str, host: str, port: int) -> Device:
    from artemis_cli.device.adb import AdbDevice

    if backend == "adb":
        return AdbDevice(serial, host=host, port=port)
    from artemis_cli.device.u2 import U2Device

    if backend == "u2":
        return U2Device(serial, host=host, port=port)
    try:
        return U2Device(serial, host=host, port=port)
    except DeviceNotFound:
        raise  # adb would not find it either
    except DeviceError as e:
        device = AdbDevice(serial, host=host, port=port)
        device.fallback_reason = f"uiautomator2 unavailable, using adb: {e}"
        log.warning("%s: %s", serial, device.fallback_reason)
        return device


def resolve_device(
    spec: str | None,
    *,
    backend: Backend = "auto",
    sim_seed: int = 0,
    sim_options: dict[str, Any] | None = None,
    sim_world: str | None = None,
    sim_task: str | None = None,
    notice: Callable[[str], None] | None = None,
) -> Device:
    """The device ``spec`` names. With no spec: the simulated phone for a task written for it
    (``sim_task``, its id: ``Task.written_for_sim``), whatever $ANDROID_SERIAL or adb says; for
    any other task $ANDROID_SERIAL, the single attached device, else the sim.

    ``notice`` is told, before anything acts on the device, what a user could not have guessed:
    the $ANDROID_SERIAL a sim task ignored, or the real device chosen without ``--device``.

    ``backend`` "auto" means $ARTEMIS_DEVICE_BACKEND when set, else u2 falling back to adb.

    ``sim_world`` (a task's ``sim.world``) applies when the spec is plain ``sim``.

    Raises UsageError (several devices, bad spec/backend), DeviceNotFound, DeviceOffline.
    """
    if backend == "auto":  # `ARTEMIS_DEVICE_BACKEND=adb artemis run …` forces a backend
        backend = os.environ.get(BACKEND_ENV, "").strip().lower() or "auto"  # type: ignore[assignment]
    if backend not in BACKENDS:
        raise UsageError(f"unknown device backend {backend!r}; choose one of {', '.join(BACKENDS)}",
                         hint=f"check --backend / ${BACKEND_ENV}")
    host, port = adb_address()
    implicit: str | None = None  # how a real device was chosen without --device
    if spec is not None:
        spec = spec.strip()
        if not spec:
            raise UsageError("empty --device", hint="use a serial from `artemis devices`, or sim")
    elif sim_task is not None:  # never asks adb: a sim task cannot land on a phone by accident
        spec = "sim"
        serial = os.environ.get("ANDROID_SERIAL", "").strip()
        if serial and notice is not None:
            notice(f"task {sim_task} is written for the simulated phone: running on sim "
                   f"(ANDROID_SERIAL={serial} ignored; pass --device {serial} to run there)")
    else:
        spec = os.environ.get("ANDROID_SERIAL", "").strip() or None
        implicit = "from $ANDROID_SERIAL"
        if spec is None:
            ready = [d.serial for d in _adb_entries(host, port) if d.state == "device"]
            if len(ready) > 1:
                raise multiple_devices_error(ready)
            spec = ready[0] if ready else "sim"
            implicit = "the one attached device"
    world = parse_sim_spec(spec)
    if world is not None:
        if spec == "sim" and sim_world:
            world = sim_world
        return _make_sim(world, sim_seed, sim_options)
    device = _make_real(spec, backend, host, port)
    if implicit is not None and notice is not None:
        info = device.info()
        model = f" ({info.model})" if info.model else ""
        notice(f"running on {info.serial}{model}, {implicit}; pass --device to choose")
    return device


def _sim_worlds() -> list[str]:
    try:  # built in parallel: tolerate its absence
        worlds = importlib.import_module("artemis_cli.sim.worlds").WORLDS
    except (ImportError, AttributeError):
        return [DEFAULT_WORLD]
    try:
        names = [str(name) for name in worlds]
    except TypeError:
        return [DEFAULT_WORLD]
    return [DEFAULT_WORLD, *sorted(n for n in names if n != DEFAULT_WORLD)]


def list_devices() -> list[DeviceListing]:
    """Attached adb devices (when an adb server is reachable) and the simulated phone's worlds."""
    host, port = adb_address()
    out = [
        DeviceListing(
            serial=d.serial,
            kind="adb",
            state=d.state,
            model=d.tags.get("model", "").replace("_", " "),
            detail=" ".join(f"{k}:{v}" for k, v in sorted(d.tags.items()) if k != "model"),
        )
        for d in _adb_entries(host, port)
    ]
    try:
        import artemis_cli.sim.phone  # noqa: F401
        state, note = "available", ""
    except ImportError as e:
        state, note = "unavailable", f" ({e})"
    for world in _sim_worlds():
        out.append(
            DeviceListing(
                serial="sim" if world == DEFAULT_WORLD else f"sim:{world}",
                kind="sim",
                state=state,
                model="Artemis simulated phone",
                detail=f"world {world}{note}",
            )
        )
    return out


def adb_status() -> AdbStatus:
    """What `artemis doctor` says about adb: binary on PATH, server up, its version."""
    host, port = adb_address()
    binary = shutil.which("adb")
    if not adb_server_reachable(host, port):
        error = f"no adb server at {host}:{port}"
        error += "; start it with `adb start-server`" if binary else "; install adb (platform-tools)"
        return AdbStatus(binary, host, port, False, None, error)
    try:
        version = adbutils.AdbClient(host=host, port=port, socket_timeout=_LIST_TIMEOUT).server_version()
    except (adbutils.AdbError, OSError, EOFError, ValueError) as e:
        return AdbStatus(binary, host, port, False, None, f"adb server at {host}:{port} did not answer: {e}")
    return AdbStatus(binary, host, port, True, int(version), None)


__all__ = [
    "ADB_HINT",
    "BACKEND_ENV",
    "AdbStatus",
    "DeviceListing",
    "adb_address",
    "adb_status",
    "format_multiple_devices",
    "list_devices",
    "multiple_devices_error",
    "parse_sim_spec",
    "resolve_device",
]
