"""Where replayed password text comes from: never the DataEngine (it holds it redacted).

Lookup order for a step that typed into a password field:

1. ``ARTEMIS_REPLAY_SECRET_<FIELD>``, FIELD being the field's short resource-id upper-cased with
   non-alphanumerics as ``_`` (``com.artemis.shop:id/password`` → ``ARTEMIS_REPLAY_SECRET_PASSWORD``);
2. ``ARTEMIS_REPLAY_SECRET``;
3. an interactive prompt (hidden input) when stdin is a terminal;
4. otherwise a ``UsageError`` naming the variables to set.
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Callable

from artemis_cli.engine.records import StepRecord
from artemis_cli.errors import UsageError

ENV_SECRET = "ARTEMIS_REPLAY_SECRET"

SecretSource = Callable[[StepRecord], str]


def field_env_name(resource_id: str) -> str | None:
    short = resource_id.rsplit("/", 1)[-1]
    if not short:
        return None
    return f"{ENV_SECRET}_{re.sub(r'[^A-Za-z0-9]', '_', short).upper()}"


def is_secret_step(step: StepRecord) -> bool:
    target = step.target or {}
    return step.action_type == "type_text" and bool(
        step.action_args.get("redacted") or step.action_args.get("password") or target.get("password")
    )


def env_or_prompt(prompt: Callable[[str], str] | None = None) -> SecretSource:
    """The CLI's secret source: environment first, then a hidden prompt on a terminal."""

    def source(step: StepRecord) -> str:
        rid = (step.target or {}).get("resource_id") or ""
        names = [n for n in (field_env_name(rid), ENV_SECRET) if n]
        for name in names:
            value = os.environ.get(name)
            if value is not None:
                return value
        if prompt is not None:
            return prompt(f"Text for password field {rid or '(unnamed)'} (step {step.number}): ")
        if sys.stdin is not None and sys.stdin.isatty():
            import getpass

            return getpass.getpass(f"Text for password field {rid or '(unnamed)'} (step {step.number}): ")
        raise UsageError(
            f"step {step.number} typed into a password field; its text is not stored",
            hint=f"set {' or '.join(names)} (or run replay on a terminal to be prompted)",
        )

    return source
