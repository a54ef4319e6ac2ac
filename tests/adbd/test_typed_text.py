"""Typed text lands or the step says it did not, over the wire (issue 12): the adb and u2 backends
against the sim's adbd through Debian's real adb server.

* clearing a field is one device operation (adb: move-to-end plus deletes in one ``input
  keyevent``; u2: its own clear), never one round trip per character;
* under a pop-up storm no type_text step whose text did not land is recorded ``ok``;
* ``artemis run tasks/chore-new-phone-setup.yaml --model scripted`` through ``artemis sim serve``
  (its defaults: seed 0, pop-ups on) exits 0 with ``--backend u2`` and ``--backend adb``.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from adbd_support import AdbServer, attach, free_port, needs_adb
from outcome_support import storm_task

from artemis_cli.config.profile import load_profile
from artemis_cli.device.adb import AdbDevice
from artemis_cli.device.protocol import Device
from artemis_cli.device.select import resolve_device
from artemis_cli.device.u2 import U2Device
from artemis_cli.engine.db import DataEngine
from artemis_cli.models.offline.scripted import ScriptedModel
from artemis_cli.models.registry import reference_script
from artemis_cli.perception.hierarchy import parse_hierarchy
from artemis_cli.runner import run_task
from artemis_cli.sim.adbd import SimAdbd
from artemis_cli.sim.phone import SimPhone

pytestmark = needs_adb
REPO = Path(__file__).resolve().parents[2]


@pytest.fixture
def served(adb_server: AdbServer, monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    monkeypatch.setenv("ANDROID_ADB_SERVER_HOST", "127.0.0.1")
    monkeypatch.setenv("ANDROID_ADB_SERVER_PORT", str(adb_server.port))
    started: list[SimAdbd] = []

    def serve(phone: SimPhone, adb_keyboard: bool = False) -> SimAdbd:
        adbd = SimAdbd(phone, port=free_port(), adb_keyboard=adb_keyboard).start()
        started.append(adbd)
        attach(adb_server, adbd)
        return adbd

    yield serve
    for adbd in started:
        adb_server.run("disconnect", adbd.serial, check=False)
        adbd.stop()


def _device(kind: str, adbd: SimAdbd, port: int) -> Device:
    if kind == "adb":
        return AdbDevice(adbd.serial, port=port, sleep=lambda s: None)
    return U2Device(adbd.serial)


@pytest.mark.parametrize(("kind", "ime"), [("adb", False), ("u2", False), ("u2", True)])
def test_clearing_a_field_is_one_device_operation(served: Any, adb_server: AdbServer, kind: str, ime: bool) -> None:
    phone = SimPhone(popups=False)
    adbd = served(phone, adb_keyboard=ime)
    dev = _device(kind, adbd, adb_server.port)
    try:
        phone.launch("com.android.contacts")
        field = next(n for n in parse_hierarchy(phone.dump_xml()).nodes if n.resource_id.endswith("/search_field"))
        phone.tap(*field.bounds.center)
        phone.type_text("+1 555-0102")
        before = phone.actions
        dev.clear_text(len("+1 555-0102"))
        # one action on the phone: one `input keyevent 123 67 67 …` command (each command is one
        # action for the sim), or uiautomator2's single clear
        assert phone.actions - before == 1
        assert phone.apps["com.android.contacts"].ui_state.fields["search"] == ""
        assert not any("keyevent" in i for i in phone.ignored), "the sim knows MOVE_END"
        dev.type_text("+1 555-0177")
        assert phone.apps["com.android.contacts"].ui_state.fields["search"] == "+1 555-0177"
    finally:
        dev.close()


def _check_typed_steps(engine: DataEngine, session_id: str) -> list[int]:
    """Every type_text step: ``ok`` exactly when its recorded post dump shows the typed text in
    the field (alone after a clear, at the end after an append); the numbers of the steps whose
    text did not land."""
    lost = []
    for s in engine.get_steps(session_id):
        if s.action_type != "type_text":
            continue
        xml = engine.blob(s.post_ui_xml or "").decode("utf-8")
        shows = next((n.text for n in parse_hierarchy(xml).nodes if n.resource_id == s.target_resource_id), None)
        want = s.action_args["text"]
        # the typed text ends what the field shows (an append keeps the text before it)
        if shows is not None and shows.endswith(want) and (shows == want or not s.action_args.get("clear")):
            assert s.result_status == "ok", (s.number, s.result_detail)
        else:
            lost.append(s.number)
            assert s.result_status == "failed", (s.number, want, shows, s.result_status)
        assert s.outcome is not None and s.outcome["status"] == s.result_status
    return lost


@pytest.mark.parametrize("backend", ["adb", "u2"])
def test_a_popup_storm_never_leaves_a_lost_text_recorded_ok(
    served: Any, monkeypatch: pytest.MonkeyPatch, tmp_path: Path, backend: str
) -> None:
    monkeypatch.setenv("ARTEMIS_DEVICE_BACKEND", backend)
    task = storm_task(seed=21)
    adbd = served(SimPhone(seed=21, popups=True, faults="popup_storm"))
    dev = resolve_device(adbd.serial)
    assert dev.info().kind == backend
    engine = DataEngine.open(tmp_path / "data")
    try:
        result = run_task(task, load_profile(task.profile), dev, ScriptedModel(reference_script(task)), engine,
                          real_time=False)
        lost = _check_typed_steps(engine, result.session_id)
    finally:
        engine.close()
        dev.close()
    assert lost, "the storm swallowed no text: nothing was tested"
    assert result.success, result.message  # the scripted model typed the lost text again


@pytest.fixture
def sim_serve(adb_server: AdbServer, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """`artemis sim serve` with its defaults (seed 0, the promotion pop-up on), `adb connect`-ed."""
    monkeypatch.setenv("ANDROID_ADB_SERVER_HOST", "127.0.0.1")
    monkeypatch.setenv("ANDROID_ADB_SERVER_PORT", str(adb_server.port))
    port = free_port()
    proc = subprocess.Popen([sys.executable, "-m", "artemis_cli", "sim", "serve", "--port", str(port)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env={**os.environ, "COLUMNS": "200"})
    serial = f"127.0.0.1:{port}"
    try:
        assert proc.stdout is not None
        assert serial in proc.stdout.readline().decode()
        out = adb_server.text("connect", serial)
        assert "connected to" in out, out
        adb_server.run("wait-for-device", serial=serial, timeout=10)
        yield serial
    finally:
        adb_server.run("disconnect", serial, check=False)
        proc.send_signal(signal.SIGINT)
        try:
            proc.communicate(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()


@pytest.mark.slow
@pytest.mark.parametrize("backend", ["u2", "adb"])
def test_the_long_chore_over_sim_serve_exits_0(sim_serve: str, data_home: Path, backend: str) -> None:
    run = subprocess.run(
        [sys.executable, "-m", "artemis_cli", "run", "tasks/chore-new-phone-setup.yaml", "--model", "scripted",
         "--device", sim_serve, "--backend", backend, "--json"],
        cwd=REPO, capture_output=True, text=True, timeout=600,
    )
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    result = json.loads(run.stdout)
    with DataEngine.open(data_home) as engine:
        steps = engine.get_steps(result["session_id"])
        _check_typed_steps(engine, result["session_id"])
    # Ben's new number replaced the old one in one clear (the step 46: it became "+")
    ben = [s for s in steps if s.action_type == "type_text" and s.action_args.get("text") == "+1 555-0177"]
    assert ben and ben[-1].result_status == "ok"
    assert (ben[-1].outcome or {}).get("summary") == 'the field shows "+1 555-0177"'
