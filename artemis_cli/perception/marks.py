"""Set-of-marks: each listed element's index drawn at its box on the screenshot the model sees.

The element list numbers what the model may act on (``[7] View {click} @(540,1210)``); the
screenshot shows what the screen looks like. Nothing linked the two, so an unlabelled ``View``
could only be chosen by guessing which box it is. Here each element of the list gets a thin
outline of its box and a small filled label with its index (the list's own index, never another
numbering), in a colour picked by index from a fixed palette (M3A draws box and index the same
way, ``m3a_utils.add_ui_element_mark``; Midscene and droidrun put the label on the box's corner).

Placement: a label goes on a corner of its box — above the top-left corner first (outside the box,
so it covers the gap over the element rather than the element's own text), then inside that
corner, below the bottom-left corner, inside the top-right corner — the first spot that stays on
the image and covers no label already drawn; when every spot is taken, the first one, clamped to
the image. Boxes are drawn first and labels last, so no outline runs through a number.

Deterministic: the marks are drawn on the scaled image (:func:`scale_for_model`) with Pillow's
bundled font (no system font is ever looked up), so the same input bytes and the same marks give
byte-identical PNG bytes — the image in this turn's tail and in the active window next turn are
one image, and the provider's prefix cache holds. The recorded screenshot is never touched.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

from artemis_cli.perception.bytecache import FONT_BYTES, MB, ByteLRU, memoize
from artemis_cli.perception.model_image import encode_png, model_image, scale_for_model
from artemis_cli.perception.png import png_size
from artemis_cli.perception.screenshot import without_pixels
from artemis_cli.perception.types import Element

if TYPE_CHECKING:
    from PIL import ImageFont

__all__ = ["MARK_PALETTE", "Mark", "draw_marks", "marks_digest", "marks_from_json", "marks_of", "marks_to_json"]

#: (index, left, top, right, bottom): one element's index and box, in screen pixels.
Mark = tuple[int, int, int, int, int]

#: Saturated, dark enough for white digits (contrast ≥ 4.5:1), distinct from each other.
MARK_PALETTE: tuple[tuple[int, int, int], ...] = (
    (220, 38, 38),  # red
    (37, 99, 235),  # blue
    (21, 128, 61),  # green
    (147, 51, 234),  # purple
    (194, 65, 12),  # burnt orange
    (14, 116, 144),  # teal
    (190, 24, 93),  # magenta
    (77, 124, 15),  # olive
    (67, 56, 202),  # indigo
    (146, 64, 14),  # brown
)
_WHITE = (255, 255, 255)


def marks_of(elements: Iterable[Element]) -> tuple[Mark, ...]:
    """The marks for an element list: each element's index and node bounds (zero-area boxes left
    out: there is nothing on the screenshot to point at)."""
    out: list[Mark] = []
    for e in elements:
        b = e.node.bounds
        if b.right > b.left and b.bottom > b.top:
            out.append((e.index, b.left, b.top, b.right, b.bottom))
    return tuple(out)


def marks_to_json(marks: Sequence[Mark]) -> list[list[int]]:
    """As the step's ``meta["marks"]`` stores them."""
    return [list(m) for m in marks]


def marks_from_json(data: object) -> tuple[Mark, ...]:
    """``meta["marks"]`` back; anything malformed (a hand-edited or foreign record) is dropped, so
    a bad row renders without that mark rather than failing the rebuild."""
    if not isinstance(data, list):
        return ()
    out: list[Mark] = []
    for row in data:
        if isinstance(row, (list, tuple)) and len(row) == 5 and all(
            isinstance(v, int) and not isinstance(v, bool) for v in row
        ):
            out.append((row[0], row[1], row[2], row[3], row[4]))
    return tuple(out)


def marks_digest(marks: Sequence[Mark]) -> str:
    return hashlib.sha256(json.dumps(marks_to_json(marks), separators=(",", ":")).encode()).hexdigest()


#: Marked screenshots by (sha256, max_side, marks digest), as :mod:`.model_image` keeps the
#: scaled ones. Bound: 2 MB of PNG bytes (~50 marked screens at 1,152 px, ~40 KB each).
_cache: ByteLRU[tuple[str, int, str], bytes] = ByteLRU("perception.marked_screenshots", 2 * MB)


