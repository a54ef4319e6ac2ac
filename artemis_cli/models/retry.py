"""Classification of model-call failures, the backoff between retries, and the walk along a
fallback chain that both providers share (``send_along_chain``; SPEC §8).

Retryable: HTTP 408/429/500/502/503/504, timeouts and connection failures. Everything else the
service rejects (400, 401, 403, 404, other 4xx) is a request error: never retried and never
retried into a weaker model. Among those, a rejected API key (``google.rpc.ErrorInfo`` reason
``API_KEY_*``, or 401) is a configuration error (``auth``): the user must fix the key.
"""

from __future__ import annotations

import importlib
import re
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Generic, NoReturn, TypeVar

from artemis_cli.errors import ArtemisError
from artemis_cli.models.base import CallAttempt

R = TypeVar("R")

RETRYABLE_STATUS = frozenset({408, 429, 500, 502, 503, 504})

_DURATION_RE = re.compile(r"^\s*(\d+(?:\.\d*)?|\.\d+)\s*s\s*$")


def _transport_errors() -> tuple[tuple[type[BaseException], ...], tuple[type[BaseException], ...]]:
    """(timeout classes, connection classes) of whichever httpx flavour the SDK uses."""
    timeouts: list[type[BaseException]] = [TimeoutError]
    connections: list[type[BaseException]] = [ConnectionError]
    for module_name in ("httpx2", "httpx"):
        try:
            module = importlib.import_module(module_name)
        except ImportError:
            continue
        for attr, bucket in (
            ("TimeoutException", timeouts),
            ("NetworkError", connections),
            ("RemoteProtocolError", connections),
        ):
            cls = getattr(module, attr, None)
            if isinstance(cls, type) and issubclass(cls, BaseException):
                bucket.append(cls)
    return tuple(timeouts), tuple(connections)


TIMEOUT_ERRORS, CONNECTION_ERRORS = _transport_errors()


@dataclass(frozen=True)
class Failure:
    """A classified failure of one HTTP attempt."""

    retryable: bool
    error_class: str  # http_429, http_503, timeout, connection, ...
    description: str  # one line, safe to show (never contains credentials)
    retry_delay_s: float | None = None  # server-requested delay (RetryInfo), if any
    auth: bool = False  # the credentials were rejected: a configuration error, not a request error


def parse_duration_s(value: Any) -> float | None:
    """Parse a protobuf Duration JSON string such as ``"38s"`` or ``"0.25s"``."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return float(value) if value >= 0 else None
    if not isinstance(value, str):
        return None
    match = _DURATION_RE.match(value)
    return float(match.group(1)) if match else None


def _detail_entries(details: Any) -> list[dict[str, Any]]:
    """The ``error.details`` entries of an error body (the SDK's ``APIError.details``)."""
    if not isinstance(details, dict):
        return []
    error = details.get("error", details)
    entries = error.get("details") if isinstance(error, dict) else None
    if not isinstance(entries, list):
        return []
    return [e for e in entries if isinstance(e, dict)]


def retry_delay_from_details(details: Any) -> float | None:
    """The ``retryDelay`` of a ``google.rpc.RetryInfo`` entry in an error body, if present."""
    for entry in _detail_entries(details):
        if str(entry.get("@type", "")).endswith("google.rpc.RetryInfo"):
            return parse_duration_s(entry.get("retryDelay"))
    return None


def error_reasons(details: Any) -> list[str]:
    """The ``reason`` of every ``google.rpc.ErrorInfo`` entry in an error body (e.g.
    ``API_KEY_INVALID``)."""
    return [
        str(entry.get("reason"))
        for entry in _detail_entries(details)
        if str(entry.get("@type", "")).endswith("google.rpc.ErrorInfo") and entry.get("reason")
    ]


def is_auth_failure(code: int, details: Any) -> bool:
    """Whether an HTTP error says the credentials are bad: an ``API_KEY_*`` ErrorInfo reason
    (the service answers a wrong key with 400 INVALID_ARGUMENT + ``API_KEY_INVALID``), or 401."""
    return code == 401 or any(r.startswith("API_KEY_") for r in error_reasons(details))


def backoff_delay(
    retry_index: int, *, base_s: float, max_s: float, server_delay_s: float | None = None
) -> float:
    """Delay before retry number ``retry_index`` (0-based): the server's, else exponential; capped."""
    if server_delay_s is not None:
        return max(0.0, min(server_delay_s, max_s))
    return max(0.0, min(base_s * (2**retry_index), max_s))


def raise_with_attempts(error: ArtemisError, attempts: list[CallAttempt]) -> NoReturn:
    """Raise ``error`` carrying every HTTP attempt made so far (callers record them)."""
    error.attempts = list(attempts)  # type: ignore[attr-defined]
    raise error from None


@dataclass(frozen=True)
class Answered(Generic[R]):
    """The first HTTP call along a chain that the service answered."""

    model: str
    response: R
    latency_ms: float


def send_along_chain(
    chain: list[str],
    send: Callable[[str], R],
    classify: Callable[[BaseException], Failure],
    *,
    attempts: list[CallAttempt],
    rejected: Callable[[str, Failure], ArtemisError],
    unavailable: Callable[[list[str], Failure], ArtemisError],
    max_retries: int,
    backoff_s: float,
    max_backoff_s: float,
    sleep: Callable[[float], None],
    wire_hash: str | None = None,
) -> Answered[R]:
    """``send(model)`` for each model of ``chain`` in turn, each retried ``max_retries`` times on
    retryable failures with backoff (the server's delay wins, capped). A failure that is not
    retryable (or a rejected key) raises ``rejected(model, failure)`` at once; when every model
    kept failing, ``unavailable(tried, last_failure)``. Failed attempts are appended to
    ``attempts``; the answered one is the caller's to record (it still has to be read)."""
    last: Failure | None = None
    tried: list[str] = []
    for model in chain:
        tried.append(model)
        for retry_index in range(max_retries + 1):
            t0 = time.monotonic()
            try:
                response = send(model)
            except Exception as exc:
                failure = classify(exc)
                attempts.append(CallAttempt(model, "error", failure.error_class, (time.monotonic() - t0) * 1000,
                                            wire_hash=wire_hash))
                if failure.auth or not failure.retryable:
                    raise_with_attempts(rejected(model, failure), attempts)
                last = failure
                if retry_index < max_retries:
                    sleep(backoff_delay(retry_index, base_s=backoff_s, max_s=max_backoff_s,
                                        server_delay_s=failure.retry_delay_s))
                continue
            return Answered(model, response, (time.monotonic() - t0) * 1000)
    assert last is not None
    raise_with_attempts(unavailable(tried, last), attempts)
