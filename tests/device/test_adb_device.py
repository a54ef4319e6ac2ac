"""AdbDevice over the real adbutils client, talking to a fake adb server (no real adb, no phone)."""

from __future__ import annotations

import base64
import io
import shlex
import time
from collections.abc import Callable

import pytest
from fake_adb_server import FakeAdbServer, FakeShell, free_port
from PIL import Image
from test_text_input import device_runs

from artemis_cli.device.adb import AdbDevice, png_size
from artemis_cli.device.protocol import Device
from artemis_cli.errors import (
    DeviceNotFound,
    DeviceOffline,
    HierarchyError,
    ScreenshotError,
    ShellError,
    TextInputError,
    UsageError,
)

SERIAL = "emulator-5554"
DUMP = "/data/local/tmp/artemis_window_dump.xml"
XML = "<?xml version='1.0' encoding='UTF-8' standalone='yes' ?><hierarchy rotation=\"0\"><node text=\"\" /></hierarchy>"
StartFake = Callable[..., FakeAdbServer]


def png_bytes(w: int = 4, h: int = 8) -> bytes:
    buf = io.BytesIO()
    Image.new("RGB", (w, h), "white").save(buf, format="PNG")
    return buf.getvalue()


def device(server: FakeAdbServer, **kw: object) -> AdbDevice:
    sleeps: list[float] = []
    dev = AdbDevice(SERIAL, port=server.port, sleep=sleeps.append, **kw)  # type: ignore[arg-type]
    dev.sleeps = sleeps  # type: ignore[attr-defined]
    return dev


def dumper(shell: FakeShell, outputs: list[tuple[str, str | None]]) -> None:
    """`uiautomator dump` prints outputs[i][0] and writes outputs[i][1] (None: no file)."""

    def run(cmd: str) -> str:
        text, content = outputs.pop(0) if len(outputs) > 1 else outputs[0]
        if content is not None:
            shell.files[cmd.split()[-1]] = content.encode()
        return text

    shell.rules["uiautomator dump"] = run


# --- construction ------------------------------------------------------------------------------


def test_no_adb_server_is_device_offline_quickly() -> None:
    port = free_port()
    t0 = time.monotonic()
    with pytest.raises(DeviceOffline) as err:
        AdbDevice("R58M123", port=port)
    assert time.monotonic() - t0 < 3  # no `adb start-server`, no waiting
    assert "R58M123" in str(err.value) and f"127.0.0.1:{port}" in str(err.value)
    assert err.value.hint and "adb" in err.value.hint


def test_unknown_serial_is_device_not_found_listing_attached(fake_adb: StartFake) -> None:
    server = fake_adb({SERIAL: "device", "R58M123": "device"})
    with pytest.raises(DeviceNotFound) as err:
        AdbDevice("nope", port=server.port)
    assert "'nope'" in str(err.value) and "R58M123, emulator-5554" in str(err.value)
    assert err.value.exit_code == 3


def test_network_serial_is_adb_connected_first(fake_adb: StartFake) -> None:
    server = fake_adb({})
    with pytest.raises(DeviceNotFound, match=r"failed to connect to 10\.0\.0\.7:5555"):
        AdbDevice("10.0.0.7:5555", port=server.port)


@pytest.mark.parametrize(("state", "needle"), [("offline", "offline"), ("unauthorized", "unauthorized")])
def test_not_ready_device_is_offline(fake_adb: StartFake, state: str, needle: str) -> None:
    server = fake_adb({SERIAL: state})
    with pytest.raises(DeviceOffline, match=needle) as err:
        AdbDevice(SERIAL, port=server.port)
    assert err.value.hint


def test_satisfies_device_protocol(fake_adb: StartFake) -> None:
    assert isinstance(device(fake_adb({SERIAL: "device"})), Device)


# --- observations --------------------------------------------------------------------------------


def test_info_prefers_override_size_and_is_cached(fake_adb: StartFake) -> None:
    shell = FakeShell(rules={
        "getprop ro.product.model": ["Pixel 7\n"],
        "getprop ro.build.version.sdk": ["34\n"],
        "wm size": ["Physical size: 1080x2400\nOverride size: 720x1600\n"],
    })
    dev = device(fake_adb({SERIAL: "device"}, shell=shell))
    info = dev.info()
    assert (info.model, info.width, info.height, info.sdk, info.kind) == ("Pixel 7", 720, 1600, 34, "adb")
    n = len(shell.commands)
    assert dev.info() is info and len(shell.commands) == n


