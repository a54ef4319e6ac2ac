"""Artemis's Python API: the stable names a program or a test imports (also from ``artemis_cli``).

    from artemis_cli import Phone, StepFailed

See docs/python.md. Everything else in the package is internal and may change."""

from __future__ import annotations

from artemis_cli.errors import (
    AnswerError,
    ArtemisError,
    ConfigError,
    DeviceError,
    DeviceNotFound,
    DeviceOffline,
    UsageError,
)
from artemis_cli.library.errors import CheckFailed, StepFailed
from artemis_cli.library.phone import Phone
from artemis_cli.library.results import ActResult, PhoneStats, Screen, ScreenElement, StepResult

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
]
