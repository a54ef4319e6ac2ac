"""Seeded, reproducible fault injection: ``"idle_state:0.2,null_root:0.1,latency_ms:40,popup_storm"``.

Faults (``name:probability`` unless noted; each kind rolls its own seeded random stream):

- ``idle_state:P`` -- ``uiautomator dump`` fails with "could not get idle state";
- ``null_root:P`` -- it fails with "null root node returned by UiTestAutomationBridge";
- ``stale_dump:P`` -- it says success but leaves the old dump file in place;
- ``garbage_xml:P`` -- the dump "succeeds" but its content is broken: cut off before the root
  element, binary junk, or a crash message instead of XML (no parser can recover a UI from it);
- ``empty_hierarchy:P`` -- the dump is valid XML with no nodes (``<hierarchy rotation="0"/>``);
- ``screencap_fail:P`` -- ``screencap`` / ``screenshot()`` fails;
- ``drop:P`` -- the connection drops (DeviceOffline) for 1-3 calls;
- ``latency_ms:N`` -- N ms added to every device call;
- ``popup_storm`` (no value) -- the promotion pop-up every 3 actions, in every app;
- ``crash:P`` -- after an action, the foreground app (not the launcher, not System UI) throws:
  ``FATAL EXCEPTION: main`` with its stack in the crash buffer, the process dies, the phone goes
  to the launcher and the framework's "<App> keeps stopping" dialog shows (``sim/app_errors.py``);
- ``anr:P`` -- after an action, the foreground app stops responding: "<App> isn't responding"
  (Close app / Wait), ``ANR in PKG`` in the system log; the app takes no input until Wait.
"""

from __future__ import annotations

import random
import time
from dataclasses import dataclass, fields

from artemis_cli.errors import DeviceOffline, UsageError

IDLE_STATE_MSG = "ERROR: could not get idle state."
NULL_ROOT_MSG = "ERROR: null root node returned by UiTestAutomationBridge."


@dataclass(frozen=True)
class FaultSpec:
    idle_state: float = 0.0  # uiautomator dump: "could not get idle state"
    null_root: float = 0.0  # uiautomator dump: "null root node returned by UiTestAutomationBridge"
    stale_dump: float = 0.0  # uiautomator dump says success but leaves the old file
    garbage_xml: float = 0.0  # uiautomator dump "succeeds" with truncated / non-XML content
    empty_hierarchy: float = 0.0  # uiautomator dump "succeeds" with a valid dump holding no nodes
    screencap_fail: float = 0.0  # screencap / screenshot() fails
    latency_ms: int = 0  # added to every device call
    drop: float = 0.0  # the connection drops (DeviceOffline) for 1-3 calls
    popup_storm: bool = False  # the promotion pop-up every 3 actions, in every app
    crash: float = 0.0  # after an action the foreground app crashes (FATAL EXCEPTION, "keeps stopping")
    anr: float = 0.0  # after an action the foreground app stops responding ("isn't responding")

    @property
    def any(self) -> bool:
        return self != FaultSpec()


_PROBS = ("idle_state", "null_root", "stale_dump", "garbage_xml", "empty_hierarchy", "screencap_fail", "drop",
          "crash", "anr")
#: Dump faults that raise (the dump command reports an error or leaves no fresh file)...
DUMP_ERROR_FAULTS = ("idle_state", "null_root", "stale_dump")
#: ...and dump faults that return broken or empty content as if the dump had worked.
DUMP_CONTENT_FAULTS = ("garbage_xml", "empty_hierarchy")
#: Fields added after the first release: left out of the seed key while unset, so the random
#: streams of every older fault spec stay exactly what they were.
_LATER_FIELDS = ("garbage_xml", "empty_hierarchy", "crash", "anr")

EMPTY_HIERARCHY_XML = "<?xml version='1.0' encoding='UTF-8' standalone='yes' ?><hierarchy rotation=\"0\"/>"
_CRASH_TEXTS = (
    "Killed\n",
    "java.lang.NullPointerException: Attempt to invoke virtual method on a null object reference\n",
    "ERROR: could not write dump file: No space left on device\n",
)


def _seed_key(spec: FaultSpec) -> str:
    """``repr(spec)`` as it was before the later fields existed, plus any later field that is set."""
    items = [f"{f.name}={getattr(spec, f.name)!r}" for f in fields(spec)
             if f.name not in _LATER_FIELDS or getattr(spec, f.name) != f.default]
    return f"FaultSpec({', '.join(items)})"


