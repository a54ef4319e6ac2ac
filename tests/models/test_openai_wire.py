"""The OpenAI chat-completions wire (``openai_wire``): our request rendered into the exact body the
SDK sends, and completions (dicts and the SDK's own objects) parsed back into our message."""

from __future__ import annotations

import base64
import copy
import io
import json
from typing import Any

import pytest
from openai.types.chat import ChatCompletion
from PIL import Image

from artemis_cli.errors import ModelOutputError, ModelRefused
from artemis_cli.models.base import FunctionCall, FunctionResponse, Message, ModelRequest, Part, ToolDecl
from artemis_cli.models.fakes.openai_wire import parse_body
from artemis_cli.models.openai_wire import (
    LENGTH,
    MALFORMED_ARGUMENTS,
    NO_CHOICES,
    NO_JSON_ACTION,
    NO_RESULT,
    TEXT_MODE_HEADING,
    WireOptions,
    calls_in_text,
    message_from_completion,
    render_body,
    usage_from_completion,
    wire_hash,
)

TAP = ToolDecl("tap", "Tap the element with the given index.",
               {"type": "object", "properties": {"index": {"type": "integer"}}, "required": ["index"]})
FINISH = ToolDecl("finish", "End the task.",
                  {"type": "object", "properties": {"success": {"type": "boolean"}}, "required": ["success"]})
NATIVE = WireOptions()
TEXT = WireOptions(tool_calls="text")
#: The id derived for the id-less ``tap {"index": 3}`` at message 1, call 0 (pinned: a change
#: would make every recorded OpenAI session fail ``sessions prompt``).
TAP_ID = "call_b8064809d1647812"


def png(width: int = 40, height: int = 20) -> bytes:
    buf = io.BytesIO()
    Image.new("RGB", (width, height), (200, 10, 10)).save(buf, format="PNG")
    return buf.getvalue()


def data_url(image: bytes) -> str:
    return "data:image/png;base64," + base64.b64encode(image).decode("ascii")


def decode_data_url(url: str) -> Image.Image:
    prefix = "data:image/png;base64,"
    assert url.startswith(prefix)
    return Image.open(io.BytesIO(base64.b64decode(url[len(prefix):])))


def golden_request(image: bytes | None = None) -> ModelRequest:
    """System, tools, a user turn (text + screenshot), the model's reply (a thought, text and a
    call without an id), the next user turn (the call's response + new text)."""
    return ModelRequest(
        system="You operate a phone.",
        tools=[TAP],
        temperature=0.2,
        messages=[
            Message("user", [Part(text="Turn on Wi-Fi"), Part(image_png=image or png())]),
            Message("model", [Part(text="thinking hard", thought=True), Part(text="Settings is at index 3."),
                              Part(function_call=FunctionCall("tap", {"index": 3}))]),
            Message("user", [Part(function_response=FunctionResponse("tap", {"status": "ok"})),
                             Part(text="The screen changed.")]),
        ],
    )


def accepted_by_fake_server(body: dict[str, Any]) -> None:
    """The fake server's validation (tool messages answer the preceding calls, content shapes, ...)."""
    parse_body(json.dumps(body).encode("utf-8"))


# --- rendering: native tool calls -------------------------------------------------------------


def test_golden_native_body() -> None:
    image = png()
    body = render_body(golden_request(image), "qwen-vl", NATIVE)
    assert body == {
        "model": "qwen-vl",
        "messages": [
            {"role": "system", "content": "You operate a phone."},
            {"role": "user", "content": [
                {"type": "text", "text": "Turn on Wi-Fi"},
                {"type": "image_url", "image_url": {"url": data_url(image)}},
            ]},
            {"role": "assistant", "content": "Settings is at index 3.", "tool_calls": [
                {"id": TAP_ID, "type": "function", "function": {"name": "tap", "arguments": '{"index": 3}'}},
            ]},
            {"role": "tool", "tool_call_id": TAP_ID, "content": '{"status":"ok"}'},
            {"role": "user", "content": "The screen changed."},
        ],
        "tools": [{"type": "function", "function": {
            "name": "tap", "description": "Tap the element with the given index.",
            "parameters": {"type": "object", "properties": {"index": {"type": "integer"}}, "required": ["index"]},
        }}],
        "temperature": 0.2,
    }
    accepted_by_fake_server(body)


