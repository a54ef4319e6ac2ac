"""The context budget of a run (SPEC §10.3, §13, "Budgets"): its floor, the server's window, and
the effective budget the compressor binds to.

* **The floor** is the smallest prompt the transcript can be cut to without going below what a
  turn needs: the S zone (system text and tool declarations, as the session will send them), the
  task, F at its smallest (``frozen_budget_tokens``: F is folded within it), the current
  observation (a typical full screen's element list, plus the plan recitation for Pro, and one
  screenshot at the profile's image size — marks cost nothing extra in the image but their
  paragraph is in the system text), and the minimum active window: ``min_active_steps`` steps of
  typical scrubbed size plus the screenshots the scrub edge keeps at its minimum (depth 1 to
  ``image_scrub_depth`` − 1). The reply reserve is not part of the prompt's floor: it is taken
  from the server's window before the budget is compared (a window must hold floor + reserve).
* **The effective budget** is the smaller of the profile's ``context_budget_tokens`` and the
  server's context window less ``reply_reserve_tokens`` (``models.context_window``), when the
  server says; otherwise the profile's.

:func:`plan_budget` computes both before a session exists; :func:`check_budget` refuses a budget
below the floor (a ``UsageError`` naming the floor and what to change). The plan is stored in the
session's config (``context_budget``) so ``sessions show`` prints it later. A run below its floor
is first fitted to its budget (``operators.budget_fit``); the stored plan then lists what was
changed (``fitted``).

The S zone is measured with the model server's own tokenizer when it has one (``measure``: an
OpenAI-compatible model's ``count_tokens`` — vLLM's or llama.cpp's ``POST /tokenize`` — or
Gemini's ``countTokens``), else estimated (characters / 4); ``measured_by`` says which.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any

from artemis_cli.errors import UsageError

#: ``measure(system, tools)``: the S zone's tokens as the model's server counts them and how they
#: were counted (e.g. "vLLM POST /tokenize"), or None when it cannot say.
Measure = Callable[[str, list[Any]], "tuple[int, str] | None"]
#: ``measured_by`` of an S zone counted as characters / 4.
ESTIMATED = "estimate (characters / 4)"

#: A typical full screen's observation text (header, notices, notes, ~45 element lines), tokens.
OBSERVATION_TOKENS = 650
#: The Pro loop's plan recitation in the observation (a checklist of about ten milestones).
PLAN_TOKENS = 250
#: A typical step of the active window once scrubbed: its head, its visual summary, the model's
#: thought and call, and the tool answer.
STEP_TOKENS = 250
#: The task block at the head of F.
TASK_TOKENS = 80


def gemini_image_tokens(width: int, height: int) -> int:
    """Gemini 2.x: 258 tokens when both sides ≤ 384 px, else 258 per 768×768 tile."""
    if width <= 384 and height <= 384:
        return 258
    return 258 * math.ceil(width / 768) * math.ceil(height / 768)


def openai_image_tokens(width: int, height: int) -> int:
    """OpenAI's tiled pricing (``detail: auto``): fit 2048×2048, shortest side to 768, then 85 +
    170 per 512×512 tile (the fake OpenAI server counts images so)."""
    w, h = float(width), float(height)
    if max(w, h) > 2048:
        w, h = w * 2048 / max(w, h), h * 2048 / max(w, h)
    if min(w, h) > 768:
        w, h = w * 768 / min(w, h), h * 768 / min(w, h)
    return 85 + 170 * math.ceil(w / 512) * math.ceil(h / 512)


def scaled(size: tuple[int, int], max_side: int | None) -> tuple[int, int]:
    """``size`` scaled so its longest side is at most ``max_side`` (never up)."""
    w, h = size
    if not max_side or max(w, h) <= max_side:
        return w, h
    k = max_side / max(w, h)
    return max(1, round(w * k)), max(1, round(h * k))


def image_cost(provider: str, max_side: int | None) -> Any:
    """A function PNG bytes -> tokens as ``provider`` counts them, for the token meter (None:
    Gemini's, the meter's default)."""
    if provider != "openai":
        return None
    from artemis_cli.perception.png import png_size

    def cost(png: bytes) -> int:
        size = png_size(png)
        if size is None:
            return 765
        return openai_image_tokens(*scaled(size, max_side))

    return cost


@dataclass
class ContextBudget:
    """The run's context budget, as stored in the session config (``context_budget``)."""

    tokens: int  # the effective budget: the prompt's hard limit
    source: str  # "profile" | "server"
    profile_tokens: int
    reply_reserve: int
    floor_tokens: int
    window_tokens: int | None = None
    window_source: str | None = None
    floor_parts: dict[str, int] = field(default_factory=dict)
    #: how the S zone (system + tools) was counted: the server's tokenizer or :data:`ESTIMATED`
    measured_by: str = ESTIMATED
    #: what fitting the run to its budget changed ("screenshot.max_side 1152 → 768"), in order
    fitted: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: Any) -> ContextBudget | None:
        if not isinstance(data, dict):
            return None
        values: dict[str, Any] = {k: data[k] for k in cls.__dataclass_fields__ if k in data}
        try:
            return cls(**values)
        except TypeError:
            return None

    def text(self) -> str:
        """One line: ``budget 7,168 tokens (server window 8,192 from …, less 1,024 for the reply;
        profile 80,000) · floor 6,900``."""
        if self.source == "server" and self.window_tokens is not None:
            why = (f"server window {self.window_tokens:,} from {self.window_source}, less {self.reply_reserve:,} "
                   f"for the reply; profile {self.profile_tokens:,}")
        elif self.window_tokens is not None:
            why = f"profile; server window {self.window_tokens:,} from {self.window_source}"
        else:
            why = "profile; the server does not say its window"
        return f"budget {self.tokens:,} tokens ({why}) · floor {self.floor_tokens:,}"

    def fitted_text(self) -> str:
        """What fitting the run to its budget changed (``fitted: a → b, …``); empty when nothing."""
        return f"fitted to the budget: {', '.join(self.fitted)}" if self.fitted else ""


