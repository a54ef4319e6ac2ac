"""A local fake of the OpenAI chat-completions API for tests and benchmarks.

``FakeOpenAIServer`` answers ``POST /v1/chat/completions`` and ``GET /v1/models`` on 127.0.0.1,
so the official ``openai`` SDK talks to it through ``OpenAI(base_url=server.base_url)``
(``base_url`` ends in ``/v1``). A pluggable *policy* (``FakeOpenAIRequest -> FakeOpenAIReply``)
decides what the "model" says; the server adds what the service adds around it (ids, tool-call
ids, ``usage``). ``script_policy`` and ``heuristic_policy`` play Artemis's offline models, and
``gemini_policy`` plays any of the Gemini fake's policies (``fakes.openai_policies``);
``python -m artemis_cli.models.fakes.openai --port P`` serves the heuristic one.

Validation (as the service answers, HTTP 400 with ``{"error": {"message", "type", "param",
"code"}}``): a JSON object body with ``model`` and a non-empty ``messages`` list; roles
system/developer/user/assistant/tool; content a string or a list of parts (``text``; for users
also ``image_url`` with a base64 ``data:`` URL); ``tools`` as function declarations; a ``tool``
message must answer a ``tool_calls`` id of the preceding assistant message, and every such id
must be answered before the next non-tool message. ``stream: true`` is refused. A missing
``Authorization: Bearer`` key is a 401, as is a wrong one when ``expected_api_key`` is set; an
unknown model is a 404 when ``models`` is given.

Usage accounting (a documented estimate, not OpenAI's tokenizer)
    The prompt is serialised into pseudo-tokens in template order (``prompt_token_stream``):
    the tools' compact JSON, then each message framed by 3 tokens; text counts ``ceil(chars/4)``;
    an image ``detail: low`` counts 85, otherwise it is scaled to fit 2048x2048, then its shortest
    side to 768, and counts 85 + 170 per 512x512 tile (size from the PNG header; unreadable:
    765). ``prompt_tokens`` is the stream's length.

    ``prompt_tokens_details.cached_tokens`` is reported the way vLLM's automatic prefix caching
    reports it: the stream is cut into 16-token blocks whose hashes chain (a block's hash covers
    everything before it); the cached tokens are the leading blocks already computed for an
    earlier answered request to the same model, in whole blocks, and never the last prompt token
    -- so always a multiple of 16 and at most ``prompt_tokens - 1``. ``completion_tokens`` is
    ``ceil(chars/4)`` of the content plus each call's name and arguments. ``cache_log`` keeps a
    ``CacheRecord`` per answered request (``blocks`` = full blocks, ``shared_blocks`` = hits).

Fault injection
    ``inject(kind, count=1, model=None, match=None)`` queues faults consumed in order by matching
    requests. ``"429"`` (with ``Retry-After: retry_after_s`` seconds), ``"503"`` and
    ``"timeout"`` (hold ``timeout_hold_s``, then drop the connection) happen before the policy
    runs. Model faults bend the policy's reply: ``"malformed_arguments"`` (the first tool call's
    arguments cut so they are not JSON), ``"text_only"`` (the tool calls written as JSON inside
    the content, ``finish_reason: stop``), ``"no_usage"`` (no ``usage`` key), ``"length"``
    (``finish_reason: length``, content cut to half, or to ``max_tokens``).

Context window (``max_model_len=N``, ``window_kind``)
    As hostile as the servers it plays: a request whose prompt tokens plus ``max_tokens`` (1
    when absent: the reply needs one) exceed N is recorded in ``overflows`` and, for
    ``window_kind="vllm"`` (the default), refused with vLLM's 400 (``BadRequestError`` /
    ``invalid_request_error``, param ``messages``: "This model's maximum context length is N
    tokens. However, you requested M tokens (X in the messages, Y in the completion). …"), and
    ``/v1/models`` entries carry ``max_model_len``; ``"llamacpp"`` answers ``GET /props``
    (``default_generation_settings.n_ctx``) and refuses with llama.cpp's
    ``exceed_context_size_error``; ``"ollama"`` answers ``POST /api/show`` (``num_ctx`` in
    ``parameters``, ``model_info`` ``<arch>.context_length``) and, as Ollama does, truncates
    silently (answers normally; only ``overflows`` knows).

Tokenizer (``tokenize=True``, the default: as the servers it plays have one)
    ``POST /tokenize`` (beside ``/v1``, as the servers serve it) counts with the fake's own
    accounting. ``window_kind="vllm"``: ``{"model", "prompt"}`` (the text's tokens) or
    ``{"model", "messages", "tools"?}`` (the chat prompt's tokens, exactly what a completion of
    those messages would count) answers ``{"count", "max_model_len", "tokens"}``; neither, or a
    bad body, is a 400; an unknown model a 404 when ``models`` is given. ``"llamacpp"``:
    ``{"content"}`` answers ``{"tokens": [...]}`` -- and, as llama.cpp does, ``{"tokens": []}``
    for a body without ``content``. ``"ollama"`` (Ollama has no tokenizer endpoint) and
    ``tokenize=False`` (an older server) answer 404.

Robustness is the Gemini fake's: bad framing answers a 4xx and closes the connection, a broken
policy is a 500, anything escaping a handler thread lands in ``server.errors``.
"""

