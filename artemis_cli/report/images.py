"""Screenshots in the report: downscaled thumbnails, embedded once per blob or written beside it.

A screenshot is identified by its blob sha (content-addressed), so a screen seen at many steps is
decoded, scaled and encoded once (:class:`ImageStore` remembers every sha it has placed) and
appears in the HTML once: the first ``<img>`` carries the data, later ones name it with
``data-same`` and the page script copies the source over. With an assets directory the files are
written there instead (thumbnail as WebP, full image as the stored PNG) and the HTML links them.

The action marker is not burnt into the pixels (that would make every step's picture distinct):
:func:`marker_svg` draws the same ring, double ring or arrow as
:func:`artemis_cli.perception.marker.draw_action_marker` as an SVG layer over the image, in device
pixels, so it scales with the thumbnail and with the full image.

``marked`` (``artemis report --marks``): each step shows the screenshot the operator model saw —
scaled to the session's ``screenshot.max_side`` with the step's stored set-of-marks drawn
(:func:`artemis_cli.perception.marks.draw_marks`, the very bytes that were sent) — instead of the
clean recorded one; a step recorded without marks shows its clean screenshot. The marker layer
keeps the device's coordinate space, so it lands on the same spot of either picture.
"""

from __future__ import annotations

import base64
import io
import math
import os
from collections.abc import Iterable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from PIL import Image

from artemis_cli.engine.db import DataEngine
from artemis_cli.engine.errors import BlobMissing
from artemis_cli.engine.records import StepRecord
from artemis_cli.perception.marks import Mark, draw_marks, marks_digest, marks_from_json
from artemis_cli.perception.png import png_size

#: Thumbnails are at most this wide (a 1080-pixel screen: 270), shown 160 CSS pixels wide.
THUMB_WIDTH = 320
THUMB_QUALITY = 70
#: Full screenshots are embedded (as their stored PNG) only when all distinct ones of the session
#: come to at most this many bytes; above it the report stays small and ``--assets`` has them.
FULL_EMBED_LIMIT = 2 * 1024 * 1024
MARKER_COLOR = "#ff2020"

_LONG_KINDS = {"long_press", "long_click", "long_tap"}
_SWIPE_KINDS = {"swipe", "drag", "scroll", "fling"}


class AssetWriteError(Exception):
    """A file of the assets directory could not be written."""

    def __init__(self, path: Path, exc: OSError) -> None:
        super().__init__(f"cannot write {path}: {exc.strerror or exc}")
        self.path = path
        self.exc = exc


@dataclass(frozen=True)
class Thumb:
    key: str  # short sha: ids and file names
    width: int  # of the full screenshot (the marker's coordinate space)
    height: int
    src: str | None  # data URI or relative path; None: placed before (use data-same)
    full: str | None  # link to the full image (assets mode), else None
    thumb_height: int


def key_of(sha: str) -> str:
    return sha[:16]


def _scaled(png: bytes) -> tuple[bytes, int, int, int]:
    """(WebP thumbnail, full width, full height, thumbnail height).

    The thumbnail is the screenshot box-reduced by the smallest integer factor that makes it at
    most THUMB_WIDTH wide. A palette PNG (what the simulator and many screens store) is first
    sampled at twice that size, then box-reduced by 2: a 2x2 supersample at a third of the cost
    of converting every full-size pixel."""
    with Image.open(io.BytesIO(png)) as image:
        width, height = image.size
        factor = max(1, math.ceil(width / THUMB_WIDTH))
        if image.mode == "P" and factor >= 4:
            mid = (math.ceil(width / factor) * 2, math.ceil(height / factor) * 2)
            rgb = image.resize(mid, Image.Resampling.NEAREST).convert("RGB").reduce(2)
        else:
            rgb = image.convert("RGB")
            if factor >= 2:
                rgb = rgb.reduce(factor)
    buf = io.BytesIO()
    rgb.save(buf, format="WEBP", quality=THUMB_QUALITY, method=0)
    return buf.getvalue(), width, height, rgb.height


@dataclass(frozen=True)
class _Made:
    data: bytes | None  # the WebP thumbnail (embedded mode), None when it went to a file
    width: int
    height: int
    thumb_height: int


