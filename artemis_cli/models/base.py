"""Provider-neutral request/response types and the Model protocol (SPEC §8).

Parts keep everything a provider needs to receive its own content back unchanged: Gemini's
``thought`` flag and ``thought_signature`` bytes survive a round trip through ``to_dict`` /
``from_dict`` (signatures as base64), so transcripts rebuilt from the DataEngine echo them.
"""

from __future__ import annotations

import base64
import hashlib
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, Literal, Protocol

from artemis_cli.perception.bytecache import MB, memoize

Role = Literal["user", "model"]


#: Bound: 8 MB of image bytes (the key is the image itself): ~200 model-sized screenshots of
#: ~40 KB, more than any request's window holds. A session that keeps more (the naive bench
#: mode) re-hashes the rest: ~30 µs per image, against a cache that grew with the session.
@memoize("models.image_sha256", 8 * MB)
def image_sha256(png: bytes) -> str:
    """SHA-256 of an image part. Cached: every request re-serialises the same screenshots
    (bytes objects cache their own hash, so a hit costs nothing like a digest)."""
    return hashlib.sha256(png).hexdigest()


@dataclass
class FunctionCall:
    name: str
    args: dict[str, Any] = field(default_factory=dict)
    id: str | None = None


@dataclass
class FunctionResponse:
    name: str
    response: dict[str, Any] = field(default_factory=dict)
    id: str | None = None


@dataclass
class Part:
    text: str | None = None
    image_png: bytes | None = None
    function_call: FunctionCall | None = None
    function_response: FunctionResponse | None = None
    thought: bool = False
    thought_signature: bytes | None = None
    #: The model that issued ``thought_signature`` (a Gemini 3 model rejects another model's).
    signature_model: str | None = None

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        if self.text is not None:
            out["text"] = self.text
        if self.image_png is not None:
            out["image_sha256"] = image_sha256(self.image_png)
        if self.function_call is not None:
            fc = self.function_call
            out["function_call"] = {"name": fc.name, "args": fc.args, "id": fc.id}
        if self.function_response is not None:
            fr = self.function_response
            out["function_response"] = {"name": fr.name, "response": fr.response, "id": fr.id}
        if self.thought:
            out["thought"] = True
        if self.thought_signature is not None:
            out["thought_signature"] = base64.b64encode(self.thought_signature).decode("ascii")
        if self.signature_model is not None:
            out["signature_model"] = self.signature_model
        return out

    @classmethod
    def from_dict(cls, data: dict[str, Any], images: dict[str, bytes] | None = None) -> Part:
        fc = data.get("function_call")
        fr = data.get("function_response")
        sig = data.get("thought_signature")
        image = None
        if "image_sha256" in data:
            image = (images or {}).get(data["image_sha256"])
        return cls(
            text=data.get("text"),
            image_png=image,
            function_call=FunctionCall(fc["name"], fc.get("args") or {}, fc.get("id")) if fc else None,
            function_response=FunctionResponse(fr["name"], fr.get("response") or {}, fr.get("id"))
            if fr
            else None,
            thought=bool(data.get("thought", False)),
            thought_signature=base64.b64decode(sig) if sig else None,
            signature_model=data.get("signature_model"),
        )


@dataclass
class Message:
    role: Role
    parts: list[Part]

    def function_calls(self) -> list[FunctionCall]:
        return [p.function_call for p in self.parts if p.function_call is not None]

    def text(self) -> str:
        return "".join(p.text or "" for p in self.parts if not p.thought)

    def to_dict(self) -> dict[str, Any]:
        return {"role": self.role, "parts": [p.to_dict() for p in self.parts]}

    @classmethod
    def from_dict(cls, data: dict[str, Any], images: dict[str, bytes] | None = None) -> Message:
        return cls(role=data["role"], parts=[Part.from_dict(p, images) for p in data["parts"]])


