"""A local fake of the Gemini REST API for tests and benchmarks (SPEC §8).

``FakeGeminiServer`` answers ``POST /{version}/models/{model}:generateContent`` (any version; the
SDK uses ``v1beta``) on 127.0.0.1, so the real google-genai SDK talks to it through
``HttpOptions(base_url=server.base_url)``. A pluggable *policy* (``FakeRequest -> FakeReply``)
decides what the "model" says; the server adds what the real service adds around it.

Thought signatures
    Every ``functionCall`` part the server returns gets a random ``thoughtSignature`` that the
    server remembers. With ``require_thought_signatures`` (default) each request's *current turn*
    -- the contents after the last ``user`` content that carries text (a user content holding only
    ``functionResponse`` parts does not start a turn) -- is checked: every ``model`` functionCall
    part there must carry a signature the server issued, else HTTP 400 ``INVALID_ARGUMENT`` as the
    service answers. Earlier turns are not checked (the service does not check them either).
    Each signature is bound to the model that issued it: a Gemini 3 model (``gemini-3*``) rejects
    one issued by another model (400 ``INVALID_ARGUMENT`` "Corrupted thought signature.", as after
    a fallback from one model to the next); older models accept it. The documented dummy value
    ``skip_thought_signature_validator`` (``SKIP_SIGNATURE``) passes the check on every model.

Usage accounting (a documented estimate, not Google's tokenizer)
    A request is split into an ordered list of *blocks*: the system instruction, the tool
    declarations, then every part of every content in order. Each block weighs

    * text part / system instruction: ``ceil(chars / 4)``;
    * tool declarations: ``ceil(len(json) / 4)`` of their compact JSON;
    * inline image (``inlineData``), priced per model family as the service does: Gemini 2.x
      counts 258 tokens when both sides are at most 384 px, else 258 per 768x768 tile (a
      1080x2400 screenshot is 2 x 4 tiles = 2064 tokens; scaled to 518x1152 it is 2 tiles = 516),
      the size read from the PNG header (258 when unreadable); Gemini 3 (``gemini-3*``) counts a
      fixed number per image by media resolution -- the part's ``mediaResolution``, else the
      request's ``generationConfig.mediaResolution``, else high: low 280, medium 560, high 1120;
    * any other part (functionCall, functionResponse, ...): ``ceil(len(json) / 4)`` of the part's
      compact JSON (signature included).

    ``promptTokenCount`` is the sum of all block weights. ``cachedContentTokenCount`` is the weight
    of the longest block prefix this request shares with ANY earlier *successful* request to the
    same model, reported only when it reaches ``min_cacheable_tokens`` (default 1024), else 0 --
    implicit caching as the service reports it (``promptTokenCount`` includes the cached tokens).
    Prefixes are kept in a per-model trie of block hashes, so a request costs O(blocks).
    ``candidatesTokenCount`` estimates the reply's non-thought parts the same way,
    ``thoughtsTokenCount`` the thought text (chars / 4), and ``totalTokenCount`` is their sum.

Fault injection
    ``inject(kind, count=1, model=None, match=None)`` queues faults, consumed in order by matching
    requests (any model, or the given one; ``match`` narrows further, e.g. ``lambda r: bool(r.tools)``
    for operator requests only). Transport and HTTP faults:

    * ``"429"`` carries a ``google.rpc.RetryInfo`` detail with ``retryDelay`` = ``retry_delay_s``;
      ``"500"``, ``"503"``, ``"400"`` are plain error bodies;
    * ``"timeout"`` holds the connection for ``timeout_hold_s`` and then drops it without an answer;
    * ``"invalid_key"``: 400 ``INVALID_ARGUMENT`` "API key not valid. Please pass a valid API key."
      with the ``google.rpc.ErrorInfo`` (reason ``API_KEY_INVALID``) and ``LocalizedMessage``
      details, exactly as the service answers a wrong key (also what ``expected_api_key`` answers).

    Model faults: HTTP 200 answers without a usable reply, as real models produce now and then.
    The request is validated first (a missing thought signature is still a 400) and its usage is
    reported as for any answer (the service bills the prompt), with no candidate tokens:

    * ``"malformed_function_call"``: a candidate with ``finishReason: MALFORMED_FUNCTION_CALL``,
      no ``content`` and a ``finishMessage`` quoting the garbled call;
    * ``"empty_candidate"``: a candidate whose ``content`` has no parts, ``finishReason: STOP``;
    * ``"safety"``: ``finishReason: SAFETY`` with ``safetyRatings`` (one category blocked), no
      ``content``;
    * ``"blocked_prompt"``: no candidates; ``promptFeedback.blockReason: SAFETY`` with ratings.

    A policy can produce the same shapes with ``FakeReply`` (``finish_reason``,
    ``finish_message``, ``block_reason``, ``safety_ratings``, empty ``parts``).

Counting tokens
    ``POST …/models/{model}:countTokens`` (``count_tokens=True``, the default, as the service has
    it) answers ``{"totalTokens", "promptTokensDetails"}`` for ``{"contents": [...]}`` or
    ``{"generateContentRequest": {...}}``, counted as a ``generateContent`` of the same request
    would count its prompt (``promptTokenCount``); a body with neither is the service's 400, an
    unknown model its 404. ``count_tokens=False`` answers 404 (an endpoint that is not there).

Robustness
    Malformed JSON or wrongly shaped bodies get a 400 error body; an exception in the policy gets
    a 500 error body. Bad framing -- an invalid or duplicated ``Content-Length``, a chunked body,
    a body shorter than announced or over ``MAX_BODY_BYTES`` -- and malformed HTTP get a 4xx JSON
    error body too, and the connection is closed (the rest of the stream cannot be trusted).
    Anything unexpected that escapes a handler thread is recorded in ``server.errors`` (a client
    hanging up is not unexpected). The server never dies on bad input.

The wire format (request parsing, replies, the usage estimate, fault shapes) is in
``fakes.gemini_wire``.
"""

