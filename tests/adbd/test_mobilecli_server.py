"""mobilecli's on-device server (com.mobilenext.mobilecli.DeviceServer) on the sim, driven the way
mobilecli drives a phone, through Debian's real adb: push the dex, start it with ``app_process`` in
the background, ``adb forward tcp:N localabstract:mobilecli-server``, POST JSON-RPC over HTTP/1.1.

The dex here is a stand-in (dex magic + the server's class descriptor): what a phone checks before
it can run the class. tests/adbd/test_mobile_mcp.py drives the real mobilecli binary.
"""

from __future__ import annotations

import base64
import hashlib
import http.client
import io
import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from adbd_support import AdbServer, SimDevice, attach, needs_adb
from PIL import Image

from artemis_cli.config.task import SimOptions
from artemis_cli.device.select import sim_for
from artemis_cli.sim.adbd import SimAdbd, free_port
from artemis_cli.sim.adbd.mobilecli_server import DEX_PATH
from artemis_cli.sim.sysui import IME_PACKAGE

pytestmark = needs_adb

LAUNCH = ("CLASSPATH=/data/local/tmp/mobilecli.dex nohup app_process / com.mobilenext.mobilecli.DeviceServer "
          ">/dev/null 2>&1 &")
FAKE_DEX = b"dex\n039\0" + b"\0" * 56 + b"Lcom/mobilenext/mobilecli/DeviceServer;\0"


def _push_dex(sim: SimDevice, tmp_path: Path, data: bytes = FAKE_DEX) -> None:
    local = tmp_path / "mobilecli.dex"
    local.write_bytes(data)
    sim.adb.run("push", str(local), DEX_PATH, serial=sim.serial)


def _forward(sim: SimDevice) -> int:
    return int(sim.adb.text("forward", "tcp:0", "localabstract:mobilecli-server", serial=sim.serial).strip())


def _post(port: int, body: bytes) -> tuple[int, bytes, dict[str, str]]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    try:
        conn.request("POST", "/", body=body, headers={"Content-Type": "application/json"})
        resp = conn.getresponse()
        return resp.status, resp.read(), {k.lower(): v for k, v in resp.getheaders()}
    finally:
        conn.close()


