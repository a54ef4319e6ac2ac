from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from artemis_cli.perception.coords import CoordinateSpace


def test_normalized_example_from_spec() -> None:
    space = CoordinateSpace(1080, 2400, "normalized")
    assert space.to_pixels(500, 500) == (540, 1200)
    assert space.to_pixels(0, 0) == (0, 0)
    assert space.to_pixels(1000, 1000) == (1079, 2399)  # clamped into the screen
    assert space.from_pixels(540, 1200) == (500, 500)
    assert space.from_pixels(1079, 2399) == (999, 1000)


def test_pixels_are_identity_inside_screen() -> None:
    space = CoordinateSpace(1080, 2400)
    assert space.to_pixels(12, 34) == (12, 34)
    assert space.to_pixels(1080, 2400) == (1079, 2399)
    assert space.to_pixels(10.6, 3.2) == (11, 3)
    assert space.from_pixels(5000, -3) == (1079, 0)


@pytest.mark.parametrize(
    ("mode", "x", "y", "needle"),
    [
        ("pixels", -1, 10, "x=-1"),
        ("pixels", 10, 2401, "y=2401"),
        ("pixels", 1081, 0, "between 0 and 1080"),
        ("normalized", 1001, 5, "between 0 and 1000"),
        ("normalized", 5, -0.5, "y=-0.5"),
        ("normalized", float("nan"), 5, "not a number"),
    ],
)
def test_out_of_range_is_explained_to_the_model(mode, x, y, needle) -> None:
    space = CoordinateSpace(1080, 2400, mode)
    with pytest.raises(ValueError) as info:
        space.to_pixels(x, y)
    assert needle in str(info.value)
    assert "off the screen" in str(info.value) or "not a number" in str(info.value)


def test_invalid_space() -> None:
    with pytest.raises(ValueError):
        CoordinateSpace(0, 100)
    with pytest.raises(ValueError):
        CoordinateSpace(100, 100, "inches")  # type: ignore[arg-type]


_SIZES = st.tuples(st.integers(100, 4000), st.integers(100, 4000))


@settings(deadline=None)
@given(_SIZES, st.data())
def test_round_trip_pixels_via_normalized(size, data) -> None:
    width, height = size
    space = CoordinateSpace(width, height, "normalized")
    x = data.draw(st.integers(0, width - 1))
    y = data.draw(st.integers(0, height - 1))
    bx, by = space.to_pixels(*space.from_pixels(x, y))
    # one normalized step is width/1000 pixels; the round trip loses at most one step (>= 1 px)
    assert abs(bx - x) <= max(1, width / 1000)
    assert abs(by - y) <= max(1, height / 1000)


@settings(deadline=None)
@given(_SIZES, st.integers(0, 1000), st.integers(0, 1000))
def test_round_trip_normalized_via_pixels(size, nx, ny) -> None:
    width, height = size
    space = CoordinateSpace(width, height, "normalized")
    px, py = space.to_pixels(nx, ny)
    assert 0 <= px < width and 0 <= py < height
    bx, by = space.from_pixels(px, py)
    # error of at most one pixel, expressed in normalized units (plus the clamp at the far edge)
    assert abs(bx - nx) <= max(1, 1000 / width) + 1
    assert abs(by - ny) <= max(1, 1000 / height) + 1
    pixels = CoordinateSpace(width, height)
    assert pixels.from_pixels(*pixels.to_pixels(px, py)) == (px, py)
