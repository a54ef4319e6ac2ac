"""Where to tap an element: a point of its visible part that hit-tests to it.

The element list tells the model a centre per element and a tap by index taps there, so that
point must land on the element (:func:`~artemis_cli.perception.hittest.hit_test` agrees):

* the centre of the element's on-screen bounds when it does;
* else the centre of the largest piece of the element left once everything that takes touches
  before it is cut away — windows drawn above it, and within its window the nodes the touch is
  offered to first (actionable nodes drawn over it or inside it: a floating button over a row,
  a button in a row; labelled nodes before a labelled one) — checked with the hit test;
* nothing when windows above cover the element entirely, or it lies outside its own window's
  bounds: it cannot be seen or touched.

What counts as landing on the element: itself; for text inside a control (its nearest actionable
ancestor takes taps) the control, since a tap on the text is a tap on the control; for anything
that scrolls, any node inside it (a list is listed for swiping, and its centre is a row of it).
"""

from __future__ import annotations

from dataclasses import dataclass

from artemis_cli.perception.hittest import SCROLL, TAP, TEXT, HitIndex
from artemis_cli.perception.types import Bounds

__all__ = ["Budget", "Placement", "place", "visible_center"]

Rect = tuple[int, int, int, int]
_MAX_RECTS = 256  # pieces kept while cutting (the largest); bounds the work on huge dumps
_MAX_BLOCKERS = 4000  # beyond this many, sample a grid instead of cutting
_TRIES = 24  # pieces whose centres are checked with the hit test
_GRID = 9  # fallback sampling: a 9 x 9 grid over the element
SEARCH_BUDGET = 2_000_000  # candidate visits per element list; see :class:`Budget`


@dataclass(frozen=True)
class Placement:
    """``point``: where to tap (pixels), None when the element cannot be touched.
    ``covered``: windows above cover it entirely.  ``lands_on``: the node the point hits.
    ``searched``: False when the budget had run out: the point was not checked."""

    point: tuple[int, int] | None
    covered: bool = False
    lands_on: int | None = None
    searched: bool = True


@dataclass
class Budget:
    """Work left for checking and searching, in candidate nodes looked at; one per element list.

    A real screen needs a few thousand; a dump of a hundred thousand overlapping nodes would need
    billions.  Once it has run out, the remaining elements are still kept out when windows above
    cover them, but get the centre of what those windows leave, unchecked — so one observation
    costs at most about a second here, whatever the dump."""

    remaining: int = SEARCH_BUDGET


def visible_center(bounds: Bounds, width: int, height: int) -> tuple[int, int]:
    """Centre of the on-screen part of ``bounds`` (the raw centre when none is on screen)."""
    left, right = max(bounds.left, 0), min(bounds.right, width)
    top, bottom = max(bounds.top, 0), min(bounds.bottom, height)
    if right <= left or bottom <= top:
        return bounds.center
    return (left + right) // 2, (top + bottom) // 2


def _cut(rects: list[Rect], box: Rect) -> list[Rect]:
    """``rects`` minus ``box``: every piece split into at most four."""
    bl, bt, br, bb = box
    out: list[Rect] = []
    for rect in rects:
        left, top, right, bottom = rect
        if bl >= right or br <= left or bt >= bottom or bb <= top:
            out.append(rect)
            continue
        if top < bt:
            out.append((left, top, right, bt))
        if bb < bottom:
            out.append((left, bb, right, bottom))
        mid_top, mid_bottom = max(top, bt), min(bottom, bb)
        if left < bl:
            out.append((left, mid_top, bl, mid_bottom))
        if br < right:
            out.append((br, mid_top, right, mid_bottom))
    if len(out) > _MAX_RECTS:
        out.sort(key=lambda r: -(r[2] - r[0]) * (r[3] - r[1]))
        del out[_MAX_RECTS:]
    return out


