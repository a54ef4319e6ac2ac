"""Pure parsers for what Android shell commands print (unit-tested with real-format samples)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import Enum

# --- uiautomator dump ---------------------------------------------------------------------


class DumpKind(Enum):
    OK = "ok"  # "UI hierchary dumped to: PATH" (sic, Android's spelling)
    IDLE_TIMEOUT = "idle-timeout"  # ERROR: could not get idle state.
    NULL_ROOT = "null-root"  # ERROR: null root node returned by UiTestAutomationBridge.
    KILLED = "killed"  # the dump process was killed (OOM, watchdog)
    AUTOMATION_BUSY = "automation-busy"  # another UiAutomation (uiautomator2 server) is registered
    NOT_AVAILABLE = "not-available"  # no uiautomator binary on this device
    UNKNOWN = "unknown"  # anything else (still retried: the file check decides)


@dataclass(frozen=True)
class DumpOutcome:
    kind: DumpKind
    retryable: bool
    detail: str  # the most telling line of the output

    @property
    def ok(self) -> bool:
        return self.kind is DumpKind.OK


def _first_line(text: str, needle: str) -> str:
    for line in text.splitlines():
        if needle.lower() in line.lower():
            return line.strip()
    return text.strip().splitlines()[0].strip() if text.strip() else ""


def classify_dump_output(text: str) -> DumpOutcome:
    """Classify what ``uiautomator dump PATH`` printed.

    Errors win over a success line (some builds print both); the caller still checks the file.
    """
    low = text.lower()
    if "could not get idle state" in low:
        return DumpOutcome(DumpKind.IDLE_TIMEOUT, True, _first_line(text, "idle state"))
    if "null root node" in low:
        return DumpOutcome(DumpKind.NULL_ROOT, True, _first_line(text, "null root"))
    if "already registered" in low:
        return DumpOutcome(DumpKind.AUTOMATION_BUSY, False, _first_line(text, "already registered"))
    if re.search(r"uiautomator: (inaccessible or )?not found|uiautomator: .*no such file", low):
        return DumpOutcome(DumpKind.NOT_AVAILABLE, False, _first_line(text, "uiautomator"))
    if re.search(r"^\s*killed\b", low, re.MULTILINE):
        return DumpOutcome(DumpKind.KILLED, True, "Killed")
    if "error" in low or "exception" in low:
        needle = "error" if "error" in low else "exception"
        return DumpOutcome(DumpKind.UNKNOWN, True, _first_line(text, needle))
    if "dumped to" in low:
        return DumpOutcome(DumpKind.OK, True, _first_line(text, "dumped to"))
    return DumpOutcome(DumpKind.UNKNOWN, True, text.strip()[:200] or "(no output)")


# --- dumpsys: foreground app --------------------------------------------------------------

_PKG = r"[A-Za-z][A-Za-z0-9_]*(?:\.[A-Za-z0-9_]+)+"
# mCurrentFocus=Window{3a1c2f4 u0 com.android.settings/com.android.settings.Settings}
_FOCUS_RE = re.compile(r"mCurrentFocus=Window\{\S+ (?:u\d+ )?(?P<title>[^}]*)\}")
# ActivityRecord{8b1e0a3 u0 com.android.settings/.Settings t12}  (mFocusedApp, mResumedActivity,
# ResumedActivity, topResumedActivity, mFocusedActivity - every Android version names it so)
_RECORD_RE = re.compile(
    r"(?P<field>mFocusedApp|mResumedActivity|ResumedActivity|topResumedActivity|mFocusedActivity)"
    r"[=:] ?.*?ActivityRecord\{\S+ (?:u\d+ )?(?P<pkg>" + _PKG + r")/(?P<act>\S+)"
)
_PKG_ONLY_RE = re.compile(r"^" + _PKG + r"$")


def parse_current_app(dumpsys: str) -> str | None:
    """Foreground package from ``dumpsys window`` (or ``dumpsys activity activities``) output.

    Order: the focused window when its title is ``pkg/activity`` (or a bare package name, as for
    an app's dialogs); otherwise the focused/resumed ActivityRecord (system windows such as
    ``StatusBar``, ``NotificationShade`` or ``PopupWindow:…`` have no package); else None.
    """
    for m in _FOCUS_RE.finditer(dumpsys):
        title = m.group("title").strip()
        if "/" in title:
            pkg = title.split("/", 1)[0].strip()
            if _PKG_ONLY_RE.match(pkg):
                return pkg
        elif _PKG_ONLY_RE.match(title):
            return title
    for m in _RECORD_RE.finditer(dumpsys):
        return m.group("pkg")
    return None


# --- wm size / getprop --------------------------------------------------------------------

_SIZE_RE = re.compile(r"(Override|Physical) size:\s*(\d+)\s*x\s*(\d+)")


def parse_wm_size(text: str) -> tuple[int, int] | None:
    """(width, height) from ``wm size``; the override size wins over the physical one."""
    found = {m.group(1): (int(m.group(2)), int(m.group(3))) for m in _SIZE_RE.finditer(text)}
    return found.get("Override") or found.get("Physical")


def parse_sdk(text: str) -> int | None:
    text = text.strip()
    return int(text) if text.isdigit() else None


# --- input / am / monkey results ----------------------------------------------------------


def input_command_failed(output: str) -> bool:
    """``input …`` prints nothing on success; on failure an exception or usage text."""
    low = output.lower()
    return any(
        word in low
        for word in ("exception", "error:", "usage: input", "securityexception", "not found")
    )


_BROADCAST_RESULT_RE = re.compile(r"result=(-?\d+)")


def broadcast_result(output: str) -> int | None:
    """The ``result=N`` of ``am broadcast`` (-1 means RESULT_OK for AdbKeyboard)."""
    m = _BROADCAST_RESULT_RE.search(output)
    return int(m.group(1)) if m else None


def parse_ime_list(output: str) -> list[str]:
    """IME ids from ``ime list -s [-a]`` (one per line)."""
    return [line.strip() for line in output.splitlines() if "/" in line and " " not in line.strip()]


_INPUT_SHOWN_RE = re.compile(r"\bmInputShown=(true|false)\b")
_IME_VIS_RE = re.compile(r"\bmImeWindowVis=(0x[0-9a-fA-F]+|\d+)\b")
_IME_VISIBLE = 0x2  # InputMethodService.IME_VISIBLE


def parse_input_shown(dumpsys: str) -> bool | None:
    """Whether the keyboard is shown, from ``dumpsys input_method``: ``mInputShown=`` (every release
    up to Android 14), else the ``IME_VISIBLE`` bit of ``mImeWindowVis``; None when neither is there."""
    m = _INPUT_SHOWN_RE.search(dumpsys)
    if m:
        return m.group(1) == "true"
    v = _IME_VIS_RE.search(dumpsys)
    if v:
        return bool(int(v.group(1), 0) & _IME_VISIBLE)
    return None
