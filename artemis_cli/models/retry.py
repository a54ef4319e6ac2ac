"""Classification of model-call failures and the backoff between retries (SPEC §8).

Retryable: HTTP 408/429/500/502/503/504, timeouts and connection failures. Everything else the
service rejects (400, 401, 403, 404, other 4xx) is a request error: never retried and never
retried into a weaker model.
"""

from __future__ import annotations

import importlib
import re
from dataclasses import dataclass
from typing import Any

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


def parse_duration_s(value: Any) -> float | None:
    """Parse a protobuf Duration JSON string such as ``"38s"`` or ``"0.25s"``."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return float(value) if value >= 0 else None
    if not isinstance(value, str):
        return None
    match = _DURATION_RE.match(value)
    return float(match.group(1)) if match else None


def retry_delay_from_details(details: Any) -> float | None:
    """The ``retryDelay`` of a ``google.rpc.RetryInfo`` entry in an error body, if present."""
    if not isinstance(details, dict):
        return None
    error = details.get("error", details)
    entries = error.get("details") if isinstance(error, dict) else None
    if not isinstance(entries, list):
        return None
    for entry in entries:
        if isinstance(entry, dict) and str(entry.get("@type", "")).endswith("google.rpc.RetryInfo"):
            return parse_duration_s(entry.get("retryDelay"))
    return None


def backoff_delay(
    retry_index: int, *, base_s: float, max_s: float, server_delay_s: float | None = None
) -> float:
    """Delay before retry number ``retry_index`` (0-based): the server's, else exponential; capped."""
    if server_delay_s is not None:
        return max(0.0, min(server_delay_s, max_s))
    return max(0.0, min(base_s * (2**retry_index), max_s))
