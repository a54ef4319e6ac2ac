"""The Gemini model adapter over the google-genai SDK (SPEC §8).

* Function calling with automatic calling disabled; tool parameters go out as JSON schema
  (``FunctionDeclaration.parameters_json_schema``).
* Parts map one to one in both directions, including ``thought`` and ``thought_signature``:
  the model's own content is appended back unchanged on the next turn, which is what the service
  requires for the current turn's function calls.
* Usage from ``usage_metadata``: ``prompt_token_count`` already includes
  ``cached_content_token_count``; missing counts read as 0.
* Classified retries (see ``retry.py``): 429/5xx/timeouts/connection errors are retried on the
  same model with exponential backoff (a 429's ``RetryInfo.retryDelay`` wins, capped), then the
  next model of the chain is tried; other 4xx raise ``ModelRequestError`` at once, except a
  rejected API key (``API_KEY_INVALID`` and kin, 401), which raises ``ModelAuthError`` (a
  configuration error, exit 2, with the fix in its hint). The SDK's own retries are switched off
  so every HTTP attempt is ours and lands in ``ModelResponse.attempts`` (and in ``.attempts`` of
  the exception raised when a call fails).
* Answers without a usable reply (SPEC §9: they never crash a run) are classified, not retried
  here — the caller decides (the operator turn retries them and walks the chain, lenses and
  Pro agents take their own fallbacks):

  - ``ModelOutputError`` (transient): ``MALFORMED_FUNCTION_CALL`` and the other "garbled output"
    finish reasons (authoritative even when some content came with them), an empty candidate
    (no parts with data), no candidates at all;
  - ``ModelRefused`` (deterministic): a ``SAFETY``-like stop, or a prompt blocked by
    ``promptFeedback.blockReason``.

  The attempt is recorded with ``error_class`` = the finish reason (``EMPTY_CANDIDATE``,
  ``NO_CANDIDATES``, ``BLOCKED_<reason>`` where there is none) and the usage the service billed.
* The API key is never put in an error message, repr or log.
"""

from __future__ import annotations

import copy
import os
import time
from collections.abc import Callable
from typing import Any, cast

from google import genai
from google.genai import errors as genai_errors
from google.genai import types

from artemis_cli.errors import (
    ArtemisError,
    ModelAuthError,
    ModelConfigError,
    ModelOutputError,
    ModelRefused,
    ModelRequestError,
    ModelUnavailable,
)
from artemis_cli.models.base import (
    CallAttempt,
    CallGate,
    FunctionCall,
    FunctionResponse,
    Message,
    ModelRequest,
    ModelResponse,
    Part,
    Usage,
)
from artemis_cli.models.retry import (
    CONNECTION_ERRORS,
    RETRYABLE_STATUS,
    TIMEOUT_ERRORS,
    Failure,
    is_auth_failure,
    raise_with_attempts,
    retry_delay_from_details,
    send_along_chain,
)

API_KEY_ENV_VARS = ("GEMINI_API_KEY", "GOOGLE_API_KEY")
#: Finish reasons of a normal end: a candidate without data under one is an EMPTY_CANDIDATE.
_NORMAL_FINISH_REASONS = frozenset({"STOP", "FINISH_REASON_UNSPECIFIED", "UNSPECIFIED"})
#: Policy stops: the model or the service's filters refused. Never retried.
REFUSAL_FINISH_REASONS = frozenset(
    {"SAFETY", "BLOCKLIST", "PROHIBITED_CONTENT", "SPII", "IMAGE_SAFETY", "IMAGE_PROHIBITED_CONTENT", "MODEL_ARMOR"}
)
#: Garbled output: whatever content comes with these is not used (the service says it is broken).
MALFORMED_FINISH_REASONS = frozenset(
    {"MALFORMED_FUNCTION_CALL", "UNEXPECTED_TOOL_CALL", "TOO_MANY_TOOL_CALLS", "MALFORMED_RESPONSE"}
)


# --- conversion: ours -> SDK ----------------------------------------------------------------


#: The dummy signature the service documents for a function call it did not sign (a history
#: from another model): it skips the validation a Gemini 3 model makes.
SKIP_SIGNATURE = b"skip_thought_signature_validator"


