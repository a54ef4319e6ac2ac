"""Find a recorded action's target on the current screen by its semantics.

A candidate (every indexed element of the current screen) is scored on the recorded target's
resource-id, content-desc, text and class. Identity fields that disagree cost points, so another
row's switch (same id, other content-desc) loses to a button whose label was merely renamed (same
id, other text). Ties are broken by the target's *context* (the labels around it in the recorded
dump: "Delete alarm" in the "Bedtime" row, not in the "Wake up" row), then by the distance to the
recorded bounds scaled to the current screen.
"""

from __future__ import annotations

from dataclasses import dataclass

from artemis_cli.perception.hittest import target_for_element
from artemis_cli.perception.types import Bounds, Element, Target, UINode, UITree

#: A candidate needs at least this score to count as the recorded element.
MIN_SCORE = 4

W_RESOURCE_ID = 4
W_CONTENT_DESC = 3
W_TEXT = 2
W_CLASS = 1
P_RESOURCE_ID = 4  # both set and different
P_CONTENT_DESC = 4
P_TEXT = 1  # texts change (switch ON/OFF, field contents, renamed labels): a small penalty


@dataclass(frozen=True)
class TargetMatch:
    """Where the recorded target is now."""

    element: Element | None
    target: Target
    x: int
    y: int
    how: str  # "semantics" | "coordinates"
    score: int = 0
    context: float = 0.0
    exact: bool = False  # same bounds as recorded (after scaling) and same identity
    candidates: int = 0


def scale_point(x: int, y: int, recorded: tuple[int, int], current: tuple[int, int]) -> tuple[int, int]:
    """Recorded pixel coordinates mapped to the current screen size."""
    rw, rh = recorded
    cw, ch = current
    if rw <= 0 or rh <= 0:
        return x, y
    return round(x * cw / rw), round(y * ch / rh)


def scale_bounds(b: tuple[int, int, int, int], recorded: tuple[int, int], current: tuple[int, int]) -> tuple[int, ...]:
    left, top = scale_point(b[0], b[1], recorded, current)
    right, bottom = scale_point(b[2], b[3], recorded, current)
    return (left, top, right, bottom)


def contradicts(recorded: Target, now: Target) -> bool:
    """Whether what is at a recorded point now is plainly another element than the recorded one:
    both carry labels, and they share no id, text or description (a "Log out" where "More
    options" was). A tap there would do something the recording never did."""
    if recorded.label_source == "none" or now.label_source == "none":
        return False
    return not any(mine and mine == theirs for mine, theirs in (
        (recorded.resource_id, now.resource_id), (recorded.text, now.text),
        (recorded.content_desc, now.content_desc)))


def score(recorded: Target, candidate: Target) -> int:
    s = 0
    for mine, theirs, gain, loss in (
        (recorded.resource_id, candidate.resource_id, W_RESOURCE_ID, P_RESOURCE_ID),
        (recorded.content_desc, candidate.content_desc, W_CONTENT_DESC, P_CONTENT_DESC),
        (recorded.text, candidate.text, W_TEXT, P_TEXT),
    ):
        if mine and theirs:
            s += gain if mine == theirs else -loss
        elif mine and not theirs:
            s -= loss if gain > W_TEXT else 0
    if recorded.class_name and recorded.class_name == candidate.class_name:
        s += W_CLASS
    return s


def _parent_path(path: str) -> str | None:
    return path.rsplit(".", 1)[0] if "." in path else None


def context_labels(tree: UITree, node: UINode, levels: int = 3) -> frozenset[str]:
    """Labels of the nodes that share the target's nearest labelled ancestor (itself excluded)."""
    by_path = {n.path: n for n in tree.nodes}
    path: str | None = node.path
    for _ in range(levels):
        path = _parent_path(path) if path else None
        if path is None or path not in by_path:
            break
        prefix = path + "."
        labels = {
            (n.text or n.content_desc)
            for n in tree.nodes
            if n.path.startswith(prefix) and n.path != node.path and (n.text or n.content_desc)
        }
        if labels:
            return frozenset(labels)
    return frozenset()


def find_recorded_node(tree: UITree, target: Target) -> UINode | None:
    """The node of the recorded dump the target was taken from (same bounds and identity)."""
    if target.bounds is None:
        return None
    for n in tree.nodes:
        b = n.bounds
        if (b.left, b.top, b.right, b.bottom) == tuple(target.bounds) and n.resource_id == target.resource_id \
                and n.class_name == target.class_name:
            return n
    return None


