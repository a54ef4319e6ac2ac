"""What a resume runs on (issue 23 item 3): the session's recorded model and endpoint, or an
override within the same provider (``registry.resume_choice``), recorded as such."""

from __future__ import annotations

import pytest

from artemis_cli.errors import UsageError
from artemis_cli.models.registry import resume_choice

A, B = "http://127.0.0.1:8001/v1", "http://127.0.0.1:8002/v1"
OPENAI = {"model": "openai:a", "base_url": A}


def test_by_default_a_resume_runs_on_what_the_session_recorded() -> None:
    assert resume_choice(OPENAI, None, None) == ("openai:a", A, {})
    assert resume_choice({"model": "gemini-2.5-flash", "base_url": None}, None, None) == ("gemini-2.5-flash", None, {})


def test_another_endpoint_and_model_of_the_same_provider_are_recorded_as_an_override() -> None:
    name, url, override = resume_choice(OPENAI, "openai:b", B)
    assert (name, url) == ("openai:b", B)
    assert override == {"model": "openai:b", "base_url": B, "was": {"model": "openai:a", "base_url": A}}
    assert resume_choice({"model": "gemini-2.5-flash"}, "gemini-2.5-pro", None)[2]["model"] == "gemini-2.5-pro"


def test_the_environment_endpoint_moves_an_openai_session_only(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ARTEMIS_OPENAI_BASE_URL", B)
    assert resume_choice(OPENAI, None, None)[:2] == ("openai:a", B)
    assert resume_choice(OPENAI, None, A) == ("openai:a", A, {})  # --base-url wins
    assert resume_choice({"model": "gemini-2.5-flash"}, None, None) == ("gemini-2.5-flash", None, {})


@pytest.mark.parametrize(("recorded", "model"), [("openai:a", "gemini-2.5-flash"), ("gemini-2.5-flash", "openai:a"),
                                                  ("heuristic", "scripted"), ("profile", "heuristic")])
def test_another_provider_is_a_usage_error_naming_both(recorded: str, model: str) -> None:
    with pytest.raises(UsageError) as info:
        resume_choice({"model": recorded}, model, None)
    assert recorded in str(info.value) and model in str(info.value)
