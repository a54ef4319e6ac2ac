"""``phone.query``, ``phone.check`` and ``phone.tap(ai=…)`` through the real google-genai and openai
SDKs against the fake servers: answers are typed, a wrong check fails with the model's reason,
every ask is metered in the session, and none is ever cached."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from ask_support import index_of

from artemis_cli import CheckFailed, Phone, StepFailed, UsageError
from artemis_cli.engine.db import DataEngine
from artemis_cli.models.fakes.gemini import FakeGeminiServer, FakeReply, FakeRequest
from artemis_cli.models.fakes.openai import FakeOpenAIReply, FakeOpenAIRequest, FakeOpenAIServer
from artemis_cli.models.gemini import GeminiModel
from artemis_cli.models.openai_provider import OpenAIModel

#: What the fake "model" answers, from the ask's request text (the first user text).
Answer = Callable[[str], dict[str, Any]]


def answers(text: str) -> dict[str, Any]:
    """A model that reads the Contacts list it was sent: counts rows, judges two statements, finds the FAB."""
    if text.startswith("# QUESTION") and "How many contacts" in text:
        return {"answer": text.count(" id=contact_row "), "reason": "one row per contact in the list"}
    if text.startswith("# QUESTION") and "first contact" in text:
        return {"answer": {"name": "Alice Anderson", "initial": "A"}, "reason": "the list's first row"}
    if text.startswith("# STATEMENT") and "Alice Anderson" in text.split("\n")[1]:
        return {"passed": True, "reason": "Alice Anderson is the first row"}
    if text.startswith("# STATEMENT"):
        return {"passed": False, "reason": "the list shows no contact named Zed Zulu; it starts at Alice Anderson"}
    return {"index": index_of(text, '"Create contact"'), "reason": "the round button at the bottom right"}


@contextmanager
def gemini() -> Iterator[tuple[Any, list[str]]]:
    roles: list[str] = []

    def policy(req: FakeRequest) -> FakeReply:
        text = req.last_user_text()
        roles.append("ask")
        return FakeReply(parts=[{"text": json.dumps(answers(text))}])

    with FakeGeminiServer(policy) as srv:
        yield GeminiModel(["gemini-2.5-flash"], api_key="k", base_url=srv.base_url, sleep=lambda s: None,
                          backoff_s=0.0), roles


@contextmanager
def openai() -> Iterator[tuple[Any, list[str]]]:
    roles: list[str] = []

    def policy(req: FakeOpenAIRequest) -> FakeOpenAIReply:
        user = next(m for m in req.messages if m["role"] == "user")
        roles.append("ask")
        return FakeOpenAIReply.text(json.dumps(answers(str(user["content"][0]["text"]))))

    with FakeOpenAIServer(policy) as srv:
        yield OpenAIModel(["qwen2.5-vl-7b"], base_url=srv.base_url, max_retries=0, sleep=lambda s: None,
                          timeout_s=10), roles


SERVERS = {"gemini": gemini, "openai": openai}


@pytest.mark.parametrize("provider", sorted(SERVERS))
def test_query_check_and_tap_ai_through_the_sdk(provider: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from pydantic import BaseModel

    class Contact(BaseModel):
        name: str
        initial: str

    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with SERVERS[provider]() as (model, sent), Phone.open("sim", data_dir=tmp_path, model=model, cache="asks",
                                                          real_time=False) as phone:
        phone.launch("Contacts")
        assert phone.query("How many contacts are listed?", int) == 11
        assert phone.query("Who is the first contact?", Contact) == Contact(name="Alice Anderson", initial="A")
        assert "first row" in phone.check("Alice Anderson is listed")
        with pytest.raises(CheckFailed) as err:
            phone.check("Zed Zulu is listed")
        assert isinstance(err.value, AssertionError)
        assert "no contact named Zed Zulu" in str(err.value) and '"Zed Zulu is listed"' in str(err.value)
        tapped = phone.tap(ai="the button that adds a contact")
        assert (tapped.action, tapped.target) == ("tap", "Create contact") and phone.sees("Save")
        asked = len(sent)
        stats = phone.stats()
    assert asked == 5 and stats.model_calls == 5 and stats.steps == 2
    with DataEngine.open_for_reading(tmp_path) as engine:
        roles = [c.role for c in engine.llm_calls(stats.session_id or "")]
        assert roles == ["query", "query", "check", "check", "locate"]
        calls = [e.payload["call"] for e in engine.events(stats.session_id or "", "library_call")]
        assert calls == ["query", "query", "check", "check", "tap_ai", "sees"]


def test_asks_are_never_cached_but_tap_ai_is(tmp_path: Path) -> None:
    def program(phone: Phone) -> None:
        phone.launch("Contacts")
        assert phone.query("How many contacts are listed?", int) == 11
        phone.tap(ai="the button that adds a contact")

    with gemini() as (model, sent):
        for _ in range(2):
            with Phone.open("sim", data_dir=tmp_path, model=model, cache="asks", real_time=False) as phone:
                program(phone)
        second = phone.stats()
    assert len(sent) == 3  # the first run's query and locate, then the second run's query alone
    assert second.model_calls == 1 and second.replayed_steps == 1


def test_asks_need_a_language_model(tmp_path: Path) -> None:
    with Phone.open("sim", data_dir=tmp_path, model="heuristic", real_time=False) as phone:
        phone.launch("Contacts")
        for ask in (lambda: phone.query("How many?", int), lambda: phone.check("a contact"),
                    lambda: phone.tap(ai="the add button")):
            with pytest.raises(UsageError) as err:
                ask()
            assert "heuristic" in str(err.value) and "Gemini or OpenAI-compatible" in (err.value.hint or "")
        with pytest.raises(StepFailed):
            phone.tap("Nowhere")