from __future__ import annotations

import base64
import json
import re
import secrets
from http.server import BaseHTTPRequestHandler
from typing import Any
from urllib.parse import parse_qs, urlsplit

from artemis_cli.models.fakes.gemini_wire import (
    CONTENT_LENGTH_RE,
    FAULT_KINDS,
    HTTP_FAULTS,
    IMAGE_TOKENS,
    INVALID_KEY_MESSAGE,
    MAX_BODY_BYTES,
    MODEL_FAULTS,
    PATH_RE,
    RPC_STATUS,
    SAFETY_RATINGS,
    BadFraming,
    BadRequest,
    CacheRecord,
    FakeReply,
    FakeRequest,
    Policy,
    PrefixTrie,
    compact_json,
    decode_signature,
    error_body,
    estimate_part_tokens,
    estimate_text_tokens,
    image_part_tokens,
    image_tokens_for,
    invalid_key_answer,
    model_fault_reply,
    parse_body,
    parts_of,
    reject_constant,
    request_blocks,
    rpc_status,
)
from artemis_cli.models.fakes.http import FakeHTTPServer, JSONHandler, QueuedFault

__all__ = [  # the wire names are re-exported: tests and benchmarks import them from here
    "CONTENT_LENGTH_RE",
    "FAULT_KINDS",
    "HTTP_FAULTS",
    "IMAGE_TOKENS",
    "INVALID_KEY_MESSAGE",
    "MAX_BODY_BYTES",
    "MODEL_FAULTS",
    "PATH_RE",
    "RPC_STATUS",
    "SAFETY_RATINGS",
    "BadFraming",
    "BadRequest",
    "CacheRecord",
    "FakeGeminiServer",
    "FakeReply",
    "FakeRequest",
    "Policy",
    "PrefixTrie",
    "QueuedFault",
    "compact_json",
    "decode_signature",
    "error_body",
    "estimate_part_tokens",
    "estimate_text_tokens",
    "image_part_tokens",
    "image_tokens_for",
    "invalid_key_answer",
    "model_fault_reply",
    "parse_body",
    "parts_of",
    "reject_constant",
    "request_blocks",
    "rpc_status",
]


#: Models that reject a thought signature another model issued (the service's Gemini 3 check).
STRICT_SIGNATURE_MODELS = ("gemini-3",)
#: What the fake serves unless told otherwise: the Gemini models the shipped profiles, the
#: registry and the docs name. Any other name gets the service's 404, as a typo does there.
SERVED_BY_DEFAULT = ("gemini-2.0-flash", "gemini-2.0-flash-lite", "gemini-2.5-flash", "gemini-2.5-flash-lite",
                     "gemini-2.5-pro", "gemini-3-flash-preview", "gemini-3-pro-preview")