def signature_for(part: Part, model: str | None) -> bytes | None:
    """The signature to send ``model``: the part's own when ``model`` issued it (or nobody knows
    who did); another model's signature is not sent — a function call carries the documented
    dummy instead (a Gemini 3 model rejects the foreign one and needs one on its current turn)."""
    if part.thought_signature is None or model is None or part.signature_model in (None, model):
        return part.thought_signature
    return SKIP_SIGNATURE if part.function_call is not None else None


def to_sdk_parts(part: Part, model: str | None = None) -> list[types.Part]:
    """One of our parts as SDK parts (normally exactly one; a part mixing several kinds of data
    is split, the signature staying on the first piece). ``model``: the one the request goes
    to (see ``signature_for``)."""
    pieces: list[dict[str, Any]] = []
    if part.text is not None:
        pieces.append({"text": part.text})
    if part.image_png is not None:
        pieces.append({"inline_data": types.Blob(mime_type="image/png", data=part.image_png)})
    if part.function_call is not None:
        fc = part.function_call
        pieces.append({"function_call": types.FunctionCall(name=fc.name, args=dict(fc.args), id=fc.id)})
    if part.function_response is not None:
        fr = part.function_response
        pieces.append(
            {"function_response": types.FunctionResponse(name=fr.name, response=dict(fr.response), id=fr.id)}
        )
    if not pieces:
        pieces.append({})  # signature-only part (the service sends these; echo them)
    signature = signature_for(part, model)
    out: list[types.Part] = []
    for i, piece in enumerate(pieces):
        if part.thought:
            piece["thought"] = True
        if i == 0 and signature is not None:
            piece["thought_signature"] = signature
        out.append(types.Part(**piece))
    return out


def to_sdk_content(message: Message, model: str | None = None) -> types.Content:
    parts: list[types.Part] = []
    for part in message.parts:
        parts.extend(to_sdk_parts(part, model))
    return types.Content(role=message.role, parts=parts)


#: Model families that price an image by ``media_resolution`` (a fixed token count per image)
#: rather than by its 768x768 tiles; the setting is sent to these models only.
MEDIA_RESOLUTION_MODELS = ("gemini-3",)


def media_resolution_for(model: str, setting: str | None) -> types.MediaResolution | None:
    """The ``media_resolution`` to send to ``model``: the setting, for Gemini 3 models only."""
    if not setting or not model.startswith(MEDIA_RESOLUTION_MODELS):
        return None
    return types.MediaResolution(f"MEDIA_RESOLUTION_{setting.upper()}")


def to_sdk_config(request: ModelRequest, model: str = "") -> types.GenerateContentConfig:
    tools: list[types.Tool | Any] | None = None
    if request.tools:
        tools = [
            types.Tool(
                function_declarations=[
                    types.FunctionDeclaration(
                        name=t.name, description=t.description, parameters_json_schema=t.parameters
                    )
                    for t in request.tools
                ]
            )
        ]
    return types.GenerateContentConfig(
        system_instruction=request.system or None,
        tools=tools,
        automatic_function_calling=types.AutomaticFunctionCallingConfig(disable=True),
        temperature=request.temperature,
        media_resolution=media_resolution_for(model, request.media_resolution),
    )


# --- conversion: SDK -> ours ----------------------------------------------------------------


def from_sdk_part(part: types.Part, model: str | None = None) -> Part | None:
    """An SDK part as ours; None for kinds we do not model (code execution, files...). An empty
    text is no data: nothing to echo (Vertex AI rejects empty text parts); a signature on it is
    kept as a signature-only part."""
    fc = part.function_call
    fr = part.function_response
    image: bytes | None = None
    if part.inline_data is not None and part.inline_data.data is not None:
        image = part.inline_data.data
    ours = Part(
        text=part.text or None,
        image_png=image,
        function_call=FunctionCall(name=fc.name or "", args=dict(fc.args or {}), id=fc.id) if fc else None,
        function_response=FunctionResponse(name=fr.name or "", response=dict(fr.response or {}), id=fr.id)
        if fr
        else None,
        thought=bool(part.thought),
        thought_signature=part.thought_signature,
        signature_model=model if part.thought_signature is not None else None,
    )
    if not has_data(ours) and ours.thought_signature is None:
        return None
    return ours


def has_data(part: Part) -> bool:
    return any(v is not None for v in (part.text, part.image_png, part.function_call, part.function_response))