def test_info_falls_back_to_screenshot_size(fake_adb: StartFake) -> None:
    shell = FakeShell(rules={"wm size": ["wm: not found"], "screencap -p": [png_bytes(10, 20)]})
    assert (device(fake_adb({SERIAL: "device"}, shell=shell)).info().width, 20) == (10, 20)


def test_screenshot_returns_png_bytes(fake_adb: StartFake) -> None:
    png = png_bytes()
    dev = device(fake_adb({SERIAL: "device"}, shell=FakeShell(rules={"screencap -p": [png]})))
    assert dev.screenshot() == png and png_size(png) == (4, 8)


def test_screenshot_repairs_pre_nougat_crlf(fake_adb: StartFake) -> None:
    png = png_bytes()
    mangled = png.replace(b"\n", b"\r\n")
    dev = device(fake_adb({SERIAL: "device"}, shell=FakeShell(rules={"screencap -p": [mangled]})))
    assert dev.screenshot() == png


def test_screenshot_garbage_is_screenshot_error_with_first_bytes(fake_adb: StartFake) -> None:
    shell = FakeShell(rules={"screencap -p": ["/system/bin/sh: screencap: not found\n"]})
    with pytest.raises(ScreenshotError, match="screencap: not found"):
        device(fake_adb({SERIAL: "device"}, shell=shell)).screenshot()


def test_hierarchy_retries_idle_state_then_succeeds(fake_adb: StartFake) -> None:
    shell = FakeShell()
    dumper(shell, [("ERROR: could not get idle state.", None),
                   ("ERROR: null root node returned by UiTestAutomationBridge.", None),
                   (f"UI hierchary dumped to: {DUMP}", XML)])
    dev = device(fake_adb({SERIAL: "device"}, shell=shell))
    assert dev.hierarchy() == XML
    dumps = [c for c in shell.commands if c.startswith(("rm", "uiautomator"))]
    assert dumps == [f"rm -f {DUMP}", f"uiautomator dump {DUMP}"] * 3
    assert len(dev.sleeps) == 2  # type: ignore[attr-defined]


def test_hierarchy_falls_back_to_compressed(fake_adb: StartFake) -> None:
    shell = FakeShell()
    dumper(shell, [("ERROR: could not get idle state.", None)] * 3 + [(f"UI hierchary dumped to: {DUMP}", XML)])
    dev = device(fake_adb({SERIAL: "device"}, shell=shell))
    assert dev.hierarchy() == XML
    assert shell.commands.count(f"uiautomator dump --compressed {DUMP}") == 1


def test_hierarchy_never_reads_a_stale_file(fake_adb: StartFake) -> None:
    shell = FakeShell(files={DUMP: b"<hierarchy><node text='OLD SCREEN'/></hierarchy>"})
    dumper(shell, [("ERROR: could not get idle state.", None)])
    dev = device(fake_adb({SERIAL: "device"}, shell=shell), dump_retries=2)
    with pytest.raises(HierarchyError) as err:
        dev.hierarchy()
    message = str(err.value)
    assert "attempt 1: ERROR: could not get idle state." in message
    assert "compressed attempt 3" in message and "OLD SCREEN" not in message


def test_hierarchy_success_line_without_file_is_retried(fake_adb: StartFake) -> None:
    shell = FakeShell()
    dumper(shell, [(f"UI hierchary dumped to: {DUMP}", None), (f"UI hierchary dumped to: {DUMP}", XML)])
    assert device(fake_adb({SERIAL: "device"}, shell=shell)).hierarchy() == XML


def test_hierarchy_busy_uiautomation_stops_at_once_with_hint(fake_adb: StartFake) -> None:
    shell = FakeShell()
    dumper(shell, [("java.lang.IllegalStateException: UiAutomationService x already registered!", None)])
    with pytest.raises(HierarchyError) as err:
        device(fake_adb({SERIAL: "device"}, shell=shell)).hierarchy()
    assert shell.commands.count(f"uiautomator dump {DUMP}") == 1
    assert err.value.hint and "u2" in err.value.hint


# --- actions -------------------------------------------------------------------------------------


