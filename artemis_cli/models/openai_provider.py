"""A model behind any OpenAI-compatible chat-completions endpoint (vLLM, SGLang, Ollama's ``/v1``,
llama.cpp's ``llama-server``, LiteLLM, OpenRouter, OpenAI), over the official ``openai`` SDK.

It behaves like ``GeminiModel`` (SPEC §8): a fallback chain of model names on one endpoint, our
own classified retries (the SDK's are off, so every HTTP attempt lands in
``ModelResponse.attempts``), 429/5xx/timeouts/connection failures retried with exponential
backoff where a ``Retry-After`` (or ``retry-after-ms``) header wins, capped; other 4xx raise
``ModelRequestError`` at once, a rejected key (401) ``ModelAuthError`` with the fix. Replies
without a usable action are classified by ``openai_wire`` (malformed arguments, a length stop,
no JSON action in text mode) and left to the caller, like Gemini's malformed replies.

The request is rendered by ``openai_wire.render_body``; each attempt's ``wire_hash`` is its hash, so
``sessions prompt`` can re-render and check what went over this wire. The API key comes from an
environment variable (``OPENAI_API_KEY`` unless the role names another), never from a file, and
never appears in an error, repr or log. A local server needs none: the SDK is then given a
placeholder the server ignores.
"""

from __future__ import annotations

import copy
import email.utils
import os
import re
import time
from collections.abc import Callable
from typing import Any
from urllib.parse import urlsplit

from artemis_cli.errors import (
    ArtemisError,
    ModelAuthError,
    ModelConfigError,
    ModelOutputError,
    ModelRefused,
    ModelRequestError,
    ModelUnavailable,
)
from artemis_cli.models.base import CallAttempt, CallGate, ModelRequest, ModelResponse, ToolDecl
from artemis_cli.models.openai_wire import (
    WireOptions,
    message_from_completion,
    render_body,
    usage_from_completion,
    wire_hash,
)
from artemis_cli.models.retry import (
    CONNECTION_ERRORS,
    RETRYABLE_STATUS,
    TIMEOUT_ERRORS,
    Failure,
    raise_with_attempts,
    send_along_chain,
)

_STATUS_PREFIX_RE = re.compile(r"^Error code: \d+ - ")
DEFAULT_KEY_ENV = "OPENAI_API_KEY"
BASE_URL_ENV = "ARTEMIS_OPENAI_BASE_URL"
#: Sent as the key when none is configured: local servers ignore it; a service answers 401.
NO_KEY = "no-key-configured"


def check_base_url(url: str) -> str:
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise ModelConfigError(f"not an http(s) endpoint URL: {url!r}",
                               hint="give the server's OpenAI-compatible base URL, e.g. http://127.0.0.1:8000/v1")
    return url.rstrip("/")


def retry_after_s(headers: Any) -> float | None:
    """Seconds a ``Retry-After`` (seconds or HTTP date) or ``retry-after-ms`` header asks for."""
    if headers is None:
        return None
    ms = headers.get("retry-after-ms")
    if ms:
        try:
            return max(0.0, float(ms) / 1000)
        except ValueError:
            pass
    value = headers.get("retry-after")
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


