"""Observation: one screenshot + UI XML, parsed and indexed, with its hashes.

Capture failures (including a dump with unparseable or empty content) are retried a bounded
number of times with backoff; a dropped connection gets its own reconnect budget; a device that
stays away raises DeviceOffline to the runner, which stops the session as resumable.

A dump of the active window alone (``uiautomator dump`` on a phone) gets the other windows on
screen — the bars, the keyboard, the app under a dialog — from the window manager when the device
reports them (``device.window_report()``, an optional method: adb's answer to "which app is in
front" comes from the same ``dumpsys window``, so it costs nothing more), added to the stored XML
as childless windows (:mod:`artemis_cli.perception.wm_windows`).

Whether the keyboard is shown comes from the dump when it can say (an input method's window in
a dump of every window), else from the device when it can (``device.keyboard_shown()``, an
optional method: adb reads ``dumpsys input_method``; on a concurrent device it runs beside the
other reads, so it costs no round trip of its own), else it is None.

The error lines logged since the previous observation (crashes, ANRs: ``device.log_events()``,
an optional method, ``perception.logcat``) are read the same way: beside the other reads on a
concurrent device, after them on the sim; a failure of that read is a problem of its events
(``Observation.logs.problems``), never the observation's.

The three reads (screenshot, hierarchy, current app) run concurrently on devices whose
connections allow it (``device.concurrent_reads``: adb and u2 open a connection per request);
an observation then costs about its slowest read, not the sum. The in-process sim phone is not
thread-safe and is read sequentially. Either way each read keeps its own retries, problems are
reported in the same order (screenshot, hierarchy, current app) from the calling thread, and the
reconnect budget is shared by the whole observation. ``Observation.timings`` records what ran.

:func:`settle` watches the screen after an action instead of sleeping a fixed time.
"""

from __future__ import annotations

import hashlib
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from typing import Any, TypeVar

from artemis_cli.device.protocol import Device
from artemis_cli.errors import DeviceOffline, HierarchyError, HierarchyParseError, ScreenshotError
from artemis_cli.perception.coords import CoordinateSpace
from artemis_cli.perception.dhash import dhash_hex
from artemis_cli.perception.elements import index_screen, render_element_list
from artemis_cli.perception.foreground import foreground_app
from artemis_cli.perception.hierarchy import parse_hierarchy
from artemis_cli.perception.hittest import HitIndex
from artemis_cli.perception.logcat import LogEvents
from artemis_cli.perception.modal import Modal, behind_line
from artemis_cli.perception.png import png_size
from artemis_cli.perception.screenshot import Screenshot, carried_pixels, without_pixels
from artemis_cli.perception.types import Element, UITree
from artemis_cli.perception.windows import keyboard_in_dump
from artemis_cli.perception.wm_windows import WmWindow, with_wm_windows


