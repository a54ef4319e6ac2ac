"""`artemis run` over the wire: the same task through u2 and through adb (forced) records the same
steps as the in-process sim; killing the adbd mid-run and restarting it never duplicates an action."""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any

import pytest
from adbd_support import AdbServer, attach, free_port, needs_adb

from artemis_cli.config.profile import load_profile
from artemis_cli.config.task import Task, load_task
from artemis_cli.device.protocol import Device
from artemis_cli.device.select import resolve_device
from artemis_cli.engine.db import DataEngine
from artemis_cli.models.offline.scripted import ScriptedModel
from artemis_cli.models.registry import reference_script
from artemis_cli.runner import RunResult, run_task
from artemis_cli.sim.adbd import SimAdbd
from artemis_cli.sim.phone import SimPhone

pytestmark = needs_adb
TASKS = Path(__file__).resolve().parents[2] / "tasks"


def _phone(task: Task) -> SimPhone:
    assert task.sim is not None
    return SimPhone(world=task.sim.world, seed=task.sim.seed, popups=task.sim.popups)


def _run(task: Task, device: Device, data: Path, *, real_time: bool = False) -> tuple[RunResult, list[Any]]:
    engine = DataEngine.open(data)
    try:
        result = run_task(task, load_profile(task.profile), device, ScriptedModel(reference_script(task)),
                          engine, real_time=real_time)
        return result, engine.get_steps(result.session_id)
    finally:
        engine.close()


def _semantics(steps: list[Any]) -> list[tuple[Any, ...]]:
    return [(s.action_type, s.target_resource_id, s.target_text, s.target_class, s.x, s.y,
             s.action_args.get("text"), s.result_status) for s in steps]


@pytest.mark.parametrize("task_file", ["contacts-add.yaml", "settings-dark-theme.yaml"])
def test_u2_and_forced_adb_runs_match_the_in_process_run(
    task_file: str, adb_server: AdbServer, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("ANDROID_ADB_SERVER_PORT", str(adb_server.port))
    task = load_task(TASKS / task_file)
    local, local_steps = _run(task, _phone(task), tmp_path / "local")
    assert local.success, local.message
    for backend in ("u2", "adb"):
        monkeypatch.setenv("ARTEMIS_DEVICE_BACKEND", backend)
        phone = _phone(task)
        with SimAdbd(phone, port=free_port()) as adbd:
            attach(adb_server, adbd)
            dev = resolve_device(adbd.serial)
            assert dev.info().kind == backend
            try:
                result, steps = _run(task, dev, tmp_path / backend)
            finally:
                dev.close()
                adb_server.run("disconnect", adbd.serial, check=False)
        assert result.success, (backend, result.message)
        assert _semantics(steps) == _semantics(local_steps), backend
        assert [s.foreground_app for s in steps] == [s.foreground_app for s in local_steps]


def _kill_and_restart(adbd: SimAdbd, phone: SimPhone, after_actions: int, away_s: float | None,
                      box: dict[str, SimAdbd]) -> threading.Thread:
    def run() -> None:
        while phone.actions < after_actions:
            time.sleep(0.005)
        adbd.stop()  # the sim adbd dies mid-run
        if away_s is not None:
            time.sleep(away_s)
            box["new"] = SimAdbd(phone, port=adbd.port).start()  # same phone, same port

    t = threading.Thread(target=run, daemon=True)
    t.start()
    return t


def _no_duplicates(task: Task, steps: list[Any], phone: SimPhone) -> None:
    kinds = [(s.action_type, s.target_resource_id, s.target_text, s.action_args.get("text")) for s in steps]
    assert len(kinds) == len(set(kinds)), kinds  # every reference action differs: a repeat is a re-send
    fields = phone.apps["com.android.contacts"].ui_state.fields
    assert all(v in ("", "Priya", "Sharma", "+1 555-0199", "priya.sharma@example.com") for v in fields.values()), fields


def test_adbd_killed_mid_run_and_restarted_the_run_continues_without_duplicates(
    adb_server: AdbServer, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("ANDROID_ADB_SERVER_PORT", str(adb_server.port))
    monkeypatch.setenv("ARTEMIS_DEVICE_BACKEND", "adb")
    task = load_task(TASKS / "contacts-add.yaml")
    phone = _phone(task)
    box: dict[str, SimAdbd] = {}
    adbd = SimAdbd(phone, port=free_port()).start()
    attach(adb_server, adbd)
    try:
        dev = resolve_device(adbd.serial)
        t = _kill_and_restart(adbd, phone, after_actions=4, away_s=1.0, box=box)
        result, steps = _run(task, dev, tmp_path / "d", real_time=True)
        t.join(10)
    finally:
        adb_server.run("disconnect", adbd.serial, check=False)
        if "new" in box:
            box["new"].stop()
    assert result.exit_code in (0, 3), result.message
    _no_duplicates(task, steps, phone)
    if result.exit_code == 0:
        assert result.success and len(steps) == len(task.reference)
    else:
        assert result.stop_reason == "device_offline"


def test_adbd_that_stays_away_stops_the_run_with_exit_3(
    adb_server: AdbServer, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("ANDROID_ADB_SERVER_PORT", str(adb_server.port))
    monkeypatch.setenv("ARTEMIS_DEVICE_BACKEND", "adb")
    task = load_task(TASKS / "contacts-add.yaml")
    phone = _phone(task)
    adbd = SimAdbd(phone, port=free_port()).start()
    attach(adb_server, adbd)
    try:
        dev = resolve_device(adbd.serial)
        t = _kill_and_restart(adbd, phone, after_actions=3, away_s=None, box={})
        result, steps = _run(task, dev, tmp_path / "d")
        t.join(10)
    finally:
        adb_server.run("disconnect", adbd.serial, check=False)
    assert result.exit_code == 3 and result.stop_reason == "device_offline", result
    assert 0 < len(steps) < len(task.reference)
    _no_duplicates(task, steps, phone)
