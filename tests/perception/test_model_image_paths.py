"""The model's copy of a screenshot is made the cheap way without changing a byte (issue 38
item 3): an opaque picture is scaled as RGB (the RGBA path premultiplies by an alpha of 255: the
same pixels), and a screenshot that carries its picture (the sim's, ``perception.screenshot``)
is not decoded again. Neither path may draw on the carried picture or pass it on."""

from __future__ import annotations

import io

from PIL import Image

from artemis_cli.perception import marks as marks_module
from artemis_cli.perception import model_image as model_image_module
from artemis_cli.perception.elements import index_screen
from artemis_cli.perception.hierarchy import parse_hierarchy
from artemis_cli.perception.marks import draw_marks, marks_of
from artemis_cli.perception.model_image import model_image, scale_for_model
from artemis_cli.perception.screenshot import Screenshot, carried_pixels
from artemis_cli.sim.phone import SimPhone


def _png(image: Image.Image) -> bytes:
    out = io.BytesIO()
    image.save(out, format="PNG")
    return out.getvalue()


def _sim_screen() -> tuple[Screenshot, tuple[tuple[int, int, int, int, int], ...]]:
    phone = SimPhone(world="default", seed=0)
    shot = phone.screenshot()
    assert isinstance(shot, Screenshot) and carried_pixels(shot) is not None
    tree = parse_hierarchy(phone.hierarchy(), screen_size=(phone.width, phone.height))
    return shot, marks_of(index_screen(tree).elements)


def _clear_caches() -> None:
    marks_module._cache.clear()
    model_image_module._cache.clear()


def test_an_opaque_palette_picture_scaled_as_rgb_has_the_rgba_paths_pixels() -> None:
    shot, _ = _sim_screen()
    plain = bytes(shot)
    assert Image.open(io.BytesIO(plain)).mode == "P"
    as_rgb = model_image(plain, 1152, rgb=True)
    as_rgba = model_image(plain, 1152)
    assert as_rgb is not None and as_rgba is not None
    assert (as_rgb.mode, as_rgba.mode) == ("RGB", "RGBA")
    assert as_rgb.tobytes() == as_rgba.convert("RGB").tobytes()


def test_an_opaque_rgba_picture_scaled_as_rgb_has_the_rgba_paths_pixels() -> None:
    shot, _ = _sim_screen()
    rgba = _png(Image.open(io.BytesIO(bytes(shot))).convert("RGBA"))
    as_rgb = model_image(rgba, 700, rgb=True)
    as_rgba = model_image(rgba, 700)
    assert as_rgb is not None and as_rgba is not None and as_rgb.mode == "RGB"
    assert as_rgb.tobytes() == as_rgba.convert("RGB").tobytes()


def test_a_translucent_picture_is_scaled_with_its_alpha() -> None:
    """Premultiplying by an alpha below 255 changes the colours: such a picture keeps the RGBA
    path (scaled as RGB, its colours would differ)."""
    image = Image.new("RGBA", (400, 800), (200, 40, 90, 255))
    for x in range(0, 400, 3):  # stripes of half-transparent pixels: resampling mixes them in
        for y in range(800):
            image.putpixel((x, y), (10, 220, 30, 60))
    png = _png(image)
    scaled = model_image(png, 200, rgb=True)
    assert scaled is not None and scaled.mode == "RGBA"
    straight = image.convert("RGB").resize((100, 200), Image.Resampling.BILINEAR, reducing_gap=2.0)
    assert scaled.convert("RGB").tobytes() != straight.tobytes()  # the check above matters


def test_the_carried_picture_gives_the_decoded_bytes_and_is_left_as_it_was() -> None:
    shot, marks = _sim_screen()
    before = carried_pixels(shot).tobytes()
    _clear_caches()
    from_picture = draw_marks(shot, 1152, marks)
    _clear_caches()
    decoded = draw_marks(bytes(shot), 1152, marks)
    assert from_picture == decoded
    _clear_caches()
    assert scale_for_model(shot, 1152) == scale_for_model(bytes(shot), 1152)
    assert carried_pixels(shot).tobytes() == before  # never drawn on
    picture = Image.new("RGB", (60, 120), (1, 2, 3))
    same = model_image(Screenshot(_png(picture), picture), None)  # nothing to convert or scale
    assert same is not None and same is not picture and same.tobytes() == picture.tobytes()


def test_the_models_copy_is_plain_bytes() -> None:
    """What goes into a request or a cache never holds the picture (runs must not keep pictures)."""
    shot, marks = _sim_screen()
    _clear_caches()
    for out in (scale_for_model(shot, None), scale_for_model(shot, 4096), scale_for_model(shot, 1152),
                draw_marks(shot, None, ()), draw_marks(shot, 1152, marks)):
        assert type(out) is bytes


def test_an_observation_hands_its_picture_over_once() -> None:
    from artemis_cli.operators.observe import observe

    phone = SimPhone(world="default", seed=0)
    obs = observe(phone, (phone.width, phone.height), "pixels", sleep=lambda s: None)
    assert type(obs.png) is bytes and obs.pixels is not None
    first = obs.model_screenshot()
    assert carried_pixels(first) is not None and first == obs.png
    assert obs.pixels is None and type(obs.model_screenshot()) is bytes