def usage_from_sdk(meta: types.GenerateContentResponseUsageMetadata | None) -> Usage:
    if meta is None:
        return Usage()
    return Usage(
        prompt_tokens=meta.prompt_token_count or 0,
        cached_tokens=meta.cached_content_token_count or 0,
        completion_tokens=meta.candidates_token_count or 0,
        thoughts_tokens=meta.thoughts_token_count or 0,
    )


def _enum_name(value: Any) -> str:
    if value is None:
        return "UNSPECIFIED"
    return str(getattr(value, "value", None) or getattr(value, "name", None) or value)


def message_from_response(response: types.GenerateContentResponse, model: str | None = None) -> Message:
    """The first candidate's content as our Message (its signatures bound to ``model``, the chain
    name the request went to: the service's ``modelVersion`` may name a dated version of it).

    Raises ``ModelRefused`` for a blocked prompt or a policy stop, ``ModelOutputError`` for a
    garbled or empty answer (see the module docstring); ``.reason`` is the recorded error class.
    """
    candidates = response.candidates or []
    if not candidates:
        feedback = response.prompt_feedback
        reason = _enum_name(feedback.block_reason) if feedback is not None and feedback.block_reason else None
        detail = (
            f": {feedback.block_reason_message}"
            if feedback is not None and feedback.block_reason_message
            else ""
        )
        if reason:
            raise ModelRefused(f"the model refused: the prompt was blocked (block reason {reason}{detail})",
                               reason=f"BLOCKED_{reason}")
        raise ModelOutputError("Gemini returned no candidates", reason="NO_CANDIDATES")
    candidate = candidates[0]
    finish = _enum_name(candidate.finish_reason)
    if finish in REFUSAL_FINISH_REASONS:
        blocked = [_enum_name(r.category) for r in candidate.safety_ratings or [] if r.blocked]
        what = f" ({', '.join(blocked)})" if blocked else ""
        raise ModelRefused(f"the model refused: finish reason {finish}{what}", reason=finish)
    if finish in MALFORMED_FINISH_REASONS:
        # finish_message: google-genai drops the Gemini API's ``finishMessage`` today
        # (googleapis/python-genai#1789); kept for when it passes it through
        raise ModelOutputError(f"Gemini returned a malformed reply (finish reason {finish})", reason=finish,
                               finish_message=candidate.finish_message)
    parts: list[Part] = []
    if candidate.content is not None:
        for sdk_part in candidate.content.parts or []:
            ours = from_sdk_part(sdk_part, model)
            if ours is not None:
                parts.append(ours)
    if not any(has_data(p) for p in parts):
        raise ModelOutputError(
            f"Gemini returned an empty candidate (finish reason {finish})",
            reason="EMPTY_CANDIDATE" if finish in _NORMAL_FINISH_REASONS else finish,
            finish_message=candidate.finish_message,
        )
    return Message(role="model", parts=parts)


def _key_source(explicit: str | None) -> str:
    """Where the API key came from, for the hint when the service rejects it."""
    if explicit:
        return "the key passed to GeminiModel"
    return next((var for var in API_KEY_ENV_VARS if os.environ.get(var)), API_KEY_ENV_VARS[0])


# --- the model ------------------------------------------------------------------------------


def resolve_api_key(explicit: str | None = None) -> str:
    if explicit:
        return explicit
    for var in API_KEY_ENV_VARS:
        value = os.environ.get(var)
        if value:
            return value
    raise ModelConfigError(
        "No Gemini API key found.",
        hint="Set GEMINI_API_KEY (or GOOGLE_API_KEY), or use --model heuristic to run offline.",
    )


