"""FakeGeminiServer on its own: malformed input, auth, routing, faults, usage estimate."""

from __future__ import annotations

import http.client
import json
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from artemis_cli.models.fakes.gemini import FakeGeminiServer, FakeReply, FakeRequest, estimate_text_tokens

#: The invented model names these tests call; the fake serves only what it is told to.
TEST_MODELS = ["gemini-a", "gemini-b", "gemini-x"]

PATH = "/v1beta/models/gemini-a:generateContent"
VALID = {"contents": [{"role": "user", "parts": [{"text": "hello"}]}]}


def echo(req: FakeRequest) -> FakeReply:
    return FakeReply.text(f"you said {req.last_user_text()}")


@pytest.fixture(scope="module")
def server() -> Iterator[FakeGeminiServer]:
    with FakeGeminiServer(echo, timeout_hold_s=0.5, models=TEST_MODELS) as srv:
        yield srv


def post(
    server: FakeGeminiServer,
    body: bytes | Any,
    *,
    path: str = PATH,
    headers: dict[str, str] | None = None,
) -> tuple[int, dict[str, Any]]:
    raw = body if isinstance(body, bytes) else json.dumps(body).encode()
    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=5)
    try:
        hdrs = {"Content-Type": "application/json", "x-goog-api-key": "k"} if headers is None else headers
        conn.request("POST", path, body=raw, headers=hdrs)
        resp = conn.getresponse()
        return resp.status, json.loads(resp.read())
    finally:
        conn.close()


@pytest.mark.parametrize(
    "body",
    [
        b"{not json",
        b"\xff\xfe\x00garbage",
        b"",
        [1, 2, 3],
        "a string",
        {},
        {"contents": "hello"},
        {"contents": []},
        {"contents": [42]},
        {"contents": [{"role": "system", "parts": [{"text": "x"}]}]},
        {"contents": [{"role": "user", "parts": "x"}]},
        {"contents": [{"role": "user", "parts": []}]},
        {"contents": [{"role": "user", "parts": [7]}]},
        {"contents": [{"role": "user", "parts": [{"text": 5}]}]},
        {"contents": [{"role": "user", "parts": [{"functionCall": "tap"}]}]},
        {"contents": [{"role": "model", "parts": [{"functionResponse": {"response": {}}}]}]},
        {"contents": VALID["contents"], "systemInstruction": "not an object"},
        {"contents": VALID["contents"], "tools": {"a": 1}},
    ],
)
def test_malformed_bodies_get_400_json_and_server_keeps_serving(server: FakeGeminiServer, body: Any) -> None:
    status, payload = post(server, body)
    assert status == 400
    assert payload["error"]["code"] == 400 and payload["error"]["status"] == "INVALID_ARGUMENT"
    status, payload = post(server, VALID)
    assert status == 200
    assert payload["candidates"][0]["content"]["parts"] == [{"text": "you said hello"}]


def test_response_shape_matches_service(server: FakeGeminiServer) -> None:
    status, payload = post(server, {**VALID, "systemInstruction": {"parts": [{"text": "be brief"}]}})
    assert status == 200
    assert set(payload) == {"candidates", "usageMetadata", "modelVersion"}
    cand = payload["candidates"][0]
    assert cand["finishReason"] == "STOP" and cand["index"] == 0 and cand["content"]["role"] == "model"
    usage = payload["usageMetadata"]
    assert usage["promptTokenCount"] == estimate_text_tokens("be brief") + estimate_text_tokens("hello")
    assert usage["candidatesTokenCount"] == estimate_text_tokens("you said hello")
    assert (
        usage["totalTokenCount"]
        == usage["promptTokenCount"] + usage["candidatesTokenCount"] + usage["thoughtsTokenCount"]
    )
    assert payload["modelVersion"] == "gemini-a"


def test_any_version_and_key_in_query(server: FakeGeminiServer) -> None:
    status, _ = post(server, VALID, path="/v1/models/gemini-x:generateContent?key=abc", headers={})
    assert status == 200
    assert server.requests[-1].version == "v1" and server.requests[-1].model == "gemini-x"


def test_missing_key_is_403(server: FakeGeminiServer) -> None:
    status, payload = post(server, VALID, headers={"Content-Type": "application/json"})
    assert status == 403 and payload["error"]["status"] == "PERMISSION_DENIED"


def test_unknown_path_is_404(server: FakeGeminiServer) -> None:
    status, payload = post(server, VALID, path="/v1beta/models/gemini-a:frobnicate")  # countTokens is served
    assert status == 404 and payload["error"]["status"] == "NOT_FOUND"


