"""uiautomator2's on-device server, as reached through ``tcp:9008``: ``GET /ping`` and
``POST /jsonrpc/0`` with the JSON-RPC methods the uiautomator2 client (3.x) calls: hierarchy
dump, screenshot, click/long click, swipe/drag, key presses, clipboard text input (``send_keys``
without the AdbKeyboard IME), touch events, device info, screen on/off, and the selector API
behind ``d(text=…)`` (u2_objects).  Java exceptions come back as ``{"code": -32001, "message":
JAVA_CLASS, "data": MESSAGE}``; unknown methods as -32601.
"""

from __future__ import annotations

import base64
import contextlib
import io
import json
import logging
from collections.abc import Callable
from typing import Any

from artemis_cli.sim.adbd.device_shell import DeviceSide
from artemis_cli.sim.adbd.stream import Stream, StreamClosed
from artemis_cli.sim.adbd.u2_objects import ServerError, UiObjects

log = logging.getLogger(__name__)

MAX_HEADER = 64 * 1024
MAX_BODY = 16 * 1024 * 1024
_KEY_NAMES = {"home": "home", "back": "back", "enter": "enter", "delete": "delete", "del": "delete",
              "recent": "recents", "recents": "recents", "menu": "menu", "search": "search", "tab": "tab",
              "escape": "escape"}
_KEY_CODES = {"left": 21, "right": 22, "up": 19, "down": 20, "center": 23, "volume_up": 24, "volume_down": 25,
              "volume_mute": 164, "camera": 27, "power": 26}


_ORIENTATIONS = {"natural": 0, "n": 0, "left": 1, "l": 1, "upsidedown": 2, "u": 2, "right": 3, "r": 3}


