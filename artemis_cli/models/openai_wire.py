"""Our provider-neutral request as an OpenAI chat-completions body, and a completion back as our
message (SPEC §8). Pure functions: ``OpenAIModel`` sends what ``render_body`` builds, and
``sessions prompt`` re-renders the same body to check its hash.

Rendering is deterministic, so a prefix-caching server (vLLM, SGLang, llama.cpp) sees the same
bytes for the same ledger prefix:

* the system text is one ``system`` message; tools go out as ``{"type": "function", ...}``;
* a model message is one ``assistant`` message: its non-thought texts joined as ``content``, its
  calls as ``tool_calls`` (Gemini's thought parts and signatures do not cross providers);
* a user message becomes one ``tool`` message per function response (right after the assistant
  message whose call it answers), then one ``user`` message with the texts and screenshots (a
  single text goes as a plain string, the form every server accepts);
* a call without an id (a model that gave none, or a transcript recorded through Gemini) gets
  ``call_<hash of name, arguments and position>``, and its response the same id;
* screenshots are base64 PNG ``data:`` URLs, scaled to the role's ``max_image_side`` first.

Text mode (``tool_calls: text``, for models that cannot call tools): no ``tools`` are sent; the
system text ends with :data:`TEXT_MODE_HEADING` and the tool declarations, and asks for one JSON
object ``{"name": ..., "arguments": {...}}``. The model's earlier calls are rendered back as that
JSON and function responses as user text ``Result of NAME: {...}``.

Parsing tolerates what local servers get wrong: tool-call arguments that are not JSON raise
``ModelOutputError`` (``MALFORMED_ARGUMENTS``); calls written inside the text (``<tool_call>``
tags, or a bare JSON object naming a declared tool) are taken as calls; a ``length`` stop without
a usable call raises ``ModelOutputError`` (``LENGTH``); no choices, ``NO_CHOICES``.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
import re
from dataclasses import dataclass
from typing import Any

from artemis_cli.errors import ModelOutputError, ModelRefused
from artemis_cli.models.base import FunctionCall, Message, ModelRequest, Part, ToolDecl, Usage
from artemis_cli.perception.bytecache import MB, ByteLRU, memoize
from artemis_cli.perception.model_image import scale_for_model

TEXT_MODE_HEADING = "# HOW TO ACT (reply with JSON; no tool calling)"
TEXT_MODE_INSTRUCTIONS = (
    "You cannot call tools directly. To use one of the actions below, end your reply with exactly one JSON "
    'object on its own line: {"name": "<action name>", "arguments": {<arguments>}}. Write at most two short '
    "sentences of reasoning before it. Results come back as user messages starting with \"Result of\"."
)
#: Where a length stop is reported in ``llm_calls.error_class`` and problems.
LENGTH = "LENGTH"
MALFORMED_ARGUMENTS = "MALFORMED_ARGUMENTS"
NO_JSON_ACTION = "NO_JSON_ACTION"
NO_CHOICES = "NO_CHOICES"
EMPTY_MESSAGE = "EMPTY_MESSAGE"


@dataclass(frozen=True)
class WireOptions:
    """How one role's model is driven: native tool calls or JSON in text; the longest image side
    it may be sent (None: as the ledger gives it)."""

    tool_calls: str = "native"  # native | text
    max_image_side: int | None = None

    @property
    def text_mode(self) -> bool:
        return self.tool_calls == "text"


# --- rendering: ours -> OpenAI -------------------------------------------------------------------


DATA_URL_PREFIX = "data:image/png;base64,"
#: The sha256 of the image behind each recent ``data:`` URL (by the URL: a str caches its own
#: hash, so looking up the URL object a request holds costs no pass over its base64). Bound:
#: 8 MB (the URL is the key: ~150 model-sized screenshots of ~55 KB in base64); a URL no longer
#: here is decoded and hashed again (~0.1 ms).
_URL_DIGESTS: ByteLRU[str, str] = ByteLRU("models.openai_url_digests", 8 * MB)


#: Bound: 4 MB of PNG and URL (~40 screenshots: each turn re-sends the same few); the URL is also
#: a key of ``_URL_DIGESTS``, so it is counted in both (an upper bound).
@memoize("models.openai_data_urls", 4 * MB)
def _data_url(png: bytes) -> str:
    """A PNG as a ``data:`` URL. Cached: each turn re-sends the same few screenshots."""
    url = DATA_URL_PREFIX + base64.b64encode(png).decode("ascii")
    _URL_DIGESTS.put(url, hashlib.sha256(png).hexdigest())
    return url


def image_url_digest(url: str) -> str:
    """``sha256:<hex>`` of the image a ``data:`` URL carries (its decoded bytes); any other URL
    is hashed as it is (``url:<hex>``)."""
    digest = _URL_DIGESTS.get(url)
    if digest is not None:
        return f"sha256:{digest}"
    head, sep, data = url.partition(";base64,")
    if sep and head.startswith("data:"):
        try:
            raw = base64.b64decode(data, validate=True)
        except (ValueError, binascii.Error):
            raw = None
        if raw is not None:
            digest = hashlib.sha256(raw).hexdigest()
            _URL_DIGESTS.put(url, digest)
            return f"sha256:{digest}"
    return "url:" + hashlib.sha256(url.encode("utf-8", "surrogatepass")).hexdigest()


def image_part(png: bytes, max_side: int | None) -> dict[str, Any]:
    return {"type": "image_url", "image_url": {"url": _data_url(scale_for_model(png, max_side))}}


def _compact(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), sort_keys=True)


def call_id(call: FunctionCall, position: int) -> str:
    """The call's own id, else one derived from what it is and where it stands (stable)."""
    if call.id:
        return call.id
    digest = hashlib.sha256(f"{position}\x1f{call.name}\x1f{_compact(call.args)}".encode()).hexdigest()
    return f"call_{digest[:16]}"


