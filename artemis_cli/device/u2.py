"""The u2 backend: a real device driven through uiautomator2's on-device server.

Faster hierarchy dumps and screenshots than plain adb, and Unicode text through uiautomator2's
AdbKeyboard IME.  Constructing a ``U2Device`` starts (or reuses) the server on the device; if it
cannot, construction raises DeviceOffline/DeviceNotFound and ``resolve_device`` falls back to adb.
"""

from __future__ import annotations

import base64
import io
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from typing import Any, Literal, TypeVar

import adbutils
import uiautomator2
from PIL import Image

from artemis_cli.device.adb_link import (
    ADB_HINT,
    adb_server_reachable,
    is_network_serial,
    reconnect_network_device,
    require_attached,
    server_unreachable,
    wrap_adb_error,
)
from artemis_cli.device.protocol import KEY_NAMES, KEYCODES, DeviceInfo
from artemis_cli.device.text_input import KEYCODE_ENTER, split_lines_for_ime
from artemis_cli.errors import (
    DeviceError,
    DeviceNotFound,
    DeviceOffline,
    HierarchyError,
    ScreenshotError,
    ShellError,
    TextInputError,
    UsageError,
)
from artemis_cli.perception.logcat import LogEvents, LogWatch
from artemis_cli.perception.png import PNG_SIGNATURE

_u2x = uiautomator2.exceptions
# the server or the link to it is gone: the device is (for now) unreachable
_OFFLINE_ERRORS: tuple[type[BaseException], ...] = (
    _u2x.ConnectError,
    _u2x.HTTPError,
    _u2x.UiAutomationError,
)
T = TypeVar("T")
PNG_MAGIC = PNG_SIGNATURE
U2_HINT = "run `python -m uiautomator2 init` once, or use --backend adb"


def _check_coords(*values: int) -> list[int]:
    out = [int(v) for v in values]
    if any(v < 0 for v in out):
        raise UsageError(f"coordinates must be non-negative pixels, got {out}")
    return out