def test_rendering_is_deterministic_and_the_hash_ignores_the_model_name() -> None:
    first = render_body(golden_request(), "a", NATIVE)
    again = render_body(golden_request(), "a", NATIVE)
    assert json.dumps(first, sort_keys=True) == json.dumps(again, sort_keys=True)
    assert wire_hash(first) == wire_hash(again) == wire_hash(render_body(golden_request(), "fallback-b", NATIVE))
    # the hash covers what the model sees: a changed response, image or tool set changes it
    changed = golden_request()
    fr = changed.messages[2].parts[0].function_response
    assert fr is not None
    fr.response = {"status": "failed"}
    assert wire_hash(render_body(changed, "a", NATIVE)) != wire_hash(first)
    assert wire_hash(render_body(golden_request(png(41, 20)), "a", NATIVE)) != wire_hash(first)
    more_tools = golden_request()
    more_tools.tools.append(FINISH)
    assert wire_hash(render_body(more_tools, "a", NATIVE)) != wire_hash(first)
    assert wire_hash(render_body(golden_request(), "a", TEXT)) != wire_hash(first)


def test_ids_are_derived_from_name_arguments_and_position_and_answered_in_call_order() -> None:
    request = ModelRequest(system="s", tools=[TAP, FINISH], messages=[
        Message("user", [Part(text="go")]),
        Message("model", [Part(function_call=FunctionCall("tap", {"index": 1})),
                          Part(function_call=FunctionCall("tap", {"index": 1})),
                          Part(function_call=FunctionCall("finish", {"success": True}, id="call_own"))]),
        # answered out of order, the id-less ones by name only
        Message("user", [Part(function_response=FunctionResponse("finish", {"n": 3}, id="call_own")),
                         Part(function_response=FunctionResponse("tap", {"n": 1})),
                         Part(function_response=FunctionResponse("tap", {"n": 2}))]),
        Message("model", [Part(function_call=FunctionCall("tap", {"index": 1}))]),
        Message("user", [Part(function_response=FunctionResponse("tap", {"n": 4}))]),
    ])
    messages = render_body(request, "m", NATIVE)["messages"]
    assert [m["role"] for m in messages] == ["system", "user", "assistant", "tool", "tool", "tool", "assistant", "tool"]
    ids = [c["id"] for c in messages[2]["tool_calls"]]
    later = messages[6]["tool_calls"][0]["id"]
    assert ids[2] == "call_own"  # a call's own id is kept
    # the same call at another position (or another message) gets another id, all of the form call_<16 hex>
    assert len({ids[0], ids[1], later}) == 3
    assert all(i.startswith("call_") and len(i) == 21 for i in (ids[0], ids[1], later))
    # tool messages follow the call order, each answer reaching its own call
    assert [(m["tool_call_id"], json.loads(m["content"])) for m in messages[3:6]] == [
        (ids[0], {"n": 1}), (ids[1], {"n": 2}), ("call_own", {"n": 3})]
    assert (messages[7]["tool_call_id"], json.loads(messages[7]["content"])) == (later, {"n": 4})
    # stable across renders
    assert render_body(request, "m", NATIVE)["messages"] == messages
    accepted_by_fake_server(render_body(request, "m", NATIVE))