def tool_schema(tools: list[ToolDecl]) -> list[dict[str, Any]]:
    return [{"type": "function", "function": {"name": t.name, "description": t.description,
                                              "parameters": t.parameters}} for t in tools]


def text_mode_system(system: str, tools: list[ToolDecl]) -> str:
    declarations = "\n".join(_compact({"name": t.name, "description": t.description, "parameters": t.parameters})
                             for t in tools)
    lead = f"{system}\n\n" if system else ""
    return f"{lead}{TEXT_MODE_HEADING}\n{TEXT_MODE_INSTRUCTIONS}\n\nActions (one JSON declaration per line):\n{declarations}"


def _call_json(call: FunctionCall) -> str:
    return json.dumps({"name": call.name, "arguments": call.args}, ensure_ascii=False, sort_keys=True)


def _assistant(message: Message, options: WireOptions, index: int) -> tuple[dict[str, Any] | None, list[str]]:
    texts = [p.text for p in message.parts if p.text and not p.thought]
    calls = message.function_calls()
    if options.text_mode:
        content = "\n".join([*texts, *(_call_json(c) for c in calls)])
        return ({"role": "assistant", "content": content} if content else None), []
    ids = [call_id(c, index * 100 + k) for k, c in enumerate(calls)]
    out: dict[str, Any] = {"role": "assistant", "content": "\n".join(texts) if texts else None}
    if calls:
        out["tool_calls"] = [{"id": i, "type": "function",
                              "function": {"name": c.name, "arguments": json.dumps(c.args, ensure_ascii=False)}}
                             for i, c in zip(ids, calls, strict=True)]
    if out["content"] is None and not calls:
        return None, []
    return out, ids


NO_RESULT = {"note": "no result was recorded for this call"}


def _user(message: Message, options: WireOptions, open_calls: dict[str, list[str]],
          open_ids: list[str]) -> list[dict[str, Any]]:
    """Tool messages answering the open calls (in call order; a call the transcript never answered
    gets :data:`NO_RESULT`, since the API refuses unanswered calls), then the user message."""
    answers: dict[str, str] = {}
    content: list[dict[str, Any]] = []
    for part in message.parts:
        fr = part.function_response
        if fr is not None:
            result = _compact(fr.response)
            wanted = fr.id if fr.id in open_ids and fr.id not in answers else None
            if wanted is None:
                wanted = next((i for i in open_calls.get(fr.name, []) if i not in answers), None)
            if not options.text_mode and wanted is not None:
                answers[wanted] = result
            else:  # text mode, or a response whose call is not in the previous message
                content.append({"type": "text", "text": f"Result of {fr.name}: {result}"})
        if part.text is not None and not part.thought:
            content.append({"type": "text", "text": part.text})
        if part.image_png is not None:
            content.append(image_part(part.image_png, options.max_image_side))
    out = _tool_messages(open_ids, answers)
    if content:
        single = len(content) == 1 and content[0]["type"] == "text"
        out.append({"role": "user", "content": content[0]["text"] if single else content})
    return out


def _tool_messages(open_ids: list[str], answers: dict[str, str]) -> list[dict[str, Any]]:
    return [{"role": "tool", "tool_call_id": i, "content": answers.get(i, _compact(NO_RESULT))} for i in open_ids]