def _jaccard(a: frozenset[str], b: frozenset[str]) -> float:
    if not a and not b:
        return 0.0
    return len(a & b) / len(a | b)


def _distance(a: Bounds, b: tuple[int, ...] | None) -> float:
    if b is None:
        return 0.0
    ax, ay = a.center
    bx, by = (b[0] + b[2]) / 2, (b[1] + b[3]) / 2
    return float(((ax - bx) ** 2 + (ay - by) ** 2) ** 0.5)


def find_by_semantics(
    recorded: Target,
    elements: list[Element],
    tree: UITree,
    *,
    recorded_tree: UITree | None = None,
    recorded_size: tuple[int, int],
    current_size: tuple[int, int],
) -> TargetMatch | None:
    """The best-scoring element for ``recorded``, or None when nothing scores ``MIN_SCORE``."""
    if recorded.label_source == "none" or not (recorded.resource_id or recorded.text or recorded.content_desc):
        return None
    want_bounds = scale_bounds(recorded.bounds, recorded_size, current_size) if recorded.bounds else None
    want_context: frozenset[str] = frozenset()
    if recorded_tree is not None:
        node = find_recorded_node(recorded_tree, recorded)
        if node is not None:
            want_context = context_labels(recorded_tree, node)
    ranked: list[tuple[int, float, float, Element, Target]] = []
    for el in elements:
        cand = target_for_element(el)
        s = score(recorded, cand)
        if s < MIN_SCORE:
            continue
        ctx = _jaccard(want_context, context_labels(tree, el.node)) if want_context else 0.0
        ranked.append((s, ctx, _distance(el.node.bounds, want_bounds), el, cand))
    if not ranked:
        return None
    ranked.sort(key=lambda r: (-r[0], -r[1], r[2]))
    s, ctx, _dist, el, cand = ranked[0]
    b = el.node.bounds
    exact = (
        want_bounds is not None
        and (b.left, b.top, b.right, b.bottom) == tuple(want_bounds)
        and cand.resource_id == recorded.resource_id
        and cand.content_desc == recorded.content_desc
        and cand.text == recorded.text
        and cand.class_name == recorded.class_name
    )
    x, y = el.center
    return TargetMatch(el, cand, x, y, "semantics", s, ctx, exact, len(ranked))


#: Key-element labels of two screens must overlap this much (Jaccard) when their dHashes differ.
SCREEN_LABELS_MIN = 0.8


def key_labels(elements: list[Element]) -> frozenset[str]:
    """The labels of a screen's elements: what a person names the screen by."""
    return frozenset(e.label for e in elements if e.label)


def tree_labels(tree: UITree) -> frozenset[str]:
    """The texts and descriptions of every node of a dump, behind a dialog too."""
    return frozenset(t for n in tree.nodes for t in (n.text, n.content_desc) if t)


def screen_matches(
    recorded: Target,
    recorded_elements: list[Element],
    recorded_dhash: str | None,
    dhash_distance: int | None,
    elements: list[Element],
    tree: UITree,
    *,
    recorded_size: tuple[int, int],
    current_size: tuple[int, int],
    recorded_tree: UITree | None = None,
    dhash_max: int = 10,
) -> bool:
    """Whether the current screen is the recorded pre-step screen of a step: the same picture
    (dHash within ``dhash_max``) or the same key elements (label Jaccard >= SCREEN_LABELS_MIN),
    and the step's recorded target (when it has one) found on it by its semantics."""
    same_picture = recorded_dhash is not None and dhash_distance is not None and dhash_distance <= dhash_max
    same_labels = _jaccard(key_labels(recorded_elements), key_labels(elements)) >= SCREEN_LABELS_MIN
    if same_labels and recorded_tree is not None:
        # under a dialog the element list holds the dialog alone: the same promotion over the
        # catalogue and over the cart would be "the same screen", and a rejoin there would skip
        # the steps between them. The screen behind must match as well.
        same_labels = _jaccard(tree_labels(recorded_tree), tree_labels(tree)) >= SCREEN_LABELS_MIN
    if not (same_picture or same_labels):
        return False
    if recorded.label_source == "none" or not (recorded.resource_id or recorded.text or recorded.content_desc):
        return True
    return find_by_semantics(recorded, elements, tree, recorded_tree=recorded_tree,
                             recorded_size=recorded_size, current_size=current_size) is not None