from __future__ import annotations

import argparse
import contextlib
import secrets
import threading
import time
from http.server import BaseHTTPRequestHandler
from typing import Any

from artemis_cli.models.fakes.gemini_wire import CacheRecord
from artemis_cli.models.fakes.http import FakeHTTPServer, JSONHandler
from artemis_cli.models.fakes.openai_policies import gemini_policy, heuristic_rest_policy
from artemis_cli.models.fakes.openai_wire import (
    BLOCK_TOKENS,
    FAULT_KINDS,
    MODEL_FAULTS,
    FakeOpenAIReply,
    FakeOpenAIRequest,
    OpenAIError,
    OpenAIPolicy,
    apply_model_fault,
    arguments_json,
    block_hashes,
    cached_tokens_for,
    completion_tokens,
    image_tokens,
    openai_error_body,
    parse_body,
    prompt_token_stream,
    text_token_stream,
)

#: How a fake with ``max_model_len`` reports and enforces it (see the module doc).
WINDOW_KINDS = ("vllm", "llamacpp", "ollama")

__all__ = [
    "BLOCK_TOKENS",
    "FAULT_KINDS",
    "FakeOpenAIReply",
    "FakeOpenAIRequest",
    "FakeOpenAIServer",
    "OpenAIPolicy",
    "finish_policy",
    "gemini_policy",
    "heuristic_policy",
    "image_tokens",
    "script_policy",
]


def finish_policy(req: FakeOpenAIRequest) -> FakeOpenAIReply:
    """Answers every tool request with ``finish`` and every other request with a short text."""
    if req.tools:
        return FakeOpenAIReply.call("finish", {"success": True, "answer": "done (fake server)"})
    return FakeOpenAIReply.text("ok (fake server)")


def script_policy(script: list[dict[str, Any]]) -> OpenAIPolicy:
    """Plays ``script`` (Artemis's scripted model) through the protocol; tool-less requests
    (lens calls) get the labelled stub text of the Gemini fake's scripted policy."""
    from artemis_cli.models.offline.scripted import script_policy as rest_script_policy

    return gemini_policy(rest_script_policy(script))


def heuristic_policy() -> OpenAIPolicy:
    """Artemis's heuristic baseline through the protocol; tool-less requests get stub text."""
    return gemini_policy(heuristic_rest_policy())