#: The dummy signature the service documents for function calls it did not sign (a history from
#: another model); it skips the validation.
SKIP_SIGNATURE = b"skip_thought_signature_validator"


class FakeGeminiServer(FakeHTTPServer[FakeRequest]):
    """Local Gemini REST fake. Use as a context manager or call ``start()`` / ``stop()``."""

    def __init__(
        self,
        policy: Policy,
        *,
        min_cacheable_tokens: int = 1024,
        require_thought_signatures: bool = True,
        retry_delay_s: float = 0.01,
        timeout_hold_s: float = 5.0,
        expected_api_key: str | None = None,
        keep_requests: int | None = None,
        models: list[str] | None = None,
        host: str = "127.0.0.1",
        port: int = 0,
        count_tokens: bool = True,
    ) -> None:
        super().__init__(keep_requests=keep_requests, host=host, port=port)
        self.policy = policy
        self.count_tokens = count_tokens
        #: the model of every countTokens request answered
        self.count_log: list[str] = []
        #: The models served (``GET models/NAME`` and generateContent); None: the real service's
        #: names Artemis uses (:data:`SERVED_BY_DEFAULT`), so a misspelt name is a 404 as there.
        self.models = list(models) if models is not None else list(SERVED_BY_DEFAULT)
        self.min_cacheable_tokens = min_cacheable_tokens
        self.require_thought_signatures = require_thought_signatures
        self.retry_delay_s = retry_delay_s
        self.timeout_hold_s = timeout_hold_s
        self.expected_api_key = expected_api_key
        self._issued: dict[bytes, str] = {}  # signature -> the model that issued it
        self._tries: dict[str, PrefixTrie] = {}
        #: Per answered request: where its prefix diverged from everything sent before (blocks are
        #: the system instruction, the tools, then every part in order; see the module docstring).
        self.cache_log: list[CacheRecord] = []

    fault_kinds = FAULT_KINDS
    thread_name = "fake-gemini"

    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        return _make_handler(self)

    @property
    def base_url(self) -> str:
        return f"http://{self._host}:{self.port}"

    def serves(self, model: str) -> bool:
        return model in self.models

    def issued_signature(self, signature: bytes) -> bool:
        with self._lock:
            return signature in self._issued

    # -- request handling (called from handler threads) --

    def _fault_answer(self, kind: str) -> tuple[int, dict[str, Any]]:
        if kind == "429":
            delay = f"{self.retry_delay_s:g}s"
            return 429, error_body(
                429,
                "RESOURCE_EXHAUSTED",
                "You exceeded your current quota, please check your plan and billing details.",
                [{"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": delay}],
            )
        if kind == "503":
            return 503, error_body(503, "UNAVAILABLE", "The model is overloaded. Please try again later.")
        if kind == "500":
            return 500, error_body(500, "INTERNAL", "An internal error has occurred. Please retry.")
        if kind == "invalid_key":
            return invalid_key_answer()
        return 400, error_body(400, "INVALID_ARGUMENT", "Request contains an invalid argument.")

    def _check_signatures(self, req: FakeRequest) -> str | None:
        for content in req.current_turn():
            if content.get("role") != "model":
                continue
            for part in parts_of(content):
                if "functionCall" not in part:
                    continue
                raw = part.get("thoughtSignature", part.get("thought_signature"))
                sig = decode_signature(raw)
                name = part["functionCall"].get("name")
                if sig is None:
                    return (
                        "Function call is missing a thought_signature in functionCall parts. This is required "
                        "for tools to work correctly, and missing thought_signature may lead to degraded model "
                        f"performance. Additional data, function call `{name}`, position 1. Please refer to "
                        "https://ai.google.dev/gemini-api/docs/thought-signatures for more details."
                    )
                if sig == SKIP_SIGNATURE:
                    continue
                with self._lock:
                    issuer = self._issued.get(sig)
                if issuer is None:
                    return f"Corrupted thought signature in functionCall part `{name}`."
                if issuer != req.model and req.model.startswith(STRICT_SIGNATURE_MODELS):
                    return "Corrupted thought signature."
        return None

    def _usage_and_register(self, req: FakeRequest, reply_parts: list[dict[str, Any]]) -> dict[str, int]:
        blocks = request_blocks(req)
        prompt = sum(w for _, w in blocks)
        with self._lock:
            trie = self._tries.setdefault(req.model, PrefixTrie())
            shared, shared_blocks = trie.longest_prefix(blocks)
            trie.insert(blocks)
            cached = shared if shared >= self.min_cacheable_tokens else 0
            self.cache_log.append(CacheRecord(model=req.model, prompt_tokens=prompt, cached_tokens=cached,
                                              blocks=len(blocks), shared_blocks=shared_blocks,
                                              tools=bool(req.tools)))
        thoughts = sum(estimate_text_tokens(p["text"]) for p in reply_parts if p.get("thought"))
        candidates = sum(
            estimate_part_tokens({k: v for k, v in p.items() if k != "thoughtSignature"})
            for p in reply_parts
            if not p.get("thought")
        )
        return {
            "promptTokenCount": prompt,
            "cachedContentTokenCount": cached,
            "candidatesTokenCount": candidates,
            "thoughtsTokenCount": thoughts,
            "totalTokenCount": prompt + candidates + thoughts,
        }

    def _reply_parts(self, reply: FakeReply, model: str) -> list[dict[str, Any]]:
        parts: list[dict[str, Any]] = []
        if reply.thought_text:
            parts.append({"text": reply.thought_text, "thought": True})
        for part in reply.parts:
            out = dict(part)
            if "functionCall" in out:
                sig = secrets.token_bytes(24)
                with self._lock:
                    self._issued[sig] = model
                out["thoughtSignature"] = base64.b64encode(sig).decode("ascii")
            parts.append(out)
        return parts

    def handle_generate(self, req: FakeRequest, fault: str | None = None) -> tuple[int, dict[str, Any]]:
        """Decide the answer to a parsed request (after auth and HTTP faults); ``fault`` is a
        model fault to answer instead of the policy's reply."""
        if self.require_thought_signatures:
            problem = self._check_signatures(req)
            if problem is not None:
                return 400, error_body(400, "INVALID_ARGUMENT", problem)
        try:
            reply = model_fault_reply(fault, req) if fault is not None else self.policy(req)
            if not isinstance(reply, FakeReply):
                raise TypeError(f"policy returned {type(reply).__name__}, not FakeReply")
            parts = self._reply_parts(reply, req.model)
            json.dumps(parts)  # the policy's parts must be JSON
            json.dumps(reply.safety_ratings)
        except Exception as exc:  # a broken policy is a 500, never a dead server
            return 500, error_body(500, "INTERNAL", f"fake policy failed: {type(exc).__name__}: {exc}")
        usage = self._usage_and_register(req, parts)
        if reply.block_reason:
            feedback: dict[str, Any] = {"blockReason": reply.block_reason}
            if reply.safety_ratings is not None:
                feedback["safetyRatings"] = reply.safety_ratings
            return 200, {
                "promptFeedback": feedback,
                "usageMetadata": {
                    "promptTokenCount": usage["promptTokenCount"],
                    "totalTokenCount": usage["promptTokenCount"],
                },
                "modelVersion": reply.model_version or req.model,
            }
        candidate: dict[str, Any] = {}
        if parts:
            candidate["content"] = {"role": "model", "parts": parts}
        elif reply.finish_reason == "STOP":
            candidate["content"] = {"role": "model"}  # an empty answer: content without parts
        candidate["finishReason"] = reply.finish_reason
        if reply.finish_message is not None:
            candidate["finishMessage"] = reply.finish_message
        if reply.safety_ratings is not None:
            candidate["safetyRatings"] = reply.safety_ratings
        candidate["index"] = 0
        if not parts:  # the service reports no candidate tokens for an answer without parts
            usage = {k: v for k, v in usage.items() if k not in ("candidatesTokenCount", "thoughtsTokenCount")}
            if not usage.get("cachedContentTokenCount"):
                usage.pop("cachedContentTokenCount", None)
        return 200, {"candidates": [candidate], "usageMetadata": usage, "modelVersion": reply.model_version or req.model}


