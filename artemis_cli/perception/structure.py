"""Shared questions about nodes of a :class:`UITree`: which are actionable, visible, and what label
an unlabelled container borrows from its descendants.  Used by element indexing and hit testing so
the two always agree."""

from __future__ import annotations

from dataclasses import dataclass

from artemis_cli.perception.types import UINode, UITree

LABEL_JOIN = " · "
_EDIT_SUFFIXES = ("EditText", "AutoCompleteTextView")


def short_class(class_name: str) -> str:
    return class_name.rsplit(".", 1)[-1] if class_name else ""


def is_edit(node: UINode) -> bool:
    """An editable text field (EditText and its subclasses, AutoCompleteTextView)."""
    return short_class(node.class_name).endswith(_EDIT_SUFFIXES)


def is_actionable(node: UINode) -> bool:
    """Something the user can act on: click, long-click, check, scroll, or a focusable text field."""
    return (
        node.clickable
        or node.long_clickable
        or node.checkable
        or node.scrollable
        or (node.focusable and is_edit(node))
    )


def can_borrow_label(node: UINode) -> bool:
    """Actionable nodes other than scroll containers (a list must not be named after its first
    row)."""
    return is_actionable(node) and not node.scrollable


def own_label(node: UINode) -> str:
    return node.text or node.content_desc


def is_visible(node: UINode, width: int, height: int) -> bool:
    """Non-empty bounds that intersect the screen, and not reported invisible."""
    if node.visible_to_user is False:
        return False
    b = node.bounds
    if b.width <= 0 or b.height <= 0:
        return False
    return b.left < width and b.top < height and b.right > 0 and b.bottom > 0


@dataclass(frozen=True)
class TreeStructure:
    """Parent links and contiguous subtree ranges of a pre-order node list."""

    tree: UITree
    parent: tuple[int, ...]  # -1 for top-level nodes
    subtree_end: tuple[int, ...]  # exclusive end index of each node's subtree

    @classmethod
    def of(cls, tree: UITree) -> TreeStructure:
        nodes = tree.nodes
        parent = [-1] * len(nodes)
        end = [len(nodes)] * len(nodes)
        stack: list[int] = []  # open ancestors
        for i, node in enumerate(nodes):
            while stack and nodes[stack[-1]].depth >= node.depth:
                end[stack.pop()] = i
            parent[i] = stack[-1] if stack else -1
            stack.append(i)
        return cls(tree=tree, parent=tuple(parent), subtree_end=tuple(end))

    def visible(self, i: int) -> bool:
        return is_visible(self.tree.nodes[i], self.tree.screen_width, self.tree.screen_height)

    def nearest_actionable_ancestor(self, i: int) -> int:
        p = self.parent[i]
        while p >= 0 and not is_actionable(self.tree.nodes[p]):
            p = self.parent[p]
        return p

    def borrowed_label(self, i: int, limit: int = 2) -> str:
        """First ``limit`` distinct texts (else content-descs) of descendants that belong to this
        node — nested actionable nodes keep their own — joined by " · "."""
        nodes = self.tree.nodes
        labels: list[str] = []
        j, end = i + 1, self.subtree_end[i]
        while j < end and len(labels) < limit:
            node = nodes[j]
            if node.visible_to_user is False or is_actionable(node):
                j = self.subtree_end[j]
                continue
            label = own_label(node).strip()
            if label and label not in labels:
                labels.append(label)
            j += 1
        return LABEL_JOIN.join(labels)
