"""Synthetic phone-sized screenshots for dHash and marker tests (drawn with Pillow, no files)."""

from __future__ import annotations

import io
import random

from PIL import Image, ImageDraw


def screenshot(seed: int, size: tuple[int, int] = (1080, 2400), mode: str = "RGB") -> Image.Image:
    rng = random.Random(seed)
    image = Image.new("RGB", size, (250, 250, 250))
    draw = ImageDraw.Draw(image)
    w, h = size
    for i in range(40):
        x, y = rng.randrange(w), rng.randrange(h)
        colour = (rng.randrange(256), rng.randrange(256), rng.randrange(256))
        draw.rectangle([x, y, x + rng.randrange(20, w // 2), y + rng.randrange(20, h // 8)], fill=colour)
        draw.text((x + 8, y + 8), f"row {i} settings", fill=(0, 0, 0))
    return image.convert(mode)


def png_bytes(image: Image.Image) -> bytes:
    buf = io.BytesIO()
    image.save(buf, format="PNG")
    return buf.getvalue()
