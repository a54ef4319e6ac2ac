"""OpenAIModel through the real openai SDK against FakeOpenAIServer (no mocks of our classes):
retries and their recorded backoff, Retry-After, the fallback chain, auth and request errors,
unusable replies, and the wire hash every attempt carries."""

from __future__ import annotations

import email.utils
import logging
import time
from collections.abc import Iterator

import pytest

from artemis_cli.errors import (
    ModelAuthError,
    ModelConfigError,
    ModelOutputError,
    ModelRequestError,
    ModelUnavailable,
)
from artemis_cli.models.base import FunctionResponse, Message, ModelRequest, Part, ToolDecl
from artemis_cli.models.fakes.openai import FakeOpenAIReply, FakeOpenAIRequest, FakeOpenAIServer
from artemis_cli.models.openai_provider import OpenAIModel, retry_after_s
from artemis_cli.models.openai_wire import LENGTH, MALFORMED_ARGUMENTS, WireOptions, render_body, wire_hash

KEY = "sk-SENTINEL-9d8e7f6a5b4c"
TAP = ToolDecl("tap", "Tap the element with the given index.",
               {"type": "object", "properties": {"index": {"type": "integer"}}, "required": ["index"]})
LONG_SYSTEM = "You operate an Android phone. " * 60  # well over one 16-token cache block


def tap_then_finish(req: FakeOpenAIRequest) -> FakeOpenAIReply:
    if any(m.get("role") == "tool" for m in req.messages):
        return FakeOpenAIReply.text("done")
    if req.tools:
        return FakeOpenAIReply.call("tap", {"index": 7}, content="Wi-Fi is at index 7.")
    return FakeOpenAIReply.text(f"you said {req.last_user_text()}")


class Sleeps:
    def __init__(self) -> None:
        self.calls: list[float] = []

    def __call__(self, seconds: float) -> None:
        self.calls.append(seconds)


@pytest.fixture(autouse=True)
def _no_openai_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for var in ("OPENAI_API_KEY", "ARTEMIS_OPENAI_BASE_URL", "ARTEMIS_OPENAI_TIMEOUT_S"):
        monkeypatch.delenv(var, raising=False)


@pytest.fixture
def server() -> Iterator[FakeOpenAIServer]:
    with FakeOpenAIServer(tap_then_finish, retry_after_s=7, timeout_hold_s=1.0) as srv:
        yield srv
    assert srv.errors == []


def make_model(server: FakeOpenAIServer, chain: list[str] | None = None, **kw: object) -> OpenAIModel:
    kw.setdefault("sleep", Sleeps())
    kw.setdefault("timeout_s", 5)
    return OpenAIModel(chain or ["model-a", "model-b"], base_url=server.base_url, **kw)  # type: ignore[arg-type]


def first_request(goal: str = "Turn on Wi-Fi") -> ModelRequest:
    return ModelRequest(system=LONG_SYSTEM, messages=[Message("user", [Part(text=goal)])], tools=[TAP])


def sleeps_of(model: OpenAIModel) -> list[float]:
    sleep = model._sleep
    assert isinstance(sleep, Sleeps)
    return sleep.calls


def attempts_of(error: BaseException) -> list[tuple[str, str, str | None]]:
    return [(a.model, a.status, a.error_class) for a in error.attempts]  # type: ignore[attr-defined]


# --- happy path -----------------------------------------------------------------------------


def test_tool_call_round_trip_with_usage_and_cached_tokens(server: FakeOpenAIServer) -> None:
    model = make_model(server)
    request = first_request()
    first = model.generate(request)
    assert first.model == "model-a" and first.message.text() == "Wi-Fi is at index 7."
    (call,) = first.message.function_calls()
    assert (call.name, call.args) == ("tap", {"index": 7}) and call.id and call.id.startswith("call_")
    assert first.usage.prompt_tokens > 16 and first.usage.cached_tokens == 0 and first.usage.completion_tokens > 0
    assert [(a.model, a.status, a.error_class) for a in first.attempts] == [("model-a", "ok", None)]
    assert first.attempts[0].usage == first.usage

    request.messages.append(first.message)
    request.messages.append(Message("user", [Part(function_response=FunctionResponse("tap", {"ok": True}, call.id)),
                                             Part(text="The screen changed.")]))
    second = model.generate(request)
    assert second.message.text() == "done" and second.message.function_calls() == []
    # the server's own call id went back with the tool message answering it
    sent = server.requests[-1].messages
    assert sent[2]["tool_calls"][0]["id"] == call.id
    assert sent[3] == {"role": "tool", "tool_call_id": call.id, "content": '{"ok":true}'}
    # the second request extends the first: its whole blocks come from the cache
    assert 0 < second.usage.cached_tokens <= first.usage.prompt_tokens
    assert second.usage.cached_tokens % 16 == 0
    assert second.usage.cached_tokens == server.cache_log[-1].cached_tokens
    assert sleeps_of(model) == []


