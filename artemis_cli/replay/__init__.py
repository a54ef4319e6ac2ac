"""Replay a recorded session without a model: semantic retargeting and per-step verification."""

from artemis_cli.replay.replayer import Replayer, device_spec_for, replay_session
from artemis_cli.replay.results import (
    BY_CHOICES,
    REPLAY_MODEL_LABEL,
    ReplayOptions,
    ReplayResult,
    ReplayStepResult,
)
from artemis_cli.replay.source import PlanStep, incomplete_reason, plan, success_checks

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
