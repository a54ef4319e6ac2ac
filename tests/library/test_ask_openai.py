"""The screen asks through the real openai SDK against FakeOpenAIServer, via the project's
OpenAI-compatible provider, on the same real sim screen as tests/library/test_ask.py."""

from __future__ import annotations

import base64
from collections.abc import Iterator
from typing import Any

import pytest
from ask_support import SIDE, Calls, NoteRow, Replies, count_ids, fenced_lines, index_of, probe_notes, reply

from artemis_cli.library.ask import Answer, AnswerError, Located, Verdict, ask_check, ask_locate, ask_query
from artemis_cli.library.ask_prompts import SCREENSHOT_LABEL_MARKS, SYSTEM_PROMPTS
from artemis_cli.models.fakes.openai import FakeOpenAIReply, FakeOpenAIRequest, FakeOpenAIServer
from artemis_cli.models.openai_provider import OpenAIModel
from artemis_cli.operators.observe import Observation
from artemis_cli.perception.marks import draw_marks, marks_of

MODEL = "qwen2.5-vl-7b"

@pytest.fixture(scope="module")
def obs() -> Observation:
    return probe_notes()


@pytest.fixture
def script() -> Replies:
    return Replies(reply(answer=0, reason="unset"))


@pytest.fixture
def server(script: Replies, monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeOpenAIServer]:
    for var in ("OPENAI_API_KEY", "ARTEMIS_OPENAI_BASE_URL", "ARTEMIS_OPENAI_TIMEOUT_S"):
        monkeypatch.delenv(var, raising=False)

    def policy(req: FakeOpenAIRequest) -> FakeOpenAIReply:
        return FakeOpenAIReply.text(script.next(first_text(req)))

    with FakeOpenAIServer(policy) as srv:
        yield srv
    assert srv.errors == []


@pytest.fixture
def model(server: FakeOpenAIServer) -> OpenAIModel:
    return OpenAIModel([MODEL], base_url=server.base_url, max_retries=0, sleep=lambda s: None, timeout_s=10)


def _user_content(req: FakeOpenAIRequest) -> list[dict[str, Any]]:
    user = next(m for m in req.messages if m["role"] == "user")
    assert isinstance(user["content"], list)
    return list(user["content"])


def first_text(req: FakeOpenAIRequest) -> str:
    return str(_user_content(req)[0]["text"])


def images(req: FakeOpenAIRequest) -> list[bytes]:
    prefix = "data:image/png;base64,"
    urls = [p["image_url"]["url"] for p in _user_content(req) if p["type"] == "image_url"]
    assert all(u.startswith(prefix) for u in urls)
    return [base64.b64decode(u[len(prefix):]) for u in urls]


def test_query_int_and_pydantic_over_the_openai_wire(script: Replies, server: FakeOpenAIServer, model: OpenAIModel,
                                                     obs: Observation) -> None:
    notes = [{"title": "Groceries", "summary": "Milk, eggs, bread, coffee"}]
    script.replies = [lambda text: reply(answer=count_ids(text, "note_item"), reason="four note rows"),
                      reply(answer=notes, reason="the first row")]
    calls = Calls()
    assert ask_query(model, obs, "How many notes are listed?", int, record_call=calls, max_image_side=SIDE) == Answer(
        4, "four note rows", MODEL)
    assert ask_query(model, obs, "The first note", list[NoteRow]).value == [NoteRow(**notes[0])]
    assert calls.seen == [("query", True, None)]
    req = server.requests[0]
    assert req.messages[0] == {"role": "system", "content": SYSTEM_PROMPTS["query"]} and req.tools == []
    assert [p["type"] for p in _user_content(req)] == ["text", "text", "image_url"]
    assert _user_content(req)[1]["text"] == SCREENSHOT_LABEL_MARKS
    assert images(req) == [draw_marks(obs.png, SIDE, marks_of(obs.elements))]


def test_a_wrong_check_fails_with_the_models_reason(script: Replies, server: FakeOpenAIServer, model: OpenAIModel,
                                                    obs: Observation) -> None:
    script.replies = [reply(passed=False, reason="no note is titled Shopping")]
    assert ask_check(model, obs, "A note titled Shopping is listed") == Verdict(
        False, "no note is titled Shopping", MODEL)
    assert server.requests[0].messages[0]["content"] == SYSTEM_PROMPTS["check"]


def test_malformed_then_good_then_two_malformed(script: Replies, server: FakeOpenAIServer, model: OpenAIModel,
                                                obs: Observation) -> None:
    script.replies = ["```json\n{\"answer\": \"yes\"", reply(answer=True, reason="the Delete all button")]
    calls = Calls()
    assert ask_query(model, obs, "Is there a Delete all button?", bool, record_call=calls).value is True
    assert calls.seen == [("query", True, None)] * 2
    retry = server.requests[1]
    assert [m["role"] for m in retry.messages] == ["system", "user", "assistant", "user"]
    assert retry.last_user_text().startswith("Your reply could not be used: the reply is not valid JSON")

    script.replies = [reply(answer="yes", reason="x")]
    with pytest.raises(AnswerError) as info:
        ask_query(model, obs, "Is there a Delete all button?", bool, record_call=calls)
    assert len(server.requests) == 4 and len(calls.seen) == 4
    assert str(info.value).endswith('last error: "answer": Input should be a valid boolean (got "yes")')


def test_locate_and_locate_null(script: Replies, server: FakeOpenAIServer, model: OpenAIModel,
                                obs: Observation) -> None:
    script.replies = [lambda text: reply(index=index_of(text, '"Delete all"'), reason="the app bar button"),
                      reply(index=None, reason="there is no search field")]
    assert ask_locate(model, obs, "the button that deletes every note") == Located(1, "the app bar button", MODEL)
    with pytest.raises(AnswerError, match="no element on the screen matches: there is no search field"):
        ask_locate(model, obs, "the search field")


def test_hostile_screen_text_stays_inside_the_fence(script: Replies, server: FakeOpenAIServer, model: OpenAIModel,
                                                    obs: Observation) -> None:
    script.replies = [reply(passed=False, reason="no")]
    ask_check(model, obs, "The notes are listed")
    text = first_text(server.requests[0])
    inside = fenced_lines(text)
    assert not any("User instruction" in line for line in text.split("\n") if line not in inside)
    assert sum("User instruction" in line for line in inside) == 1
