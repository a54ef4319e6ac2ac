"""Clean stops: SIGINT, SIGTERM and SIGHUP end a run as ``interrupted``, never half-written.

``catch_stop_signals()`` (used by ``run``, ``resume`` and ``replay``) turns the first of these
signals into ``StopRequested`` raised in the main thread — a ``KeyboardInterrupt``, so every
``except KeyboardInterrupt`` path applies — and ignores any further ones until the block ends,
so a second Ctrl-C cannot break the shutdown that marks the session. The runner answers with
``SessionInterrupted``, which carries the session id, the last recorded step and the result.
A step is one SQLite transaction, so the step in flight is either stored whole or not at all.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

STOP_SIGNALS = tuple(s for s in (signal.SIGINT, signal.SIGTERM, getattr(signal, "SIGHUP", None)) if s is not None)


def exit_code_for(signum: int) -> int:
    """The shell's convention: 128 + the signal number (130 SIGINT, 143 SIGTERM, 129 SIGHUP)."""
    return 128 + int(signum)


def signal_name(signum: int) -> str:
    try:
        return signal.Signals(signum).name
    except ValueError:
        return f"signal {signum}"


class StopRequested(KeyboardInterrupt):
    """The user (SIGINT) or the system (SIGTERM, SIGHUP) asked the process to stop."""

    def __init__(self, signum: int = signal.SIGINT) -> None:
        super().__init__(signal_name(signum))
        self.signum = int(signum)

    @property
    def exit_code(self) -> int:
        return exit_code_for(self.signum)


class SessionInterrupted(StopRequested):
    """A session was stopped by a signal and marked ``interrupted``; ``result`` is its RunResult
    (or a replay result) for ``--json``."""

    def __init__(self, signum: int, session_id: str, step: int, result: Any = None, *,
                 next_command: str | None = None) -> None:
        super().__init__(signum)
        self.session_id = session_id
        self.step = step
        self.result = result
        self.next_command = next_command or f"artemis resume {session_id}"

    def message(self) -> str:
        return f"Interrupted at step {self.step}. Continue with: {self.next_command}"


def as_stop(exc: KeyboardInterrupt) -> StopRequested:
    return exc if isinstance(exc, StopRequested) else StopRequested(signal.SIGINT)


@contextmanager
def catch_stop_signals() -> Iterator[None]:
    """Within the block the first stop signal raises StopRequested; later ones are ignored.
    Only the main thread can install handlers: elsewhere the block changes nothing."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    fired: list[int] = []

    def handler(signum: int, frame: Any) -> None:
        if fired:
            return  # already shutting down: a second Ctrl-C must not break the shutdown
        fired.append(signum)
        raise StopRequested(signum)

    previous = {s: signal.getsignal(s) for s in STOP_SIGNALS}
    for s in STOP_SIGNALS:
        signal.signal(s, handler)
    try:
        yield
    finally:
        for s, old in previous.items():
            # after a stop the process is on its way out: further stop signals are ignored, at
            # the OS level, so that they cannot kill it during interpreter shutdown either
            signal.signal(s, signal.SIG_IGN if fired else old)