@dataclass(frozen=True)
class ToolDecl:
    name: str
    description: str
    parameters: dict[str, Any]  # JSON schema (type: object)

    @cached_property
    def canonical_json(self) -> str:
        """This declaration as :meth:`ModelRequest.canonical_json` writes it (sorted keys, no
        spaces): serialised once, not on every request of a session (the S zone never changes)."""
        return _canonical({"name": self.name, "description": self.description, "parameters": self.parameters})

    @cached_property
    def json_chars(self) -> int:
        """Characters of ``json.dumps`` of this declaration with the defaults (what
        ``memory.ledger.estimate_tokens`` counts), measured once."""
        return len(json.dumps({"name": self.name, "description": self.description, "parameters": self.parameters}))


def _canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"))


def tools_json(tools: list[ToolDecl]) -> str:
    """The tool list as :meth:`ModelRequest.canonical_json` writes it: ``json.dumps`` of the list
    joins its items with "," (no spaces) inside brackets, so the cached items joined are the
    same bytes."""
    return "[" + ",".join(t.canonical_json for t in tools) + "]"


@dataclass
class ModelRequest:
    system: str
    messages: list[Message]
    tools: list[ToolDecl] = field(default_factory=list)
    role: str = "operator"  # operator | lens | planner | validator ... (for metering)
    temperature: float | None = None
    #: low | medium | high: how a model that prices images by resolution (Gemini 3) should see
    #: the request's images; None leaves the service default. Not part of the request hash.
    media_resolution: str | None = None

    def canonical_json(self) -> str:
        """Deterministic serialisation; hashed into llm_calls.request_hash. ``json.dumps`` of
        ``{"system", "tools", "messages"}`` with sorted keys, assembled from its parts in that
        order (messages, system, tools) so the tools' cached JSON is reused: the same bytes."""
        messages = _canonical([m.to_dict() for m in self.messages])
        return f'{{"messages":{messages},"system":{_canonical(self.system)},"tools":{tools_json(self.tools)}}}'

    def request_hash(self) -> str:
        return hashlib.sha256(self.canonical_json().encode("utf-8")).hexdigest()

    def prefix_hash(self) -> str:
        """Hash of the stable prefix (system + tools): equal across a session when S is stable."""
        blob = f'{{"system":{_canonical(self.system)},"tools":{tools_json(self.tools)}}}'
        return hashlib.sha256(blob.encode("utf-8")).hexdigest()


@dataclass
class Usage:
    prompt_tokens: int = 0
    cached_tokens: int = 0
    completion_tokens: int = 0
    thoughts_tokens: int = 0


@dataclass
class CallAttempt:
    """One HTTP attempt inside ``generate`` (retries and fallbacks are attempts too)."""

    model: str
    status: str  # ok | error
    error_class: str | None = None
    latency_ms: float = 0.0
    usage: Usage = field(default_factory=Usage)
    #: SHA-256 of the provider's own rendering of the request, where it is not a one-to-one map
    #: of ``canonical_json`` (the OpenAI wire: tool messages, ids, text mode, scaled images).
    wire_hash: str | None = None


@dataclass
class ModelResponse:
    message: Message
    usage: Usage
    model: str
    latency_ms: float
    attempts: list[CallAttempt] = field(default_factory=list)


class CallGate:
    """A check that runs before every call of a model AND of the role models made from it:
    ``with_chain`` copies share the one gate, so a check set after the lens, chunk-lens and Pro
    models exist still covers them (``--max-cost``, see ``artemis_cli.budget``). A check raises to
    stop the call before anything is sent."""

    def __init__(self) -> None:
        self.check: Callable[[ModelRequest, str], None] | None = None

    def __call__(self, request: ModelRequest, model: str) -> None:
        if self.check is not None:
            self.check(request, model)


class Model(Protocol):
    """Anything that turns a request into a model message."""

    name: str
    #: True for heuristic/scripted: shown as "offline" wherever results appear.
    offline: bool
    #: Human label, e.g. "heuristic (offline baseline)".
    label: str

    def generate(self, request: ModelRequest) -> ModelResponse: ...
