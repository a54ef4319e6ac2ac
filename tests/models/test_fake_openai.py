"""FakeOpenAIServer driven by the real openai SDK (never a mock of our classes)."""

from __future__ import annotations

import base64
import io
import json
from collections.abc import Iterator
from typing import Any

import openai
import pytest
from openai import OpenAI
from PIL import Image

from artemis_cli.models.conversation import view_from_rest
from artemis_cli.models.fakes.openai import (
    BLOCK_TOKENS,
    FakeOpenAIReply,
    FakeOpenAIRequest,
    FakeOpenAIServer,
    image_tokens,
)
from artemis_cli.models.fakes.openai_policies import as_rest_request
from artemis_cli.models.fakes.openai_wire import parse_body

MODEL = "fake-gpt"
TOOLS: list[Any] = [
    {"type": "function", "function": {"name": "tap", "description": "Tap an element",
                                      "parameters": {"type": "object", "properties": {"index": {"type": "integer"}},
                                                     "required": ["index"]}}},
    {"type": "function", "function": {"name": "finish", "parameters": {"type": "object", "properties": {}}}},
]


def policy(req: FakeOpenAIRequest) -> FakeOpenAIReply:
    if req.tool_results_since_last_user():
        return FakeOpenAIReply.call("finish", {"success": True}, content="all done")
    if req.tools:
        return FakeOpenAIReply.call("tap", {"index": 7}, content="tapping 7")
    return FakeOpenAIReply.text(f"you said {req.last_user_text()}")


@pytest.fixture()
def server() -> Iterator[FakeOpenAIServer]:
    with FakeOpenAIServer(policy, retry_after_s=7, timeout_hold_s=2.0) as srv:
        yield srv
    assert srv.errors == []


@pytest.fixture()
def client(server: FakeOpenAIServer) -> OpenAI:
    return OpenAI(base_url=server.base_url, api_key="x", max_retries=0)


def user(content: Any) -> Any:
    """A user message (typed Any: the SDK's TypedDict params are not what these tests check)."""
    return {"role": "user", "content": content}


def calls_of(message: Any) -> list[Any]:
    """Tool calls of a reply message (Any: function and custom calls share no ``function``)."""
    return list(message.tool_calls or [])


def png_data_url(w: int, h: int) -> str:
    buf = io.BytesIO()
    Image.new("RGB", (w, h), (10, 20, 30)).save(buf, format="PNG")
    return "data:image/png;base64," + base64.b64encode(buf.getvalue()).decode()


def test_tool_call_round_trip(client: OpenAI, server: FakeOpenAIServer) -> None:
    messages: list[Any] = [{"role": "system", "content": "You operate a phone."}, user("open settings")]
    first = client.chat.completions.create(model=MODEL, messages=messages, tools=TOOLS)
    choice = first.choices[0]
    assert choice.finish_reason == "tool_calls"
    assert choice.message.content == "tapping 7"
    (call,) = calls_of(choice.message)
    assert call.type == "function" and call.function.name == "tap"
    assert json.loads(call.function.arguments) == {"index": 7}
    messages.append(choice.message.model_dump(exclude_none=True))
    messages.append({"role": "tool", "tool_call_id": call.id, "content": json.dumps({"status": "ok"})})
    second = client.chat.completions.create(model=MODEL, messages=messages, tools=TOOLS)
    (call2,) = calls_of(second.choices[0].message)
    assert call2.function.name == "finish" and call2.id != call.id
    assert [r.status for r in server.requests] == [200, 200]
    assert second.usage is not None and second.usage.total_tokens == (
        second.usage.prompt_tokens + second.usage.completion_tokens)
    rest, text_mode = as_rest_request(parse_body(json.dumps({"model": MODEL, "messages": messages}).encode()))
    view = view_from_rest(rest.contents)
    assert not text_mode and rest.system == "You operate a phone."
    assert view.model_calls == [("tap", {"index": 7})] and view.model_texts == ["tapping 7"]
    assert view.last_responses == [{"name": "tap", "status": "ok"}]


def test_models_endpoint(client: OpenAI) -> None:
    client.chat.completions.create(model="m-one", messages=[user("hi")])
    assert [m.id for m in client.models.list()] == ["m-one"]


