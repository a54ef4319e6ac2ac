"""Probing the adb server and turning adbutils failures into Artemis errors."""

from __future__ import annotations

import contextlib
import re
import socket
import time

import adbutils

from artemis_cli.errors import DeviceError, DeviceNotFound, DeviceOffline, ShellError

ADB_HINT = "check `adb devices`; for a network device run `adb connect HOST:PORT`"
SERVER_HINT = "start it with `adb start-server` (or check ANDROID_ADB_SERVER_PORT), then `adb devices`"


def adb_server_reachable(host: str, port: int, timeout: float = 0.5) -> bool:
    """True when something accepts TCP connections at the adb server address.

    adbutils would otherwise spawn `adb start-server` on a refused connection; we probe first
    so that "no adb" is answered quickly and without side effects.
    """
    try:
        with socket.create_connection((host, port), timeout=timeout):
            return True
    except OSError:
        return False


def server_unreachable(host: str, port: int, serial: str | None = None) -> DeviceOffline:
    who = f"device {serial!r}: " if serial else ""
    return DeviceOffline(f"{who}adb server not reachable at {host}:{port}", hint=SERVER_HINT)


def wrap_adb_error(exc: BaseException, serial: str, what: str) -> DeviceError:
    """Map an adbutils/socket failure to DeviceNotFound / DeviceOffline / ShellError."""
    text = str(exc) or type(exc).__name__
    low = text.lower()
    if isinstance(exc, adbutils.AdbTimeout | TimeoutError | socket.timeout):
        return DeviceOffline(f"device {serial!r}: {what} timed out ({text})", hint=ADB_HINT)
    if isinstance(exc, ConnectionError | EOFError) or "connect to adb server" in low:
        return DeviceOffline(f"device {serial!r}: connection lost during {what} ({text})", hint=ADB_HINT)
    if "unauthorized" in low:
        return DeviceOffline(
            f"device {serial!r} is unauthorized",
            hint="unlock the phone and accept the USB debugging prompt, then `adb devices`",
        )
    if "offline" in low:
        return DeviceOffline(f"device {serial!r} is offline ({text})", hint="reconnect it; " + ADB_HINT)
    if "not found" in low and "device" in low:
        return DeviceNotFound(f"device {serial!r} not found ({text})", hint=ADB_HINT)
    if isinstance(exc, OSError):
        return DeviceOffline(f"device {serial!r}: {what} failed ({text})", hint=ADB_HINT)
    return ShellError(f"device {serial!r}: {what} failed: {text}", hint=ADB_HINT)


_NETWORK_SERIAL_RE = re.compile(r"^[\w.-]+:\d+$")


def is_network_serial(serial: str) -> bool:
    """``HOST:PORT`` serials are devices attached with `adb connect` (they can be re-connected)."""
    return _NETWORK_SERIAL_RE.match(serial) is not None


def reconnect_network_device(client: adbutils.AdbClient, serial: str) -> bool:
    """`adb disconnect` + `adb connect` a network serial (after a drop); True when it is back.

    The adb server retries dropped TCP devices by itself, but only every few seconds; asking
    it directly brings a device that is reachable again back at once. Never raises.
    """
    if not is_network_serial(serial):
        return False
    with contextlib.suppress(adbutils.AdbError, OSError, EOFError):
        client.disconnect(serial, raise_error=False)
    try:
        client.connect(serial, timeout=3)
        deadline = time.monotonic() + 2.0
        while True:  # the CNXN handshake completes just after `connect` returns
            if any(d.serial == serial and d.state == "device" for d in client.list()):
                return True
            if time.monotonic() > deadline:
                return False
            time.sleep(0.05)
    except (adbutils.AdbError, OSError, EOFError):
        return False


def require_attached(
    client: adbutils.AdbClient, serial: str, *, auto_connect: bool = True
) -> None:
    """Raise DeviceNotFound/DeviceOffline unless ``serial`` is attached in state "device".

    A network serial (``HOST:PORT``) that is not attached yet is `adb connect`-ed first.
    """
    where = f"{client.host}:{client.port}"

    def states() -> dict[str, str]:
        try:
            return {d.serial: d.state for d in client.list()}
        except (adbutils.AdbError, OSError, EOFError) as e:
            raise wrap_adb_error(e, serial, "listing devices") from e

    found = states()
    if serial not in found and auto_connect and _NETWORK_SERIAL_RE.match(serial):
        try:
            reply = client.connect(serial, timeout=5)
        except (adbutils.AdbError, OSError, EOFError) as e:
            raise DeviceOffline(f"`adb connect {serial}` failed: {e}", hint=ADB_HINT) from e
        found = states()
        if serial not in found:
            raise DeviceNotFound(f"`adb connect {serial}` did not attach it: {reply}", hint=ADB_HINT)
    state = found.get(serial)
    if state is None:
        attached = ", ".join(sorted(found)) or "none"
        raise DeviceNotFound(
            f"device {serial!r} is not attached to the adb server at {where} (attached: {attached})",
            hint=ADB_HINT,
        )
    if state != "device":
        err = wrap_adb_error(adbutils.AdbError(f"device {state}"), serial, "connect")
        if not isinstance(err, DeviceOffline):
            err = DeviceOffline(f"device {serial!r} is {state}", hint=ADB_HINT)
        raise err