def _rpc(port: int, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
    req: dict[str, Any] = {"jsonrpc": "2.0", "id": "1", "method": method}
    if params is not None:
        req["params"] = params
    status, body, headers = _post(port, json.dumps(req).encode())
    assert status == 200 and headers.get("connection") == "close", (status, headers)
    reply: dict[str, Any] = json.loads(body)
    return reply


@pytest.fixture
def server(sim_device: SimDevice, tmp_path: Path) -> Iterator[int]:
    """The server started as mobilecli starts it; yields the forwarded host port."""
    _push_dex(sim_device, tmp_path)
    sim_device.shell(LAUNCH)
    port = _forward(sim_device)
    try:
        yield port
    finally:
        sim_device.adb.run("forward", "--remove", f"tcp:{port}", serial=sim_device.serial, check=False)


def test_without_the_dex_app_process_fails_and_nothing_listens(sim_device: SimDevice, tmp_path: Path) -> None:
    res = sim_device.adb.run("shell", LAUNCH.replace(" >/dev/null 2>&1 &", ""), serial=sim_device.serial, check=False)
    assert res.returncode == 1 and b"Could not find or load main class com.mobilenext.mobilecli.DeviceServer" in res.stderr
    _push_dex(sim_device, tmp_path, b"PK\3\4 not a dex")  # a file that is not a dex with the class: same
    assert sim_device.adb.run("shell", LAUNCH.replace(" &", ""), serial=sim_device.serial, check=False).returncode == 1
    port = _forward(sim_device)
    with pytest.raises((http.client.RemoteDisconnected, ConnectionError)):  # the device refused the socket
        _post(port, b"{}")
    assert sim_device.shell("pgrep -f '[D]eviceServer'; echo rc=$?").strip() == "rc=1"


def test_version_is_the_sha256_of_the_dex_it_started_from(sim_device: SimDevice, server: int) -> None:
    reply = _rpc(server, "device.version")
    assert reply == {"jsonrpc": "2.0", "id": "1", "result": {"dexSha256": hashlib.sha256(FAKE_DEX).hexdigest()}}
    pid = sim_device.shell("pgrep -f '[c]om.mobilenext.mobilecli.DeviceServer'").strip()
    assert pid.isdigit() and f" {pid} " in sim_device.shell("ps -A -o USER,PID,NAME | grep app_process").replace(
        "shell", " ")
    assert sim_device.adbd.device.mobilecli.state.starts == 1


def test_dump_ui_is_the_phones_windows_topmost_first_without_the_keyboard(sim_device: SimDevice, server: int) -> None:
    phone = sim_device.phone
    phone.do_launch("com.android.contacts")
    phone.do_tap(540, 344)  # focus "Search contacts": the keyboard comes up
    assert phone.keyboard_visible()
    hierarchy = _rpc(server, "device.dump.ui", {"waitUntilIdle": 2000})["result"]["hierarchy"]
    wins = [w for w in reversed(phone.windows()) if w.package != IME_PACKAGE]
    assert [n["package"] for n in hierarchy] == [w.package for w in wins]
    assert [n["resource-id"] for n in hierarchy] == [w.root.rid for w in wins]
    full = _rpc(server, "device.dump.ui", {"full": True})["result"]["hierarchy"]
    assert IME_PACKAGE in [n["package"] for n in full]

    def flat(nodes: list[dict[str, Any]]) -> Iterator[dict[str, Any]]:
        for n in nodes:
            yield n
            yield from flat(n.get("children", []))

    search = next(n for n in flat(hierarchy) if n["class"] == "android.widget.EditText" and n["focused"])
    assert search["text"] == "" and search["hint"]  # an empty field: its hint apart from its text
    r = search["rect"]
    assert phone.widget_at(r["x"] + r["width"] // 2, r["y"] + r["height"] // 2) is not None


def test_screenshot_is_the_renderers_picture(sim_device: SimDevice, server: int) -> None:
    png = base64.b64decode(_rpc(server, "device.screenshot", {"format": "png"})["result"]["data"])
    img = Image.open(io.BytesIO(png)).convert("RGB")
    assert img.size == (1080, 2400) and img.tobytes() == sim_device.phone.render_image().convert("RGB").tobytes()
    jpeg = base64.b64decode(_rpc(server, "device.screenshot", {"format": "jpeg", "quality": 50, "maxSize": 600})
                            ["result"]["data"])
    assert jpeg[:2] == b"\xff\xd8" and Image.open(io.BytesIO(jpeg)).size == (270, 600)
    clip = {"format": "png", "clip": {"x": 0, "y": 0, "width": 540, "height": 100}, "screenWidth": 1080}
    assert Image.open(io.BytesIO(base64.b64decode(_rpc(server, "device.screenshot", clip)["result"]["data"]))).size \
        == (540, 100)


def test_apps_list_names_every_installed_package(sim_device: SimDevice, server: int) -> None:
    apps = {a["packageName"]: a for a in _rpc(server, "device.apps.list")["result"]}
    for pkg in sim_device.phone.packages():
        assert pkg in apps
    assert apps["com.android.deskclock"]["appName"] == "Clock" and apps["com.artemis.notes"]["versionCode"] == 142


def test_clipboard_and_keyboard_hide(sim_device: SimDevice, server: int) -> None:
    assert _rpc(server, "device.clipboard.set", {"text": "héllo"})["result"] == {"ok": True}
    assert _rpc(server, "device.clipboard.get")["result"] == {"text": "héllo"}
    assert _rpc(server, "device.clipboard.set", {})["error"] == {"code": -32602, "message": "missing params.text"}
    assert _rpc(server, "device.io.keyboard.hide")["result"] == {"dismissed": False}
    sim_device.phone.do_launch("com.android.contacts")
    sim_device.phone.do_tap(540, 344)
    assert _rpc(server, "device.io.keyboard.hide")["result"] == {"dismissed": True}
    assert not sim_device.phone.keyboard_visible()


def test_errors_as_the_server_answers_them(sim_device: SimDevice, server: int) -> None:
    assert _rpc(server, "device.io.nope")["error"] == {"code": -32601, "message": "Method not found: device.io.nope"}
    status, body, _ = _post(server, b"{not json")
    assert status == 200 and json.loads(body)["error"]["code"] == -32700 and json.loads(body)["id"] is None
    assert json.loads(_post(server, b'{"id":"7","method":"device.version"}')[1]) == {
        "jsonrpc": "2.0", "id": "7", "error": {"code": -32600, "message": "Invalid Request"}}
    assert json.loads(_post(server, b'{"jsonrpc":"2.0","id":1,"method":"device.version","params":[1]}')[1])[
        "error"] == {"code": -32602, "message": "Invalid params"}
    assert _post(server, b"{}")[0] == 204  # a notification (what mobilecli's readiness probe sends)
    bad_clip = {"clip": {"x": 5000, "y": 0, "width": 10, "height": 10}, "screenWidth": 1080}
    assert _rpc(server, "device.screenshot", bad_clip)["error"] == {
        "code": -32603, "message": "Internal error: clip rect is outside the screenshot bounds"}


def test_one_uiautomation_at_a_time_and_pkill_stops_it(sim_device: SimDevice, server: int, tmp_path: Path) -> None:
    again = sim_device.adb.run("shell", LAUNCH.replace(" >/dev/null 2>&1 &", ""), serial=sim_device.serial, check=False)
    assert again.returncode == 1 and b"already registered" in again.stderr
    (tmp_path / "u2.jar").write_bytes(b"PK")
    sim_device.adb.run("push", str(tmp_path / "u2.jar"), "/data/local/tmp/u2.jar", serial=sim_device.serial)
    u2 = sim_device.adb.run("shell", "CLASSPATH=/data/local/tmp/u2.jar app_process / com.wetest.uia2.Main",
                            serial=sim_device.serial, check=False)
    assert u2.returncode == 1 and b"already registered" in u2.stderr
    dump = sim_device.adb.run("exec-out", "uiautomator dump /dev/tty", serial=sim_device.serial, check=False)
    assert b"already registered" in dump.stdout + dump.stderr and b"<hierarchy" not in dump.stdout
    assert sim_device.shell("pkill -f '[D]eviceServer'; echo rc=$?").strip() == "rc=0"
    assert "<hierarchy" in sim_device.shell("uiautomator dump /dev/tty")  # the UiAutomation is free again
    with pytest.raises((http.client.RemoteDisconnected, ConnectionError)):
        _post(server, b"{}")
    assert sim_device.shell("pkill -f '[D]eviceServer'; echo rc=$?").strip() == "rc=1"  # nothing left to kill
    assert "not permitted" in sim_device.shell("pkill -f system_server 2>&1; true")  # not the shell user's


def test_a_reset_phone_has_neither_the_dex_nor_the_server(sim_device: SimDevice, server: int) -> None:
    assert _rpc(server, "device.version")["result"]
    sim_device.shell("artemis-sim reset --world default --seed 0 --no-popups")
    with pytest.raises((http.client.RemoteDisconnected, ConnectionError)):
        _post(server, b"{}")
    assert sim_device.adb.run("shell", LAUNCH.replace(" &", ""), serial=sim_device.serial, check=False).returncode == 1


def test_a_reboot_ends_the_server_but_keeps_the_dex_so_it_starts_again(sim_device: SimDevice, server: int) -> None:
    with sim_device.adbd.device.lock:
        sim_device.phone.reboot()  # the phone's power cycle (the adbd's `reboot` also drops connections)
    with pytest.raises((http.client.RemoteDisconnected, ConnectionError)):
        _post(server, b"{}")
    sim_device.shell(LAUNCH)  # what mobilecli does next: the dex is still in /data/local/tmp
    assert _rpc(server, "device.version")["result"] == {"dexSha256": hashlib.sha256(FAKE_DEX).hexdigest()}
    assert sim_device.adbd.device.mobilecli.state.starts == 2


def test_with_pixel_latency_the_socket_listens_only_after_its_start_up(adb_server: AdbServer, tmp_path: Path) -> None:
    """As on a phone, the server is not there the instant app_process is started: the socket
    refuses until the seeded start-up (``server_start``) has passed, then serves; the client
    polls for it as mobilecli does (every 100 ms, for 5 s)."""
    adbd = SimAdbd(sim_for(SimOptions(popups=False, permission_prompts=False)), port=free_port(), latency="pixel")
    adbd.start()
    try:
        attach(adb_server, adbd)
        sim = SimDevice(adbd.phone, adbd, adb_server)
        _push_dex(sim, tmp_path)
        sim.shell(LAUNCH)
        port = _forward(sim)
        with pytest.raises((http.client.RemoteDisconnected, ConnectionError)):
            _post(port, b"{}")  # started, not yet listening
        assert adbd.device.mobilecli.running and adbd.device.latency.calls["server_start"] == 1
        deadline = time.monotonic() + 5
        while not adbd.device.mobilecli.listening:  # the event: its start-up is over
            assert time.monotonic() < deadline
            time.sleep(0.1)
        assert _rpc(port, "device.version")["result"]["dexSha256"] == hashlib.sha256(FAKE_DEX).hexdigest()
    finally:
        adb_server.run("disconnect", adbd.serial, check=False)
        adbd.stop()
