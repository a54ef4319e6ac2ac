"""mobilecli's on-device server (``com.mobilenext.mobilecli.DeviceServer``, mobilecli 1.0.x), as the
sim's phone runs it.

mobilecli (mobile-mcp's default robot) pushes its dex to ``/data/local/tmp/mobilecli.dex``, stops
any earlier server (``pkill -f '[D]eviceServer'; …; true``), starts one detached::

    CLASSPATH=/data/local/tmp/mobilecli.dex nohup app_process / com.mobilenext.mobilecli.DeviceServer >/dev/null 2>&1 &

then ``adb forward tcp:N localabstract:mobilecli-server`` and POSTs JSON-RPC 2.0 to it, one request
per connection, framed as HTTP/1.1 (``Content-Length`` + body; the server answers ``Connection:
close`` and closes).  What it serves here, from the phone's own state (the windows the renderer
draws, the renderer's picture, the package list, the device clipboard uiautomator2 shares):

* ``device.version`` → ``{"dexSha256": sha256 of the file on CLASSPATH when it started}`` (the
  client restarts a server whose dex is not its own);
* ``device.dump.ui`` → ``{"hierarchy": [window root, …]}``, topmost window first, the keyboard's
  window left out unless ``full``; nodes in the devicekit JSON shape;
* ``device.screenshot`` → ``{"data": base64 PNG|JPEG}`` (``format``, ``quality``, ``scale``,
  ``maxSize``, ``clip`` + ``screenWidth``, as Screenshot.java);
* ``device.apps.list`` → every installed package ``{packageName, appName, version, versionCode}``;
* ``device.clipboard.get|set|clear``, ``device.io.keyboard.hide``.

With a latency profile its socket listens only after a seeded start-up (``server_start``: process
start + UiAutomation connect), and each call pays ``u2_dump``/``u2_screenshot``/``u2_rpc``.

As on a phone: the server starts only when CLASSPATH names a dex holding its class (else the
``app_process`` fails and nothing listens on the socket); it holds the device's only UiAutomation,
so it does not start while uiautomator2's server runs (and uiautomator2's does not start while it
runs); it is a process of the shell user (``ps``/``pgrep -f``/``pkill -f`` see it) and dies with
``pkill`` or a reboot.  Errors are JsonRpcSocketServer's: -32700 parse, -32600 invalid request,
-32601 ``Method not found: M``, -32602 invalid params, -32603 ``Internal error: …``.
"""

from __future__ import annotations

import base64
import hashlib
import io
import json
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from artemis_cli.sim import packages as P
from artemis_cli.sim.adbd.stream import Stream, StreamClosed
from artemis_cli.sim.processes import SHELL_UID, Proc
from artemis_cli.sim.sysui import IME_PACKAGE
from artemis_cli.sim.widgets import Widget

if TYPE_CHECKING:
    from artemis_cli.sim.adbd.device_shell import DeviceSide

DEX_PATH = "/data/local/tmp/mobilecli.dex"
MAIN = "com.mobilenext.mobilecli.DeviceServer"
SOCKET = "localabstract:mobilecli-server"
CLASS_DESCRIPTOR = b"Lcom/mobilenext/mobilecli/DeviceServer;"
DEX_MAGIC = b"dex\n"
MAX_CONTENT_LENGTH = 1 << 20  # JsonRpcSocketServer rejects a larger body
MAX_HEADER = 64 * 1024
UIAUTOMATION_TAKEN = ("java.lang.IllegalStateException: UiAutomationService "
                      "android.accessibilityservice.IAccessibilityServiceClient$Stub$Proxy@5deffd5"
                      "already registered!\n")
PARSE_ERROR, INVALID_REQUEST, METHOD_NOT_FOUND, INVALID_PARAMS, INTERNAL_ERROR = (
    -32700, -32600, -32601, -32602, -32603)
_KINDS = {"device.dump.ui": "u2_dump", "device.screenshot": "u2_screenshot"}  # the latency each call pays


