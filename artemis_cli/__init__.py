"""Artemis: a runner for LLM agents that operate Android phones.

The Python API (``Phone``, its results and errors) is importable from here; it is loaded on
first use, so the CLI's start-up does not pay for it (``artemis_cli.api`` lists the names)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

if TYPE_CHECKING:
    from artemis_cli.api import (
        ActResult,
        AnswerError,
        ArtemisError,
        CheckFailed,
        ConfigError,
        DeviceError,
        DeviceNotFound,
        DeviceOffline,
        Phone,
        PhoneStats,
        Screen,
        ScreenElement,
        StepFailed,
        StepResult,
        UsageError,
    )

__all__ = [
    "ActResult",
    "AnswerError",
    "ArtemisError",
    "CheckFailed",
    "ConfigError",
    "DeviceError",
    "DeviceNotFound",
    "DeviceOffline",
    "Phone",
    "PhoneStats",
    "Screen",
    "ScreenElement",
    "StepFailed",
    "StepResult",
    "UsageError",
    "__version__",
]
_API = frozenset(__all__) - {"__version__"}


def __getattr__(name: str) -> Any:
    if name in _API:
        from artemis_cli import api

        value = getattr(api, name)
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
