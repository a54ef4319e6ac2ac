"""Seeded, reproducible fault injection: ``"idle_state:0.2,null_root:0.1,latency_ms:40,popup_storm"``."""

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
    screencap_fail: float = 0.0  # screencap / screenshot() fails
    latency_ms: int = 0  # added to every device call
    drop: float = 0.0  # the connection drops (DeviceOffline) for 1-3 calls
    popup_storm: bool = False  # the promotion pop-up every 3 actions, in every app

    @property
    def any(self) -> bool:
        return self != FaultSpec()


_PROBS = ("idle_state", "null_root", "stale_dump", "screencap_fail", "drop")


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
        self._rng = {k: random.Random(f"artemis-sim-fault|{seed}|{k}|{spec!r}") for k in (*_PROBS, "drop_len")}
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
        """For one ``uiautomator dump``: "idle_state", "null_root", "stale_dump" or None."""
        for kind in ("idle_state", "null_root", "stale_dump"):
            if self._roll(kind):
                return kind
        return None

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
