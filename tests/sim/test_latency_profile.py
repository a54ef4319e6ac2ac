"""Device-latency profiles (artemis_cli/sim/latency.py): parsing, call kinds, seeded charges."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from artemis_cli.config.task import SimOptions
from artemis_cli.device.select import resolve_device
from artemis_cli.errors import UsageError
from artemis_cli.sim.latency import (
    PIXEL,
    PROFILES,
    Latency,
    charge_device,
    parse_latency,
    rpc_kind,
    shell_kind,
)


def test_profiles_parse_and_bad_names_are_usage_errors() -> None:
    assert parse_latency(None) == "off"
    assert parse_latency("") == "off"
    assert parse_latency(" Pixel ") == "pixel"
    assert parse_latency("fast") == "fast"
    with pytest.raises(UsageError) as exc:
        parse_latency("slow")
    assert "unknown latency profile 'slow'" in str(exc.value)
    assert "off, pixel, fast" in (exc.value.hint or "")
    with pytest.raises(UsageError):
        Latency("warp")


def test_fast_is_a_tenth_of_pixel() -> None:
    assert PROFILES["fast"] == pytest.approx({k: v / 10 for k, v in PIXEL.items()})
    assert PIXEL["screencap_png"] > PIXEL["screencap_raw"] > PIXEL["u2_screenshot"]
    assert PIXEL["uiautomator_dump"] > PIXEL["u2_dump"]


def test_off_adds_nothing() -> None:
    slept: list[float] = []
    lat = Latency("off", sleep=slept.append)
    assert not lat.active
    for kind in ("screencap_png", "uiautomator_dump", "u2_dump", "shell"):
        assert lat.charge(kind) == 0.0
    assert lat.charge_shell("screencap -p") == 0.0
    assert lat.charge_rpc("dumpWindowHierarchy") == 0.0
    assert slept == []


def test_call_kinds() -> None:
    assert shell_kind("screencap -p") == "screencap_png"
    assert shell_kind("screencap") == "screencap_raw"
    assert shell_kind("screencap -p /sdcard/s.png") == "screencap_png"
    assert shell_kind("rm -f /sdcard/d.xml; uiautomator dump /sdcard/d.xml; echo X4EXIT:$?") == "uiautomator_dump"
    assert shell_kind("input tap 10 20") == "input"
    assert shell_kind("input keyevent 4") == "input"
    assert shell_kind("am start -n com.x/.Main") == "am_start"
    assert shell_kind("monkey -p com.x -c android.intent.category.LAUNCHER 1") == "am_start"
    assert shell_kind("dumpsys window | grep mCurrentFocus") == "dumpsys"
    assert shell_kind("settings get global wifi_on") == "shell"
    assert shell_kind("echo 'unbalanced") == "shell"
    assert rpc_kind("dumpWindowHierarchy") == "u2_dump"
    assert rpc_kind("takeScreenshot") == "u2_screenshot"
    assert rpc_kind("click") == "u2_input"
    assert rpc_kind("deviceInfo") == "u2_rpc"


def test_charges_are_seeded_log_normal_around_the_median() -> None:
    def draws(seed: int) -> list[float]:
        slept: list[float] = []
        lat = Latency("pixel", seed=seed, sleep=slept.append)
        for _ in range(200):
            lat.charge("screencap_png")
        return slept

    a = draws(3)
    assert a == draws(3)
    assert a != draws(4)
    median = sorted(a)[len(a) // 2]
    assert 0.9 * PIXEL["screencap_png"] < median < 1.1 * PIXEL["screencap_png"]
    assert all(x > 0 for x in a)


def test_task_sim_latency_field() -> None:
    assert SimOptions().latency == "off"
    assert SimOptions(latency=False).latency == "off"  # YAML reads a bare `off` as false
    assert SimOptions(latency="pixel").latency == "pixel"
    with pytest.raises(ValueError):
        SimOptions(latency="slow")


def test_in_process_sim_pays_the_profile() -> None:
    slept: list[float] = []
    dev = resolve_device("sim", sim_options={"popups": False, "latency": "off"})
    assert not hasattr(dev, "latency")
    dev = resolve_device("sim", sim_options={"popups": False, "latency": "fast"})
    assert dev.latency.profile == "fast"  # type: ignore[attr-defined]
    lat = Latency("fast", sleep=slept.append)
    charge_device(dev, lat)
    dev.hierarchy()
    dev.screenshot()
    assert len(slept) == 2
    assert lat.calls == {"u2_dump": 1, "u2_screenshot": 1}


def test_sim_serve_rejects_an_unknown_profile(tmp_path: Path) -> None:
    res = subprocess.run([sys.executable, "-m", "artemis_cli", "sim", "serve", "--port", "0", "--latency", "slow"],
                         capture_output=True, timeout=60, env={**os.environ, "ARTEMIS_HOME": str(tmp_path)})
    assert res.returncode == 2, res
    assert b"unknown latency profile 'slow'" in res.stdout + res.stderr
    assert b"Traceback" not in res.stderr
