"""Crashes and ANRs read from a phone's logcat: the parser and the per-device watcher.

Each observation asks the device for the error-level log lines written since the previous one
(``LogWatch.read``: ONE shell call, ``logcat -d -v epoch -b main,system,crash -T <last> *:E``).
The first call only establishes the baseline (``logcat -d -v epoch -t 1``: the newest line's
time), so crashes from before the session are never reported. The output is parsed in Android
14's ``threadtime`` layout with epoch times (``1700000000.123  4321  4321 E AndroidRuntime:
FATAL EXCEPTION: main``) into typed results:

* a Java crash: ``AndroidRuntime: FATAL EXCEPTION: <thread>``, ``Process: PKG, PID: N``, the
  exception line, ``\\tat …`` frames (``RuntimeInit``'s ``KillApplicationHandler``);
* a native crash: ``libc: Fatal signal 11 (SIGSEGV), … pid N (PKG)``;
* an ANR: ``ActivityManager: ANR in PKG (PKG/.Activity)``, ``PID: N``, ``Reason: …``
  (``ProcessErrorStateRecord.appNotResponding``);
* every other error line is counted (a few kept as samples).

Logcat output is device text: untrusted. Lines that do not parse are counted as a problem (the
step records it), never raised; every kept string is bounded and made one line. ``-T`` is
inclusive (lines at the given time come again), so lines already seen at the last time are
dropped.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

__all__ = ["AppFault", "LogEvents", "LogWatch", "parse_logcat"]

#: The buffers read: ``crash`` holds AndroidRuntime's and libc's crash lines, ``system``
#: ActivityManager's ANR report, ``main`` the apps' own errors.
BUFFERS = "main,system,crash"
#: Kept per read: crashes/ANRs, sample error lines, frames per crash; characters per string.
MAX_FAULTS = 5
MAX_SAMPLES = 3
MAX_FRAMES = 3
MAX_TEXT = 300
#: Output lines looked at per read (a flood of errors is counted only up to here).
MAX_LINES = 5000

_LINE = re.compile(
    r"^\s*(?P<sec>\d{1,12})\.(?P<frac>\d{1,9})\s+(?P<pid>\d{1,10})\s+(?P<tid>\d{1,10})\s+"
    r"(?P<prio>[VDIWEFA])\s(?P<tag>[^:]*?)\s*: ?(?P<msg>.*)$"
)
_PROCESS = re.compile(r"^Process: (?P<pkg>[^\s,]+), PID: (?P<pid>\d+)")
_ANR = re.compile(r"^ANR in (?P<proc>\S+)(?: \((?P<comp>[^)]*)\))?")
_NATIVE = re.compile(r"^Fatal signal .*?\bpid (?P<pid>\d+) \((?P<proc>[^)]*)\)")
_PACKAGE = re.compile(r"^[A-Za-z0-9_]+(?:\.[A-Za-z0-9_]+)*$")
_ERROR_PRIOS = frozenset("EFA")


def _clean(text: str, limit: int = MAX_TEXT) -> str:
    """One line of printable text, at most ``limit`` characters."""
    flat = "".join(ch if ch.isprintable() else " " for ch in text.replace("\t", " ")).strip()
    return flat if len(flat) <= limit else flat[:limit] + "…"


def _package(process: str) -> str:
    """The package of a process name (``com.foo:remote`` -> ``com.foo``); "" when it is none."""
    name = process.split(":", 1)[0].strip()
    return name if _PACKAGE.match(name) else ""


@dataclass(frozen=True)
class AppFault:
    """An app that crashed (``kind`` "crash") or stopped responding ("anr")."""

    kind: Literal["crash", "anr"]
    package: str
    pid: int | None
    #: the exception line ("java.lang.IllegalStateException: boom"), the native signal line, or
    #: the ANR's reason; device text, made one line and bounded
    detail: str
    frames: tuple[str, ...] = ()
    thread: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, "package": self.package, "pid": self.pid, "detail": self.detail,
                "frames": list(self.frames), "thread": self.thread}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> AppFault:
        kind: Literal["crash", "anr"] = "anr" if data.get("kind") == "anr" else "crash"
        pid = data.get("pid")
        return cls(kind, str(data.get("package") or ""), pid if isinstance(pid, int) else None,
                   str(data.get("detail") or ""), tuple(str(f) for f in data.get("frames") or ()),
                   str(data.get("thread") or ""))


@dataclass
class LogEvents:
    """What one or more log reads found."""

    faults: list[AppFault] = field(default_factory=list)
    #: error lines that are not part of a crash or an ANR
    errors: int = 0
    #: the first few of them, ``Tag: message`` (device text)
    samples: list[str] = field(default_factory=list)
    #: why the read (or part of it) could not be used; None when it could
    problems: list[str] = field(default_factory=list)
    #: this read only established the baseline: nothing before it is reported
    baseline: bool = False

    def __bool__(self) -> bool:
        return bool(self.faults or self.errors or self.problems)

    def merged(self, later: LogEvents | None) -> LogEvents:
        """These events followed by ``later``'s (the reads of one step)."""
        if later is None:
            return self
        return LogEvents(
            faults=[*self.faults, *later.faults][:MAX_FAULTS],
            errors=self.errors + later.errors,
            samples=[*self.samples, *later.samples][:MAX_SAMPLES],
            problems=[*self.problems, *later.problems][:MAX_SAMPLES],
            baseline=self.baseline and later.baseline,
        )

    def fault_of(self, package: str | None) -> AppFault | None:
        """The first crash or ANR of ``package``."""
        if not package:
            return None
        return next((f for f in self.faults if f.package == package), None)

    def to_dict(self) -> dict[str, Any]:
        return {"faults": [f.to_dict() for f in self.faults], "errors": self.errors,
                "samples": list(self.samples), "problems": list(self.problems)}

    @classmethod
    def from_dict(cls, data: dict[str, Any] | None) -> LogEvents:
        data = data if isinstance(data, dict) else {}
        errors = data.get("errors")
        return cls([AppFault.from_dict(f) for f in data.get("faults") or () if isinstance(f, dict)],
                   errors if isinstance(errors, int) else 0, [str(s) for s in data.get("samples") or ()],
                   [str(p) for p in data.get("problems") or ()])


