from __future__ import annotations

import pytest

from artemis_cli.errors import DeviceOffline, HierarchyError, ScreenshotError, UsageError
from artemis_cli.sim import SimPhone
from artemis_cli.sim.faults import parse_faults


def _trace(phone: SimPhone, n: int = 60) -> list[str]:
    out = []
    for _ in range(n):
        try:
            phone.hierarchy()
            phone.screenshot()
            out.append("ok")
        except (HierarchyError, ScreenshotError, DeviceOffline) as e:
            out.append(f"{type(e).__name__}:{e}")
    return out


@pytest.mark.parametrize("spec", ["idle_state:0.3", "null_root:0.3", "stale_dump:0.3", "screencap_fail:0.3",
                                  "drop:0.1", "idle_state:0.2,null_root:0.1,screencap_fail:0.1,drop:0.05"])
def test_each_fault_is_reproducible_and_happens(spec: str) -> None:
    a = _trace(SimPhone(seed=5, faults=spec))
    assert a == _trace(SimPhone(seed=5, faults=spec))
    assert any(x != "ok" for x in a) and "ok" in a
    assert a != _trace(SimPhone(seed=6, faults=spec))


def test_no_faults_by_default() -> None:
    assert set(_trace(SimPhone())) == {"ok"}


def test_drop_stays_offline_then_recovers() -> None:
    p = SimPhone(seed=1, faults="drop:1")
    with pytest.raises(DeviceOffline):
        p.current_app()
    offline = p.faults.offline_calls
    assert 1 <= offline <= 3
    for _ in range(offline):
        with pytest.raises(DeviceOffline):
            p.tap(1, 1)


def test_shell_level_dump_faults_and_stale_file() -> None:
    p = SimPhone(seed=0, faults="stale_dump:1")
    assert p.run("uiautomator dump").output == b"UI hierchary dumped to: /sdcard/window_dump.xml\n"
    assert p.run("cat /sdcard/window_dump.xml").exit_code == 1  # never written
    p2 = SimPhone(seed=0)
    p2.run("uiautomator dump")
    old = p2.read_file("/sdcard/window_dump.xml")
    p2.faults.spec = parse_faults("idle_state:1")
    p2.launch("com.android.settings")
    r = p2.run("uiautomator dump")
    assert r.output == b"ERROR: could not get idle state.\n" and r.exit_code != 0
    assert p2.read_file("/sdcard/window_dump.xml") == old  # the stale file from earlier stays
    p2.faults.spec = parse_faults("null_root:1")
    assert p2.run("uiautomator dump").output == b"ERROR: null root node returned by UiTestAutomationBridge.\n"
    p2.faults.spec = parse_faults("screencap_fail:1")
    assert p2.run("screencap -p").exit_code == 1


def test_latency_is_applied() -> None:
    import time

    p = SimPhone(faults="latency_ms:30")
    t = time.perf_counter()
    p.current_app()
    assert time.perf_counter() - t >= 0.028


@pytest.mark.parametrize("bad", ["nope:1", "idle_state:2", "idle_state:x", "latency_ms:-1", "popup_storm:7"])
def test_bad_fault_specs_are_usage_errors(bad: str) -> None:
    with pytest.raises(UsageError):
        SimPhone(faults=bad)
