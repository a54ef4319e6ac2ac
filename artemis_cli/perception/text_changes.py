"""Screen text that appeared or disappeared between two dumps (SPEC §15 outcomes).

An action's effect is often only a text: an error message under a form, a snackbar ("Added to
cart"), a toast, a new title. :func:`text_changes` compares the visible texts of the dump the
model acted on with the dump taken after the action, as multisets (a text shown twice before and
once after has disappeared once), and returns what is new and what is gone, each bounded:

* only what a person reads as the app's answer: the app's windows, dialogs and system dialogs;
  the status bar (its clock and battery tick by themselves), the navigation bar, screen
  decorations and the keyboard's keys are left out, and so are text fields and check boxes or
  switches (what a field holds and what a switch reads are the typed-text and state checks'
  business, and a password field's text is never repeated);
* only in the windows on both screens: a window that opened or closed (a dialog) is named by the
  outcome ("new window …") and shown whole by the element list, so its text is not listed again;
* a node's text, else its content-desc; whitespace runs count as one space; a text an ancestor
  already carries (a row whose content-desc is its title) is read once, bare punctuation (a time
  picker's ":") not at all;
* a screen **replaced** by another lists nothing: the element list shows the new one whole
  (:func:`screen_replaced`: another app or activity in front, no window on both screens, or most
  elements gone);
* ordered by screen position (top to bottom, then left to right), at most ``MAX_ITEMS`` each way,
  each cut to ``MAX_ITEM_CHARS`` characters; ``appeared_more`` / ``disappeared_more`` count what
  was left out.

The texts are device text: whoever renders them quotes them (:func:`phrase`).
"""

from __future__ import annotations

import unicodedata
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from artemis_cli.perception.hittest import HitIndex
from artemis_cli.perception.quoting import quote_untrusted
from artemis_cli.perception.structure import is_edit
from artemis_cli.perception.types import UITree
from artemis_cli.perception.windows import Layer, Window

__all__ = ["KEPT_SHARE", "MAX_ITEMS", "MAX_ITEM_CHARS", "REPLACED_SHARE", "TextChanges", "kept_windows", "phrase", "screen_replaced", "screen_texts",
           "text_changes"]

MAX_ITEMS = 5
MAX_ITEM_CHARS = 80
#: Windows whose text is the app's (or the system's) answer to an action.
_READ_LAYERS = (Layer.APP, Layer.SHADE, Layer.SYSTEM)


@dataclass(frozen=True)
class TextChanges:
    appeared: list[str] = field(default_factory=list)
    disappeared: list[str] = field(default_factory=list)
    appeared_more: int = 0
    disappeared_more: int = 0
    #: another screen is in front (:func:`screen_replaced`), which the element list shows whole;
    #: listing five of its texts as "appeared" would only repeat it (and the old screen's as
    #: "disappeared" says nothing), so the lists stay empty
    replaced: bool = False

    def __bool__(self) -> bool:
        return bool(self.appeared or self.disappeared)

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"appeared": self.appeared, "appeared_more": self.appeared_more,
                               "disappeared": self.disappeared, "disappeared_more": self.disappeared_more}
        if self.replaced:
            out["replaced"] = True
        return out

    @classmethod
    def from_dict(cls, data: dict[str, Any] | None) -> TextChanges:
        """From a stored outcome dict (rows stored before text changes existed: empty)."""
        data = data or {}

        def texts(key: str) -> list[str]:
            raw = data.get(key)
            return [str(t) for t in raw] if isinstance(raw, list) else []

        def count(key: str) -> int:
            raw = data.get(key)
            return raw if isinstance(raw, int) and raw > 0 else 0

        return cls(texts("appeared"), texts("disappeared"), count("appeared_more"), count("disappeared_more"),
                   replaced=data.get("replaced") is True)


def _read_windows(tree: UITree) -> list[Window]:
    return [w for w in HitIndex.of(tree).windows if w.layer in _READ_LAYERS]


def _punctuation(text: str) -> bool:
    """Bare punctuation (a time picker's ":", a "-" or "·" between fields): nothing to read."""
    return all(unicodedata.category(ch).startswith("P") or ch.isspace() for ch in text)


def screen_texts(tree: UITree, windows: list[Window] | None = None) -> list[tuple[tuple[int, int], str]]:
    """((top, left), text) of every visible text a person reads on ``tree``'s screen (see the
    module docstring for what is left out), in drawing order: of ``windows`` (default: every
    window whose text is read). A text its ancestor already carries (a row whose content-desc
    is its title's text) is read once; bare punctuation is not read."""
    index = HitIndex.of(tree)
    structure = index.structure
    out: list[tuple[tuple[int, int], str]] = []
    read: dict[int, str] = {}  # node index -> the text read there
    for window in _read_windows(tree) if windows is None else windows:
        for i in range(window.root, window.end):
            node = tree.nodes[i]
            if not structure.visible(i) or is_edit(node) or node.password or node.checkable:
                continue
            text = " ".join((node.text or node.content_desc).split())
            if not text or _punctuation(text):
                continue
            parent = structure.parent[i]
            while parent >= 0 and read.get(parent) != text:
                parent = structure.parent[parent]
            if parent >= 0:
                continue
            read[i] = text
            out.append(((node.bounds.top, node.bounds.left), text))
    return out


