"""Device-latency profiles for the simulated phone: what a real phone charges per call.

The sim answers in microseconds; on a phone the device sets the pace of a step.  A profile
charges each device call its cost **on the adbd wire** (``artemis sim serve --latency pixel``,
or a task's ``sim: {latency: pixel}``), so the real ``adb``, adbutils and uiautomator2 all pay
it.  One hook, :meth:`Latency.charge`, sleeps a call's time *without holding any lock*: calls on
different adb connections (say a screenshot and a hierarchy dump in parallel) sleep
concurrently, as they overlap on a phone.  The phone's own state lock is taken only after the
charge, for the microseconds the sim needs.

Profiles:

* ``off`` (default): nothing is added; tests stay fast.
* ``pixel``: a 1080x2400 Pixel-class phone over USB (median seconds per call, below).
* ``fast``: ``pixel`` divided by 10 (for tests that need the shape, not the wait).

``pixel`` medians (seconds) and where they come from.  Published figures were measured on a
1440x3120 emulator: ``adb exec-out screencap -p`` 2.1 s median, raw ``screencap`` 0.7 s,
uiautomator2's on-device JPEG ``takeScreenshot`` 12-24 ms warm, ``uiautomator dump`` ~2.1 s vs
0.8-1.0 s for uiautomator2's server-side ``dumpWindowHierarchy`` (JSON-RPC), ``input tap``
~0.2 s.  Screen captures scale with the pixels encoded and moved: 1080x2400 is 2.59 MP against
4.49 MP, a factor 0.58.

=================  ======  =======================================================================
kind               median  basis
=================  ======  =======================================================================
screencap_png      1.20    ``screencap -p``: 2.1 s x 0.58 (PNG encoding dominates, per pixel)
screencap_raw      0.45    raw ``screencap``: 0.7 s x 0.58, rounded up (~10 MB still to move)
uiautomator_dump   1.60    ``uiautomator dump``: ~2.1 s, mostly fixed cost (app_process start,
                           waitForIdle), the tree walk scales a little with a smaller screen
u2_dump            0.80    u2 ``dumpWindowHierarchy``: low end of 0.8-1.0 s (warm server)
u2_screenshot      0.05    u2 ``takeScreenshot`` JPEG: 12-24 ms capture + base64 over HTTP/adb
input              0.20    ``input tap/swipe/text/keyevent`` (an app_process start each; a swipe's
                           own duration is not added)
am_start           0.60    ``am start`` / ``monkey -p``: activity launch (estimate)
dumpsys            0.15    ``dumpsys window`` / ``dumpsys activity`` (estimate)
u2_input           0.10    u2 JSON-RPC click/swipe/key/text: injected by the running server, no
                           process start (estimate: half of ``input``)
u2_rpc             0.01    other u2 JSON-RPC (deviceInfo, ping-like calls)
server_start       0.80    mobilecli's DeviceServer from ``app_process`` until its socket listens
                           (process start + UiAutomation connect; estimate); not a sleep: the
                           socket refuses connections until then
shell              0.05    any other shell command line (process spawn + round trip)
=================  ======  =======================================================================

mobilecli's DeviceServer (adbd/mobilecli_server.py), a persistent UiAutomation server like u2's,
pays ``u2_dump`` for ``device.dump.ui``, ``u2_screenshot`` for ``device.screenshot`` and ``u2_rpc``
for its other calls.

Each charge is the median times seeded log-normal jitter (sigma 0.25: most calls within
0.6x-1.6x of the median), drawn from ``random.Random`` seeded with (``--seed``, profile), so a
run's sequence of delays is reproducible.  A compound command line (``a; b && c | d``) pays its
most expensive part once.

The fault ``latency_ms:N`` (artemis_cli/sim/faults.py) is separate and stays: a flat delay on
every call, on top of the profile.
"""

from __future__ import annotations

import math
import random
import re
import shlex
import threading
import time
from collections import defaultdict
from collections.abc import Callable
from typing import Any

from artemis_cli.errors import UsageError

KINDS: tuple[str, ...] = ("screencap_png", "screencap_raw", "uiautomator_dump", "u2_dump", "u2_screenshot",
                          "input", "am_start", "dumpsys", "u2_input", "u2_rpc", "server_start", "shell")

PIXEL: dict[str, float] = {
    "screencap_png": 1.20,
    "screencap_raw": 0.45,
    "uiautomator_dump": 1.60,
    "u2_dump": 0.80,
    "u2_screenshot": 0.05,
    "input": 0.20,
    "am_start": 0.60,
    "dumpsys": 0.15,
    "u2_input": 0.10,
    "u2_rpc": 0.01,
    "server_start": 0.80,
    "shell": 0.05,
}

PROFILES: dict[str, dict[str, float]] = {
    "off": {},
    "pixel": PIXEL,
    "fast": {k: v / 10 for k, v in PIXEL.items()},
}
DEFAULT_PROFILE = "off"
SIGMA = 0.25  # log-normal jitter around each median

