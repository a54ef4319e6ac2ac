"""The Gemini REST wire format as the fake server sees it: parsing a request body into a
``FakeRequest``, what a policy answers (``FakeReply``), the usage estimate (tokens per block, the
prefix trie for implicit caching) and the shapes of injected faults. See ``fakes.gemini`` for the
server and the documented behaviour."""

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

IMAGE_TOKENS = 258
MAX_BODY_BYTES = 64 * 1024 * 1024  # far above anything Artemis sends; larger bodies get a 413
HTTP_FAULTS = ("429", "500", "503", "400", "timeout", "invalid_key")
MODEL_FAULTS = ("malformed_function_call", "empty_candidate", "safety", "blocked_prompt")
FAULT_KINDS = HTTP_FAULTS + MODEL_FAULTS

INVALID_KEY_MESSAGE = "API key not valid. Please pass a valid API key."
#: ``safetyRatings`` of a SAFETY stop: the service lists every category, the offending one blocked.
SAFETY_RATINGS: tuple[dict[str, Any], ...] = (
    {"category": "HARM_CATEGORY_SEXUALLY_EXPLICIT", "probability": "NEGLIGIBLE"},
    {"category": "HARM_CATEGORY_HATE_SPEECH", "probability": "NEGLIGIBLE"},
    {"category": "HARM_CATEGORY_HARASSMENT", "probability": "NEGLIGIBLE"},
    {"category": "HARM_CATEGORY_DANGEROUS_CONTENT", "probability": "HIGH", "blocked": True},
)

CONTENT_LENGTH_RE = re.compile(r"^[0-9]{1,19}$")
RPC_STATUS = {400: "INVALID_ARGUMENT", 401: "UNAUTHENTICATED", 403: "PERMISSION_DENIED", 404: "NOT_FOUND",
               408: "DEADLINE_EXCEEDED", 409: "ABORTED", 429: "RESOURCE_EXHAUSTED", 501: "UNIMPLEMENTED",
               503: "UNAVAILABLE", 504: "DEADLINE_EXCEEDED"}
PATH_RE = re.compile(r"^/(?P<version>[^/]+)/models/(?P<model>[^/:]+):(?P<method>[A-Za-z]+)$")


def estimate_text_tokens(text: str) -> int:
    """Characters / 4, rounded up."""
    return math.ceil(len(text) / 4)


def compact_json(obj: Any) -> str:
    return json.dumps(obj, sort_keys=True, ensure_ascii=False, separators=(",", ":"))


#: Gemini 3 prices an image by its media resolution, not its pixels (service default: high).
MEDIA_RESOLUTION_TOKENS = {"MEDIA_RESOLUTION_LOW": 280, "MEDIA_RESOLUTION_MEDIUM": 560,
                           "MEDIA_RESOLUTION_HIGH": 1120, "MEDIA_RESOLUTION_ULTRA_HIGH": 2240}
MEDIA_RESOLUTION_DEFAULT = "MEDIA_RESOLUTION_HIGH"


def prices_by_media_resolution(model: str) -> bool:
    """Gemini 3 models price images by media resolution; 2.x models by 768x768 tiles."""
    return model.startswith("gemini-3")


def _resolution_name(value: Any) -> str | None:
    if isinstance(value, dict):  # per-part form: {"level": "MEDIA_RESOLUTION_LOW"}
        value = value.get("level")
    return value if isinstance(value, str) and value in MEDIA_RESOLUTION_TOKENS else None


def image_tokens_for(inline: Any, model: str = "", resolution: Any = None) -> int:
    """Tokens of an inline image for ``model``: by media resolution for Gemini 3 (the part's
    own, else the request's, else high), by tiles for 2.x (``image_part_tokens``)."""
    if prices_by_media_resolution(model):
        return MEDIA_RESOLUTION_TOKENS[_resolution_name(resolution) or MEDIA_RESOLUTION_DEFAULT]
    return image_part_tokens(inline)


