"""Where secret text comes from: never a task file, a request or the DataEngine (it holds every
typed secret redacted), always the environment or a hidden prompt -- one rule for ``artemis run``,
resume, replay and heal.

A task names its secrets (``secrets: {shop_password: the demo account's password}``); the model
types one with ``type_text(secret="shop_password")`` and the step records the name only. The value
of secret NAME is the first of these variables that is set and not empty:

1. ``ARTEMIS_SECRET_<NAME>``, NAME upper-cased with non-alphanumerics as ``_``
   (``shop_password`` → ``ARTEMIS_SECRET_SHOP_PASSWORD``);
2. for a recorded step, ``ARTEMIS_SECRET_<FIELD>``, FIELD being the field's short resource-id
   upper-cased the same way (``com.artemis.shop:id/password`` → ``ARTEMIS_SECRET_PASSWORD``);
3. ``ARTEMIS_SECRET``;

then a hidden prompt when stdin is a terminal. A secret nothing supplies is a ``UsageError``
naming the variable to set -- for ``artemis run`` before the session starts.

Text a model typed into a password field itself (no secret named) is stored redacted too; a replay
or a resume takes it from the field's variable or ``ARTEMIS_SECRET``. The older replay names
``ARTEMIS_REPLAY_SECRET_<FIELD>`` / ``ARTEMIS_REPLAY_SECRET`` are still read (each after its
``ARTEMIS_SECRET`` counterpart).
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Callable, Mapping
from typing import Any

from artemis_cli.engine.records import StepRecord
from artemis_cli.engine.records import secret_label as records_secret_label
from artemis_cli.errors import UsageError

ENV_SECRET = "ARTEMIS_SECRET"
#: The names ``artemis replay`` read before resume and replay shared one family.
OLD_ENV_SECRET = "ARTEMIS_REPLAY_SECRET"

#: Asks for a secret's value (the question as its argument), e.g. ``getpass.getpass``.
Prompt = Callable[[str], str]


def _upper(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9]", "_", name).upper()


def secret_env_name(name: str) -> str:
    """The variable holding secret ``name``: ``shop_password`` → ``ARTEMIS_SECRET_SHOP_PASSWORD``."""
    return f"{ENV_SECRET}_{_upper(name)}"


def secret_label(name: str) -> str:
    """How a step typed from a secret shows the text it typed: the name, never the value."""
    return records_secret_label(name)


def field_env_name(resource_id: str, prefix: str = ENV_SECRET) -> str | None:
    short = resource_id.rsplit("/", 1)[-1]
    if not short:
        return None
    return f"{prefix}_{_upper(short)}"


def env_names(resource_id: str, secret: str | None = None) -> list[str]:
    """The variables looked up for a secret and/or a field, in order."""
    names = [secret_env_name(secret) if secret else None, field_env_name(resource_id),
             field_env_name(resource_id, OLD_ENV_SECRET), ENV_SECRET, OLD_ENV_SECRET]
    out: list[str] = []
    for n in names:
        if n and n not in out:
            out.append(n)
    return out


def step_field(step: StepRecord) -> str:
    return str((step.target or {}).get("resource_id") or "")


def step_secret(step: StepRecord) -> str | None:
    """The name of the secret a recorded step typed (None: it typed no named secret)."""
    name = (step.action_args or {}).get("secret")
    return name if isinstance(name, str) and name else None


def _from_env(names: list[str]) -> str | None:
    for name in names:
        value = os.environ.get(name)
        if value:
            return value
    return None


def secret_from_env(step: StepRecord) -> str | None:
    """The text a recorded secret step typed, from the environment (None: no variable holds it)."""
    return _from_env(env_names(step_field(step), step_secret(step)))


def _terminal() -> bool:
    return sys.stdin is not None and sys.stdin.isatty()


def resolve_secrets(secrets: Mapping[str, str], *, prompt: Prompt | None = None, task_id: str | None = None,
                    have: Mapping[str, str] | None = None) -> dict[str, str]:
    """The value of each of a task's ``secrets`` (name → description): the environment, else
    ``prompt`` (default: a hidden prompt when stdin is a terminal). ``have``: values already
    known (a replay's), taken first. Nothing for one of them: a UsageError naming the variables."""
    values: dict[str, str] = {}
    missing: list[str] = []
    for name in secrets:
        value = (have or {}).get(name) or _from_env(env_names("", name))
        if value is None:
            missing.append(name)
        else:
            values[name] = value
    ask = prompt
    if ask is None and missing and _terminal():
        import getpass

        ask = getpass.getpass
    for name in missing:
        if ask is None:
            raise missing_secrets(missing, secrets, task_id)
        values[name] = ask(f"Value of secret {name} ({secrets[name]}; not echoed): ")
    return values


def task_secrets(task: Any) -> dict[str, str]:
    """A task's secrets (name → description); a task of any shape (a heal's, a stored one)."""
    raw = getattr(task, "secrets", None) if not isinstance(task, Mapping) else task.get("secrets")
    return {str(k): str(v) for k, v in (raw or {}).items()}


def missing_secrets(names: list[str], secrets: Mapping[str, str], task_id: str | None) -> UsageError:
    """The error for secrets nothing supplies: each by its variable, before any session exists."""
    of_task = f"task {task_id} needs" if task_id else "the task needs"
    listed = "; ".join(f"{n} ({secrets[n]}): set {secret_env_name(n)}" for n in names)
    return UsageError(f"{of_task} {'a secret' if len(names) == 1 else 'secrets'} nothing supplies — {listed}",
                      hint=f"{ENV_SECRET} is read for any secret too; on a terminal you are asked for it "
                           "(the value is never shown, sent to the model or stored)")


def missing_secret(step: StepRecord, task_id: str | None, extra_hint: str = "") -> UsageError:
    """The error for a secret step whose text no variable holds: the step, the secret or field,
    the task."""
    rid = step_field(step)
    name = step_secret(step)
    field = f"the password field ({rid})" if rid else "a password field"
    what = f"secret {name} into {field}" if name else f"into {field}"
    of_task = f" of task {task_id}" if task_id else ""
    own = secret_env_name(name) if name else field_env_name(rid)
    names = f"{own} (or {ENV_SECRET})" if own else ENV_SECRET
    return UsageError(f"step {step.number} typed {what}{of_task}; its text is not stored: set {names}",
                      hint=f"the older {OLD_ENV_SECRET}[_<FIELD>] names are read too{extra_hint}")
