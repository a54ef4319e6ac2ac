"""One structured-JSON exchange with an auxiliary agent: ask, parse, retry once, give up cleanly.

``ask_structured`` sends the request; the reply text is parsed by :func:`extract_json` and then
by the agent's own ``parse`` (which raises ``ReplyError`` with a message the model can act on).
An unusable reply gets exactly one retry carrying the parse error; a second unusable reply, or a
model error (the model's own HTTP retries and fallbacks happen inside ``generate``), ends in an
:class:`Outcome` with ``value=None`` and the reason — the caller turns that into its documented
fallback. Nothing here raises on bad model output.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

from artemis_cli.engine.storage import log_failure
from artemis_cli.models.base import Message, Model, ModelRequest, ModelResponse, Part

from .prompts import RETRY_TEMPLATE

__all__ = ["MAX_ATTEMPTS", "Outcome", "RecordCall", "ReplyError", "ask_structured", "extract_json"]

log = logging.getLogger(__name__)

T = TypeVar("T")

#: ``record_call(request, response, error)`` after every model call (exactly one of response /
#: error is set) — same shape as the lens hook; the loop writes ``llm_calls`` rows with it.
RecordCall = Callable[[ModelRequest, ModelResponse | None, Exception | None], None]

MAX_ATTEMPTS = 2  # the first ask and one retry with the parse error
_FENCE = re.compile(r"^```[a-zA-Z]*\s*\n?(.*?)\n?```\s*$", re.S)


class ReplyError(ValueError):
    """A reply that cannot be used; the message is sent back to the model on the retry."""


def extract_json(text: str) -> Any:
    """The JSON value in a reply: bare, inside a code fence, or the outermost ``{…}`` span."""
    body = (text or "").strip()
    if not body:
        raise ReplyError("the reply was empty")
    fenced = _FENCE.match(body)
    if fenced:
        body = fenced.group(1).strip()
    try:
        return json.loads(body)
    except json.JSONDecodeError as first:
        start, end = body.find("{"), body.rfind("}")
        if 0 <= start < end:
            try:
                return json.loads(body[start : end + 1])
            except json.JSONDecodeError:
                pass
        raise ReplyError(f"the reply is not valid JSON ({first.msg} at line {first.lineno} column {first.colno})") from None


@dataclass
class Outcome(Generic[T]):
    """What one exchange produced: ``value`` (None when the agent gave up) and how it went."""

    value: T | None
    attempts: int
    errors: list[str] = field(default_factory=list)
    model: str | None = None

    @property
    def ok(self) -> bool:
        return self.value is not None

    @property
    def error(self) -> str:
        return self.errors[-1] if self.errors else ""


def _record(record_call: RecordCall | None, request: ModelRequest, response: ModelResponse | None,
            error: Exception | None) -> None:
    if record_call is None:
        return
    try:
        record_call(request, response, error)
    except Exception as exc:  # metering must never cost an agent's answer
        log_failure(log, exc, "recording an auxiliary agent call failed")


def ask_structured(
    model: Model,
    *,
    role: str,
    system: str,
    user_text: str,
    parse: Callable[[Any], T],
    record_call: RecordCall | None = None,
    temperature: float | None = 0.0,
    images: Sequence[tuple[str, bytes]] = (),
    media_resolution: str | None = None,
) -> Outcome[T]:
    """Ask ``model`` for a JSON reply and parse it; one retry on an unusable reply. ``images``:
    (label, PNG) pairs sent after the request text, each after its label (already scaled)."""
    parts = [Part(text=user_text)]
    for label, png in images:
        parts += [Part(text=label), Part(image_png=png)]
    messages = [Message("user", parts)]
    errors: list[str] = []
    model_name: str | None = getattr(model, "name", None)
    for attempt in range(1, MAX_ATTEMPTS + 1):
        request = ModelRequest(system=system, messages=list(messages), tools=[], role=role, temperature=temperature,
                               media_resolution=media_resolution)
        try:
            response = model.generate(request)
        except Exception as exc:  # ModelError and anything the adapter lets through
            _record(record_call, request, None, exc)
            errors.append(f"model call failed: {type(exc).__name__}: {exc}")
            return Outcome(None, attempt, errors, model_name)
        _record(record_call, request, response, None)
        model_name = response.model or model_name
        text = response.message.text()
        try:
            return Outcome(parse(extract_json(text)), attempt, errors, model_name)
        except (ReplyError, ValueError, TypeError, KeyError) as exc:
            errors.append(str(exc) or type(exc).__name__)
            messages.append(Message("model", [Part(text=text or "(empty)")]))
            messages.append(Message("user", [Part(text=RETRY_TEMPLATE.format(error=errors[-1]))]))
    return Outcome(None, MAX_ATTEMPTS, errors, model_name)
