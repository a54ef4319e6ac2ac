"""GeminiModel through the real google-genai SDK against FakeGeminiServer (no mocks)."""

from __future__ import annotations

import base64
import logging
from collections.abc import Iterator

import pytest

from artemis_cli.errors import (
    ModelAuthError,
    ModelConfigError,
    ModelOutputError,
    ModelRefused,
    ModelRequestError,
    ModelUnavailable,
)
from artemis_cli.models.base import (
    FunctionResponse,
    Message,
    ModelRequest,
    Part,
    ToolDecl,
)
from artemis_cli.models.fakes.gemini import (
    IMAGE_TOKENS,
    SERVED_BY_DEFAULT,
    FakeGeminiServer,
    FakeReply,
    FakeRequest,
)
from artemis_cli.models.gemini import GeminiModel, to_sdk_content

#: The invented model names these tests call; the fake serves only what it is told to.
TEST_MODELS = ["gemini-a", "gemini-b", *SERVED_BY_DEFAULT]

KEY = "SENTINEL-KEY-7f3a9c"
TAP = ToolDecl(
    "tap",
    "Tap the element with the given index.",
    {"type": "object", "properties": {"index": {"type": "integer"}}, "required": ["index"]},
)
LONG_SYSTEM = "You operate an Android phone. " * 200  # ~1500 tokens by the chars/4 estimate


def tap_then_done(req: FakeRequest) -> FakeReply:
    if req.function_responses_since_last_user():
        return FakeReply.text("done", thought_text="The screen shows the setting is on.")
    return FakeReply.call("tap", {"index": 3}, thought_text="Settings is at index 3.")


@pytest.fixture
def server() -> Iterator[FakeGeminiServer]:
    with FakeGeminiServer(tap_then_done, timeout_hold_s=1.0, models=TEST_MODELS) as srv:
        yield srv


class Sleeps:
    def __init__(self) -> None:
        self.calls: list[float] = []

    def __call__(self, seconds: float) -> None:
        self.calls.append(seconds)


def make_model(server: FakeGeminiServer, chain: list[str] | None = None, **kw: object) -> GeminiModel:
    kw.setdefault("sleep", Sleeps())
    kw.setdefault("timeout_s", 5)
    return GeminiModel(chain or ["gemini-a", "gemini-b"], api_key=KEY, base_url=server.base_url, **kw)  # type: ignore[arg-type]


def first_request(system: str = LONG_SYSTEM, goal: str = "Turn on Wi-Fi") -> ModelRequest:
    return ModelRequest(system=system, messages=[Message("user", [Part(text=goal)])], tools=[TAP])


def answer_call(request: ModelRequest, model_message: Message) -> None:
    """Append the model's message unchanged plus a function response for its call."""
    call = model_message.function_calls()[0]
    request.messages.append(model_message)
    request.messages.append(
        Message("user", [Part(function_response=FunctionResponse(call.name, {"result": "ok"}, call.id))])
    )


# --- happy path ---------------------------------------------------------------------------


def test_function_call_round_trip_echoes_signature_and_reports_usage(server: FakeGeminiServer) -> None:
    model = make_model(server)
    request = first_request()
    first = model.generate(request)

    assert first.model == "gemini-a"
    thought, call_part = first.message.parts
    assert thought.thought is True and thought.text == "Settings is at index 3."
    assert call_part.function_call is not None and call_part.function_call.name == "tap"
    assert call_part.function_call.args == {"index": 3}
    assert call_part.thought_signature is not None
    assert server.issued_signature(call_part.thought_signature)
    assert first.usage.prompt_tokens > 1024
    assert first.usage.cached_tokens == 0  # nothing earlier to share a prefix with
    assert first.usage.completion_tokens > 0 and first.usage.thoughts_tokens > 0
    assert [a.status for a in first.attempts] == ["ok"]

    answer_call(request, first.message)
    second = model.generate(request)

    assert second.message.text() == "done"
    assert server.requests[-1].status == 200
    echoed = server.requests[-1].contents[1]["parts"][1]
    sent = echoed["thoughtSignature"].replace("-", "+").replace("_", "/")
    assert base64.b64decode(sent + "=" * (-len(sent) % 4)) == call_part.thought_signature
    assert server.requests[-1].contents[1]["parts"][0] == {"text": "Settings is at index 3.", "thought": True}
    # the second request extends the first: everything the first sent is a cached prefix
    assert second.usage.cached_tokens == first.usage.prompt_tokens
    assert second.usage.prompt_tokens > second.usage.cached_tokens


def test_cached_tokens_zero_below_minimum(server: FakeGeminiServer) -> None:
    model = make_model(server)
    request = first_request(system="Short system.")
    first = model.generate(request)
    answer_call(request, first.message)
    second = model.generate(request)
    assert first.usage.prompt_tokens < 1024
    assert second.usage.cached_tokens == 0