def image_part_tokens(inline: Any) -> int:
    """Tokens of an inline image as Gemini 2.x counts it: 258 per 768x768 tile, 258 for small
    (both sides ≤ 384 px) or unreadable images."""
    data = inline.get("data") if isinstance(inline, dict) else None
    if not isinstance(data, str):
        return IMAGE_TOKENS
    raw = decode_signature(data[:64])  # the PNG header is in the first 24 bytes
    if raw is None or len(raw) < 24 or raw[:8] != b"\x89PNG\r\n\x1a\n" or raw[12:16] != b"IHDR":
        return IMAGE_TOKENS
    width, height = int.from_bytes(raw[16:20], "big"), int.from_bytes(raw[20:24], "big")
    if width <= 384 and height <= 384:
        return IMAGE_TOKENS
    return IMAGE_TOKENS * math.ceil(width / 768) * math.ceil(height / 768)


def estimate_part_tokens(part: dict[str, Any]) -> int:
    """Token estimate of one REST part (see the module docstring)."""
    inline = part.get("inlineData") or part.get("inline_data")
    if inline is not None:
        return image_part_tokens(inline)
    text = part.get("text")
    if isinstance(text, str) and not ({"functionCall", "functionResponse"} & part.keys()):
        return estimate_text_tokens(text)
    return estimate_text_tokens(compact_json(part))


def decode_signature(value: Any) -> bytes | None:
    """Signatures arrive base64 in either alphabet (the SDK sends URL-safe)."""
    if not isinstance(value, str):
        return None
    text = value.replace("-", "+").replace("_", "/")
    text += "=" * (-len(text) % 4)
    try:
        return base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError):
        return None


# --- request / reply types ------------------------------------------------------------------


@dataclass
class FakeRequest:
    """One request the server received (recorded in ``server.requests``)."""

    model: str
    body: dict[str, Any]
    system: str
    contents: list[dict[str, Any]]
    tools: list[dict[str, Any]]
    version: str = "v1beta"
    #: HTTP status the server answered with (filled in after the answer is decided).
    status: int = 0
    #: The injected fault this request consumed, if any.
    fault: str | None = None

    def _last_user_text_index(self) -> int:
        for i in range(len(self.contents) - 1, -1, -1):
            content = self.contents[i]
            if content.get("role", "user") != "user":
                continue
            if any(isinstance(p.get("text"), str) for p in parts_of(content)):
                return i
        return -1

    def last_user_text(self) -> str:
        """The text parts of the last user content that has text, joined by newlines."""
        i = self._last_user_text_index()
        if i < 0:
            return ""
        texts = [p["text"] for p in parts_of(self.contents[i]) if isinstance(p.get("text"), str)]
        return "\n".join(texts)

    def current_turn(self) -> list[dict[str, Any]]:
        """Contents after the last user content that carries text."""
        return self.contents[self._last_user_text_index() + 1 :]

    def function_responses_since_last_user(self) -> list[dict[str, Any]]:
        """``functionResponse`` dicts (name, response, id?) of the current turn, in order."""
        out: list[dict[str, Any]] = []
        for content in self.current_turn():
            for part in parts_of(content):
                fr = part.get("functionResponse")
                if isinstance(fr, dict):
                    out.append(fr)
        return out


@dataclass
class FakeReply:
    """What the policy wants the model to say, in REST part shape."""

    parts: list[dict[str, Any]] = field(default_factory=list)
    thought_text: str | None = None
    finish_reason: str = "STOP"
    #: ``finishMessage`` of the candidate (the service sets it on MALFORMED_FUNCTION_CALL).
    finish_message: str | None = None
    #: When set, the reply has no candidates and ``promptFeedback.blockReason`` is this value.
    block_reason: str | None = None
    #: ``safetyRatings`` of the candidate (or of ``promptFeedback`` when the prompt is blocked).
    safety_ratings: list[dict[str, Any]] | None = None
    #: ``modelVersion`` of the answer (default: the model asked). Stub policies set a label such
    #: as ``stub-lens (fake server)`` so their canned text is never stored under a real model.
    model_version: str | None = None

    @classmethod
    def call(
        cls, name: str, args: dict[str, Any] | None = None, *, thought_text: str | None = None
    ) -> FakeReply:
        return cls(parts=[{"functionCall": {"name": name, "args": args or {}}}], thought_text=thought_text)

    @classmethod
    def text(cls, text: str, *, thought_text: str | None = None) -> FakeReply:
        return cls(parts=[{"text": text}], thought_text=thought_text)


Policy = Callable[[FakeRequest], FakeReply]


def parts_of(content: dict[str, Any]) -> list[dict[str, Any]]:
    parts = content.get("parts")
    if not isinstance(parts, list):
        return []
    return [p for p in parts if isinstance(p, dict)]


