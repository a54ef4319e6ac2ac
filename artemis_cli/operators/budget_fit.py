"""Fit a run to a context budget below its floor (SPEC §17 "Small windows", §10.3).

A local model server often serves a window of 4K–16K tokens (vLLM ``--max-model-len``, Ollama's
``num_ctx``, llama.cpp ``-c``), below the default profile's floor (``operators.budget_floor``).
Rather than refuse, the run is fitted: the profile is made smaller one step at a time, in this
fixed order, and the first configuration whose floor fits the budget is the one the run uses:

1. **A smaller screenshot** (``screenshot.max_side``), through :data:`SIDE_STEPS` down to
   :data:`MIN_LEGIBLE_SIDE`. A side is tried only when it costs fewer tokens than the one before
   at the model's pricing: on a 1080x2400 phone OpenAI's 512-px tiles (after the 768-px short
   side) make 1024 cost 425 tokens against 1152's 1,105, and 768 no less than 1024; Gemini's
   768-px tiles make 1024 cost what 1152 does (516) and 768 one tile (258).
   768 is the legible minimum: on a 1080x2400 screen it keeps a 14sp label (about 37 px tall)
   at about 12 px, which a VLM still reads; at 512 it would be 8 px, and the set-of-marks labels
   beside it would be smaller still.
2. **Fewer active steps** (``memory.transcript.min_active_steps``), one at a time down to
   :data:`MIN_ACTIVE_STEPS` (2): the steps the compressor keeps verbatim, each with its text and
   (up to ``image_scrub_depth`` − 1) its screenshot.
3. **The short know-how** (``knowhow: short``): the system text's Android know-how cut to its
   essentials (``operators.prompts``).

The fitted profile is the session's (stored in its config, so ``resume`` and ``sessions
prompt`` rebuild the same requests) and the stored budget's ``fitted`` lists each change as
"setting before → after". When even the smallest configuration does not fit, the run is refused
as an unfitted one would be (``check_budget``), naming what fitting tried. ``fit=False`` (the
CLI's ``--no-fit``) refuses below the floor without fitting.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from artemis_cli.operators.budget_floor import (
    ContextBudget,
    Measure,
    check_budget,
    plan_budget,
    screenshot_tokens,
)

#: Screenshot sides tried, largest first (see the module doc for why each step).
SIDE_STEPS = (1024, 768)
#: The smallest screenshot side fitting goes to: below it a phone's text is not legible.
MIN_LEGIBLE_SIDE = 768
#: The fewest active steps fitting leaves (the compressor keeps at least these verbatim).
MIN_ACTIVE_STEPS = 2


def _candidates(profile: Any, screen: tuple[int, int], provider: str, operator_side: int | None) -> Iterator[Any]:
    """Ever smaller copies of ``profile``, each one step further in the documented order."""
    current = profile.model_copy(deep=True)
    side = current.screenshot.max_side or max(screen)
    cost = screenshot_tokens(provider, screen, side, operator_side)
    for step in SIDE_STEPS:
        if step >= side or step < MIN_LEGIBLE_SIDE:
            continue
        step_cost = screenshot_tokens(provider, screen, step, operator_side)
        if step_cost >= cost:  # no token saved at this model's pricing: not worth the pixels
            continue
        current = current.model_copy(deep=True)
        current.screenshot.max_side, side, cost = step, step, step_cost
        yield current
    while current.memory.transcript.min_active_steps > MIN_ACTIVE_STEPS:
        current = current.model_copy(deep=True)
        current.memory.transcript.min_active_steps -= 1
        yield current
    if current.knowhow != "short":
        current = current.model_copy(deep=True)
        current.knowhow = "short"
        yield current


def changes(before: Any, after: Any) -> list[str]:
    """What fitting changed from ``before`` to ``after``, in the documented order."""
    out = []
    if before.screenshot.max_side != after.screenshot.max_side:
        out.append(f"screenshot.max_side {before.screenshot.max_side} → {after.screenshot.max_side}")
    a, b = before.memory.transcript.min_active_steps, after.memory.transcript.min_active_steps
    if a != b:
        out.append(f"memory.transcript.min_active_steps {a} → {b}")
    if before.knowhow != after.knowhow:
        out.append(f"knowhow {before.knowhow} → {after.knowhow}")
    return out


def fit_budget(profile: Any, screen: tuple[int, int], model: Any = None, window: tuple[int, str] | None = None,
               secrets: dict[str, str] | None = None, measure: Measure | None = None,
               fit: bool = True) -> tuple[Any, ContextBudget]:
    """The profile the run uses and its budget: ``profile`` itself when its floor fits, else the
    first fitted configuration that does (its budget's ``fitted`` says what changed). Raises the
    budget's ``UsageError`` when nothing fits, or at once below the floor when ``fit`` is False."""
    budget = plan_budget(profile, screen, model, window, secrets, measure)
    if budget.tokens >= budget.floor_tokens or not fit:
        check_budget(budget)
        return profile, budget
    provider = getattr(model, "provider", None) or "gemini"
    operator_side = getattr(getattr(model, "options", None), "max_image_side", None)
    smallest: ContextBudget | None = None
    for candidate in _candidates(profile, screen, provider, operator_side):
        smallest = plan_budget(candidate, screen, model, window, secrets, measure)
        smallest.fitted = changes(profile, candidate)
        if smallest.tokens >= smallest.floor_tokens:
            return candidate, smallest
    check_budget(budget, smallest)
    raise AssertionError("unreachable: check_budget refuses a budget below its floor")
