"""The adb and u2 backends (artemis_cli.device) against the sim adbd through the real adb server:
dump failures (idle state, null root, stale file), screencap failures, text input."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

import pytest
from adbd_support import AdbServer, attach, free_port, needs_adb

from artemis_cli.device.adb import AdbDevice
from artemis_cli.device.select import resolve_device
from artemis_cli.device.u2 import U2Device
from artemis_cli.errors import HierarchyError, ScreenshotError, TextInputError
from artemis_cli.perception.hierarchy import parse_hierarchy
from artemis_cli.sim.adbd import SimAdbd
from artemis_cli.sim.hierarchy_xml import dump
from artemis_cli.sim.phone import SimPhone

pytestmark = needs_adb


@pytest.fixture
def served(adb_server: AdbServer, monkeypatch: pytest.MonkeyPatch) -> Iterator[object]:
    monkeypatch.setenv("ANDROID_ADB_SERVER_PORT", str(adb_server.port))
    started: list[SimAdbd] = []

    def serve(faults: str | None = None, seed: int = 0, adb_keyboard: bool = False) -> SimAdbd:
        adbd = SimAdbd(SimPhone(popups=False, faults=faults, seed=seed), port=free_port(),
                       adb_keyboard=adb_keyboard).start()
        started.append(adbd)
        attach(adb_server, adbd)
        return adbd

    yield serve
    for adbd in started:
        adb_server.run("disconnect", adbd.serial, check=False)
        adbd.stop()


def same_screen(u2_xml: str, phone: SimPhone) -> bool:
    """uiautomator2's dump shows what the phone shows: the same nodes, its windows in any order."""
    def nodes(xml: str) -> list[tuple[str, ...]]:
        return sorted((n.class_name, n.package, n.resource_id, n.text, n.content_desc, str(n.bounds))
                      for n in parse_hierarchy(xml).nodes)
    return nodes(u2_xml) == nodes(dump(phone.windows()))  # every window (the shell's dump: the active one)


def _adb(adbd: SimAdbd, port: int) -> AdbDevice:
    return AdbDevice(adbd.serial, port=port, sleep=lambda s: None)


def test_adb_backend_basics(served, adb_server: AdbServer) -> None:  # type: ignore[no-untyped-def]
    adbd = served()
    dev = _adb(adbd, adb_server.port)
    info = dev.info()
    assert (info.model, info.width, info.height, info.sdk) == ("Artemis Sim", 1080, 2400, 34)
    assert dev.hierarchy() == adbd.phone.dump_xml()
    assert dev.screenshot() == adbd.phone.render_png()
    dev.launch("com.android.contacts")
    assert dev.current_app() == "com.android.contacts"
    dev.key("home")
    assert dev.current_app() == "com.android.launcher3"


@pytest.mark.parametrize("fault", ["idle_state:0.6", "null_root:0.6", "stale_dump:0.6"])
def test_dump_failures_are_retried_and_never_read_a_stale_file(served, adb_server: AdbServer, fault: str) -> None:  # type: ignore[no-untyped-def]
    adbd = served(faults=fault, seed=3)
    dev = _adb(adbd, adb_server.port)
    old = adbd.phone.dump_xml()
    dev.tap(135, 476)  # the screen changes: a stale file would show the launcher
    results = []
    for _ in range(6):
        try:
            results.append(dev.hierarchy())
        except HierarchyError as e:
            results.append(e)
    good = [r for r in results if isinstance(r, str)]
    assert good and all(r == adbd.phone.dump_xml() != old for r in good)
    assert any(k in adbd.phone.faults.log for k in ("idle_state", "null_root", "stale_dump"))


def test_dump_failing_every_time_is_a_clear_hierarchy_error(served, adb_server: AdbServer) -> None:  # type: ignore[no-untyped-def]
    adbd = served(faults="idle_state:1")
    with pytest.raises(HierarchyError, match="could not get idle state"):
        _adb(adbd, adb_server.port).hierarchy()


def test_screencap_failures_retry_then_raise(served, adb_server: AdbServer) -> None:  # type: ignore[no-untyped-def]
    adbd = served(faults="screencap_fail:1")
    with pytest.raises(ScreenshotError, match="Capturing failed"):
        _adb(adbd, adb_server.port).screenshot()
    adbd2 = served(faults="screencap_fail:0.5", seed=1)
    dev = _adb(adbd2, adb_server.port)
    shots = []
    for _ in range(4):
        with contextlib.suppress(ScreenshotError):
            shots.append(dev.screenshot())
    assert shots and all(s.startswith(b"\x89PNG") for s in shots)


def _focus_search(adbd: SimAdbd) -> None:
    adbd.phone.do_launch("com.android.contacts")
    adbd.phone.do_tap(540, 344)


def _search_text(adbd: SimAdbd) -> str:
    return adbd.phone.apps["com.android.contacts"].ui_state.fields.get("search", "")


def test_ascii_text_is_escaped_exactly(served, adb_server: AdbServer) -> None:  # type: ignore[no-untyped-def]
    adbd = served()
    _focus_search(adbd)
    text = """it's 50%sale "now" & $HOME; `x` (a|b) *~"""
    _adb(adbd, adb_server.port).type_text(text)
    assert _search_text(adbd) == text


def test_non_ascii_text_without_an_ime_is_a_clear_error_and_types_nothing(served, adb_server: AdbServer) -> None:  # type: ignore[no-untyped-def]
    adbd = served()
    _focus_search(adbd)
    with pytest.raises(TextInputError, match="IME"):
        _adb(adbd, adb_server.port).type_text("héllo 你好")
    assert _search_text(adbd) == ""


def test_non_ascii_text_goes_through_adb_keyboard_when_installed(served, adb_server: AdbServer) -> None:  # type: ignore[no-untyped-def]
    adbd = served(adb_keyboard=True)
    _focus_search(adbd)
    _adb(adbd, adb_server.port).type_text("héllo 你好")
    assert _search_text(adbd) == "héllo 你好"


def test_u2_backend_and_auto_selection(served, adb_server: AdbServer, monkeypatch: pytest.MonkeyPatch) -> None:  # type: ignore[no-untyped-def]
    adbd = served()
    dev = resolve_device(adbd.serial)
    try:
        assert isinstance(dev, U2Device)  # auto: u2 when its server starts
        assert same_screen(dev.hierarchy(), adbd.phone)
        assert dev.screenshot().startswith(b"\x89PNG")
        _focus_search(adbd)
        dev.type_text("héllo 你好\n")
        assert _search_text(adbd) == "héllo 你好"
    finally:
        dev.close()
    monkeypatch.setenv("ARTEMIS_DEVICE_BACKEND", "adb")
    forced = resolve_device(adbd.serial)
    assert isinstance(forced, AdbDevice)


def test_u2_screenshot_failure_is_an_error_not_a_black_image(served, adb_server: AdbServer) -> None:  # type: ignore[no-untyped-def]
    adbd = served(faults="screencap_fail:1")
    dev = U2Device(adbd.serial, port=adb_server.port)
    try:
        with pytest.raises(ScreenshotError):
            dev.screenshot()
    finally:
        dev.close()


def test_auto_falls_back_to_adb_when_u2_cannot_start(served, adb_server: AdbServer) -> None:  # type: ignore[no-untyped-def]
    adbd = served()
    adbd.device.u2_can_start = False  # app_process fails: "UiAutomationService ... already registered!"
    dev = resolve_device(adbd.serial)
    assert isinstance(dev, AdbDevice) and dev.fallback_reason and "uiautomator2" in dev.fallback_reason
    assert dev.hierarchy() == adbd.phone.dump_xml()
