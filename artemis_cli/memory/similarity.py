"""Similarity hint and loop detection (SPEC §10.5), pure functions over recorded dHashes.

* :func:`similar_step` — the current screenshot is within ``max_distance`` bits of an *older*
  step's (not one of the last ``recent`` steps; at most ``scan`` steps back): the tail says
  "This screen closely resembles step N (T+mm:ss), where you …". Silent (``None``) when any of
  the recent steps matches within ``max_distance`` at all, however close the older match is —
  being stuck on one screen is the stuck detector's job (SPEC §10.5).
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

    def render(self) -> str:
        return f"This screen closely resembles step {self.step} ({format_offset(self.offset_ms)}), where you {self.action}."


def distance(a: str | None, b: str | None) -> int | None:
    """Hamming distance of two hex dHashes; None when either is missing or they are not comparable."""
    if not a or not b:
        return None
    try:
        return hamming(a, b)
    except ValueError:
        return None


def similar_step(
    history: Sequence[tuple[int, str, int, str]],
    current_dhash: str,
    *,
    current_step: int,
    recent: int = 3,
    max_distance: int = DEFAULT_MAX_DISTANCE,
    scan: int = SCAN_STEPS,
) -> SimilarityHint | None:
    """The closest older step to ``current_dhash`` within ``max_distance`` bits, or None.

    ``history`` holds ``(step, pre_dhash, offset_ms, action_phrase)`` of recorded steps (any
    order; steps at or after ``current_step`` are ignored). The last ``recent`` steps before
    ``current_step`` never produce a hint, and when any of them is within ``max_distance`` there
    is no hint at all. Only steps ``current_step - scan`` and later are looked at. Ties prefer
    the most recent older step.
    """
    lowest = current_step - scan
    recent_from = current_step - recent
    best: tuple[int, int, int, str] | None = None  # (distance, -step, offset, action)
    for step, dhash, offset_ms, action in history:
        if step >= current_step or step < lowest:
            continue
        d = distance(dhash, current_dhash)
        if d is None or d > max_distance:
            continue
        if step >= recent_from:
            return None  # a recent step matches: the stuck detector's job, not a hint
        candidate = (d, -step, offset_ms, action)
        if best is None or candidate[:2] < best[:2]:
            best = candidate
    if best is None:
        return None
    d, neg_step, offset_ms, action = best
    return SimilarityHint(step=-neg_step, offset_ms=offset_ms, action=action, distance=d)


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