@dataclass
class Observation:
    png: bytes
    xml: str
    tree: UITree
    elements: list[Element]
    dhash: str
    foreground: str | None
    space: CoordinateSpace
    captured_at: float  # monotonic seconds
    problems: list[str] = field(default_factory=list)
    _element_list: str | None = None
    #: milliseconds per read that ran ("screenshot", "hierarchy", "current_app", retries
    #: included) and "total" for the whole observation
    timings: dict[str, float] = field(default_factory=dict)
    #: whether the reads overlapped (device.concurrent_reads)
    concurrent: bool = False
    #: how the screenshot was taken, when the backend says (device.last_capture), e.g. "raw",
    #: "png", "png-fallback: …", "u2-jpeg"; None for backends that do not record it
    capture_path: str | None = None
    #: False when the backend's capture was lossy (uiautomator2's JPEG)
    capture_lossless: bool = True
    #: set on a post-action observation: how long the screen was waited for ("watch"), slept
    #: ("fixed"), or the floor plus this observation when it showed the effect ("observed"), in ms
    settle_ms: float | None = None
    settle_mode: str | None = None
    #: the on-screen keyboard: shown, hidden, or None when neither the dump nor the device can say
    keyboard_shown: bool | None = None
    #: what the device logged since the previous observation (None: the device cannot say);
    #: a settled observation carries those of every observation settle() took
    logs: LogEvents | None = None
    #: the modal window in front (a dialog: ``perception.modal``) and how many elements of the
    #: windows under it are left out of ``elements``; the element list ends with a line counting them
    modal: Modal | None = None
    behind_modal: int = 0
    #: the picture ``png`` encodes when the backend drew it (the sim: ``perception.screenshot``),
    #: handed over once to this step's model copy (:meth:`model_screenshot`), never kept after
    pixels: Any = field(default=None, repr=False, compare=False)

    def model_screenshot(self) -> bytes:
        """The screenshot for the model's copy (scaled, marked): the PNG carrying its picture when
        there is one, so that copy needs no decode (~5-10 ms a step). Handed over once: the
        observation keeps only the bytes after (observations outlive their step)."""
        png = self.png if self.pixels is None else Screenshot(self.png, self.pixels)
        self.pixels = None
        return png

    @property
    def xml_sha(self) -> str:
        return hashlib.sha256(self.xml.encode("utf-8")).hexdigest()

    @property
    def element_list(self) -> str:
        if self._element_list is None:
            listed = render_element_list(self.elements, self.space)
            hidden = behind_line(self.modal, self.behind_modal)
            self._element_list = "\n".join(x for x in (listed, hidden) if x)
        return self._element_list

    def focused_element(self) -> Element | None:
        return next((e for e in self.elements if e.node.focused), None)


T = TypeVar("T")

_EMPTY_XML = "<?xml version='1.0' encoding='UTF-8' standalone='yes' ?><hierarchy rotation=\"0\" />"
_READS = ("screenshot", "hierarchy", "current_app")


def concurrent_reads(device: Device) -> bool:
    """Whether ``device`` allows its reads to overlap (an optional attribute; default False)."""
    return bool(getattr(device, "concurrent_reads", False))


