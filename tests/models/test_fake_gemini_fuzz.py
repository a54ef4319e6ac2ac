"""Fuzz of FakeGeminiServer's request parsing (SPEC §8), over real HTTP on loopback.

Structured garbage (valid JSON of wrong shapes, odd/huge base64 inline data, missing fields,
wrong types in parts, unknown part kinds), non-UTF-8 bodies, bad Content-Length and other bad
framing, garbage request lines.  Every answer is either a real generateContent answer or a
4xx/5xx JSON error body whose ``error.code`` is the HTTP status -- never a dropped connection
or a traceback in a server thread (``server.errors``) -- and a good request still works after.

Example counts come from the hypothesis profile (``--long`` for many more).
"""

from __future__ import annotations

import base64
import http.client
import json
import socket
import struct
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from artemis_cli.models.fakes.gemini import MAX_BODY_BYTES, FakeGeminiServer, FakeReply, FakeRequest

#: The invented model names these tests call; the fake serves only what it is told to.
TEST_MODELS = ["gemini-a"]

PATH = "/v1beta/models/gemini-a:generateContent"
VALID = {"contents": [{"role": "user", "parts": [{"text": "hello"}]}]}
FUZZ = settings(suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow,
                                       HealthCheck.data_too_large])


def echo(req: FakeRequest) -> FakeReply:
    if "call" in req.last_user_text():
        return FakeReply.call("tap", {"x": 1})
    return FakeReply.text(f"you said {req.last_user_text()[:20]}")


@pytest.fixture(scope="module")
def server() -> Iterator[FakeGeminiServer]:
    with FakeGeminiServer(echo, timeout_hold_s=0.5, keep_requests=5, models=TEST_MODELS) as srv:
        yield srv


# --- answers ---------------------------------------------------------------------------------


@dataclass
class Answer:
    status: int
    headers: dict[str, str]
    body: bytes

    def check(self) -> dict[str, Any]:
        """A generateContent answer, or a JSON error body that names the same code."""
        assert self.headers.get("content-type", "").startswith("application/json"), self
        payload = json.loads(self.body)
        assert isinstance(payload, dict)
        if self.status == 200:
            assert "candidates" in payload or "promptFeedback" in payload
            usage = payload["usageMetadata"]
            assert usage["promptTokenCount"] >= 0 and usage["totalTokenCount"] >= usage["promptTokenCount"]
        else:
            assert 400 <= self.status < 600, self
            error = payload["error"]
            assert error["code"] == self.status
            assert isinstance(error["message"], str) and isinstance(error["status"], str) and error["status"]
        return payload


def parse_answers(raw: bytes) -> list[Answer]:
    """Split a byte stream of HTTP/1.1 responses (each with Content-Length)."""
    answers: list[Answer] = []
    pos = 0
    while pos < len(raw):
        end = raw.find(b"\r\n\r\n", pos)
        assert end >= 0, f"torn response head: {raw[pos:pos + 200]!r}"
        lines = raw[pos:end].decode("iso-8859-1").split("\r\n")
        version, code, _ = [*lines[0].split(" ", 2), ""][:3]
        assert version == "HTTP/1.1", lines[0]
        headers = {k.strip().lower(): v.strip() for k, v in (line.split(":", 1) for line in lines[1:])}
        length = int(headers["content-length"])
        body = raw[end + 4 : end + 4 + length]
        assert len(body) == length, "torn response body"
        answers.append(Answer(int(code), headers, body))
        pos = end + 4 + length
    return answers


def exchange(server: FakeGeminiServer, raw: bytes, *, timeout: float = 10.0) -> list[Answer]:
    """Send raw bytes, half-close, read until the server closes; every answer is checked."""
    with socket.create_connection(("127.0.0.1", server.port), timeout=timeout) as sock:
        try:
            sock.sendall(raw)
            sock.shutdown(socket.SHUT_WR)
        except OSError:  # the server may answer and close before reading everything
            pass
        out = bytearray()
        while True:
            try:
                chunk = sock.recv(65536)
            except ConnectionResetError:
                break
            except TimeoutError:
                raise AssertionError(f"no answer and no close; got {bytes(out[:200])!r}") from None
            if not chunk:
                break
            out += chunk
    answers = parse_answers(bytes(out))
    for answer in answers:
        answer.check()
    return answers


