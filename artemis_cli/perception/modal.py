"""The modal window in front, as the model meets it (SPEC §6, §15 "Windows").

A modal window (:mod:`~artemis_cli.perception.windows`: a dialog, a pop-up menu, a bottom sheet
over a scrim) takes every touch of the screen but those of the windows drawn above it (the status
bar, the navigation bar, the keyboard). So, for the topmost modal window:

* the elements of the windows drawn below it are not listed and get no mark
  (``elements.index_screen``); the element list ends with one line that counts them
  (:func:`behind_line`: ``12 elements behind the dialog "Set alarm"``);
* a touch that would start outside it, and outside every window above it, is not sent
  (:func:`blocking`, used by ``operators.act.plan_action``): on a phone it would close the
  dialog or do nothing, never reach what is behind.

Its name quotes its title as device text: the dialog's ``android:id/alertTitle`` when it has one,
else the first text in it (a message such as "Delete this contact?"), cut to 60 characters; a
pop-up menu has none (its first text is an item).
"""

from __future__ import annotations

from dataclasses import dataclass

from artemis_cli.perception.hittest import HitIndex
from artemis_cli.perception.quoting import quote_untrusted
from artemis_cli.perception.types import UITree
from artemis_cli.perception.windows import Window

__all__ = ["Modal", "behind_line", "blocking", "modal_in_front"]

_TITLE_IDS = ("android:id/alertTitle",)
_TITLE_CHARS = 60


@dataclass(frozen=True)
class Modal:
    """The topmost modal window: its place in ``HitIndex.windows`` and what to call it."""

    position: int
    window: Window
    title: str

    @property
    def name(self) -> str:
        """``the dialog "Set alarm"`` (the title quoted as device text), or ``the dialog``."""
        kind = self.window.modal_kind or "dialog"
        return f"the {kind} {quote_untrusted(self.title, _TITLE_CHARS)}" if self.title else f"the {kind}"


def _title(index: HitIndex, window: Window) -> str:
    nodes = index.tree.nodes
    if window.modal_kind == "menu":
        return ""  # a menu's first text is its first item, not a title
    for rid in _TITLE_IDS:
        titled = next((nodes[i].text for i in range(window.root, window.end)
                       if nodes[i].resource_id == rid and nodes[i].text.strip()), "")
        if titled:
            return " ".join(titled.split())
    return " ".join(window.title.split())


def _find(tree: UITree) -> Modal | None:
    index = HitIndex.of(tree)
    for position in range(len(index.windows) - 1, -1, -1):
        window = index.windows[position]
        if window.modal:
            return Modal(position, window, _title(index, window))
    return None


def modal_in_front(index: HitIndex) -> Modal | None:
    """The topmost modal window of the tree, or None (computed once per tree)."""
    return index.tree.cached("modal", _find)


def blocking(index: HitIndex, x: int, y: int) -> Modal | None:
    """The modal window a touch starting at (x, y) would meet instead of its target: the topmost
    modal one, when the point is outside it and outside every touch-taking window above it."""
    modal = modal_in_front(index)
    if modal is None or modal.window.bounds.contains(x, y):
        return None
    for window in index.windows[modal.position + 1:]:
        if window.catches_touches and window.bounds.contains(x, y):
            return None
    return modal


def behind_line(modal: Modal | None, count: int) -> str:
    """The element list's last line for ``count`` elements left out behind ``modal`` ("" for none)."""
    if modal is None or count <= 0:
        return ""
    return f"{count} element{'s' if count != 1 else ''} behind {modal.name} (not listed: it takes every touch)"
