"""Similarity hint and loop detection (SPEC §10.5)."""

from __future__ import annotations

from artemis_cli.memory.similarity import SimilarityHint, repeated_action, similar_step

BASE = "f0e1d2c3b4a59687"


def flip(h: str, bits: int) -> str:
    """A hash ``bits`` Hamming distance away from ``h`` (flips the lowest bits)."""
    return f"{int(h, 16) ^ ((1 << bits) - 1):016x}"


FAR = flip(BASE, 40)


Row = tuple[int, str, int, str, str, str, bool]


def hist(*items: tuple[int, str], key: str = "k") -> list[Row]:
    """Recorded steps, every one the same action (key ``key``), their screens' UI unknown, none
    making lasting progress."""
    return [(step, dh, step * 10_000, f"action {step}", key, "", False) for step, dh in items]


def test_hint_render_is_pinned() -> None:
    hint = SimilarityHint(step=7, offset_ms=65_000, action='tap Button "Save" (id save) @(10,20)', distance=2,
                          via="press back")
    assert hint.render() == (
        'This screen closely resembles step 7 (T+01:05), reached the same way (press back); '
        'there you tap Button "Save" (id save) @(10,20).'
    )


def test_older_step_within_distance_gives_hint() -> None:
    history = hist((1, FAR), (2, flip(BASE, 2)), (3, FAR), (4, FAR), (5, FAR), (6, FAR), (7, FAR))
    hint = similar_step(history, BASE, current_step=8)
    assert hint == SimilarityHint(step=2, offset_ms=20_000, action="action 2", distance=2, via="action 7")


def test_a_screen_reached_another_way_is_no_loop() -> None:
    """The same screen again, but the step before it did something else, or on another screen:
    a task passing a page twice (Settings after each setting), not a cycle."""
    same_way = hist((1, FAR), (2, BASE), (3, FAR), (4, FAR), (5, FAR), (6, FAR), (7, FAR))
    assert similar_step(same_way, BASE, current_step=8) is not None
    other_action = [*same_way[:6], (7, FAR, 70_000, "action 7", "other", "", False)]
    assert similar_step(other_action, BASE, current_step=8) is None
    other_screen = [(1, flip(FAR, 20), 10_000, "action 1", "k", "", False), *same_way[1:]]
    assert similar_step(other_screen, BASE, current_step=8) is None
    assert similar_step(same_way[1:], BASE, current_step=8) is None  # nothing led to step 2


def test_alike_screens_holding_other_things_are_no_loop() -> None:
    """Where the UI is known, "the same screen" is the same UI: the alarm list with one more alarm,
    reached by the same OK on a dialog holding another time, is routine work, not a loop."""
    def steps(lead: str, match: str) -> list[Row]:
        rows = [(s, FAR, s * 10_000, f"action {s}", "k", f"ui{s}", False) for s in range(1, 8)]
        rows[0] = (1, FAR, 10_000, "action 1", "k", lead, False)
        rows[1] = (2, BASE, 20_000, "action 2", "k", match, False)
        rows[6] = (7, FAR, 70_000, "action 7", "k", "dialog", False)
        return rows
    assert similar_step(steps("dialog", "list"), BASE, current_step=8, current_screen="list") is not None
    assert similar_step(steps("dialog", "list"), BASE, current_step=8, current_screen="longer list") is None
    assert similar_step(steps("dialog 8:00", "list"), BASE, current_step=8, current_screen="list") is None
    assert similar_step(steps("", "list"), BASE, current_step=8, current_screen="") is not None  # unknown: dHash


def test_a_return_after_progress_is_routine_work() -> None:
    """Typed text that landed or a switch turned since the older step: the next alarm, not a loop."""
    rows = hist((1, FAR), (2, BASE), (3, FAR), (4, FAR), (5, FAR), (6, FAR), (7, FAR))
    assert similar_step(rows, BASE, current_step=8) is not None
    rows[3] = (4, FAR, 40_000, "type 'Tom'", "k", "", True)
    assert similar_step(rows, BASE, current_step=8) is None


def test_progress_counts_from_the_older_step_itself_up_to_the_current_one() -> None:
    """Progress at the older step or after it (before the current step) silences the hint;
    progress before it, or at or after the current step, does not."""
    def rows(at: int) -> list[Row]:
        out = hist((1, FAR), (2, BASE), (3, FAR), (4, FAR), (5, FAR), (6, FAR), (7, FAR), (9, FAR))
        return [(s, d, o, a, k, sc, s == at) for s, d, o, a, k, sc, _ in out]
    assert similar_step(rows(2), BASE, current_step=8) is None  # the older step itself made progress
    assert similar_step(rows(7), BASE, current_step=8) is None  # the step just before this one
    assert similar_step(rows(1), BASE, current_step=8) is not None  # before the older step
    assert similar_step(rows(9), BASE, current_step=8) is not None  # after the current step: not yet


class _Step(int):
    """A step number that counts the comparisons made with it."""

    seen = 0

    def _count(self) -> None:
        _Step.seen += 1

    def __lt__(self, other: object) -> bool:
        self._count()
        return int(self) < other  # type: ignore[operator]

    def __le__(self, other: object) -> bool:
        self._count()
        return int(self) <= other  # type: ignore[operator]

    def __gt__(self, other: object) -> bool:
        self._count()
        return int(self) > other  # type: ignore[operator]

    def __ge__(self, other: object) -> bool:
        self._count()
        return int(self) >= other  # type: ignore[operator]