def request(body: bytes, *, headers: dict[str, str] | None = None, length: str | None = None,
            path: str = PATH) -> bytes:
    hdrs = {"Host": "127.0.0.1", "Content-Type": "application/json", "x-goog-api-key": "k"}
    hdrs["Content-Length"] = str(len(body)) if length is None else length
    hdrs.update(headers or {})
    head = f"POST {path} HTTP/1.1\r\n" + "".join(f"{k}: {v}\r\n" for k, v in hdrs.items() if v is not None)
    return head.encode("utf-8") + b"\r\n" + body


def post_json(server: FakeGeminiServer, body: Any) -> Answer:
    raw = body if isinstance(body, bytes) else json.dumps(body, allow_nan=True).encode()
    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=10)
    try:
        conn.request("POST", PATH, body=raw, headers={"Content-Type": "application/json", "x-goog-api-key": "k"})
        resp = conn.getresponse()
        answer = Answer(resp.status, {k.lower(): v for k, v in resp.getheaders()}, resp.read())
    finally:
        conn.close()
    answer.check()
    return answer


def assert_still_serving(server: FakeGeminiServer) -> None:
    assert not server.errors, server.errors
    answer = post_json(server, VALID)
    assert answer.status == 200
    assert json.loads(answer.body)["candidates"][0]["content"]["parts"] == [{"text": "you said hello"}]


# --- structured garbage ----------------------------------------------------------------------


def _png_b64(width: int, height: int, tail: bytes = b"") -> str:
    header = b"\x89PNG\r\n\x1a\n" + struct.pack(">I", 13) + b"IHDR" + struct.pack(">II", width, height)
    return base64.b64encode(header + b"\x08\x06\x00\x00\x00" + tail).decode()


json_scalars = st.one_of(
    st.none(), st.booleans(), st.integers(-(2**70), 2**70), st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=12),
)
json_values = st.recursive(
    json_scalars,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3),
    max_leaves=8,
)
b64_data = st.one_of(
    st.binary(max_size=64).map(lambda b: base64.b64encode(b).decode()),
    st.binary(max_size=64).map(lambda b: base64.urlsafe_b64encode(b).decode().rstrip("=")),
    st.sampled_from(["", "=", "====", "!!!!", "a", "abc", "\u00e9\u00e9", "AAAA" * 3, "-_-_", " QUJD "]),
    st.tuples(st.integers(0, 2**32 - 1), st.integers(0, 2**32 - 1)).map(lambda wh: _png_b64(*wh)),
    st.integers(1, 300_000).map(lambda n: _png_b64(1080, 2400, b"\0" * n)),  # up to ~400 KB of base64
    json_scalars,
)
inline = st.fixed_dictionaries({}, optional={"mimeType": st.sampled_from(["image/png", "", "x/y"]) | json_scalars,
                                             "data": b64_data}) | json_values
