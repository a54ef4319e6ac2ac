"""What is under a coordinate: the semantics recorded with every coordinate action.

The rule follows Android's touch dispatch (``ViewGroup.dispatchTouchEvent``), which supersedes
SPEC §6's "smallest actionable node" where they differ:

1. **Window.**  Windows are ordered as the screen draws them (:mod:`~artemis_cli.perception.windows`);
   the topmost window that catches touches and whose bounds contain the point takes it.
2. **Node**, within that window.  A view group offers a touch to its children in reverse drawing
   order — the child drawn last (on top) first — and each child to its own children the same way
   before itself; the first view that *takes* it wins.  A view takes a touch when it is
   actionable (clickable, long-clickable, checkable, scrollable, a focusable text field) and its
   bounds contain the point; one that is not passes it on, to its earlier siblings and then to
   its parent.  So the deepest actionable view on the topmost path under the finger takes it: a
   floating action button drawn after a list takes a touch over a row beneath it, a button inside
   a row takes it from the row, and a label drawn over a row does not (the row does).
   Drawing order among siblings is the dump's ``drawing-order`` (uiautomator2 writes it; higher
   on top, ties and missing values in document order), else document order (later on top).
   A node's children are offered the touch even where the node itself does not contain the
   point: real dumps clip every node to its parent, and where they do not (virtual nodes of a
   WebView or of Compose) the node under the finger is still the one its host handles.
   When the node that takes it is only a scroll container (a list, a pager — it scrolls but
   takes no taps), the first node with text or content-desc inside it at the point, in the same
   order, is recorded instead, if there is one: a tap on a non-clickable row of a list records the
   row's text, not the list.  With no actionable node at the point, the first node with
   text/content-desc in that order; else nothing (``label_source="none"``).
3. A chosen node without text or content-desc borrows its descendants' texts, exactly as the
   element list does.

:class:`HitIndex` holds what every hit test of one tree needs — parent links, window order, each
node's place in the touch order (:attr:`HitIndex.rank`, computed once) and a band index of the
candidate nodes of each window — built once per :class:`UITree` object and cached on it, so a hit
test costs a look-up in one band, not a pass over the tree.
"""

from __future__ import annotations

from collections.abc import Iterable

from artemis_cli.perception.structure import (
    TreeStructure,
    can_borrow_label,
    is_actionable,
    is_edit,
    own_label,
)
from artemis_cli.perception.types import Element, Target, UINode, UITree
from artemis_cli.perception.windows import Window, order_windows

__all__ = ["HitIndex", "hit_test", "target_for_element", "touch_order"]

# Candidate kinds.
TEXT, SCROLL, TAP = 0, 1, 2
# (left, top, right, bottom, rank in the touch order, node index, kind)
Cand = tuple[int, int, int, int, int, int, int]

_BANDS = 128  # horizontal bands per screen height
_TALL = 32  # a node spanning more bands than this is kept once, in the window's tall list


def kind_of(node: UINode) -> int | None:
    """TAP, SCROLL (a scroll container that is not clickable: a list, a pager — long-clickable
    lists included, a long press there is for the row under the finger), TEXT (labelled only), or
    None (not a candidate)."""
    if is_actionable(node):
        tappable = node.clickable or node.checkable or is_edit(node) or not node.scrollable
        return TAP if tappable else SCROLL
    return TEXT if own_label(node) else None


def touch_order(tree: UITree, structure: TreeStructure) -> list[int]:
    """Each node's rank in the order a touch is offered to the nodes of its window (module
    docstring, rule 2): children in reverse drawing order, each subtree before its root.  Lower
    ranks are offered the touch first; the ranks of one subtree are contiguous and end at its
    root's."""
    nodes = tree.nodes
    children: list[list[int]] = [[] for _ in nodes]
    roots: list[int] = []
    for i, p in enumerate(structure.parent):
        (children[p] if p >= 0 else roots).append(i)
    rank = [0] * len(nodes)
    counter = 0
    for root in roots:
        stack: list[tuple[int, bool]] = [(root, False)]
        while stack:
            i, expanded = stack.pop()
            if expanded:
                rank[i] = counter
                counter += 1
                continue
            stack.append((i, True))
            kids = children[i]
            if len(kids) > 1 and any(nodes[k].drawing_order is not None for k in kids):
                kids.sort(key=lambda k: nodes[k].drawing_order or 0)  # stable: ties keep file order
            stack.extend((k, False) for k in kids)  # the topmost child is popped first
    return rank