class BadRequest(Exception):
    """A request the service would reject with 400 INVALID_ARGUMENT."""


class BadFraming(Exception):
    """The HTTP body cannot be delimited: answered with ``code`` and the connection closed."""

    def __init__(self, code: int, message: str) -> None:
        super().__init__(message)
        self.code = code


def rpc_status(code: int) -> str:
    return RPC_STATUS.get(code, "INTERNAL" if code >= 500 else "INVALID_ARGUMENT")


def error_body(
    code: int, status: str, message: str, details: list[dict[str, Any]] | None = None
) -> dict[str, Any]:
    error: dict[str, Any] = {"code": code, "message": message, "status": status}
    if details:
        error["details"] = details
    return {"error": error}


def reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON")


#: A JSON escape of a UTF-16 surrogate (valid UTF-8 holds none: only an escape can yield one; a
#: pair is checked too, by the full re-encode, which accepts it).
_SURROGATE_ESCAPE_RE = re.compile(rb"\\u[dD][89abcdefABCDEF]")


def parse_body(model: str, version: str, raw: bytes) -> FakeRequest:
    try:
        body = json.loads(raw.decode("utf-8"), parse_constant=reject_constant)
        if _SURROGATE_ESCAPE_RE.search(raw):  # only a \uD800-\uDFFF escape can make one
            json.dumps(body, ensure_ascii=False).encode("utf-8")  # lone surrogates ("\ud800") are not text
    except (UnicodeError, ValueError, RecursionError) as exc:  # ValueError: also huge integers
        raise BadRequest(f"Invalid JSON payload received. {str(exc)[:200]}") from None
    if not isinstance(body, dict):
        raise BadRequest("Invalid JSON payload received. Expected an object.")
    contents = body.get("contents")
    if not isinstance(contents, list) or not contents:
        raise BadRequest("* GenerateContentRequest.contents: contents is not specified")
    for i, content in enumerate(contents):
        if not isinstance(content, dict):
            raise BadRequest(f"Invalid value at 'contents[{i}]': expected an object")
        role = content.get("role", "user")
        if role not in ("user", "model"):
            raise BadRequest(f"Please use a valid role: user, model. (contents[{i}].role={role!r})")
        parts = content.get("parts")
        if not isinstance(parts, list) or not parts:
            raise BadRequest(
                f"* GenerateContentRequest.contents[{i}].parts: contents.parts must not be empty."
            )
        for j, part in enumerate(parts):
            if not isinstance(part, dict):
                raise BadRequest(f"Invalid value at 'contents[{i}].parts[{j}]': expected an object")
            for key in ("functionCall", "functionResponse"):
                if key in part and (
                    not isinstance(part[key], dict) or not isinstance(part[key].get("name"), str)
                ):
                    raise BadRequest(
                        f"* GenerateContentRequest.contents[{i}].parts[{j}].{key}.name: Name cannot be empty."
                    )
            if "text" in part and not isinstance(part["text"], str):
                raise BadRequest(f"Invalid value at 'contents[{i}].parts[{j}].text': expected a string")
    system = body.get("systemInstruction", body.get("system_instruction"))
    system_text = ""
    if system is not None:
        if not isinstance(system, dict):
            raise BadRequest("Invalid value at 'system_instruction': expected an object")
        system_text = "\n".join(p["text"] for p in parts_of(system) if isinstance(p.get("text"), str))
    tools = body.get("tools", [])
    if not isinstance(tools, list) or not all(isinstance(t, dict) for t in tools):
        raise BadRequest("Invalid value at 'tools': expected a list of objects")
    return FakeRequest(
        model=model, body=body, system=system_text, contents=contents, tools=tools, version=version
    )


# --- prefix cache accounting ----------------------------------------------------------------