def test_unanswered_calls_get_a_no_result_tool_message() -> None:
    request = ModelRequest(system="s", tools=[TAP], messages=[
        Message("user", [Part(text="go")]),
        Message("model", [Part(function_call=FunctionCall("tap", {"index": 1})),
                          Part(function_call=FunctionCall("tap", {"index": 2}))]),
        Message("user", [Part(function_response=FunctionResponse("tap", {"ok": True})), Part(text="next")]),
        Message("model", [Part(function_call=FunctionCall("tap", {"index": 9}, id="call_x"))]),  # two model
        Message("model", [Part(text="I will wait.")]),                                           # messages in a row
    ])
    messages = render_body(request, "m", NATIVE)["messages"]
    first, second = (c["id"] for c in messages[2]["tool_calls"])
    assert messages[3:6] == [
        {"role": "tool", "tool_call_id": first, "content": '{"ok":true}'},
        {"role": "tool", "tool_call_id": second, "content": json.dumps(NO_RESULT, separators=(",", ":"))},
        {"role": "user", "content": "next"},
    ]
    assert messages[6]["tool_calls"][0]["id"] == "call_x"
    assert messages[7] == {"role": "tool", "tool_call_id": "call_x",
                           "content": json.dumps(NO_RESULT, separators=(",", ":"))}
    assert messages[8] == {"role": "assistant", "content": "I will wait."}
    # a request ending on a model call (nothing answered it yet) still closes it
    tail = ModelRequest(system="s", tools=[TAP], messages=request.messages[:2])
    tail_messages = render_body(tail, "m", NATIVE)["messages"]
    assert [m["role"] for m in tail_messages[-2:]] == ["tool", "tool"]
    accepted_by_fake_server(render_body(request, "m", NATIVE))
    accepted_by_fake_server(render_body(tail, "m", NATIVE))


def test_max_image_side_scales_the_screenshot() -> None:
    screen = png(400, 200)
    scaled = render_body(golden_request(screen), "m", WireOptions(max_image_side=100))
    url = scaled["messages"][1]["content"][1]["image_url"]["url"]
    assert decode_data_url(url).size == (100, 50)
    full = render_body(golden_request(screen), "m", NATIVE)
    assert full["messages"][1]["content"][1]["image_url"]["url"] == data_url(screen)
    fits = render_body(golden_request(screen), "m", WireOptions(max_image_side=1000))
    assert fits["messages"][1]["content"][1]["image_url"]["url"] == data_url(screen)
    assert wire_hash(scaled) != wire_hash(full)


# --- rendering: text mode -----------------------------------------------------------------


def test_text_mode_body() -> None:
    image = png()
    body = render_body(golden_request(image), "m", TEXT)
    assert "tools" not in body and body["temperature"] == 0.2
    messages = body["messages"]
    system = messages[0]["content"]
    assert messages[0]["role"] == "system" and system.startswith("You operate a phone.\n\n")
    assert TEXT_MODE_HEADING in system
    declarations = [json.loads(line) for line in system.split(TEXT_MODE_HEADING, 1)[1].splitlines()
                    if line.startswith("{")]
    assert declarations == [{"name": "tap", "description": TAP.description, "parameters": TAP.parameters}]
    assert messages[1:] == [
        {"role": "user", "content": [{"type": "text", "text": "Turn on Wi-Fi"},
                                     {"type": "image_url", "image_url": {"url": data_url(image)}}]},
        {"role": "assistant", "content": 'Settings is at index 3.\n{"arguments": {"index": 3}, "name": "tap"}'},
        {"role": "user", "content": [{"type": "text", "text": 'Result of tap: {"status":"ok"}'},
                                     {"type": "text", "text": "The screen changed."}]},
    ]
    assert all(m["role"] != "tool" and "tool_calls" not in m for m in messages)
    assert render_body(golden_request(image), "m", TEXT) == body
    accepted_by_fake_server(body)


def test_text_mode_calls_read_back_as_calls() -> None:
    """What text mode renders as the model's earlier call is what text-mode parsing takes as a call."""
    body = render_body(golden_request(), "m", TEXT)
    text, calls = calls_in_text(body["messages"][2]["content"], {"tap"})
    assert text == "Settings is at index 3."
    assert [(c.name, c.args) for c in calls] == [("tap", {"index": 3})]


def test_text_mode_without_tools_is_the_plain_system() -> None:
    request = ModelRequest(system="Describe the screen.", messages=[Message("user", [Part(text="look")])])
    assert render_body(request, "m", TEXT) == render_body(request, "m", NATIVE) == {
        "model": "m", "messages": [{"role": "system", "content": "Describe the screen."},
                                   {"role": "user", "content": "look"}]}


# --- parsing ----------------------------------------------------------------------------------