def test_broken_policy_is_500_not_a_crash(server: FakeGeminiServer) -> None:
    server.policy = lambda req: "not a reply"  # type: ignore[assignment,return-value]
    try:
        status, payload = post(server, VALID)
        assert status == 500 and payload["error"]["status"] == "INTERNAL"
    finally:
        server.policy = echo
    assert post(server, VALID)[0] == 200


def test_faults_consumed_in_order_and_per_model(server: FakeGeminiServer) -> None:
    server.inject("503", model="gemini-b")
    server.inject("429")
    server.inject("500")
    status, payload = post(server, VALID)  # gemini-a: skips the gemini-b fault, takes the 429
    assert status == 429 and payload["error"]["status"] == "RESOURCE_EXHAUSTED"
    assert payload["error"]["details"][0]["@type"] == "type.googleapis.com/google.rpc.RetryInfo"
    assert payload["error"]["details"][0]["retryDelay"] == "0.01s"
    assert post(server, VALID)[0] == 500
    assert post(server, VALID)[0] == 200
    assert post(server, VALID, path="/v1beta/models/gemini-b:generateContent")[0] == 503
    assert server.pending_faults() == 0
    with pytest.raises(ValueError):
        server.inject("418")


def test_timeout_fault_drops_the_connection(server: FakeGeminiServer) -> None:
    server.inject("timeout")
    with pytest.raises((http.client.RemoteDisconnected, ConnectionError)):
        post(server, VALID)
    assert server.requests[-1].fault == "timeout"
    assert post(server, VALID)[0] == 200


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3),
    max_leaves=10,
)
part_like = st.dictionaries(
    st.sampled_from(
        ["text", "functionCall", "functionResponse", "inlineData", "thought", "thoughtSignature"]
    ),
    json_values,
    max_size=3,
)
content_like = st.fixed_dictionaries(
    {"role": st.sampled_from(["user", "model", "x"]), "parts": st.lists(part_like, max_size=3) | json_values}
)


@settings(deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    body=st.fixed_dictionaries({"contents": st.lists(content_like, max_size=3) | json_values}) | json_values
)
def test_fuzzed_bodies_never_crash_the_server(server: FakeGeminiServer, body: Any) -> None:
    status, payload = post(server, body)
    assert status in (200, 400)
    assert ("candidates" in payload) if status == 200 else payload["error"]["code"] == 400


def test_keep_requests_bounds_memory() -> None:
    with FakeGeminiServer(echo, keep_requests=2, models=TEST_MODELS) as srv:
        for goal in ("one", "two", "three"):
            post(srv, {"contents": [{"role": "user", "parts": [{"text": goal}]}]})
        assert [r.last_user_text() for r in srv.requests] == ["two", "three"]


def get(server: FakeGeminiServer, path: str, key: str | None = "k") -> tuple[int, dict[str, Any]]:
    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=5)
    try:
        conn.request("GET", path, headers={"x-goog-api-key": key} if key else {})
        resp = conn.getresponse()
        return resp.status, json.loads(resp.read())
    finally:
        conn.close()


def test_models_get_answers_as_the_service_does(server: FakeGeminiServer) -> None:
    status, payload = get(server, "/v1beta/models/gemini-a")
    assert status == 200 and payload["name"] == "models/gemini-a"
    assert "generateContent" in payload["supportedGenerationMethods"]
    assert get(server, "/v1beta/models/gemini-a", key=None)[0] == 403  # no key: unregistered caller
    status, payload = get(server, "/v1beta/models/nosuch")
    assert status == 404 and payload["error"]["status"] == "NOT_FOUND"
    assert payload["error"]["message"].startswith("models/nosuch is not found for API version v1beta")


def test_a_model_the_fake_does_not_serve_gets_the_service_404() -> None:
    with FakeGeminiServer(echo, models=["gemini-a"]) as srv:
        assert post(srv, VALID)[0] == 200
        status, payload = post(srv, VALID, path="/v1beta/models/gemini-b:generateContent")
        assert status == 404 and "models/gemini-b is not found" in payload["error"]["message"]
        assert get(srv, "/v1beta/models/gemini-b")[0] == 404 and get(srv, "/v1beta/models/gemini-a")[0] == 200
    with FakeGeminiServer(echo) as srv:  # by default: the real names Artemis uses, as the service serves them
        assert post(srv, VALID, path="/v1beta/models/nosuch:generateContent")[0] == 404
        assert get(srv, "/v1beta/models/gemini-2.5-flsh")[0] == 404  # a typo is a 404, as on the service
        assert get(srv, "/v1beta/models/gemini-2.5-flash")[0] == 200