class U2Device:
    """Screenshots are the server's JPEG (``takeScreenshot``, quality 80: the fastest capture it
    has, but lossy: ``last_capture_lossless`` is False) re-encoded as PNG; dumps are the server's
    own (``dumpWindowHierarchy``). ``last_capture`` says which path the latest screenshot took."""

    kind: Literal["u2"] = "u2"
    #: uiautomator2 sends each JSON-RPC call on a fresh HTTP connection through adb (core.py
    #: ``_http_request`` opens an ``AdbHTTPConnection`` per request; no shared session), and
    #: ``app_current`` is an adb shell call: observe() may overlap screenshot, dump and current app
    concurrent_reads: bool = True
    last_capture: str | None = None  # "u2-jpeg" | "png" (screencap -p when the server gave none)
    last_capture_lossless: bool = True

    def __init__(
        self,
        serial: str,
        *,
        host: str | None = None,
        port: int | None = None,
        connect: Callable[[adbutils.AdbDevice], Any] = uiautomator2.connect,
    ) -> None:
        """Start/reuse the uiautomator2 server on ``serial``.

        The adb server (``host:port``, default from ANDROID_ADB_SERVER_HOST/PORT) is probed and
        the serial looked up first, so that a missing server or device fails at once instead
        of uiautomator2 waiting 10 s or spawning an adb server.  ``connect`` receives an
        ``adbutils.AdbDevice`` bound to that server (``uiautomator2.connect`` accepts one).
        """
        from artemis_cli.device.select import adb_address

        self.serial = serial
        default_host, default_port = adb_address()
        self.host = host or default_host
        self.port = port or default_port
        self._info: DeviceInfo | None = None
        self._logs = LogWatch(self.shell)
        client = self._precheck()
        try:
            self._d = connect(client.device(serial))
        except DeviceError:
            raise
        except _u2x.ConnectError as e:
            raise DeviceNotFound(f"device {serial!r} is not online: {e}", hint=ADB_HINT) from e
        except (adbutils.AdbError, OSError, EOFError) as e:
            err = wrap_adb_error(e, serial, "starting the uiautomator2 server")
            if isinstance(err, DeviceOffline | DeviceNotFound):
                raise err from e
            raise DeviceOffline(
                f"device {serial!r}: uiautomator2 server did not start: {e}", hint=U2_HINT
            ) from e
        except Exception as e:  # any uiautomator2 failure: LaunchUiAutomationError, HTTPError, …
            raise DeviceOffline(
                f"device {serial!r}: uiautomator2 server did not start: {type(e).__name__}: {e}",
                hint=U2_HINT,
            ) from e

    def _precheck(self) -> adbutils.AdbClient:
        if not adb_server_reachable(self.host, self.port):
            raise server_unreachable(self.host, self.port, self.serial)
        client = adbutils.AdbClient(host=self.host, port=self.port, socket_timeout=10)
        require_attached(client, self.serial)
        return client

    @contextmanager
    def _wrap(self, what: str, other: type[DeviceError] = ShellError) -> Iterator[None]:
        try:
            yield
        except DeviceError:
            raise
        except _u2x.AdbShellError as e:
            raise ShellError(f"device {self.serial!r}: {what} failed: {e}", hint=ADB_HINT) from e
        except _OFFLINE_ERRORS as e:
            raise DeviceOffline(
                f"device {self.serial!r}: uiautomator2 server unreachable during {what}: "
                f"{type(e).__name__}: {e}",
                hint=U2_HINT,
            ) from e
        except (adbutils.AdbError, OSError, EOFError) as e:
            raise wrap_adb_error(e, self.serial, what) from e
        except (_u2x.BaseException, ValueError, AssertionError) as e:
            raise other(f"device {self.serial!r}: {what} failed: {type(e).__name__}: {e}") from e

    # --- Device protocol ------------------------------------------------------------------

    def info(self) -> DeviceInfo:
        if self._info is None:
            with self._wrap("device info"):
                w, h = self._d.window_size()
                meta = self._d.device_info
            sdk = meta.get("sdk")
            self._info = DeviceInfo(
                serial=self.serial, kind="u2", model=str(meta.get("model") or "unknown"),
                width=int(w), height=int(h), sdk=sdk if isinstance(sdk, int) else None,
            )
        return self._info

    def screenshot(self) -> bytes:
        """PNG of the screen: the server's JPEG (takeScreenshot), else `screencap -p` over adb.

        uiautomator2's own fallback turns a failed screencap into a black image; here a failure
        is a ScreenshotError, never a picture of nothing.
        """
        def take() -> bytes:
            with self._wrap("screenshot", ScreenshotError):
                b64 = self._d.jsonrpc.takeScreenshot(1, 80)
            if isinstance(b64, str) and b64:
                try:
                    img = Image.open(io.BytesIO(base64.b64decode(b64)))
                    img.load()
                except (ValueError, OSError) as e:
                    raise ScreenshotError(f"device {self.serial!r}: unreadable screenshot from uiautomator2: {e}") from e
                buf = io.BytesIO()
                img.convert("RGB").save(buf, format="PNG", compress_level=1)
                self.last_capture, self.last_capture_lossless = "u2-jpeg", False
                return buf.getvalue()
            with self._wrap("screencap", ScreenshotError):
                data = self._d.adb_device.shell(["screencap", "-p"], encoding=None)
            if isinstance(data, bytes) and data.startswith(PNG_MAGIC):
                self.last_capture, self.last_capture_lossless = "png", True
                return data
            raise ScreenshotError(
                f"device {self.serial!r}: screenshot failed (uiautomator2 gave none; screencap said "
                f"{bytes(data or b'')[:60]!r})",
                hint="is the screen on and the device unlocked?",
            )

        return self._observe(take)

    def _observe(self, fn: Callable[[], T]) -> T:
        """Run an idempotent observation; after a drop of a network device, reconnect and retry once."""
        try:
            return fn()
        except DeviceOffline:
            if not is_network_serial(self.serial):
                raise
            client = adbutils.AdbClient(host=self.host, port=self.port, socket_timeout=10)
            if not reconnect_network_device(client, self.serial):
                raise
            return fn()

    def hierarchy(self) -> str:
        def dump() -> str:
            with self._wrap("hierarchy dump", HierarchyError):
                return str(self._d.dump_hierarchy())

        xml = self._observe(dump)
        if not isinstance(xml, str) or "<hierarchy" not in xml:
            raise HierarchyError(f"device {self.serial!r}: dump is not a hierarchy: {str(xml)[:80]!r}")
        if "<node" not in xml:  # uiautomator2 substitutes an empty hierarchy after 3 null roots
            raise HierarchyError(
                f"device {self.serial!r}: empty hierarchy (null root node)",
                hint="wake and unlock the screen",
            )
        return xml

    def tap(self, x: int, y: int) -> None:
        x, y = _check_coords(x, y)
        with self._wrap("tap"):
            self._d.click(x, y)

    def long_press(self, x: int, y: int, duration_ms: int = 800) -> None:
        x, y = _check_coords(x, y)
        with self._wrap("long press"):
            self._d.long_click(x, y, duration=max(duration_ms, 1) / 1000)

    def swipe(self, x1: int, y1: int, x2: int, y2: int, duration_ms: int = 300) -> None:
        x1, y1, x2, y2 = _check_coords(x1, y1, x2, y2)
        with self._wrap("swipe"):
            self._d.swipe(x1, y1, x2, y2, duration=max(duration_ms, 10) / 1000)

    def double_tap(self, x: int, y: int) -> None:
        """uiautomator2's double_click: touch down/up, 0.1 s, a click (injectInputEvent + click RPCs)."""
        x, y = _check_coords(x, y)
        with self._wrap("double tap"):
            self._d.double_click(x, y, duration=0.1)

    def drag(self, x1: int, y1: int, x2: int, y2: int, duration_ms: int = 1000) -> None:
        """uiautomator2's drag: the server's UiDevice.drag, which holds for the long-press timeout
        before it moves (a swipe does not)."""
        x1, y1, x2, y2 = _check_coords(x1, y1, x2, y2)
        with self._wrap("drag"):
            self._d.drag(x1, y1, x2, y2, duration=max(duration_ms, 10) / 1000)

    def type_text(self, text: str) -> None:
        for piece in split_lines_for_ime(text):
            if piece is None:
                with self._wrap("key enter"):
                    self._d.press(KEYCODE_ENTER)
                continue
            with self._wrap("type text", TextInputError):
                self._d.send_keys(piece, clear=False)

    def clear_text(self, length: int) -> None:
        """uiautomator2's own clear: the AdbKeyboard's clear broadcast when that IME is
        installed, else the server's ``clearInputText`` (the whole field, wherever the cursor is)."""
        with self._wrap("clear text", TextInputError):
            self._d.clear_text()

    def key(self, name: str) -> None:
        code = KEYCODES.get(name)
        if code is None:
            raise UsageError(f"unknown key {name!r}; allowed: {', '.join(KEY_NAMES)}")
        with self._wrap(f"key {name}"):
            self._d.press(code)

    def launch(self, package: str) -> None:
        from artemis_cli.device.adb import _PACKAGE_RE

        if not _PACKAGE_RE.match(package):
            raise UsageError(f"not a package name: {package!r}")
        with self._wrap(f"launch {package}"):
            # what d.app_start(package) runs, but we read its output to detect a missing app
            out = self._d.shell(
                ["monkey", "-p", package, "-c", "android.intent.category.LAUNCHER", "1"]
            ).output
        if "no activities found" in out.lower() or "monkey aborted" in out.lower():
            raise ShellError(
                f"device {self.serial!r}: cannot launch {package}: no launcher activity "
                "(is the app installed?)",
                hint=f"check `adb shell pm list packages {package}`",
            )

    def current_app(self) -> str | None:
        def current() -> Any:
            with self._wrap("current app"):
                return self._d.app_current().get("package")

        try:
            pkg = self._observe(current)
        except ShellError as e:
            if "focused app" in str(e):
                return None  # "Couldn't get focused app": the device cannot say
            raise
        return str(pkg) if pkg else None

    def log_events(self) -> LogEvents:
        """Error lines (crashes, ANRs) logged since the last call: one ``logcat`` through the
        adb shell (perception/logcat.py); observe() runs it beside its other reads."""
        return self._logs.read()

    def shell(self, command: str) -> str:
        with self._wrap(f"shell {command[:40]!r}"):
            return str(self._d.shell(command).output)

    def close(self) -> None:
        with suppress(Exception):  # best effort; the server also stops at interpreter exit
            self._d.stop_uiautomator(wait=False)

    def __repr__(self) -> str:
        return f"U2Device(serial={self.serial!r})"