class ImageStore:
    """Places each distinct screenshot once; remembers only keys and sizes (never the pixels).

    :meth:`prefetch` starts scaling the screenshots of the steps about to be written on a small
    thread pool (Pillow releases the GIL while it decodes, scales and encodes); :meth:`thumb`
    takes the result in step order. Call :meth:`close` when done."""

    def __init__(self, engine: DataEngine, *, assets: Path | None = None, html_dir: Path | None = None,
                 embed_full: bool = False, workers: int | None = None, marked: bool = False,
                 max_side: int | None = None) -> None:
        self.engine = engine
        self.marked = marked  # show the operator's marked screenshot (scaled to ``max_side``)
        self.max_side = max_side
        self._sources: dict[str, tuple[str, tuple[Mark, ...]]] = {}  # ident -> (blob sha, marks)
        self.assets = assets
        self.embed_full = embed_full and assets is None
        self._placed: dict[str, tuple[int, int, int]] = {}
        self._failed: set[str] = set()
        self._pending: dict[str, Future[_Made | None]] = {}
        self.full_keys: list[str] = []  # embedded-mode full images to append at the end
        self._full_sha: dict[str, str] = {}
        self._rel = ""
        if Image.core.get_blocks_max() < 16:  # reuse Pillow's freed blocks: fewer page faults per image
            Image.core.set_blocks_max(16)
        count = workers if workers is not None else min(4, os.cpu_count() or 1)
        self._pool = ThreadPoolExecutor(max_workers=count) if count > 1 else None
        if assets is not None:
            base = html_dir if html_dir is not None else Path.cwd()
            self._rel = Path(os.path.relpath(assets.resolve(), base.resolve())).as_posix()
            for sub in ("thumbs", "full"):
                self._mkdir(assets / sub)

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=True)

    def _mkdir(self, path: Path) -> None:
        try:
            path.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise AssetWriteError(path, exc) from None

    def _write(self, path: Path, data: bytes) -> None:
        try:
            path.write_bytes(data)
        except OSError as exc:
            raise AssetWriteError(path, exc) from None

    def _links(self, key: str) -> tuple[str, str]:
        return f"{self._rel}/thumbs/{key}.webp", f"{self._rel}/full/{key}.png"

    def view(self, step: StepRecord) -> tuple[str | None, tuple[Mark, ...]]:
        """(screenshot sha, marks to draw) of a step as this report shows it."""
        marks = marks_from_json((step.meta or {}).get("marks")) if self.marked else ()
        return step.pre_screenshot, marks

    def _ident(self, sha: str, marks: tuple[Mark, ...]) -> str:
        """What is placed once: a blob, or a blob with one set of marks drawn."""
        if not marks:
            return sha
        ident = f"{sha[:16]}m{marks_digest(marks)[:8]}"
        self._sources.setdefault(ident, (sha, marks))
        return ident

    def _picture(self, ident: str) -> tuple[bytes, tuple[int, int] | None]:
        """(the PNG to show, the device size when it is not the PNG's own) of ``ident``."""
        sha, marks = self._sources.get(ident, (ident, ()))
        png = self.engine.blob(sha)
        if not marks:
            return png, None
        return draw_marks(png, self.max_side, marks, sha=sha), png_size(png)

    def _make(self, ident: str) -> _Made | None:
        """Read, scale and (assets mode) write one screenshot; None when it cannot be read."""
        try:
            png, device = self._picture(ident)
            data, width, height, th = _scaled(png)
        except (BlobMissing, OSError, ValueError, Image.DecompressionBombError):
            return None
        if device is not None:  # the marked model copy: the marker still speaks device pixels
            width, height = device
        if self.assets is not None:
            key = key_of(ident)
            self._write(self.assets / "thumbs" / f"{key}.webp", data)
            self._write(self.assets / "full" / f"{key}.png", png)
            return _Made(None, width, height, th)
        return _Made(data, width, height, th)

    def prefetch(self, views: Iterable[tuple[str | None, tuple[Mark, ...]]]) -> None:
        """Start scaling these screenshots (those not placed or started yet) in the background."""
        if self._pool is None:
            return
        for sha, marks in views:
            if not sha:
                continue
            ident = self._ident(sha, marks)
            if ident not in self._placed and ident not in self._failed and ident not in self._pending:
                self._pending[ident] = self._pool.submit(self._make, ident)

    def thumb(self, sha: str | None, marks: tuple[Mark, ...] = ()) -> Thumb | None:
        """The thumbnail of blob ``sha`` (with ``marks`` drawn, when given); ``src`` is None when
        it was placed before."""
        if not sha:
            return None
        sha = self._ident(sha, marks)
        if sha in self._failed:
            return None
        key = key_of(sha)
        known = self._placed.get(sha)
        if known is not None:
            width, height, th = known
            if self.assets is not None:
                thumb_link, full_link = self._links(key)
                return Thumb(key, width, height, thumb_link, full_link, th)
            return Thumb(key, width, height, None, None, th)
        future = self._pending.pop(sha, None)
        made = future.result() if future is not None else self._make(sha)
        if made is None:
            self._failed.add(sha)
            return None
        self._placed[sha] = (made.width, made.height, made.thumb_height)
        if self.assets is not None or made.data is None:
            thumb_link, full_link = self._links(key)
            return Thumb(key, made.width, made.height, thumb_link, full_link, made.thumb_height)
        if self.embed_full:
            self.full_keys.append(key)
            self._full_sha[key] = sha
        src = "data:image/webp;base64," + base64.b64encode(made.data).decode("ascii")
        return Thumb(key, made.width, made.height, src, None, made.thumb_height)

    def full_data(self, key: str) -> str | None:
        """The stored PNG of an embedded full image, as a data URI (read when it is written out)."""
        sha = self._full_sha.get(key)
        if sha is None:
            return None
        try:
            return "data:image/png;base64," + base64.b64encode(self._picture(sha)[0]).decode("ascii")
        except (BlobMissing, OSError):
            return None