def completion(content: str | None = None, tool_calls: list[dict[str, Any]] | None = None, *,
               finish: str = "stop", usage: dict[str, Any] | None = None) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": content}
    if tool_calls is not None:
        message["tool_calls"] = tool_calls
    body: dict[str, Any] = {"id": "chatcmpl-1", "object": "chat.completion", "created": 0, "model": "m",
                            "choices": [{"index": 0, "message": message, "finish_reason": finish}]}
    if usage is not None:
        body["usage"] = usage
    return body


def tool_call(name: str, arguments: str, call_id: str = "call_1") -> dict[str, Any]:
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}


def request_with(*tools: ToolDecl) -> ModelRequest:
    return ModelRequest(system="s", messages=[Message("user", [Part(text="go")])], tools=list(tools))


def both_forms(body: dict[str, Any]) -> list[Any]:
    """The completion as a plain dict and as the SDK's own object."""
    return [copy.deepcopy(body), ChatCompletion.model_validate(body)]


@pytest.mark.parametrize("form", [0, 1])
def test_native_tool_call_is_parsed_with_its_id(form: int) -> None:
    body = completion("Tapping.", [tool_call("tap", '{"index": 4}', "call_abc")], finish="tool_calls")
    message = message_from_completion(both_forms(body)[form], request_with(TAP), NATIVE)
    assert message.role == "model"
    assert message.text() == "Tapping."
    assert [(c.name, c.args, c.id) for c in message.function_calls()] == [("tap", {"index": 4}, "call_abc")]


@pytest.mark.parametrize("arguments", ['{"index": 4', "[1, 2]", "not json"])
@pytest.mark.parametrize("form", [0, 1])
def test_malformed_arguments(arguments: str, form: int) -> None:
    body = completion(None, [tool_call("tap", arguments)], finish="tool_calls")
    with pytest.raises(ModelOutputError) as info:
        message_from_completion(both_forms(body)[form], request_with(TAP), NATIVE)
    assert info.value.reason == MALFORMED_ARGUMENTS
    assert "tap" in str(info.value)


def test_empty_arguments_are_an_empty_object() -> None:
    body = completion(None, [tool_call("finish", "")], finish="tool_calls")
    message = message_from_completion(body, request_with(FINISH), NATIVE)
    assert [(c.name, c.args) for c in message.function_calls()] == [("finish", {})]


def test_calls_in_tool_call_tags_are_taken() -> None:
    text = 'I will open it.\n<tool_call>\n{"name": "tap", "arguments": {"index": 2}}\n</tool_call>'
    rest, calls = calls_in_text(text, {"tap"})
    assert rest == "I will open it."
    assert [(c.name, c.args) for c in calls] == [("tap", {"index": 2})]
    message = message_from_completion(completion(text), request_with(TAP), NATIVE)
    assert message.text() == "I will open it."
    assert [(c.name, c.args, c.id) for c in message.function_calls()] == [("tap", {"index": 2}, None)]


@pytest.mark.parametrize("written", [
    '{"name": "tap", "arguments": {"index": 5}}',
    '```json\n{"name": "tap", "arguments": "{\\"index\\": 5}"}\n```',
    '{"type": "function", "function": {"name": "tap", "parameters": {"index": 5}}}',
])
def test_bare_json_naming_a_declared_tool_is_a_call(written: str) -> None:
    rest, calls = calls_in_text(f"The list shows Wi-Fi at 5.\n{written}", {"tap", "finish"})
    assert rest == "The list shows Wi-Fi at 5."
    assert [(c.name, c.args) for c in calls] == [("tap", {"index": 5})]


def test_undeclared_names_are_not_taken() -> None:
    for text in ('{"name": "format_disk", "arguments": {}}',
                 '<tool_call>{"name": "format_disk", "arguments": {}}</tool_call>',
                 'Settings: {"name": "Wi-Fi", "enabled": false}'):
        rest, calls = calls_in_text(text, {"tap"})
        assert calls == [] and rest == text.strip()
        # natively, the reply is then plain text (the operator turn asks again for an action)
        message = message_from_completion(completion(text), request_with(TAP), NATIVE)
        assert message.function_calls() == [] and message.text() == text
        # in text mode it is no action at all
        with pytest.raises(ModelOutputError) as info:
            message_from_completion(completion(text), request_with(TAP), TEXT)
        assert info.value.reason == NO_JSON_ACTION