def test_the_scan_is_linear_in_the_history_with_progress_on_every_step() -> None:
    """A long run where every step made progress (a switch toggled 500 times): each older step
    that looks alike is checked against the progress made since in one comparison, not against
    every progress step (that was 500 x 500 comparisons a turn, 7 ms by step 900)."""
    n = 500
    history = [(_Step(s), BASE, s * 1000, f"action {s}", "k", "", True) for s in range(1, n + 1)]
    _Step.seen = 0
    assert similar_step(history, flip(BASE, 1), current_step=n + 4) is None
    assert _Step.seen <= 8 * n, _Step.seen


def test_closest_wins_then_most_recent() -> None:
    closest = hist((1, FAR), (2, flip(BASE, 1)), (3, FAR), (4, flip(BASE, 4)), (5, FAR), (6, FAR), (7, FAR))
    hint = similar_step(closest, BASE, current_step=8)
    assert hint is not None and hint.step == 2 and hint.distance == 1
    tie = hist((1, FAR), (2, flip(BASE, 1)), (3, FAR), (4, flip(BASE, 1)), (5, FAR), (6, FAR), (7, FAR))
    hint = similar_step(tie, BASE, current_step=8)
    assert hint is not None and hint.step == 4 and hint.distance == 1


def test_threshold_boundary() -> None:
    filler = [(s, FAR) for s in range(3, 10)]
    at = hist((1, FAR), (2, flip(BASE, 5)), *filler)
    over = hist((1, FAR), (2, flip(BASE, 6)), *filler)
    assert similar_step(at, BASE, current_step=10) is not None
    assert similar_step(over, BASE, current_step=10) is None
    assert similar_step(over, BASE, current_step=10, max_distance=6) is not None


def test_recent_steps_never_hint_and_silence_older_matches() -> None:
    # only a recent step matches: nothing (the stuck detector's job)
    assert similar_step(hist((1, FAR), (5, BASE), (6, FAR), (7, FAR)), BASE, current_step=8) is None
    # a recent step matches as closely as an older one: silent
    assert similar_step(hist((1, BASE), (2, FAR), (6, BASE), (7, FAR)), BASE, current_step=8) is None
    # step 4 is just outside the last 3 (5, 6, 7): it may hint
    assert similar_step(hist((3, FAR), (4, BASE), (5, FAR), (6, FAR), (7, FAR)), BASE, current_step=8) is not None
    # any recent match silences the hint, even when an older step matches more closely (SPEC §10.5:
    # "Silent when a recent step matches")
    assert similar_step(hist((1, BASE), (6, flip(BASE, 3)), (7, FAR)), BASE, current_step=8) is None
    # the case: a recent step at distance 4 and an older one at 0
    assert similar_step(hist((1, BASE), (2, FAR), (3, FAR), (4, FAR), (5, FAR), (6, FAR), (7, flip(BASE, 4))), BASE,
                        current_step=8) is None
    # a recent step just outside the distance does not silence it
    hint = similar_step(hist((1, flip(BASE, 6)), (2, BASE), (5, FAR), (6, FAR), (7, flip(BASE, 6))), BASE,
                        current_step=8)
    assert hint is not None and hint.step == 2 and hint.distance == 0


def test_scan_cap() -> None:
    history = hist((1, FAR), (2, BASE), *[(s, FAR) for s in range(3, 602)])
    assert similar_step(history, BASE, current_step=602) is None  # step 2 is 600 back
    assert similar_step(history, BASE, current_step=502) is not None  # exactly 500 back
    assert similar_step(history, BASE, current_step=602, scan=600) is not None


def test_ignores_future_missing_and_malformed_hashes() -> None:
    history = hist((1, ""), (2, "not-hex"), (3, BASE[:8]), (9, BASE), (10, BASE))
    assert similar_step(history, BASE, current_step=8) is None
    assert similar_step([], BASE, current_step=1) is None


def test_repeated_action_three_times_on_same_screen() -> None:
    key = "tap|Button|save"
    history = [(1, FAR, "other"), (2, BASE, key), (3, flip(BASE, 1), key)]
    assert repeated_action(history, BASE, key) is True
    assert repeated_action(history, BASE, "tap|Button|cancel") is False
    assert repeated_action(history, FAR, key) is False  # different screen now
    assert repeated_action(history[:2], BASE, key) is False  # only twice
    assert repeated_action([(2, BASE, key), (3, FAR, key)], BASE, key) is False  # screen changed between
    # an intervening different action breaks the streak
    assert repeated_action([(1, BASE, key), (2, BASE, "press back"), (3, BASE, key)], BASE, key) is False
    assert repeated_action(history, BASE, key, times=4) is False
    assert repeated_action([(1, BASE, key), *history], BASE, key, times=4) is False  # step 1 then "other"
    assert repeated_action([(3, BASE, key), (2, BASE, key)], BASE, key) is True  # order-independent input


def test_repeated_action_distance_boundary() -> None:
    key = "swipe up"
    history = [(1, flip(BASE, 3), key), (2, flip(BASE, 3), key)]
    assert repeated_action(history, BASE, key, max_distance=3) is True
    assert repeated_action(history, BASE, key, max_distance=2) is False
