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