def test_the_body_sent_is_the_rendered_body(server: FakeOpenAIServer) -> None:
    """Every attempt records the hash of what went over the wire, the same for retries and fallbacks."""
    model = make_model(server, max_retries=1, backoff_s=0.5)
    server.inject("503", count=2, model="model-a")
    request = first_request()
    response = model.generate(request)
    expected = wire_hash(render_body(request, "anything", WireOptions()))
    assert [a.wire_hash for a in response.attempts] == [expected] * 3
    assert [wire_hash(r.body) for r in server.requests] == [expected] * 3
    assert [r.body["model"] for r in server.requests] == ["model-a", "model-a", "model-b"]
    assert server.requests[-1].body == {**model.render(request), "model": "model-b"}


def test_no_usage_reads_as_zeros(server: FakeOpenAIServer) -> None:
    server.inject("no_usage")
    response = make_model(server).generate(first_request())
    assert response.message.function_calls()[0].name == "tap"
    assert (response.usage.prompt_tokens, response.usage.cached_tokens, response.usage.completion_tokens) == (0, 0, 0)
    assert [a.status for a in response.attempts] == ["ok"]


def test_text_only_reply_is_parsed_into_calls(server: FakeOpenAIServer) -> None:
    server.inject("text_only")
    response = make_model(server).generate(first_request())
    assert server.requests[-1].fault == "text_only"
    assert [(c.name, c.args, c.id) for c in response.message.function_calls()] == [("tap", {"index": 7}, None)]
    assert response.message.text() == "Wi-Fi is at index 7."
    assert [a.status for a in response.attempts] == ["ok"]


def test_text_mode_sends_no_tools_and_parses_the_json_action(server: FakeOpenAIServer) -> None:
    def json_actor(req: FakeOpenAIRequest) -> FakeOpenAIReply:
        assert not req.tools
        return FakeOpenAIReply.text('Wi-Fi is at 7.\n{"name": "tap", "arguments": {"index": 7}}')

    server.policy = json_actor
    model = make_model(server, options=WireOptions(tool_calls="text"))
    response = model.generate(first_request())
    assert "tools" not in server.requests[-1].body
    assert [(c.name, c.args) for c in response.message.function_calls()] == [("tap", {"index": 7})]


# --- retries and fallback ---------------------------------------------------------------------


def test_429_honours_retry_after(server: FakeOpenAIServer) -> None:
    model = make_model(server, backoff_s=0.25, max_backoff_s=30)
    server.inject("429")
    response = model.generate(first_request())
    assert response.model == "model-a"
    assert sleeps_of(model) == [7.0]  # the server's Retry-After, not the 0.25 s backoff
    assert [(a.model, a.status, a.error_class) for a in response.attempts] == [
        ("model-a", "error", "http_429"), ("model-a", "ok", None)]
    assert [r.status for r in server.requests] == [429, 200]


def test_429_retry_after_is_capped_by_max_backoff(server: FakeOpenAIServer) -> None:
    model = make_model(server, max_backoff_s=2.0)
    server.inject("429")
    model.generate(first_request())
    assert sleeps_of(model) == [2.0]


def test_retry_after_header_forms() -> None:
    assert retry_after_s({"retry-after": "7"}) == 7.0
    assert retry_after_s({"retry-after-ms": "1500", "retry-after": "9"}) == 1.5  # ms wins
    assert retry_after_s({"retry-after": "soon"}) is None
    assert retry_after_s({}) is None and retry_after_s(None) is None
    later = email.utils.formatdate(time.time() + 30, usegmt=True)
    delay = retry_after_s({"retry-after": later})
    assert delay is not None and 25 <= delay <= 31


