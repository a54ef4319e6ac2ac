"""Pick the model for a run from ``--model`` and the profile (SPEC §8)."""

from __future__ import annotations

import os
from typing import Any

from artemis_cli.errors import ModelConfigError, UsageError
from artemis_cli.models.base import Model

OFFLINE_MODELS = ("heuristic", "scripted")


def has_api_key() -> bool:
    return bool(os.environ.get("GEMINI_API_KEY") or os.environ.get("GOOGLE_API_KEY"))


def default_model_name() -> str:
    """gemini when an API key is set, else the offline heuristic baseline."""
    return "gemini" if has_api_key() else "heuristic"


def reference_script(task: Any) -> list[dict[str, Any]]:
    steps = getattr(task, "reference", None) or []
    out = []
    for step in steps:
        if hasattr(step, "model_dump"):
            out.append(step.model_dump(mode="json", exclude_none=True, by_alias=True))
        else:
            out.append(dict(step))
    return out


TIMEOUT_ENV = "ARTEMIS_GEMINI_TIMEOUT_S"
DEFAULT_TIMEOUT_S = 60.0


def gemini_timeout_s() -> float:
    """Seconds one Gemini HTTP attempt may take: ``$ARTEMIS_GEMINI_TIMEOUT_S``, default 60."""
    raw = os.environ.get(TIMEOUT_ENV, "").strip()
    if not raw:
        return DEFAULT_TIMEOUT_S
    try:
        value = float(raw)
    except ValueError:
        value = -1.0
    if not 0 < value <= 3600:
        raise ModelConfigError(f"{TIMEOUT_ENV} must be a number of seconds in (0, 3600], got {raw!r}",
                               hint=f"unset {TIMEOUT_ENV} to use the default of {DEFAULT_TIMEOUT_S:g} s")
    return value


def build_model(name: str | None, *, task: Any, profile: Any, role: str = "operator") -> Model:
    name = name or default_model_name()
    if name == "heuristic":
        from artemis_cli.models.heuristic import HeuristicModel

        return HeuristicModel()
    if name == "scripted":
        script = reference_script(task)
        if not script:
            raise UsageError(
                f"task {task.id!r} has no `reference` solution for the scripted model",
                hint="add a `reference:` list to the task file, or use --model heuristic",
            )
        from artemis_cli.models.scripted import ScriptedModel

        return ScriptedModel(script)
    if name == "gemini" or name.startswith("gemini"):
        from artemis_cli.models.gemini import GeminiModel

        roles = getattr(getattr(profile, "models", None), role, None)
        chain = [roles.model, *roles.fallback] if roles is not None else ["gemini-2.5-flash"]
        if name != "gemini":
            chain = [name, *[m for m in chain if m != name]]
        return GeminiModel(chain, base_url=os.environ.get("ARTEMIS_GEMINI_BASE_URL") or None,
                           timeout_s=gemini_timeout_s())
    raise ModelConfigError(
        f"unknown model {name!r}",
        hint="use heuristic, scripted, gemini, or a Gemini model name such as gemini-2.5-flash",
    )
