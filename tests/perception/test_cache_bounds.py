"""Every in-memory cache stays under its stated byte bound when fed more than that (issue 35).

Fed with real objects: PNG screenshots the simulated phone draws (made distinct where a test
needs hundreds by a PNG text chunk: still a valid PNG of the same screen), and the real UI
dumps in fixtures/real-dumps. Figures of a long run: ``benchmarks/rss.py`` prints every cache.
"""

from __future__ import annotations

import gc
import hashlib
import io
import struct
import tracemalloc
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from perception_dumps import dump_files
from PIL import Image

from artemis_cli.memory.recall_search import ScreenCache
from artemis_cli.memory.recall_text import screen_text
from artemis_cli.models import base, openai_wire
from artemis_cli.operators.outcome import ui_signature
from artemis_cli.perception import dhash, hierarchy, marks, model_image
from artemis_cli.perception.bytecache import ByteLRU, cache_stats
from artemis_cli.perception.elements import index_screen
from artemis_cli.perception.screenshot import Screenshot
from artemis_cli.sim import render
from artemis_cli.sim.phone import SimPhone


def with_text_chunk(png: bytes, text: str) -> bytes:
    """``png`` with a tEXt chunk before IEND: the same picture, other bytes (a valid PNG)."""
    body = b"Comment\x00" + text.encode("latin-1")
    chunk = struct.pack(">I", len(body)) + b"tEXt" + body + struct.pack(">I", zlib.crc32(b"tEXt" + body))
    at = png.rindex(b"IEND") - 4
    return png[:at] + chunk + png[at:]


@pytest.fixture(scope="module")
def sim_png() -> bytes:
    """A real screenshot of the simulated phone (its home screen, 1080x2400)."""
    return SimPhone(seed=7).render_png()


def pngs(png: bytes, count: int) -> Iterator[bytes]:
    return (with_text_chunk(png, f"copy {i}") for i in range(count))


def assert_bounded(cache: ByteLRU[Any, Any], fed: int) -> None:
    """Fed more than the bound, the cache holds at most the bound, and still holds something."""
    assert fed > cache.max_bytes, f"the test fed {fed:,} bytes, not more than the bound {cache.max_bytes:,}"
    assert 0 < cache.nbytes <= cache.max_bytes and len(cache) > 0
    assert cache_stats()[cache.name]["bytes"] == cache.nbytes


@pytest.fixture
def empty() -> Iterator[None]:
    caches = [hierarchy._RAW, hierarchy._PARSED, model_image._cache, marks._cache, dhash._CACHE,
              openai_wire._URL_DIGESTS, base.image_sha256.cache, openai_wire._data_url.cache]  # type: ignore[attr-defined]
    for cache in caches:
        cache.clear()
    yield
    for cache in caches:
        cache.clear()


def test_every_cache_is_listed_with_its_bound() -> None:
    listed = cache_stats()
    for name in ("perception.ui_trees", "perception.parsed_dumps", "perception.scaled_screenshots",
                 "perception.marked_screenshots", "perception.dhashes", "perception.palette_grey",
                 "perception.mark_fonts", "models.image_sha256", "models.openai_data_urls",
                 "models.openai_url_digests", "sim.fonts", "sim.text_masks", "sim.fitted_labels",
                 "engine.insert_sql", "memory.parsed_screens"):
        assert name in listed and listed[name]["max_bytes"] > 0, name


def test_parse_cache_is_bounded_by_the_trees_bytes(empty: None) -> None:
    dumps = [p.read_bytes() for p in dump_files()]
    fed_trees = fed_raw = 0
    for width in (480, 720, 1080, 1440):  # every (dump, size hint) is a tree of its own
        for xml in dumps:
            tree = hierarchy.parse_hierarchy(xml, screen_size=(width, 2000))
            index_screen(tree)  # what a step derives from it, kept on the tree
            fed_trees += hierarchy._tree_cost((b"", None), tree)
    for i, xml in enumerate(dumps * 8):  # another dump each time: a comment after the root
        fed_raw += hierarchy.NODE_BYTES * len(hierarchy.parse_hierarchy(xml + f"<!-- {i} -->".encode()).nodes)
    assert_bounded(hierarchy._PARSED, fed_trees)
    assert_bounded(hierarchy._RAW, fed_raw)


def test_a_trees_stated_cost_is_what_it_holds(empty: None) -> None:
    """The per-node figures are honest: a parsed tree with its derived indexes, measured with
    tracemalloc, weighs no more than the cost the parse cache counts for it (every fourth real
    dump, the largest included: tracing is slow)."""
    files = dump_files()
    largest = max(files, key=lambda p: p.stat().st_size)
    for path in sorted({*files[::4], largest}):
        xml = path.read_bytes()
        hierarchy._RAW.clear()
        hierarchy._PARSED.clear()
        gc.collect()
        tracemalloc.start()
        try:
            before = tracemalloc.get_traced_memory()[0]
            tree = hierarchy.parse_hierarchy(xml)
            index_screen(tree)
            ui_signature(tree)  # what a step's outcome keeps on it
            gc.collect()
            held = tracemalloc.get_traced_memory()[0] - before
        finally:
            tracemalloc.stop()
        digest = b"b" + bytes(32)  # a key as the cache makes it
        counted = hierarchy._tree_cost((digest, None), tree) + hierarchy._parsed_cost(digest, hierarchy._Parsed(
            tree.rotation, tree.nodes, None, tree.warnings))
        assert held <= counted, f"{path.name}: holds {held:,} bytes, counted {counted:,}"


