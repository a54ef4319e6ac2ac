"""Similarity hint and loop detection (SPEC §10.5), pure functions over recorded dHashes.

* :func:`similar_step` — the current screenshot is within ``max_distance`` bits of an *older*
  step's (not one of the last ``recent`` steps; at most ``scan`` steps back) *and* was reached the
  same way: the step before that older one did the same action on the same screen as the step
  that led here (a cycle, not a screen a task merely passes twice, like a settings page it comes
  back to). The tail says "This screen closely resembles step N (T+mm:ss), reached the same way
  (…); there you …". Silent (``None``) when any of the recent steps matches within
  ``max_distance`` at all, however close the older match is — being stuck on one screen is the
  stuck detector's job (SPEC §10.5).
* :func:`repeated_action` — the same action on the same screen ``times`` times in a row.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from artemis_cli.engine.clock import format_offset
from artemis_cli.perception.dhash import hamming

__all__ = [
    "DEFAULT_MAX_DISTANCE",
    "SAME_SCREEN_DISTANCE",
    "SCAN_STEPS",
    "SimilarityHint",
    "distance",
    "repeated_action",
    "similar_step",
]

DEFAULT_MAX_DISTANCE = 5  # memory.transcript.similarity_max_distance (SPEC §13)
SAME_SCREEN_DISTANCE = 3  # loop detection: "the same screen" allows a blinking cursor or a clock
SCAN_STEPS = 500  # the similarity hint looks at most this many steps back (SPEC §10.5)


@dataclass(frozen=True)
class SimilarityHint:
    step: int
    offset_ms: int
    action: str  # the action phrase recorded at that step
    distance: int
    via: str = ""  # the action that led to both screens (its phrase)

    def render(self) -> str:
        way = f", reached the same way ({self.via})" if self.via else ""
        return (f"This screen closely resembles step {self.step} ({format_offset(self.offset_ms)}){way}; "
                f"there you {self.action}.")


def distance(a: str | None, b: str | None) -> int | None:
    """Hamming distance of two hex dHashes; None when either is missing or they are not comparable."""
    if not a or not b:
        return None
    try:
        return hamming(a, b)
    except ValueError:
        return None


def similar_step(
    history: Sequence[tuple[int, str, int, str, str, str, bool]],
    current_dhash: str,
    *,
    current_step: int,
    current_screen: str = "",
    recent: int = 3,
    max_distance: int = DEFAULT_MAX_DISTANCE,
    scan: int = SCAN_STEPS,
) -> SimilarityHint | None:
    """The closest older step to ``current_dhash`` within ``max_distance`` bits that was reached
    the same way as this screen, or None.

    ``history`` holds ``(step, pre_dhash, offset_ms, action_phrase, action_key, screen,
    progress)`` of recorded steps (any order; steps at or after ``current_step`` are ignored);
    ``screen`` is a fingerprint of the UI the step started on ("" when unknown), ``progress``
    whether the step changed something that stays (typed text, a switch turned): an older step
    with progress made since is no loop. "Reached the same way": the step
    just before the older one has the same action key as the step just before ``current_step``,
    on the same screen. "The same screen": equal fingerprints where both are known (a list with
    one more alarm, a field holding other text is another screen), else within ``max_distance``
    bits. So work that repeats a routine (ten alarms, two contacts) is not a loop. The last ``recent`` steps
    before ``current_step`` never produce a hint, and when any of them is within
    ``max_distance`` there is no hint at all. Only steps ``current_step - scan`` and later are
    looked at. Ties prefer the most recent older step.
    """
    lowest = current_step - scan
    recent_from = current_step - recent
    by_step = {item[0]: item for item in history}
    came = by_step.get(current_step - 1)  # the step that led to this screen
    best: tuple[int, int, int, str, str] | None = None  # (distance, -step, offset, action, via)
    # progress made since an older step: some progress step p with step <= p < current_step, i.e.
    # the latest such p is at or after it (one number, not a scan of every progress step per
    # candidate: that made each turn O(steps x progress steps), 7 ms a turn by step 900)
    last_progress = max((item[0] for item in history if item[6] and item[0] < current_step), default=None)
    for step, dhash, offset_ms, action, _, screen, _ in history:
        if step >= current_step or step < lowest:
            continue
        d = distance(dhash, current_dhash)
        if d is None or d > max_distance:
            continue
        if step >= recent_from:
            return None  # a recent step matches: the stuck detector's job, not a hint
        if screen and current_screen and screen != current_screen:
            continue  # looks alike, holds other things
        if last_progress is not None and step <= last_progress:
            continue  # something was done since: the same routine again (the next alarm), not a loop
        before = by_step.get(step - 1)
        if came is None or before is None or before[4] != came[4]:
            continue  # reached another way: a screen the task passes again, not a loop
        if not _same_screen(before, came, max_distance):
            continue
        candidate = (d, -step, offset_ms, action, came[3])
        if best is None or candidate[:2] < best[:2]:
            best = candidate
    if best is None:
        return None
    d, neg_step, offset_ms, action, via = best
    return SimilarityHint(step=-neg_step, offset_ms=offset_ms, action=action, distance=d, via=via)


def _same_screen(a: tuple[int, str, int, str, str, str, bool], b: tuple[int, str, int, str, str, str, bool],
                 max_distance: int) -> bool:
    if a[5] and b[5]:
        return a[5] == b[5]
    d = distance(a[1], b[1])
    return d is not None and d <= max_distance


def repeated_action(
    history: Sequence[tuple[int, str, str]],
    current_dhash: str,
    action_key: str,
    *,
    times: int = 3,
    max_distance: int = SAME_SCREEN_DISTANCE,
) -> bool:
    """True when ``action_key`` on this screen makes ``times`` in a row (loop detection).

    ``history`` holds ``(step, pre_dhash, action_key)`` of the recorded steps; the current,
    not yet recorded action counts as one, so the last ``times - 1`` recorded steps must be the
    same action on a screen within ``max_distance`` bits of ``current_dhash``.
    ``action_key`` is whatever identifies an action (e.g. type + element semantics + args).
    """
    if times <= 1:
        return True
    ordered = sorted(history, key=lambda item: item[0])[-(times - 1) :]
    if len(ordered) < times - 1:
        return False
    for _, dhash, key in ordered:
        d = distance(dhash, current_dhash)
        if key != action_key or d is None or d > max_distance:
            return False
    return True
