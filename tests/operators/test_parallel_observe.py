"""observe() overlaps screenshot, hierarchy and current app on devices that allow it, keeping its
retries, reconnect budget, rotation rule and problem order; per-read timings are recorded."""

from __future__ import annotations

import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from artemis_cli.device.adb import AdbDevice
from artemis_cli.device.u2 import U2Device
from artemis_cli.errors import DeviceOffline, HierarchyError, ScreenshotError
from artemis_cli.operators.observe import observe
from artemis_cli.perception.hierarchy import parse_hierarchy
from artemis_cli.sim.phone import SimPhone

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "adbd"))
from adbd_support import SimDevice, adb_server, needs_adb, sim_device

__all__ = ["adb_server", "sim_device"]  # fixtures used below

SCREEN = (1080, 2400)


def nodes(obs: Any) -> list[tuple[str, ...]]:
    """The screen's nodes, windows in any order (the sim, like a phone, may list them differently)."""
    return sorted((n.class_name, n.resource_id, n.text, str(n.bounds)) for n in obs.tree.nodes)


class SlowPhone:
    """A sim phone whose reads each take ``delay`` seconds of device time (outside the lock that
    keeps the phone single-threaded) and may fail a few times first; reads may overlap."""

    concurrent_reads = True

    def __init__(self, phone: SimPhone, delay: float = 0.0, fail: dict[str, list[Exception]] | None = None) -> None:
        self.phone = phone
        self.delay = delay
        self.fail = fail or {}
        self.lock = threading.Lock()
        self.active = 0
        self.max_active = 0

    def _read(self, name: str) -> Any:
        with self.lock:
            self.active += 1
            self.max_active = max(self.max_active, self.active)
        try:
            time.sleep(self.delay)
            with self.lock:
                queue = self.fail.get(name)
                if queue:
                    raise queue.pop(0)
                return getattr(self.phone, name)()
        finally:
            with self.lock:
                self.active -= 1

    def screenshot(self) -> bytes:
        return self._read("screenshot")  # type: ignore[no-any-return]

    def hierarchy(self) -> str:
        return self._read("hierarchy")  # type: ignore[no-any-return]

    def current_app(self) -> str | None:
        return self._read("current_app")  # type: ignore[no-any-return]


def test_reads_overlap_and_cost_about_the_slowest() -> None:
    delay = 0.4
    dev = SlowPhone(SimPhone(popups=False), delay=delay)
    t0 = time.perf_counter()
    obs = observe(dev, SCREEN, "pixels", sleep=lambda s: None)  # type: ignore[arg-type]
    elapsed = time.perf_counter() - t0
    assert obs.concurrent and dev.max_active == 3
    assert elapsed < 3 * delay  # less than the sum of the three reads
    assert set(obs.timings) == {"screenshot", "hierarchy", "current_app", "total"}
    assert all(obs.timings[k] >= delay * 1000 for k in ("screenshot", "hierarchy", "current_app"))
    assert obs.foreground == dev.phone.current_package() and obs.elements


def test_the_same_observation_either_way() -> None:
    phone = SimPhone(popups=False)
    seq = observe(phone, SCREEN, "pixels", sleep=lambda s: None)
    par = observe(SlowPhone(phone), SCREEN, "pixels", sleep=lambda s: None)  # type: ignore[arg-type]
    assert not seq.concurrent and par.concurrent
    assert (seq.png, seq.dhash, seq.foreground) == (par.png, par.dhash, par.foreground)
    assert nodes(seq) == nodes(par)
    assert set(seq.timings) == {"screenshot", "hierarchy", "current_app", "logs", "total"}  # the sim has log_events
    assert seq.capture_path is None and seq.capture_lossless  # the in-process sim does not say


def test_retries_keep_working_and_problems_come_in_read_order() -> None:
    dev = SlowPhone(SimPhone(popups=False), delay=0.01, fail={
        "hierarchy": [HierarchyError("idle"), HierarchyError("idle")],
        "screenshot": [ScreenshotError("capturing failed")],
    })
    seen: list[str] = []
    obs = observe(dev, SCREEN, "pixels", sleep=lambda s: None, on_problem=lambda w, d: seen.append(w))  # type: ignore[arg-type]
    assert seen == ["screenshot", "hierarchy", "hierarchy"]
    assert obs.elements and not obs.problems


def test_a_hierarchy_that_never_comes_leaves_the_screenshot_current() -> None:
    dev = SlowPhone(SimPhone(popups=False), fail={"hierarchy": [HierarchyError("idle")] * 10})
    obs = observe(dev, SCREEN, "pixels", retries=2, sleep=lambda s: None)  # type: ignore[arg-type]
    assert obs.problems and "only the screenshot is current" in obs.problems[0] and not obs.elements


def test_the_reconnect_budget_is_shared_by_the_overlapping_reads() -> None:
    dev = SlowPhone(SimPhone(popups=False), delay=0.01, fail={
        "screenshot": [DeviceOffline("gone")] * 20, "hierarchy": [DeviceOffline("gone")] * 20,
    })
    sleeps: list[float] = []
    with pytest.raises(DeviceOffline):
        observe(dev, SCREEN, "pixels", offline_retries=4, sleep=sleeps.append)  # type: ignore[arg-type]
    assert len(sleeps) == 4  # one backoff per failure the budget allowed, whichever read it was


def test_rotation_rule_holds_when_reads_overlap() -> None:
    dev = SlowPhone(SimPhone(width=2400, height=1080, popups=False))
    obs = observe(dev, SCREEN, "pixels", sleep=lambda s: None)  # type: ignore[arg-type]
    assert (obs.space.width, obs.space.height) == (2400, 1080)
    assert obs.elements and all(e.node.bounds.top < 1080 and e.node.bounds.left < 2400 for e in obs.elements)


@needs_adb
def test_adb_and_u2_observe_concurrently_through_the_sim_adbd(sim_device: SimDevice) -> None:
    adb = AdbDevice(sim_device.serial, port=sim_device.adb.port, sleep=lambda s: None)
    obs = observe(adb, SCREEN, "pixels", sleep=lambda s: None)
    assert obs.concurrent and obs.capture_path == "png" and obs.png == sim_device.phone.render_png()
    # adb's dump is the active window (the launcher); the bars come from `dumpsys window`, in the
    # same read as the app in front (perception/wm_windows.py)
    shell = parse_hierarchy(sim_device.phone.dump_xml())
    assert sorted((n.class_name, n.resource_id, n.text, str(n.bounds)) for n in obs.tree.nodes
                  if not n.synthetic) == sorted((n.class_name, n.resource_id, n.text, str(n.bounds))
                                                for n in shell.nodes)
    assert [(n.window_title, str(n.bounds)) for n in obs.tree.nodes if n.synthetic] == [
        ("StatusBar", "[0,0][1080,96]"), ("NavigationBar0", "[0,2274][1080,2400]")]
    assert "current_app" in obs.timings and "dumpsys window" not in str(obs.problems)
    assert obs.foreground == sim_device.phone.current_package()
    u2 = U2Device(sim_device.serial, port=sim_device.adb.port)
    try:
        obs2 = observe(u2, SCREEN, "pixels", sleep=lambda s: None)
        assert obs2.concurrent and obs2.capture_path == "u2-jpeg" and not obs2.capture_lossless
        assert obs2.elements and obs2.foreground == sim_device.phone.current_package()
        assert set(obs2.timings) == {"screenshot", "hierarchy", "current_app", "logs", "total"}  # u2 reads its log too
    finally:
        u2.close()