@dataclass(frozen=True)
class _Entry:
    at: tuple[int, int]  # (seconds, nanoseconds)
    stamp: str  # as printed
    pid: int
    tid: int
    prio: str
    tag: str
    msg: str
    raw: str


def _entries(text: str) -> tuple[list[_Entry], int, str]:
    """Parsed lines, how many non-empty lines did not parse (dividers aside), and the first."""
    entries: list[_Entry] = []
    bad, first_bad = 0, ""
    for raw in text.splitlines()[:MAX_LINES]:
        line = raw.rstrip("\r")
        if not line.strip() or line.startswith("--------- "):  # "--------- beginning of crash"
            continue
        m = _LINE.match(line)
        if m is None:
            bad += 1
            first_bad = first_bad or line
            continue
        frac = m["frac"]
        entries.append(_Entry((int(m["sec"]), int(frac.ljust(9, "0")[:9])), f"{m['sec']}.{frac}",
                              int(m["pid"]), int(m["tid"]), m["prio"], m["tag"].strip(), m["msg"], line))
    return entries, bad, first_bad


def _crash(entries: list[_Entry], i: int) -> tuple[AppFault | None, int]:
    """The Java crash whose ``FATAL EXCEPTION`` line is ``entries[i]``; the index after it."""
    head = entries[i]
    thread = head.msg.split("FATAL EXCEPTION:", 1)[1].strip()
    package, pid, exception = "", None, ""
    frames: list[str] = []
    j = i + 1
    while j < len(entries):
        e = entries[j]
        if e.tag != head.tag or e.pid != head.pid or "FATAL EXCEPTION" in e.msg:
            break
        msg = e.msg
        m = _PROCESS.match(msg)
        if m and not package:
            package, pid = _package(m["pkg"]), int(m["pid"])
        elif msg.lstrip().startswith("at ") and exception:
            if len(frames) < MAX_FRAMES:
                frames.append(_clean(msg.strip()))
        elif not exception and msg.strip():
            exception = _clean(msg)
        j += 1
    if not package:
        return None, j
    return AppFault("crash", package, pid, exception or "unknown exception", tuple(frames), _clean(thread, 60)), j


