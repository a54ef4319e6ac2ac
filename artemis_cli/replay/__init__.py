"""Replay a recorded session without a model: semantic retargeting and per-step verification.

The names below are loaded on first use: the replayer pulls in the device, perception and
operator layers, and the CLI's start-up reads only ``replay.kinds`` (the step vocabulary its
help lists), which must not build them."""

from __future__ import annotations

from typing import TYPE_CHECKING

from artemis_cli.lazy import lazy_names

if TYPE_CHECKING:
    from .replayer import Replayer, device_spec_for, replay_session
    from .results import BY_CHOICES, REPLAY_MODEL_LABEL, ReplayOptions, ReplayResult, ReplayStepResult
    from .source import PlanStep, incomplete_reason, plan, success_checks

_WHERE = {
    "Replayer": "replayer", "device_spec_for": "replayer", "replay_session": "replayer",
    "BY_CHOICES": "results", "REPLAY_MODEL_LABEL": "results", "ReplayOptions": "results",
    "ReplayResult": "results", "ReplayStepResult": "results",
    "PlanStep": "source", "incomplete_reason": "source", "plan": "source", "success_checks": "source",
}

__all__ = [
    "BY_CHOICES",
    "REPLAY_MODEL_LABEL",
    "PlanStep",
    "ReplayOptions",
    "ReplayResult",
    "ReplayStepResult",
    "Replayer",
    "device_spec_for",
    "incomplete_reason",
    "plan",
    "replay_session",
    "success_checks",
]


__getattr__ = lazy_names(__name__, _WHERE)