class RpcFailure(Exception):
    def __init__(self, code: int, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


@dataclass
class MobilecliState:
    """The DeviceServer "process": its entry in the phone's process table while it runs."""

    proc: Proc | None = None
    dex_sha256: str = ""
    starts: int = 0
    listens_at: float = 0.0  # time.monotonic() from which its socket accepts (start-up: latency)


def _classpath_error(device: DeviceSide, classpath: str) -> str | None:
    """Why ``app_process`` cannot load the server's class from ``classpath`` (None: it can): the
    file must exist and be a dex that holds the class."""
    fs = device.phone.fs
    data = fs.read_file(classpath) if classpath and fs.exists(classpath) else b""
    if not data.startswith(DEX_MAGIC) or CLASS_DESCRIPTOR not in data:
        return f"Error: Could not find or load main class {MAIN}\n"
    return None


class MobilecliServer:
    def __init__(self, device: DeviceSide) -> None:
        self.device = device
        self.state = MobilecliState()
        self.methods: dict[str, Callable[[dict[str, Any]], Any]] = {
            "device.version": lambda _: {"dexSha256": self.state.dex_sha256},
            "device.dump.ui": self.dump_ui, "device.screenshot": self.screenshot,
            "device.apps.list": lambda _: self.apps(), "device.clipboard.get": self.clipboard_get,
            "device.clipboard.set": self.clipboard_set, "device.clipboard.clear": self.clipboard_clear,
            "device.io.keyboard.hide": self.hide_keyboard,
        }

    # --- the process ------------------------------------------------------------------------
    @property
    def running(self) -> bool:
        proc = self.state.proc
        return proc is not None and self.device.phone.am.table.procs.get(proc.pid) is proc

    @property
    def listening(self) -> bool:
        """Running and past its start-up: until then ``localabstract:mobilecli-server`` refuses."""
        return self.running and time.monotonic() >= self.state.listens_at

    def launch(self, classpath: str) -> tuple[str, int]:
        """``app_process / com.mobilenext.mobilecli.DeviceServer`` with ``CLASSPATH``: (stderr, exit
        status). It runs in the background until killed; the shell command returns at once."""
        dev = self.device
        with dev.lock:
            problem = _classpath_error(dev, classpath)
            if problem is not None:
                return problem, 1
            if self.running or dev.u2.running:  # only one UiAutomation may be registered
                # main() prints "Error: " + the message, then the stack trace, and exits 1
                return f"Error: {UIAUTOMATION_TAKEN.split(': ', 1)[1]}{UIAUTOMATION_TAKEN}", 1
            table = dev.phone.am.table
            proc = table.spawn("app_process")
            proc.uid, proc.ppid, proc.name = SHELL_UID, 1, "app_process"  # nohup'd: init adopts it
            startup = dev.latency.seconds("server_start") if dev.latency.active else 0.0
            self.state = MobilecliState(proc, hashlib.sha256(dev.phone.fs.read_file(classpath)).hexdigest(),
                                        self.state.starts + 1, time.monotonic() + startup)
        return "", 0

    def cmdline(self) -> str:
        return f"app_process / {MAIN}"

    def stop(self) -> None:
        with self.device.lock:
            proc = self.state.proc
            if proc is not None and self.running:  # after a reboot its pid may be another process's
                del self.device.phone.am.table.procs[proc.pid]
            self.state.proc = None

    # --- HTTP over one adb stream -----------------------------------------------------------
    def serve(self, stream: Stream) -> None:
        """One request on ``stream``, answered, then the connection closes (JsonRpcSocketServer)."""
        head = bytearray()
        try:
            while b"\r\n\r\n" not in head and len(head) <= MAX_HEADER:
                chunk = stream.recv()
                if chunk is None:
                    return
                head += chunk
            end = head.find(b"\r\n\r\n")
            if end < 0:
                return
            stream.unread(bytes(head[end + 4:]))
            length = 0
            for line in head[:end].decode("latin-1").split("\r\n")[1:]:
                if line.lower().startswith("content-length:"):
                    try:
                        length = int(line[len("content-length:"):].strip())
                    except ValueError:
                        length = 0
            if not 0 <= length <= MAX_CONTENT_LENGTH:
                self._respond(stream, _error(None, INVALID_REQUEST, "Content-Length out of bounds"))
                return
            body = stream.read_exact(length) if length else b""
            self._respond(stream, self.handle(body))
        except StreamClosed:
            return
        finally:
            stream.close()

    @staticmethod
    def _respond(stream: Stream, body: str | None) -> None:
        if body is None:  # a notification: acknowledged with no content
            stream.write(b"HTTP/1.1 204 No Content\r\nConnection: close\r\n\r\n")
            return
        data = body.encode("utf-8")
        stream.write(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: "
                     + str(len(data)).encode() + b"\r\nConnection: close\r\n\r\n" + data)

    def handle(self, body: bytes) -> str | None:
        """The response body for one JSON-RPC request (None for a notification)."""
        try:
            req = json.loads(body.decode("utf-8"))
            if not isinstance(req, dict):
                raise ValueError(f"Value {body[:40]!r} cannot be converted to JSONObject")
        except ValueError as e:
            return _error(None, PARSE_ERROR, f"Parse error: {e}")
        notification = "id" not in req
        rid = req.get("id")
        method, params = req.get("method"), req.get("params")
        if req.get("jsonrpc") != "2.0" or not isinstance(method, str) or not method:
            return None if notification else _error(rid, INVALID_REQUEST, "Invalid Request")
        if params is not None and not isinstance(params, dict):
            return None if notification else _error(rid, INVALID_PARAMS, "Invalid params")
        try:
            fn = self.methods.get(method)
            if fn is None:
                raise RpcFailure(METHOD_NOT_FOUND, f"Method not found: {method}")
            if self.device.latency.active:  # no lock held: concurrent calls overlap
                self.device.latency.charge(_KINDS.get(method, "u2_rpc"))
            self.device.phone.touch.arrive()  # what it injects is timed as it reaches the phone
            result = fn(params or {})
        except RpcFailure as e:
            return None if notification else _error(rid, e.code, e.message)
        except Exception as e:  # what the Java side's catch-all answers
            return None if notification else _error(rid, INTERNAL_ERROR, f"Internal error: {e}")
        return None if notification else _json({"jsonrpc": "2.0", "id": rid, "result": result})

    # --- methods ----------------------------------------------------------------------------
    def dump_ui(self, p: dict[str, Any]) -> dict[str, Any]:
        with self.device.lock:
            phone = self.device.phone
            if phone.faults.dump_fault() == "null_root":
                return {"hierarchy": []}  # no window root to read: the client falls back to uiautomator
            wins = [w for w in reversed(phone.windows()) if bool(p.get("full")) or w.package != IME_PACKAGE]
            return {"hierarchy": [_node(w.root, 0, w.package) for w in wins]}

    def screenshot(self, p: dict[str, Any]) -> dict[str, Any]:
        with self.device.lock:
            if self.device.phone.faults.screencap_fails():
                raise RuntimeError("takeScreenshot returned null")
            img = self.device.phone.render_image().convert("RGB")
        clip = p.get("clip")
        if isinstance(clip, dict):
            cw, ch = int(clip.get("width", 0)), int(clip.get("height", 0))
            if cw <= 0 or ch <= 0:
                raise ValueError("clip width and height must be positive")
            points = int(p.get("screenWidth") or 0)
            if points <= 0:
                raise ValueError("--screen-width is required with --clip")
            f = img.width / points
            box = (max(0, round(int(clip.get("x", 0)) * f)), max(0, round(int(clip.get("y", 0)) * f)),
                   min(img.width, round((int(clip.get("x", 0)) + cw) * f)),
                   min(img.height, round((int(clip.get("y", 0)) + ch) * f)))
            if box[2] <= box[0] or box[3] <= box[1]:
                raise ValueError("clip rect is outside the screenshot bounds")
            img = img.crop(box)
        max_size, scale = int(p.get("maxSize") or 0), float(p.get("scale", 1.0) or 1.0)
        largest = max(img.width, img.height)
        factor = (1.0 if max_size >= largest else max_size / largest) if max_size > 0 else scale
        if 0 < factor < 1.0:  # never upscales
            img = img.resize((max(1, round(img.width * factor)), max(1, round(img.height * factor))))
        buf = io.BytesIO()
        if p.get("format", "png") == "jpeg":
            img.save(buf, format="JPEG", quality=max(0, min(int(p.get("quality", 90)), 100)))
        else:
            img.save(buf, format="PNG")
        return {"data": base64.b64encode(buf.getvalue()).decode("ascii")}

    def apps(self) -> list[dict[str, Any]]:
        with self.device.lock:
            phone = self.device.phone
            names = [*phone.packages(), *[p for p in P.CORE_PACKAGES if p not in phone.apps]]
            labels = {pkg: getattr(phone.apps.get(pkg), "label", "") for pkg in names}
        rows = []
        for pkg in names:
            version, code = P.version_of(pkg)
            rows.append({"packageName": pkg, "appName": labels[pkg] or pkg, "version": version, "versionCode": code})
        return rows

    def clipboard_get(self, _: dict[str, Any]) -> dict[str, Any]:
        return {"text": self.device.u2.clipboard}

    def clipboard_set(self, p: dict[str, Any]) -> dict[str, Any]:
        if "text" not in p:
            raise RpcFailure(INVALID_PARAMS, "missing params.text")
        self.device.u2.clipboard = str(p["text"])
        return {"ok": True}

    def clipboard_clear(self, _: dict[str, Any]) -> dict[str, Any]:
        self.device.u2.clipboard = ""
        return {"ok": True}

    def hide_keyboard(self, _: dict[str, Any]) -> dict[str, Any]:
        with self.device.lock:
            shown = self.device.phone.keyboard_visible()
            if shown:
                self.device.phone.do_key("back")  # BACK dismisses the IME, as the server injects it
        return {"dismissed": shown}


def _node(w: Widget, index: int, package: str) -> dict[str, Any]:
    x0, y0, x1, y1 = w.bounds
    showing_hint = w.kind == "edit" and w.display == ""  # an empty field: its text is the hint
    node: dict[str, Any] = {
        "index": index, "class": w.cls, "package": package, "text": "" if showing_hint else w.text, "hint": w.hint,
        "content-desc": w.desc, "resource-id": w.rid, "checkable": w.checkable, "checked": w.checked,
        "clickable": w.clickable, "enabled": w.enabled, "focusable": w.focusable, "focused": w.focused,
        "scrollable": w.scrollable, "long-clickable": w.long_clickable, "password": w.password,
        "selected": w.selected, "visible": True,
        "rect": {"x": x0, "y": y0, "width": x1 - x0, "height": y1 - y0},
    }
    if w.children:
        node["children"] = [_node(c, i, package) for i, c in enumerate(w.children)]
    return node


def _json(obj: Any) -> str:
    """org.json's text: compact, insertion order, ``/`` escaped as ``\\/``."""
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":")).replace("/", "\\/")


def _error(rid: Any, code: int, message: str) -> str:
    return _json({"jsonrpc": "2.0", "id": rid, "error": {"code": code, "message": message}})

