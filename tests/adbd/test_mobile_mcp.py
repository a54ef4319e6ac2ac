"""mobile-mcp (`@mobilenext/mobile-mcp`, the MCP server many AI agents drive Android with) against
`artemis sim serve`, over stdio, through the official MCP Python SDK client.

mobile-mcp has two robots: the default one runs every action through `mobilecli` (a Go binary that
calls `adb`, and for dumps, screenshots and the app list starts its own Java server on the phone with
`app_process`, which the sim runs: artemis_cli/sim/adbd/mobilecli_server.py), and the legacy one
(MOBILEMCP_LEGACY_ROBOT=1) calls `adb` itself. Both are driven here, on a private adb
server (ANDROID_ADB_SERVER_PORT; never 5037) and with a private HOME (mobilecli keeps a daemon
under ~/.mobilecli, stopped at the end). Each test asserts what the SIM shows afterwards through
Debian's adb, not only mobile-mcp's reply.

`.ci/run` installs mobile-mcp and exports ARTEMIS_MOBILE_MCP (the `mcp-server-mobile` bin); without
it, node or adb the tests skip saying why.
"""

from __future__ import annotations

import base64
import contextlib
import http.client
import json
import os
import re
import shutil
import signal
import struct
import tempfile
import threading
from collections.abc import Iterator
from concurrent.futures import Future
from pathlib import Path
from typing import Any

import pytest
from adbd_support import ADB, AdbServer, ServedCli, serve_cli, stop_cli

mcp = pytest.importorskip("mcp", reason="the MCP Python SDK is not installed (pip install -e '.[test]')")
from mcp import StdioServerParameters  # noqa: E402
from mcp_support import McpClient  # noqa: E402

MOBILE_MCP = os.environ.get("ARTEMIS_MOBILE_MCP", "")
NODE = shutil.which("node")

pytestmark = [
    pytest.mark.skipif(NODE is None, reason="node is not installed (.ci/run installs Debian's nodejs)"),
    pytest.mark.skipif(not (MOBILE_MCP and os.access(MOBILE_MCP, os.X_OK)),
                       reason="mobile-mcp is not installed: .ci/run installs it and sets ARTEMIS_MOBILE_MCP"),
    pytest.mark.skipif(ADB is None, reason="Debian's `adb` is not installed (apt-get install adb)"),
]

MODES = ["default", "legacy"]


@pytest.fixture(scope="module")
def served(adb_server: AdbServer) -> Iterator[ServedCli]:
    """A sim of its own for this module (the tests change its screens)."""
    cli = serve_cli(adb_server, "--no-popups")
    try:
        yield cli
    finally:
        stop_cli(cli)


@pytest.fixture(scope="module", params=MODES)
def mobile(request: pytest.FixtureRequest, served: ServedCli) -> Iterator[tuple[McpClient, str]]:
    assert ADB is not None
    home = Path(tempfile.mkdtemp(prefix="artemis-mobile-mcp-"))
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANDROID_", "MOBILEMCP_"))}
    env.update({"HOME": str(home), "ANDROID_ADB_SERVER_PORT": str(served.adb.port),
                "PATH": os.path.dirname(ADB) + os.pathsep + env.get("PATH", ""),
                "MOBILEMCP_DISABLE_TELEMETRY": "1"})
    if request.param == "legacy":
        env["MOBILEMCP_LEGACY_ROBOT"] = "1"
    errlog = (home / "stderr.log").open("w")
    client = McpClient.stdio(StdioServerParameters(command=MOBILE_MCP, env=env), errlog)
    try:
        yield client, request.param
    finally:
        client.close()
        errlog.close()
        _stop_mobilecli_daemon(home)
        if request.param == "default":  # hand the phone's UiAutomation back, as a user would
            served.adb.run("shell", "pkill -f '[D]eviceServer'; true", serial=served.serial, check=False)
            served.adb.run("forward", "--remove-all", serial=served.serial, check=False)
        shutil.rmtree(home, ignore_errors=True)


def _stop_mobilecli_daemon(home: Path) -> None:
    """mobilecli leaves `mobilecli daemon start` running under HOME; stop the one this test started."""
    try:
        pid = int(json.loads((home / ".mobilecli" / "daemon.pid").read_text())["pid"])
    except (OSError, ValueError, KeyError):
        return
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGTERM)


def _elements(client: McpClient, serial: str) -> list[dict[str, Any]]:
    """mobile_list_elements_on_screen as JSON, flattened (the default robot nests children)."""
    body = client.text("mobile_list_elements_on_screen", device=serial, format="json")
    start = body.index("[")
    items: list[dict[str, Any]] = json.loads(body[start:body.rindex("]") + 1])
    flat: list[dict[str, Any]] = []
    while items:
        el = items.pop(0)
        flat.append(el)
        items[:0] = el.get("children") or []
    return flat


