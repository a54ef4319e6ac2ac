"""Set-of-marks on the model's screenshot (``perception.marks``): pinned pixels, determinism, and
marks that are the element list's own indices.

The golden input is the simulated phone's Settings screen (1080x2400) with the marks its element
list gave (``data/marks-settings-screen.*``); the output PNG is kept as a golden file to look at
(``golden/marks-settings.png``) and its sha256 pinned. ``ARTEMIS_UPDATE_GOLDEN=1`` rewrites both;
look at the new PNG before committing. The sha depends on Pillow's bundled font and encoder: a
Pillow upgrade that changes them shows up here first.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
from pathlib import Path

from golden_files import assert_golden
from PIL import Image, ImageChops
from screenshots import png_bytes, screenshot

from artemis_cli.perception.coords import CoordinateSpace
from artemis_cli.perception.elements import index_elements, render_element_list
from artemis_cli.perception.hierarchy import parse_hierarchy
from artemis_cli.perception.marks import (
    MARK_PALETTE,
    draw_marks,
    marks_digest,
    marks_from_json,
    marks_of,
    marks_to_json,
)
from artemis_cli.perception.model_image import scale_for_model
from artemis_cli.perception.png import png_size

HERE = Path(__file__).parent
SCREEN = (HERE / "data" / "marks-settings-screen.png").read_bytes()
FIXTURE = json.loads((HERE / "data" / "marks-settings-screen.json").read_text(encoding="utf-8"))
MARKS = marks_from_json(FIXTURE["marks"])
GOLDEN_PNG = HERE / "golden" / "marks-settings.png"


def _pixels(png: bytes) -> Image.Image:
    with Image.open(io.BytesIO(png)) as img:
        return img.convert("RGB")


def test_the_marked_settings_screen_is_pinned() -> None:
    marked = draw_marks(SCREEN, 1152, MARKS)
    if os.environ.get("ARTEMIS_UPDATE_GOLDEN") == "1":
        GOLDEN_PNG.write_bytes(marked)
    assert_golden(HERE / "golden" / "marks-settings.sha256", hashlib.sha256(marked).hexdigest() + "\n")
    assert marked == GOLDEN_PNG.read_bytes()
    assert png_size(marked) == (518, 1152)  # the default model size, marks drawn after scaling


def test_marks_are_deterministic_and_cached_by_marks() -> None:
    once = draw_marks(SCREEN, 1152, MARKS)
    again = draw_marks(bytes(SCREEN), 1152, tuple(MARKS))  # other objects, same bytes and marks
    assert once == again
    fewer = draw_marks(SCREEN, 1152, MARKS[:3])
    assert fewer != once  # the cache key holds the marks, not only the screenshot
    assert draw_marks(SCREEN, 1152, MARKS) == once


def test_the_marked_image_differs_from_the_clean_one_only_where_marks_are() -> None:
    clean = scale_for_model(SCREEN, 1152)
    marked = draw_marks(SCREEN, 1152, MARKS)
    assert marked != clean
    a, b = _pixels(clean), _pixels(marked)
    assert a.size == b.size
    changed = ImageChops.difference(a, b).convert("L").point(lambda v: 255 if v else 0).histogram()[255]
    assert 0.005 < changed / (a.width * a.height) < 0.25  # outlines and labels, not a repaint
    # each label is filled with its index's palette colour, on a corner of its box: the label of
    # element 4 ("Display") sits just above its top-left corner, where the clean image has none
    index, left, top, _right, _bottom = next(m for m in MARKS if m[0] == 4)
    fx = a.width / 1080
    corner = (round(left * fx), round(top * fx) - 12, round(left * fx) + 8, round(top * fx))
    colour = MARK_PALETTE[index % len(MARK_PALETTE)]
    assert colour in {c for _, c in b.crop(corner).getcolors(4096) or []}
    assert colour not in {c for _, c in a.crop(corner).getcolors(4096) or []}


def test_no_marks_or_an_unreadable_image_is_exactly_the_scaled_image() -> None:
    assert draw_marks(SCREEN, 1152, ()) == scale_for_model(SCREEN, 1152)
    assert draw_marks(b"not a png", 1152, MARKS) == b"not a png"
    assert draw_marks(SCREEN, None, ()) == SCREEN  # full size, unmarked: the recorded bytes


def test_marks_at_full_size_stay_inside_the_image() -> None:
    edge = ((0, 0, 0, 1080, 2400), (1, -50, -50, 40, 40), (2, 1040, 2360, 1200, 2600))
    marked = draw_marks(SCREEN, None, edge)
    assert png_size(marked) == (1080, 2400)
    assert marked != SCREEN


def test_marks_are_the_element_lists_own_indices(real_dumps_dir: Path) -> None:
    """The Google Messages dump has ten unlabelled ``View {click}`` rows: each gets a mark with the
    index the list gives it, and nothing is marked that the list does not show."""
    xml = (real_dumps_dir / "007-google-messages-quotes.xml").read_text(encoding="utf-8")
    tree = parse_hierarchy(xml)
    elements = index_elements(tree)
    listing = render_element_list(elements, CoordinateSpace(tree.screen_width, tree.screen_height))
    marks = marks_of(elements)
    listed = {int(line[1:line.index("]")]) for line in listing.splitlines()}
    assert {m[0] for m in marks} <= listed
    unlabelled = [e.index for e in elements if e.node.class_name.endswith("View") and not e.label
                  and e.node.clickable]
    assert len(unlabelled) >= 10 and set(unlabelled) <= {m[0] for m in marks}
    for index, left, top, right, bottom in marks:
        b = elements[index].node.bounds
        assert (left, top, right, bottom) == (b.left, b.top, b.right, b.bottom)
    w, h = tree.screen_width, tree.screen_height
    marked = draw_marks(png_bytes(screenshot(7, (w, h))), 1152, marks)
    assert png_size(marked) is not None


def test_marks_survive_meta_and_a_malformed_row_is_dropped() -> None:
    stored = json.loads(json.dumps(marks_to_json(MARKS)))  # as the step's meta holds them
    assert marks_from_json(stored) == MARKS
    assert marks_digest(marks_from_json(stored)) == marks_digest(MARKS)
    assert marks_from_json([[1, 2, 3, 4, 5], [1, 2, 3], ["a", 1, 2, 3, 4], [True, 1, 2, 3, 4]]) == ((1, 2, 3, 4, 5),)
    assert marks_from_json(None) == () and marks_from_json({"x": 1}) == ()