def test_image_digests_are_bounded_by_the_images_bytes(sim_png: bytes, empty: None) -> None:
    fed = 0
    for png in pngs(sim_png, 600):
        base.image_sha256(png)
        fed += len(png)
    cache = base.image_sha256.cache  # type: ignore[attr-defined]
    assert_bounded(cache, fed)
    assert len(cache) < 600


def test_openai_data_urls_and_their_digests_are_bounded(sim_png: bytes, empty: None) -> None:
    fed = 0
    for png in pngs(sim_png, 400):
        url = openai_wire._data_url(png)
        assert openai_wire.image_url_digest(url) == "sha256:" + hashlib.sha256(png).hexdigest()
        fed += len(png) + len(url)
    assert_bounded(openai_wire._data_url.cache, fed)  # type: ignore[attr-defined]
    assert_bounded(openai_wire._URL_DIGESTS, fed)


def test_scaled_and_marked_screenshots_are_bounded(sim_png: bytes, empty: None) -> None:
    fed = 0
    for side in range(2399, 2369, -1):  # each size a scaled copy of its own (~75 KB at this size)
        fed += len(model_image.scale_for_model(sim_png, side))
    assert_bounded(model_image._cache, fed)
    fed = 0
    for i in range(42):  # each set of marks a drawing of its own (~55 KB)
        fed += len(marks.draw_marks(sim_png, None, [(i, 10 * i, 10, 10 * i + 200, 300)]))
    assert_bounded(marks._cache, fed)


def test_dhashes_are_bounded(empty: None) -> None:
    picture = SimPhone(seed=3, width=270, height=600).render_image()
    png = SimPhone(seed=3, width=270, height=600).render_png()
    for i in range(2000):  # ~290 bytes an entry: 2,000 hashes are more than 512 KB
        dhash.dhash_hex(Screenshot(with_text_chunk(png, str(i)), picture))
    assert_bounded(dhash._CACHE, 2000 * 290)


def test_palette_greys_are_bounded() -> None:
    for i in range(120):
        dhash._palette_grey(bytes([i]) * 768)
    assert_bounded(dhash._palette_grey.cache, 120 * 1024)  # type: ignore[attr-defined]


def test_sim_render_caches_are_bounded() -> None:
    fed = 0
    for i in range(400):  # long labels: a 1-bit mask of each, a byte a pixel
        mask, _, _ = render._mask(f"Notification number {i} says something long enough " * 2, 40)
        fed += mask.width * mask.height
    assert_bounded(render._mask.cache, fed)  # type: ignore[attr-defined]
    for i in range(4000):
        render.fit(f"Row {i} of a long list of settings", 30, 2000)
    assert_bounded(render._fit.cache, 4000 * 300)  # type: ignore[attr-defined]
    for size in range(8, 90):
        render.font(size)
    assert_bounded(render.font.cache, 82 * 64 * 1024)  # type: ignore[attr-defined]


def test_mark_fonts_are_bounded() -> None:
    for size in range(10, 30):
        marks._font(size)
    assert_bounded(marks._font.cache, 20 * 64 * 1024)  # type: ignore[attr-defined]


def test_the_phones_screen_pngs_are_bounded(sim_png: bytes) -> None:
    phone = SimPhone(seed=7)
    phone.capture()
    assert len(phone._png) == 1  # a drawn screen is kept as its PNG
    fed = 0
    for i, png in enumerate(pngs(sim_png, 400)):
        phone._png.put(f"screen {i}", png)
        fed += len(png)
    assert_bounded(phone._png, fed)


def test_recall_screen_texts_are_bounded(tmp_path: Path) -> None:
    texts = [screen_text(p.read_bytes()) for p in dump_files()]
    screens = ScreenCache(engine=None)  # type: ignore[arg-type]  # fed directly: no dump is read
    fed = 0
    for i in range(3000):
        text = texts[i % len(texts)]
        screens._cache.put(f"sha{i}", text)
        fed += sum(len(e.label) + len(e.desc) for e in text.elements)
    assert_bounded(screens._cache, max(fed, screens._cache.max_bytes + 1))


def test_a_screenshot_carrying_its_picture_is_counted_with_it(sim_png: bytes, empty: None) -> None:
    """A cache that were handed the sim's picture-carrying screenshot counts the picture too."""
    picture = Image.open(io.BytesIO(sim_png))
    picture.load()
    for i in range(8):
        base.image_sha256(Screenshot(with_text_chunk(sim_png, str(i)), picture))
    cache = base.image_sha256.cache  # type: ignore[attr-defined]
    assert cache.nbytes <= cache.max_bytes and len(cache) <= 3  # 2.6 MB pictures: 3 fit in 8 MB