def _center(el: dict[str, Any]) -> tuple[int, int]:
    r = el["coordinates"]
    return r["x"] + r["width"] // 2, r["y"] + r["height"] // 2


def _find(elements: list[dict[str, Any]], name: str) -> dict[str, Any]:
    for el in elements:
        if name in (el.get("text"), el.get("label"), (el.get("identifier") or "").rsplit("/", 1)[-1]):
            return el
    raise AssertionError(f"mobile-mcp lists no {name!r}: {[e.get('text') or e.get('identifier') for e in elements]}")


def _focus(cli: ServedCli) -> str:
    """The sim's focused window, as `dumpsys window` prints it."""
    out = cli.adb.text("shell", "dumpsys window displays", serial=cli.serial)
    m = re.search(r"mCurrentFocus=(.*)", out)
    return m.group(1) if m else ""


def _focused_app(cli: ServedCli) -> str:
    """The activity in front, as `dumpsys window`'s mFocusedApp names it."""
    out = cli.adb.text("shell", "dumpsys window displays", serial=cli.serial)
    m = re.search(r"mFocusedApp=(.*)", out)
    return m.group(1) if m else ""


def _screen_xml(cli: ServedCli) -> str:
    """The screen's hierarchy as text: `uiautomator dump`'s XML or, while mobilecli's DeviceServer
    holds the phone's one UiAutomation (so `uiautomator dump` fails, as on a phone), its own JSON
    dump, asked through the forward mobilecli made."""
    res = cli.adb.run("exec-out", "uiautomator dump /dev/tty", serial=cli.serial, check=False)
    if b"already registered" not in res.stdout + res.stderr:
        return res.stdout.decode("utf-8", "replace")
    forwards = cli.adb.text("forward", "--list").splitlines()
    port = next(int(f.split()[1][4:]) for f in forwards
                if f.startswith(cli.serial + " ") and f.endswith(" localabstract:mobilecli-server"))
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    try:
        conn.request("POST", "/", body=b'{"jsonrpc":"2.0","id":"1","method":"device.dump.ui"}')
        return conn.getresponse().read().decode("utf-8")
    finally:
        conn.close()


def _home(cli: ServedCli) -> None:
    """A fresh phone on its home screen (each test starts from the seeded world)."""
    cli.adb.run("shell", "artemis-sim reset --world default --seed 0 --no-popups", serial=cli.serial)


def _start(cli: ServedCli, package: str) -> None:
    cli.adb.run("shell", f"monkey -p {package} -c android.intent.category.LAUNCHER 1", serial=cli.serial)
    assert f"{package}/" in _focus(cli)


def test_tools_list_and_the_sim_is_an_available_device(mobile: tuple[McpClient, str], served: ServedCli) -> None:
    client, _ = mobile
    tools = [t.name for t in client.tools()]
    for name in ("mobile_list_available_devices", "mobile_list_apps", "mobile_launch_app",
                 "mobile_list_elements_on_screen", "mobile_click_on_screen_at_coordinates",
                 "mobile_type_keys", "mobile_swipe_on_screen", "mobile_take_screenshot", "mobile_get_device_logs"):
        assert name in tools
    devices = json.loads(client.text("mobile_list_available_devices"))["devices"]
    ours = [d for d in devices if d["id"] == served.serial]
    assert ours and ours[0]["platform"] == "android" and ours[0]["version"] == "14", devices


def test_list_apps_names_the_launcher_apps(mobile: tuple[McpClient, str], served: ServedCli) -> None:
    client, _ = mobile
    body = client.text("mobile_list_apps", device=served.serial)
    for pkg in ("com.android.settings", "com.android.deskclock", "com.android.contacts", "com.artemis.notes"):
        assert f"({pkg})" in body, body


def test_the_default_robot_runs_mobilecli_s_server_on_the_sim(mobile: tuple[McpClient, str],
                                                                served: ServedCli) -> None:
    """The default robot's dumps and screenshots go through mobilecli's own DeviceServer (no
    5 s wait and fallback): after a call, it runs on the sim and adb forwards to its socket."""
    client, mode = mobile
    if mode == "legacy":
        pytest.skip("the legacy robot calls adb itself")
    _elements(client, served.serial)
    pid = served.adb.text("shell", "pgrep -f '[c]om.mobilenext.mobilecli.DeviceServer'", serial=served.serial)
    assert pid.strip().isdigit(), pid
    forwards = served.adb.text("forward", "--list")
    assert f"{served.serial} tcp:" in forwards and "localabstract:mobilecli-server" in forwards, forwards


