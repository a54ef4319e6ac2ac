"""Model faults (issue 11): what the fake server answers, as the service does, and how GeminiModel
classifies it through the real google-genai SDK — transient (``ModelOutputError``), refusal
(``ModelRefused``) or a rejected key (``ModelAuthError``, a usage error)."""

from __future__ import annotations

import http.client
import json
from collections.abc import Iterator
from typing import Any

import pytest

from artemis_cli.errors import ModelAuthError, ModelOutputError, ModelRefused, UsageError
from artemis_cli.models.base import Message, ModelRequest, Part, ToolDecl
from artemis_cli.models.fakes.gemini import (
    INVALID_KEY_MESSAGE,
    FakeGeminiServer,
    FakeReply,
    FakeRequest,
)
from artemis_cli.models.gemini import GeminiModel

#: The invented model names these tests call; the fake serves only what it is told to.
TEST_MODELS = ["gemini-a", "gemini-b"]

KEY = "SENTINEL-KEY-51d2"
TAP = ToolDecl(
    "tap",
    "Tap the element with the given index.",
    {"type": "object", "properties": {"index": {"type": "integer"}}, "required": ["index"]},
)
PATH = "/v1beta/models/gemini-a:generateContent"
CONTENTS: list[dict[str, Any]] = [{"role": "user", "parts": [{"text": "Open Settings. " * 50}]}]
TOOLS = [{"functionDeclarations": [{"name": "tap", "description": "Tap.", "parameters": {"type": "object"}}]}]
BODY = {"contents": CONTENTS, "tools": TOOLS}


def tap(req: FakeRequest) -> FakeReply:
    return FakeReply.call("tap", {"index": 3}, thought_text="Settings is at index 3.")


@pytest.fixture
def server() -> Iterator[FakeGeminiServer]:
    with FakeGeminiServer(tap, models=TEST_MODELS) as srv:
        yield srv


def post(server: FakeGeminiServer, body: Any = BODY, key: str = "k") -> tuple[int, dict[str, Any]]:
    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=5)
    try:
        conn.request("POST", PATH, body=json.dumps(body).encode(),
                     headers={"Content-Type": "application/json", "x-goog-api-key": key})
        resp = conn.getresponse()
        return resp.status, json.loads(resp.read())
    finally:
        conn.close()


def make_model(server: FakeGeminiServer, chain: list[str] | None = None) -> GeminiModel:
    return GeminiModel(chain or ["gemini-a", "gemini-b"], api_key=KEY, base_url=server.base_url, timeout_s=5,
                       max_retries=2, sleep=lambda s: None)


def request() -> ModelRequest:
    return ModelRequest(system="You operate a phone.", messages=[Message("user", [Part(text="Open Settings")])],
                        tools=[TAP])


# --- the fake server's answers, as the service shapes them ------------------------------------


def test_malformed_function_call_has_no_content_a_finish_message_and_billed_prompt(server: FakeGeminiServer) -> None:
    server.inject("malformed_function_call")
    status, payload = post(server)
    assert status == 200
    (candidate,) = payload["candidates"]
    assert candidate["finishReason"] == "MALFORMED_FUNCTION_CALL"
    assert "content" not in candidate
    assert candidate["finishMessage"].startswith("Malformed function call: ")
    assert "default_api.tap(" in candidate["finishMessage"]  # the garbled call names a declared tool
    usage = payload["usageMetadata"]
    assert usage["promptTokenCount"] > 100 and usage["totalTokenCount"] == usage["promptTokenCount"]
    assert "candidatesTokenCount" not in usage
    assert server.requests[-1].fault == "malformed_function_call"
    assert post(server)[1]["candidates"][0]["finishReason"] == "STOP"  # consumed once


def test_empty_candidate_is_content_without_parts(server: FakeGeminiServer) -> None:
    server.inject("empty_candidate")
    status, payload = post(server)
    (candidate,) = payload["candidates"]
    assert status == 200 and candidate["finishReason"] == "STOP"
    assert candidate["content"] == {"role": "model"}
    assert payload["usageMetadata"]["promptTokenCount"] > 0


def test_safety_stop_has_ratings_and_no_content(server: FakeGeminiServer) -> None:
    server.inject("safety")
    status, payload = post(server)
    (candidate,) = payload["candidates"]
    assert status == 200 and candidate["finishReason"] == "SAFETY" and "content" not in candidate
    blocked = [r["category"] for r in candidate["safetyRatings"] if r.get("blocked")]
    assert blocked == ["HARM_CATEGORY_DANGEROUS_CONTENT"]
    assert payload["usageMetadata"]["promptTokenCount"] > 0


def test_blocked_prompt_has_no_candidates_and_prompt_feedback(server: FakeGeminiServer) -> None:
    server.inject("blocked_prompt")
    status, payload = post(server)
    assert status == 200 and "candidates" not in payload
    assert payload["promptFeedback"]["blockReason"] == "SAFETY"
    assert payload["promptFeedback"]["safetyRatings"]
    assert payload["usageMetadata"]["promptTokenCount"] > 0


def test_invalid_key_is_the_services_400_with_error_info(server: FakeGeminiServer) -> None:
    server.inject("invalid_key")
    status, payload = post(server)
    assert status == 400
    error = payload["error"]
    assert (error["code"], error["status"], error["message"]) == (400, "INVALID_ARGUMENT", INVALID_KEY_MESSAGE)
    info, localized = error["details"]
    assert info == {
        "@type": "type.googleapis.com/google.rpc.ErrorInfo",
        "reason": "API_KEY_INVALID",
        "domain": "googleapis.com",
        "metadata": {"service": "generativelanguage.googleapis.com"},
    }
    assert localized["@type"] == "type.googleapis.com/google.rpc.LocalizedMessage"
    assert localized["message"] == INVALID_KEY_MESSAGE


