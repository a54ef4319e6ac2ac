"""64-bit difference hash of screenshots (imagehash.dhash, hash_size 8) and Hamming distance.

Speed: decoding a 1080x2400 PNG costs ~10-40 ms and cannot be shortened (PNG has no reduced-size
decode); a screenshot that carries its decoded picture (``perception.screenshot.Screenshot``: the
simulated phone draws it) skips the decode. The hash itself is made cheap by box-reducing
(``Image.reduce``, one factor for both axes) to at least 20x the 9x8 hash grid before imagehash's
own greyscale conversion and LANCZOS resize, and by never converting the full picture pixel by
pixel where a cheaper way gives the same greyscale:

- a palette picture ("P", the sim's) is mapped through a 256-entry table of its palette's grey
  values (``Image.point``: Pillow's own P->L values, bit-identical to ``convert("L")``) and
  reduced: ~2-4 ms instead of ~15 ms;
- an RGB picture is reduced first and converted to grey after (the conversion is linear, so only
  rounding differs): one pass over the full picture instead of two;
- other modes (RGBA from ``screencap -p``, L, LA, I;16) are converted, then reduced.

Equivalence: the result is ``imagehash.dhash`` of the same picture up to rounding.  Screens have
large flat areas, so many neighbouring grid cells are almost equal and a rounding difference can
flip their bit.  Measured against ``imagehash.dhash(full_image)`` on 8 synthetic screenshots per
size: 1080x2400 and 720x1280 almost always identical (0-1 bit); 2780x1264 landscape 0-3 bits, 1.4
on average.  Tests pin "at most 3 bits".  Every Artemis
hash goes through this function, so stored hashes stay comparable with each other.  Set
``PRE_REDUCE = False`` for bit-exact imagehash output.
"""

from __future__ import annotations

import hashlib
import io

import imagehash
from PIL import Image

from artemis_cli.errors import ScreenshotError
from artemis_cli.perception.bytecache import ByteLRU, memoize
from artemis_cli.perception.png import PNG_SIGNATURE
from artemis_cli.perception.screenshot import carried_pixels

__all__ = ["dhash_hex", "dhash_image", "hamming", "load_png"]

HASH_SIZE = 8
_MIN_REDUCED = (20 * (HASH_SIZE + 1), 20 * HASH_SIZE)  # keep >= 20x the grid before LANCZOS


def load_png(png: bytes) -> Image.Image:
    """Decode PNG bytes fully, or raise ScreenshotError."""
    if not isinstance(png, (bytes, bytearray, memoryview)):
        raise ScreenshotError(f"not a PNG: expected bytes, got {type(png).__name__}")
    data = bytes(png)
    if not data.startswith(PNG_SIGNATURE):
        head = data[:8].hex() or "empty"
        raise ScreenshotError(f"not a PNG screenshot ({len(data)} bytes, starts with {head})")
    try:
        image = Image.open(io.BytesIO(data))
        image.load()
    except Exception as exc:  # PIL raises many types for corrupt data (OSError, SyntaxError, ...)
        raise ScreenshotError(f"not a PNG screenshot: cannot decode ({exc})") from exc
    return image


PRE_REDUCE = True


def dhash_image(image: Image.Image) -> str:
    """The hash of a decoded picture (any mode Pillow reads from a PNG)."""
    if not PRE_REDUCE:
        return str(imagehash.dhash(image, hash_size=HASH_SIZE))
    factor = min(image.width // _MIN_REDUCED[0], image.height // _MIN_REDUCED[1])
    if image.mode == "RGB" and factor >= 2:
        grey = image.reduce(factor).convert("L")  # reduce first: the one full pass
    else:
        grey = image.point(_grey_table(image), "L") if image.mode == "P" else image.convert("L")
        if factor >= 2:
            grey = grey.reduce(factor)
    return str(imagehash.dhash(grey, hash_size=HASH_SIZE))


def _grey_table(image: Image.Image) -> list[int]:
    """Index -> grey value of a palette picture, as Pillow's ``convert("L")`` computes it."""
    palette = image.getpalette("RGB") or []
    return list(_palette_grey(bytes(palette)))


#: Bound: 64 KB, ~50 palettes (the sim draws with one; a real phone's PNGs are RGB(A)).
@memoize("perception.palette_grey", 64 * 1024)
def _palette_grey(palette: bytes) -> bytes:
    strip = Image.frombytes("P", (256, 1), bytes(range(256)))
    strip.putpalette(palette + bytes(768 - len(palette)) if len(palette) < 768 else palette[:768])
    return strip.convert("L").tobytes()


#: Hashes by the PNG's SHA-256 digest. Bound: 512 KB, ~1,800 screens (an entry is a 32-byte
#: digest and 16 hex characters: ~290 bytes with the cache's own overhead), twice the distinct
#: screens of a 1,000-step run.
_CACHE: ByteLRU[bytes, str] = ByteLRU("perception.dhashes", 512 * 1024)


def dhash_hex(png: bytes) -> str:
    """16 hex characters (64 bits). Raises ScreenshotError for bytes that are not a PNG.

    Screens recur (home screens, list pages, dialogs): hashes are remembered by the SHA-256 of
    the PNG, so a screen seen before costs a digest instead of a decode. A screenshot that
    carries its decoded picture (``Screenshot.pixels``) is hashed from it: no decode."""
    key = hashlib.sha256(png).digest() if isinstance(png, (bytes, bytearray)) else b""
    hit = _CACHE.get(key) if key else None
    if hit is not None:
        return hit
    pixels = carried_pixels(png)
    value = dhash_image(pixels if pixels is not None else load_png(png))
    return _CACHE.put(key, value) if key else value


def hamming(a: str, b: str) -> int:
    """Number of differing bits between two hex hashes of the same length."""
    if len(a) != len(b):
        raise ValueError(f"hashes differ in length: {len(a)} vs {len(b)} hex digits")
    try:
        return (int(a, 16) ^ int(b, 16)).bit_count()
    except ValueError as exc:
        raise ValueError(f"not a hex hash: {a!r} / {b!r}") from exc
