"""PNG facts Artemis reads without decoding: the signature and the IHDR size."""

from __future__ import annotations

import struct

__all__ = ["PNG_SIGNATURE", "png_size"]

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def png_size(data: bytes) -> tuple[int, int] | None:
    """(width, height) from a PNG's IHDR chunk; None when ``data`` is not a PNG."""
    if len(data) >= 24 and data.startswith(PNG_SIGNATURE) and data[12:16] == b"IHDR":
        width, height = struct.unpack(">II", data[16:24])
        return int(width), int(height)
    return None