class RpcError(Exception):
    def __init__(self, code: int, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


class U2Server:
    def __init__(self, device: DeviceSide) -> None:
        self.device = device
        self.objects = UiObjects(device)
        self.methods: dict[str, Callable[..., Any]] = {
            **self.objects.methods(),
            "deviceInfo": self.device_info, "dumpWindowHierarchy": self.dump_hierarchy,
            "takeScreenshot": self.take_screenshot, "click": self.click, "swipe": self.swipe,
            "drag": self.drag, "swipePoints": self.swipe_points, "pressKeyCode": self.press_key_code,
            "pressKey": self.press_key, "setClipboard": self.set_clipboard, "getClipboard": self.get_clipboard,
            "pasteClipboard": self.paste_clipboard, "clearInputText": self.clear_input_text,
            "injectInputEvent": self.inject_input_event, "wakeUp": self.wake_up, "sleep": self.sleep,
            "isScreenOn": self.is_screen_on, "freezeRotation": self.freeze_rotation,
            "setOrientation": self.set_orientation, "openNotification": self.open_notification,
            "openQuickSettings": self.open_quick_settings, "makeToast": self.make_toast,
            "getLastToast": self.get_last_toast, "clearLastToast": self.clear_last_toast,
            "getLastTraversedText": _none,
            "clearLastTraversedText": _none, "waitForIdle": _true,
        }

    # --- HTTP over one adb stream ---------------------------------------------------------
    def serve(self, stream: Stream) -> None:
        """Answer HTTP/1.x requests on ``stream`` until the client closes it."""
        while True:
            head = bytearray()
            while b"\r\n\r\n" not in head:
                chunk = stream.recv()
                if chunk is None:
                    return
                head += chunk
                if len(head) > MAX_HEADER:
                    self._respond(stream, 431, b"header too large", "text/plain")
                    return
            end = head.index(b"\r\n\r\n") + 4
            stream.unread(bytes(head[end:]))
            lines = head[:end].decode("latin-1").split("\r\n")
            parts = lines[0].split(" ")
            if len(parts) != 3 or not parts[2].startswith("HTTP/"):
                self._respond(stream, 400, b"bad request line", "text/plain")
                return
            method, path, _ = parts
            headers = {k.strip().lower(): v.strip() for k, _, v in (ln.partition(":") for ln in lines[1:] if ln)}
            try:
                length = int(headers.get("content-length", "0"))
            except ValueError:
                length = -1
            if not 0 <= length <= MAX_BODY:
                self._respond(stream, 400, b"bad content-length", "text/plain")
                return
            body = stream.read_exact(length) if length else b""
            close = headers.get("connection", "").lower() == "close"
            if method == "GET" and path == "/ping":
                self._respond(stream, 200, b"pong", "text/plain", close)
            elif method == "POST" and path.startswith("/jsonrpc/0"):
                self._respond(stream, 200, self.handle_jsonrpc(body), "application/json", close)
            else:
                self._respond(stream, 404, b"Not Found", "text/plain", close)
            if close:
                return

    @staticmethod
    def _respond(stream: Stream, status: int, body: bytes, ctype: str, close: bool = True) -> None:
        reason = {200: "OK", 400: "Bad Request", 404: "Not Found", 431: "Request Header Fields Too Large"}[status]
        head = (f"HTTP/1.1 {status} {reason}\r\nContent-Type: {ctype}; charset=utf-8\r\n"
                f"Content-Length: {len(body)}\r\n{'Connection: close' + chr(13) + chr(10) if close else ''}\r\n")
        with contextlib.suppress(StreamClosed):
            stream.write(head.encode("latin-1") + body)

    def handle_jsonrpc(self, body: bytes) -> bytes:
        rid: Any = None
        try:
            req = json.loads(body.decode("utf-8"))
            if not isinstance(req, dict) or not isinstance(req.get("method"), str):
                raise RpcError(-32600, "Invalid Request")
            rid = req.get("id")
            fn = self.methods.get(req["method"])
            if fn is None:
                raise RpcError(-32601, f"Method not found: {req['method']}")
            self.device.latency.charge_rpc(req["method"])  # no lock held: concurrent calls overlap
            self.device.phone.touch.arrive()  # taps are timed as they reach the phone (sim/gestures.py)
            params = req.get("params")
            args = params if isinstance(params, list) else ([] if params is None else [params])
            if isinstance(params, dict):
                result = fn(**params)
            else:
                result = fn(*args)
            reply: dict[str, Any] = {"jsonrpc": "2.0", "id": rid, "result": result}
        except RpcError as e:
            reply = {"jsonrpc": "2.0", "id": rid, "error": {"code": e.code, "message": e.message, "data": ""}}
        except ServerError as e:
            reply = {"jsonrpc": "2.0", "id": rid, "error": {"code": e.code, "message": e.java_class, "data": e.data}}
        except (ValueError, UnicodeDecodeError) as e:
            reply = {"jsonrpc": "2.0", "id": rid, "error": {"code": -32700, "message": f"Parse error: {e}"}}
        except TypeError as e:
            reply = {"jsonrpc": "2.0", "id": rid, "error": {"code": -32602, "message": f"Invalid params: {e}"}}
        return json.dumps(reply, ensure_ascii=False).encode("utf-8")

    # --- methods --------------------------------------------------------------------------
    def device_info(self) -> dict[str, Any]:
        p = self.device.phone
        with self.device.lock:
            pkg = p.current_package()
            p.info()  # the logical display size after any rotation or wm size
        return {"currentPackageName": pkg, "displayHeight": p.height, "displayWidth": p.width,
                "displayRotation": p.rotation(), "displaySizeDpX": round(p.width * 160 / 420),
                "displaySizeDpY": round(p.height * 160 / 420), "naturalOrientation": p.rotation() % 2 == 0,
                "productName": "artemis_sim", "screenOn": p.screen_on, "sdkInt": 34}

    def dump_hierarchy(self, compressed: bool = False, max_depth: int = 50, root_in_active: bool | None = None) -> str:
        """Every window as its own top-level node, in a seeded order that is not the drawing order
        (``SimPhone.u2_dump``); ``root_in_active``: the active window only."""
        with self.device.lock:
            fault = self.device.phone.faults.dump_fault()
            if fault == "null_root":
                return ""  # what the server answers when UiAutomation has no root node
            return self.device.phone.u2_dump(active_only=bool(root_in_active))

    def take_screenshot(self, scale: float = 1, quality: int = 80) -> str | None:
        with self.device.lock:
            if self.device.phone.faults.screencap_fails():
                return None
            img = self.device.phone.render_image().convert("RGB")
        if scale and scale != 1:
            img = img.resize((max(1, round(img.width * scale)), max(1, round(img.height * scale))))
        buf = io.BytesIO()
        img.save(buf, format="JPEG", quality=max(1, min(int(quality), 100)))
        return base64.b64encode(buf.getvalue()).decode("ascii")

    def click(self, x: Any, y: Any = None, duration_ms: int | None = None) -> bool:
        """``click(x, y[, ms])`` at a point, or ``click(selector[, corner])`` on an object."""
        if isinstance(x, dict):
            return self.objects.click(x, y)
        with self.device.lock:
            if duration_ms is not None and duration_ms >= 500:
                self.device.phone.do_long_press(int(x), int(y))
            else:
                self.device.phone.do_tap(int(x), int(y))
        return True

    def swipe(self, fx: Any, fy: Any, *rest: Any) -> bool:
        """``swipe(fx, fy, tx, ty[, steps])``, or ``swipe(selector, dir[, percent], steps)``."""
        if isinstance(fx, dict):
            return self.objects.swipe(fx, fy, *rest)
        if len(rest) not in (2, 3):
            raise TypeError(f"swipe takes 4 or 5 numbers, got {2 + len(rest)}")
        tx, ty = rest[0], rest[1]
        steps = rest[2] if len(rest) == 3 else 10
        with self.device.lock:
            self.device.phone.do_swipe(int(fx), int(fy), int(tx), int(ty), int(steps) * 5)
        return True

    def drag(self, sx: int, sy: int, ex: int, ey: int, steps: int = 100) -> bool:
        """UiDevice.drag: touch down, hold for the long-press timeout, move, up (a drag, not a swipe)."""
        with self.device.lock:
            self.device.phone.do_drag(int(sx), int(sy), int(ex), int(ey))
        return True

    def swipe_points(self, points: list[int], steps: int = 100) -> bool:
        if len(points) < 4:
            raise RpcError(-32602, "swipePoints needs at least two points")
        return self.swipe(points[0], points[1], points[-2], points[-1], steps)

    # --- rotation, System UI, toasts ---------------------------------------------------------
    def set_orientation(self, direction: Any) -> None:
        """UiDevice.setOrientationLeft/Right/Natural(/UpsideDown): freeze the rotation there
        (``accelerometer_rotation`` 0, ``user_rotation`` N), as UiAutomation.setRotation does."""
        rot = _ORIENTATIONS.get(str(direction).lower())
        if rot is None:
            raise ServerError("java.lang.IllegalArgumentException", f"Invalid orientation: {direction}")
        with self.device.lock:
            p = self.device.phone
            p.settings.put("system", "accelerometer_rotation", "0")
            p.settings.put("system", "user_rotation", str(rot))
            p.invalidate()

    def freeze_rotation(self, freeze: Any = True) -> None:
        """UiDevice.freezeRotation(): auto-rotate off at the current rotation; unfreeze turns
        auto-rotate on, and a phone lying still on a desk is upright (rotation 0)."""
        with self.device.lock:
            p = self.device.phone
            if freeze is False:
                p.settings.put("system", "accelerometer_rotation", "1")
            else:
                p.settings.put("system", "user_rotation", str(p.rotation()))
                p.settings.put("system", "accelerometer_rotation", "0")
            p.invalidate()

    def open_notification(self) -> bool:
        with self.device.lock:
            self.device.phone.shade.pull_down()
            self.device.phone.invalidate()
        return True

    def open_quick_settings(self) -> bool:
        with self.device.lock:
            self.device.phone.shade.pull_down(quick_settings=True)
            self.device.phone.invalidate()
        return True

    def make_toast(self, text: Any, duration_ms: Any = 1000) -> bool:
        """The server's own Toast: the sim does not draw it, but ``last_toast`` reads it back."""
        self.device.u2.toast = str(text)
        return True

    def get_last_toast(self) -> str | None:
        return self.device.u2.toast

    def clear_last_toast(self) -> None:
        self.device.u2.toast = None

    def wake_up(self) -> None:
        with self.device.lock:
            self.device.phone.set_screen(True)

    def sleep(self) -> None:
        with self.device.lock:
            self.device.phone.set_screen(False)

    def is_screen_on(self) -> bool:
        with self.device.lock:
            return self.device.phone.screen_on

    def press_key_code(self, code: int, meta: int | None = None) -> bool:
        with self.device.lock:
            err = self.device.phone.sh.keyevent(str(int(code)))
        if err:
            raise RpcError(-32001, err.strip())
        return True

    def press_key(self, name: str) -> bool:
        key = str(name).lower()
        with self.device.lock:
            if key in _KEY_NAMES:
                self.device.phone.do_key(_KEY_NAMES[key])
                return True
        if key in _KEY_CODES:
            return self.press_key_code(_KEY_CODES[key])
        raise RpcError(-32001, f"java.lang.IllegalArgumentException: unknown key {name}")

    def set_clipboard(self, label: str | None, text: str) -> None:
        self.device.u2.clipboard = str(text)

    def get_clipboard(self) -> str:
        return self.device.u2.clipboard

    def paste_clipboard(self) -> None:
        with self.device.lock:
            if self.device.u2.clipboard:
                self.device.phone.do_type(self.device.u2.clipboard)

    def clear_input_text(self) -> None:
        self.device.clear_focused_field()

    def inject_input_event(self, action: int, x: float, y: float, meta: int = 0) -> bool:
        """``touch.down/move/up``: one stroke, judged at ACTION_UP by its timing (sim/gestures.Stroke)."""
        with self.device.lock:
            self.device.u2.stroke.feed(self.device.phone, {0: "down", 2: "move", 1: "up"}.get(int(action), ""),
                                       round(x), round(y))
        return True


def _true(*_: Any) -> bool:
    return True


def _none(*_: Any) -> None:
    return None