class FakeOpenAIServer(FakeHTTPServer[FakeOpenAIRequest]):
    """Local OpenAI chat-completions fake. Use as a context manager or ``start()`` / ``stop()``."""

    def __init__(
        self,
        policy: OpenAIPolicy = finish_policy,
        *,
        models: list[str] | None = None,
        retry_after_s: float = 1.0,
        timeout_hold_s: float = 5.0,
        expected_api_key: str | None = None,
        keep_requests: int | None = None,
        host: str = "127.0.0.1",
        port: int = 0,
        max_model_len: int | None = None,
        window_kind: str = "vllm",
        tokenize: bool = True,
    ) -> None:
        super().__init__(keep_requests=keep_requests, host=host, port=port)
        if window_kind not in WINDOW_KINDS:
            raise ValueError(f"window_kind must be one of {WINDOW_KINDS}, got {window_kind!r}")
        self.max_model_len = max_model_len
        self.window_kind = window_kind
        self.tokenize = tokenize
        #: the bodies of every ``POST /tokenize`` answered
        self.tokenize_log: list[Any] = []
        #: (prompt tokens, max_tokens) of every request that did not fit ``max_model_len``
        self.overflows: list[tuple[int, int]] = []
        #: the largest prompt (tokens) of any request received
        self.max_prompt_tokens = 0
        self.policy = policy
        self.models = models
        self.retry_after_s = retry_after_s
        self.timeout_hold_s = timeout_hold_s
        self.expected_api_key = expected_api_key
        #: Per answered request: its prompt, cached tokens, full blocks and hit blocks.
        self.cache_log: list[CacheRecord] = []
        self._blocks: dict[str, set[bytes]] = {}
        self._seen_models: list[str] = []

    fault_kinds = FAULT_KINDS
    thread_name = "fake-openai"

    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        return _make_handler(self)

    @property
    def base_url(self) -> str:
        """What to pass as the SDK's ``base_url`` (ends in ``/v1``)."""
        return f"http://{self._host}:{self.port}/v1"

    # -- request handling (called from handler threads) --

    def model_list(self) -> dict[str, Any]:
        with self._lock:
            names = list(self.models) if self.models is not None else list(self._seen_models) or ["fake-openai"]
        owner = {"llamacpp": "llamacpp", "ollama": "library"}.get(self.window_kind, "vllm")
        entries: list[dict[str, Any]] = [{"id": n, "object": "model", "created": 0, "owned_by": owner} for n in names]
        if self.max_model_len is not None and self.window_kind == "vllm":
            for entry in entries:
                entry.update(root=entry["id"], parent=None, max_model_len=self.max_model_len)
        return {"object": "list", "data": entries}

    def window_answer(self, path: str, body: Any) -> dict[str, Any] | None:
        """llama.cpp's ``GET /props`` or Ollama's ``POST /api/show`` (None: not this server's)."""
        n = self.max_model_len
        if path == "/props" and self.window_kind == "llamacpp":
            return {"default_generation_settings": {"n_ctx": n or 4096, "params": {"n_predict": -1}},
                    "total_slots": 1, "model_path": "/models/fake.gguf"}
        if path == "/api/show" and self.window_kind == "ollama":
            params = "stop                           \"<|im_end|>\""
            if n is not None:
                params = f"num_ctx                        {n}\n" + params
            return {"modelfile": "FROM fake", "parameters": params, "template": "{{ .Prompt }}",
                    "details": {"family": "qwen2", "parameter_size": "7.6B"},
                    "model_info": {"general.architecture": "qwen2", "qwen2.context_length": 32768}}
        return None

    def tokenize_answer(self, raw: bytes) -> dict[str, Any] | None:
        """``POST /tokenize`` as vLLM or llama.cpp answer it (see the module doc); None: this
        server has no tokenizer endpoint (a 404). Raises ``OpenAIError`` for a bad body."""
        if not self.tokenize or self.window_kind == "ollama":
            return None
        import json

        try:
            body = json.loads(raw.decode("utf-8"))
        except (UnicodeError, ValueError):
            raise OpenAIError(400, "the body is not valid JSON") from None
        if not isinstance(body, dict):
            raise OpenAIError(400, "Invalid type for request body: expected an object.")
        with self._lock:
            self.tokenize_log.append(body)
        if self.window_kind == "llamacpp":
            content = body.get("content")
            if content is None:
                return {"tokens": []}  # llama.cpp answers so when there is nothing to tokenize
            if not isinstance(content, str):
                raise OpenAIError(400, "\"content\" must be a string")
            return {"tokens": list(range(len(text_token_stream(content))))}
        model = body.get("model")
        if not isinstance(model, str) or not model:
            raise OpenAIError(400, "Field required: model", param="model")
        if self.models is not None and model not in self.models:
            raise OpenAIError(404, f"The model `{model}` does not exist.", err_code="model_not_found")
        if isinstance(body.get("prompt"), str):
            count = len(text_token_stream(body["prompt"]))
        elif "messages" in body:
            chat = {"model": model, "messages": body["messages"],
                    **({"tools": body["tools"]} if body.get("tools") is not None else {})}
            count = len(prompt_token_stream(parse_body(json.dumps(chat).encode("utf-8"))))
        else:
            raise OpenAIError(400, "Field required: prompt or messages", param="prompt")
        return {"count": count, "max_model_len": self.max_model_len or 32768, "tokens": list(range(count))}

    def window_refusal(self, req: FakeOpenAIRequest) -> tuple[int, dict[str, Any]] | None:
        """The server's answer to a request that does not fit its window (None: it fits, or this
        server truncates silently)."""
        prompt = len(prompt_token_stream(req))
        with self._lock:
            self.max_prompt_tokens = max(self.max_prompt_tokens, prompt)
        n = self.max_model_len
        asked = req.max_tokens or 0
        if n is None or prompt + max(asked, 1) <= n:
            return None
        with self._lock:
            self.overflows.append((prompt, asked))
        if self.window_kind == "ollama":
            return None
        if self.window_kind == "llamacpp":
            return 400, {"error": {"code": 400, "message": "the request exceeds the available context size, try "
                                   "increasing it", "type": "exceed_context_size_error", "n_prompt_tokens": prompt,
                                   "n_ctx": n}}
        return 400, {"error": {"message": f"This model's maximum context length is {n} tokens. However, you requested "
                               f"{prompt + asked} tokens ({prompt} in the messages, {asked} in the completion). "
                               "Please reduce the length of the messages or completion.",
                               "type": "BadRequestError", "param": "messages", "code": 400}}

    def _usage(self, req: FakeOpenAIRequest, completion: int) -> dict[str, Any]:
        tokens = prompt_token_stream(req)
        hashes = block_hashes(tokens)
        with self._lock:
            seen = self._blocks.setdefault(req.model, set())
            hits = 0
            while hits < len(hashes) and hashes[hits] in seen:
                hits += 1
            seen.update(hashes)
            cached = cached_tokens_for(hits, len(tokens))
            self.cache_log.append(CacheRecord(model=req.model, prompt_tokens=len(tokens), cached_tokens=cached,
                                              blocks=len(hashes), shared_blocks=hits, tools=bool(req.tools)))
        return {"prompt_tokens": len(tokens), "completion_tokens": completion,
                "total_tokens": len(tokens) + completion, "prompt_tokens_details": {"cached_tokens": cached}}

    def handle_completion(self, req: FakeOpenAIRequest, fault: str | None = None) -> tuple[int, dict[str, Any]]:
        """The answer to a validated request; ``fault`` is a model fault bending the reply."""
        try:
            reply = self.policy(req)
            if not isinstance(reply, FakeOpenAIReply):
                raise TypeError(f"policy returned {type(reply).__name__}, not FakeOpenAIReply")
            if fault is not None:
                reply = apply_model_fault(fault, reply, req)
            calls = [{"id": f"call_{secrets.token_hex(12)}", "type": "function",
                      "function": {"name": name, "arguments": arguments_json(args)}}
                     for name, args in reply.tool_calls]
        except Exception as exc:  # a broken policy is a 500, never a dead server
            return 500, openai_error_body(f"fake policy failed: {type(exc).__name__}: {exc}", type="server_error")
        message: dict[str, Any] = {"role": "assistant", "content": reply.content, "refusal": None}
        if calls:
            message["tool_calls"] = calls
        finish = reply.finish_reason or ("tool_calls" if calls else "stop")
        body: dict[str, Any] = {
            "id": f"chatcmpl-{secrets.token_hex(12)}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": reply.model or req.model,
            "choices": [{"index": 0, "message": message, "finish_reason": finish, "logprobs": None}],
            "system_fingerprint": "fp_artemis_fake",
        }
        usage = self._usage(req, completion_tokens(reply.content, calls))
        if fault != "no_usage":
            body["usage"] = usage
        return 200, body


