"""The Gemini fast path (``models/gemini_rest.py``) sends byte for byte what ``generate_content``
sends: the fake server records both bodies through the real SDK and its HTTP client."""

from __future__ import annotations

import io
import json

from PIL import Image

from artemis_cli.models.base import FunctionCall, FunctionResponse, Message, ModelRequest, Part, ToolDecl
from artemis_cli.models.fakes.gemini import FakeGeminiServer, FakeReply, FakeRequest
from artemis_cli.models.gemini import GeminiModel

TAP = ToolDecl("tap", "Tap the element with the given index.",
               {"type": "object", "properties": {"index": {"type": "integer"}}, "required": ["index"]})


def png(shade: int) -> bytes:
    out = io.BytesIO()
    Image.new("RGB", (40, 90), (shade, 20, 200)).save(out, format="PNG")
    return out.getvalue()


def rich_request(shade: int = 10) -> ModelRequest:
    """Every kind of part we send: texts, screenshots, calls with their own and other models'
    signatures, thoughts, function responses with non-ASCII results."""
    return ModelRequest(
        system="You operate a phone.", tools=[TAP], role="operator", media_resolution="low", temperature=0.2,
        messages=[
            Message("user", [Part(text="# OBSERVATION\n[0] Wi‑Fi « on »"), Part(image_png=png(shade))]),
            Message("model", [Part(text="Wi-Fi first.", thought=True, thought_signature=b"\x00sig\xff"),
                              Part(function_call=FunctionCall("tap", {"index": 0}, "c1"),
                                   thought_signature=b"mine", signature_model="gemini-2.5-flash")]),
            Message("user", [Part(function_response=FunctionResponse("tap", {"ok": True, "note": "é", "n": [1, 2.5]},
                                                                     "c1")),
                             Part(text="# OBSERVATION\n[0] Bluetooth"), Part(image_png=png(shade + 1))]),
            Message("model", [Part(function_call=FunctionCall("tap", {"index": 1}),
                                   thought_signature=b"theirs", signature_model="gemini-3-pro-preview")]),
            Message("user", [Part(function_response=FunctionResponse("tap", {"ok": False})),
                             Part(text="now?"), Part(image_png=png(shade + 2))]),
        ])


def bodies(fast: bool, requests: list[ModelRequest], model: str = "gemini-2.5-flash") -> list[str]:
    def policy(req: FakeRequest) -> FakeReply:
        return FakeReply.call("tap", {"index": 2})

    with FakeGeminiServer(policy, require_thought_signatures=False) as server:
        gm = GeminiModel([model], api_key="fake-key", base_url=server.base_url)
        if not fast:
            gm._rest = None  # generate_content, the SDK's own path
        else:
            assert gm._rest is not None, "this SDK has the internals the fast path uses"
        replies = [gm.generate(r) for r in requests]
        assert all(r.message.function_calls()[0].args == {"index": 2} for r in replies)
        return [json.dumps(q.body, ensure_ascii=False) for q in server.requests]


def test_the_fast_path_sends_the_sdk_body_byte_for_byte() -> None:
    requests = [rich_request(), rich_request(), rich_request(50)]  # a re-send, then other images
    fast, sdk = bodies(True, requests), bodies(False, requests)
    assert len(fast) == len(sdk) == 3
    assert fast == sdk  # the same keys in the same order, the same base64
    assert fast[0] == fast[1] and fast[2] != fast[0]  # a cached part is the part; a new image is new


def test_the_fast_path_binds_signatures_per_model() -> None:
    # gemini-3 is sent the dummy signature for another model's call, exactly as the SDK path is
    for model in ("gemini-3-pro-preview", "gemini-2.5-flash"):
        assert bodies(True, [rich_request()], model) == bodies(False, [rich_request()], model)


def test_the_part_cache_holds_only_the_last_request() -> None:
    with FakeGeminiServer(lambda req: FakeReply.text("ok"), require_thought_signatures=False) as server:
        gm = GeminiModel(["gemini-2.5-flash"], api_key="fake-key", base_url=server.base_url)
        assert gm._rest is not None
        gm.generate(rich_request(10))
        first = len(gm._rest._parts)
        gm.generate(rich_request(90))  # three new screenshots replace the old ones
        assert len(gm._rest._parts) == first
        kept = {key[1] for key in gm._rest._parts if key[1] is not None}
        assert kept == {png(90), png(91), png(92)}
