"""A screenshot's PNG bytes that may carry the picture already decoded.

``Device.screenshot()`` returns PNG bytes. A backend that draws the screen itself (the simulated
phone) has the pixels before it encodes them; it returns a :class:`Screenshot`, which *is* those
bytes (a ``bytes`` subclass: stored, hashed, sent and compared as any PNG) and also holds the
Pillow image they encode, so the similarity hash need not decode the PNG again (~10 ms for a
1080x2400 screen). adb and uiautomator2 return plain bytes: their PNG is decoded as before.

The carried image is the PNG's picture pixel for pixel (same mode, same palette): consumers only
read it, never draw on it (copy first). It is transient: :func:`without_pixels` gives the plain
bytes for anything kept beyond the step (queues, caches), so a long run never holds pictures.
"""

from __future__ import annotations

from typing import Any

__all__ = ["Screenshot", "carried_pixels", "without_pixels"]


class Screenshot(bytes):
    """PNG bytes plus, optionally, the decoded picture (``pixels``, a Pillow image, read-only)."""

    pixels: Any

    def __new__(cls, png: bytes, pixels: Any = None) -> Screenshot:
        self = super().__new__(cls, png)
        self.pixels = pixels
        return self

    def __reduce__(self) -> tuple[Any, ...]:  # pickled (or copied) as the bytes alone
        return (bytes, (bytes(self),))


def carried_pixels(png: object) -> Any | None:
    """The decoded picture ``png`` carries, or None (plain bytes, or not a screenshot)."""
    return png.pixels if isinstance(png, Screenshot) else None


def without_pixels(png: bytes) -> bytes:
    """``png`` as plain bytes (the carried picture dropped); plain bytes are returned as they are."""
    return bytes(png) if isinstance(png, Screenshot) else png
