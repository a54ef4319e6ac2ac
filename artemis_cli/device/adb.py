"""The adb backend: a real phone or emulator driven through the adb server with adbutils.

Every command is one ``shell:`` call.  Connection failures before a command reaches the device
are retried with bounded backoff; a failure after an *action* was sent is never re-sent (its
effect is unknown: the caller re-observes).  Observations (screenshot, hierarchy, dumpsys,
getprop) are idempotent and are retried.
"""

from __future__ import annotations

import io
import re
import struct
import time
from collections.abc import Callable
from typing import Literal, overload

import adbutils
from PIL import Image

from artemis_cli.device.adb_link import (
    adb_server_reachable,
    is_network_serial,
    reconnect_network_device,
    require_attached,
    server_unreachable,
    wrap_adb_error,
)
from artemis_cli.device.adb_output import (
    DumpKind,
    DumpOutcome,
    broadcast_result,
    classify_dump_output,
    input_command_failed,
    parse_current_app,
    parse_ime_list,
    parse_input_shown,
    parse_sdk,
    parse_wm_size,
)
from artemis_cli.device.protocol import KEY_NAMES, KEYCODE_MOVE_END, KEYCODES, DeviceInfo
from artemis_cli.device.text_input import (
    ADB_KEYBOARD_IME,
    KEYCODE_ENTER,
    adb_keyboard_broadcast,
    needs_ime,
    plan_text_input,
    split_lines_for_ime,
)
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
from artemis_cli.perception.png import PNG_SIGNATURE, png_size
from artemis_cli.perception.wm_windows import WmWindow, parse_window_list

__all__ = ["AdbDevice", "DumpKind", "DumpOutcome", "RawFrameError", "classify_dump_output", "decode_raw_screencap",
           "png_size"]

PNG_MAGIC = PNG_SIGNATURE
# pre-Nougat `shell:` runs in a pty that turns every \n into \r\n
_PNG_MAGIC_CRLF = b"\x89PNG\r\r\n\x1a\r\n"
DUMP_PATH = "/data/local/tmp/artemis_window_dump.xml"
_PACKAGE_RE = re.compile(r"^[A-Za-z][A-Za-z0-9_]*(\.[A-Za-z0-9_]+)+$")
#: Deletes one ``clear_text`` sends at most (a command line stays well under the shell's limit).
MAX_CLEAR_CHARS = 2000
#: `screencap` (no -p) pixel formats (android PixelFormat / HAL_PIXEL_FORMAT) decoded on the host:
#: format -> (bytes per pixel, PIL raw mode, PIL image mode)
RAW_FORMATS: dict[int, tuple[int, str, str]] = {
    1: (4, "RGBA", "RGBA"),  # RGBA_8888
    2: (4, "RGBX", "RGB"),  # RGBX_8888: the 4th byte is padding
    3: (3, "RGB", "RGB"),  # RGB_888
    5: (4, "BGRA", "RGBA"),  # BGRA_8888
}
MAX_RAW_SIDE = 16384
ScreencapMode = Literal["auto", "raw", "png"]
IME_HINT = (
    "install uiautomator2's AdbKeyboard with `python -m uiautomator2 init`, or use the u2 backend "
    "(--backend u2)"
)


class RawFrameError(ValueError):
    """`screencap` output that is not a frame this host can decode."""

    def __init__(self, message: str, *, transient: bool) -> None:
        super().__init__(message)
        self.transient = transient  # True: a failed capture (text, nothing); False: a format/size we cannot use


def decode_raw_screencap(data: bytes) -> Image.Image:
    """The image in raw `screencap` output: a header of little-endian u32 width, height, format
    and (Android 9+) a colour space, then width*height pixels. Raises RawFrameError."""
    if len(data) < 12:
        raise RawFrameError(f"{len(data)} bytes is too short for a raw frame: {data[:60]!r}", transient=True)
    w, h, fmt = struct.unpack_from("<III", data, 0)
    if not (0 < w <= MAX_RAW_SIDE and 0 < h <= MAX_RAW_SIDE):
        raise RawFrameError(f"not a raw frame header (size {w}x{h}): {data[:60]!r}", transient=True)
    spec = RAW_FORMATS.get(fmt)
    if spec is None:
        raise RawFrameError(f"raw pixel format {fmt} is not decoded here", transient=False)
    bpp, raw_mode, mode = spec
    body = w * h * bpp
    for header in (16, 12):  # 16: width, height, format, colour space (Android 9+); 12: before that
        if len(data) == header + body:
            pixels = data[header:]
            break
    else:
        raise RawFrameError(
            f"raw frame {w}x{h} format {fmt} needs {body} pixel bytes + a 12/16-byte header, got {len(data)}"
            " (a pty that rewrites line endings?)", transient=False,
        )
    if raw_mode == mode:  # shares the buffer, no copy
        return Image.frombuffer(mode, (w, h), pixels, "raw", raw_mode, 0, 1)
    return Image.frombytes(mode, (w, h), pixels, "raw", raw_mode)


