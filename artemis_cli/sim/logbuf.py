"""The phone's log buffers (logd): ``main``, ``system``, ``crash``, ``events`` (and an empty ``radio``).

Every entry has a time in epoch milliseconds taken from the sim's virtual clock (the one ``date``
reads), so the same seed and actions give the same log; times only move forward.  Each buffer is a
ring: past ``CAPACITY`` bytes (a phone's default 256 KiB) the oldest entries go, as on a phone.
Writing is cheap (an append); formatting lives in ``shell_logcat.py``.
"""

from __future__ import annotations

import random
from collections import deque
from dataclasses import dataclass
from itertools import takewhile

from artemis_cli.sim.system import VirtualClock

#: log ids in logd's order (main=0, radio=1, events=2, system=3, crash=4)
BUFFERS = ("main", "radio", "events", "system", "crash")
DEFAULT_BUFFERS = ("main", "system", "crash")
CAPACITY = 256 * 1024
ENTRY_OVERHEAD = 28  # logd's per-entry header (pid, tid, time, uid, length...)
PRIORITIES = "VDIWEF"  # verbose, debug, info, warn, error, fatal (S = silent, only in filters)


@dataclass(frozen=True)
class LogEntry:
    ms: int  # wall time, epoch milliseconds
    pid: int
    tid: int
    uid: int
    prio: str  # one of PRIORITIES
    tag: str
    msg: str  # may hold several lines: logcat prints the prefix before each
    buffer: str

    @property
    def size(self) -> int:
        return ENTRY_OVERHEAD + len(self.tag) + len(self.msg) + 2


class LogBuffers:
    """logd's ring buffers, stamped from ``clock`` (deterministic: seeded jitter, never backwards)."""

    def __init__(self, clock: VirtualClock, seed: int, capacity: int = CAPACITY) -> None:
        self.clock = clock
        self.capacity = capacity
        self._rng = random.Random(f"artemis-sim-log|{seed}")
        self.bufs: dict[str, deque[LogEntry]] = {b: deque() for b in BUFFERS}
        self.sizes: dict[str, int] = dict.fromkeys(BUFFERS, 0)
        self.last_ms = 0

    def now_ms(self) -> int:
        """The time of the next entry: the clock's second plus a little, after the last entry."""
        base = self.clock.epoch_s() * 1000 + self._rng.randrange(0, 400)
        self.last_ms = max(base, self.last_ms + self._rng.randint(1, 25))
        return self.last_ms

    def write(self, buffer: str, prio: str, tag: str, msg: str, pid: int, tid: int | None = None,
              uid: int = 1000, ms: int | None = None) -> LogEntry:
        entry = LogEntry(self.now_ms() if ms is None else ms, pid, pid if tid is None else tid, uid, prio, tag,
                         msg, buffer)
        ring = self.bufs[buffer]
        ring.append(entry)
        self.sizes[buffer] += entry.size
        while self.sizes[buffer] > self.capacity and len(ring) > 1:
            self.sizes[buffer] -= ring.popleft().size
        return entry

    def clear(self, buffers: tuple[str, ...] | list[str]) -> None:
        for b in buffers:
            self.bufs[b].clear()
            self.sizes[b] = 0

    def entries(self, buffers: tuple[str, ...] | list[str], since_ms: int | None = None) -> list[LogEntry]:
        """Entries of ``buffers`` merged in time order (logd's order); ``since_ms``: only those at or
        after it, found from each ring's newest end (times only move forward), so a read of what
        is new costs what is new, not the whole ring (up to 256 KiB a buffer on a long run)."""
        if since_ms is None:
            merged = [e for b in buffers for e in self.bufs[b]]
        else:
            merged = []
            for b in buffers:
                newer = list(takewhile(lambda e: e.ms >= since_ms, reversed(self.bufs[b])))
                newer.reverse()  # ring order, so equal times keep their order in the stable sort
                merged += newer
        merged.sort(key=lambda e: e.ms)
        return merged
