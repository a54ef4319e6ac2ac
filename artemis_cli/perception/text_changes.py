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
* a node's text, else its content-desc; whitespace runs count as one space;
* ordered by screen position (top to bottom, then left to right), at most ``MAX_ITEMS`` each way,
  each cut to ``MAX_ITEM_CHARS`` characters; ``appeared_more`` / ``disappeared_more`` count what
  was left out.

The texts are device text: whoever renders them quotes them (:func:`phrase`).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from artemis_cli.perception.hittest import HitIndex
from artemis_cli.perception.quoting import quote_untrusted
from artemis_cli.perception.structure import is_edit
from artemis_cli.perception.types import UITree
from artemis_cli.perception.windows import Layer

__all__ = ["MAX_ITEMS", "MAX_ITEM_CHARS", "REPLACED_SHARE", "TextChanges", "phrase", "screen_texts", "text_changes"]

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
    #: most of the text on both screens differs: a new screen, which the element list shows
    #: whole; listing five of its texts as "appeared" would only repeat it (and the old screen's
    #: as "disappeared" says nothing), so the lists stay empty
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


def screen_texts(tree: UITree) -> list[tuple[tuple[int, int], str]]:
    """((top, left), text) of every visible text a person reads on ``tree``'s screen (see the
    module docstring for what is left out), in drawing order."""
    index = HitIndex.of(tree)
    out: list[tuple[tuple[int, int], str]] = []
    for window in index.windows:
        if window.layer not in _READ_LAYERS:
            continue
        for i in range(window.root, window.end):
            node = tree.nodes[i]
            if not index.structure.visible(i) or is_edit(node) or node.password or node.checkable:
                continue
            text = " ".join((node.text or node.content_desc).split())
            if text:
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


#: share of each screen's texts that must differ for the screen to count as replaced
REPLACED_SHARE = 0.75


def text_changes(pre: UITree, post: UITree) -> TextChanges:
    """What text ``post`` shows that ``pre`` did not, and what it no longer shows (bounded); a
    screen replaced by another (``REPLACED_SHARE`` of the texts on both sides differ) is only
    said to be replaced."""
    before, after = screen_texts(pre), screen_texts(post)
    new, gone = _extra(after, before), _extra(before, after)
    if before and after and len(new) >= REPLACED_SHARE * len(after) and len(gone) >= REPLACED_SHARE * len(before):
        return TextChanges(replaced=True)
    appeared, a_more = _bounded(new)
    disappeared, d_more = _bounded(gone)
    return TextChanges(appeared, disappeared, a_more, d_more)


def phrase(texts: list[str], more: int = 0) -> str:
    """``"Wrong password", "Try again" (+2 more)``: the texts quoted as untrusted device text."""
    out = ", ".join(quote_untrusted(t, None) for t in texts)
    return f"{out} (+{more} more)" if more else out