class _Goal:
    """Which hits count as landing on element ``i``, and which nodes may take its points."""

    def __init__(self, index: HitIndex, i: int) -> None:
        structure = index.structure
        self.i = i
        self.kind = index.kinds[i]
        # Anything that scrolls is listed for swiping: a point on a row of it will do.
        self.swipe = index.tree.nodes[i].scrollable
        self.end = structure.subtree_end[i]
        self.owner = i
        if self.kind == TEXT:
            ancestor = structure.nearest_actionable_ancestor(i)
            if ancestor >= 0 and index.kinds.get(ancestor) == TAP:
                self.owner = ancestor
        self._subtree_end = structure.subtree_end
        self.rank = index.rank[i]
        self.owner_rank = index.rank[self.owner]

    def accepts(self, hit: int | None) -> bool:
        if hit is None:
            return False
        if self.swipe:
            return self.i <= hit < self.end
        return hit == self.owner

    def blocks(self, rank: int, j: int, kind: int) -> bool:
        """May node ``j`` (its touch-order ``rank``) take a point of the element?  (A superset:
        every point is re-checked.)  An actionable node takes the points it shares with the goal
        when the touch is offered to it first (a lower rank: drawn over it, or inside it)."""
        if j == self.owner:
            return False
        if self.swipe:
            return kind != TEXT and not (self.i <= j < self.end) and rank < self.rank
        if self.owner != self.i or self.kind == TAP:
            return kind != TEXT and rank < self.owner_rank
        if kind != TEXT:  # labelled element: any actionable node over it, bar the lists it is in
            return not (kind == SCROLL and j < self.i < self._subtree_end[j])
        return rank < self.rank


def _centre(rect: Rect) -> tuple[int, int]:
    return (rect[0] + rect[2]) // 2, (rect[1] + rect[3]) // 2


def _area(rect: Rect) -> int:
    return (rect[2] - rect[0]) * (rect[3] - rect[1])


def place(index: HitIndex, i: int, budget: Budget | None = None) -> Placement:
    """Where to tap node ``i`` (a visible hit-test candidate): see the module docstring."""
    budget = budget if budget is not None else Budget()
    tree = index.tree
    b = tree.nodes[i].bounds
    position = index.window_of[i]
    w = index.windows[position].bounds  # a window shows (and takes touches) only within its bounds
    box = (
        max(b.left, w.left, 0),
        max(b.top, w.top, 0),
        min(b.right, w.right, tree.screen_width),
        min(b.bottom, w.bottom, tree.screen_height),
    )
    if box[2] <= box[0] or box[3] <= box[1]:
        return Placement(None)
    visible = [box]
    for window in index.windows_above(position):
        w = window.bounds
        visible = _cut(visible, (w.left, w.top, w.right, w.bottom))
    if not visible:
        return Placement(None, covered=True)
    first = _centre(box)  # the centre of the on-screen part, as long as it is inside its window
    if budget.remaining <= 0:
        fx, fy = first
        if not any(r[0] <= fx < r[2] and r[1] <= fy < r[3] for r in visible):
            first = _centre(max(visible, key=_area))
        return Placement(first, searched=False)
    before = index.visits
    try:
        return _search(index, _Goal(index, i), first, visible, budget)
    finally:
        budget.remaining -= index.visits - before + 1


def _search(
    index: HitIndex, goal: _Goal, first: tuple[int, int], visible: list[Rect], budget: Budget
) -> Placement:
    hit = index.hit(*first)
    if goal.accepts(hit):
        return Placement(first, lands_on=hit)
    tree = index.tree
    if goal.owner != goal.i:  # text in a control: only where the control is
        o = tree.nodes[goal.owner].bounds
        clipped = [
            (max(v[0], o.left), max(v[1], o.top), min(v[2], o.right), min(v[3], o.bottom)) for v in visible
        ]
        visible = [r for r in clipped if r[0] < r[2] and r[1] < r[3]]
    if not visible:
        return Placement(None)
    left = min(r[0] for r in visible)
    top = min(r[1] for r in visible)
    right = max(r[2] for r in visible)
    bottom = max(r[3] for r in visible)
    nearby = index.window_index(index.window_of[goal.i]).overlapping(left, top, right, bottom)
    blockers = [c for c in nearby if goal.blocks(c[4], c[5], c[6])]
    budget.remaining -= len(nearby)
    pieces = list(visible)
    exact = len(blockers) <= _MAX_BLOCKERS
    if exact:
        for c in blockers:
            budget.remaining -= len(pieces)
            pieces = _cut(pieces, c[:4])
            exact = exact and len(pieces) < _MAX_RECTS
            if not pieces:
                break
    pieces.sort(key=lambda r: (-_area(r), r[1], r[0]))
    for rect in pieces[:_TRIES]:
        point = _centre(rect)
        hit = index.hit(*point)
        if goal.accepts(hit):
            return Placement(point, lands_on=hit)
    if exact:
        return Placement(None)
    for rect in visible[:_TRIES]:  # the cut was capped and may have missed a piece: sample
        for gy in range(_GRID):
            for gx in range(_GRID):
                point = (
                    rect[0] + (rect[2] - rect[0]) * (2 * gx + 1) // (2 * _GRID),
                    rect[1] + (rect[3] - rect[1]) * (2 * gy + 1) // (2 * _GRID),
                )
                hit = index.hit(*point)
                if goal.accepts(hit):
                    return Placement(point, lands_on=hit)
    return Placement(None)