def test_cache_is_per_model_and_threshold_configurable() -> None:
    with FakeGeminiServer(tap_then_done, min_cacheable_tokens=5, models=TEST_MODELS) as srv:
        a = make_model(srv, ["gemini-a"])
        b = make_model(srv, ["gemini-b"])
        assert a.generate(first_request(system="Short system.")).usage.cached_tokens == 0
        assert b.generate(first_request(system="Short system.")).usage.cached_tokens == 0  # other model
        again = a.generate(first_request(system="Short system.", goal="Another goal"))
        assert again.usage.cached_tokens >= 5  # system + tools shared


def test_parts_map_faithfully_images_ids_and_signature_only_parts(server: FakeGeminiServer) -> None:
    png = b"\x89PNG\r\n\x1a\nfake-image-bytes"
    server.require_thought_signatures = False
    server.policy = lambda req: FakeReply(parts=[{"text": "ok"}, {"text": "", "thoughtSignature": "c2ln"}])
    model = make_model(server)
    request = ModelRequest(
        system="sys",
        messages=[
            Message("user", [Part(text="look"), Part(image_png=png)]),
            Message("model", [Part(text="thinking", thought=True, thought_signature=b"\x01\x02")]),
            Message("user", [Part(function_response=FunctionResponse("tap", {"ok": True}, id="call-1"))]),
        ],
        tools=[TAP],
        temperature=0.2,
    )
    response = model.generate(request)
    contents = server.requests[-1].contents
    inline = contents[0]["parts"][1]["inlineData"]
    assert inline.get("mimeType", inline.get("mime_type")) == "image/png"
    assert base64.b64decode(inline["data"].replace("-", "+").replace("_", "/")) == png
    assert contents[1]["parts"][0]["thought"] is True and "thoughtSignature" in contents[1]["parts"][0]
    assert contents[2]["parts"][0]["functionResponse"] == {
        "name": "tap",
        "response": {"ok": True},
        "id": "call-1",
    }
    body = server.requests[-1].body
    assert body["generationConfig"]["temperature"] == 0.2
    decl = body["tools"][0]["functionDeclarations"][0]
    assert decl["name"] == "tap"
    # the signature-only part the service may send is kept (to be echoed)
    assert response.message.parts[-1].thought_signature == b"sig"
    # image is estimated at a flat 258 tokens
    text_only = model.generate(
        ModelRequest(system="sys", messages=[Message("user", [Part(text="look")])], tools=[TAP])
    )
    assert response.usage.prompt_tokens - text_only.usage.prompt_tokens >= IMAGE_TOKENS


def test_policy_can_be_swapped_at_runtime(server: FakeGeminiServer) -> None:
    model = make_model(server)
    server.policy = lambda req: FakeReply.text(f"echo: {req.last_user_text()}")
    assert model.generate(first_request(goal="hello")).message.text() == "echo: hello"


# --- thought signatures -------------------------------------------------------------------


def test_dropped_signature_on_current_turn_is_400_and_never_falls_back(server: FakeGeminiServer) -> None:
    model = make_model(server)
    request = first_request()
    first = model.generate(request)
    stripped = Message(
        "model",
        [
            Part(p.text, p.image_png, p.function_call, p.function_response, p.thought, None)
            for p in first.message.parts
        ],
    )
    answer_call(request, stripped)
    with pytest.raises(ModelRequestError) as info:
        model.generate(request)
    assert "thought_signature" in str(info.value)
    assert [r.model for r in server.requests] == ["gemini-a", "gemini-a"]
    assert server.requests[-1].status == 400
    attempts = info.value.attempts  # type: ignore[attr-defined]
    assert [(a.model, a.status, a.error_class) for a in attempts] == [("gemini-a", "error", "http_400")]


def test_forged_signature_is_rejected(server: FakeGeminiServer) -> None:
    model = make_model(server)
    request = first_request()
    first = model.generate(request)
    forged = Message(
        "model",
        [
            Part(
                p.text,
                p.image_png,
                p.function_call,
                p.function_response,
                p.thought,
                b"forged" if p.function_call else None,
            )
            for p in first.message.parts
        ],
    )
    answer_call(request, forged)
    with pytest.raises(ModelRequestError):
        model.generate(request)


def test_earlier_turns_are_not_checked(server: FakeGeminiServer) -> None:
    model = make_model(server)
    request = first_request()
    first = model.generate(request)
    stripped = Message("model", [Part(function_call=first.message.function_calls()[0])])
    answer_call(request, stripped)
    request.messages.append(Message("user", [Part(text="New instruction: go home")]))  # new turn
    assert model.generate(request).attempts[-1].status == "ok"


