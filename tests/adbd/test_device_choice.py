"""Where `artemis run` runs (issue 23 item 1): a served simulated phone attached to a private adb
server and named by $ANDROID_SERIAL does not attract a task written for the simulated phone; the
run goes to the built-in sim and says so, and the served phone sees no input. `--device SERIAL`
still runs there. The real CLI (CliRunner), the real adb server, the sim's adbd."""

from __future__ import annotations

from pathlib import Path

import pytest
from adbd_support import SimDevice, needs_adb
from typer.testing import CliRunner

from artemis_cli.cli.app import app
from artemis_cli.engine.db import DataEngine

pytestmark = needs_adb
TASK = Path(__file__).resolve().parents[2] / "tasks" / "contacts-delete.yaml"
NINA = "content query --uri content://com.android.contacts/contacts --where \"display_name='Nina Petrova'\""


def _run(data: Path, *args: str) -> tuple[int, str, str, str]:
    res = CliRunner().invoke(app, ["run", str(TASK), "--model", "scripted", "--no-live", "--data-dir", str(data),
                                   *args])
    with DataEngine.open_for_reading(data) as engine:
        sessions = engine.list_sessions()
        serial = sessions[0].device_serial if sessions else ""
    return res.exit_code, res.stdout, res.stderr, serial or ""


@pytest.mark.parametrize("android_serial", [True, False], ids=["ANDROID_SERIAL", "the one attached device"])
def test_a_sim_task_stays_on_the_sim_whatever_adb_has_attached(
        android_serial: bool, sim_device: SimDevice, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    if android_serial:
        monkeypatch.setenv("ANDROID_SERIAL", sim_device.serial)
    code, stdout, stderr, serial = _run(tmp_path / "data")
    assert code == 0, stdout + stderr
    assert serial == "sim"
    ignored = (f"task contacts-delete-contact is written for the simulated phone: running on sim "
               f"(ANDROID_SERIAL={sim_device.serial} ignored; pass --device {sim_device.serial} to run there)")
    assert (ignored in stderr) is android_serial
    assert sim_device.phone.actions == 0  # the served phone received no input
    assert "display_name=Nina Petrova" in sim_device.shell(NINA)


def test_device_serial_still_runs_a_sim_task_on_that_device(sim_device: SimDevice, tmp_path: Path) -> None:
    code, stdout, stderr, serial = _run(tmp_path / "data", "--device", sim_device.serial, "--backend", "adb")
    assert code == 0 and serial == sim_device.serial, stdout + stderr
    assert "written for the simulated phone" not in stderr
    assert sim_device.phone.actions > 0
    assert "No result found." in sim_device.shell(NINA)  # it deleted Nina there