def test_a_wrong_expected_key_answers_the_same_body() -> None:
    with FakeGeminiServer(tap, expected_api_key="right", models=TEST_MODELS) as srv:
        status, payload = post(srv, key="wrong")
    assert status == 400 and payload["error"]["details"][0]["reason"] == "API_KEY_INVALID"


def test_model_faults_still_check_thought_signatures(server: FakeGeminiServer) -> None:
    """The service validates the request before it generates anything."""
    body = {"contents": [*CONTENTS, {"role": "model", "parts": [{"functionCall": {"name": "tap", "args": {}}}]}],
            "tools": TOOLS}
    server.inject("malformed_function_call")
    assert post(server, body)[0] == 400


def test_faults_can_target_requests_by_predicate(server: FakeGeminiServer) -> None:
    server.inject("safety", match=lambda r: not r.tools)
    assert post(server)[1]["candidates"][0]["finishReason"] == "STOP"  # declares tools: not matched
    assert post(server, {"contents": CONTENTS})[1]["candidates"][0]["finishReason"] == "SAFETY"


# --- GeminiModel's classification ---------------------------------------------------------


@pytest.mark.parametrize(
    ("kind", "reason"),
    [("malformed_function_call", "MALFORMED_FUNCTION_CALL"), ("empty_candidate", "EMPTY_CANDIDATE")],
)
def test_garbled_or_empty_replies_are_transient_output_errors(server: FakeGeminiServer, kind: str, reason: str) -> None:
    server.inject(kind)
    with pytest.raises(ModelOutputError) as info:
        make_model(server).generate(request())
    exc = info.value
    assert exc.reason == reason and exc.exit_code == 1
    assert "gemini-a" in str(exc)
    (attempt,) = exc.attempts  # type: ignore[attr-defined]
    assert (attempt.model, attempt.status, attempt.error_class) == ("gemini-a", "error", reason)
    assert attempt.usage.prompt_tokens > 0  # billed: recorded with its usage
    assert len(server.requests) == 1  # the caller decides about retries (the operator turn does)


def test_malformed_finish_is_authoritative_even_with_content(server: FakeGeminiServer) -> None:
    """The service marks the output broken: a call or text that came with it is not used."""
    server.policy = lambda req: FakeReply(parts=[{"functionCall": {"name": "tap", "args": {"index": 1}}}],
                                          finish_reason="MALFORMED_FUNCTION_CALL",
                                          finish_message="Malformed function call: tap(index=1")
    with pytest.raises(ModelOutputError) as info:
        make_model(server).generate(request())
    assert info.value.reason == "MALFORMED_FUNCTION_CALL"
    # (google-genai drops ``finishMessage`` when parsing Gemini API answers, so it is not
    # asserted here: googleapis/python-genai#1789)


def test_empty_text_parts_are_no_content(server: FakeGeminiServer) -> None:
    server.policy = lambda req: FakeReply(parts=[{"text": ""}])
    with pytest.raises(ModelOutputError) as info:
        make_model(server).generate(request())
    assert info.value.reason == "EMPTY_CANDIDATE"


def test_another_finish_reason_without_content_is_transient(server: FakeGeminiServer) -> None:
    server.policy = lambda req: FakeReply(parts=[], finish_reason="OTHER")
    with pytest.raises(ModelOutputError) as info:
        make_model(server).generate(request())
    assert info.value.reason == "OTHER"


@pytest.mark.parametrize(
    ("kind", "words"),
    [("safety", ["refused", "finish reason SAFETY", "HARM_CATEGORY_DANGEROUS_CONTENT"]),
     ("blocked_prompt", ["refused", "prompt was blocked", "block reason SAFETY"])],
)
def test_refusals_are_named_and_never_retried(server: FakeGeminiServer, kind: str, words: list[str]) -> None:
    server.inject(kind)
    with pytest.raises(ModelRefused) as info:
        make_model(server).generate(request())
    assert all(w in str(info.value) for w in words), str(info.value)
    assert info.value.exit_code == 1
    (attempt,) = info.value.attempts  # type: ignore[attr-defined]
    assert attempt.status == "error" and attempt.error_class in ("SAFETY", "BLOCKED_SAFETY")
    assert len(server.requests) == 1


def test_rejected_key_is_a_usage_error_with_the_fix_and_no_fallback(server: FakeGeminiServer) -> None:
    server.inject("invalid_key", count=5)
    with pytest.raises(ModelAuthError) as info:
        make_model(server).generate(request())
    exc = info.value
    assert isinstance(exc, UsageError) and exc.exit_code == 2
    assert "API key not valid" in str(exc)
    assert "GEMINI_API_KEY" in (exc.hint or "")
    assert KEY not in str(exc) and KEY not in (exc.hint or "")
    assert [a.error_class for a in exc.attempts] == ["api_key_rejected"]  # type: ignore[attr-defined]
    assert [r.model for r in server.requests] == ["gemini-a"]  # not retried, not into gemini-b


def test_the_hint_names_the_variable_the_key_came_from(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("GEMINI_API_KEY", raising=False)
    monkeypatch.setenv("GOOGLE_API_KEY", KEY)
    with FakeGeminiServer(tap, expected_api_key="other", models=TEST_MODELS) as srv:
        model = GeminiModel(["gemini-a"], base_url=srv.base_url, timeout_s=5)
        with pytest.raises(ModelAuthError) as info:
            model.generate(request())
    assert "GOOGLE_API_KEY" in (info.value.hint or "")
