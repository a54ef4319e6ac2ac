"""Pre-flight model check: before ``artemis run`` creates a session (and before ``artemis resume``
takes one over), the model must exist and answer, so a wrong name or a dead endpoint is a usage
error with no session left behind (or the session still resumable).

OpenAI-compatible endpoints get doctor's check (:func:`endpoint_check.first_problem`: ``GET
/models``, then one tiny request per called model); Gemini gets the same through the google-genai
SDK (``models.get``: the service checks the key and the name there; a tiny ``generateContent``
is left out, as it would take a run's first request off a fault-injecting test server). Offline
models skip it. Every request is one attempt with a short timeout: no retries, so a dead endpoint
fails within seconds.
"""

from __future__ import annotations

import os
from typing import Any

from artemis_cli.errors import UsageError
from artemis_cli.models.base import Model
from artemis_cli.models.endpoint_check import CALL_TIMEOUT_S

#: Seconds ``GET /models`` (Gemini: ``models.get``) may take: shorter than doctor's, as a run waits.
LIST_TIMEOUT_S = 5.0

DOCTOR_HINT = "artemis doctor --model openai:NAME --base-url URL checks an endpoint in detail"


def check_model(model: Model, *, list_timeout_s: float = LIST_TIMEOUT_S, call_timeout_s: float = CALL_TIMEOUT_S) -> None:
    """Raise ``UsageError`` (one line and a hint) when ``model`` cannot answer; offline: nothing."""
    if model.offline:
        return
    if getattr(model, "provider", None) == "openai":
        _check_openai(model, list_timeout_s, call_timeout_s)
        return
    from artemis_cli.models.gemini import GeminiModel

    if isinstance(model, GeminiModel):
        _check_gemini(model, list_timeout_s)


def _check_openai(model: Any, list_timeout_s: float, call_timeout_s: float) -> None:
    from artemis_cli.models.endpoint_check import Endpoint, first_problem
    from artemis_cli.models.openai_provider import DEFAULT_KEY_ENV

    ep = Endpoint(model.base_url, model.api_key_env, model.api_key_env != DEFAULT_KEY_ENV)
    ep.use(model.name, model.options.tool_calls, "the operator")
    for fallback in model.chain[1:]:
        ep.use(fallback, None, "its fallback")
    row = first_problem(ep, list_timeout_s=list_timeout_s, call_timeout_s=call_timeout_s)
    if row is not None:
        raise UsageError(f"model check failed: {row.detail}", hint=row.hint or DOCTOR_HINT)


def _check_gemini(model: Any, list_timeout_s: float) -> None:
    name = model.name
    where = f"Gemini at {os.environ.get('ARTEMIS_GEMINI_BASE_URL') or 'generativelanguage.googleapis.com'}"
    failure = model.lookup(list_timeout_s)  # the run's own classification: the same words, the key scrubbed
    if failure is None:
        return
    if failure.auth:
        raise UsageError(f"model check failed: {where} rejected the API key ({failure.description})",
                         hint=model.key_hint())
    if failure.error_class == "http_404":
        raise UsageError(f"model check failed: {where} does not serve {name!r} ({failure.description})",
                         hint="pass a model Gemini serves, e.g. --model gemini-2.5-flash")
    raise UsageError(f"model check failed: {where} could not be asked about {name!r} ({failure.description})",
                     hint="check $ARTEMIS_GEMINI_BASE_URL and the network, retry later, or run offline with "
                          "--model heuristic")
