"""Fitting a run to a budget below its floor (``operators.budget_fit``): the documented order
(screenshot side, then active steps, then the short know-how), only screenshot steps that save
tokens at the model's pricing, the first configuration that fits, the caller's profile left as
it was, and a refusal when nothing fits or fitting is off."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from artemis_cli.config.profile import load_profile
from artemis_cli.errors import UsageError
from artemis_cli.operators.budget_fit import fit_budget
from artemis_cli.operators.budget_floor import plan_budget
from artemis_cli.operators.prompts import SYSTEM_PROMPT, system_prompt

SCREEN = (1080, 2400)
OPENAI = SimpleNamespace(provider="openai", options=None)


def floor(profile: object, model: object = None) -> int:
    return plan_budget(profile, SCREEN, model).floor_tokens


def with_budget(tokens: int) -> object:
    profile = load_profile("flash")
    profile.memory.transcript.context_budget_tokens = tokens
    return profile


def test_a_budget_at_the_floor_is_not_fitted() -> None:
    profile = with_budget(floor(load_profile("flash")))
    fitted, budget = fit_budget(profile, SCREEN)
    assert fitted is profile and budget.fitted == []


def test_gemini_skips_the_side_that_saves_nothing_and_stops_at_the_first_fit() -> None:
    # Gemini's 768-px tiles: 1024 costs what 1152 does (two tiles), 768 one tile
    full = floor(load_profile("flash"))
    profile = with_budget(full - 1)
    fitted, budget = fit_budget(profile, SCREEN)
    assert budget.fitted == ["screenshot.max_side 1152 → 768"]
    assert fitted.screenshot.max_side == 768 and fitted.memory.transcript.min_active_steps == 5
    assert budget.floor_tokens == full - 3 * 258 <= budget.tokens
    assert profile.screenshot.max_side == 1152  # the caller's profile is not changed


def test_openai_takes_1024_and_then_fewer_active_steps_before_the_short_knowhow() -> None:
    # OpenAI's 512-px tiles: 1024 saves four tiles; 768 costs what 1024 does, so it is not taken
    shot_floor = floor(load_profile("flash"), OPENAI) - 3 * 680
    profile = with_budget(shot_floor - 250)  # one active step less fits
    fitted, budget = fit_budget(profile, SCREEN, OPENAI)
    assert budget.fitted == ["screenshot.max_side 1152 → 1024", "memory.transcript.min_active_steps 5 → 4"]
    assert fitted.knowhow == "full"
    profile = with_budget(shot_floor - 3 * 250 - 1)  # two active steps: still one token short
    fitted, budget = fit_budget(profile, SCREEN, OPENAI)
    assert budget.fitted == ["screenshot.max_side 1152 → 1024", "memory.transcript.min_active_steps 5 → 2",
                             "knowhow full → short"]
    assert fitted.knowhow == "short" and budget.floor_tokens <= budget.tokens


def test_nothing_fits_or_fitting_off_refuses() -> None:
    with pytest.raises(UsageError, match="fitted as far as it goes") as exc:
        fit_budget(with_budget(3000), SCREEN, OPENAI)
    assert "min_active_steps" in (exc.value.hint or "")
    with pytest.raises(UsageError, match="below its floor") as exc:
        fit_budget(with_budget(floor(load_profile("flash")) - 1), SCREEN, fit=False)
    assert "fitted as far as it goes" not in str(exc.value)


def test_the_short_knowhow_is_shorter_and_the_default_text_unchanged() -> None:
    assert system_prompt() == SYSTEM_PROMPT == system_prompt(knowhow="full")
    short = system_prompt(knowhow="short")
    assert "Android know-how (short):" in short and "Android know-how:" not in short
    assert len(short) < len(SYSTEM_PROMPT) - 1000 and short.endswith(SYSTEM_PROMPT[SYSTEM_PROMPT.index("Untrusted"):])