def screenshot_tokens(provider: str, screen: tuple[int, int], max_side: int | None,
                      operator_max_side: int | None = None) -> int:
    """One screenshot of ``screen`` sent at ``max_side`` (and, for OpenAI-compatible models, the
    model's own ``max_image_side``), in ``provider``'s tokens."""
    size = scaled(screen, max_side)
    if provider == "openai":
        return openai_image_tokens(*scaled(size, operator_max_side))
    return gemini_image_tokens(*size)


def s_zone_tokens(profile: Any, secrets: dict[str, str] | None = None,
                  measure: Measure | None = None) -> tuple[int, str]:
    """The S zone (system text and tool declarations, as the session will send them) in tokens,
    and how it was counted: ``measure`` (the server's tokenizer) when it answers, else the
    estimate. ``secrets``: the task's secrets (names and descriptions), which the system text
    lists."""
    from artemis_cli.memory.ledger import estimate_tokens
    from artemis_cli.models.base import ModelRequest, ToolDecl
    from artemis_cli.operators.prompts import system_prompt
    from artemis_cli.operators.tools import tool_declarations

    tools = [ToolDecl(d.name, d.description, d.parameters) for d in tool_declarations(profile.coordinates)]
    system = system_prompt(marks=profile.screenshot.marks, secrets=secrets, knowhow=profile.knowhow)
    measured = measure(system, tools) if measure is not None else None
    if measured is not None:
        return measured
    return estimate_tokens(ModelRequest(system=system, messages=[], tools=tools)), ESTIMATED


