"""Where the text of a password step comes from when a session is replayed or a simulated phone
is restored for a resume: never the DataEngine (it holds that text redacted), always the
environment -- one family of names for both:

1. ``ARTEMIS_SECRET_<FIELD>``, FIELD being the field's short resource-id upper-cased with
   non-alphanumerics as ``_`` (``com.artemis.shop:id/password`` → ``ARTEMIS_SECRET_PASSWORD``);
2. ``ARTEMIS_SECRET``.

The older replay names ``ARTEMIS_REPLAY_SECRET_<FIELD>`` / ``ARTEMIS_REPLAY_SECRET`` are still
read (a field's own name before either generic one).
"""

from __future__ import annotations

import os
import re

from artemis_cli.engine.records import StepRecord
from artemis_cli.errors import UsageError

ENV_SECRET = "ARTEMIS_SECRET"
#: The names ``artemis replay`` read before resume and replay shared one family.
OLD_ENV_SECRET = "ARTEMIS_REPLAY_SECRET"


def field_env_name(resource_id: str, prefix: str = ENV_SECRET) -> str | None:
    short = resource_id.rsplit("/", 1)[-1]
    if not short:
        return None
    return f"{prefix}_{re.sub(r'[^A-Za-z0-9]', '_', short).upper()}"


def env_names(resource_id: str) -> list[str]:
    """The variables looked up for a field, in order."""
    names = [field_env_name(resource_id), field_env_name(resource_id, OLD_ENV_SECRET), ENV_SECRET, OLD_ENV_SECRET]
    return [n for n in names if n]


def step_field(step: StepRecord) -> str:
    return str((step.target or {}).get("resource_id") or "")


def secret_from_env(step: StepRecord) -> str | None:
    for name in env_names(step_field(step)):
        value = os.environ.get(name)
        if value is not None:
            return value
    return None


def missing_secret(step: StepRecord, task_id: str | None, extra_hint: str = "") -> UsageError:
    """The error for a password step whose text no variable holds: the step, the field, the task."""
    rid = step_field(step)
    field = f"the password field ({rid})" if rid else "a password field"
    of_task = f" of task {task_id}" if task_id else ""
    own = field_env_name(rid)
    names = f"{own} (or {ENV_SECRET})" if own else ENV_SECRET
    return UsageError(f"step {step.number} typed into {field}{of_task}; its text is not stored: set {names}",
                      hint=f"the older {OLD_ENV_SECRET}[_<FIELD>] names are read too{extra_hint}")
