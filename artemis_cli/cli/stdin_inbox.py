"""Lines typed on stdin during a live run become user instructions at the next step (SPEC §2)."""

from __future__ import annotations

import os
import queue
import sys
import threading


class StdinInbox:
    """Reads lines from a file descriptor on a daemon thread; ``take()`` returns what arrived.

    It reads the raw descriptor (``os.read``), not ``sys.stdin``: a daemon thread blocked inside
    a buffered reader can abort interpreter shutdown.
    """

    def __init__(self, fd: int | None = None) -> None:
        self._lines: queue.Queue[str] = queue.Queue()
        self._fd = fd if fd is not None else _stdin_fd()
        self._thread = threading.Thread(target=self._read, name="artemis-stdin", daemon=True)

    def start(self) -> StdinInbox:
        if self._fd is not None:
            self._thread.start()
        return self

    def _read(self) -> None:
        assert self._fd is not None
        pending = b""
        while True:
            try:
                chunk = os.read(self._fd, 4096)
            except OSError:
                return
            if not chunk:
                return
            pending += chunk
            *lines, pending = pending.split(b"\n")
            for raw in lines:
                text = raw.decode("utf-8", "replace").strip()
                if text:
                    self._lines.put(text)

    def take(self) -> list[str]:
        out = []
        while True:
            try:
                out.append(self._lines.get_nowait())
            except queue.Empty:
                return out


def _stdin_fd() -> int | None:
    try:
        return sys.stdin.fileno() if sys.stdin is not None else None
    except (OSError, ValueError, AttributeError):
        return None
