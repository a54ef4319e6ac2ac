"""The OpenAI chat-completions wire format as the fake server sees it: parsing and validating a
request body into a ``FakeOpenAIRequest``, what a policy answers (``FakeOpenAIReply``), the
token estimate (a pseudo-token stream, hashed in 16-token blocks for prefix caching), the
shapes of injected faults, and a conversation view for the offline policies. See
``fakes.openai`` for the server and the documented behaviour."""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
import math
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from artemis_cli.models.fakes.gemini_wire import compact_json, reject_constant

HTTP_FAULTS = ("429", "503", "timeout")
MODEL_FAULTS = ("malformed_arguments", "text_only", "no_usage", "length")
FAULT_KINDS = HTTP_FAULTS + MODEL_FAULTS

ROLES = ("system", "developer", "user", "assistant", "tool")
#: vLLM's default KV-cache block size: automatic prefix caching hits whole blocks only.
BLOCK_TOKENS = 16
#: Pseudo-tokens framing every message (start marker, role, end marker), as chat templates do.
MESSAGE_OVERHEAD = 3
#: Image pricing (OpenAI's published rule for tiled vision models): ``detail: low`` costs
#: ``IMAGE_BASE_TOKENS``; otherwise the image is scaled to fit 2048x2048, then its shortest side
#: to at most 768, and costs ``IMAGE_BASE_TOKENS + IMAGE_TILE_TOKENS`` per 512x512 tile.
IMAGE_BASE_TOKENS = 85
IMAGE_TILE_TOKENS = 170
#: Price of an image whose size cannot be read (not a PNG): as a 768x768 image, 4 tiles.
IMAGE_UNREADABLE_TOKENS = IMAGE_BASE_TOKENS + 4 * IMAGE_TILE_TOKENS
DATA_URL_RE = re.compile(r"^data:image/(png|jpeg|jpg|gif|webp);base64,(?P<data>[A-Za-z0-9+/=\s]*)$")
TOOL_NAME_RE = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")


