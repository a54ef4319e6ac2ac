"""Touch timing on the simulated phone: when two taps are a double tap, as Android decides it.

Android's GestureDetector calls a second tap a double tap when its DOWN comes at most
``DOUBLE_TAP_TIMEOUT`` (300 ms) and at least ``DOUBLE_TAP_MIN_TIME`` (40 ms) after the first
tap, close enough to it (``DOUBLE_TAP_SLOP``, 100 dp; the sim is stricter: 100 px).  Slower taps
are two taps.  The sim keeps a touch clock to decide it:

* what comes from outside over a transport (an ``adb shell`` command, a uiautomator2 RPC) is
  stamped with the real time it arrived: two ``adb shell input tap`` calls 150 ms apart are a
  double tap on a phone and here;
* inside one shell command the clock does not follow the wall: each ``input`` invocation costs
  ``INPUT_START_MS`` (the ``app_process`` start of Android's ``input`` command, about 100-250 ms on
  current phones) and ``sleep N`` costs N seconds, so ``input tap X Y; input tap X Y`` is a double
  tap and ``input tap X Y; sleep 0.4; input tap X Y`` is not, whatever the host's load;
* each call of the in-process Device protocol is ``CALL_GAP_MS`` after the previous one (a step of
  an agent): two ``tap()`` calls are two taps, ``double_tap()`` is the double tap.

Drags: Android's ``input draganddrop`` (and uiautomator's ``drag``) press, hold past the
long-press timeout, then move; ``input swipe`` moves at once.  The hold is what makes a drag:
a list item that can be reordered follows a drag and ignores a swipe (the list scrolls).
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from artemis_cli.sim.phone import SimPhone

DOUBLE_TAP_TIMEOUT_MS = 300.0
DOUBLE_TAP_MIN_MS = 40.0
DOUBLE_TAP_SLOP_PX = 100
DOUBLE_TAP_GAP_MS = 100.0  # between the two taps of the in-process double_tap()
INPUT_START_MS = 150.0
CALL_GAP_MS = 1000.0
LONG_PRESS_TIMEOUT_MS = 500
SWIPE_MIN = 100  # px of vertical travel for a swipe to scroll
TAP_SLOP = 10  # px: a "swipe" shorter than this is a tap (or a long press when >= 500 ms)


class TouchClock:
    """Milliseconds on the phone's touch timeline (see the module docstring)."""

    def __init__(self) -> None:
        self._t0 = time.monotonic()
        self._real_ms = 0.0
        self._offset_ms = 0.0

    def arrive(self) -> None:
        """A command or RPC arrived from outside: the timeline catches up with the wall clock."""
        self._real_ms = max(self._real_ms, (time.monotonic() - self._t0) * 1000.0)

    def advance(self, ms: float) -> None:
        self._offset_ms += max(0.0, ms)

    def now(self) -> float:
        return self._real_ms + self._offset_ms


class TapTracker:
    """The previous tap, to tell a double tap from two taps."""

    def __init__(self) -> None:
        self._last: tuple[float, int, int] | None = None

    def tap(self, t: float, x: int, y: int) -> bool:
        """Record a tap at time ``t``; True when it is the second tap of a double tap."""
        prev, self._last = self._last, (t, x, y)
        if prev is None:
            return False
        pt, px, py = prev
        double = (DOUBLE_TAP_MIN_MS <= t - pt <= DOUBLE_TAP_TIMEOUT_MS
                  and abs(x - px) <= DOUBLE_TAP_SLOP_PX and abs(y - py) <= DOUBLE_TAP_SLOP_PX)
        if double:
            self._last = None  # a third quick tap starts a new gesture
        return double

    def forget(self) -> None:
        self._last = None


class Stroke:
    """One finger's DOWN, MOVEs and UP sent one by one (uiautomator2's ``touch``, ``input
    motionevent``), judged at UP by its timing as a phone does: held past the long-press timeout
    before it first moved beyond ``slop`` → a drag; moved sooner → a swipe; never moved → a tap, or
    a long press when held that long (``do_swipe`` decides by the duration)."""

    def __init__(self, slop: int) -> None:
        self.slop = slop
        self.down_at: tuple[float, int, int] | None = None
        self.held_ms: float | None = None

    def down(self, t: float, x: int, y: int) -> None:
        self.down_at, self.held_ms = (t, x, y), None

    def move(self, t: float, x: int, y: int) -> None:
        if self.down_at is not None and self.held_ms is None:
            t0, x0, y0 = self.down_at
            if max(abs(x - x0), abs(y - y0)) > self.slop:
                self.held_ms = t - t0

    def up(self, t: float) -> tuple[str, int, int, int] | None:
        """``("drag" | "swipe", x0, y0, pressed_ms)`` for the stroke that ends, None without a DOWN."""
        if self.down_at is None:
            return None
        (t0, x0, y0), held = self.down_at, self.held_ms
        self.down_at = None
        kind = "drag" if held is not None and held >= LONG_PRESS_TIMEOUT_MS else "swipe"
        return kind, x0, y0, round(t - t0)

    def feed(self, phone: SimPhone, event: str, x: int, y: int) -> None:
        """One event (``down``, ``move``, ``up``) at the phone's touch time; at ``up`` the phone acts."""
        t = phone.touch.now()
        if event == "down":
            self.down(t, x, y)
        elif event == "move":
            self.move(t, x, y)
        elif event == "up" and (done := self.up(t)) is not None:
            kind, x0, y0, pressed = done
            if kind == "drag":
                phone.do_drag(x0, y0, x, y)
            else:
                phone.do_swipe(x0, y0, x, y, pressed)