def test_launch_app_brings_it_to_the_front(mobile: tuple[McpClient, str], served: ServedCli) -> None:
    client, _ = mobile
    _home(served)
    assert "com.android.deskclock" not in _focus(served)
    client.text("mobile_launch_app", device=served.serial, packageName="com.android.deskclock")
    # the Clock is the app in front; on its first launch it asks for notifications (Android 13+),
    # so the focused window may be the permission dialog over it, as on a phone
    assert "com.android.deskclock/" in _focused_app(served)
    assert _focus(served).startswith("Window{") and (
        "com.android.deskclock/" in _focus(served) or "permissioncontroller" in _focus(served))


def test_elements_then_click_by_their_coordinates(mobile: tuple[McpClient, str], served: ServedCli) -> None:
    client, _ = mobile
    _home(served)
    _start(served, "com.android.settings")
    elements = _elements(client, served.serial)
    row = _find(elements, "network_row")
    x, y = _center(row)
    client.text("mobile_click_on_screen_at_coordinates", device=served.serial, x=x, y=y)
    assert "network_row" not in _screen_xml(served)  # the sim left the Settings list for the Network screen
    assert "Wi" in _screen_xml(served) or "Internet" in _screen_xml(served)


def test_type_keys_types_into_the_focused_field(mobile: tuple[McpClient, str], served: ServedCli) -> None:
    client, _ = mobile
    _home(served)
    _start(served, "com.artemis.notes")
    x, y = _center(_find(_elements(client, served.serial), "new_note"))
    client.text("mobile_click_on_screen_at_coordinates", device=served.serial, x=x, y=y)
    field = next(e for e in _elements(client, served.serial) if "EditText" in (e.get("type") or ""))
    client.text("mobile_click_on_screen_at_coordinates", device=served.serial, x=_center(field)[0], y=_center(field)[1])
    client.text("mobile_type_keys", device=served.serial, text="Milk", submit=False)
    assert re.search(r'text="Milk"|"text":"Milk"', _screen_xml(served))


def test_swipe_scrolls_the_screen(mobile: tuple[McpClient, str], served: ServedCli) -> None:
    client, _ = mobile
    _home(served)
    _start(served, "com.android.contacts")
    before = _screen_xml(served)
    client.text("mobile_swipe_on_screen", device=served.serial, direction="up")
    after = _screen_xml(served)
    assert after != before  # the sim's list moved (bounds changed or new rows came in)


def test_screenshot_is_the_sims_screen(mobile: tuple[McpClient, str], served: ServedCli) -> None:
    client, _ = mobile
    res = client.call("mobile_take_screenshot", device=served.serial)
    images = [c for c in res.content if c.type == "image"]
    assert not res.is_error and images, res.content
    data = base64.b64decode(images[0].data)
    if data.startswith(b"\x89PNG"):
        w, h = struct.unpack(">II", data[16:24])
    else:
        assert data[:2] == b"\xff\xd8", data[:8]
        m = re.search(rb"\xff[\xc0\xc2]..\x08(..)(..)", data, re.S)
        assert m is not None
        h, w = struct.unpack(">H", m.group(1))[0], struct.unpack(">H", m.group(2))[0]
    real = served.adb.run("exec-out", "screencap -p", serial=served.serial).stdout
    rw, rh = struct.unpack(">II", real[16:24])
    assert abs(w / h - rw / rh) < 0.01, (w, h, rw, rh)  # the sim's screen, maybe scaled down


def test_device_logs(mobile: tuple[McpClient, str], served: ServedCli) -> None:
    client, mode = mobile
    if mode == "legacy":
        pytest.skip("mobile-mcp's legacy robot has no logs tool ('not supported in legacy robot mode')")
    fut: Future[Any] = Future()

    def ask() -> None:
        try:
            fut.set_result(client.call("mobile_get_device_logs", device=served.serial, limit=3, timeout=45))
        except Exception as e:
            fut.set_exception(e)

    threading.Thread(target=ask, daemon=True).start()
    for _ in range(10):  # the tool only sees lines logged after it starts: make the sim log something
        if fut.done():
            break
        _start(served, "com.android.settings")
        served.adb.run("shell", "input keyevent KEYCODE_HOME", serial=served.serial)
    res = fut.result(timeout=50)
    body = "".join(c.text for c in res.content if c.type == "text")
    assert not res.is_error and body.strip().startswith("{"), body
    entries = [json.loads(line) for line in body.splitlines() if line.strip()]
    assert entries, body