def observe(
    device: Device,
    screen: tuple[int, int],
    coordinates: str,
    *,
    retries: int = 3,
    offline_retries: int = 6,
    backoff_s: float = 0.5,
    max_backoff_s: float = 2.0,
    sleep: Callable[[float], None] = time.sleep,
    on_problem: Callable[[str, str], None] | None = None,
    concurrent: bool | None = None,
) -> Observation:
    """Capture and parse the current screen.

    Hierarchy and screenshot failures are retried ``retries`` times; a dump that "succeeds" with
    unparseable or empty content is re-dumped the same way. When no usable hierarchy comes the
    observation carries the last parsed tree (else an empty one) and a problem note (the model
    still gets the screenshot). DeviceOffline is retried ``offline_retries`` times with backoff
    (a reconnect window of a few seconds, counted per failure across the whole observation) and
    re-raised when the device stays away. ``concurrent`` (default: the device's
    ``concurrent_reads``) overlaps the three reads.
    """
    t_start = time.perf_counter()
    parallel = concurrent_reads(device) if concurrent is None else concurrent
    problems: list[str] = []
    budget_lock = threading.Lock()
    offline = {"left": offline_retries}
    # (read, what, detail) in the order they happened per read; reported from this thread
    reported: dict[str, list[tuple[str, str]]] = {name: [] for name in _READS}
    timings: dict[str, float] = {}
    abort = threading.Event()  # a read gave up for good: the others stop retrying

    def note(read: str, what: str, detail: str) -> None:
        if parallel:
            reported[read].append((what, detail))
        elif on_problem:
            on_problem(what, detail)

    def flush_notes() -> None:
        if parallel and on_problem:
            for name in _READS:
                for what, detail in reported[name]:
                    on_problem(what, detail)
                reported[name].clear()

    def attempt(what: str, fn: Callable[[], T]) -> T:
        delay = backoff_s
        tries = 0
        while True:
            try:
                return fn()
            except (HierarchyError, ScreenshotError, DeviceOffline, HierarchyParseError) as exc:
                note(what, what, f"{type(exc).__name__}: {exc}")
                if isinstance(exc, DeviceOffline):
                    with budget_lock:
                        offline["left"] -= 1
                        exhausted = offline["left"] < 0
                    if exhausted:
                        abort.set()
                        raise
                else:
                    tries += 1
                    if tries > retries:
                        raise
                if abort.is_set():
                    raise
                sleep(delay)
                delay = min(delay * 2, max_backoff_s)

    def timed(name: str, fn: Callable[[], T]) -> T:
        t0 = time.perf_counter()
        try:
            return fn()
        finally:
            timings[name] = round((time.perf_counter() - t0) * 1000, 3)

    capture: dict[str, Any] = {}

    def shoot() -> bytes:
        try:
            png = attempt("screenshot", device.screenshot)
        except BaseException:
            abort.set()  # no observation without a screenshot
            raise
        capture["path"] = getattr(device, "last_capture", None)
        capture["lossless"] = bool(getattr(device, "last_capture_lossless", True))
        return png

    last_empty: list[tuple[str, UITree]] = []

    def dump_and_parse(size: tuple[int, int]) -> tuple[str, UITree]:
        xml = device.hierarchy()
        tree = parse_hierarchy(xml, screen_size=size)
        if not tree.nodes:
            last_empty[:] = [(xml, tree)]
            raise HierarchyError("the UI hierarchy dump holds no nodes")
        return xml, tree

    def dump(size: tuple[int, int]) -> tuple[str, UITree] | Exception:
        """The parsed dump, or the HierarchyError/HierarchyParseError that ended its retries."""
        try:
            return attempt("hierarchy", lambda: dump_and_parse(size))
        except (HierarchyError, HierarchyParseError) as exc:
            return exc

    ask_windows = getattr(device, "window_report", None)
    wm: list[WmWindow] = []

    def current_app() -> str | None:
        """The app in front; on a device that reports its windows (adb: the same ``dumpsys
        window``), those windows too, for a dump of the active window alone."""
        try:
            if callable(ask_windows):
                package, windows = ask_windows()
                wm[:] = windows
                return package
            return device.current_app()
        except DeviceOffline:
            raise
        except Exception:
            return None

    ask_keyboard = getattr(device, "keyboard_shown", None)

    def keyboard() -> bool | None:
        """Optional: any failure (a dropped connection included: the other reads own the
        reconnect budget) leaves it unknown."""
        try:
            shown = ask_keyboard() if callable(ask_keyboard) else None
        except Exception:
            return None
        return shown if isinstance(shown, bool) else None

    ask_logs = getattr(device, "log_events", None)

    def logs() -> LogEvents | None:
        """Optional, like the keyboard: a failure is a problem of the events, not the step's."""
        try:
            events = ask_logs() if callable(ask_logs) else None
        except Exception as exc:
            return LogEvents(problems=[f"log read failed: {type(exc).__name__}: {str(exc)[:200]}"])
        return events if isinstance(events, LogEvents) else None

    def rotated(png: bytes) -> tuple[int, int]:
        shot = png_size(png)
        if shot is not None and shot != screen and shot == (screen[1], screen[0]):
            # rotated since DeviceInfo was read: screencap, the dump's bounds and input taps all use
            # the rotated frame, so this observation does too (the model is told the size it sees)
            return shot
        return screen

    device_keyboard: bool | None = None
    if parallel:
        with ThreadPoolExecutor(max_workers=5, thread_name_prefix="observe") as pool:
            futures: dict[str, Future[Any]] = {
                "screenshot": pool.submit(timed, "screenshot", shoot),
                "hierarchy": pool.submit(timed, "hierarchy", lambda: dump(screen)),
                "current_app": pool.submit(timed, "current_app", lambda: attempt("current_app", current_app)),
            }
            if callable(ask_keyboard):
                futures["keyboard"] = pool.submit(timed, "keyboard", keyboard)
            if callable(ask_logs):
                futures["logs"] = pool.submit(timed, "logs", logs)
            # wait for every read (a failed one must not leave the others running unseen)
            errors = [f.exception() for f in futures.values()]
        flush_notes()
        for exc in errors:
            if exc is not None:
                raise exc
        png = futures["screenshot"].result()
        new_screen = rotated(png)
        dumped = futures["hierarchy"].result()
        if new_screen != screen and not isinstance(dumped, Exception):
            xml0 = dumped[0]
            dumped = (xml0, parse_hierarchy(xml0, screen_size=new_screen))
        elif new_screen != screen and last_empty:
            xml0 = last_empty[0][0]
            last_empty[:] = [(xml0, parse_hierarchy(xml0, screen_size=new_screen))]
        screen = new_screen
        hint = futures["current_app"].result()
        device_keyboard = futures["keyboard"].result() if "keyboard" in futures else None
        events = futures["logs"].result() if "logs" in futures else None
    else:
        png = timed("screenshot", shoot)
        screen = rotated(png)
        dumped = timed("hierarchy", lambda: dump(screen))
        hint = None  # read below, after the dump, as before

    if isinstance(dumped, HierarchyError):
        if last_empty:
            xml, tree = last_empty[0]
            problems.append("UI hierarchy empty (no nodes in the dump); only the screenshot is current")
        else:
            problems.append(f"UI hierarchy unavailable ({dumped}); only the screenshot is current")
            xml, tree = _EMPTY_XML, parse_hierarchy(_EMPTY_XML, screen_size=screen)
    elif isinstance(dumped, HierarchyParseError):
        problems.append(f"UI hierarchy unreadable ({dumped}); only the screenshot is current")
        xml, tree = _EMPTY_XML, parse_hierarchy(_EMPTY_XML, screen_size=screen)
    elif isinstance(dumped, Exception):
        raise dumped
    else:
        xml, tree = dumped
    space = CoordinateSpace(screen[0], screen[1], coordinates)  # type: ignore[arg-type]

    if not parallel:
        hint = timed("current_app", lambda: attempt("current_app", current_app))
    if wm and tree.nodes:  # a dump of the active window: the other windows from the window manager
        merged = with_wm_windows(xml, wm)
        if merged != xml:
            xml, tree = merged, parse_hierarchy(merged, screen_size=screen)
    shown = keyboard_in_dump(HitIndex.of(tree).windows) if tree.nodes else None
    if shown is None:
        shown = device_keyboard if parallel else (timed("keyboard", keyboard) if callable(ask_keyboard) else None)
    if not parallel:
        events = timed("logs", logs) if callable(ask_logs) else None
    timings["total"] = round((time.perf_counter() - t_start) * 1000, 3)
    listed = index_screen(tree)
    return Observation(
        png=without_pixels(png),  # hashed from the picture it carries (the sim's); kept as bytes
        pixels=carried_pixels(png),
        xml=xml,
        tree=tree,
        elements=listed.elements,
        modal=listed.modal,
        behind_modal=listed.behind,
        dhash=dhash_hex(png),
        foreground=foreground_app(tree, hint),
        space=space,
        captured_at=time.monotonic(),
        problems=problems,
        timings=timings,
        concurrent=parallel,
        capture_path=capture.get("path"),
        capture_lossless=capture.get("lossless", True),
        keyboard_shown=shown,
        logs=events,
    )


