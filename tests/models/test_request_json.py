"""The request's canonical JSON (hashed into llm_calls.request_hash and prefix_hash) and the
token estimate reuse each tool declaration's serialisation: the same bytes and figures as
serialising the whole request, with the tools serialised once per declaration, not per request."""

from __future__ import annotations

import hashlib
import json
from typing import Any

import pytest

from artemis_cli.memory.ledger import estimate_tokens
from artemis_cli.models.base import FunctionCall, FunctionResponse, Message, ModelRequest, Part, ToolDecl
from artemis_cli.operators.tools import tool_declarations


def _whole(request: ModelRequest, *, messages: bool = True) -> str:
    """The request serialised in one ``json.dumps`` (what canonical_json and prefix_hash hash)."""
    payload: dict[str, Any] = {
        "system": request.system,
        "tools": [{"name": t.name, "description": t.description, "parameters": t.parameters} for t in request.tools],
    }
    if messages:
        payload["messages"] = [m.to_dict() for m in request.messages]
    return json.dumps(payload, sort_keys=True, ensure_ascii=False, separators=(",", ":"))


def _requests() -> list[ModelRequest]:
    odd = ToolDecl("zé_tool", "quotes \" and \\ and ünïcode ✓ and \u2028", {
        "type": "object", "properties": {"b": {"type": "string", "enum": ["x", "é"]}, "a": {"type": "integer"}},
        "required": ["b"]})
    parts = [Part(text="Tap 'Wi‑Fi' «now»"), Part(image_png=b"\x89PNG fake"),
             Part(function_call=FunctionCall("tap", {"index": 3, "z": None}, "c1")),
             Part(function_response=FunctionResponse("tap", {"ok": True, "detail": "é"}, "c1")),
             Part(text="thinking", thought=True, thought_signature=b"\x00\x01")]
    return [
        ModelRequest(system="You operate a phone.\nRules: ✓", messages=[Message("user", parts)],
                     tools=tool_declarations()),
        ModelRequest(system="", messages=[], tools=[]),
        ModelRequest(system="s", messages=[Message("model", parts[2:3])], tools=[odd]),
        ModelRequest(system="s", messages=[], tools=[odd, *tool_declarations("normalized")]),
    ]


@pytest.mark.parametrize("request_", _requests())
def test_canonical_json_and_hashes_are_the_whole_request_serialised(request_: ModelRequest) -> None:
    assert request_.canonical_json() == _whole(request_)
    assert request_.request_hash() == hashlib.sha256(_whole(request_).encode("utf-8")).hexdigest()
    assert request_.prefix_hash() == hashlib.sha256(_whole(request_, messages=False).encode("utf-8")).hexdigest()
    tools = [{"name": t.name, "description": t.description, "parameters": t.parameters} for t in request_.tools]
    assert estimate_tokens(ModelRequest(system="", messages=[], tools=request_.tools)) == -(-len(json.dumps(tools)) // 4)


def test_a_sessions_tools_are_serialised_once_not_per_request(monkeypatch: pytest.MonkeyPatch) -> None:
    """Fifty turns of one session (the same tool declarations): each declaration is serialised
    once for the hashes and once for the estimate, not on every request (three times a turn)."""
    tools = tool_declarations()
    seen = {"tools": 0}
    dumps = json.dumps

    def counting(obj: Any, *args: Any, **kwargs: Any) -> str:
        declaration = isinstance(obj, dict) and ("parameters" in obj or "tools" in obj)
        tool_list = isinstance(obj, list) and bool(obj) and isinstance(obj[0], dict) and "parameters" in obj[0]
        seen["tools"] += declaration or tool_list
        return dumps(obj, *args, **kwargs)

    monkeypatch.setattr(json, "dumps", counting)
    for turn in range(50):
        request = ModelRequest(system="sys", messages=[Message("user", [Part(text=f"turn {turn}")])], tools=tools)
        request.request_hash()
        request.prefix_hash()
        estimate_tokens(request)
    assert seen["tools"] <= 2 * len(tools), seen