class OpenAIError(Exception):
    """A request the service rejects: answered with ``code`` and OpenAI's error body."""

    def __init__(self, code: int, message: str, *, type: str = "invalid_request_error",
                 param: str | None = None, err_code: str | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.type = type
        self.param = param
        self.err_code = err_code

    def body(self) -> dict[str, Any]:
        return openai_error_body(str(self), type=self.type, param=self.param, code=self.err_code)


def openai_error_body(message: str, *, type: str = "invalid_request_error", param: str | None = None,
                      code: str | None = None) -> dict[str, Any]:
    return {"error": {"message": message, "type": type, "param": param, "code": code}}


def estimate_text_tokens(text: str) -> int:
    """Characters / 4, rounded up."""
    return math.ceil(len(text) / 4)


# --- request / reply types ------------------------------------------------------------------


@dataclass
class FakeOpenAIRequest:
    """One chat-completions request the server received (recorded in ``server.requests``)."""

    model: str
    body: dict[str, Any]
    messages: list[dict[str, Any]]
    tools: list[dict[str, Any]]
    #: HTTP status the server answered with (0 when the connection was dropped).
    status: int = 0
    #: The injected fault this request consumed, if any.
    fault: str | None = None

    @property
    def system(self) -> str:
        return "\n".join(content_text(m) for m in self.messages if m.get("role") in ("system", "developer"))

    @property
    def tool_names(self) -> list[str]:
        return [t["function"]["name"] for t in self.tools]

    @property
    def max_tokens(self) -> int | None:
        value = self.body.get("max_completion_tokens", self.body.get("max_tokens"))
        return value if isinstance(value, int) else None

    def last_user_text(self) -> str:
        for m in reversed(self.messages):
            if m.get("role") == "user":
                return content_text(m)
        return ""

    def tool_results_since_last_user(self) -> list[dict[str, Any]]:
        """Tool messages after the last user message, in order."""
        out: list[dict[str, Any]] = []
        for m in self.messages:
            if m.get("role") == "user":
                out = []
            elif m.get("role") == "tool":
                out.append(m)
        return out


@dataclass
class FakeOpenAIReply:
    """What the policy wants the model to say. ``tool_calls`` are ``(name, arguments)`` pairs;
    arguments given as a dict are sent as compact JSON, a string is sent verbatim."""

    content: str | None = None
    tool_calls: list[tuple[str, dict[str, Any] | str]] = field(default_factory=list)
    #: ``finish_reason`` (default: ``tool_calls`` when there are tool calls, else ``stop``).
    finish_reason: str | None = None
    #: ``model`` reported in the answer (default: the model asked); stub policies set a label.
    model: str | None = None

    @classmethod
    def call(cls, name: str, args: dict[str, Any] | None = None, *, content: str | None = None) -> FakeOpenAIReply:
        return cls(content=content, tool_calls=[(name, args or {})])

    @classmethod
    def text(cls, text: str) -> FakeOpenAIReply:
        return cls(content=text)


OpenAIPolicy = Callable[[FakeOpenAIRequest], FakeOpenAIReply]


def content_text(message: dict[str, Any]) -> str:
    """The text of a message's content (string, or its ``text`` parts joined by newlines)."""
    content = message.get("content")
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(p["text"] for p in content if isinstance(p, dict) and p.get("type") == "text")
    return ""


def arguments_json(arguments: dict[str, Any] | str) -> str:
    return arguments if isinstance(arguments, str) else json.dumps(arguments, ensure_ascii=False)


# --- parsing and validation -----------------------------------------------------------------


def _bad(message: str, param: str | None = None, code: str | None = None) -> OpenAIError:
    return OpenAIError(400, message, param=param, err_code=code)


def _check_parts(content: Any, i: int, role: str) -> None:
    if content is None and role == "assistant":
        return
    if isinstance(content, str):
        return
    if not isinstance(content, list):
        raise _bad(f"Invalid type for 'messages[{i}].content': expected one of a string or array of objects.",
                   f"messages[{i}].content", "invalid_type")
    allowed = ("text", "image_url") if role == "user" else ("text",)
    for j, part in enumerate(content):
        where = f"messages[{i}].content[{j}]"
        kind = part.get("type") if isinstance(part, dict) else None
        if kind not in allowed:
            supported = ", ".join(repr(a) for a in allowed)
            raise _bad(f"Invalid value: {kind!r}. Supported values are: {supported}.", f"{where}.type", "invalid_value")
        assert isinstance(part, dict)
        if kind == "text" and not isinstance(part.get("text"), str):
            raise _bad(f"Missing required parameter: '{where}.text'.", f"{where}.text", "missing_required_parameter")
        if kind == "image_url":
            image = part.get("image_url")
            url = image.get("url") if isinstance(image, dict) else None
            if not isinstance(url, str):
                raise _bad(f"Missing required parameter: '{where}.image_url.url'.", f"{where}.image_url.url",
                           "missing_required_parameter")
            if not DATA_URL_RE.match(url):
                raise _bad("Invalid image URL: the fake server accepts only base64 data: URLs of "
                           "png/jpeg/gif/webp images.", f"{where}.image_url.url", "invalid_image_url")
            detail = image.get("detail", "auto") if isinstance(image, dict) else "auto"
            if detail not in ("auto", "low", "high"):
                raise _bad(f"Invalid value: {detail!r}. Supported values are: 'auto', 'low', and 'high'.",
                           f"{where}.image_url.detail", "invalid_value")


def _check_tools(tools: Any) -> list[dict[str, Any]]:
    if tools is None:
        return []
    if not isinstance(tools, list):
        raise _bad("Invalid type for 'tools': expected an array of objects.", "tools", "invalid_type")
    for k, tool in enumerate(tools):
        fn = tool.get("function") if isinstance(tool, dict) else None
        if not isinstance(tool, dict) or tool.get("type") != "function" or not isinstance(fn, dict):
            raise _bad(f"Invalid value for 'tools[{k}]': expected {{'type': 'function', 'function': {{...}}}}.",
                       f"tools[{k}]", "invalid_value")
        name = fn.get("name")
        if not isinstance(name, str) or not TOOL_NAME_RE.match(name):
            raise _bad(f"Invalid 'tools[{k}].function.name': string does not match pattern. Expected a string "
                       "that matches the pattern '^[a-zA-Z0-9_-]+$'.", f"tools[{k}].function.name", "invalid_value")
        if "parameters" in fn and not isinstance(fn["parameters"], dict):
            raise _bad(f"Invalid type for 'tools[{k}].function.parameters': expected an object.",
                       f"tools[{k}].function.parameters", "invalid_type")
    return tools


def _check_tool_calls(message: dict[str, Any], i: int) -> list[str]:
    calls = message.get("tool_calls")
    if calls is None:
        return []
    if not isinstance(calls, list):
        raise _bad(f"Invalid type for 'messages[{i}].tool_calls': expected an array.",
                   f"messages[{i}].tool_calls", "invalid_type")
    ids: list[str] = []
    for j, call in enumerate(calls):
        fn = call.get("function") if isinstance(call, dict) else None
        if (not isinstance(call, dict) or not isinstance(call.get("id"), str) or not isinstance(fn, dict)
                or not isinstance(fn.get("name"), str) or not isinstance(fn.get("arguments"), str)):
            raise _bad(f"Invalid 'messages[{i}].tool_calls[{j}]': expected id, type 'function' and "
                       "function {name, arguments (a string)}.", f"messages[{i}].tool_calls[{j}]", "invalid_value")
        ids.append(call["id"])
    return ids


def validate_messages(messages: Any) -> list[dict[str, Any]]:
    if messages is None:
        raise _bad("Missing required parameter: 'messages'.", "messages", "missing_required_parameter")
    if not isinstance(messages, list):
        raise _bad("Invalid type for 'messages': expected an array of objects.", "messages", "invalid_type")
    if not messages:
        raise _bad("Invalid 'messages': empty array. Expected an array with minimum length 1, but got an empty "
                   "array instead.", "messages", "empty_array")
    open_ids: list[str] = []  # tool_call ids of the last assistant message still unanswered
    answerable: set[str] = set()
    for i, m in enumerate(messages):
        if not isinstance(m, dict):
            raise _bad(f"Invalid type for 'messages[{i}]': expected an object.", f"messages[{i}]", "invalid_type")
        role = m.get("role")
        if role not in ROLES:
            raise _bad(f"Invalid value: {role!r}. Supported values are: 'system', 'assistant', 'user', 'tool', "
                       "and 'developer'.", f"messages[{i}].role", "invalid_value")
        if role != "tool" and open_ids:
            raise _bad("An assistant message with 'tool_calls' must be followed by tool messages responding to "
                       "each 'tool_call_id'. The following tool_call_ids did not have response messages: "
                       + ", ".join(open_ids), f"messages.[{i}].role")
        if role != "assistant" and "content" not in m:
            raise _bad(f"Missing required parameter: 'messages[{i}].content'.", f"messages[{i}].content",
                       "missing_required_parameter")
        _check_parts(m.get("content"), i, str(role))
        if role == "assistant":
            ids = _check_tool_calls(m, i)
            if m.get("content") is None and not ids:
                raise _bad(f"Invalid value for 'messages[{i}]': an assistant message needs 'content' or "
                           "'tool_calls'.", f"messages[{i}]", "invalid_value")
            open_ids, answerable = list(ids), set(ids)
        elif role == "tool":
            call_id = m.get("tool_call_id")
            if not answerable:
                raise _bad("Invalid parameter: messages with role 'tool' must be a response to a preceeding "
                           "message with 'tool_calls'.", f"messages.[{i}].role")
            if not isinstance(call_id, str) or call_id not in answerable:
                raise _bad(f"Invalid parameter: 'tool_call_id' of '{call_id}' not found in 'tool_calls' of "
                           "previous message.", f"messages.[{i}].tool_call_id")
            if call_id in open_ids:
                open_ids.remove(call_id)
        else:
            answerable = set()
    if open_ids:
        raise _bad("An assistant message with 'tool_calls' must be followed by tool messages responding to each "
                   "'tool_call_id'. The following tool_call_ids did not have response messages: "
                   + ", ".join(open_ids), "messages")
    return messages


def parse_body(raw: bytes) -> FakeOpenAIRequest:
    try:
        body = json.loads(raw.decode("utf-8"), parse_constant=reject_constant)
        json.dumps(body, ensure_ascii=False).encode("utf-8")  # lone surrogates are not text
    except (UnicodeError, ValueError, RecursionError):
        raise _bad("We could not parse the JSON body of your request. (HINT: This likely means you aren't using "
                   "your HTTP library correctly. The OpenAI API expects a JSON payload, but what was sent was "
                   "not valid JSON.)") from None
    if not isinstance(body, dict):
        raise _bad("Invalid type for request body: expected an object.")
    model = body.get("model")
    if not isinstance(model, str) or not model:
        raise _bad("you must provide a model parameter")
    if body.get("stream"):
        raise _bad("The fake server does not stream; send stream=false.", "stream", "unsupported_value")
    for key in ("max_tokens", "max_completion_tokens"):
        value = body.get(key)
        if value is not None and (not isinstance(value, int) or isinstance(value, bool) or value < 1):
            raise _bad(f"Invalid '{key}': expected an integer >= 1.", key, "invalid_value")
    tools = _check_tools(body.get("tools"))
    messages = validate_messages(body.get("messages"))
    return FakeOpenAIRequest(model=model, body=body, messages=messages, tools=tools)


# --- token accounting -----------------------------------------------------------------------


def png_size(data_b64: str) -> tuple[int, int] | None:
    head = data_b64[:64].strip()
    head = head[: len(head) - len(head) % 4]
    try:
        raw = base64.b64decode(head, validate=True)
    except (binascii.Error, ValueError):
        return None
    if len(raw) < 24 or raw[:8] != b"\x89PNG\r\n\x1a\n" or raw[12:16] != b"IHDR":
        return None
    return int.from_bytes(raw[16:20], "big"), int.from_bytes(raw[20:24], "big")


def image_tokens(url: str, detail: str = "auto") -> int:
    """Tokens of a data-URL image (see ``IMAGE_BASE_TOKENS``)."""
    if detail == "low":
        return IMAGE_BASE_TOKENS
    m = DATA_URL_RE.match(url)
    size = png_size(m.group("data")) if m else None
    if size is None or min(size) <= 0:
        return IMAGE_UNREADABLE_TOKENS
    w, h = float(size[0]), float(size[1])
    if max(w, h) > 2048:
        scale = 2048 / max(w, h)
        w, h = w * scale, h * scale
    if min(w, h) > 768:
        scale = 768 / min(w, h)
        w, h = w * scale, h * scale
    return IMAGE_BASE_TOKENS + IMAGE_TILE_TOKENS * math.ceil(w / 512) * math.ceil(h / 512)


def _text_tokens(text: str) -> list[str]:
    return [text[i : i + 4] for i in range(0, len(text), 4)]


def text_token_stream(text: str) -> list[str]:
    """Plain text as the fake's pseudo-tokens (chars/4: what ``/tokenize``'s ``prompt`` or
    ``content`` counts)."""
    return _text_tokens(text)


def prompt_token_stream(req: FakeOpenAIRequest) -> list[str]:
    """The request as pseudo-tokens, in the order a chat template serialises it: the tool
    declarations (compact JSON, chars/4), then each message framed by ``MESSAGE_OVERHEAD``
    tokens -- text chars/4, each image ``image_tokens`` tokens named after its data, an
    assistant's tool calls as compact JSON chars/4, a tool message's ``tool_call_id`` then its
    content."""
    out: list[str] = []
    if req.tools:
        out.append("<|tools|>")
        out.extend(_text_tokens(compact_json(req.tools)))
    for m in req.messages:
        role = str(m["role"])
        out.extend(("<|start|>", role))
        if role == "tool":
            out.extend(_text_tokens(str(m.get("tool_call_id"))))
        content = m.get("content")
        if isinstance(content, str):
            out.extend(_text_tokens(content))
        elif isinstance(content, list):
            for part in content:
                if part["type"] == "text":
                    out.extend(_text_tokens(part["text"]))
                else:
                    url, detail = part["image_url"]["url"], part["image_url"].get("detail", "auto")
                    digest = hashlib.blake2b(url.encode(), digest_size=8).hexdigest()
                    out.extend(f"<img:{digest}:{k}>" for k in range(image_tokens(url, detail)))
        if m.get("tool_calls"):
            calls = [{"id": c["id"], "name": c["function"]["name"], "arguments": c["function"]["arguments"]}
                     for c in m["tool_calls"]]
            out.extend(_text_tokens(compact_json(calls)))
        out.append("<|end|>")
    return out


def block_hashes(tokens: list[str]) -> list[bytes]:
    """Chained hashes of every full ``BLOCK_TOKENS`` block (a block's hash covers all before it,
    as vLLM's prefix cache keys blocks)."""
    hashes: list[bytes] = []
    parent = b""
    for start in range(0, len(tokens) - BLOCK_TOKENS + 1, BLOCK_TOKENS):
        h = hashlib.blake2b(parent + "\x1f".join(tokens[start : start + BLOCK_TOKENS]).encode(), digest_size=16)
        parent = h.digest()
        hashes.append(parent)
    return hashes


def cached_tokens_for(hit_blocks: int, prompt_tokens: int) -> int:
    """Whole hit blocks, never the last prompt token (vLLM always computes it)."""
    return min(hit_blocks * BLOCK_TOKENS, (max(prompt_tokens - 1, 0) // BLOCK_TOKENS) * BLOCK_TOKENS)


def completion_tokens(content: str | None, calls: list[dict[str, Any]]) -> int:
    n = estimate_text_tokens(content or "")
    for c in calls:
        n += estimate_text_tokens(c["function"]["name"] + c["function"]["arguments"])
    return n


# --- faults ---------------------------------------------------------------------------------


def apply_model_fault(kind: str, reply: FakeOpenAIReply, req: FakeOpenAIRequest) -> FakeOpenAIReply:
    """The policy's reply bent into the fault's shape (``no_usage`` leaves the reply alone)."""
    calls = reply.tool_calls or [(req.tool_names[0] if req.tools else "tap", {"index": 3})]
    if kind == "malformed_arguments":
        name, args = calls[0]
        text = arguments_json(args)
        broken = text[:-1] if text.endswith("}") else text + ', "x": '  # cut before the closing brace
        return FakeOpenAIReply(content=reply.content, tool_calls=[(name, broken)], model=reply.model)
    if kind == "text_only":
        written = "\n".join(json.dumps({"name": n, "arguments": a}) for n, a in calls)
        lead = f"{reply.content}\n" if reply.content else ""
        return FakeOpenAIReply(content=f"{lead}{written}", finish_reason="stop", model=reply.model)
    if kind == "length":
        full = reply.content or "\n".join(f"{n}({arguments_json(a)})" for n, a in calls)
        limit = min(len(full) // 2, 4 * req.max_tokens) if req.max_tokens else len(full) // 2
        return FakeOpenAIReply(content=full[:limit], finish_reason="length", model=reply.model)
    if kind == "no_usage":
        return reply
    raise ValueError(f"not a model fault: {kind!r}")
