"""What is under a coordinate: the semantics recorded with every coordinate action."""

from __future__ import annotations

from artemis_cli.perception.structure import (
    TreeStructure,
    can_borrow_label,
    is_actionable,
    own_label,
)
from artemis_cli.perception.types import Element, Target, UINode, UITree

__all__ = ["hit_test", "target_for_element"]


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


def _topmost_window(structure: TreeStructure, x: int, y: int) -> int | None:
    """The last top-level node (dialogs and overlays come last) whose bounds contain the point."""
    found: int | None = None
    for i, node in enumerate(structure.tree.nodes):
        if node.depth == 0 and node.bounds.contains(x, y):
            found = i
    return found


def hit_test(tree: UITree, x: int, y: int) -> Target:
    """The node at pixel (x, y) of the top-most window containing it.

    Among visible nodes containing the point: the smallest actionable one (ties: later in document
    order, i.e. drawn on top); else the smallest node with text/content-desc; else nothing
    (``label_source="none"``).  A chosen node without text or content-desc borrows its
    descendants' texts, exactly as the element list does.
    """
    structure = TreeStructure.of(tree)
    window = _topmost_window(structure, x, y)
    if window is None:
        return Target(label_source="none")
    nodes = tree.nodes
    best_actionable: tuple[int, int] | None = None  # (area, index)
    best_labelled: tuple[int, int] | None = None
    for i in range(window, structure.subtree_end[window]):
        node = nodes[i]
        if not node.bounds.contains(x, y) or not structure.visible(i):
            continue
        area = node.bounds.area
        if is_actionable(node):
            if best_actionable is None or area <= best_actionable[0]:
                best_actionable = (area, i)
        elif own_label(node) and (best_labelled is None or area <= best_labelled[0]):
            best_labelled = (area, i)
    pick = best_actionable or best_labelled
    if pick is None:
        return Target(label_source="none")
    i = pick[1]
    node = nodes[i]
    text = node.text
    if not text and not node.content_desc and can_borrow_label(node):
        text = structure.borrowed_label(i)
    return _target(node, text, "hit_test")


def target_for_element(element: Element) -> Target:
    """The target of an action addressed by element index."""
    node = element.node
    text = node.text
    if not text and not node.content_desc and element.label_borrowed:
        text = element.label
    return _target(node, text, "index", element_index=element.index)
