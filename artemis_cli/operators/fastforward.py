"""Bring a fresh simulated phone to where a session stopped, by re-applying its recorded actions.

The simulated phone lives in the runner's process, so a crash takes its state with it; it is
deterministic, though (same world, seed and actions give the same screens), so replaying the
committed steps' device actions — from the DataEngine, no model — restores it. Text typed into
password fields is stored redacted; a step that typed one of the task's secrets types the value
the resume resolved for it by name, any other the text ``$ARTEMIS_SECRET_<FIELD>`` or
``$ARTEMIS_SECRET`` holds (``operators.secrets``, the family replay reads too).
A real phone keeps its own state and is never fast-forwarded.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from artemis_cli.device.protocol import Device
from artemis_cli.engine.records import StepRecord
from artemis_cli.operators.act import PlannedAction, execute
from artemis_cli.operators.secrets import missing_secret, secret_from_env, step_secret
from artemis_cli.operators.typing import probe_tree
from artemis_cli.perception.dhash import dhash_hex, hamming
from artemis_cli.perception.types import Target, UITree


def planned_from_step(step: StepRecord, task_id: str | None = None,
                      secrets: Mapping[str, str] | None = None) -> PlannedAction:
    """A recorded step as the action to do again; ``secrets``: the task's secret values by name."""
    args = dict(step.action_args or {})
    action = PlannedAction(step.action_type or "none", args, step.x, step.y, step.x2, step.y2,
                           target=Target.from_dict(step.target))
    if args.get("redacted"):
        name = step_secret(step)
        secret = (secrets or {}).get(name) if name else None
        secret = secret if secret is not None else secret_from_env(step)
        if secret is None:
            raise missing_secret(step, task_id, " (the simulated phone is restored by typing it again)")
        action.secret = secret
    return action


def fast_forward(device: Device, task: Any, steps: list[StepRecord],
                 secrets: Mapping[str, str] | None = None) -> int | None:
    """Re-run setup and every recorded action; returns the dHash distance to the last recorded
    screen (0 = identical), or None when there is nothing to compare."""
    for setup in task.setup:
        device.shell(setup.shell)
    if task.app:
        device.launch(task.app)
    size = (device.info().width, device.info().height)
    for step in steps:
        if step.action_type in ("none", "finish", "wait") or step.result_status == "error":
            continue
        if step.action_type == "type_text" and step.outcome is not None:
            # typed with the focus check (SPEC §15): the same check on the same screens takes
            # the same decision, so a step that typed nothing types nothing again
            def probe() -> UITree | None:
                return probe_tree(device, size)

            execute(planned_from_step(step, task.id, secrets), device, real_time=False, pre=probe(), probe=probe)
            continue
        execute(planned_from_step(step, task.id, secrets), device, real_time=False)
    if not steps or not steps[-1].post_dhash:
        return None
    return hamming(dhash_hex(device.screenshot()), steps[-1].post_dhash)