def seen_again(device: Device, seen: Observation | None) -> Observation | None:
    """``seen`` again, for one screenshot instead of a full observation, when a screenshot now is
    byte for byte the one ``seen`` was observed with: nothing drawn on the screen changed since.
    None (observe the screen in full) when it differs in any pixel, when there is no ``seen`` or
    it had a problem (a dump that failed), or when the capture failed.

    Pixels, not the dHash: the 64-bit hash of a 9x8 grid does not see one word change in a list
    row, whose element the client may be about to tap. What even equal pixels miss is a change
    of the hierarchy that draws nothing (a content-desc, a node's state that is not shown):
    the screen is then taken as the earlier dump described it, as a person looking at it would.

    The copy returned is the earlier observation (its dump, elements, foreground app, keyboard)
    with this capture's time and timings (``screenshot``, ``total``, and ``dump_age``: how old
    the dump it reuses is, in ms) and no log events (the device's next full observation reads
    the lines logged since the last one)."""
    if seen is None or seen.problems:
        return None
    t0 = time.perf_counter()
    try:
        png = device.screenshot()
    except (ScreenshotError, DeviceOffline):
        return None
    if without_pixels(png) != seen.png:
        return None
    ms = round((time.perf_counter() - t0) * 1000, 3)
    now = time.monotonic()
    return replace(seen, captured_at=now, problems=[], logs=None, settle_ms=None, settle_mode=None,
                   pixels=carried_pixels(png), capture_path=getattr(device, "last_capture", seen.capture_path),
                   timings={"screenshot": ms, "total": ms, "dump_age": round((now - seen.captured_at) * 1000, 3)})


