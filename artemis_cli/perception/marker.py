"""Draw the action on the pre-action screenshot: red ring + dot for a tap, two rings side by side
for a double tap, concentric rings for a long press, a red arrow for a swipe or scroll (the
finger's way), an arrow from a held ring for a drag.  Sizes scale with the screen's shorter side."""

from __future__ import annotations

import io
import math

from PIL import ImageDraw

from artemis_cli.perception.dhash import load_png

__all__ = ["MARKER_COLOR", "draw_action_marker"]

MARKER_COLOR = (255, 32, 32, 255)
_TAP_KINDS = {"tap", "click", "type", "input_text"}
_DOUBLE_KINDS = {"double_tap", "double_click"}
_LONG_KINDS = {"long_press", "long_click", "long_tap"}
_SWIPE_KINDS = {"swipe", "drag", "scroll", "fling"}


def _ring(draw: ImageDraw.ImageDraw, x: int, y: int, radius: float, width: int) -> None:
    draw.ellipse([x - radius, y - radius, x + radius, y + radius], outline=MARKER_COLOR, width=width)


def _dot(draw: ImageDraw.ImageDraw, x: int, y: int, radius: float) -> None:
    draw.ellipse([x - radius, y - radius, x + radius, y + radius], fill=MARKER_COLOR)


def _arrow(
    draw: ImageDraw.ImageDraw, start: tuple[int, int], end: tuple[int, int], width: int, head: float
) -> None:
    (x0, y0), (x1, y1) = start, end
    draw.line([start, end], fill=MARKER_COLOR, width=width)
    angle = math.atan2(y1 - y0, x1 - x0)
    spread = math.radians(28)
    left = (x1 - head * math.cos(angle - spread), y1 - head * math.sin(angle - spread))
    right = (x1 - head * math.cos(angle + spread), y1 - head * math.sin(angle + spread))
    draw.polygon([(x1, y1), left, right], fill=MARKER_COLOR)


def draw_action_marker(png: bytes, kind: str, points: list[tuple[int, int]]) -> bytes:
    """Return a new PNG (same size) with the action drawn at ``points`` (device pixels).

    tap-like kinds: ring + dot at the first point; double_tap: two overlapping rings side by side +
    dot; long_press: two concentric rings + dot; swipe-like kinds: arrow from the first to the
    second point (a dot at the start as well; a drag adds a ring there, its hold).  Unknown kinds with
    points get a tap marker; no points leaves the picture unchanged.  Raises ScreenshotError for
    bytes that are not a PNG.
    """
    image = load_png(png)
    mode = image.mode
    canvas = image.convert("RGBA")
    draw = ImageDraw.Draw(canvas)
    unit = max(1.0, min(canvas.width, canvas.height) / 1080)
    width = max(2, round(6 * unit))
    radius = 40 * unit
    kind = kind.lower()
    pts = [(int(x), int(y)) for x, y in points]
    if pts:
        x, y = pts[0]
        if kind in _SWIPE_KINDS and len(pts) >= 2:
            _dot(draw, x, y, 10 * unit)
            if kind == "drag":  # the hold before the move
                _ring(draw, x, y, radius, width)
            _arrow(draw, pts[0], pts[1], width, head=36 * unit)
        elif kind in _DOUBLE_KINDS:
            _ring(draw, round(x - radius * 0.45), y, radius, width)
            _ring(draw, round(x + radius * 0.45), y, radius, width)
            _dot(draw, x, y, 10 * unit)
        elif kind in _LONG_KINDS:
            _ring(draw, x, y, radius, width)
            _ring(draw, x, y, radius * 1.6, width)
            _dot(draw, x, y, 10 * unit)
        else:
            _ring(draw, x, y, radius, width)
            _dot(draw, x, y, 10 * unit)
    out = canvas if mode == "RGBA" else canvas.convert("RGB")
    buf = io.BytesIO()
    out.save(buf, format="PNG", compress_level=1)
    return buf.getvalue()
