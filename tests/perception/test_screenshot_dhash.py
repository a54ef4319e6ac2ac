from __future__ import annotations

import io
import time

import imagehash
import pytest
from PIL import Image
from screenshots import png_bytes, screenshot

from artemis_cli.errors import ScreenshotError
from artemis_cli.perception import dhash as dhash_module
from artemis_cli.perception.dhash import dhash_hex, hamming


def test_same_image_same_hash_and_format() -> None:
    png = png_bytes(screenshot(1))
    h = dhash_hex(png)
    assert len(h) == 16 and int(h, 16) >= 0
    assert dhash_hex(png) == h
    assert dhash_hex(png_bytes(screenshot(1))) == h  # re-encoded, same pixels
    assert hamming(h, h) == 0


def test_different_screens_differ() -> None:
    a, b = dhash_hex(png_bytes(screenshot(1))), dhash_hex(png_bytes(screenshot(2)))
    assert hamming(a, b) > 10


def test_small_change_is_close() -> None:
    image = screenshot(3)
    changed = image.copy()
    changed.paste((0, 0, 0), (500, 100, 520, 120))  # a tiny blinking cursor
    assert hamming(dhash_hex(png_bytes(image)), dhash_hex(png_bytes(changed))) <= 2


@pytest.mark.parametrize("size", [(1080, 2400), (720, 1280), (2780, 1264), (466, 466)])
def test_equivalent_to_imagehash_on_the_full_image(size: tuple[int, int]) -> None:
    """The pre-reduction may flip bits of near-equal cells: at most 3 per hash on these screens."""
    distances = []
    for seed in range(8):
        image = screenshot(seed, size)
        reference = str(imagehash.dhash(image, hash_size=8))
        distances.append(hamming(dhash_hex(png_bytes(image)), reference))
    assert max(distances) <= 3
    assert sum(distances) <= 12  # measured: 0-2 bits in total for portrait sizes, 11 for 2780x1264


def test_exact_mode_is_bit_identical(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(dhash_module, "PRE_REDUCE", False)
    image = screenshot(1, (1080, 2400))
    assert dhash_hex(png_bytes(image)) == str(imagehash.dhash(image, hash_size=8))


@pytest.mark.parametrize("mode", ["RGBA", "L", "P", "LA", "I;16"])
def test_png_modes(mode: str) -> None:
    assert len(dhash_hex(png_bytes(screenshot(5, (300, 600), mode)))) == 16


def test_hamming() -> None:
    assert hamming("0000000000000000", "ffffffffffffffff") == 64
    assert hamming("0000000000000001", "0000000000000003") == 1
    with pytest.raises(ValueError):
        hamming("00", "000")
    with pytest.raises(ValueError):
        hamming("zz", "00")


@pytest.mark.parametrize(
    "bad", [b"", b"GIF89a....", b"\x89PNG\r\n\x1a\n" + b"\x00" * 40, "not bytes", b"\xff\xd8\xff\xe0 jpeg"]
)
def test_bad_bytes_raise_screenshot_error(bad) -> None:
    with pytest.raises(ScreenshotError, match="not a PNG"):
        dhash_hex(bad)


def test_truncated_png_raises_screenshot_error() -> None:
    png = png_bytes(screenshot(1, (200, 400)))
    with pytest.raises(ScreenshotError):
        dhash_hex(png[: len(png) // 2])


def test_jpeg_is_not_a_png() -> None:
    buf = io.BytesIO()
    Image.new("RGB", (10, 10)).save(buf, format="JPEG")
    with pytest.raises(ScreenshotError):
        dhash_hex(buf.getvalue())


def test_speed_figure_is_printed_and_the_memory_agrees(capsys: pytest.CaptureFixture[str]) -> None:
    """Not a timed assertion (SPEC §14): prints the figure for a screen not seen before, and checks
    that a screen seen before gets the same hash from the digest memory."""
    from artemis_cli.perception import dhash as dhash_module

    png = png_bytes(screenshot(7))
    start = time.perf_counter()
    for _ in range(3):
        dhash_module._CACHE.clear()
        cold = dhash_hex(png)
    per_call = (time.perf_counter() - start) / 3 * 1000
    assert dhash_hex(png) == cold  # remembered
    assert dhash_module.dhash_image(dhash_module.load_png(png)) == cold  # and what a decode gives
    with capsys.disabled():
        print(f"\n[perception] dhash_hex 1080x2400 PNG, new screen: {per_call:.1f} ms/call")


def _old_dhash(image: Image.Image) -> str:
    """The hash as computed before pictures were carried: full greyscale conversion, then reduce."""
    grey = image.convert("L")
    factor = min(grey.width // 180, grey.height // 160)
    return str(imagehash.dhash(grey.reduce(factor) if factor >= 2 else grey, hash_size=8))


@pytest.mark.parametrize("seed", range(2))
def test_palette_pictures_hash_as_before_bit_for_bit(seed: int) -> None:
    """A palette picture (the sim's) goes through a grey table instead of a full conversion: the
    same greyscale, so the same bits as stored hashes have; and the same as imagehash within 3."""
    image = screenshot(seed).quantize(colors=64)
    assert dhash_module.dhash_image(image) == _old_dhash(image)
    assert hamming(dhash_module.dhash_image(image), str(imagehash.dhash(image, hash_size=8))) <= 3


def test_rgb_reduced_before_greyscale_stays_close_to_the_old_hash() -> None:
    """RGB pictures are reduced before the grey conversion (one full pass): rounding only."""
    for seed in range(8):
        image = screenshot(seed)
        assert hamming(dhash_module.dhash_image(image), _old_dhash(image)) <= 3


def test_a_screenshot_carrying_its_picture_is_hashed_from_it() -> None:
    """``Screenshot.pixels`` is what gets hashed (no decode): bytes of one picture carrying another
    hash as the carried one; plain bytes of the same PNG hash as their decode."""
    from artemis_cli.perception.screenshot import Screenshot, without_pixels

    a, b = screenshot(1), screenshot(2)
    carried = Screenshot(png_bytes(a), b)
    dhash_module._CACHE.clear()
    assert dhash_hex(carried) == dhash_module.dhash_image(b) != dhash_module.dhash_image(a)
    plain = without_pixels(carried)
    assert type(plain) is bytes and plain == carried and without_pixels(plain) is plain
    dhash_module._CACHE.clear()
    assert dhash_hex(plain) == dhash_module.dhash_image(a)


def test_the_sims_screenshot_carries_the_picture_its_png_decodes_to() -> None:
    """The sim draws the screen: its screenshot carries the picture, pixel for pixel what the PNG
    decodes to, so the hash is the one a decode gives (adb or a replay of the stored PNG)."""
    from artemis_cli.perception.screenshot import carried_pixels
    from artemis_cli.sim.phone import SimPhone

    phone = SimPhone(world="default", seed=0)
    shot = phone.screenshot()
    pixels = carried_pixels(shot)
    decoded = dhash_module.load_png(shot)
    assert pixels is not None and pixels.mode == decoded.mode == "P"
    assert pixels.tobytes() == decoded.tobytes() and pixels.getpalette() == decoded.getpalette()
    assert dhash_module.dhash_image(pixels) == dhash_module.dhash_image(decoded) == _old_dhash(decoded)
    assert type(phone.render_png()) is bytes and phone.render_png() == shot  # screencap's bytes
    again = phone.screenshot()  # the same screen: the kept PNG, as plain bytes
    assert again == shot and carried_pixels(again) is None
