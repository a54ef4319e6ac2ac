"""Policies for the fake OpenAI server: the fake Gemini server's policies, played over the
chat-completions wire.

Every Gemini-side policy (the scripted operator and its lens stubs, the Pro roles' scripted
answers, the fault-matrix policies) reads a ``FakeRequest`` and answers a ``FakeReply``.
``gemini_policy(policy)`` lets the same policy answer chat-completions requests: the OpenAI
messages are read back into Gemini REST ``contents`` (assistant tool calls as ``functionCall``,
``tool`` messages and text mode's ``Result of NAME: {...}`` lines as ``functionResponse``, images
as ``inlineData``), and the reply is written out as the protocol's ``content`` and ``tool_calls``
-- or, for a request in text mode (the system text carries the action declarations instead of
``tools``), as the JSON action object in the text that mode asks for.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

from artemis_cli.models.fakes.gemini_wire import FakeReply, FakeRequest
from artemis_cli.models.fakes.openai_wire import (
    FakeOpenAIReply,
    FakeOpenAIRequest,
    OpenAIPolicy,
    content_text,
)
from artemis_cli.models.openai_wire import TEXT_MODE_HEADING, calls_in_text

GeminiPolicy = Callable[[FakeRequest], FakeReply]
#: ``model`` of the heuristic policy's answers: what each recorded call says answered (the
#: offline baseline, not the model name the request asked for).
HEURISTIC_SERVER_MODEL = "heuristic (offline baseline, fake server)"
_RESULT_RE = re.compile(r"^Result of ([A-Za-z0-9_-]+): (.*)$", re.DOTALL)
#: Gemini finish reasons with an OpenAI counterpart; the rest end normally.
_FINISH = {"MAX_TOKENS": "length", "SAFETY": "content_filter", "PROHIBITED_CONTENT": "content_filter"}


def text_mode_tools(system: str) -> tuple[str, list[dict[str, Any]]]:
    """(the system text without the text-mode section, the action declarations it lists)."""
    head, sep, tail = system.partition(f"\n\n{TEXT_MODE_HEADING}")
    if not sep:
        head, sep, tail = system.partition(TEXT_MODE_HEADING)
        if not sep:
            return system, []
    tools = []
    for line in tail.splitlines():
        line = line.strip()
        if line.startswith("{"):
            try:
                decl = json.loads(line)
            except ValueError:
                continue
            if isinstance(decl, dict) and isinstance(decl.get("name"), str):
                tools.append(decl)
    return head, tools


def _loads(text: str) -> dict[str, Any]:
    try:
        value = json.loads(text)
    except ValueError:
        return {"result": text}
    return value if isinstance(value, dict) else {"result": value}


def _user_parts(message: dict[str, Any], text_mode: bool) -> list[dict[str, Any]]:
    content = message.get("content")
    parts: list[dict[str, Any]] = []
    items: list[Any] = [{"type": "text", "text": content}] if isinstance(content, str) else list(content or [])
    for item in items:
        if item.get("type") == "image_url":
            url = str(item["image_url"]["url"])
            mime, _, data = url[len("data:"):].partition(";base64,")
            parts.append({"inlineData": {"mimeType": mime, "data": data}})
            continue
        text = str(item.get("text", ""))
        result = _RESULT_RE.match(text) if text_mode else None
        if result:
            parts.append({"functionResponse": {"name": result.group(1), "response": _loads(result.group(2))}})
        else:
            parts.append({"text": text})
    return parts


def as_rest_request(req: FakeOpenAIRequest) -> tuple[FakeRequest, bool]:
    """The request as the fake Gemini server would have parsed it, and whether it is in text mode."""
    system, text_tools = text_mode_tools(req.system)
    text_mode = bool(text_tools) and not req.tools
    tools = req.tools or ([{"functionDeclarations": text_tools}] if text_tools else [])
    names = {t["name"] for t in text_tools} | set(req.tool_names)
    contents: list[dict[str, Any]] = []
    call_names: dict[str, str] = {}

    def user(parts: list[dict[str, Any]]) -> None:
        if contents and contents[-1]["role"] == "user":
            contents[-1]["parts"].extend(parts)
        else:
            contents.append({"role": "user", "parts": parts})

    for m in req.messages:
        role = m.get("role")
        if role in ("system", "developer"):
            continue
        if role == "assistant":
            parts: list[dict[str, Any]] = []
            text = content_text(m)
            if text_mode:
                text, calls = calls_in_text(text, names)
                found = [{"name": c.name, "args": c.args} for c in calls]
            else:
                found = []
                for call in m.get("tool_calls") or []:
                    fn = call.get("function") or {}
                    call_names[call.get("id", "")] = fn.get("name", "")
                    found.append({"name": fn.get("name", ""), "args": _loads(fn.get("arguments") or "{}"),
                                  "id": call.get("id")})
            if text:
                parts.append({"text": text})
            parts.extend({"functionCall": f} for f in found)
            contents.append({"role": "model", "parts": parts})
        elif role == "tool":
            name = call_names.get(str(m.get("tool_call_id")), "")
            user([{"functionResponse": {"name": name, "response": _loads(content_text(m)),
                                        "id": m.get("tool_call_id")}}])
        else:
            user(_user_parts(m, text_mode))
    rest = FakeRequest(model=req.model, body=req.body, system=system, contents=contents, tools=tools)
    return rest, text_mode


def as_openai_reply(reply: FakeReply, text_mode: bool) -> FakeOpenAIReply:
    texts = [p["text"] for p in reply.parts if isinstance(p.get("text"), str) and not p.get("thought")]
    calls = [(p["functionCall"].get("name", ""), dict(p["functionCall"].get("args") or {}))
             for p in reply.parts if isinstance(p.get("functionCall"), dict)]
    if text_mode and calls:
        texts += [json.dumps({"name": n, "arguments": a}, ensure_ascii=False) for n, a in calls]
        calls = []
    return FakeOpenAIReply(content="\n".join(texts) if texts else None, tool_calls=list(calls),
                           finish_reason=_FINISH.get(reply.finish_reason), model=reply.model_version)


def gemini_policy(policy: GeminiPolicy) -> OpenAIPolicy:
    """``policy`` (a fake Gemini server policy) answering chat-completions requests."""

    def answer(req: FakeOpenAIRequest) -> FakeOpenAIReply:
        rest, text_mode = as_rest_request(req)
        return as_openai_reply(policy(rest), text_mode)

    return answer


def heuristic_rest_policy() -> GeminiPolicy:
    """Artemis's heuristic baseline as a fake-server policy; tool-less requests (lens calls) get
    the scripted policy's labelled stub text."""
    from artemis_cli.models.conversation import view_from_rest
    from artemis_cli.models.offline.heuristic import HeuristicPolicy
    from artemis_cli.models.offline.scripted import script_policy

    heuristic = HeuristicPolicy()
    stubs = script_policy([])

    def policy(request: FakeRequest) -> FakeReply:
        if not request.tools:
            return stubs(request)
        thought, call = heuristic.decide(view_from_rest(request.contents))
        return FakeReply(parts=[{"text": f"[heuristic] {thought}"},
                                {"functionCall": {"name": call.name, "args": dict(call.args)}}],
                         model_version=HEURISTIC_SERVER_MODEL)

    return policy