def draw_marks(png: bytes, max_side: int | None, marks: Sequence[Mark], *, sha: str | None = None) -> bytes:
    """``png`` scaled for the model (:func:`scale_for_model`) with ``marks`` drawn on it. No marks,
    or bytes that are not a readable PNG: exactly the scaled image (so sessions recorded before
    marks render as they always did)."""
    if not marks:
        return scale_for_model(png, max_side, sha=sha)
    size = png_size(png)
    if size is None:
        return without_pixels(png)
    key = (sha or hashlib.sha256(png).hexdigest(), max_side or 0, marks_digest(marks))
    hit = _cache.get(key)
    if hit is not None:
        return hit
    canvas = model_image(png, max_side, rgb=True)
    if canvas is None:  # bytes that cannot be decoded: the model gets them as they are
        return without_pixels(png)
    out = _drawn(canvas.convert("RGB") if canvas.mode != "RGB" else canvas, size, marks)
    _cache.put(key, out)
    return out


#: Bound: 640 KB, 9 fonts (one per label size: a run draws one image size, a report a few).
@memoize("perception.mark_fonts", 640 * 1024, lambda args, font: FONT_BYTES)
def _font(size: int) -> ImageFont.FreeTypeFont | ImageFont.ImageFont:
    from PIL import ImageFont

    return ImageFont.load_default(size=size)  # Pillow's bundled font: the same glyphs everywhere


def _drawn(canvas: Any, screen: tuple[int, int], marks: Sequence[Mark]) -> bytes:
    """``marks`` drawn on ``canvas`` (the model-sized RGB image, drawn on in place), encoded."""
    from PIL import ImageDraw  # imported when drawn: the CLI starts without Pillow

    w, h = canvas.size
    fx, fy = w / screen[0], h / screen[1]
    longest = max(w, h)
    line = max(1, round(longest / 900))  # 1 px at the default 1152, 2 px at full size
    font = _font(max(10, round(longest / 72)))  # 16 px type (11 px digits) at 1152
    pad_x, pad_y = max(2, line + 1), max(1, line)
    draw = ImageDraw.Draw(canvas)
    boxes: list[tuple[int, tuple[int, int, int, int]]] = []
    for index, left, top, right, bottom in marks:
        box = (
            _clamp(round(left * fx), 0, w - 1), _clamp(round(top * fy), 0, h - 1),
            _clamp(round(right * fx) - 1, 0, w - 1), _clamp(round(bottom * fy) - 1, 0, h - 1),
        )
        if box[2] < box[0] or box[3] < box[1]:
            continue
        boxes.append((index, box))
        draw.rectangle(box, outline=MARK_PALETTE[index % len(MARK_PALETTE)], width=line)
    placed: list[tuple[int, int, int, int]] = []
    for index, box in boxes:
        text = str(index)
        tl, tt, tr, tb = (round(v) for v in draw.textbbox((0, 0), text, font=font))
        lw, lh = (tr - tl) + 2 * pad_x, (tb - tt) + 2 * pad_y
        spot = _place(box, lw, lh, w, h, placed)
        placed.append(spot)
        colour = MARK_PALETTE[index % len(MARK_PALETTE)]
        draw.rectangle((spot[0], spot[1], spot[2] - 1, spot[3] - 1), fill=colour)
        draw.text((spot[0] + pad_x - tl, spot[1] + pad_y - tt), text, font=font, fill=_WHITE)
    return encode_png(canvas)


def _clamp(v: int, lo: int, hi: int) -> int:
    return max(lo, min(hi, v))


def _place(
    box: tuple[int, int, int, int], lw: int, lh: int, w: int, h: int, placed: list[tuple[int, int, int, int]]
) -> tuple[int, int, int, int]:
    """(left, top, right, bottom) of a label ``lw``×``lh`` at a corner of ``box`` (see the module
    docstring for the order), clamped to the image."""
    left, top, right, bottom = box
    candidates = [
        (left, top - lh),  # above the top-left corner
        (left, top),  # inside the top-left corner
        (left, bottom + 1),  # below the bottom-left corner
        (right + 1 - lw, top),  # inside the top-right corner
        (right + 1 - lw, bottom + 1 - lh),  # inside the bottom-right corner
    ]
    rects = []
    for x, y in candidates:
        x, y = _clamp(x, 0, max(0, w - lw)), _clamp(y, 0, max(0, h - lh))
        rects.append((x, y, x + lw, y + lh))
    for r, (x, y) in zip(rects, candidates, strict=True):
        on_image = 0 <= x <= w - lw and 0 <= y <= h - lh
        if on_image and not any(_overlaps(r, p) for p in placed):
            return r
    for r in rects:  # clamped spots, still free
        if not any(_overlaps(r, p) for p in placed):
            return r
    return rects[0]


def _overlaps(a: tuple[int, int, int, int], b: tuple[int, int, int, int]) -> bool:
    return a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]
