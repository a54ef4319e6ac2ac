"""resolve_device / list_devices / adb_status, and U2Device construction failures."""

from __future__ import annotations

import importlib.util
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from fake_adb_server import FakeAdbServer, FakeShell

from artemis_cli.device.adb import AdbDevice
from artemis_cli.device.select import (
    Backend,
    adb_status,
    format_multiple_devices,
    list_devices,
    parse_sim_spec,
    resolve_device,
)
from artemis_cli.device.u2 import U2Device
from artemis_cli.errors import DeviceNotFound, DeviceOffline, UsageError

StartFake = Callable[..., FakeAdbServer]


def _sim_available() -> bool:
    try:
        return importlib.util.find_spec("artemis_cli.sim.phone") is not None
    except ImportError:
        return False


needs_sim = pytest.mark.skipif(not _sim_available(), reason="artemis_cli.sim.phone not built yet")


def test_format_multiple_devices() -> None:
    text = format_multiple_devices(["R58M123", "emulator-5554"])
    assert text.startswith("2 devices are attached (R58M123, emulator-5554)")
    assert "--device SERIAL" in text


def test_parse_sim_spec() -> None:
    assert parse_sim_spec("sim") == "default"
    assert parse_sim_spec("sim:shop") == "shop"
    assert parse_sim_spec("emulator-5554") is None
    with pytest.raises(UsageError):
        parse_sim_spec("sim:")


def test_bad_backend_and_empty_spec_are_usage_errors(no_adb: int) -> None:
    with pytest.raises(UsageError, match="backend"):
        resolve_device("x", backend="bogus")  # type: ignore[arg-type]
    with pytest.raises(UsageError):
        resolve_device("  ")


@needs_sim
def test_no_adb_resolves_to_the_sim_quickly(no_adb: int) -> None:
    t0 = time.monotonic()
    device = resolve_device(None)
    assert time.monotonic() - t0 < 5
    assert device.info().kind == "sim"
    device.close()


@needs_sim
def test_sim_spec_with_world(no_adb: int) -> None:
    device = resolve_device("sim:default", sim_seed=3)
    assert device.info().kind == "sim"
    device.close()


def test_two_attached_devices_need_a_choice(fake_adb: StartFake) -> None:
    fake_adb({"R58M123": "device", "emulator-5554": "device", "old": "offline"})
    with pytest.raises(UsageError, match=r"2 devices are attached \(R58M123, emulator-5554\)") as err:
        resolve_device(None)
    assert err.value.exit_code == 2


def test_android_serial_env_wins(fake_adb: StartFake, monkeypatch: pytest.MonkeyPatch) -> None:
    fake_adb({"R58M123": "device", "emulator-5554": "device"})
    monkeypatch.setenv("ANDROID_SERIAL", "emulator-5554")
    device = resolve_device(None, backend="adb")
    assert isinstance(device, AdbDevice) and device.serial == "emulator-5554"


def test_single_attached_device_is_chosen(fake_adb: StartFake) -> None:
    fake_adb({"R58M123": "device", "gone": "offline"})
    device = resolve_device(None, backend="adb")
    assert isinstance(device, AdbDevice) and device.serial == "R58M123"


def test_auto_falls_back_to_adb_when_uiautomator2_cannot_start(fake_adb: StartFake) -> None:
    # the fake server has no sync: service, so uiautomator2 cannot push its server jar
    fake_adb({"R58M123": "device"}, shell=FakeShell(rules={"toybox md5sum": ["x"]}))
    device = resolve_device("R58M123")
    assert isinstance(device, AdbDevice)
    assert device.fallback_reason and "uiautomator2" in device.fallback_reason


def test_forced_u2_that_cannot_start_is_device_offline(fake_adb: StartFake) -> None:
    fake_adb({"R58M123": "device"}, shell=FakeShell(rules={"toybox md5sum": ["x"]}))
    with pytest.raises(DeviceOffline, match="uiautomator2 server did not start"):
        resolve_device("R58M123", backend="u2")


def test_unattached_serial_is_device_not_found(fake_adb: StartFake) -> None:
    fake_adb({"R58M123": "device"})
    backends: tuple[Backend, ...] = ("auto", "adb", "u2")
    for backend in backends:
        with pytest.raises(DeviceNotFound, match="'ZZZ' is not attached") as err:
            resolve_device("ZZZ", backend=backend)
        assert err.value.hint and "adb devices" in err.value.hint


def test_u2_without_adb_server_is_offline_quickly(no_adb: int) -> None:
    t0 = time.monotonic()
    with pytest.raises(DeviceOffline, match=f"adb server not reachable at 127.0.0.1:{no_adb}"):
        U2Device("R58M123")
    assert time.monotonic() - t0 < 3


def test_list_devices_without_adb_lists_the_sim(no_adb: int) -> None:
    listing = list_devices()
    assert [d.kind for d in listing] == ["sim"] * len(listing)
    assert listing[0].serial == "sim"


