"""What the fake model servers (Gemini REST, OpenAI chat completions) share: a threaded local HTTP
server with a start/stop lifecycle, a queue of injected faults, the requests they received, and
handler pieces (a body read exactly as ``Content-Length`` delimits it, hang-ups that are not
errors). Each server adds its protocol: the handler, validation, the policy and usage."""

from __future__ import annotations

import json
import sys
import threading
from collections.abc import Callable
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Generic, Protocol, Self, TypeVar

from artemis_cli.models.fakes.gemini_wire import CONTENT_LENGTH_RE, MAX_BODY_BYTES, BadFraming


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


class JSONHandler(BaseHTTPRequestHandler):
    """A fake server's request handler: JSON answers (the subclass says in which error shape),
    bad framing answered with a 4xx and the connection closed, http.server's own errors as JSON,
    a hang-up is no error, and anything unexpected a 500 rather than a dead thread. Subclasses
    implement ``error_body``, ``_handle_get`` and ``_handle_post``."""

    protocol_version = "HTTP/1.1"
    # A garbage request line is answered with a status line and headers, not HTTP/0.9 style.
    default_request_version = "HTTP/1.1"
    content_type = "application/json"

    def error_body(self, code: int, message: str) -> dict[str, Any]:
        raise NotImplementedError

    def known_error(self, exc: Exception) -> tuple[int, dict[str, Any]] | None:
        """The answer to an error the protocol raises on purpose (None: not one)."""
        return None

    def _handle_get(self) -> None:
        raise NotImplementedError

    def _handle_post(self) -> None:
        raise NotImplementedError

    def log_message(self, format: str, *args: Any) -> None:  # quiet
        return

    def _send(self, code: int, body: dict[str, Any], headers: dict[str, str] | None = None) -> None:
        data = json.dumps(body).encode("utf-8")
        self.send_response(code)
        self.send_header("Content-Type", self.content_type)
        self.send_header("Content-Length", str(len(data)))
        for key, value in (headers or {}).items():
            self.send_header(key, value)
        if self.close_connection:
            self.send_header("Connection", "close")
        self.end_headers()
        self.wfile.write(data)

    def send_error(self, code: int, message: str | None = None, explain: str | None = None) -> None:
        """http.server's own errors (bad request line, unsupported method, ...) as JSON."""
        self.close_connection = True
        self._send(code, self.error_body(code, message or self.responses.get(code, ("Error",))[0]))

    def _read_body(self) -> bytes:
        return read_body(self)

    def do_GET(self) -> None:
        self._answer(self._handle_get)

    def do_POST(self) -> None:
        self._answer(self._handle_post)

    def _answer(self, handle: Callable[[], None]) -> None:
        try:
            handle()
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True
        except BadFraming as exc:
            self.close_connection = True
            self._send_quietly(exc.code, self.error_body(exc.code, str(exc)))
        except Exception as exc:  # last line of defence: answer, don't die
            known = self.known_error(exc)
            self._send_quietly(*(known or (500, self.error_body(500, f"fake server error: {type(exc).__name__}"))))

    def _send_quietly(self, code: int, body: dict[str, Any]) -> None:
        try:
            self._send(code, body)
        except OSError:
            self.close_connection = True
