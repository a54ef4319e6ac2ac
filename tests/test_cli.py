"""The command line as a user meets it: real processes, real data dir, the simulated phone."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent


def artemis(*args: str, cwd: Path = REPO) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "artemis_cli", *args], cwd=cwd, capture_output=True,
                          text=True, timeout=300)


def test_demo_runs_offline_and_says_so(data_home: Path) -> None:
    proc = artemis("run", "tasks/demo.yaml", "--no-live")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "heuristic" in proc.stderr and "not an LLM" in proc.stderr
    assert "succeeded" in proc.stdout and "✓" in proc.stdout


def test_run_json_and_sessions_show_json(data_home: Path) -> None:
    proc = artemis("run", "tasks/demo.yaml", "--model", "scripted", "--json")
    assert proc.returncode == 0, proc.stderr
    result = json.loads(proc.stdout)
    assert result["success"] is True and result["exit_code"] == 0
    assert result["offline_model"] is True and "offline" in result["model_label"]
    assert [c["passed"] for c in result["checks"]] == [True]

    shown = artemis("sessions", "show", result["session_id"], "--json")
    assert shown.returncode == 0, shown.stderr
    data = json.loads(shown.stdout)
    assert data["model_label"] == result["model_label"]
    steps = data["steps"]
    assert [s["number"] for s in steps] == list(range(1, result["steps"] + 1))
    taps = [s for s in steps if s["action"]["type"] == "tap"]
    assert taps
    for s in taps:
        assert isinstance(s["action"]["x"], int) and isinstance(s["action"]["y"], int)
        assert s["label_source"] in ("index", "hit_test")
        assert {"text", "resource_id", "class_name", "bounds"} <= set(s["target"])
    for s in steps:
        for key in ("pre_screenshot", "post_screenshot", "ui_xml"):
            assert s[key]["exists"] is True and Path(s[key]["path"]).is_file()
        assert len(s["pre_dhash"]) == 16 and len(s["post_dhash"]) == 16
        assert s["foreground_app"]

    listed = artemis("sessions", "list", "--json")
    assert [row["id"] for row in json.loads(listed.stdout)] == [result["session_id"]]


def test_failed_task_exits_1(data_home: Path) -> None:
    proc = artemis("run", "tasks/demo.yaml", "--max-steps", "1", "--json")
    assert proc.returncode == 1, proc.stderr
    assert json.loads(proc.stdout)["status"] == "failed"


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (("run", "tasks/does-not-exist.yaml"), "does-not-exist.yaml"),
        (("run",), "give a task file or --goal"),
        (("run", "tasks/demo.yaml", "--model", "gpt-17"), "unknown model"),
        (("run", "tasks/demo.yaml", "--model", "gemini"), "GEMINI_API_KEY"),
        (("sessions", "show", "nope"), "no Artemis data in"),  # before the first run: nothing to read
    ],
)
def test_usage_errors_exit_2_with_one_line(args: tuple[str, ...], needle: str, data_home: Path) -> None:
    proc = artemis(*args)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert needle in proc.stderr
    assert "Traceback" not in proc.stderr


def test_goal_run_on_sim(data_home: Path) -> None:
    proc = artemis("run", "--goal", "Turn on Bluetooth", "--device", "sim", "--no-live", "--json")
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["answer"].lower().startswith("bluetooth")


def test_unreachable_device_exits_3(data_home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANDROID_ADB_SERVER_PORT", "1")  # nothing listens there
    proc = artemis("run", "tasks/demo.yaml", "--device", "emulator-5554")
    assert proc.returncode == 3, proc.stdout + proc.stderr
    assert "Traceback" not in proc.stderr


def test_devices_lists_sim_and_doctor_reports_plainly(data_home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANDROID_ADB_SERVER_PORT", "1")
    devices = artemis("devices", "--json")
    assert devices.returncode == 0
    assert "sim" in [d["serial"] for d in json.loads(devices.stdout)]
    doctor = artemis("doctor")
    assert doctor.returncode == 0, doctor.stdout  # nothing asked for needs adb, a phone or a key
    assert "not needed for the simulated phone" in doctor.stdout
    assert "no GEMINI_API_KEY" in doctor.stdout


def test_lines_typed_on_stdin_become_user_instructions(data_home: Path) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "artemis_cli", "run", "tasks/demo.yaml", "--model", "scripted", "--json"],
        cwd=REPO, input="Please keep Bluetooth as it is\n", capture_output=True, text=True, timeout=300,
    )
    assert proc.returncode == 0, proc.stderr
    session = json.loads(proc.stdout)["session_id"]
    shown = json.loads(artemis("sessions", "show", session, "--json").stdout)
    given = [s["user_instruction"] for s in shown["steps"] if s["user_instruction"]]
    assert given == ["Please keep Bluetooth as it is"]