def test_503_storm_exhausts_model_one_then_model_two_answers(server: FakeOpenAIServer) -> None:
    model = make_model(server, max_retries=2, backoff_s=1.0, max_backoff_s=30)
    server.inject("503", count=3, model="model-a")
    response = model.generate(first_request())
    assert response.model == "model-b"
    assert [r.model for r in server.requests] == ["model-a", "model-a", "model-a", "model-b"]
    assert [(a.model, a.status, a.error_class) for a in response.attempts] == [
        *[("model-a", "error", "http_503")] * 3, ("model-b", "ok", None)]
    assert sleeps_of(model) == [1.0, 2.0]  # exponential between tries of a model; none before the fallback
    assert response.usage == response.attempts[-1].usage


def test_everything_failing_is_model_unavailable_with_every_attempt(server: FakeOpenAIServer) -> None:
    model = make_model(server, max_retries=1, backoff_s=0.1)
    server.inject("503", count=3)
    server.inject("429")
    with pytest.raises(ModelUnavailable) as info:
        model.generate(first_request())
    assert info.value.exit_code == 3
    message = str(info.value)
    assert "model-a" in message and "model-b" in message and "http_429" in message
    assert attempts_of(info.value) == [("model-a", "error", "http_503"), ("model-a", "error", "http_503"),
                                       ("model-b", "error", "http_503"), ("model-b", "error", "http_429")]
    assert sleeps_of(model) == [0.1, 0.1]  # between the tries of each model; never after its last
    assert "doctor" in (info.value.hint or "")


def test_timeout_is_classified_and_falls_back(server: FakeOpenAIServer) -> None:
    model = make_model(server, max_retries=0, timeout_s=0.3)
    server.inject("timeout", model="model-a")
    response = model.generate(first_request())
    assert response.model == "model-b"
    assert [(a.model, a.error_class) for a in response.attempts] == [("model-a", "timeout"), ("model-b", None)]
    assert response.attempts[0].latency_ms >= 250
    assert server.requests[0].fault == "timeout"


def test_connection_refused_is_retryable() -> None:
    with FakeOpenAIServer(tap_then_finish) as srv:
        dead = srv.base_url
    model = OpenAIModel(["model-a", "model-b"], base_url=dead, max_retries=1, backoff_s=0.5, sleep=Sleeps())
    with pytest.raises(ModelUnavailable) as info:
        model.generate(first_request())
    assert [a.error_class for a in info.value.attempts] == ["connection"] * 4  # type: ignore[attr-defined]
    assert sleeps_of(model) == [0.5, 0.5]


# --- errors that are never retried --------------------------------------------------------------