def render_messages(request: ModelRequest, options: WireOptions) -> list[dict[str, Any]]:
    system = text_mode_system(request.system, request.tools) if options.text_mode and request.tools else request.system
    out: list[dict[str, Any]] = [{"role": "system", "content": system}] if system else []
    open_calls: dict[str, list[str]] = {}
    open_ids: list[str] = []
    for index, message in enumerate(request.messages):
        if message.role == "model":
            out.extend(_tool_messages(open_ids, {}))  # two model messages in a row
            rendered, open_ids = _assistant(message, options, index)
            open_calls = {}
            # text mode leaves no calls open (its calls are JSON in the text, answered as text)
            for call, cid in zip(message.function_calls() if open_ids else [], open_ids, strict=True):
                open_calls.setdefault(call.name, []).append(cid)
            if rendered is not None:
                out.append(rendered)
            continue
        out.extend(_user(message, options, open_calls, open_ids))
        open_calls, open_ids = {}, []
    out.extend(_tool_messages(open_ids, {}))
    return out


def render_body(request: ModelRequest, model: str, options: WireOptions) -> dict[str, Any]:
    """The JSON body of ``POST /chat/completions`` for ``request`` (without ``stream``)."""
    body: dict[str, Any] = {"model": model, "messages": render_messages(request, options)}
    if request.tools and not options.text_mode:
        body["tools"] = tool_schema(request.tools)
    if request.temperature is not None:
        body["temperature"] = request.temperature
    return body


#: The version prefix of :func:`wire_hash`; a recorded hash without one is :func:`wire_hash_v1`.
WIRE_HASH_VERSION = "v2"


def wire_hash(body: dict[str, Any]) -> str:
    """``v2:`` + SHA-256 of a body's messages and tools with every image URL replaced by the
    digest of its image (the model is not part of it: a fallback model is sent the same
    conversation). Hashing the images' base64 again cost ~4 ms a call (:func:`wire_hash_v1`)."""
    payload = {"messages": [_digested(m) for m in body.get("messages") or []], "tools": body.get("tools")}
    return f"{WIRE_HASH_VERSION}:" + hashlib.sha256(_compact(payload).encode("utf-8")).hexdigest()


def _digested(message: Any) -> Any:
    """A message with each ``image_url`` part's URL replaced by its image's digest."""
    content = message.get("content") if isinstance(message, dict) else None
    if not isinstance(content, list):
        return message
    parts = []
    for part in content:
        image = part.get("image_url") if isinstance(part, dict) and part.get("type") == "image_url" else None
        if isinstance(image, dict) and isinstance(image.get("url"), str):
            part = {**part, "image_url": {**image, "url": image_url_digest(image["url"])}}
        parts.append(part)
    return {**message, "content": parts}


def wire_hash_v1(body: dict[str, Any]) -> str:
    """The first wire hash (no prefix): SHA-256 of the messages and tools as sent, images'
    base64 included. Sessions recorded before ``v2`` hold it; they are checked with it."""
    payload = {"messages": body.get("messages"), "tools": body.get("tools")}
    return hashlib.sha256(_compact(payload).encode("utf-8")).hexdigest()


def wire_hash_as(body: dict[str, Any], recorded: str | None) -> str:
    """``body``'s wire hash in the version of ``recorded`` (v1 when it has no version prefix),
    so that a re-rendered turn is compared with what was recorded the way it was computed."""
    if recorded is not None and ":" not in recorded:
        return wire_hash_v1(body)
    return wire_hash(body)


# --- parsing: OpenAI -> ours ---------------------------------------------------------------------

_TOOL_CALL_TAG_RE = re.compile(r"<tool_call>\s*(.*?)\s*(?:</tool_call>|$)", re.DOTALL)


def _json_objects(text: str) -> list[tuple[int, int, Any]]:
    """Every top-level JSON object in ``text``: (start, end, value)."""
    decoder = json.JSONDecoder()
    found: list[tuple[int, int, Any]] = []
    i = text.find("{")
    while i >= 0:
        try:
            value, end = decoder.raw_decode(text, i)
        except ValueError:
            i = text.find("{", i + 1)
            continue
        found.append((i, end, value))
        i = text.find("{", end)
    return found