def _extra(these: list[tuple[tuple[int, int], str]], than: list[tuple[tuple[int, int], str]]) -> list[str]:
    """Texts of ``these`` that ``than`` lacks (multiset difference), by screen position."""
    left = Counter(text for _, text in than)
    out: list[tuple[tuple[int, int], str]] = []
    for where, text in these:
        if left[text] > 0:
            left[text] -= 1
        else:
            out.append((where, text))
    out.sort(key=lambda item: item[0])
    return [text for _, text in out]


def _bounded(texts: list[str]) -> tuple[list[str], int]:
    kept = [t if len(t) <= MAX_ITEM_CHARS else t[:MAX_ITEM_CHARS] + "…" for t in texts[:MAX_ITEMS]]
    return kept, max(0, len(texts) - MAX_ITEMS)


#: share of the elements of the windows on both screens that must be on both for the screen to
#: count as the same one: below it, most elements are gone and the screen is replaced
KEPT_SHARE = 0.5
#: share of each screen's texts that, when on that screen only, make it another screen
REPLACED_SHARE = 0.75


def _activity(window: Window) -> str:
    return window.wm_title if "/" in window.wm_title else ""


def kept_windows(pre: UITree, post: UITree) -> list[tuple[Window, Window]]:
    """The windows (whose text is read) on both screens, each paired with its counterpart
    (:meth:`Window.same_as`, each used once, bottom to top); windows known only from the window
    manager have no content to compare and pair with nothing."""
    left = [w for w in _read_windows(pre) if not w.synthetic]
    pairs = []
    for w in _read_windows(post):
        if w.synthetic:
            continue
        match = next((k for k, o in enumerate(left) if w.same_as(o)), None)
        if match is not None:
            pairs.append((left.pop(match), w))
    return pairs


def _elements(tree: UITree, windows: list[Window]) -> Counter[tuple[str, str]]:
    structure = HitIndex.of(tree).structure
    return Counter((tree.nodes[i].class_name, tree.nodes[i].resource_id)
                   for w in windows for i in range(w.root, w.end) if structure.visible(i))


def screen_replaced(pre: UITree, post: UITree, pairs: list[tuple[Window, Window]]) -> bool:
    """Whether ``post`` shows another screen than ``pre`` (the caller knows when another app is
    in front): no window is on both (every window in front is new); another activity in a window
    on both (when the window manager names it); or most elements gone — in the windows on both
    screens, fewer than ``KEPT_SHARE`` of the elements (visible nodes, by class and resource id)
    are on both, or ``REPLACED_SHARE`` of the texts on each side are on that side only (a page
    built like the last with other content)."""
    if not pairs:
        return True
    if any(_activity(a) and _activity(b) and _activity(a) != _activity(b) for a, b in pairs):
        return True
    before = _elements(pre, [a for a, _ in pairs])
    after = _elements(post, [b for _, b in pairs])
    kept = sum((before & after).values())
    return kept < KEPT_SHARE * max(sum(before.values()), sum(after.values()), 1)


def text_changes(pre: UITree, post: UITree, *, app_changed: bool = False) -> TextChanges:
    """What text ``post`` shows that ``pre`` did not, and what it no longer shows (bounded), in
    the windows on both screens (a window that opened or closed is named by the outcome, its
    text shown by the element list); a screen replaced by another (``app_changed``: another app
    is in front; :func:`screen_replaced`) is only said to be replaced."""
    pairs = kept_windows(pre, post)
    if app_changed or screen_replaced(pre, post, pairs):
        return TextChanges(replaced=True)
    before = screen_texts(pre, [a for a, _ in pairs])
    after = screen_texts(post, [b for _, b in pairs])
    new, gone = _extra(after, before), _extra(before, after)
    if before and after and len(new) >= REPLACED_SHARE * len(after) and len(gone) >= REPLACED_SHARE * len(before):
        return TextChanges(replaced=True)
    # Each text once: two places showing "40%" (a slider's label and the setting's summary) that
    # both changed are one thing to read.
    appeared, a_more = _bounded(list(dict.fromkeys(new)))
    disappeared, d_more = _bounded(list(dict.fromkeys(gone)))
    return TextChanges(appeared, disappeared, a_more, d_more)


def phrase(texts: list[str], more: int = 0) -> str:
    """``"Wrong password", "Try again" (+2 more)``: the texts quoted as untrusted device text."""
    out = ", ".join(quote_untrusted(t, None) for t in texts)
    return f"{out} (+{more} more)" if more else out