def floor_parts(profile: Any, screen: tuple[int, int], provider: str = "gemini",
                operator_max_side: int | None = None, secrets: dict[str, str] | None = None,
                s_zone: int | None = None) -> dict[str, int]:
    """The floor's parts in tokens (see the module doc); their sum is the floor. ``secrets``: as
    :func:`s_zone_tokens`; ``s_zone``: the S zone as measured (None: estimated here)."""
    from artemis_cli.operators.compression import MIN_FROZEN_BUDGET

    t = profile.memory.transcript
    image = screenshot_tokens(provider, screen, profile.screenshot.max_side, operator_max_side)
    kept_images = max(0, min(t.min_active_steps, t.image_scrub_depth - 1))
    return {
        "system_and_tools": s_zone if s_zone is not None else s_zone_tokens(profile, secrets)[0],
        "task": TASK_TOKENS,
        "frozen_history": profile.memory.chunking.frozen_budget_tokens or MIN_FROZEN_BUDGET,
        "observation": OBSERVATION_TOKENS + (PLAN_TOKENS if profile.loop == "pro" else 0),
        "screenshot": image,
        "active_window": t.min_active_steps * STEP_TOKENS + kept_images * image,
    }


def plan_budget(profile: Any, screen: tuple[int, int], model: Any = None,
                window: tuple[int, str] | None = None, secrets: dict[str, str] | None = None,
                measure: Measure | None = None) -> ContextBudget:
    """The run's budget: the floor, the server's window (``window``: tokens and where it was
    read; None when the server does not say) and the effective budget; ``measure``: the
    server's tokenizer for the S zone (see the module doc)."""
    t = profile.memory.transcript
    provider = getattr(model, "provider", None) or "gemini"
    side = getattr(getattr(model, "options", None), "max_image_side", None)
    s_zone, measured_by = s_zone_tokens(profile, secrets, measure)
    parts = floor_parts(profile, screen, provider, side, secrets, s_zone)
    budget = ContextBudget(tokens=t.context_budget_tokens, source="profile", profile_tokens=t.context_budget_tokens,
                           reply_reserve=t.reply_reserve_tokens, floor_tokens=sum(parts.values()), floor_parts=parts,
                           measured_by=measured_by)
    if window is not None:
        budget.window_tokens, budget.window_source = window
        usable = window[0] - t.reply_reserve_tokens
        if usable < budget.tokens:
            budget.tokens, budget.source = max(0, usable), "server"
    return budget


def check_budget(budget: ContextBudget, smallest: ContextBudget | None = None) -> None:
    """Refuse a budget below the floor, before any model call and before a session exists;
    ``smallest``: the plan of the smallest configuration fitting tried (``operators.budget_fit``),
    named in the refusal."""
    if budget.tokens >= budget.floor_tokens:
        return
    if budget.source == "server":
        said = (f"the server's context window ({budget.window_tokens:,} tokens, {budget.window_source}) less "
                f"{budget.reply_reserve:,} for the reply leaves {budget.tokens:,} tokens")
        fix = (f"serve a window of at least {budget.floor_tokens + budget.reply_reserve:,} tokens (vLLM "
               "--max-model-len, Ollama num_ctx, llama.cpp -c), or lower the floor: ")
    else:
        said = f"context_budget_tokens is {budget.tokens:,}"
        fix = f"raise memory.transcript.context_budget_tokens to at least {budget.floor_tokens:,}, or lower the floor: "
    tried = ""
    if smallest is not None and smallest.fitted:
        tried = (f"; fitted as far as it goes ({', '.join(smallest.fitted)}) it still needs "
                 f"{smallest.floor_tokens:,} ({floor_text(smallest.floor_parts)})")
    raise UsageError(f"the context budget is below its floor: {said}, but a turn needs at least "
                     f"{budget.floor_tokens:,} ({floor_text(budget.floor_parts)}){tried}",
                     hint=fix + "fewer memory.transcript.min_active_steps, a smaller screenshot.max_side, "
                               "or screenshot.marks: false")


def floor_text(parts: dict[str, int]) -> str:
    names = {"system_and_tools": "system + tools", "task": "task", "frozen_history": "history",
             "observation": "observation", "screenshot": "screenshot", "active_window": "active window"}
    return ", ".join(f"{names.get(k, k)} {v:,}" for k, v in parts.items())