_SPLIT = re.compile(r"\|\||&&|[;|&\n]")
_U2_DUMP = {"dumpWindowHierarchy"}
_U2_SHOT = {"takeScreenshot"}
_U2_INPUT = {"click", "swipe", "drag", "swipePoints", "pressKeyCode", "pressKey", "injectInputEvent",
             "clearInputText", "pasteClipboard", "setClipboard", "longClick", "clickAndWaitForNewWindow",
             "setText", "scrollTo", "scrollForward", "scrollBackward", "scrollToBeginning", "scrollToEnd",
             "flingForward", "flingBackward", "wakeUp", "sleep"}


def parse_latency(name: str | None) -> str:
    """The profile named ``name`` (None/empty: ``off``); UsageError for an unknown name."""
    key = (name or DEFAULT_PROFILE).strip().lower()
    if key not in PROFILES:
        raise UsageError(f"unknown latency profile {name!r}",
                         hint=f"choose one of: {', '.join(PROFILES)}")
    return key


def _segment_kind(words: list[str]) -> str:
    # skip `VAR=value` prefixes and `exec`/`nohup`-style wrappers
    while words and (("=" in words[0] and not words[0].startswith("=")) or words[0] in ("exec", "nohup", "command")):
        words = words[1:]
    if not words:
        return "shell"
    cmd = words[0].rsplit("/", 1)[-1]
    args = words[1:]
    if cmd == "screencap":
        return "screencap_png" if "-p" in args or any(a.endswith(".png") for a in args) else "screencap_raw"
    if cmd == "uiautomator" and args[:1] == ["dump"]:
        return "uiautomator_dump"
    if cmd == "input" and args:
        return "input"
    if cmd == "am" and args[:1] in (["start"], ["start-activity"]):
        return "am_start"
    if cmd == "monkey":
        return "am_start"
    if cmd == "dumpsys":
        return "dumpsys"
    return "shell"


def shell_kind(command: str) -> str:
    """The call kind of a shell command line: its most expensive part (see the table above)."""
    best, best_cost = "shell", -1.0
    for seg in _SPLIT.split(command):
        try:
            words = shlex.split(seg)
        except ValueError:
            words = seg.split()
        kind = _segment_kind(words)
        cost = PIXEL[kind]
        if cost > best_cost:
            best, best_cost = kind, cost
    return best


def rpc_kind(method: str) -> str:
    """The call kind of a uiautomator2 JSON-RPC method."""
    if method in _U2_DUMP:
        return "u2_dump"
    if method in _U2_SHOT:
        return "u2_screenshot"
    if method in _U2_INPUT:
        return "u2_input"
    return "u2_rpc"


class Latency:
    """One profile's charges, with a seeded jitter stream; safe to share between threads."""

    def __init__(self, profile: str | None = DEFAULT_PROFILE, seed: int = 0,
                 sleep: Callable[[float], None] = time.sleep) -> None:
        self.profile = parse_latency(profile)
        self.medians = PROFILES[self.profile]
        self._rng = random.Random(f"artemis-sim-latency|{seed}|{self.profile}")
        self._lock = threading.Lock()  # guards the random stream and the counters, never a sleep
        self._sleep = sleep
        self.calls: dict[str, int] = defaultdict(int)
        self.charged_s: dict[str, float] = defaultdict(float)

    @property
    def active(self) -> bool:
        return bool(self.medians)

    def seconds(self, kind: str) -> float:
        """The time the next call of ``kind`` costs (draws from the seeded stream); 0 when off."""
        median = self.medians.get(kind, self.medians.get("shell", 0.0))
        if median <= 0:
            return 0.0
        with self._lock:
            z = self._rng.gauss(0.0, 1.0)
            delay = median * math.exp(SIGMA * max(-3.0, min(3.0, z)))
            self.calls[kind] += 1
            self.charged_s[kind] += delay
        return delay

    def charge(self, kind: str) -> float:
        """Sleep for one call of ``kind`` (no lock held while sleeping); returns the seconds slept."""
        delay = self.seconds(kind)
        if delay > 0:
            self._sleep(delay)
        return delay

    def charge_shell(self, command: str) -> float:
        return self.charge(shell_kind(command)) if self.active else 0.0

    def charge_rpc(self, method: str) -> float:
        return self.charge(rpc_kind(method)) if self.active else 0.0


#: In-process SimPhone methods and the backend call each stands for (uiautomator2's, the default
#: backend: screenshot = takeScreenshot, hierarchy = dumpWindowHierarchy, current_app = dumpsys).
_IN_PROCESS = {"screenshot": "u2_screenshot", "hierarchy": "u2_dump", "current_app": "dumpsys",
               "tap": "u2_input", "long_press": "u2_input", "swipe": "u2_input", "double_tap": "u2_input",
               "drag": "u2_input", "type_text": "u2_input",
               "key": "u2_input", "clear_text": "u2_input", "launch": "am_start", "shell": "shell"}


def charge_device(device: Any, latency: Latency) -> Any:
    """Make an in-process device (SimPhone) pay ``latency`` per call: each method in the table
    above is wrapped on the instance. A no-op for ``off``. Returns ``device``."""
    if not latency.active:
        return device
    for name, kind in _IN_PROCESS.items():
        fn = getattr(device, name, None)
        if fn is None or not callable(fn):
            continue

        def wrapped(*args: Any, _fn: Callable[..., Any] = fn, _kind: str = kind, **kwargs: Any) -> Any:
            latency.charge(_kind)
            return _fn(*args, **kwargs)

        setattr(device, name, wrapped)
    device.latency = latency
    return device
