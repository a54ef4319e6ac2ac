"""Compare a replayed step with its recording.

Pixels alone cannot judge a replay on a differently laid-out screen, and a 64-bit dHash barely
moves when one switch flips. So the check is semantic first: the *change* the recorded action
made (key elements that appeared or disappeared between the recorded pre- and post-screens) must
happen again on the current screens, and the foreground app must be the recorded one. The dHash
distance to the recorded post-screen then tells ``matched`` (same picture) from ``retargeted``.

A key element is (short resource-id, text, content-desc, checked, selected) of every labelled or
identified node outside the status bar.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from artemis_cli.perception.dhash import hamming
from artemis_cli.perception.hittest import hit_test
from artemis_cli.perception.types import Element, Target, UITree

if TYPE_CHECKING:
    from artemis_cli.engine.records import StepRecord
    from artemis_cli.operators.act import PlannedAction
    from artemis_cli.operators.observe import Observation
    from artemis_cli.replay.match import TargetMatch

#: dHash distance (bits of 64) up to which the post-screen counts as the recorded picture.
DHASH_MATCH_MAX = 6
#: Share of each half of the recorded change (appeared / disappeared elements) that must be seen again.
CHANGE_OVERLAP_MIN = 0.5

_IGNORED_PACKAGES = ("com.android.systemui",)

Key = tuple[str, str, str, bool, bool]


def screen_keys(tree: UITree | None) -> frozenset[Key]:
    if tree is None:
        return frozenset()
    keys: set[Key] = set()
    for n in tree.nodes:
        if n.package in _IGNORED_PACKAGES:
            continue
        rid = n.resource_id.rsplit("/", 1)[-1]
        if not (rid or n.text or n.content_desc):
            continue
        keys.add((rid, n.text, n.content_desc, n.checked, n.selected))
    return frozenset(keys)


def screen_nodes(tree: UITree | None) -> frozenset[tuple[str, str, str, tuple[int, int, int, int]]]:
    """The labelled or identified nodes outside the status bar *with their bounds*: two rows that
    both read "In cart: 2" are two nodes here (one key for ``screen_keys``), so a count that moved
    from one row to another is a change."""
    if tree is None:
        return frozenset()
    return frozenset(
        (n.resource_id, n.text, n.content_desc, (n.bounds.left, n.bounds.top, n.bounds.right, n.bounds.bottom))
        for n in tree.nodes
        if n.package not in _IGNORED_PACKAGES and (n.resource_id or n.text or n.content_desc)
    )


def nodes_similarity(a: UITree | None, b: UITree | None) -> float:
    """Jaccard of two screens' ``screen_nodes``: how exactly one screen is the other."""
    na, nb = screen_nodes(a), screen_nodes(b)
    return len(na & nb) / len(na | nb) if na or nb else 1.0


@dataclass(frozen=True)
class PostCheck:
    ok: bool
    overlap: float | None  # None: the recorded action changed no key element
    expected_changes: int
    seen_changes: int
    foreground_ok: bool
    detail: str


def check_change(
    rec_pre: UITree | None,
    rec_post: UITree | None,
    cur_pre: UITree | None,
    cur_post: UITree | None,
    *,
    rec_foreground: str | None,
    cur_foreground: str | None,
) -> PostCheck:
    """Did the current action change the screen the way the recorded one did?"""
    fg_ok = not (rec_foreground and cur_foreground and rec_foreground != cur_foreground)
    if rec_post is None:
        return PostCheck(fg_ok, None, 0, 0, fg_ok, "" if fg_ok else "foreground app differs")
    k_rec_pre, k_rec_post = screen_keys(rec_pre), screen_keys(rec_post)
    k_pre, k_post = screen_keys(cur_pre), screen_keys(cur_post)
    appeared, vanished = k_rec_post - k_rec_pre, k_rec_pre - k_rec_post
    vanished_observable = vanished & k_pre  # what was never on this screen cannot disappear from it
    cur_appeared, cur_vanished = k_post - k_pre, k_pre - k_post
    seen_appeared = len(appeared & cur_appeared)
    seen_vanished = len(vanished_observable & cur_vanished)
    expected = len(appeared) + len(vanished_observable)
    seen = seen_appeared + seen_vanished
    if not fg_ok:
        return PostCheck(False, None, expected, seen, False,
                         f"foreground app is {cur_foreground}, recorded {rec_foreground}")
    if not appeared and not vanished:
        return PostCheck(True, None, 0, 0, True, "")
    if expected == 0:  # the recorded change removed elements this screen never had
        return PostCheck(False, 0.0, len(vanished), 0, True,
                         "the elements the recorded action changed are not on this screen")
    # Each half of the recorded change must be seen again on its own: appearing elements, and
    # disappearing ones (a tap that merely leaves the screen would otherwise pass on the latter).
    ok = all(
        len(want) == 0 or got / len(want) >= CHANGE_OVERLAP_MIN
        for want, got in ((appeared, seen_appeared), (vanished_observable, seen_vanished))
    )
    overlap = seen / expected
    detail = "" if ok else (
        f"the screen did not change as recorded: {seen} of {expected} expected element changes seen"
        + (" (nothing changed)" if not cur_appeared and not cur_vanished else "")
    )
    return PostCheck(ok, overlap, expected, seen, True, detail)