function_call = st.one_of(
    st.fixed_dictionaries({"name": st.text(max_size=10)}, optional={"args": json_values, "id": json_values}),
    st.fixed_dictionaries({}, optional={"args": json_values}),  # missing name
    st.fixed_dictionaries({"name": json_scalars}),
    json_values,
)
part = st.one_of(
    st.fixed_dictionaries({"text": st.text(max_size=30) | json_values}, optional={"thought": json_scalars}),
    st.fixed_dictionaries({"inlineData": inline}),
    st.fixed_dictionaries({"inline_data": inline}),
    st.fixed_dictionaries({"functionCall": function_call},
                          optional={"thoughtSignature": b64_data, "thought_signature": b64_data}),
    st.fixed_dictionaries({"functionResponse": function_call}),
    st.dictionaries(st.sampled_from(["videoMetadata", "executableCode", "fileData", "codeExecutionResult",
                                     "unknownKind", ""]), json_values, min_size=1, max_size=2),
    json_values,
)
content = st.one_of(
    st.fixed_dictionaries({"parts": st.lists(part, min_size=1, max_size=3)},
                          optional={"role": st.sampled_from(["user", "model", "system", "", "USER"]) | json_scalars}),
    st.fixed_dictionaries({}, optional={"role": st.just("user"), "parts": json_values}),
    json_values,
)
system = st.one_of(st.fixed_dictionaries({"parts": st.lists(part, max_size=2) | json_values}), json_values)
bodies = st.one_of(
    st.fixed_dictionaries(
        {"contents": st.lists(content, min_size=1, max_size=4)},
        optional={"systemInstruction": system, "system_instruction": system,
                  "tools": st.lists(json_values, max_size=2) | json_values,
                  "generationConfig": json_values, "toolConfig": json_values, "cachedContent": json_values},
    ),
    st.fixed_dictionaries({}, optional={"systemInstruction": system, "tools": json_values}),  # no contents
    st.dictionaries(st.text(max_size=10), json_values, max_size=4),
    json_values,
)


@FUZZ
@given(bodies)
@example({"contents": [{"role": "user", "parts": [{"inlineData": {"data": _png_b64(2**32 - 1, 2**32 - 1)}}]}]})
@example({"contents": [{"role": "model", "parts": [{"functionCall": {"name": "tap"}, "thoughtSignature": "!!"}]}]})
@example({"contents": [{"role": "user", "parts": [{"text": "x"}]}], "systemInstruction": {"parts": "x"}})
def test_structured_garbage_gets_a_json_answer(server: FakeGeminiServer, body: Any) -> None:
    answer = post_json(server, body)
    assert answer.status in (200, 400), answer
    assert_still_serving(server)


@pytest.mark.parametrize("raw", [
    b"[" * 100_000 + b"]" * 100_000,  # nesting deeper than the JSON decoder's recursion limit
    b'{"contents": [{"parts": [{"text": "x", "n": ' + b"9" * 5000 + b"}]}]}",  # int over the digit limit
    b'{"contents": [{"parts": [{"text": "x", "n": NaN, "m": -Infinity}]}]}',
    b'{"contents": [{"parts": [{"text": "\\ud800"}]}]}',  # lone surrogate escape
    b"\xff\xfe{\x00}\x00",  # UTF-16 with BOM
    b'{"contents": [{"parts": [{"text": "caf\xe9"}]}]}',  # latin-1, not UTF-8
    b"",
])
def test_odd_json_documents_get_a_json_answer(server: FakeGeminiServer, raw: bytes) -> None:
    answer = post_json(server, raw)
    assert answer.status in (200, 400), answer
    assert_still_serving(server)


def test_huge_inline_image_is_counted_not_choked_on(server: FakeGeminiServer) -> None:
    data = _png_b64(100_000, 100_000, b"\0" * 3_000_000)  # ~4 MB of base64
    answer = post_json(server, {"contents": [{"role": "user", "parts": [{"text": "hi"}, {"inlineData": {
        "mimeType": "image/png", "data": data}}]}]})
    assert answer.status == 200
    assert json.loads(answer.body)["usageMetadata"]["promptTokenCount"] == 1 + 258 * 131 * 131
    assert_still_serving(server)


# --- framing ---------------------------------------------------------------------------------

VALID_RAW = json.dumps(VALID).encode()
lengths = st.one_of(
    st.sampled_from(["ok", "missing", "", "-1", "+5", "1_0", "abc", "0x10", " 7 ", "1e3", "١٢",
                     "99999999999999999999999", str(MAX_BODY_BYTES + 1), "ok,ok", "conflict"]),
    st.integers(0, 200).map(str),
)
raw_bodies = st.one_of(st.just(VALID_RAW), st.binary(max_size=120),
                       bodies.map(lambda b: json.dumps(b).encode()))


