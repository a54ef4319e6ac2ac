"""One ADB stream (an OPENed service) with the transport's flow control.

Outbound: at most one WRTE in flight; the next waits for the host's OKAY.  Inbound: the host's
WRTE payloads queue up and are acknowledged (OKAY) only when the service consumes them, so a
slow service pushes back on the host.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable

from artemis_cli.sim.adbd.packets import A_CLSE, A_OKAY, A_WRTE, Packet


class StreamClosed(Exception):
    """The host closed the stream, or the connection went away."""


class Stream:
    def __init__(self, local_id: int, remote_id: int, service: str, send: Callable[[Packet], bool],
                 max_send: int, on_closed: Callable[[Stream], None]) -> None:
        self.local_id = local_id
        self.remote_id = remote_id
        self.service = service
        self._send = send
        self.max_send = max_send
        self._on_closed = on_closed
        self._inbox: queue.Queue[bytes | None] = queue.Queue()
        self._can_send = threading.Event()
        self._can_send.set()  # after our OKAY to the OPEN, one WRTE may go
        self._lock = threading.Lock()
        self.closed = False
        self._pending = b""

    # --- from the connection's reader thread ------------------------------------------------
    def peer_okay(self) -> None:
        self._can_send.set()

    def peer_write(self, data: bytes) -> None:
        if not self.closed:
            self._inbox.put(data)

    def peer_close(self) -> None:
        """The host sent CLSE (or the connection died): no CLSE back."""
        with self._lock:
            if self.closed:
                return
            self.closed = True
        self._inbox.put(None)
        self._can_send.set()
        self._on_closed(self)

    # --- for services ---------------------------------------------------------------------
    def recv(self, timeout: float | None = None) -> bytes | None:
        """Next chunk from the host; None when the stream is closed. Raises TimeoutError."""
        if self._pending:
            data, self._pending = self._pending, b""
            return data
        try:
            item = self._inbox.get(timeout=timeout)
        except queue.Empty:
            raise TimeoutError("no data from the host") from None
        if item is None:
            self._inbox.put(None)  # stay closed for later readers
            return None
        self._send(Packet(A_OKAY, self.local_id, self.remote_id))
        return item

    def read_exact(self, n: int) -> bytes:
        """Exactly ``n`` bytes; raises StreamClosed when the host closes first."""
        buf = bytearray()
        while len(buf) < n:
            chunk = self.recv()
            if chunk is None:
                raise StreamClosed(f"closed after {len(buf)} of {n} bytes")
            take = n - len(buf)
            buf += chunk[:take]
            if len(chunk) > take:
                self._pending = chunk[take:] + self._pending
        return bytes(buf)

    def unread(self, data: bytes) -> None:
        self._pending = data + self._pending

    def write(self, data: bytes) -> None:
        """Send ``data`` as WRTE packets of at most ``max_send`` bytes, one in flight at a time."""
        view = memoryview(data)
        for start in range(0, len(view), self.max_send):
            while not self._can_send.wait(0.5):
                if self.closed:
                    break
            if self.closed:
                raise StreamClosed(f"{self.service}: closed by the host")
            self._can_send.clear()
            if not self._send(Packet(A_WRTE, self.local_id, self.remote_id, bytes(view[start:start + self.max_send]))):
                self.peer_close()
                raise StreamClosed(f"{self.service}: connection lost")

    def close(self) -> None:
        """Close from the device side: CLSE(local, remote) once."""
        with self._lock:
            if self.closed:
                return
            self.closed = True
        self._send(Packet(A_CLSE, self.local_id, self.remote_id))
        self._inbox.put(None)
        self._can_send.set()
        self._on_closed(self)

    def wait_closed(self, timeout: float | None = None) -> bool:
        """Block until the host closes the stream (draining and acknowledging its data)."""
        while True:
            try:
                if self.recv(timeout=timeout) is None:
                    return True
            except TimeoutError:
                return False