def test_a_tag_naming_an_undeclared_tool_stays_in_the_text() -> None:
    """Only the tags taken as calls are cut out: the rest of what the model wrote is kept."""
    for text in ('<tool_call>{"name": "tap", "arguments": {"index": 1}}</tool_call> then '
                 '<tool_call>{"name": "rm", "arguments": {}}</tool_call>',
                 '<tool_call>{"name": "rm", "arguments": {}}</tool_call> then '
                 '<tool_call>{"name": "tap", "arguments": {"index": 1}}</tool_call>'):
        rest, calls = calls_in_text(text, {"tap"})
        assert [(c.name, c.args) for c in calls] == [("tap", {"index": 1})]
        assert rest in ('then <tool_call>{"name": "rm", "arguments": {}}</tool_call>',
                        '<tool_call>{"name": "rm", "arguments": {}}</tool_call> then'), rest


def test_text_without_tools_in_the_request_is_never_parsed_for_calls() -> None:
    text = '{"name": "tap", "arguments": {"index": 5}}'
    message = message_from_completion(completion(text), request_with(), NATIVE)
    assert message.function_calls() == [] and message.text() == text


def test_length_without_a_call() -> None:
    with pytest.raises(ModelOutputError) as info:
        message_from_completion(completion("I will tap the Wi-Fi ro", finish="length"), request_with(TAP), NATIVE)
    assert info.value.reason == LENGTH
    # a cut reply that still carries a usable call is used
    ok = completion("x", [tool_call("tap", '{"index": 1}')], finish="length")
    assert message_from_completion(ok, request_with(TAP), NATIVE).function_calls()[0].args == {"index": 1}


def test_text_mode_reply_without_json() -> None:
    with pytest.raises(ModelOutputError) as info:
        message_from_completion(completion("I think Wi-Fi is on now."), request_with(TAP), TEXT)
    assert info.value.reason == NO_JSON_ACTION
    assert "Wi-Fi is on" in str(info.value)
    message = message_from_completion(completion('Done.\n{"name": "finish", "arguments": {"success": true}}'),
                                      request_with(TAP, FINISH), TEXT)
    assert message.text() == "Done."
    assert [(c.name, c.args) for c in message.function_calls()] == [("finish", {"success": True})]


def test_no_choices_empty_message_and_refusals() -> None:
    with pytest.raises(ModelOutputError) as info:
        message_from_completion({"choices": []}, request_with(TAP), NATIVE)
    assert info.value.reason == NO_CHOICES
    with pytest.raises(ModelOutputError):
        message_from_completion(completion(None), request_with(TAP), NATIVE)
    with pytest.raises(ModelRefused):
        message_from_completion(completion(None, finish="content_filter"), request_with(TAP), NATIVE)
    refusal = completion(None)
    refusal["choices"][0]["message"]["refusal"] = "I can't help with that."
    with pytest.raises(ModelRefused, match="can't help"):
        message_from_completion(refusal, request_with(TAP), NATIVE)


@pytest.mark.parametrize("form", [0, 1])
def test_usage(form: int) -> None:
    assert usage_from_completion(both_forms(completion("x"))[form]) == usage_from_completion({}) == \
        usage_from_completion({"usage": None})
    missing = usage_from_completion(both_forms(completion("x"))[form])
    assert (missing.prompt_tokens, missing.cached_tokens, missing.completion_tokens) == (0, 0, 0)
    full = {"prompt_tokens": 1200, "completion_tokens": 30, "total_tokens": 1230,
            "prompt_tokens_details": {"cached_tokens": 1024}}
    usage = usage_from_completion(both_forms(completion("x", usage=full))[form])
    assert (usage.prompt_tokens, usage.cached_tokens, usage.completion_tokens) == (1200, 1024, 30)
    bare = {"prompt_tokens": 7, "completion_tokens": 2, "total_tokens": 9}
    usage = usage_from_completion(both_forms(completion("x", usage=bare))[form])
    assert (usage.prompt_tokens, usage.cached_tokens, usage.completion_tokens) == (7, 0, 2)