def test_gestures_and_keys_send_input_commands(fake_adb: StartFake) -> None:
    shell = FakeShell()
    dev = device(fake_adb({SERIAL: "device"}, shell=shell))
    dev.tap(10, 20)
    dev.long_press(5, 6, 900)
    dev.swipe(1, 2, 3, 4, 250)
    dev.key("back")
    dev.key("recents")
    dev.key("escape")
    dev.key("volume_up")
    assert shell.commands == [
        "input tap 10 20", "input swipe 5 6 5 6 900", "input swipe 1 2 3 4 250",
        "input keyevent 4", "input keyevent 187", "input keyevent 111", "input keyevent 24",
    ]
    with pytest.raises(UsageError, match="allowed: back, home, enter"):
        dev.key("power")


def test_refused_input_is_shell_error(fake_adb: StartFake) -> None:
    shell = FakeShell(rules={"input": ["java.lang.SecurityException: Injecting to another application requires INJECT_EVENTS permission"]})
    with pytest.raises(ShellError, match="INJECT_EVENTS"):
        device(fake_adb({SERIAL: "device"}, shell=shell)).tap(1, 1)


def test_launch_missing_app_names_package(fake_adb: StartFake) -> None:
    shell = FakeShell(rules={"monkey": ["  bash arg: -p\n  bash arg: com.nope\n** No activities found to run, monkey aborted.\n"]})
    dev = device(fake_adb({SERIAL: "device"}, shell=shell))
    with pytest.raises(ShellError, match=r"com\.nope"):
        dev.launch("com.nope")
    assert shell.commands == ["monkey -p com.nope -c android.intent.category.LAUNCHER 1"]
    with pytest.raises(UsageError):
        dev.launch("com.x; reboot")


def test_current_app_from_dumpsys_window_then_activities(fake_adb: StartFake) -> None:
    shell = FakeShell(rules={
        "dumpsys window": ["  mCurrentFocus=null\n  mFocusedApp=null\n"],
        "dumpsys activity activities": ["  topResumedActivity=ActivityRecord{c1 u0 com.android.deskclock/.DeskClock t58}\n"],
    })
    assert device(fake_adb({SERIAL: "device"}, shell=shell)).current_app() == "com.android.deskclock"


def test_type_text_ascii_is_typed_exactly(fake_adb: StartFake) -> None:
    shell = FakeShell()
    dev = device(fake_adb({SERIAL: "device"}, shell=shell))
    text = "Hi 50%sale & $(x) 'q'\nnext"
    dev.type_text(text)
    assert "".join(device_runs(c)[1] for c in shell.commands) == text


def test_type_text_non_ascii_without_ime_fails_without_typing(fake_adb: StartFake) -> None:
    shell = FakeShell(rules={"ime list": ["com.google.android.inputmethod.latin/com.android.inputmethod.latin.LatinIME\n"]})
    with pytest.raises(TextInputError, match="non-ASCII text needs an IME") as err:
        device(fake_adb({SERIAL: "device"}, shell=shell)).type_text("Привет")
    assert err.value.hint and "u2" in err.value.hint
    assert not any(c.startswith(("input", "am broadcast")) for c in shell.commands)


def test_type_text_non_ascii_with_adb_keyboard(fake_adb: StartFake) -> None:
    shell = FakeShell(rules={
        "ime list": ["com.github.uiautomator/.AdbKeyboard\n"],
        "settings get secure default_input_method": ["com.google.android.inputmethod.latin/.LatinIME\n"],
        "am broadcast": ["Broadcast completed: result=0\n", 'Broadcast completed: result=-1, data="success"\n'],
    })
    dev = device(fake_adb({SERIAL: "device"}, shell=shell))
    dev.type_text("你好\nok")
    assert "ime set com.github.uiautomator/.AdbKeyboard" in shell.commands
    sent = [base64.b64decode(shlex.split(c)[-1]).decode() for c in shell.commands if c.startswith("am broadcast")]
    assert sent == ["你好", "你好", "ok"]  # first broadcast had no receiver yet (result=0): resent
    assert "input keyevent 66" in shell.commands


def test_shell_returns_output_and_dead_device_is_offline(fake_adb: StartFake) -> None:
    server = fake_adb({SERIAL: "device"}, shell=FakeShell(rules={"echo": ["hi\n"]}))
    dev = device(server)
    assert dev.shell("echo hi") == "hi\n"
    server.devices[SERIAL] = "offline"
    with pytest.raises(DeviceOffline, match="offline"):
        dev.shell("echo hi")
    assert len(dev.sleeps) == dev.connect_retries  # type: ignore[attr-defined]  # bounded backoff