class _WindowIndex:
    """Candidate nodes of one window, bucketed by horizontal band."""

    def __init__(self, window: Window, cands: list[Cand], band_height: int, bands: int) -> None:
        self.window = window
        self.all = cands
        self.band_height = band_height
        self.bands: list[list[Cand]] = [[] for _ in range(bands)]
        self.tall: list[Cand] = []
        for cand in cands:
            first = max(0, cand[1] // band_height)
            last = min(bands - 1, (cand[3] - 1) // band_height)
            if last < first:
                continue  # entirely above or below the banded area: only found by the full scan
            if last - first > _TALL:
                self.tall.append(cand)
            else:
                for band in range(first, last + 1):
                    self.bands[band].append(cand)

    def near(self, y: int) -> list[Cand]:
        """Candidates that may contain a point at height ``y`` (a superset)."""
        band = y // self.band_height if y >= 0 else -1
        if not 0 <= band < len(self.bands):
            return self.all
        return self.bands[band] + self.tall if self.tall else self.bands[band]

    def overlapping(self, left: int, top: int, right: int, bottom: int) -> list[Cand]:
        """Candidates whose bounds intersect the (on-screen) box."""
        first, last = max(0, top // self.band_height), (bottom - 1) // self.band_height
        if top < 0 or last >= len(self.bands) or last - first > _TALL:
            pool: Iterable[Cand] = self.all
        else:
            seen: dict[int, Cand] = {c[5]: c for c in self.tall}
            for band in range(first, last + 1):
                seen.update((c[5], c) for c in self.bands[band])
            pool = seen.values()
        return [c for c in pool if c[0] < right and left < c[2] and c[1] < bottom and top < c[3]]


class HitIndex:
    """Hit testing over one parsed tree; get it with :meth:`of` (built once, cached on the tree)."""

    def __init__(self, tree: UITree) -> None:
        self.tree = tree
        self.structure = TreeStructure.of(tree)
        self.windows = order_windows(tree, self.structure)  # bottom to top
        self.window_of: dict[int, int] = {}  # node index -> position in self.windows
        self.kinds: dict[int, int] = {}  # candidate node index -> kind
        self.rank = touch_order(tree, self.structure)  # node index -> place in the touch order
        self.visits = 0  # candidates looked at by hit tests so far (a work meter for searches)
        height = max(1, tree.screen_height)
        band_height = max(8, -(-height // _BANDS))
        bands = -(-height // band_height)
        self._indexes: list[_WindowIndex] = []
        nodes = tree.nodes
        for position, window in enumerate(self.windows):
            cands: list[Cand] = []
            for i in range(window.root, window.end):
                self.window_of[i] = position
                kind = kind_of(nodes[i])
                if kind is None or not self.structure.visible(i):
                    continue
                self.kinds[i] = kind
                b = nodes[i].bounds
                cands.append((b.left, b.top, b.right, b.bottom, self.rank[i], i, kind))
            self._indexes.append(_WindowIndex(window, cands, band_height, bands))

    @classmethod
    def of(cls, tree: UITree) -> HitIndex:
        return tree.cached("hit_index", cls)

    def window_at(self, x: int, y: int) -> int | None:
        """Position (in :attr:`windows`) of the topmost touch-catching window containing the point."""
        for position in range(len(self.windows) - 1, -1, -1):
            window = self.windows[position]
            if window.catches_touches and window.bounds.contains(x, y):
                return position
        return None

    def windows_above(self, position: int) -> tuple[Window, ...]:
        return tuple(w for w in self.windows[position + 1 :] if w.catches_touches)

    def window_index(self, position: int) -> _WindowIndex:
        return self._indexes[position]

    def hit(self, x: int, y: int) -> int | None:
        """Index of the node a touch at (x, y) lands on (module docstring), or None."""
        position = self.window_at(x, y)
        if position is None:
            return None
        pool = self._indexes[position].near(y)
        self.visits += len(pool)
        actionable: tuple[int, int, int] | None = None  # (rank, node index, kind): first to take it
        labelled: tuple[int, int] | None = None  # (rank, node index): first labelled node
        for left, top, right, bottom, rank, i, kind in pool:
            if not (left <= x < right and top <= y < bottom):
                continue
            if kind != TEXT:
                if actionable is None or rank < actionable[0]:
                    actionable = (rank, i, kind)
            elif labelled is None or rank < labelled[0]:
                labelled = (rank, i)
        if actionable is None:
            return labelled[1] if labelled else None
        if actionable[2] != SCROLL:
            return actionable[1]
        container, end = actionable[1], self.structure.subtree_end[actionable[1]]
        inside: tuple[int, int] | None = None
        for left, top, right, bottom, rank, i, kind in pool:
            if (
                kind == TEXT
                and container < i < end
                and left <= x < right
                and top <= y < bottom
                and (inside is None or rank < inside[0])
            ):
                inside = (rank, i)
        return inside[1] if inside else container


def _target(node: UINode, text: str, label_source: str, element_index: int | None = None) -> Target:
    b = node.bounds
    return Target(
        text=text,
        content_desc=node.content_desc,
        resource_id=node.resource_id,
        class_name=node.class_name,
        bounds=(b.left, b.top, b.right, b.bottom),
        label_source=label_source,  # type: ignore[arg-type]
        element_index=element_index,
        password=node.password,
    )


def hit_test(tree: UITree, x: int, y: int) -> Target:
    """The node at pixel (x, y): see the module docstring for the rule."""
    index = HitIndex.of(tree)
    i = index.hit(x, y)
    if i is None:
        return Target(label_source="none")
    node = tree.nodes[i]
    text = node.text
    if not text and not node.content_desc and can_borrow_label(node):
        text = index.structure.borrowed_label(i)
    return _target(node, text, "hit_test")


def target_for_element(element: Element) -> Target:
    """The target of an action addressed by element index."""
    node = element.node
    text = node.text
    if not text and not node.content_desc and element.label_borrowed:
        text = element.label
    return _target(node, text, "index", element_index=element.index)