def test_cached_tokens_grow_in_whole_blocks(client: OpenAI, server: FakeOpenAIServer) -> None:
    messages: list[Any] = [{"role": "system", "content": "rules " * 200}, user("step one " * 30)]
    first = client.chat.completions.create(model=MODEL, messages=messages)
    assert first.usage is not None and first.usage.prompt_tokens_details is not None
    assert first.usage.prompt_tokens_details.cached_tokens == 0
    messages += [{"role": "assistant", "content": "ok"}, user("step two " * 30)]
    second = client.chat.completions.create(model=MODEL, messages=messages)
    assert second.usage is not None and second.usage.prompt_tokens_details is not None
    cached = second.usage.prompt_tokens_details.cached_tokens or 0
    assert cached > 0 and cached % BLOCK_TOKENS == 0
    # everything of the first request but its unfinished last block is reused
    assert first.usage.prompt_tokens - BLOCK_TOKENS < cached <= first.usage.prompt_tokens
    assert cached <= second.usage.prompt_tokens - 1
    # the same request again: all but the last token is cached, still in whole blocks
    third = client.chat.completions.create(model=MODEL, messages=messages)
    assert third.usage is not None and third.usage.prompt_tokens_details is not None
    again = third.usage.prompt_tokens_details.cached_tokens or 0
    assert again == (third.usage.prompt_tokens - 1) // BLOCK_TOKENS * BLOCK_TOKENS
    # another model shares nothing
    other = client.chat.completions.create(model="other", messages=messages)
    assert other.usage is not None and other.usage.prompt_tokens_details is not None
    assert other.usage.prompt_tokens_details.cached_tokens == 0
    assert [r.cached_tokens for r in server.cache_log] == [0, cached, again, 0]


def test_image_part_is_priced(client: OpenAI) -> None:
    def prompt(content: Any) -> int:
        reply = client.chat.completions.create(model=f"img-{len(str(content))}", messages=[user(content)])
        assert reply.usage is not None
        return reply.usage.prompt_tokens

    text_only = prompt([{"type": "text", "text": "what is on screen?"}])
    small = prompt([{"type": "text", "text": "what is on screen?"},
                    {"type": "image_url", "image_url": {"url": png_data_url(100, 100)}}])
    screen = prompt([{"type": "text", "text": "what is on screen?"},
                     {"type": "image_url", "image_url": {"url": png_data_url(1080, 2400)}}])
    assert small - text_only == 85 + 170  # one tile
    assert screen - text_only == 85 + 170 * 8  # 768x1707 after scaling: 2 x 4 tiles
    assert image_tokens(png_data_url(1080, 2400), "low") == 85


def test_429_carries_retry_after(client: OpenAI, server: FakeOpenAIServer) -> None:
    server.inject("429")
    with pytest.raises(openai.RateLimitError) as info:
        client.chat.completions.create(model=MODEL, messages=[user("hi")])
    assert info.value.status_code == 429
    assert info.value.response.headers["retry-after"] == "7"
    assert isinstance(info.value.body, dict) and info.value.body["code"] == "rate_limit_exceeded"
    # the fault is spent: the next request is answered
    assert client.chat.completions.create(model=MODEL, messages=[user("hi")]).choices[0].message.content


def test_503(client: OpenAI, server: FakeOpenAIServer) -> None:
    server.inject("503", model=MODEL)
    with pytest.raises(openai.APIStatusError) as info:
        client.chat.completions.create(model=MODEL, messages=[user("hi")])
    assert info.value.status_code == 503 and isinstance(info.value, openai.InternalServerError)


def test_timeout(server: FakeOpenAIServer) -> None:
    client = OpenAI(base_url=server.base_url, api_key="x", max_retries=0, timeout=0.3)
    server.inject("timeout")
    with pytest.raises(openai.APITimeoutError):
        client.chat.completions.create(model=MODEL, messages=[user("hi")])
    assert server.requests[-1].fault == "timeout"


def test_malformed_arguments(client: OpenAI, server: FakeOpenAIServer) -> None:
    server.inject("malformed_arguments", match=lambda r: bool(r.tools))
    reply = client.chat.completions.create(model=MODEL, messages=[user("go")], tools=TOOLS)
    (call,) = calls_of(reply.choices[0].message)
    assert call.function.name == "tap"
    with pytest.raises(json.JSONDecodeError):
        json.loads(call.function.arguments)


def test_text_only(client: OpenAI, server: FakeOpenAIServer) -> None:
    server.inject("text_only")
    reply = client.chat.completions.create(model=MODEL, messages=[user("go")], tools=TOOLS)
    choice = reply.choices[0]
    assert choice.finish_reason == "stop" and not choice.message.tool_calls
    assert '"name": "tap"' in (choice.message.content or "") and '"index": 7' in (choice.message.content or "")


