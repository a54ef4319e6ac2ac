"""Artemis sees crashes over the real wire: the adb backend (Debian's adb server, adbutils, the
sim's adbd) reads each observation's new logcat errors in one shell call beside its other reads,
and ``artemis run --backend adb`` on a served sim with crash faults records ``app_crashed``."""

from __future__ import annotations

import json
from pathlib import Path

from adbd_support import AdbServer, SimDevice, needs_adb, serve_cli, stop_cli
from typer.testing import CliRunner

from artemis_cli.cli.app import app
from artemis_cli.device.adb import AdbDevice
from artemis_cli.operators.observe import observe

pytestmark = needs_adb
SETTINGS = "com.android.settings"
NOTES = "com.artemis.notes"


def test_the_adb_backend_reads_only_new_crashes_and_anrs(sim_device: SimDevice) -> None:
    phone = sim_device.phone
    phone.launch(SETTINGS)
    phone.errors.crash(SETTINGS)  # before the session: never reported
    dev = AdbDevice(sim_device.serial, port=sim_device.adb.port, screencap_mode="png")
    first = observe(dev, (1080, 2400), "pixels", sleep=lambda _: None)
    assert first.concurrent and "logs" in first.timings
    assert first.logs is not None and first.logs.baseline and not first.logs.faults
    phone.launch(NOTES)
    phone.errors.anr(NOTES)
    phone.launch(SETTINGS)
    phone.errors.crash(SETTINGS)
    events = dev.log_events()
    assert [(f.kind, f.package) for f in events.faults] == [("anr", NOTES), ("crash", SETTINGS)]
    crash = events.faults[1]
    assert crash.pid is not None and crash.pid > 0
    assert crash.detail.startswith("java.lang.") and crash.frames
    assert not dev.log_events().faults  # read once


def test_artemis_run_on_a_served_sim_with_crash_faults_records_app_crashed(adb_server: AdbServer,
                                                                          tmp_path: Path) -> None:
    task = tmp_path / "launch.yaml"
    task.write_text("id: crash-on-launch\ngoal: Open Settings\ndevice: sim\nmax_steps: 3\n"
                    "reference:\n  - launch: com.android.settings\n  - finish: {success: true}\n")
    served = serve_cli(adb_server, "--no-popups", "--faults", "crash:1.0")
    try:
        res = CliRunner().invoke(app, ["run", str(task), "--model", "scripted", "--backend", "adb", "--device",
                                       served.serial, "--no-live", "--json", "--data-dir", str(tmp_path / "d")],
                                 env={"ANDROID_ADB_SERVER_PORT": str(adb_server.port)})
        assert res.exit_code in (0, 1), res.output
        sid = json.loads(res.stdout)["session_id"]
        shown = CliRunner().invoke(app, ["sessions", "show", sid, "--json", "--data-dir", str(tmp_path / "d")])
        steps = json.loads(shown.stdout)["steps"]
    finally:
        stop_cli(served)
    first = steps[0]
    assert first["result"]["status"] == "app_crashed", first["result"]
    assert first["result"]["detail"].startswith(f'{SETTINGS} crashed: "java.lang.')
    assert first["outcome"]["fault"]["package"] == SETTINGS
