"""Logs and processes over the wire: Debian's ``adb logcat`` / ``adb shell pidof`` and uiautomator2's
app_wait / app_start(wait=True) / app_list_running / session against a served sim."""

from __future__ import annotations

import re
import time

import adbutils
import uiautomator2 as u2
from adbd_support import AdbServer, SimDevice, needs_adb, serve_cli, stop_cli

pytestmark = needs_adb
SETTINGS = "com.android.settings"


def test_adb_logcat_dump_and_crash_buffer(sim_device: SimDevice) -> None:
    adb, serial = sim_device.adb, sim_device.serial
    sim_device.phone.launch(SETTINGS)
    out = adb.text("logcat", "-d", serial=serial)
    lines = out.splitlines()
    assert lines[0] == "--------- beginning of main", lines[:3]
    assert re.search(r"^\d\d-\d\d \d\d:\d\d:\d\d\.\d{3} +\d+ +\d+ I ActivityManager: Start proc \d+:"
                     rf"{SETTINGS}/1000 for top-activity", out, re.M)
    assert adb.text("logcat", "-d", "-b", "crash", serial=serial) == ""
    sim_device.phone.errors.crash(SETTINGS)
    crash = adb.text("logcat", "-d", "-b", "crash", serial=serial).splitlines()
    assert crash[0] == "--------- beginning of crash"
    assert crash[1].endswith(" E AndroidRuntime: FATAL EXCEPTION: main")
    assert re.search(rf"Process: {SETTINGS}, PID: \d+$", crash[2])
    epoch = adb.text("logcat", "-d", "-v", "epoch", "-t", "2", serial=serial).splitlines()
    assert len(epoch) >= 2 and re.match(r"^\d{10}\.\d{3} ", epoch[-1])
    adb.run("logcat", "-c", serial=serial)
    assert adb.text("logcat", "-d", serial=serial) == ""


def test_adb_shell_pidof_answers_as_a_phone_does(sim_device: SimDevice) -> None:
    adb, serial = sim_device.adb, sim_device.serial
    res = adb.run("shell", "pidof", SETTINGS, serial=serial, check=False)
    assert (res.returncode, res.stdout) == (1, b"")
    adb.run("shell", "am", "start", "-n", f"{SETTINGS}/.Settings", serial=serial)
    res = adb.run("shell", "pidof", SETTINGS, serial=serial)
    assert re.fullmatch(rb"\d{4,5}\n", res.stdout), res.stdout
    assert res.stdout.strip().decode() in adb.text("shell", "ps", "-A", serial=serial)


def test_uiautomator2_app_wait_app_start_and_running_list(sim_device: SimDevice) -> None:
    d = u2.connect(adbutils.AdbClient(port=sim_device.adb.port).device(sim_device.serial))
    t0 = time.monotonic()
    d.app_start(SETTINGS, wait=True)  # monkey, then app_wait: must not block
    assert time.monotonic() - t0 < 10
    pid = d.app_wait(SETTINGS, timeout=5)
    assert pid == int(sim_device.shell(f"pidof {SETTINGS}"))
    running = d.app_list_running()
    assert SETTINGS in running and "com.android.launcher3" in running
    assert "com.android.contacts" not in running
    d.app_stop(SETTINGS)
    assert SETTINGS not in d.app_list_running()
    assert d.app_wait(SETTINGS, timeout=1.5) == 0
    t0 = time.monotonic()
    s = d.session(SETTINGS)
    assert time.monotonic() - t0 < 10 and s.running()
    assert s.pid != pid  # a new process


def test_served_locked_phone_with_permission_prompt_and_crash_fault(adb_server: AdbServer) -> None:
    served = serve_cli(adb_server, "--no-popups", "--locked", "--faults", "crash:1", "--seed", "4")
    try:
        run = served.sh
        assert b"mShowingLockscreen=true" in run("adb shell dumpsys window").stdout
        assert b"Swipe up to unlock" in run("adb shell uiautomator dump /dev/tty").stdout
        run("adb shell input swipe 540 2000 540 600")
        assert b"mShowingLockscreen=false" in run("adb shell dumpsys window").stdout
        # the Clock asks first (a served sim prompts, like a task's)
        run("adb shell monkey -p com.android.deskclock -c android.intent.category.LAUNCHER 1")
        dump = run("adb shell uiautomator dump /dev/tty").stdout.decode()
        # crash:1 — the launch was an action in the Clock: it crashed at once, under its dialog
        assert "Clock keeps stopping" in dump, dump[:400]
        crash = run("adb logcat -d -b crash").stdout.decode()
        assert "FATAL EXCEPTION: main" in crash and "Process: com.android.deskclock, PID: " in crash
        res = run("adb shell pidof com.android.deskclock")
        assert (res.returncode, res.stdout) == (1, b"")
    finally:
        stop_cli(served)


def test_adb_logcat_without_d_streams_new_lines_until_the_client_goes(sim_device: SimDevice) -> None:
    import os
    import subprocess
    import threading

    adb = sim_device.adb
    proc = subprocess.Popen(["adb", "-P", str(adb.port), "-s", sim_device.serial, "logcat", "-v", "brief"],
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                            env={**os.environ, "ANDROID_ADB_SERVER_PORT": str(adb.port)})
    seen: list[str] = []
    found = threading.Event()

    def reader() -> None:
        assert proc.stdout is not None
        for raw in proc.stdout:
            seen.append(raw.decode("utf-8", "replace"))
            if f"for top-activity {{{SETTINGS}/" in seen[-1]:
                found.set()

    t = threading.Thread(target=reader, daemon=True)
    t.start()
    try:
        deadline = time.monotonic() + 10
        while not any("System now ready" in s for s in seen) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert seen and seen[0].startswith("--------- beginning of main"), seen[:2]
        assert proc.poll() is None  # still streaming: a phone's logcat never ends by itself
        adb.run("shell", "am", "start", "-n", f"{SETTINGS}/.Settings", serial=sim_device.serial)
        assert found.wait(10), seen[-5:]  # the new Start proc line arrived on the open stream
    finally:
        proc.terminate()
        proc.wait(timeout=10)
    assert adb.text("shell", "echo", "ok", serial=sim_device.serial) == "ok\n"
