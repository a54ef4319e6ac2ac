"""Raw `screencap` (no -p) decoded and PNG-encoded on the host: header variants, pixel formats,
fallbacks to `screencap -p`, and the sim's adbd through the real adb server."""

from __future__ import annotations

import io
import struct
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from fake_adb_server import FakeAdbServer, FakeShell
from PIL import Image

from artemis_cli.device.adb import AdbDevice, RawFrameError, decode_raw_screencap
from artemis_cli.operators.observe import observe

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "adbd"))
from adbd_support import SimDevice, adb_server, needs_adb, sim_device

__all__ = ["adb_server", "sim_device"]  # fixtures used below

SERIAL = "emulator-5554"
StartFake = Callable[..., FakeAdbServer]


def frame(img: Image.Image, fmt: int = 1, header: int = 16) -> bytes:
    raw = {1: ("RGBA", "RGBA"), 2: ("RGBX", "RGB"), 5: ("BGRA", "RGBA")}[fmt]
    pixels = img.convert(raw[1]).tobytes("raw", raw[0])
    head = struct.pack("<IIII", img.width, img.height, fmt, 0)[:header]
    return head + pixels


def picture(w: int = 6, h: int = 4) -> Image.Image:
    img = Image.new("RGBA", (w, h))
    img.putdata([(x * 40 % 256, y * 60 % 256, (x + y) * 20 % 256, 255) for y in range(h) for x in range(w)])
    return img


def png_of(img: Image.Image) -> bytes:
    buf = io.BytesIO()
    img.save(buf, format="PNG")
    return buf.getvalue()


def pixels(png: bytes) -> bytes:
    return Image.open(io.BytesIO(png)).convert("RGBA").tobytes()


@pytest.fixture
def dev(fake_adb: StartFake) -> Iterator[Callable[[FakeShell], AdbDevice]]:
    def make(shell: FakeShell) -> AdbDevice:
        return AdbDevice(SERIAL, port=fake_adb({SERIAL: "device"}, shell=shell).port, sleep=lambda s: None)

    yield make


@pytest.mark.parametrize(("fmt", "header"), [(1, 16), (1, 12), (2, 16), (5, 12)])
def test_raw_frames_decode_losslessly(dev: Callable[[FakeShell], AdbDevice], fmt: int, header: int) -> None:
    img = picture()
    shell = FakeShell(rules={"screencap": [frame(img, fmt, header)]})
    d = dev(shell)
    png = d.screenshot()
    assert pixels(png) == img.tobytes()
    assert d.last_capture == "raw" and d.last_capture_lossless
    assert shell.commands == ["screencap"]  # one round trip, no -p


def test_auto_times_both_captures_once_and_keeps_the_faster(dev: Callable[[FakeShell], AdbDevice]) -> None:
    img = picture()
    shell = FakeShell(rules={"screencap": [frame(img)], "screencap -p": [png_of(img)]})
    d = dev(shell)
    shots = [d.screenshot() for _ in range(4)]
    assert all(pixels(s) == img.tobytes() for s in shots)
    assert shell.commands[:2] == ["screencap", "screencap -p"] and set(d.capture_ms) == {"raw", "png"}
    chosen = "screencap" if d.capture_ms["raw"] <= d.capture_ms["png"] else "screencap -p"
    assert shell.commands[2:] == [chosen, chosen] and d.raw_screencap == (chosen == "screencap")
    forced = AdbDevice(SERIAL, port=d.port, sleep=lambda s: None, screencap_mode="png")
    forced.screenshot()
    assert shell.commands[-1] == "screencap -p" and forced.last_capture == "png"


def test_translucent_pixels_keep_their_alpha() -> None:
    img = picture()
    img.putpixel((0, 0), (1, 2, 3, 128))
    assert decode_raw_screencap(frame(img)).getpixel((0, 0)) == (1, 2, 3, 128)


def test_a_failed_raw_capture_falls_back_to_png_for_that_capture(dev: Callable[[FakeShell], AdbDevice]) -> None:
    img = picture()
    shell = FakeShell(rules={"screencap": ["Capturing failed.\n", frame(img)], "screencap -p": [png_of(img)]})
    d = dev(shell)
    assert pixels(d.screenshot()) == img.tobytes()
    assert d.last_capture is not None and d.last_capture.startswith("png-fallback")
    assert d.raw_screencap  # transient: raw is tried again
    d.screenshot()
    assert d.last_capture == "raw"


@pytest.mark.parametrize("bad", ["truncated", "crlf", "format"])
def test_unusable_raw_frames_turn_raw_off(dev: Callable[[FakeShell], AdbDevice], bad: str) -> None:
    img = picture()
    data = frame(img)
    if bad == "truncated":
        data = data[:-5]
    elif bad == "crlf":
        data = struct.pack("<IIII", img.width, img.height, 1, 0) + b"\n" + data[16:].replace(b"\n", b"\r\n")
    else:
        data = struct.pack("<IIII", img.width, img.height, 4, 0) + b"\0" * (img.width * img.height * 2)
    shell = FakeShell(rules={"screencap": [data], "screencap -p": [png_of(img)]})
    d = dev(shell)
    assert pixels(d.screenshot()) == img.tobytes()
    assert d.last_capture is not None and d.last_capture.startswith("png-fallback") and not d.raw_screencap
    d.screenshot()
    assert d.last_capture == "png" and shell.commands[-1] == "screencap -p"


def test_short_or_garbage_output_is_not_a_frame() -> None:
    for data in (b"", b"abc", b"Capturing failed.\n", struct.pack("<III", 0, 10, 1)):
        with pytest.raises(RawFrameError):
            decode_raw_screencap(data)


@needs_adb
def test_sim_adbd_serves_raw_frames_to_the_adb_backend(sim_device: SimDevice) -> None:
    raw = AdbDevice(sim_device.serial, port=sim_device.adb.port, sleep=lambda s: None, screencap_mode="raw")
    png = raw.screenshot()
    assert raw.last_capture == "raw"
    assert pixels(png) == sim_device.phone.render_image().convert("RGBA").tobytes()
    obs = observe(raw, (1080, 2400), "pixels", sleep=lambda s: None)
    assert obs.capture_path == "raw" and obs.capture_lossless
    # an `adb connect` device: auto keeps the phone's own PNG (the raw transfer costs more there)
    auto = AdbDevice(sim_device.serial, port=sim_device.adb.port, sleep=lambda s: None)
    assert auto.screenshot() == sim_device.phone.render_png() and auto.last_capture == "png"