def garbage_dump(xml: str, rng: random.Random) -> str:
    """A broken dump that no parser can recover a UI from (seeded by ``rng``): the real dump cut
    off before its ``<hierarchy`` start tag is complete, binary junk, or a crash message."""
    kind = rng.randrange(3)
    if kind == 0:
        start = xml.find("<hierarchy")
        limit = start + len("<hierarch") if start >= 0 else min(len(xml), 40)
        return xml[: rng.randint(1, max(1, limit))]
    if kind == 1:
        junk = bytes(rng.randrange(256) for _ in range(rng.randint(16, 256)))
        return "\x89PNG\r\n\x1a\n" + junk.replace(b"<", b"?").decode("latin-1")
    return rng.choice(_CRASH_TEXTS)


def parse_faults(spec: str | None) -> FaultSpec:
    """Parse ``name[:value]`` items separated by commas. Raises UsageError on anything else."""
    if not spec or not spec.strip():
        return FaultSpec()
    known = {f.name for f in fields(FaultSpec)}
    values: dict[str, object] = {}
    for raw in spec.split(","):
        item = raw.strip()
        if not item:
            continue
        name, _, value = item.partition(":")
        name = name.strip()
        if name not in known:
            raise UsageError(f"unknown fault {name!r}", hint=f"known faults: {', '.join(sorted(known))}")
        if name == "popup_storm":
            if value.strip() not in ("", "1", "true", "on"):
                raise UsageError(f"fault popup_storm takes no value (got {value!r})")
            values[name] = True
            continue
        try:
            num = float(value)
        except ValueError:
            raise UsageError(f"fault {name} needs a number, e.g. {name}:0.1 (got {value!r})") from None
        if name == "latency_ms":
            if not 0 <= num <= 60000:
                raise UsageError(f"latency_ms must be between 0 and 60000 (got {value})")
            values[name] = int(num)
        else:
            if not 0.0 <= num <= 1.0:
                raise UsageError(f"fault {name} is a probability between 0 and 1 (got {value})")
            values[name] = num
    return FaultSpec(**values)  # type: ignore[arg-type]


class FaultInjector:
    """One independent random stream per fault kind, seeded from (seed, kind, spec)."""

    def __init__(self, spec: FaultSpec, seed: int) -> None:
        self.spec = spec
        key = _seed_key(spec)
        self._rng = {k: random.Random(f"artemis-sim-fault|{seed}|{k}|{key}")
                     for k in (*_PROBS, "drop_len", "garbage", "exception")}
        self.offline_calls = 0
        self.log: list[str] = []

    def _roll(self, kind: str) -> bool:
        p = float(getattr(self.spec, kind))
        if p <= 0.0:
            return False
        hit = self._rng[kind].random() < p
        if hit:
            self.log.append(kind)
        return hit

    def dump_fault(self) -> str | None:
        """For one ``uiautomator dump``: one of DUMP_ERROR_FAULTS or DUMP_CONTENT_FAULTS, or None."""
        for kind in (*DUMP_ERROR_FAULTS, *DUMP_CONTENT_FAULTS):
            if self._roll(kind):
                return kind
        return None

    def faulty_content(self, fault: str, xml: str) -> str:
        """The content a dump with content fault ``fault`` returns instead of ``xml``."""
        if fault == "garbage_xml":
            return garbage_dump(xml, self._rng["garbage"])
        if fault == "empty_hierarchy":
            return EMPTY_HIERARCHY_XML
        return xml

    def app_fault(self) -> str | None:
        """After an action in an app: "crash", "anr" or None (each rolls its own stream)."""
        for kind in ("crash", "anr"):
            if self._roll(kind):
                return kind
        return None

    def exception_rng(self) -> random.Random:
        """The stream that picks a crash's exception and stack."""
        return self._rng["exception"]

    def screencap_fails(self) -> bool:
        return self._roll("screencap_fail")

    def device_call(self) -> None:
        """Called at the start of every SimPhone device call: latency, then maybe a drop."""
        if self.spec.latency_ms:
            time.sleep(self.spec.latency_ms / 1000.0)
        if self.offline_calls > 0:
            self.offline_calls -= 1
            raise DeviceOffline("device 'sim' offline (simulated drop)", hint="retry shortly")
        if self._roll("drop"):
            self.offline_calls = self._rng["drop_len"].randint(1, 3)
            raise DeviceOffline("connection to device 'sim' dropped (simulated)", hint="retry shortly")
