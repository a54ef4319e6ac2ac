"""What the fake model servers (Gemini REST, OpenAI chat completions) share: a threaded local HTTP
server with a start/stop lifecycle, a queue of injected faults, the requests they received, and
handler pieces (a body read exactly as ``Content-Length`` delimits it, hang-ups that are not
errors). Each server adds its protocol: the handler, validation, the policy and usage."""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Generic, Protocol, Self, TypeVar

from artemis_cli.models.fake_gemini_wire import CONTENT_LENGTH_RE, MAX_BODY_BYTES, BadFraming


class _HasModel(Protocol):
    model: str


R = TypeVar("R", bound=_HasModel)


@dataclass
class QueuedFault(Generic[R]):
    kind: str
    remaining: int
    model: str | None
    match: Callable[[R], bool] | None = None


class RecordingHTTPServer(ThreadingHTTPServer):
    """Records what escapes a handler thread instead of only printing it; hang-ups are normal."""

    owner: FakeHTTPServer[Any] | None = None

    def handle_error(self, request: Any, client_address: Any) -> None:
        exc = sys.exc_info()[1]
        if isinstance(exc, ConnectionError):  # the client went away: nothing to answer
            return
        if self.owner is not None:
            with self.owner._lock:
                self.owner.errors.append(f"{type(exc).__name__}: {exc}")
        super().handle_error(request, client_address)


class FakeHTTPServer(Generic[R]):
    """Lifecycle, fault queue and request log of a fake server. Subclasses set ``fault_kinds``
    and ``thread_name`` and implement ``_handler_class``."""

    fault_kinds: tuple[str, ...] = ()
    thread_name = "fake-server"

    def __init__(self, *, keep_requests: int | None, host: str, port: int) -> None:
        #: Every parsed request, oldest first (only the newest ``keep_requests`` when that is set,
        #: so long benchmark runs do not hold every body in memory).
        self.requests: list[R] = []
        self.keep_requests = keep_requests
        #: Unexpected exceptions that escaped a handler thread (tests assert this stays empty).
        self.errors: list[str] = []
        self._host = host
        self._port = port
        self._lock = threading.Lock()
        self._faults: list[QueuedFault[R]] = []
        self._released = threading.Event()
        self._httpd: RecordingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        raise NotImplementedError

    # -- lifecycle --

    def start(self) -> Self:
        if self._httpd is not None:
            return self
        self._released.clear()
        httpd = RecordingHTTPServer((self._host, self._port), self._handler_class())
        httpd.owner = self
        httpd.daemon_threads = True
        self._httpd = httpd
        self._thread = threading.Thread(
            target=httpd.serve_forever, kwargs={"poll_interval": 0.05}, name=self.thread_name, daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        httpd = self._httpd
        if httpd is None:
            return
        self._released.set()  # let held "timeout" connections go
        httpd.shutdown()
        httpd.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)
        self._httpd = None
        self._thread = None

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def port(self) -> int:
        if self._httpd is None:
            raise RuntimeError(f"{type(self).__name__} is not running")
        return int(self._httpd.server_address[1])

    # -- test controls --

    def inject(self, kind: str, count: int = 1, model: str | None = None,
               match: Callable[[R], bool] | None = None) -> None:
        """Queue ``count`` faults of ``kind`` for the next requests to ``model`` (any when None)
        that ``match`` accepts (all when None)."""
        if kind not in self.fault_kinds:
            raise ValueError(f"unknown fault kind {kind!r}; expected one of {', '.join(self.fault_kinds)}")
        if count < 1:
            raise ValueError("count must be >= 1")
        with self._lock:
            self._faults.append(QueuedFault(kind, count, model, match))

    def pending_faults(self) -> int:
        with self._lock:
            return sum(f.remaining for f in self._faults)

    def requests_for(self, model: str) -> list[R]:
        with self._lock:
            return [r for r in self.requests if r.model == model]

    # -- request handling (called from handler threads) --

    def _keep(self, req: R) -> None:
        """Log a request (the caller holds the lock)."""
        self.requests.append(req)
        if self.keep_requests is not None and len(self.requests) > self.keep_requests:
            del self.requests[: len(self.requests) - self.keep_requests]

    def _take_fault(self, req: R) -> str | None:
        with self._lock:
            for fault in self._faults:
                if (fault.model is None or fault.model == req.model) and (fault.match is None or fault.match(req)):
                    fault.remaining -= 1
                    if fault.remaining <= 0:
                        self._faults.remove(fault)
                    return fault.kind
        return None


def read_body(handler: BaseHTTPRequestHandler) -> bytes:
    """The request body as ``Content-Length`` delimits it; raises ``BadFraming`` when it cannot
    (chunked bodies, conflicting or invalid lengths, too large, cut short)."""
    if handler.headers.get("Transfer-Encoding") is not None:
        raise BadFraming(411, "Length Required: send the body with a Content-Length.")
    values = {v.strip() for v in handler.headers.get_all("Content-Length", [])}
    if not values:
        return b""
    if len(values) > 1:
        raise BadFraming(400, "Conflicting Content-Length headers.")
    (value,) = values
    if not CONTENT_LENGTH_RE.match(value):
        raise BadFraming(400, f"Invalid Content-Length: {value[:40]!r}")
    length = int(value)
    if length > MAX_BODY_BYTES:
        raise BadFraming(413, f"Request payload size exceeds the limit: {MAX_BODY_BYTES} bytes.")
    raw = handler.rfile.read(length) if length else b""
    if len(raw) < length:
        raise BadFraming(400, f"Incomplete request body: {len(raw)} of {length} bytes.")
    return raw
