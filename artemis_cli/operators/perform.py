"""One action, performed and observed: execute it, let the screen settle, judge what it came to.

The one copy of this mechanism: the operator loops (Flash, Pro) and ``artemis mcp`` (an outside
agent at the wheel) both run every action through :func:`perform`, so a step means the same
whoever decided it — its status is what was observed after it (SPEC §15), never what was sent.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

from artemis_cli.device.protocol import Device
from artemis_cli.errors import DeviceOffline
from artemis_cli.operators.act import ActionResult, PlannedAction, execute
from artemis_cli.operators.observe import Observation, settle
from artemis_cli.operators.outcome import ActionOutcome, assess
from artemis_cli.operators.settling import shows_effect
from artemis_cli.operators.typing import probe_tree
from artemis_cli.perception.types import UITree


@dataclass
class Performed:
    #: the observation after the action (None: the device went away while it was observed)
    post: Observation | None
    #: what the device answered when the action was sent (``ok`` = it took the action)
    sent: ActionResult
    #: what the action came to: the outcome's status and detail (``ok`` only when its effect
    #: was observed), with the typing trace of a type_text
    result: ActionResult
    outcome: ActionOutcome
    #: why the device is unavailable when ``post`` is None
    offline: str | None = None


@dataclass(frozen=True)
class Settling:
    """How long to let the screen settle after an action (profile ``settle_ms``/``settle_max_ms``)."""

    floor_s: float = 0.0
    max_s: float = 2.0
    #: watch the screen until it stops changing (False: the fixed floor only, as simulated runs do)
    watch: bool = True
    #: keep a post observation that already shows the effect without a confirming capture (the
    #: loops' next observation confirms it, ``operators.settling``); False: always confirm
    early: bool = True


def perform(
    action: PlannedAction,
    device: Device,
    pre: Observation,
    take: Callable[[], Observation],
    settling: Settling,
    *,
    real_time: bool = True,
    sleep: Callable[[float], None],
    on_drop: Callable[[str], None] | None = None,
    before_send: Callable[[], None] | None = None,
    hurry: threading.Event | None = None,
) -> Performed:
    """Send ``action`` (planned on ``pre``), observe the screen once it settled (``take``) and
    judge the outcome. A connection that drops while the action is sent is never re-sent (its
    effect is unknown: ``on_drop`` is told and the screen is observed first); one that drops
    while observing after it leaves ``post`` None and says why in ``offline``. ``before_send`` runs
    just before the device is touched (the lease check). ``hurry``, once set (the process is
    stopping), cuts a ``wait`` and the settling short: the action is never cut, and the step is
    observed and judged as usual, only sooner."""
    size = (pre.space.width, pre.space.height)

    def probe(size: tuple[int, int] = size) -> UITree | None:
        return probe_tree(device, size)

    if before_send is not None:
        before_send()
    try:
        sent = execute(action, device, real_time=real_time, pre=pre.tree, probe=probe,
                       sleep=time.sleep if hurry is None else _until(hurry))
    except DeviceOffline as exc:
        if on_drop is not None:
            on_drop(str(exc))
        sent = ActionResult("error", f"connection dropped during the action; effect unknown ({exc})")
    post: Observation | None = pre
    offline: str | None = None
    judged: list[tuple[Observation, ActionOutcome]] = []
    if sent.status != "finished":
        def judge(seen: Observation) -> bool:
            judged[:] = [(seen, assess(action, sent, pre, seen))]
            return shows_effect(judged[0][1])

        try:
            post = settle(device, take, floor_s=settling.floor_s, max_s=settling.max_s, watch=settling.watch,
                          sleep=sleep, judge=judge if settling.early else None,
                          hurried=None if hurry is None else hurry.is_set).obs
        except DeviceOffline as exc:
            post, offline = None, str(exc)
    outcome = judged[0][1] if judged and judged[0][0] is post else assess(action, sent, pre, post)
    return Performed(post, sent, ActionResult(outcome.status, outcome.detail, sent.typing), outcome, offline)


def _until(hurry: threading.Event) -> Callable[[float], None]:
    """A sleep that ends early once ``hurry`` is set."""
    def sleep(seconds: float) -> None:
        hurry.wait(seconds)

    return sleep
