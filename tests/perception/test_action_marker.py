from __future__ import annotations

import io

import pytest
from PIL import Image
from screenshots import png_bytes, screenshot

from artemis_cli.errors import ScreenshotError
from artemis_cli.perception.marker import draw_action_marker


def _open(png: bytes) -> Image.Image:
    assert png.startswith(b"\x89PNG\r\n\x1a\n")
    return Image.open(io.BytesIO(png)).convert("RGB")


def _is_red(px: tuple[int, int, int]) -> bool:
    r, g, b = px
    return r > 200 and g < 80 and b < 80


def _red_near(image: Image.Image, x: int, y: int, radius: int) -> int:
    count = 0
    for yy in range(max(0, y - radius), min(image.height, y + radius + 1), 2):
        for xx in range(max(0, x - radius), min(image.width, x + radius + 1), 2):
            count += _is_red(image.getpixel((xx, yy)))
    return count


def _blank(size=(1080, 2400)) -> bytes:
    return png_bytes(Image.new("RGB", size, (255, 255, 255)))


def test_tap_marker_ring_and_dot() -> None:
    out = _open(draw_action_marker(_blank(), "tap", [(540, 1200)]))
    assert out.size == (1080, 2400)
    assert _is_red(out.getpixel((540, 1200)))  # dot
    assert _is_red(out.getpixel((540 + 40, 1200))) or _is_red(out.getpixel((540 + 38, 1200)))  # ring
    assert not _is_red(out.getpixel((540 + 25, 1200)))  # gap between dot and ring
    assert _red_near(out, 100, 100, 30) == 0


def test_long_press_has_two_rings() -> None:
    out = _open(draw_action_marker(_blank(), "long_press", [(300, 300)]))
    ring_hits = [x for x in range(300, 400) if _is_red(out.getpixel((x, 300)))]
    groups = sum(1 for a, b in zip([0, *ring_hits], ring_hits, strict=False) if b - a > 1)
    assert groups >= 3  # dot, inner ring, outer ring


def test_swipe_arrow_from_first_to_second_point() -> None:
    out = _open(draw_action_marker(_blank(), "swipe", [(540, 2000), (540, 600)]))
    for y in (1800, 1300, 800):
        assert _is_red(out.getpixel((540, y)))
    assert _red_near(out, 540, 620, 30) > 20  # arrow head at the end
    assert not _is_red(out.getpixel((100, 1300)))


def test_line_width_scales_with_screen() -> None:
    def ring_width(size: tuple[int, int]) -> int:
        w, h = size
        out = _open(draw_action_marker(_blank(size), "tap", [(w // 2, h // 2)]))
        return sum(_is_red(out.getpixel((x, h // 2))) for x in range(w // 2 + 20, w // 2 + int(w / 6)))

    assert ring_width((2160, 4800)) > ring_width((540, 1200))


def test_keeps_size_and_mode_of_real_screenshot() -> None:
    src = screenshot(4, (720, 1280), "RGBA")
    out = draw_action_marker(png_bytes(src), "tap", [(10, 10)])
    image = Image.open(io.BytesIO(out))
    assert image.size == (720, 1280) and image.mode == "RGBA"


def test_no_points_and_offscreen_points_do_not_crash() -> None:
    blank = _blank((100, 200))
    assert _open(draw_action_marker(blank, "tap", [])).size == (100, 200)
    assert _open(draw_action_marker(blank, "swipe", [(-50, -50), (500, 900)])).size == (100, 200)
    assert _open(draw_action_marker(blank, "swipe", [(50, 50)])).size == (100, 200)


def test_not_a_png() -> None:
    with pytest.raises(ScreenshotError):
        draw_action_marker(b"nope", "tap", [(1, 1)])


def test_double_tap_has_two_rings_side_by_side_and_drag_a_held_ring() -> None:
    tap = _open(draw_action_marker(_blank(), "tap", [(540, 1200)]))
    double = _open(draw_action_marker(_blank(), "double_tap", [(540, 1200)]))
    assert _is_red(double.getpixel((540, 1200)))  # the dot
    # the rings' left and right edges: one ring's at x = 540 ± 40, the two rings' at 540 ± (40 + 18)
    assert _red_near(double, 540 - 58, 1200, 3) and _red_near(double, 540 + 58, 1200, 3)
    assert not _red_near(tap, 540 - 58, 1200, 3) and tap.tobytes() != double.tobytes()
    long = _open(draw_action_marker(_blank(), "long_press", [(540, 1200)]))
    assert long.tobytes() != double.tobytes()
    drag = _open(draw_action_marker(_blank(), "drag", [(540, 2000), (540, 600)]))
    swipe = _open(draw_action_marker(_blank(), "swipe", [(540, 2000), (540, 600)]))
    assert _is_red(drag.getpixel((540, 1300))) and _red_near(drag, 540 + 40, 2000, 3)  # the arrow, the hold's ring
    assert not _red_near(swipe, 540 + 40, 2000, 3)