def test_rejected_key_is_an_auth_error_that_never_shows_the_key(monkeypatch: pytest.MonkeyPatch,
                                                                 caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    with FakeOpenAIServer(tap_then_finish, expected_api_key="sk-the-right-one") as srv:
        model = make_model(srv)
        with pytest.raises(ModelAuthError) as info:
            model.generate(first_request())
        assert srv.requests == []  # refused before the body was read as a request
    error = info.value
    assert error.exit_code == 2
    assert attempts_of(error) == [("model-a", "error", "api_key_rejected")]  # never retried into model-b
    assert sleeps_of(model) == []
    assert "OPENAI_API_KEY" in (error.hint or "")
    texts = [str(error), error.hint or "", repr(model), model.label, caplog.text]
    assert "401" in str(error)
    assert all(KEY not in t for t in texts), texts


def test_a_key_echoed_by_the_server_is_scrubbed(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", KEY)

    def leaky(req: FakeOpenAIRequest) -> FakeOpenAIReply:
        raise RuntimeError(f"backend echoed credentials {KEY}")

    with FakeOpenAIServer(leaky) as srv:
        model = make_model(srv, ["model-a"], max_retries=0)
        with pytest.raises(ModelUnavailable) as info:
            model.generate(first_request())
    assert attempts_of(info.value) == [("model-a", "error", "http_500")]
    assert "credentials ***" in str(info.value)  # the echo reached us, scrubbed
    assert KEY not in str(info.value) and KEY not in (info.value.hint or "")


def test_no_key_at_all_hints_to_set_one() -> None:
    with FakeOpenAIServer(tap_then_finish, expected_api_key="sk-the-right-one") as srv, \
            pytest.raises(ModelAuthError) as info:
        make_model(srv).generate(first_request())
    assert "export OPENAI_API_KEY" in (info.value.hint or "")


def test_a_named_key_variable_is_used(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MY_LLM_KEY", KEY)
    with FakeOpenAIServer(tap_then_finish, expected_api_key=KEY) as srv:
        model = make_model(srv, api_key_env="MY_LLM_KEY")
        assert model.generate(first_request()).attempts[-1].status == "ok"
        assert KEY not in repr(model)
    monkeypatch.delenv("MY_LLM_KEY")
    with pytest.raises(ModelConfigError, match="MY_LLM_KEY"):
        OpenAIModel(["m"], base_url="http://127.0.0.1:9/v1", api_key_env="MY_LLM_KEY")


def test_unknown_model_is_a_request_error_not_retried() -> None:
    with FakeOpenAIServer(tap_then_finish, models=["model-b"]) as srv:
        model = make_model(srv)
        with pytest.raises(ModelRequestError) as info:
            model.generate(first_request())
    assert attempts_of(info.value) == [("model-a", "error", "http_404")]  # no retry, no fallback to model-b
    assert sleeps_of(model) == []
    assert "model-a" in str(info.value) and "404" in str(info.value)
    assert "doctor" in (info.value.hint or "")


def test_bad_request_is_not_retried(server: FakeOpenAIServer) -> None:
    model = make_model(server)
    bad = ModelRequest(system="", messages=[], tools=[TAP])  # no messages at all: the server says 400
    with pytest.raises(ModelRequestError) as info:
        model.generate(bad)
    assert attempts_of(info.value) == [("model-a", "error", "http_400")]


@pytest.mark.parametrize(("kind", "reason"), [("malformed_arguments", MALFORMED_ARGUMENTS), ("length", LENGTH)])
def test_unusable_replies_are_output_errors(server: FakeOpenAIServer, kind: str, reason: str) -> None:
    model = make_model(server)
    server.inject(kind)
    request = first_request()
    with pytest.raises(ModelOutputError) as info:
        model.generate(request)
    assert info.value.reason == reason and info.value.exit_code == 1
    assert "model-a" in str(info.value)
    # one attempt, billed, left to the operator turn to ask again (not retried here)
    attempts = info.value.attempts  # type: ignore[attr-defined]
    assert [(a.model, a.status, a.error_class) for a in attempts] == [("model-a", "error", reason)]
    assert attempts[0].usage.prompt_tokens > 0
    assert attempts[0].wire_hash == wire_hash(render_body(request, "", WireOptions()))
    assert len(server.requests) == 1 and sleeps_of(model) == []


# --- configuration --------------------------------------------------------------------------------


def test_with_chain_shares_the_client(server: FakeOpenAIServer) -> None:
    model = make_model(server, max_retries=1)
    lens = model.with_chain(["lens-model"], WireOptions(max_image_side=256))
    assert lens._client is model._client
    assert (lens.chain, lens.name, lens.base_url, lens.max_retries) == (["lens-model"], "lens-model",
                                                                         model.base_url, 1)
    assert lens.options == WireOptions(max_image_side=256) and model.options == WireOptions()
    assert model.chain == ["model-a", "model-b"] and "lens-model" in lens.label
    lens.generate(ModelRequest(system="Describe.", messages=[Message("user", [Part(text="look")])]))
    assert server.requests[-1].model == "lens-model"
    same = model.with_chain(["x"])
    assert same.options is model.options
    with pytest.raises(ModelConfigError):
        model.with_chain([" "])


def test_constructor_checks() -> None:
    with pytest.raises(ModelConfigError, match="empty"):
        OpenAIModel([], base_url="http://127.0.0.1:9/v1")
    with pytest.raises(ModelConfigError, match="not an http"):
        OpenAIModel(["m"], base_url="127.0.0.1:8000/v1")
    with pytest.raises(ModelConfigError, match="OPENAI_API_KEY"):
        OpenAIModel(["m"])  # no endpoint and no key for api.openai.com
    model = OpenAIModel(["m"], base_url="http://127.0.0.1:9/v1/")
    assert model.base_url == "http://127.0.0.1:9/v1" and model.label == "openai (m @ 127.0.0.1:9)"