def test_list_devices_with_adb(fake_adb: StartFake) -> None:
    fake_adb({"R58M123": "device", "old": "unauthorized"}, models={"R58M123": "SM_G973F"})
    listing = list_devices()
    adb = [d for d in listing if d.kind == "adb"]
    assert [(d.serial, d.state, d.model) for d in adb] == [
        ("R58M123", "device", "SM G973F"), ("old", "unauthorized", "")]
    assert "transport_id:1" in adb[0].detail
    assert any(d.serial == "sim" for d in listing)


def test_adb_status(fake_adb: StartFake, no_adb: int) -> None:
    down = adb_status()
    assert not down.server_reachable and down.server_version is None
    assert down.error and str(no_adb) in down.error
    fake_adb({}, version=41)
    up = adb_status()
    assert up.server_reachable and up.server_version == 41 and up.error is None


# -- where a task runs: a sim task stays on the sim unless --device names another device ----------

_PIXEL: dict[str, Any] = {"getprop ro.product.model": ["Pixel 7\n"], "getprop ro.build.version.sdk": ["34\n"],
                         "wm size": ["Physical size: 1080x2400\n"]}


def _task_kinds() -> dict[str, bool]:
    from artemis_cli.config.task import Task

    kinds: dict[str, dict[str, Any]] = {
        "device: sim": {"device": "sim"}, "a sim: block": {"sim": {"seed": 3}},
        "device: any with a sim: block": {"device": "any", "sim": {"seed": 3}}, "neither": {}}
    return {name: Task.model_validate({"id": "t", "goal": "g", **extra}).written_for_sim
            for name, extra in kinds.items()}


def test_which_tasks_are_written_for_the_sim() -> None:
    assert _task_kinds() == {"device: sim": True, "a sim: block": True,
                             "device: any with a sim: block": False, "neither": False}


@needs_sim
def test_a_sim_task_ignores_android_serial_and_says_so(fake_adb: StartFake, monkeypatch: pytest.MonkeyPatch) -> None:
    fake_adb({"R58M123": "device"}, shell=FakeShell(rules=dict(_PIXEL)))
    monkeypatch.setenv("ANDROID_SERIAL", "R58M123")
    notices: list[str] = []
    device = resolve_device(None, backend="adb", sim_task="contacts-delete-contact", notice=notices.append)
    assert device.info().kind == "sim"
    assert notices == ["task contacts-delete-contact is written for the simulated phone: running on sim "
                       "(ANDROID_SERIAL=R58M123 ignored; pass --device R58M123 to run there)"]


@needs_sim
def test_a_sim_task_ignores_the_one_attached_device(fake_adb: StartFake) -> None:
    shell = FakeShell(rules=dict(_PIXEL))
    fake_adb({"R58M123": "device"}, shell=shell)
    notices: list[str] = []
    device = resolve_device(None, backend="adb", sim_task="demo", sim_world="default", notice=notices.append)
    assert device.info().kind == "sim" and notices == []
    assert shell.commands == []  # the phone was never spoken to


def test_device_moves_a_sim_task_explicitly(fake_adb: StartFake) -> None:
    fake_adb({"R58M123": "device"}, shell=FakeShell(rules=dict(_PIXEL)))
    notices: list[str] = []
    device = resolve_device("R58M123", backend="adb", sim_task="demo", notice=notices.append)
    assert isinstance(device, AdbDevice) and device.serial == "R58M123" and notices == []


def test_an_implicit_real_device_is_named(fake_adb: StartFake, monkeypatch: pytest.MonkeyPatch) -> None:
    fake_adb({"R58M123": "device"}, shell=FakeShell(rules=dict(_PIXEL)))
    notices: list[str] = []
    device = resolve_device(None, backend="adb", notice=notices.append)  # a --goal task: no sim_task
    assert isinstance(device, AdbDevice) and device.serial == "R58M123"
    assert notices == ["running on R58M123 (Pixel 7), the one attached device; pass --device to choose"]
    monkeypatch.setenv("ANDROID_SERIAL", "R58M123")
    notices.clear()
    resolve_device(None, backend="adb", notice=notices.append)
    assert notices == ["running on R58M123 (Pixel 7), from $ANDROID_SERIAL; pass --device to choose"]


@needs_sim
def test_resume_keeps_a_sim_session_on_the_sim(fake_adb: StartFake, monkeypatch: pytest.MonkeyPatch,
                                               tmp_path: Path, record_task: Callable[..., Any]) -> None:
    from artemis_cli.engine.db import DataEngine
    from artemis_cli.resume import resume_session

    shell = FakeShell(rules=dict(_PIXEL))
    fake_adb({"R58M123": "device"}, shell=shell)
    monkeypatch.setenv("ANDROID_SERIAL", "R58M123")
    with DataEngine.open(tmp_path / "data") as engine:
        sid = record_task(engine, "demo.yaml").session_id
        engine.update_session(sid, status="interrupted")  # as a Ctrl-C after the last step leaves it
        assert resume_session(sid, engine, real_time=False).success
        assert engine.events(sid, kind="fast_forward")  # continued on a simulated phone, fast-forwarded
    assert shell.commands == []  # the attached phone was never spoken to
