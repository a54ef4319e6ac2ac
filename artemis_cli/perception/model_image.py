"""The screenshot a model sees: the recorded PNG scaled down to a longest side, deterministically.

The DataEngine keeps every screenshot at full size; only what is sent to a model is scaled. The
same input bytes always give the same output bytes (Pillow's resize and PNG encoder are
deterministic), so an image sent in this turn's tail and again from the active window next turn
is byte-identical and stays in the provider's prefix cache. Element coordinates keep device
pixels: the image is a picture of the screen, not the coordinate system.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
from typing import Any

from artemis_cli.perception.bytecache import MB, ByteLRU
from artemis_cli.perception.png import png_size
from artemis_cli.perception.screenshot import carried_pixels, without_pixels

__all__ = ["scale_for_model", "scaled_size"]


def scaled_size(width: int, height: int, max_side: int | None) -> tuple[int, int]:
    """(w, h) after scaling so the longest side is at most ``max_side`` (aspect kept, ≥ 1 px)."""
    if not max_side or max(width, height) <= max_side:
        return width, height
    factor = max_side / max(width, height)
    return max(1, round(width * factor)), max(1, round(height * factor))


#: Recently scaled screenshots by (sha256, max_side): screens repeat (a list the agent returns
#: to, the home screen), and decoding, scaling and re-encoding costs tens of milliseconds a step.
#: Bound: 2 MB of PNG bytes, ~50 sim screens at the default 1,152 px side (~40 KB each): a step
#: scales its screenshot for each role that reads it (the ledger keeps its window's own copies).
_cache: ByteLRU[tuple[str, int], bytes] = ByteLRU("perception.scaled_screenshots", 2 * MB)


def scale_for_model(png: bytes, max_side: int | None, *, sha: str | None = None) -> bytes:
    """``png`` with its longest side at most ``max_side`` (unchanged when it already fits, when
    ``max_side`` is None, or when the bytes are not a readable PNG: the model then gets what the
    device gave). ``sha``: the bytes' sha256 when the caller already has it. Never returns (nor
    keeps) a picture ``png`` carries: plain bytes only."""
    size = png_size(png)
    if size is None or not max_side:
        return without_pixels(png)
    target = scaled_size(*size, max_side)
    if target == size:
        return without_pixels(png)
    key = (sha or hashlib.sha256(png).hexdigest(), max_side)
    return _cache.get_or_make(key, lambda: _scaled(png, target))


def model_image(png: bytes, max_side: int | None, *, rgb: bool = False) -> Any | None:
    """``png`` decoded and scaled as :func:`scale_for_model` scales it, as a Pillow image (RGB or
    RGBA) to draw on before the one encode (``perception.marks``); None when it is not a readable
    PNG. Pixel for pixel the image :func:`scale_for_model` encodes. ``rgb``: the caller wants RGB
    (the alpha dropped): then an opaque picture is scaled as RGB, the same pixels for less work."""
    size = png_size(png)
    if size is None:
        return None
    target = scaled_size(*size, max_side)
    return _decoded(png, target, rgb=rgb)


def _opaque(img: Any) -> bool:
    """Whether every pixel of ``img`` (P, RGBA or LA) is fully opaque."""
    if img.mode == "P":
        return "transparency" not in img.info and img.palette is not None and img.palette.mode == "RGB"
    return bool(img.getchannel("A").getextrema() == (255, 255))


def _decoded(png: bytes, target: tuple[int, int], *, rgb: bool = False) -> Any | None:
    """Decoded (or the picture ``png`` carries: ``perception.screenshot``, never drawn on) and
    scaled to ``target``. An opaque picture scaled as RGB has the RGB pixels of the same picture
    scaled as RGBA (Pillow premultiplies the alpha to resample; times 255/255 changes nothing):
    ``tests/perception/test_model_image_paths.py`` holds both ways to the same bytes."""
    from PIL import Image

    carried = carried_pixels(png)
    try:
        with contextlib.nullcontext(carried) if carried is not None else Image.open(io.BytesIO(png)) as img:
            img.load()
            mode = "RGBA" if img.mode in ("RGBA", "LA", "P") else "RGB"
            if rgb and mode == "RGBA" and _opaque(img):
                mode = "RGB"
            source = img if img.mode == mode else img.convert(mode)
            if source.size == target:
                return source.copy() if source is img else source
            # reduce by an integer factor first, then bilinear: antialiased and ~2x faster than
            # Lanczos on a phone screenshot
            return source.resize(target, Image.Resampling.BILINEAR, reducing_gap=2.0)
    except (OSError, ValueError, Image.DecompressionBombError):
        return None


def encode_png(image: Any) -> bytes:
    """The model's copy encoded fast: its size on the wire matters, not its tokens."""
    out = io.BytesIO()
    image.save(out, format="PNG", optimize=False, compress_level=1)
    return out.getvalue()


def _scaled(png: bytes, target: tuple[int, int]) -> bytes:
    scaled = _decoded(png, target)
    return without_pixels(png) if scaled is None else encode_png(scaled)