MODEL_GET_RE = re.compile(r"^/(?P<version>[^/]+)/models/(?P<model>[^/:]+)$")


def not_found_answer(model: str, version: str, method: str) -> tuple[int, dict[str, Any]]:
    """The service's 404 for a model it does not serve."""
    return 404, error_body(404, "NOT_FOUND", f"models/{model} is not found for API version {version}, or is not "
                                             f"supported for {method}. Call ListModels to see the list of available "
                                             "models and their supported methods.")


def _make_handler(server: FakeGeminiServer) -> type[BaseHTTPRequestHandler]:
    class Handler(JSONHandler):
        server_version = "FakeGemini/1.0"
        content_type = "application/json; charset=UTF-8"

        def error_body(self, code: int, message: str) -> dict[str, Any]:
            return error_body(code, rpc_status(code), message)

        def _handle_get(self) -> None:
            """``GET /{version}/models/{model}`` (the SDK's ``models.get``), as the service answers it."""
            self._read_body()
            split = urlsplit(self.path)
            match = MODEL_GET_RE.match(split.path)
            if match is None:
                self._send(404, error_body(404, "NOT_FOUND", f"Requested entity was not found: {split.path}"))
                return
            if not self._authorized(split.query):
                return
            model, version = match.group("model"), match.group("version")
            if not server.serves(model):
                self._send(*not_found_answer(model, version, "get"))
                return
            self._send(200, {"name": f"models/{model}", "version": "001", "displayName": model,
                             "inputTokenLimit": 1048576, "outputTokenLimit": 65536,
                             "supportedGenerationMethods": ["generateContent", "countTokens"]})

        def _authorized(self, query_string: str) -> bool:
            query = parse_qs(query_string)
            key = self.headers.get("x-goog-api-key") or next(iter(query.get("key", [])), None)
            if not key:
                self._send(
                    403,
                    error_body(
                        403,
                        "PERMISSION_DENIED",
                        "Method doesn't allow unregistered callers (callers without established identity). "
                        "Please use API Key or other form of API consumer identity to call this API.",
                    ),
                )
                return False
            if server.expected_api_key is not None and key != server.expected_api_key:
                self._send(*invalid_key_answer())
                return False
            return True

        def _count_tokens(self, model: str, version: str, query: str, raw: bytes) -> None:
            if not self._authorized(query):
                return
            if not server.serves(model):
                self._send(*not_found_answer(model, version, "countTokens"))
                return
            try:
                body = json.loads(raw.decode("utf-8"))
                inner = body.get("generateContentRequest") if isinstance(body, dict) else None
                if not isinstance(inner, dict):
                    inner = {"contents": body.get("contents")} if isinstance(body, dict) else None
                req = parse_body(model, version, json.dumps(inner).encode("utf-8"))
            except (UnicodeError, ValueError):
                self._send(400, error_body(400, "INVALID_ARGUMENT", "Invalid JSON payload received."))
                return
            except BadRequest as exc:
                self._send(400, error_body(400, "INVALID_ARGUMENT", str(exc)))
                return
            total = sum(w for _, w in request_blocks(req))
            with server._lock:
                server.count_log.append(model)
            self._send(200, {"totalTokens": total, "promptTokensDetails": [{"modality": "TEXT", "tokenCount": total}]})

        def _handle_post(self) -> None:
            raw = self._read_body()
            split = urlsplit(self.path)
            match = PATH_RE.match(split.path)
            if match is not None and match.group("method") == "countTokens" and server.count_tokens:
                self._count_tokens(match.group("model"), match.group("version"), split.query, raw)
                return
            if match is None or match.group("method") != "generateContent":
                self._send(
                    404, error_body(404, "NOT_FOUND", f"Requested entity was not found: {split.path}")
                )
                return
            if not self._authorized(split.query):
                return
            model, version = match.group("model"), match.group("version")
            if not server.serves(model):
                self._send(*not_found_answer(model, version, "generateContent"))
                return
            try:
                req = parse_body(model, version, raw)
            except BadRequest as exc:
                self._send(400, error_body(400, "INVALID_ARGUMENT", str(exc)))
                return
            with server._lock:
                server._keep(req)
            fault = server._take_fault(req)
            req.fault = fault
            if fault == "timeout":
                req.status = 0
                server._released.wait(server.timeout_hold_s)
                self.close_connection = True
                return  # drop the connection without an answer
            if fault in MODEL_FAULTS:
                code, body = server.handle_generate(req, fault)
            elif fault is not None:
                code, body = server._fault_answer(fault)
            else:
                code, body = server.handle_generate(req)
            req.status = code
            self._send(code, body)

    return Handler