# --- retries and fallback -----------------------------------------------------------------


def test_503_on_first_model_falls_back_to_second(server: FakeGeminiServer) -> None:
    sleeps = Sleeps()
    model = make_model(server, max_retries=1, backoff_s=0.5, sleep=sleeps)
    server.inject("503", count=2, model="gemini-a")
    response = model.generate(first_request())
    assert response.model == "gemini-b"
    assert [(a.model, a.status, a.error_class) for a in response.attempts] == [
        ("gemini-a", "error", "http_503"),
        ("gemini-a", "error", "http_503"),
        ("gemini-b", "ok", None),
    ]
    assert sleeps.calls == [0.5]  # one backoff between the two tries on gemini-a; none on fallback
    assert [r.model for r in server.requests] == ["gemini-a", "gemini-a", "gemini-b"]
    assert response.usage == response.attempts[-1].usage


def test_exponential_backoff_is_capped(server: FakeGeminiServer) -> None:
    sleeps = Sleeps()
    model = make_model(server, ["gemini-a"], max_retries=3, backoff_s=1.0, max_backoff_s=3.0, sleep=sleeps)
    server.inject("500", count=3)
    assert model.generate(first_request()).attempts[-1].status == "ok"
    assert sleeps.calls == [1.0, 2.0, 3.0]


def test_429_honours_retry_delay_and_succeeds_on_same_model() -> None:
    sleeps = Sleeps()
    with FakeGeminiServer(tap_then_done, retry_delay_s=0.25, models=TEST_MODELS) as srv:
        model = make_model(srv, backoff_s=5.0, sleep=sleeps)
        srv.inject("429")
        response = model.generate(first_request())
    assert response.model == "gemini-a"
    assert sleeps.calls == [0.25]
    assert [a.error_class for a in response.attempts] == ["http_429", None]


def test_429_retry_delay_capped_by_max_backoff() -> None:
    sleeps = Sleeps()
    with FakeGeminiServer(tap_then_done, retry_delay_s=90, models=TEST_MODELS) as srv:
        model = make_model(srv, max_backoff_s=2.0, sleep=sleeps)
        srv.inject("429")
        model.generate(first_request())
    assert sleeps.calls == [2.0]


def test_timeout_is_retried_then_falls_back(server: FakeGeminiServer) -> None:
    model = make_model(server, max_retries=0, timeout_s=0.3)
    server.inject("timeout", model="gemini-a")
    response = model.generate(first_request())
    assert response.model == "gemini-b"
    assert [(a.model, a.error_class) for a in response.attempts] == [
        ("gemini-a", "timeout"),
        ("gemini-b", None),
    ]
    assert response.attempts[0].latency_ms >= 250


def test_all_retryable_failures_exhausted_raise_model_unavailable(server: FakeGeminiServer) -> None:
    model = make_model(server, max_retries=1)
    server.inject("503", count=3)
    server.inject("429", count=1)
    with pytest.raises(ModelUnavailable) as info:
        model.generate(first_request())
    message = str(info.value)
    assert "gemini-a" in message and "gemini-b" in message and "http_429" in message
    attempts = info.value.attempts  # type: ignore[attr-defined]
    assert [(a.model, a.error_class) for a in attempts] == [
        ("gemini-a", "http_503"),
        ("gemini-a", "http_503"),
        ("gemini-b", "http_503"),
        ("gemini-b", "http_429"),
    ]
    assert info.value.exit_code == 3


def test_injected_400_is_not_retried(server: FakeGeminiServer) -> None:
    model = make_model(server)
    server.inject("400")
    with pytest.raises(ModelRequestError):
        model.generate(first_request())
    assert len(server.requests) == 1


def test_connection_refused_is_retryable() -> None:
    with FakeGeminiServer(tap_then_done, models=TEST_MODELS) as srv:
        dead_url = srv.base_url
    model = GeminiModel(
        ["gemini-a", "gemini-b"], api_key=KEY, base_url=dead_url, max_retries=0, sleep=Sleeps()
    )
    with pytest.raises(ModelUnavailable) as info:
        model.generate(first_request())
    assert [a.error_class for a in info.value.attempts] == ["connection", "connection"]  # type: ignore[attr-defined]


def test_blocked_prompt_is_a_refusal(server: FakeGeminiServer) -> None:
    server.policy = lambda req: FakeReply(block_reason="SAFETY")
    with pytest.raises(ModelRefused) as info:
        make_model(server).generate(first_request())
    assert "SAFETY" in str(info.value)
    assert len(server.requests) == 1


def test_empty_candidate_reports_finish_reason(server: FakeGeminiServer) -> None:
    server.policy = lambda req: FakeReply(parts=[], finish_reason="MALFORMED_FUNCTION_CALL")
    with pytest.raises(ModelOutputError) as info:
        make_model(server).generate(first_request())
    assert "MALFORMED_FUNCTION_CALL" in str(info.value)