def test_no_usage(client: OpenAI, server: FakeOpenAIServer) -> None:
    server.inject("no_usage")
    reply = client.chat.completions.create(model=MODEL, messages=[user("go")], tools=TOOLS)
    assert reply.usage is None and reply.choices[0].message.tool_calls


def test_length(client: OpenAI, server: FakeOpenAIServer) -> None:
    server.inject("length")
    reply = client.chat.completions.create(model=MODEL, messages=[user("a long question")])
    choice = reply.choices[0]
    assert choice.finish_reason == "length" and not choice.message.tool_calls
    assert choice.message.content and "you said a long question".startswith(choice.message.content)
    assert choice.message.content != "you said a long question"


def test_tool_message_for_unknown_id_is_400(client: OpenAI, server: FakeOpenAIServer) -> None:
    assistant: Any = {"role": "assistant", "content": None, "tool_calls": [
        {"id": "call_a", "type": "function", "function": {"name": "tap", "arguments": "{}"}}]}
    with pytest.raises(openai.BadRequestError) as info:
        client.chat.completions.create(model=MODEL, tools=TOOLS, messages=[
            user("go"), assistant, {"role": "tool", "tool_call_id": "call_zzz", "content": "ok"}])
    assert isinstance(info.value.body, dict)
    assert "call_zzz" in info.value.body["message"] and info.value.body["param"] == "messages.[2].tool_call_id"
    with pytest.raises(openai.BadRequestError, match="preceeding"):
        client.chat.completions.create(model=MODEL, messages=[
            user("go"), {"role": "tool", "tool_call_id": "call_a", "content": "ok"}])
    with pytest.raises(openai.BadRequestError, match="did not have response messages: call_a"):
        client.chat.completions.create(model=MODEL, messages=[user("go"), assistant, user("again")])
    assert server.cache_log == []  # rejected requests are not cached


def test_validation_and_auth(client: OpenAI, server: FakeOpenAIServer) -> None:
    with pytest.raises(openai.BadRequestError, match="empty array"):
        client.chat.completions.create(model=MODEL, messages=[])
    with pytest.raises(openai.BadRequestError, match="data: URLs"):
        client.chat.completions.create(model=MODEL, messages=[user(
            [{"type": "image_url", "image_url": {"url": "https://example.com/a.png"}}])])
    locked = FakeOpenAIServer(policy, expected_api_key="right", models=["only"])
    with locked:
        wrong = OpenAI(base_url=locked.base_url, api_key="wrong", max_retries=0)
        with pytest.raises(openai.AuthenticationError):
            wrong.chat.completions.create(model="only", messages=[user("hi")])
        right = OpenAI(base_url=locked.base_url, api_key="right", max_retries=0)
        with pytest.raises(openai.NotFoundError):
            right.chat.completions.create(model="nope", messages=[user("hi")])
        assert [m.id for m in right.models.list()] == ["only"]
    assert locked.errors == []


def test_broken_policy_is_500() -> None:
    def broken(req: FakeOpenAIRequest) -> FakeOpenAIReply:
        raise RuntimeError("boom")

    with FakeOpenAIServer(broken) as srv:
        client = OpenAI(base_url=srv.base_url, api_key="x", max_retries=0)
        with pytest.raises(openai.InternalServerError, match="boom"):
            client.chat.completions.create(model=MODEL, messages=[user("hi")])
    assert srv.errors == []


def test_offline_policies_play_through_the_sdk() -> None:
    from artemis_cli.models.fakes.openai import heuristic_policy, script_policy

    with FakeOpenAIServer(script_policy([])) as srv:
        client = OpenAI(base_url=srv.base_url, api_key="x", max_retries=0)
        reply = client.chat.completions.create(model=MODEL, messages=[user("# TASK\nGoal: nothing")], tools=TOOLS)
        (call,) = calls_of(reply.choices[0].message)
        assert call.function.name == "finish" and json.loads(call.function.arguments)["success"] is True
        assert (reply.choices[0].message.content or "").startswith("[script 0/0]")
    with FakeOpenAIServer(heuristic_policy()) as srv:
        client = OpenAI(base_url=srv.base_url, api_key="x", max_retries=0)
        lens = client.chat.completions.create(model=MODEL, messages=[user("describe this")])
        assert lens.model.startswith("stub-") and "Stub text" in (lens.choices[0].message.content or "")
    assert srv.errors == []