def only_removed(rec_pre: UITree | None, rec_post: UITree | None) -> bool:
    """Whether the recorded action only took elements away (dismissed a pop-up, closed a menu):
    nothing appeared that was not on the screen before it. Unknown screens say no."""
    if rec_pre is None or rec_post is None:
        return False
    return screen_keys(rec_post) <= screen_keys(rec_pre)


# --- what a replayed step did --------------------------------------------------------------


def changed(pre: Observation, post: Observation) -> bool:
    """Whether an action changed the screen (its key elements or the foreground app)."""
    return pre.foreground != post.foreground or screen_nodes(pre.tree) != screen_nodes(post.tree)


def reached(action: PlannedAction, pre: Observation, match: TargetMatch | None) -> bool:
    """Whether a tap at the located element reached it: nothing (a pop-up, a dialog) lay over it.
    Its effect may be off screen (a count in a menu), so an unchanged screen alone does not say
    the tap did nothing."""
    el = match.element if match is not None else None
    if el is None or action.x is None or action.y is None or action.type not in ("tap", "double_tap", "long_press"):
        return False
    if match is not None and match.how != "semantics":
        return False  # the recorded point hit whatever is there now, not the recorded element
    b = el.node.bounds
    if hit_test(pre.tree, action.x, action.y).bounds != (b.left, b.top, b.right, b.bottom):
        return False
    # and no dialog or pop-up window above the element's: a modal one takes every touch
    from artemis_cli.perception.windows import Layer, order_windows

    index = next((i for i, n in enumerate(pre.tree.nodes) if n is el.node), -1)
    app_windows = [w for w in order_windows(pre.tree) if w.layer == Layer.APP and w.catches_touches]
    return bool(app_windows) and app_windows[-1].root <= index < app_windows[-1].end


def step_done(action: PlannedAction, pre: Observation, post: Observation, match: TargetMatch | None, *,
              blind: bool) -> bool:
    """Whether a replayed action did the recorded step: it reached the recorded element, or it
    changed the screen -- unless it was ``blind`` (a labelled target not found by semantics and
    tapped at its recorded point): whatever changed then, the recorded element was not tapped."""
    return (changed(pre, post) and not blind) or reached(action, pre, match)


def element_at(elements: list[Element], x: int, y: int) -> Element | None:
    inside = [e for e in elements if e.node.bounds.contains(x, y)]
    return min(inside, key=lambda e: e.node.bounds.area) if inside else None


def finishes_here(rec: StepRecord, rec_pre: UITree | None, pre: Observation, recorded_size: tuple[int, int],
                  size: tuple[int, int]) -> bool:
    """Whether ``pre`` is the screen the recording's finish step was taken on (the same picture,
    or the same key elements: ``match.screen_matches``)."""
    if rec_pre is None:
        return True  # nothing to compare with (an old or damaged recording): as before
    from artemis_cli.perception.elements import index_elements
    from artemis_cli.replay.match import screen_matches

    dist = hamming(rec.pre_dhash, pre.dhash) if rec.pre_dhash else None
    return screen_matches(Target(), index_elements(rec_pre), rec.pre_dhash, dist, pre.elements, pre.tree,
                          recorded_size=recorded_size, current_size=size, recorded_tree=rec_pre)