def encode_png_fast(img: Image.Image) -> bytes:
    """Lossless PNG of ``img``; an alpha channel that is opaque everywhere is dropped (same pixels)."""
    if img.mode == "RGBA" and img.getchannel("A").getextrema() == (255, 255):
        img = img.convert("RGB")
    buf = io.BytesIO()
    img.save(buf, format="PNG", compress_level=1)
    return buf.getvalue()


class AdbDevice:
    """A device reached through the adb server at ``host:port``; see module docstring.

    Screenshots: ``screencap_mode`` "raw" reads raw `screencap` frames and encodes the PNG on the
    host (lossless; over USB often faster than the phone's own PNG encoder); "png" runs
    `screencap -p`; "auto" (default) times one raw capture and one `screencap -p` on a local
    (USB/emulator) device and keeps the faster for the session (``capture_ms``), and uses
    `screencap -p` for network (`adb connect`) devices, where moving ~4 bytes/pixel costs more
    than encoding on the phone. Output that is not a usable raw
    frame falls back to `screencap -p` for that capture; a frame the host cannot use (unknown pixel
    format, a size mangled by a pty) turns raw off for the session. ``last_capture`` says which
    path the latest screenshot took.
    """

    kind: Literal["adb"] = "adb"
    #: every command opens its own adb connection: observe() may overlap screenshot, dump and
    #: current app
    concurrent_reads: bool = True

    def __init__(
        self,
        serial: str,
        *,
        host: str = "127.0.0.1",
        port: int = 5037,
        dump_retries: int = 3,
        sleep: Callable[[float], None] = time.sleep,
        timeout: float = 30.0,
        connect_retries: int = 2,
        auto_connect: bool = True,
        dump_path: str = DUMP_PATH,
        screencap_retries: int = 1,
        screencap_mode: ScreencapMode = "auto",
    ) -> None:
        self.serial = serial
        self.host = host
        self.port = port
        self.dump_retries = max(1, dump_retries)
        self.timeout = timeout
        self.connect_retries = max(0, connect_retries)
        self.dump_path = dump_path
        self.screencap_retries = max(0, screencap_retries)
        self._sleep = sleep
        self._info: DeviceInfo | None = None
        self.screencap_mode = screencap_mode
        self.raw_screencap = screencap_mode == "raw" or (screencap_mode == "auto" and not is_network_serial(serial))
        # auto on a local device: the first capture is raw, the next the phone's PNG, both timed
        self._probe: str | None = "raw" if screencap_mode == "auto" and self.raw_screencap else None
        self.capture_ms: dict[str, float] = {}  # the probe's timings (auto)
        self.last_capture: str | None = None  # "raw" | "png" | "png-fallback: <why>"
        self.last_capture_lossless = True  # both paths are lossless
        self.fallback_reason: str | None = None  # set by resolve_device when u2 failed
        if not adb_server_reachable(host, port):
            raise server_unreachable(host, port, serial)
        self._client = adbutils.AdbClient(host=host, port=port, socket_timeout=10)
        require_attached(self._client, serial, auto_connect=auto_connect)
        self._dev = self._client.device(serial)
        self._logs = LogWatch(lambda command: self._run(command, what="logcat", idempotent=True))

    # --- connection -----------------------------------------------------------------------

    @overload
    def _run(self, cmd: str, *, what: str, idempotent: bool, raw: Literal[False] = False) -> str: ...

    @overload
    def _run(self, cmd: str, *, what: str, idempotent: bool, raw: Literal[True]) -> bytes: ...

    def _run(self, cmd: str, *, what: str, idempotent: bool, raw: bool = False) -> str | bytes:
        """Run ``cmd`` via ``shell:``; retry connection failures within bounds (see module doc)."""
        last: DeviceError | None = None
        for attempt in range(self.connect_retries + 1):
            if attempt:
                self._sleep(min(0.5 * 2 ** (attempt - 1), 4.0))
                if is_network_serial(self.serial):  # a dropped `adb connect` device: ask for it back
                    reconnect_network_device(self._client, self.serial)
            try:
                conn = self._dev.open_shell(cmd)
            except (adbutils.AdbError, OSError, EOFError) as e:
                last = wrap_adb_error(e, self.serial, what)
                if isinstance(last, DeviceOffline | DeviceNotFound):
                    continue  # never reached the device: safe to try again
                raise last from e
            try:
                conn.conn.settimeout(self.timeout)
                data = conn.read_until_close(encoding=None)
            except (adbutils.AdbError, OSError, EOFError) as e:
                last = wrap_adb_error(e, self.serial, what)
                if idempotent and isinstance(last, DeviceOffline):
                    continue
                raise last from e
            finally:
                conn.close()
            assert isinstance(data, bytes)
            if raw:
                return data
            return data.decode("utf-8", errors="replace").replace("\r\n", "\n")
        assert last is not None
        raise last

    def _action(self, cmd: str, what: str) -> str:
        out = self._run(cmd, what=what, idempotent=False)
        if input_command_failed(out):
            raise ShellError(
                f"device {self.serial!r}: {what} failed: {out.strip()[:300]}",
                hint="the device refused the input command (is USB debugging (Security settings) allowed?)",
            )
        return out

    # --- Device protocol ------------------------------------------------------------------

    def info(self) -> DeviceInfo:
        if self._info is None:
            model = self._run("getprop ro.product.model", what="getprop", idempotent=True).strip()
            sdk = parse_sdk(self._run("getprop ro.build.version.sdk", what="getprop", idempotent=True))
            size = parse_wm_size(self._run("wm size", what="wm size", idempotent=True))
            if size is None:
                size = png_size(self.screenshot())
            if size is None:
                raise ShellError(f"device {self.serial!r}: cannot read the screen size (`wm size`)")
            self._info = DeviceInfo(
                serial=self.serial, kind="adb", model=model or "unknown", width=size[0],
                height=size[1], sdk=sdk,
            )
        return self._info

    def screenshot(self) -> bytes:
        use_raw = self.raw_screencap and self._probe != "png"
        t0 = time.perf_counter()
        png = self._raw_shot() if use_raw else self._screencap_png()
        if not use_raw:
            self.last_capture = "png"
        if self._probe is not None:  # auto: time one capture each way, then keep the faster
            ms = (time.perf_counter() - t0) * 1000
            if self.last_capture in ("raw", "png"):
                self.capture_ms[self.last_capture] = round(ms, 3)
            if not self.raw_screencap:
                self._probe = None  # raw is unusable here: nothing to compare
            elif self._probe == "raw" and self.last_capture == "raw":
                self._probe = "png"
            elif self._probe == "png":
                self._probe = None
                self.raw_screencap = self.capture_ms.get("raw", ms + 1) <= ms
        return png

    def _raw_shot(self) -> bytes:
        data = self._run("screencap", what="screencap", idempotent=True, raw=True)
        try:
            png = encode_png_fast(decode_raw_screencap(data))
        except RawFrameError as e:
            if not e.transient:
                self.raw_screencap = False  # the same thing would happen every time
            reason = str(e)
        else:
            self.last_capture = "raw"
            return png
        png = self._screencap_png()
        self.last_capture = f"png-fallback: {reason}"
        return png

    def _screencap_png(self) -> bytes:
        data = b""
        for attempt in range(self.screencap_retries + 1):  # "Capturing failed." is often transient
            if attempt:
                self._sleep(0.2 * attempt)
            data = self._run("screencap -p", what="screencap", idempotent=True, raw=True)
            if data.startswith(PNG_MAGIC):
                return data
            if data.startswith(_PNG_MAGIC_CRLF):
                fixed = data.replace(b"\r\n", b"\n")
                if fixed.startswith(PNG_MAGIC):
                    return fixed
        raise ScreenshotError(
            f"device {self.serial!r}: `screencap -p` returned {len(data)} bytes that are not a PNG: "
            f"{data[:80]!r}",
            hint="is the screen on and the device unlocked?",
        )

    def hierarchy(self) -> str:
        seen: list[str] = []
        attempts = [False] * self.dump_retries + [True]  # last: `uiautomator dump --compressed`
        for n, compressed in enumerate(attempts):
            if n:
                self._sleep(min(0.25 * n, 1.0))
            xml, note = self._dump_once(compressed)
            if xml is not None:
                return xml
            seen.append(f"{'compressed ' if compressed else ''}attempt {n + 1}: {note.detail}")
            if not note.retryable:
                break
        hint = "wake and unlock the screen; animations block idle state"
        if any("already registered" in s for s in seen):
            hint = "another UiAutomation (the uiautomator2 server) holds the device: use --backend u2"
        raise HierarchyError(
            f"device {self.serial!r}: uiautomator dump failed: " + "; ".join(seen), hint=hint
        )

    def _dump_once(self, compressed: bool) -> tuple[str | None, DumpOutcome]:
        path = self.dump_path
        self._run(f"rm -f {path}", what="rm", idempotent=True)  # never read a stale dump
        flag = " --compressed" if compressed else ""
        out = self._run(f"uiautomator dump{flag} {path}", what="uiautomator dump", idempotent=True)
        outcome = classify_dump_output(out)
        if outcome.kind is not DumpKind.OK and not outcome.retryable:
            return None, outcome
        content = self._run(f"cat {path}", what="cat dump", idempotent=True)
        if "<hierarchy" in content:
            start = content.find("<?xml")
            return (content[start:] if start >= 0 else content[content.find("<hierarchy") :]), outcome
        if not outcome.ok:
            return None, DumpOutcome(outcome.kind, True, outcome.detail)
        if not content.strip() or "no such file" in content.lower():
            problem = "dump reported success but left no file"
        else:
            problem = f"dump file is not a hierarchy: {content.strip()[:80]!r}"
        return None, DumpOutcome(DumpKind.UNKNOWN, True, problem)

    def tap(self, x: int, y: int) -> None:
        self._action(f"input tap {int(x)} {int(y)}", "tap")

    def long_press(self, x: int, y: int, duration_ms: int = 800) -> None:
        x, y = int(x), int(y)
        self._action(f"input swipe {x} {y} {x} {y} {int(duration_ms)}", "long press")

    def swipe(self, x1: int, y1: int, x2: int, y2: int, duration_ms: int = 300) -> None:
        self._action(
            f"input swipe {int(x1)} {int(y1)} {int(x2)} {int(y2)} {int(duration_ms)}", "swipe"
        )

    def double_tap(self, x: int, y: int) -> None:
        """Both taps in ONE shell command: the second ``input`` starts as soon as the first ends
        (an app_process start, about 100-250 ms), inside Android's 300 ms double-tap timeout; two
        ``adb shell`` round trips would add the transport's delay and often miss it."""
        x, y = int(x), int(y)
        self._action(f"input tap {x} {y}; input tap {x} {y}", "double tap")

    def drag(self, x1: int, y1: int, x2: int, y2: int, duration_ms: int = 1000) -> None:
        """``input draganddrop`` (Android 7.0, API 24, and later): DOWN, a hold of the long-press
        timeout, the move over ``duration_ms``, UP, in one process, so the phone does the timing.
        ``input swipe`` moves at once (a scroll, not a drag) and ``input motionevent`` (Android 11+)
        starts a process per event, leaving the hold to the host; neither is a drag everywhere."""
        sdk = self.info().sdk
        if sdk is not None and sdk < 24:
            raise ShellError(
                f"device {self.serial!r}: drag needs `input draganddrop` (Android 7.0, API 24); this "
                f"device runs API {sdk}",
                hint="use the u2 backend (its drag holds before it moves) or long_press then swipe",
            )
        self._action(
            f"input draganddrop {int(x1)} {int(y1)} {int(x2)} {int(y2)} {max(1, int(duration_ms))}", "drag"
        )

    def key(self, name: str) -> None:
        code = KEYCODES.get(name)
        if code is None:
            raise UsageError(f"unknown key {name!r}; allowed: {', '.join(KEY_NAMES)}")
        self._action(f"input keyevent {code}", f"key {name}")

    def launch(self, package: str) -> None:
        if not _PACKAGE_RE.match(package):
            raise UsageError(f"not a package name: {package!r}")
        out = self._run(
            f"monkey -p {package} -c android.intent.category.LAUNCHER 1",
            what=f"launch {package}", idempotent=False,
        )
        if "no activities found" in out.lower() or "monkey aborted" in out.lower():
            raise ShellError(
                f"device {self.serial!r}: cannot launch {package}: no launcher activity "
                "(is the app installed?)",
                hint=f"check `adb shell pm list packages {package}`",
            )

    def current_app(self) -> str | None:
        return self.window_report()[0]

    def window_report(self) -> tuple[str | None, list[WmWindow]]:
        """The app in front and the window manager's windows, top-most first, from one ``dumpsys
        window`` (the observation reads it in place of :meth:`current_app`: ``uiautomator dump``
        holds the active window only, and the bars and the keyboard come from here —
        perception/wm_windows.py)."""
        out = self._run("dumpsys window", what="dumpsys window", idempotent=True)
        pkg = parse_current_app(out)
        if pkg is None:
            pkg = parse_current_app(self._run("dumpsys activity activities", what="dumpsys activity", idempotent=True))
        return pkg, parse_window_list(out)

    def keyboard_shown(self) -> bool | None:
        """From ``dumpsys input_method`` (``uiautomator dump`` holds the active window only, never
        the keyboard's); None when the output does not say. observe() runs it beside its other reads."""
        return parse_input_shown(self._run("dumpsys input_method", what="dumpsys input_method", idempotent=True))

    def log_events(self) -> LogEvents:
        """Error lines (crashes, ANRs) logged since the last call: one ``logcat`` call
        (perception/logcat.py); observe() runs it beside its other reads."""
        return self._logs.read()

    def shell(self, command: str) -> str:
        """Output of ``command`` (stdout and stderr, as `adb shell` shows them).

        Raises ShellError/DeviceOffline when the command cannot be run; the command's own exit
        status is not available over the legacy ``shell:`` service.
        """
        return self._run(command, what=f"shell {command[:40]!r}", idempotent=False)

    def type_text(self, text: str) -> None:
        if not text:
            return
        if needs_ime(text):
            self._type_with_ime(text)
            return
        for step in plan_text_input(text):
            out = self._run(step.command(), what="type text", idempotent=False)
            if input_command_failed(out):
                raise TextInputError(
                    f"device {self.serial!r}: `input text` failed: {out.strip()[:300]}"
                )

    def clear_text(self, length: int) -> None:
        """The cursor to the end, then ``length`` deletes: one ``input keyevent`` call (it takes
        several keycodes), never one adb round trip per character."""
        n = max(0, min(int(length), MAX_CLEAR_CHARS))
        codes = " ".join([str(KEYCODE_MOVE_END), *[str(KEYCODES["delete"])] * n])
        out = self._run(f"input keyevent {codes}", what="clear text", idempotent=False)
        if input_command_failed(out):
            raise TextInputError(f"device {self.serial!r}: clearing the field failed: {out.strip()[:300]}")

    def _type_with_ime(self, text: str) -> None:
        imes = parse_ime_list(self._run("ime list -s -a", what="ime list", idempotent=True))
        if ADB_KEYBOARD_IME not in imes:
            raise TextInputError(
                f"non-ASCII text needs an IME; install {ADB_KEYBOARD_IME} "
                "(`python -m uiautomator2 init`) or use the u2 backend",
                hint=IME_HINT,
            )
        current = self._run(
            "settings get secure default_input_method", what="settings get", idempotent=True
        ).strip()
        if current != ADB_KEYBOARD_IME:
            self._run(f"ime enable {ADB_KEYBOARD_IME}", what="ime enable", idempotent=True)
            self._run(f"ime set {ADB_KEYBOARD_IME}", what="ime set", idempotent=True)
        for piece in split_lines_for_ime(text):
            if piece is None:
                self._action(f"input keyevent {KEYCODE_ENTER}", "key enter")
                continue
            result: int | None = None
            for attempt in range(6):
                if attempt:
                    self._sleep(0.2)  # the IME service registers its receiver when it starts
                out = self._run(adb_keyboard_broadcast(piece), what="AdbKeyboard", idempotent=False)
                result = broadcast_result(out)
                if result == -1:
                    break
                if result != 0:  # 0: no receiver yet, nothing was typed; anything else: give up
                    break
            if result != -1:
                raise TextInputError(
                    f"device {self.serial!r}: AdbKeyboard did not accept the text (result={result})",
                    hint="focus a text field first; " + IME_HINT,
                )

    def close(self) -> None:
        """Nothing to release: every command opens and closes its own adb connection."""

    def __repr__(self) -> str:
        return f"AdbDevice(serial={self.serial!r}, adb={self.host}:{self.port})"