class GeminiModel:
    """``Model`` over google-genai with a fallback chain of model names."""

    offline = False

    def __init__(
        self,
        chain: list[str],
        *,
        api_key: str | None = None,
        base_url: str | None = None,
        timeout_s: float = 60,
        max_retries: int = 2,
        backoff_s: float = 1.0,
        max_backoff_s: float = 30.0,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        names = [str(m).strip() for m in chain if str(m).strip()]
        if not names:
            raise ModelConfigError(
                "The Gemini model chain is empty.", hint="Name at least one model, e.g. gemini-2.5-flash."
            )
        if max_retries < 0:
            raise ModelConfigError("max_retries must be >= 0")
        self.chain = names
        self.name = names[0]
        self.label = f"gemini ({names[0]})"
        self.timeout_s = float(timeout_s)
        self.gate = CallGate()  # shared with with_chain siblings (the role models)
        self.max_retries = int(max_retries)
        self.backoff_s = float(backoff_s)
        self.max_backoff_s = float(max_backoff_s)
        self._sleep = sleep
        key = resolve_api_key(api_key)
        self._secrets = (key,)
        self._key_source = _key_source(api_key)
        http_options = types.HttpOptions(
            base_url=base_url,
            timeout=max(1, round(self.timeout_s * 1000)),
            retry_options=types.HttpRetryOptions(attempts=1),  # we classify and retry ourselves
        )
        try:
            self._client = genai.Client(vertexai=False, api_key=key, http_options=http_options)
        except Exception as exc:
            raise ModelConfigError(f"Cannot create the Gemini client: {self._scrub(str(exc))}") from None
        from artemis_cli.models.gemini_rest import rest_sender

        #: each part converted once while the requests keep sending it (None: the SDK's own path)
        self._rest = rest_sender(self._client)

    def __repr__(self) -> str:
        return f"GeminiModel(chain={self.chain!r}, timeout_s={self.timeout_s})"

    def with_chain(self, chain: list[str]) -> GeminiModel:
        """A model for another role (e.g. the visual lens): same client, key and retry policy."""
        names = [str(m).strip() for m in chain if str(m).strip()]
        if not names:
            raise ModelConfigError("The Gemini model chain is empty.")
        sibling = copy.copy(self)
        sibling.chain = names
        sibling.name = names[0]
        sibling.label = f"gemini ({names[0]})"
        if self._rest is not None:  # its own part cache: the roles send different parts
            from artemis_cli.models.gemini_rest import rest_sender

            sibling._rest = rest_sender(self._client)
        return sibling

    def lookup(self, timeout_s: float) -> Failure | None:
        """Ask the service about this model once (``models.get``: it checks the key and the name),
        with no retry; the failure as a run would classify it (the key scrubbed), or None."""
        options = types.HttpOptions(timeout=max(1, round(timeout_s * 1000)),
                                    retry_options=types.HttpRetryOptions(attempts=1))
        try:
            self._client.models.get(model=self.name, config=types.GetModelConfig(http_options=options))
        except Exception as exc:
            return self._classify(exc)
        return None

    def count_tokens(self, system: str, tools: list[Any], timeout_s: float = 3.0) -> tuple[int, str] | None:
        """``system`` and ``tools`` (``ToolDecl``) counted by Gemini's own tokenizer
        (``models.countTokens``, once, no retry) and how; None when it does not answer. The
        Developer API counts ``contents`` only (the SDK refuses a system instruction or tools
        there), so the system text and the declarations' JSON are counted as text: the service's
        framing of the two is left out."""
        import json

        declarations = [{"name": t.name, "description": t.description, "parameters": t.parameters} for t in tools]
        parts = [types.Part(text=system)] + ([types.Part(text=json.dumps(declarations, separators=(",", ":")))]
                                             if declarations else [])
        options = types.HttpOptions(timeout=max(1, round(timeout_s * 1000)),
                                    retry_options=types.HttpRetryOptions(attempts=1))
        try:
            answer = self._client.models.count_tokens(model=self.name, contents=[types.Content(role="user", parts=parts)],
                                                      config=types.CountTokensConfig(http_options=options))
        except Exception:  # a count we cannot get is an estimate, never a failed run
            return None
        total = answer.total_tokens
        return (total, "Gemini models.countTokens") if isinstance(total, int) and total > 0 else None

    def key_hint(self) -> str:
        """How to fix a rejected API key (which variable it came from)."""
        return self._key_hint()

    # -- helpers --

    def _key_hint(self) -> str:
        source = "" if self._key_source == API_KEY_ENV_VARS[0] else f" (the rejected key came from {self._key_source})"
        return (f"set a valid GEMINI_API_KEY{source}; create one at https://aistudio.google.com/apikey, "
                "or use --model heuristic to run offline")

    def _scrub(self, text: str) -> str:
        for secret in self._secrets:
            if secret:
                text = text.replace(secret, "***")
        return text

    def _classify(self, exc: BaseException) -> Failure:
        if isinstance(exc, genai_errors.APIError):
            code = int(exc.code) if isinstance(exc.code, int) else 0
            status = exc.status or ""
            message = self._scrub(str(exc.message or "")).strip()
            description = self._scrub(f"HTTP {code} {status}".strip() + (f": {message}" if message else ""))
            auth = is_auth_failure(code, exc.details)
            return Failure(
                retryable=code in RETRYABLE_STATUS and not auth,
                error_class="api_key_rejected" if auth else f"http_{code}",
                description=description,
                retry_delay_s=retry_delay_from_details(exc.details) if code == 429 else None,
                auth=auth,
            )
        if isinstance(exc, TIMEOUT_ERRORS):
            return Failure(True, "timeout", f"timed out after {self.timeout_s:g}s ({type(exc).__name__})")
        if isinstance(exc, CONNECTION_ERRORS):
            return Failure(
                True, "connection", self._scrub(f"connection failed ({type(exc).__name__}: {exc})")
            )
        return Failure(False, "invalid_request", self._scrub(f"{type(exc).__name__}: {exc}"))

    # -- the protocol --

    def _contents(self, request: ModelRequest, model: str) -> Any:
        """The request's contents for ``model``: REST dicts built once per part (the fast path),
        else SDK contents for ``generate_content``."""
        if self._rest is not None:
            return self._rest.contents(request.messages, model)
        return [to_sdk_content(m, model) for m in request.messages]

    def generate(self, request: ModelRequest) -> ModelResponse:
        self.gate(request, self.name)
        try:
            configs = {model: to_sdk_config(request, model) for model in self.chain}
            # per model: a fallback model must not be sent the signatures another model issued
            contents = {self.chain[0]: self._contents(request, self.chain[0])}
        except Exception as exc:
            raise ModelRequestError(f"Cannot build the Gemini request: {self._scrub(str(exc))}") from None
        attempts: list[CallAttempt] = []
        started = time.monotonic()

        def rejected(model: str, failure: Failure) -> ArtemisError:
            if failure.auth:
                return ModelAuthError(f"Gemini rejected the API key ({failure.description})", hint=self._key_hint())
            return ModelRequestError(f"Gemini rejected the request to {model}: {failure.description}")

        def unavailable(tried: list[str], last: Failure) -> ArtemisError:
            return ModelUnavailable(
                f"Gemini unavailable: tried {', '.join(tried)} ({len(attempts)} attempts); "
                f"last error {last.error_class}: {last.description}",
                hint="Retry later, or use --model heuristic to run offline.",
            )

        def send(model: str) -> types.GenerateContentResponse:
            if model not in contents:  # a fallback: the same messages, signatures bound to it
                contents[model] = self._contents(request, model)
            if self._rest is not None:
                from artemis_cli.models.gemini_rest import NeedsSdkPath

                try:
                    return cast(types.GenerateContentResponse, self._rest.send(model, contents[model], configs[model]))
                except NeedsSdkPath:  # a continuation: generate_content follows it
                    sdk = [to_sdk_content(m, model) for m in request.messages]
                    return self._client.models.generate_content(model=model, contents=sdk, config=configs[model])
            return self._client.models.generate_content(model=model, contents=contents[model], config=configs[model])

        answered = send_along_chain(
            self.chain,
            send,
            self._classify, attempts=attempts, rejected=rejected, unavailable=unavailable,
            max_retries=self.max_retries, backoff_s=self.backoff_s, max_backoff_s=self.max_backoff_s,
            sleep=self._sleep,
        )
        model, response, latency = answered.model, answered.response, answered.latency_ms
        usage = usage_from_sdk(response.usage_metadata)
        try:
            message = message_from_response(response, model)
        except ModelOutputError as exc:
            attempts.append(CallAttempt(model, "error", exc.reason, latency, usage))
            raise_with_attempts(ModelOutputError(f"{exc} (model {model})", reason=exc.reason,
                                                 finish_message=exc.finish_message), attempts)
        except ModelRefused as exc:
            attempts.append(CallAttempt(model, "error", exc.reason, latency, usage))
            raise_with_attempts(ModelRefused(f"{exc} (model {model})", reason=exc.reason), attempts)
        attempts.append(CallAttempt(model, "ok", None, latency, usage))
        return ModelResponse(
            message=message,
            usage=usage,
            # what answered: the service names the model version (a stub says it is one)
            model=getattr(response, "model_version", None) or model,
            latency_ms=(time.monotonic() - started) * 1000,
            attempts=attempts,
        )