def _anr(entries: list[_Entry], i: int) -> tuple[AppFault | None, int]:
    head = entries[i]
    m = _ANR.match(head.msg)
    assert m is not None
    package, pid, reason = _package(m["proc"]), None, ""
    j = i + 1
    while j < len(entries):
        e = entries[j]
        if e.tag != head.tag or e.pid != head.pid or e.tid != head.tid or _ANR.match(e.msg):
            break
        if e.msg.startswith("PID: ") and e.msg[5:].strip().isdigit():
            pid = int(e.msg[5:].strip())
        elif e.msg.startswith("Reason: "):
            reason = _clean(e.msg[8:])
        j += 1
    if not package:
        return None, j
    return AppFault("anr", package, pid, reason or "no reason given"), j


def _events(entries: list[_Entry]) -> LogEvents:
    out = LogEvents()
    i = 0
    while i < len(entries):
        e = entries[i]
        fault: AppFault | None = None
        if e.prio not in _ERROR_PRIOS:  # a phone that ignored the filter: not an error line
            i += 1
            continue
        if e.tag == "AndroidRuntime" and e.msg.startswith("FATAL EXCEPTION:"):
            fault, i = _crash(entries, i)
        elif e.tag == "ActivityManager" and _ANR.match(e.msg):
            fault, i = _anr(entries, i)
        elif e.tag == "libc" and (native := _NATIVE.match(e.msg)) and _package(native["proc"]):
            fault = AppFault("crash", _package(native["proc"]), int(native["pid"]), _clean(e.msg))
            i += 1
        else:
            out.errors += 1
            if len(out.samples) < MAX_SAMPLES:
                out.samples.append(_clean(f"{e.tag}: {e.msg}", 160))
            i += 1
            continue
        if fault is not None and len(out.faults) < MAX_FAULTS:
            out.faults.append(fault)
        elif fault is None:
            out.errors += 1
    return out


def parse_logcat(text: str) -> LogEvents:
    """The crashes, ANRs and other error lines in ``logcat -v epoch`` output."""
    entries, bad, first_bad = _entries(text)
    events = _events(entries)
    if bad:
        events.problems.append(f"{bad} logcat line{'s' if bad != 1 else ''} unreadable, e.g. {_clean(first_bad, 120)!r}")
    return events


class LogWatch:
    """The error lines a device logged since the previous ``read`` (see module docstring).

    ``shell`` runs one command on the device and returns its output. Thread-safe (observe()
    may run it beside the other reads). A read that fails leaves the state as it was: the next
    read covers the time again.
    """

    def __init__(self, shell: Callable[[str], str]) -> None:
        self._shell = shell
        self._lock = threading.Lock()
        self._started = False
        self._since: tuple[int, int] | None = None
        self._stamp = ""
        self._seen: set[str] = set()  # lines printed at ``_since`` already
        #: the baseline saw one line at ``_since`` (``-t 1``): every line at that time is old (the
        #: lines of one multi-line message, a whole crash, share its time)
        self._edge_old = False

    def command(self) -> str:
        if not self._started:
            return f"logcat -d -v epoch -b {BUFFERS} -t 1"
        since = f" -T {self._stamp}" if self._stamp else ""
        return f"logcat -d -v epoch -b {BUFFERS}{since} '*:E'"

    def read(self) -> LogEvents:
        with self._lock:
            try:
                text = self._shell(self.command())
            except Exception as exc:  # a device failure: a problem of this read, never the step's end
                return LogEvents(problems=[_clean(f"logcat failed: {type(exc).__name__}: {exc}", 200)])
            if not isinstance(text, str):
                return LogEvents(problems=["logcat gave no text"])
            entries, bad, first_bad = _entries(text)
            if bad and not entries:
                return LogEvents(problems=[f"logcat unreadable: {_clean(first_bad, 120)!r}"])
            if not self._started:
                self._started = True
                self._advance(entries)
                self._edge_old = True
                return LogEvents(baseline=True)
            fresh = [e for e in entries if self._since is None or e.at > self._since
                     or (e.at == self._since and not self._edge_old and e.raw not in self._seen)]
            self._advance(fresh)
            events = _events(fresh)
            if bad:
                events.problems.append(f"{bad} logcat line{'s' if bad != 1 else ''} unreadable, e.g. {_clean(first_bad, 120)!r}")
            return events

    def _advance(self, entries: list[_Entry]) -> None:
        if not entries:
            return
        newest = max(e.at for e in entries)
        if self._since is None or newest > self._since:
            self._since, self._seen, self._edge_old = newest, set(), False
            self._stamp = next(e.stamp for e in entries if e.at == newest)
        self._seen |= {e.raw for e in entries if e.at == newest}
