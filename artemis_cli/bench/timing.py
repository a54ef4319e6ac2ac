"""Timing proxies: how long the loop spent inside device calls and operator model calls.

The bench subtracts both from each step's wall time to get the runtime overhead (SPEC §12). The
proxies patch the instance's methods (not the class), so ``isinstance`` checks that pick the lens
and the Pro agents still see the real model and device types.
"""

from __future__ import annotations

import functools
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

DEVICE_METHODS = ("info", "screenshot", "hierarchy", "tap", "long_press", "swipe", "double_tap", "drag",
                  "type_text", "key", "launch", "current_app", "shell")


@dataclass
class TimeMeter:
    """Seconds spent inside wrapped calls on the thread that made them (the loop's thread)."""

    seconds: float = 0.0
    calls: int = 0
    _owner: int | None = field(default=None, repr=False)

    def wrap(self, fn: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(fn)
        def timed(*args: Any, **kwargs: Any) -> Any:
            t0 = time.perf_counter()
            try:
                return fn(*args, **kwargs)
            finally:
                if self._owner is None or threading.get_ident() == self._owner:
                    self.seconds += time.perf_counter() - t0
                    self.calls += 1

        return timed

    def bind_to_current_thread(self) -> None:
        self._owner = threading.get_ident()


def time_device(device: Any, meter: TimeMeter) -> Any:
    for name in DEVICE_METHODS:
        fn = getattr(device, name, None)
        if callable(fn):
            setattr(device, name, meter.wrap(fn))
    return device


def time_model(model: Any, meter: TimeMeter) -> Any:
    model.generate = meter.wrap(model.generate)
    return model


@dataclass
class StepClock:
    """Per-step wall, device and model seconds, cut at each ``on_step`` report."""

    device: TimeMeter
    model: TimeMeter
    overhead_ms: dict[int, float] = field(default_factory=dict)
    _t: float = 0.0
    _dev: float = 0.0
    _mod: float = 0.0

    def start(self) -> None:
        self._t, self._dev, self._mod = time.perf_counter(), self.device.seconds, self.model.seconds

    def hooks(self, on_step: Callable[[int], None] | None = None) -> dict[str, Any]:
        """``on_start``/``on_step`` callbacks for ``run_task`` that drive this clock (the meters
        count calls made on the loop's thread only, so background lens calls are excluded)."""

        def started(_session_id: str) -> None:
            self.device.bind_to_current_thread()
            self.model.bind_to_current_thread()
            self.start()

        def stepped(report: Any) -> None:
            self.step(report.number)
            if on_step:
                on_step(report.number)

        return {"on_start": started, "on_step": stepped}

    def step(self, number: int) -> None:
        now = time.perf_counter()
        wall = now - self._t
        dev = self.device.seconds - self._dev
        mod = self.model.seconds - self._mod
        self.overhead_ms[number] = max(0.0, (wall - dev - mod) * 1000)
        self._t, self._dev, self._mod = now, self.device.seconds, self.model.seconds