class OpenAIModel:
    """``Model`` over an OpenAI-compatible endpoint with a fallback chain of model names."""

    offline = False
    provider = "openai"

    _window: tuple[int, str] | None

    def __init__(
        self,
        chain: list[str],
        *,
        base_url: str | None = None,
        api_key_env: str | None = None,
        options: WireOptions | None = None,
        timeout_s: float = 120,
        max_retries: int = 2,
        backoff_s: float = 1.0,
        max_backoff_s: float = 30.0,
        sleep: Callable[[float], None] = time.sleep,
        serves_all_roles: bool = False,
    ) -> None:
        names = [str(m).strip() for m in chain if str(m).strip()]
        if not names:
            raise ModelConfigError("The OpenAI-compatible model chain is empty.",
                                   hint="name the model the server serves, e.g. --model openai:qwen2.5-vl-7b")
        if max_retries < 0:
            raise ModelConfigError("max_retries must be >= 0")
        self.chain = names
        self.name = names[0]
        self.base_url = check_base_url(base_url) if base_url else None
        self.api_key_env = api_key_env or DEFAULT_KEY_ENV
        self.gate = CallGate()  # shared with with_chain siblings (the role models)
        self.options = options or WireOptions()
        self.timeout_s = float(timeout_s)
        self.max_retries = int(max_retries)
        self.backoff_s = float(backoff_s)
        self.max_backoff_s = float(max_backoff_s)
        #: Built from ``--model openai:NAME``: every role runs this model on this endpoint.
        self.serves_all_roles = serves_all_roles
        self._sleep = sleep
        key = os.environ.get(self.api_key_env, "").strip()
        if api_key_env and not key:
            raise ModelConfigError(f"the profile names api_key_env {api_key_env!r}, but ${api_key_env} is not set",
                                   hint=f"export {api_key_env}=... (keys never go in profile files)")
        if not key and self.base_url is None:
            raise ModelConfigError(
                "no endpoint given for the OpenAI-compatible model, and no OPENAI_API_KEY for api.openai.com",
                hint=f"pass --base-url http://HOST:PORT/v1 (or set ${BASE_URL_ENV}) for a local server, "
                     "or export OPENAI_API_KEY",
            )
        self._has_key = bool(key)
        self._secrets = (key,) if key else ()
        self.label = self._label(names[0])
        try:
            import openai

            self._client = openai.OpenAI(api_key=key or NO_KEY, base_url=self.base_url, timeout=self.timeout_s,
                                         max_retries=0)
        except Exception as exc:
            raise ModelConfigError(f"Cannot create the OpenAI client: {self._scrub(str(exc))}") from None

    def _label(self, name: str) -> str:
        where = urlsplit(self.base_url).netloc if self.base_url else "api.openai.com"
        return f"openai ({name} @ {where})"

    def __repr__(self) -> str:
        return f"OpenAIModel(chain={self.chain!r}, base_url={self.base_url!r}, timeout_s={self.timeout_s})"

    @property
    def endpoint(self) -> tuple[str | None, str]:
        """What identifies the server and credentials: (base URL, key variable)."""
        return self.base_url, self.api_key_env

    def context_window(self) -> tuple[int, str] | None:
        """The server's context window for this model and where it was read (vLLM's
        ``max_model_len``, llama.cpp's ``/props``, Ollama's ``/api/show``); None when it does not
        say. Asked once per model object (``models.context_window``)."""
        if not hasattr(self, "_window"):
            from artemis_cli.models.context_window import read_window

            key = os.environ.get(self.api_key_env, "").strip()
            self._window = read_window(self.base_url, self.name, key)
        return self._window

    def count_tokens(self, system: str, tools: list[ToolDecl]) -> tuple[int, str] | None:
        """``system`` and ``tools`` as this request would send them, counted by the server's own
        tokenizer (vLLM's or llama.cpp's ``/tokenize``, ``models.context_window``) and how; None
        when the server has none (or does not say its window, which names the server)."""
        window = self.context_window()
        if window is None:
            return None
        from artemis_cli.models.context_window import count_prompt
        from artemis_cli.models.openai_wire import text_mode_system, tool_schema

        key = os.environ.get(self.api_key_env, "").strip()
        if self.options.tool_calls == "text":  # the declarations travel in the system text
            return count_prompt(self.base_url, self.name, key, window[1], text_mode_system(system, tools), [])
        return count_prompt(self.base_url, self.name, key, window[1], system, tool_schema(tools))

    def with_chain(self, chain: list[str], options: WireOptions | None = None) -> OpenAIModel:
        """A model for another role on the same endpoint: same client, key and retry policy."""
        names = [str(m).strip() for m in chain if str(m).strip()]
        if not names:
            raise ModelConfigError("The OpenAI-compatible model chain is empty.")
        sibling = copy.copy(self)
        sibling.chain = names
        sibling.name = names[0]
        sibling.label = self._label(names[0])
        if options is not None:
            sibling.options = options
        return sibling

    # -- helpers --

    def _scrub(self, text: str) -> str:
        for secret in self._secrets:
            text = text.replace(secret, "***")
        return text

    def _key_hint(self) -> str:
        if not self._has_key:
            return (f"the server wants an API key: export {self.api_key_env}=... "
                    "(or name another variable with api_key_env in the profile)")
        return f"set a valid key in ${self.api_key_env}"

    def _classify(self, exc: BaseException) -> Failure:
        import openai

        if isinstance(exc, openai.APIStatusError):
            code = int(exc.status_code)
            # the SDK's message is "Error code: 503 - {body}"; the body's own message says it better
            body = exc.body if isinstance(exc.body, dict) else {}
            message = str(body.get("message") or _STATUS_PREFIX_RE.sub("", str(getattr(exc, "message", "") or "")))
            message = self._scrub(message).strip()
            return Failure(
                retryable=code in RETRYABLE_STATUS,
                error_class="api_key_rejected" if code == 401 else f"http_{code}",
                description=f"HTTP {code}" + (f": {message[:300]}" if message else ""),
                retry_delay_s=retry_after_s(exc.response.headers) if code in (429, 503) else None,
                auth=code == 401,
            )
        if isinstance(exc, (openai.APITimeoutError, *TIMEOUT_ERRORS)):
            return Failure(True, "timeout", f"timed out after {self.timeout_s:g}s ({type(exc).__name__})")
        if isinstance(exc, (openai.APIConnectionError, *CONNECTION_ERRORS)):
            cause = exc.__cause__ or exc
            return Failure(True, "connection",
                           self._scrub(f"connection to {self.base_url or 'api.openai.com'} failed "
                                       f"({type(cause).__name__}: {cause})"))
        return Failure(False, "invalid_request", self._scrub(f"{type(exc).__name__}: {exc}"))

    # -- the protocol --

    def render(self, request: ModelRequest, model: str | None = None) -> dict[str, Any]:
        """The body this model sends for ``request`` (``sessions prompt`` re-renders with it)."""
        return render_body(request, model or self.name, self.options)

    def generate(self, request: ModelRequest) -> ModelResponse:
        self.gate(request, self.name)
        try:
            body = self.render(request)
        except Exception as exc:
            raise ModelRequestError(f"Cannot build the chat-completions request: {self._scrub(str(exc))}") from None
        digest = wire_hash(body)
        attempts: list[CallAttempt] = []
        started = time.monotonic()

        def rejected(model: str, failure: Failure) -> ArtemisError:
            if failure.auth:
                return ModelAuthError(f"the server rejected the API key ({failure.description})", hint=self._key_hint())
            hint = (f"`artemis doctor --base-url {self.base_url or ''}` lists the models it serves"
                    if failure.error_class == "http_404" else None)
            return ModelRequestError(f"the server rejected the request to {model}: {failure.description}", hint=hint)

        def unavailable(tried: list[str], last: Failure) -> ArtemisError:
            return ModelUnavailable(
                f"the OpenAI-compatible endpoint is unavailable: tried {', '.join(tried)} ({len(attempts)} attempts); "
                f"last error {last.error_class}: {last.description}",
                hint="check the server is running (artemis doctor), retry later, or use --model heuristic to run "
                     "offline.")

        answered = send_along_chain(
            self.chain, lambda model: self._client.chat.completions.create(**{**body, "model": model}),
            self._classify, attempts=attempts, rejected=rejected, unavailable=unavailable,
            max_retries=self.max_retries, backoff_s=self.backoff_s, max_backoff_s=self.max_backoff_s,
            sleep=self._sleep, wire_hash=digest)
        model, completion, latency = answered.model, answered.response, answered.latency_ms
        usage = usage_from_completion(completion)
        try:
            message = message_from_completion(completion, request, self.options)
        except ModelOutputError as exc:
            attempts.append(CallAttempt(model, "error", exc.reason, latency, usage, digest))
            raise_with_attempts(ModelOutputError(f"{exc} (model {model})", reason=exc.reason,
                                                 finish_message=exc.finish_message), attempts)
        except ModelRefused as exc:
            attempts.append(CallAttempt(model, "error", exc.reason, latency, usage, digest))
            raise_with_attempts(ModelRefused(f"{exc} (model {model})", reason=exc.reason), attempts)
        attempts.append(CallAttempt(model, "ok", None, latency, usage, digest))
        return ModelResponse(message=message, usage=usage, model=str(getattr(completion, "model", None) or model),
                             latency_ms=(time.monotonic() - started) * 1000, attempts=attempts)
