"""The values ``--model`` takes, each with what it is (no imports: the CLI's help reads it at
start-up). ``run --help`` and the unknown-model hint list them from here."""

from __future__ import annotations

OFFLINE_MODELS = ("heuristic", "scripted", "healer")
#: tests/cli/test_help_types.py checks run --help names each.
MODEL_CHOICES: dict[str, str] = {
    "gemini": "the profile's Gemini model and its fallbacks; needs GEMINI_API_KEY",
    "<gemini model name>": "e.g. gemini-2.5-flash",
    "openai:NAME": "any OpenAI-compatible server, every role",
    "heuristic": "offline baseline, not an LLM",
    "scripted": "offline, plays the task's reference solution",
    "healer": "offline, follows the task's reference as a plan and adapts to dialogs and renamed buttons; not an LLM",
}


def models_help() -> str:
    """``gemini (…) | <gemini model name> (…) | … | healer (…)``."""
    return " | ".join(f"{name} ({what})" for name, what in MODEL_CHOICES.items())