def distinct_screenshot_bytes(engine: DataEngine, session_id: str) -> int:
    """Stored size of the session's distinct pre-action screenshots (one query)."""
    rows = list(engine.db.query(
        "SELECT COALESCE(SUM(size), 0) AS n FROM blobs WHERE sha256 IN "
        "(SELECT DISTINCT pre_screenshot FROM steps WHERE session_id = ? AND pre_screenshot IS NOT NULL)",
        [session_id],
    ))
    return int(rows[0]["n"]) if rows else 0


def marker_svg(kind: str, points: list[tuple[int, int]], width: int, height: int) -> str:
    """The action drawn as an SVG layer in device pixels: ring + dot for a tap, two rings + dot
    for a long press, an arrow for a swipe (sizes scale with the shorter side, as on the PNG)."""
    if not points or width <= 0 or height <= 0:
        return ""
    unit = max(1.0, min(width, height) / 1080)
    # a little bolder than on the full-size PNG marker: it has to read on a 160-pixel thumbnail
    stroke = max(2, round(10 * unit))
    radius = 60 * unit
    dot = 16 * unit
    kind = kind.lower()
    (x, y) = points[0]
    c = MARKER_COLOR
    parts = [f"<svg class='mark' viewBox='0 0 {width} {height}' preserveAspectRatio='none' aria-hidden='true'>"]
    if kind in _SWIPE_KINDS and len(points) >= 2:
        (x1, y1) = points[1]
        angle = math.atan2(y1 - y, x1 - x)
        head = 48 * unit
        spread = math.radians(28)
        lx, ly = x1 - head * math.cos(angle - spread), y1 - head * math.sin(angle - spread)
        rx, ry = x1 - head * math.cos(angle + spread), y1 - head * math.sin(angle + spread)
        parts.append(f"<circle cx='{x}' cy='{y}' r='{dot:.0f}' fill='{c}'/>"
                     f"<line x1='{x}' y1='{y}' x2='{x1}' y2='{y1}' stroke='{c}' stroke-width='{stroke}'/>"
                     f"<polygon points='{x1},{y1} {lx:.0f},{ly:.0f} {rx:.0f},{ry:.0f}' fill='{c}'/>")
        if kind == "drag":  # the hold before the move
            parts.append(f"<circle cx='{x}' cy='{y}' r='{radius:.0f}' fill='none' stroke='{c}' stroke-width='{stroke}'/>")
    elif kind in ("double_tap", "double_click"):
        for cx in (round(x - radius * 0.45), round(x + radius * 0.45)):
            parts.append(f"<circle cx='{cx}' cy='{y}' r='{radius:.0f}' fill='none' stroke='{c}' stroke-width='{stroke}'/>")
        parts.append(f"<circle cx='{x}' cy='{y}' r='{dot:.0f}' fill='{c}'/>")
    else:
        parts.append(f"<circle cx='{x}' cy='{y}' r='{radius:.0f}' fill='none' stroke='{c}' stroke-width='{stroke}'/>")
        if kind in _LONG_KINDS:
            parts.append(f"<circle cx='{x}' cy='{y}' r='{radius * 1.6:.0f}' fill='none' stroke='{c}' "
                         f"stroke-width='{stroke}'/>")
        parts.append(f"<circle cx='{x}' cy='{y}' r='{dot:.0f}' fill='{c}'/>")
    parts.append("</svg>")
    return "".join(parts)
