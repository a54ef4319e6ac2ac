"""The one device protocol every backend implements (SPEC §7)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, Protocol, runtime_checkable

DeviceKind = Literal["sim", "adb", "u2"]
KeyName = Literal["back", "home", "enter", "recents", "delete", "tab", "escape", "search", "menu", "volume_up",
                  "volume_down"]
KEY_NAMES: tuple[str, ...] = ("back", "home", "enter", "recents", "delete", "tab", "escape", "search", "menu",
                              "volume_up", "volume_down")

# Android KEYCODE_* values for the names above (input keyevent N).
KEYCODE_MOVE_END = 123  # the cursor to the end of the focused field's text
KEYCODES: dict[str, int] = {
    "home": 3,
    "back": 4,
    "menu": 82,
    "search": 84,
    "enter": 66,
    "delete": 67,
    "tab": 61,
    "escape": 111,
    "volume_up": 24,
    "volume_down": 25,
    "recents": 187,
}


@dataclass(frozen=True)
class DeviceInfo:
    serial: str
    kind: DeviceKind
    model: str
    width: int
    height: int
    sdk: int | None = None


@runtime_checkable
class Device(Protocol):
    """Synchronous device interface. Coordinates are always physical pixels.

    Optional attributes (read with ``getattr`` and a default, so they are not protocol members
    and every existing device still matches): ``concurrent_reads: bool`` (default False) - the
    backend lets screenshot, hierarchy and current_app run at the same time from different
    threads (adb and u2 do; the in-process sim phone does not); ``last_capture: str | None`` -
    how the latest screenshot was taken; ``last_capture_lossless: bool`` (default True) - False
    when that capture was lossy (uiautomator2's JPEG). Optional methods: ``keyboard_shown()``
    (bool | None) and ``log_events()`` - the crashes, ANRs and error lines logged since its
    previous call (``perception.logcat.LogEvents``; the first call only sets the baseline), one
    shell call that observe() runs beside its other reads.
    """

    def info(self) -> DeviceInfo: ...

    def screenshot(self) -> bytes:
        """PNG bytes of the current screen. Raises ScreenshotError / DeviceOffline."""
        ...

    def hierarchy(self) -> str:
        """uiautomator XML of the current screen. Raises HierarchyError / DeviceOffline."""
        ...

    def tap(self, x: int, y: int) -> None: ...

    def long_press(self, x: int, y: int, duration_ms: int = 800) -> None: ...

    def swipe(self, x1: int, y1: int, x2: int, y2: int, duration_ms: int = 300) -> None: ...

    def double_tap(self, x: int, y: int) -> None:
        """Two taps close enough in time (Android: within 300 ms) to be one double tap."""
        ...

    def drag(self, x1: int, y1: int, x2: int, y2: int, duration_ms: int = 1000) -> None:
        """Press at (x1, y1), hold past the long-press timeout, move to (x2, y2) in ``duration_ms``,
        release: what reorders a list item or moves an icon (a swipe moves at once and scrolls)."""
        ...

    def type_text(self, text: str) -> None:
        """Type into the focused field. Raises TextInputError when it cannot do so faithfully."""
        ...

    def clear_text(self, length: int) -> None:
        """Empty the focused text field with the backend's own means, in one device operation.

        ``length`` is how many characters the field shows (from the latest dump; a field showing
        its hint counts the hint): a backend that deletes key by key deletes that many from the
        end of the text, wherever the cursor was. Raises TextInputError when it cannot.
        """
        ...

    def key(self, name: str) -> None:
        """Press one of KEY_NAMES."""
        ...

    def launch(self, package: str) -> None: ...

    def current_app(self) -> str | None:
        """Foreground package, when the device can say; None otherwise."""
        ...

    def shell(self, command: str) -> str:
        """Run a shell command; returns its combined output. Raises ShellError on failure."""
        ...

    def close(self) -> None: ...