@FUZZ
@given(raw_bodies, lengths, st.sampled_from([None, "chunked", "gzip", "identity"]), st.booleans())
@example(VALID_RAW, "5", None, True)  # short Content-Length: the rest must not become a 2nd request
@example(VALID_RAW, "1000", None, False)  # longer than the body: incomplete, not a 200
@example(VALID_RAW, str(len(VALID_RAW) + 1), None, True)  # eats a byte of the next request: its 501 is fine
@example(VALID_RAW, str(MAX_BODY_BYTES + 1), None, False)
@example(VALID_RAW, "missing", "chunked", False)
def test_bad_framing_gets_json_errors_and_a_closed_connection(
    server: FakeGeminiServer, body: bytes, length: str, encoding: str | None, then_valid: bool
) -> None:
    headers: dict[str, str] = {}
    if encoding is not None:
        headers["Transfer-Encoding"] = encoding
    if length == "ok":
        raw = request(body, headers=headers)
    elif length == "missing":
        raw = request(body, headers={**headers, "Content-Length": None})  # type: ignore[dict-item]
    elif length in ("ok,ok", "conflict"):
        second = str(len(body)) if length == "ok,ok" else str(len(body) + 1)
        raw = request(body, headers=headers).replace(b"\r\n\r\n", f"\r\nContent-Length: {second}\r\n\r\n".encode(), 1)
    else:
        raw = request(body, headers=headers, length=length)
    if then_valid:  # a pipelined good request on the same connection
        raw += request(VALID_RAW)
    answers = exchange(server, raw)
    assert answers, "every request gets an answer (never a silent drop)"
    first = answers[0]
    value = length.strip()
    available = len(body) + (len(request(VALID_RAW)) if then_valid else 0)
    cannot_delimit = (
        encoding is not None  # no chunked (or other) transfer codings
        or length in ("conflict", "", "-1", "+5", "1_0", "abc", "0x10", "1e3", "١٢")
        or (value.isascii() and value.isdigit() and int(value) > available)  # incomplete / too large
    )
    if cannot_delimit:  # answered with an error, and the rest of the stream is not trusted
        assert first.status >= 400, first
        assert len(answers) == 1 and first.headers.get("connection") == "close", answers
    elif then_valid and length in ("ok", "ok,ok") and first.status < 500:
        assert len(answers) == 2 and answers[1].status == 200  # keep-alive still works
    assert_still_serving(server)


@FUZZ
@given(st.binary(max_size=200))
@example(b"PUT / HTTP/1.1\r\n\r\n")
@example(b"\xff\xfe garbage\r\n\r\n")
@example(b"GET /\r\n\r\n")
@example(b"\x85")  # U+0085 is whitespace: a blank request line, closed without an answer like http.server
@example(b"POST " + PATH.encode() + b" HTTP/1.1\r\n" + b"X: y\r\n" * 200 + b"\r\n")  # too many headers
@example(b"POST /" + b"a" * 70_000 + b" HTTP/1.1\r\n\r\n")  # request line too long
def test_garbage_request_lines_get_json_errors(server: FakeGeminiServer, raw: bytes) -> None:
    answers = exchange(server, raw)
    request_line = raw.split(b"\n", 1)[0].decode("iso-8859-1")
    if request_line.split() and not answers:  # only a blank first line may go unanswered
        pytest.fail(f"no answer to {raw[:60]!r}")
    for answer in answers:
        assert answer.status in (400, 404, 403, 411, 413, 414, 431, 501, 505), answer
    assert_still_serving(server)


def test_a_client_that_hangs_up_mid_request_is_not_an_error(server: FakeGeminiServer) -> None:
    for cut in (10, 60, len(request(VALID_RAW)) - 3):
        sock = socket.create_connection(("127.0.0.1", server.port), timeout=5)
        sock.sendall(request(VALID_RAW)[:cut])
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        sock.close()  # RST
    assert_still_serving(server)