def _as_call(value: Any, names: set[str]) -> FunctionCall | None:
    """``{"name": N, "arguments"|"args"|"parameters": {...}}`` naming a declared tool."""
    if not isinstance(value, dict):
        return None
    if isinstance(value.get("function"), dict):  # {"type": "function", "function": {...}}
        value = value["function"]
    name = value.get("name")
    if not isinstance(name, str) or name not in names:
        return None
    args: Any = next((value[k] for k in ("arguments", "args", "parameters") if k in value), {})
    if isinstance(args, str):
        try:
            args = json.loads(args)
        except ValueError:
            return None
    return FunctionCall(name, dict(args)) if isinstance(args, dict) else None


def calls_in_text(text: str, names: set[str]) -> tuple[str, list[FunctionCall]]:
    """Calls written inside a reply's text (``<tool_call>`` tags, else JSON objects naming a
    declared tool), and the text without them."""
    calls: list[FunctionCall] = []
    spans: list[tuple[int, int]] = []
    for match in _TOOL_CALL_TAG_RE.finditer(text):
        taken = len(calls)
        for _s, _e, value in _json_objects(match.group(1)):
            call = _as_call(value, names)
            if call is not None:
                calls.append(call)
        if len(calls) > taken:  # cut out only the tags taken as calls
            spans.append(match.span())
    if not calls:
        for start, end, value in _json_objects(text):
            call = _as_call(value, names)
            if call is not None:
                calls.append(call)
                spans.append((start, end))
    rest = text
    for start, end in reversed(spans):
        rest = rest[:start] + rest[end:]
    rest = re.sub(r"```(?:json)?\s*```", "", rest)  # an emptied code fence
    return rest.strip(), calls


def _get(obj: Any, key: str) -> Any:
    if isinstance(obj, dict):
        return obj.get(key)
    return getattr(obj, key, None)


def usage_from_completion(completion: Any) -> Usage:
    """``usage`` of a completion (SDK object or dict); missing counts read as 0."""
    usage = _get(completion, "usage")
    if usage is None:
        return Usage()
    details = _get(usage, "prompt_tokens_details")
    cached = _get(details, "cached_tokens") if details is not None else None
    return Usage(prompt_tokens=int(_get(usage, "prompt_tokens") or 0), cached_tokens=int(cached or 0),
                 completion_tokens=int(_get(usage, "completion_tokens") or 0))


def has_usage(completion: Any) -> bool:
    return _get(completion, "usage") is not None


def message_from_completion(completion: Any, request: ModelRequest, options: WireOptions) -> Message:
    """The first choice as our Message (see the module docstring for what raises)."""
    choices = _get(completion, "choices") or []
    if not choices:
        raise ModelOutputError("the server returned no choices", reason=NO_CHOICES)
    choice = choices[0]
    finish = str(_get(choice, "finish_reason") or "stop")
    message = _get(choice, "message")
    if finish == "content_filter":
        raise ModelRefused("the model refused: finish reason content_filter", reason="CONTENT_FILTER")
    refusal = _get(message, "refusal")
    text = str(_get(message, "content") or "")
    names = {t.name for t in request.tools}
    calls: list[FunctionCall] = []
    for raw in _get(message, "tool_calls") or []:
        fn = _get(raw, "function")
        name = str(_get(fn, "name") or "")
        arguments = _get(fn, "arguments")
        try:
            args = json.loads(arguments) if isinstance(arguments, str) and arguments.strip() else (arguments or {})
        except ValueError:
            args = None
        if not isinstance(args, dict):
            cut = str(arguments)[:120]
            raise ModelOutputError(f"the arguments of the {name or 'unnamed'} call are not a JSON object: {cut!r}",
                                   reason=MALFORMED_ARGUMENTS, finish_message=cut)
        calls.append(FunctionCall(name, args, _get(raw, "id") or None))
    if not calls and names and text:
        text, calls = calls_in_text(text, names)
    if not calls and finish == "length":
        raise ModelOutputError("the reply was cut off at the token limit (finish reason length) before an action",
                               reason=LENGTH)
    if not calls and options.text_mode and names:
        cut = " ".join(text.split())[:160]
        raise ModelOutputError(f"the reply held no JSON action object naming one of the tools; it began: {cut!r}",
                               reason=NO_JSON_ACTION, finish_message=cut)
    if refusal and not calls and not text:
        raise ModelRefused(f"the model refused: {str(refusal)[:200]}", reason="REFUSAL")
    parts: list[Part] = []
    if text:
        parts.append(Part(text=text))
    parts.extend(Part(function_call=c) for c in calls)
    if not parts:
        raise ModelOutputError(f"the server returned an empty message (finish reason {finish})", reason=EMPTY_MESSAGE)
    return Message(role="model", parts=parts)
