"""Counts in words: ``1 step``, ``2 steps``, ``1,200 steps`` (one helper for every printed count)."""

from __future__ import annotations


def counted(n: int, noun: str, plural: str | None = None, *, sep: str = "") -> str:
    """``n`` and ``noun``, plural unless ``n`` is 1 (``plural`` for irregular nouns); ``sep=","``
    groups thousands."""
    number = f"{n:,}" if sep == "," else str(n)
    return f"{number} {noun if n == 1 else (plural or noun + 's')}"
