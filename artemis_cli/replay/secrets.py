"""Where replayed secret text comes from: never the DataEngine (it holds it redacted).

The environment first (``operators.secrets``: ``ARTEMIS_SECRET_<NAME>`` for a step that typed a
named secret, ``ARTEMIS_SECRET_<FIELD>``, ``ARTEMIS_SECRET``, and the older
``ARTEMIS_REPLAY_SECRET[_<FIELD>]``), then an interactive prompt (hidden input) when stdin is a
terminal; otherwise a ``UsageError`` naming the step, the secret or field, the task and the
variables to set.
"""

from __future__ import annotations

import sys
from collections.abc import Callable

from artemis_cli.engine.records import StepRecord
from artemis_cli.operators.secrets import (
    ENV_SECRET,
    field_env_name,
    missing_secret,
    secret_from_env,
    step_field,
    step_secret,
)

__all__ = ["ENV_SECRET", "SecretSource", "env_or_prompt", "field_env_name", "is_secret_step"]

SecretSource = Callable[[StepRecord], str]


def is_secret_step(step: StepRecord) -> bool:
    target = step.target or {}
    return step.action_type == "type_text" and bool(
        step.action_args.get("redacted") or step.action_args.get("password") or target.get("password")
    )


def env_or_prompt(prompt: Callable[[str], str] | None = None, task_id: str | None = None) -> SecretSource:
    """The CLI's secret source: environment first, then a hidden prompt on a terminal."""

    def source(step: StepRecord) -> str:
        value = secret_from_env(step)
        if value is not None:
            return value
        name = step_secret(step)
        question = (f"Value of secret {name} (step {step.number}; not echoed): " if name else
                    f"Text for password field {step_field(step) or '(unnamed)'} (step {step.number}): ")
        if prompt is not None:
            return prompt(question)
        if sys.stdin is not None and sys.stdin.isatty():
            import getpass

            return getpass.getpass(question)
        raise missing_secret(step, task_id, "; or run replay on a terminal to be prompted")

    return source