# --- credentials --------------------------------------------------------------------------


def test_missing_api_key_is_a_config_error() -> None:
    with pytest.raises(ModelConfigError) as info:
        GeminiModel(["gemini-a"])
    assert "GEMINI_API_KEY" in (info.value.hint or "")
    assert "heuristic" in (info.value.hint or "")
    assert info.value.exit_code == 2


@pytest.mark.parametrize("var", ["GEMINI_API_KEY", "GOOGLE_API_KEY"])
def test_api_key_from_environment(var: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(var, KEY)
    with FakeGeminiServer(tap_then_done, expected_api_key=KEY, models=TEST_MODELS) as srv:
        model = GeminiModel(["gemini-a"], base_url=srv.base_url)
        assert model.generate(first_request()).attempts[-1].status == "ok"


def test_wrong_key_is_rejected_without_fallback() -> None:
    with FakeGeminiServer(tap_then_done, expected_api_key="other", models=TEST_MODELS) as srv:
        model = make_model(srv)
        with pytest.raises(ModelAuthError):
            model.generate(first_request())
        assert [r for r in srv.requests] == []  # rejected before the body is read as a request


def test_api_key_never_appears_in_errors_repr_or_logs(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)

    def leaky(req: FakeRequest) -> FakeReply:
        raise RuntimeError(f"backend echoed credentials {KEY}")

    texts: list[str] = []
    with FakeGeminiServer(leaky, models=TEST_MODELS) as srv:
        model = make_model(srv, max_retries=0)
        texts.append(repr(model))
        with pytest.raises(ModelUnavailable) as info:
            model.generate(first_request())
        texts.append(str(info.value))
        srv.inject("400")
        with pytest.raises(ModelRequestError) as info2:
            model.generate(first_request())
        texts.append(str(info2.value))
    assert "credentials ***" in texts[1]  # the echo reached us, scrubbed
    texts.append(caplog.text)
    assert all(KEY not in t for t in texts)


# --- signatures bound to the model that issued them (Gemini 3 after a fallback) -------------


def _call_then_fallback(server: FakeGeminiServer, chain: list[str]) -> tuple[GeminiModel, ModelRequest]:
    """The first model calls a tool; on the function response it is overloaded every retry, so
    the turn goes on on the next model of the chain with the first model's signed call in it."""
    model = make_model(server, chain)
    request = first_request()
    answer_call(request, model.generate(request).message)
    server.inject("503", count=model.max_retries + 1, model=chain[0])
    return model, request


def test_gemini_3_rejects_a_signature_another_model_issued_as_the_service_does(server: FakeGeminiServer) -> None:
    from google.genai import errors as genai_errors

    from artemis_cli.models.fakes.gemini import SKIP_SIGNATURE

    model = make_model(server, ["gemini-3-pro-preview"])
    request = first_request()
    answer_call(request, model.generate(request).message)
    client = model._client
    contents = [to_sdk_content(m) for m in request.messages]
    with pytest.raises(genai_errors.ClientError) as info:
        client.models.generate_content(model="gemini-3-flash-preview", contents=contents)
    assert (info.value.code, info.value.status, info.value.message) == (400, "INVALID_ARGUMENT",
                                                                         "Corrupted thought signature.")
    assert client.models.generate_content(model="gemini-2.5-flash", contents=contents).candidates  # older: accepted
    for content in contents:  # the documented dummy value passes everywhere
        for part in content.parts or []:
            if part.function_call is not None:
                part.thought_signature = SKIP_SIGNATURE
    assert client.models.generate_content(model="gemini-3-flash-preview", contents=contents).candidates


def test_a_fallback_to_another_gemini_3_model_does_not_send_the_first_models_signatures(
        server: FakeGeminiServer) -> None:
    from artemis_cli.models.fakes.gemini import SKIP_SIGNATURE

    chain = ["gemini-3-pro-preview", "gemini-3-flash-preview"]
    model, request = _call_then_fallback(server, chain)
    response = model.generate(request)
    assert response.message.text() == "done"
    assert [(a.model, a.status) for a in response.attempts][-1] == (chain[1], "ok")
    sent = server.requests[-1]
    assert sent.model == chain[1] and sent.status == 200
    calls = [p for c in sent.contents if c["role"] == "model" for p in c["parts"] if "functionCall" in p]
    assert [base64.b64decode(p["thoughtSignature"]) for p in calls] == [SKIP_SIGNATURE]
    # the first model, asked again, still gets its own signature back
    own = request.messages[-2].parts
    assert any(p.thought_signature not in (None, SKIP_SIGNATURE) for p in own)