def carry_logs(earlier: Observation, later: Observation) -> Observation:
    """``later`` holding ``earlier``'s log events before its own: one step's observations
    (settle's re-observations, recovery actions) each read the lines since the one before."""
    if earlier is not later and earlier.logs is not None:
        later.logs = earlier.logs.merged(later.logs)
    return later


@dataclass
class SettleResult:
    obs: Observation
    mode: str  # "observed" | "watch" | "fixed"
    settle_ms: float
    captures: int = 0  # cheap screenshots taken while watching
    stable: bool = True  # False: the bound was reached while the screen still changed


def settle(
    device: Device,
    take: Callable[[], Observation],
    *,
    floor_s: float = 0.0,
    max_s: float = 2.0,
    watch: bool = True,
    poll_s: float = 0.05,
    sleep: Callable[[float], None] = time.sleep,
    clock: Callable[[], float] = time.monotonic,
    judge: Callable[[Observation], bool] | None = None,
    hurried: Callable[[], bool] | None = None,
) -> SettleResult:
    """The post-action observation, taken once the screen has stopped changing.

    Sleeps ``floor_s`` first (a user's fixed settle time). With ``watch`` and ``max_s > 0``, when
    ``judge`` says the observation ``take()`` makes already shows the action's effect it is kept
    as it is: mode ``observed``, no screenshot taken only to confirm stillness, ``settle_ms`` the
    floor plus that observation (``operators.settling``: the next step's observation is the
    confirmation). Otherwise the observation is confirmed by one cheap screenshot: an equal dHash means
    the screen was already still and that observation is kept (the usual case: one extra
    screenshot, no extra observation). Otherwise screenshots are polled until two in a row are
    equal, and the screen is observed again; all bounded by ``max_s`` from the start (a screen
    still changing then is observed once more, as it is), past which the first capture is still
    taken (an observation that alone outlasted ``max_s`` is confirmed, not thrown away). Without
    ``watch`` (or ``max_s`` 0) this is the fixed sleep then ``take()``. A failing cheap capture ends the watching (the
    observation stands). Once ``hurried()`` says so (the process is stopping) the watching ends
    as at ``max_s``.
    """
    t0 = clock()
    if floor_s > 0:
        sleep(floor_s)
    obs = take()
    if not watch or max_s <= 0:
        return _settled(obs, "fixed", (clock() - t0) * 1000, 0, True)
    if judge is not None and judge(obs):
        return _settled(obs, "observed", (clock() - t0) * 1000, 0, True)
    deadline = t0 + max(max_s, floor_s)
    captures = 0
    previous: str | None = None
    stable = False
    while True:
        # the bound ends the watching, never before its first capture: an observation slower than
        # the bound (a phone's dump can take 2 s) is confirmed by one screenshot, not taken again
        past = clock() >= deadline
        if (past and captures) or (hurried is not None and hurried()):
            break
        try:
            shot = dhash_hex(device.screenshot())
        except (ScreenshotError, DeviceOffline):
            stable = True  # cannot watch: the observation stands as taken
            break
        captures += 1
        if shot == obs.dhash:
            stable = True
            break
        if shot == previous:  # stopped changing since the observation: observe it again
            obs = carry_logs(obs, take())
            previous = None
            continue
        previous = shot
        if poll_s > 0:
            sleep(poll_s)
    if not stable:
        obs = carry_logs(obs, take())  # the bound: observe the screen as it is now
    return _settled(obs, "watch", (clock() - t0) * 1000, captures, stable)


def _settled(obs: Observation, mode: str, ms: float, captures: int, stable: bool) -> SettleResult:
    obs.settle_ms = round(ms, 3)
    obs.settle_mode = mode
    return SettleResult(obs, mode, obs.settle_ms, captures, stable)
