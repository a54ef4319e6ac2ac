"""Settling without an extra capture: when the post-action observation is enough, and the late
change that the next step's observation may still show (issue 26).

:func:`artemis_cli.operators.observe.settle` takes the post-action observation and, given a
``judge``, keeps it at once when it already shows the action's effect (mode ``observed``): no
screenshot is taken only to confirm that the screen is still. :func:`shows_effect` is that judge:
the step's outcome (``operators.outcome.assess``) is ``ok`` — the intended effect was seen. A
post observation that does not show it (no visible change yet, a launch still on its way, text
not landed yet) is watched as before: cheap screenshots until two in a row are equal.

A screen judged ``observed`` may still move once more (a dialog that fades in, a result that
replaces a spinner a few hundred ms later). The next step's observation is the confirmation:
:class:`LateCheck` compares it with the step's post observation before the model reads it and,
when the screen changed (by at least the outcome's ``VISUAL_CHANGE_MIN`` dHash bits), the screen
is observed again and the step's outcome assessed again on it (:func:`reassess`). Nothing recorded is swapped: the step keeps the post observation it was
judged on; a ``late_change`` event on that step says what its outcome came to on the later screen
(status, summary, the later screen's dHash), the next step's pre observation is the later screen,
and, when the outcome changed, the model is told in the next observation's notices
(:func:`late_notice`).

Where the next step's observation comes from: on a device whose reads are sequential (the
in-process sim, where a capture costs a render) a cheap screenshot is taken at the next step's
start. On a concurrent device (adb, uiautomator2) nothing is taken: a phone's ``screencap -p``
(~1.2 s) could only be read before the model reads by waiting for it, which is the cost this
module removes. There the post observation's ``uiautomator dump`` waits for the UI to go idle,
but its screenshot (whose frame a phone grabs early in ``screencap``) may still show the end of a
transition; a late change is then seen in the next step's post-action observation and its
outcome, not re-assessed on the earlier step.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from artemis_cli.device.protocol import Device
from artemis_cli.errors import DeviceOffline, ScreenshotError
from artemis_cli.memory.ledger_lines import outcome_phrase
from artemis_cli.operators.observe import Observation, concurrent_reads
from artemis_cli.operators.outcome import VISUAL_CHANGE_MIN, ActionOutcome, assess
from artemis_cli.perception.dhash import dhash_hex, hamming

__all__ = ["LATE_EVENT", "LateCheck", "Unconfirmed", "late_notice", "moved_on", "reassess", "shows_effect"]

#: The event kind recorded on a step whose screen changed after its post observation.
LATE_EVENT = "late_change"


def shows_effect(outcome: ActionOutcome) -> bool:
    """Whether a post observation that came to ``outcome`` shows the action's effect, so that no
    screenshot is needed to confirm it (``ok``: the intended effect was seen)."""
    return outcome.status == "ok"


def moved_on(u: Unconfirmed, dhash: str) -> bool:
    """Whether a screen whose dHash is ``dhash`` moved on from ``u``'s post observation: ripples,
    a blinking caret or a clock's tick are not a change of screen (the outcome's bar)."""
    return hamming(dhash, u.post.dhash) >= VISUAL_CHANGE_MIN


@dataclass
class Unconfirmed:
    """A step whose post observation was judged settled on its own (``settle_mode`` observed)."""

    step: int
    action: Any  # PlannedAction
    sent: Any  # execute()'s ActionResult, before the outcome decided the status
    pre: Observation
    post: Observation
    outcome: ActionOutcome


def reassess(u: Unconfirmed, later: Observation) -> ActionOutcome:
    """The outcome of ``u``'s action measured against ``later``, the screen the next step sees."""
    return assess(u.action, u.sent, u.pre, later)


def late_payload(u: Unconfirmed, later: Observation, now: ActionOutcome) -> dict[str, Any]:
    """The ``late_change`` event's payload: what the step was judged on and what it came to."""
    return {
        "post_dhash": u.post.dhash, "later_dhash": later.dhash,
        "was": {"status": u.outcome.status, "detail": u.outcome.detail, "summary": u.outcome.summary},
        "now": {"status": now.status, "detail": now.detail, "summary": now.summary},
        "amended": (now.status, now.detail, now.summary) != (u.outcome.status, u.outcome.detail, u.outcome.summary),
        "outcome": now.to_dict(),
    }


def late_notice(step: int, payload: dict[str, Any]) -> str | None:
    """What the model is told when the screen changed after step ``step``'s post observation and
    that changed what the step came to (None when its outcome stands: the model sees the newer
    screen anyway)."""
    if not payload["amended"]:
        return None
    was, now = outcome_phrase(payload["was"]), outcome_phrase(payload["now"])
    return (f"The screen changed again after step {step}'s action was assessed: measured on this screen, "
            f"step {step} came to {now} (it was reported as {was}).")


class LateCheck:
    """The cheap screenshot at the next step's start that confirms (or not) a step's
    ``observed`` post observation, on a device whose reads are sequential."""

    def __init__(self, device: Device) -> None:
        self.device = device
        self.pending: Unconfirmed | None = None

    def start(self, u: Unconfirmed) -> None:
        """Remember ``u`` to confirm at the next step's start; on a concurrent device nothing
        is taken (see the module's doc)."""
        self.pending = None if concurrent_reads(self.device) else u

    def changed(self) -> Unconfirmed | None:
        """The pending step when the screen now differs from its post observation, else None
        (nothing pending, the same screen, or the capture failed)."""
        u, self.pending = self.pending, None
        if u is None:
            return None
        try:
            seen = dhash_hex(self.device.screenshot())
        except (ScreenshotError, DeviceOffline):
            return None  # cannot confirm: the observation stands, as settle() does
        return u if moved_on(u, seen) else None