def request_blocks(req: FakeRequest) -> list[tuple[bytes, int]]:
    """The ordered (hash, token weight) blocks of a request (see module docstring)."""
    blocks: list[tuple[bytes, int]] = []

    def add(kind: str, serialised: str, weight: int, data: str | None = None) -> None:
        digest = hashlib.blake2b(f"{kind}\x00{serialised}".encode(), digest_size=16)
        if data is not None:  # an image's base64, hashed as it is (not copied into the JSON first)
            digest.update(b"\x00")
            digest.update(data.encode("utf-8", "surrogatepass"))
        blocks.append((digest.digest(), weight))

    add("system", req.system, estimate_text_tokens(req.system))
    tools_json = compact_json(req.tools)
    add("tools", tools_json, estimate_text_tokens(tools_json) if req.tools else 0)
    config = req.body.get("generationConfig") or req.body.get("generation_config") or {}
    overall = config.get("mediaResolution") if isinstance(config, dict) else None
    for content in req.contents:
        role = str(content.get("role", "user"))
        for part in parts_of(content):
            inline = part.get("inlineData") or part.get("inline_data")
            if inline is not None:
                weight = image_tokens_for(inline, req.model, part.get("mediaResolution") or overall)
                data = inline.get("data") if isinstance(inline, dict) else None
                if isinstance(data, str):  # the part with its data hashed apart (the same blocks)
                    key = "inlineData" if "inlineData" in part else "inline_data"
                    add(role, compact_json({**part, key: {**inline, "data": None}}), weight, data)
                    continue
            else:
                weight = estimate_part_tokens(part)
            add(role, compact_json(part), weight)
    return blocks


@dataclass(frozen=True)
class CacheRecord:
    """How one answered request met the prefix cache: of its ``blocks``, the first
    ``shared_blocks`` had been sent before (``blocks - shared_blocks`` is the divergence point
    counted from the end)."""

    model: str
    prompt_tokens: int
    cached_tokens: int
    blocks: int
    shared_blocks: int
    tools: bool  # operator requests declare tools; lens requests do not

    @property
    def diverged_from_end(self) -> int:
        return self.blocks - self.shared_blocks


class PrefixTrie:
    """Per-model trie of block hashes: longest shared prefix in O(blocks)."""

    def __init__(self) -> None:
        self._root: dict[bytes, dict[Any, Any]] = {}

    def longest_prefix_tokens(self, blocks: list[tuple[bytes, int]]) -> int:
        return self.longest_prefix(blocks)[0]

    def longest_prefix(self, blocks: list[tuple[bytes, int]]) -> tuple[int, int]:
        """(tokens, blocks) of the longest prefix of ``blocks`` seen before."""
        node = self._root
        tokens = count = 0
        for digest, weight in blocks:
            child = node.get(digest)
            if child is None:
                break
            tokens += weight
            count += 1
            node = child
        return tokens, count

    def insert(self, blocks: list[tuple[bytes, int]]) -> None:
        node = self._root
        for digest, _ in blocks:
            node = node.setdefault(digest, {})


# --- server ---------------------------------------------------------------------------------


def model_fault_reply(kind: str, req: FakeRequest) -> FakeReply:
    """The reply a model fault injects, in the service's shape (see the module docstring)."""
    if kind == "malformed_function_call":
        tool = "tap"
        for group in req.tools:
            decls = group.get("functionDeclarations") or group.get("function_declarations") or []
            if decls and isinstance(decls[0], dict) and isinstance(decls[0].get("name"), str):
                tool = decls[0]["name"]
                break
        return FakeReply(parts=[], finish_reason="MALFORMED_FUNCTION_CALL",
                         finish_message=f"Malformed function call: print(default_api.{tool}(index=3, x=))")
    if kind == "empty_candidate":
        return FakeReply(parts=[], finish_reason="STOP")
    if kind == "safety":
        return FakeReply(parts=[], finish_reason="SAFETY", safety_ratings=[dict(r) for r in SAFETY_RATINGS])
    if kind == "blocked_prompt":
        return FakeReply(block_reason="SAFETY", safety_ratings=[dict(r) for r in SAFETY_RATINGS])
    raise ValueError(f"not a model fault: {kind!r}")


def invalid_key_answer() -> tuple[int, dict[str, Any]]:
    """The service's answer to a wrong API key (HTTP 400, ErrorInfo reason API_KEY_INVALID)."""
    return 400, error_body(
        400,
        "INVALID_ARGUMENT",
        INVALID_KEY_MESSAGE,
        [
            {
                "@type": "type.googleapis.com/google.rpc.ErrorInfo",
                "reason": "API_KEY_INVALID",
                "domain": "googleapis.com",
                "metadata": {"service": "generativelanguage.googleapis.com"},
            },
            {"@type": "type.googleapis.com/google.rpc.LocalizedMessage", "locale": "en-US",
             "message": INVALID_KEY_MESSAGE},
        ],
    )