def _make_handler(server: FakeOpenAIServer) -> type[BaseHTTPRequestHandler]:
    class Handler(JSONHandler):
        server_version = "FakeOpenAI/1.0"

        def error_body(self, code: int, message: str) -> dict[str, Any]:
            return openai_error_body(message, type="invalid_request_error" if code < 500 else "server_error")

        def known_error(self, exc: Exception) -> tuple[int, dict[str, Any]] | None:
            return (exc.code, exc.body()) if isinstance(exc, OpenAIError) else None

        def _check_auth(self) -> None:
            auth = self.headers.get("Authorization", "")
            key = auth[len("Bearer "):].strip() if auth.startswith("Bearer ") else ""
            if not key:
                raise OpenAIError(401, "You didn't provide an API key. You need to provide your API key in an "
                                  "Authorization header using Bearer auth (i.e. Authorization: Bearer YOUR_KEY).")
            if server.expected_api_key is not None and key != server.expected_api_key:
                raise OpenAIError(401, f"Incorrect API key provided: {key[:3]}***. You can find your API key at "
                                  "https://platform.openai.com/account/api-keys.", err_code="invalid_api_key")

        def _not_found(self, path: str) -> None:
            raise OpenAIError(404, f"Invalid URL ({self.command} {path})")

        def _handle_get(self) -> None:
            self._read_body()
            path = self.path.split("?", 1)[0]
            window = server.window_answer(path.rstrip("/"), None)
            if window is not None:
                self._send(200, window)
                return
            if path.rstrip("/") != "/v1/models":
                self._not_found(path)
            self._check_auth()
            self._send(200, server.model_list())

        def _handle_post(self) -> None:
            raw = self._read_body()
            path = self.path.split("?", 1)[0]
            window = server.window_answer(path.rstrip("/"), raw)
            if window is not None:
                self._send(200, window)
                return
            if path.rstrip("/") == "/tokenize":
                answer = server.tokenize_answer(raw)
                if answer is None:  # a server without a tokenizer endpoint
                    self._not_found(path)
                else:
                    self._send(200, answer)
                return
            if path.rstrip("/") != "/v1/chat/completions":
                self._not_found(path)
            self._check_auth()
            req = parse_body(raw)
            if server.models is not None and req.model not in server.models:
                raise OpenAIError(404, f"The model `{req.model}` does not exist or you do not have access to it.",
                                  err_code="model_not_found")
            with server._lock:
                if req.model not in server._seen_models:
                    server._seen_models.append(req.model)
                server._keep(req)
            refused = server.window_refusal(req)
            if refused is not None:
                req.status = refused[0]
                self._send(*refused)
                return
            fault = server._take_fault(req)
            req.fault = fault
            if fault == "timeout":
                server._released.wait(server.timeout_hold_s)
                self.close_connection = True
                return  # drop the connection without an answer
            if fault == "429":
                req.status = 429
                self._send(429, openai_error_body(
                    f"Rate limit reached for {req.model} on requests per min (RPM): Limit 3, Used 3, Requested 1. "
                    f"Please try again in {server.retry_after_s:g}s.", type="requests", code="rate_limit_exceeded"),
                    {"Retry-After": f"{server.retry_after_s:g}"})
                return
            if fault == "503":
                req.status = 503
                self._send(503, openai_error_body("The server is overloaded or not ready yet.", type="server_error"))
                return
            code, body = server.handle_completion(req, fault if fault in MODEL_FAULTS else None)
            req.status = code
            self._send(code, body)

    return Handler


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="Serve the fake OpenAI chat-completions API (heuristic policy).")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0, help="0 picks a free port")
    parser.add_argument("--policy", choices=("heuristic", "finish"), default="heuristic")
    parser.add_argument("--models", default=None, metavar="NAME[,NAME...]",
                        help="the models /v1/models lists and the only ones served (default: any name, "
                             "listed once asked for)")
    parser.add_argument("--max-model-len", type=int, default=None, metavar="N",
                        help="the context window: reported (vLLM: /v1/models max_model_len) and enforced")
    parser.add_argument("--window-kind", choices=WINDOW_KINDS, default="vllm",
                        help="how the window is reported and enforced: vllm (400), llamacpp (/props, 400), "
                             "ollama (/api/show, silent truncation)")
    args = parser.parse_args(argv)
    policy = heuristic_policy() if args.policy == "heuristic" else finish_policy
    models = [m.strip() for m in args.models.split(",") if m.strip()] if args.models else None
    with FakeOpenAIServer(policy, models=models, host=args.host, port=args.port, max_model_len=args.max_model_len,
                          window_kind=args.window_kind) as server:
        print(f"fake OpenAI server at {server.base_url}", flush=True)
        with contextlib.suppress(KeyboardInterrupt):
            threading.Event().wait()


if __name__ == "__main__":
    main()
