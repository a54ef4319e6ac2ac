"""Draw windows with Pillow into a palette image; encode PNGs fast (palette + Z_RLE)."""

from __future__ import annotations

import io

from PIL import Image, ImageDraw, ImageFont

from artemis_cli.perception.bytecache import FONT_BYTES, MB, memoize
from artemis_cli.sim.widgets import Rect, Widget, Window

_LIGHT = {
    "bg": (255, 255, 255), "surface": (250, 248, 252), "appbar": (238, 240, 250), "text": (28, 27, 31),
    "muted": (96, 96, 104), "primary": (63, 81, 181), "on_primary": (255, 255, 255), "divider": (224, 224, 228),
    "error": (198, 40, 40), "accent": (0, 121, 107), "track_off": (200, 200, 206), "thumb_off": (120, 120, 128),
    "track_on": (160, 172, 232), "statusbar": (232, 234, 246), "status_text": (28, 27, 31),
    "wallpaper": (52, 84, 120), "wall_text": (255, 255, 255), "edit_bg": (245, 245, 250),
    "kb_bg": (226, 228, 234), "key": (255, 255, 255), "key_text": (28, 27, 31), "disabled": (205, 205, 210),
    "dialog": (255, 255, 255), "selected": (220, 226, 250), "black": (0, 0, 0),
}
_DARK = {
    "bg": (18, 18, 20), "surface": (30, 30, 34), "appbar": (34, 34, 44), "text": (232, 232, 236),
    "muted": (168, 168, 176), "primary": (144, 160, 255), "on_primary": (16, 20, 60), "divider": (56, 56, 62),
    "error": (255, 120, 110), "accent": (100, 220, 200), "track_off": (80, 80, 88), "thumb_off": (170, 170, 178),
    "track_on": (80, 96, 180), "statusbar": (24, 24, 30), "status_text": (232, 232, 236),
    "wallpaper": (20, 36, 60), "wall_text": (240, 240, 240), "edit_bg": (40, 40, 46),
    "kb_bg": (36, 36, 40), "key": (60, 60, 66), "key_text": (236, 236, 240), "disabled": (70, 70, 76),
    "dialog": (40, 40, 46), "selected": (50, 56, 90), "black": (0, 0, 0),
}
_ICONS = [(233, 84, 68), (76, 175, 80), (33, 150, 243), (255, 167, 38), (171, 71, 188), (0, 150, 136)]
_NAMES = list(_LIGHT)
_BASE = [_LIGHT[n] for n in _NAMES] + [_DARK[n] for n in _NAMES] + _ICONS
assert len(_BASE) <= 64
_PALETTE: list[int] = []
for _c in _BASE + [(0, 0, 0)] * (64 - len(_BASE)):
    _PALETTE += list(_c)
for _c in _BASE + [(0, 0, 0)] * (64 - len(_BASE)):
    _PALETTE += [round(v * 0.42) for v in _c]  # the same colours under a dialog scrim
_PALETTE += [0] * (768 - len(_PALETTE))
_SCRIM_LUT = [i + 64 if i < 64 else i for i in range(256)]


class Colors:
    def __init__(self, dark: bool) -> None:
        off = len(_NAMES) if dark else 0
        self.idx = {n: i + off for i, n in enumerate(_NAMES)}

    def __getitem__(self, name: str) -> int:
        return self.idx.get(name, self.idx["text"])

    @staticmethod
    def icon(label: str) -> int:
        return 2 * len(_NAMES) + sum(map(ord, label)) % len(_ICONS)


#: Bound: 4 MB, ~60 sizes (what the sim's widgets use at any screen size).
@memoize("sim.fonts", 4 * MB, lambda args, font: FONT_BYTES)
def font(size: int) -> ImageFont.FreeTypeFont:
    f = ImageFont.load_default(size=max(8, size))
    assert isinstance(f, ImageFont.FreeTypeFont)
    return f


#: Bound: 8 MB of masks (Pillow keeps a "1" picture at a byte a pixel: a 300x40 label is ~13 KB),
#: ~1,000 labels: every label of the screens a session moves between, drawn once.
@memoize("sim.text_masks", 8 * MB)
def _mask(text: str, size: int) -> tuple[Image.Image, int, int]:
    """A 1-bit mask of ``text`` plus the offset of its top-left relative to the text origin."""
    f = font(size)
    lf, t, r, b = f.getbbox(text)
    m = Image.new("1", (max(1, int(r - lf)), max(1, int(b - t))), 0)
    ImageDraw.Draw(m).text((-lf, -t), text, font=f, fill=1)
    return m, int(lf), int(t)


def visible_prefix(text: str, max_w: int) -> str:
    """The part of ``text`` that can show in ``max_w`` pixels (every glyph advances at least one
    pixel), so a field holding a megabyte of text renders as fast as one holding a line: a phone
    accepts long text in a field and shows its start. Pillow refuses strings over a million
    characters."""
    return text[:max(1, max_w) + 1]


def fit(text: str, size: int, max_w: int) -> str:
    """``text`` cut (with "...") to ``max_w`` pixels; the cache keys on the visible prefix only."""
    return _fit(visible_prefix(text, max_w), size, max_w)


#: Bound: 1 MB, ~3,000 labels (an entry is two short strings and two ints: ~300 bytes).
@memoize("sim.fitted_labels", 1 * MB)
def _fit(text: str, size: int, max_w: int) -> str:
    f = font(size)
    if f.getlength(text) <= max_w:
        return text
    # the longest prefix that fits with "...", found by halving (a width grows with its prefix):
    # dropping one character at a time measured a 10 KB label 10,000 times (75 s a screenshot)
    lo, hi = 0, len(text)
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if f.getlength(text[:mid] + "...") <= max_w:
            lo = mid
        else:
            hi = mid - 1
    return text[:lo] + "..." if lo else ""


def wrap(text: str, size: int, max_w: int) -> list[str]:
    f = font(size)
    lines: list[str] = []
    for para in text.split("\n"):
        cur = ""
        for word in para.split(" "):
            cand = word if not cur else cur + " " + word
            if f.getlength(cand) <= max_w or not cur:
                cur = cand
            else:
                lines.append(cur)
                cur = word
        lines.append(cur)
    return lines


class Painter:
    def __init__(self, img: Image.Image, colors: Colors, ox: int = 0, oy: int = 0) -> None:
        self.img = img
        self.d = ImageDraw.Draw(img)
        self.c = colors
        self.ox, self.oy = ox, oy

    def r(self, box: Rect) -> tuple[int, int, int, int]:
        return (box[0] - self.ox, box[1] - self.oy, box[2] - self.ox - 1, box[3] - self.oy - 1)

    def text(self, box: Rect, s: str, size: int, color: str, align: str = "left", pad: int = 0) -> None:
        if not s:
            return
        lf, t, r, b = self.r(box)
        max_w = max(1, r - lf - 2 * pad)
        s = fit(s, size, max_w)
        if not s:
            return
        m, ml, mt = _mask(s, size)
        f = font(size)
        asc, desc = f.getmetrics()
        y = (t + b) // 2 - (asc + desc) // 2 + mt + 1
        x = lf + pad + ml if align == "left" else (lf + r) // 2 - m.width // 2
        y = max(t, min(y, b - m.height))
        self.img.paste(self.c[color], (x, y, x + m.width, y + m.height), m)

    def lines(self, box: Rect, s: str, size: int, color: str, pad: int) -> None:
        lf, t, r, b = self.r(box)
        y = t + pad
        step = round(size * 1.3)
        rows = max(1, (b - t) // max(1, step) + 1)
        for line in wrap(visible_prefix(s, rows * max(1, r - lf)), size, r - lf - 2 * pad):
            if y + step > b:
                break
            self.text((lf + self.ox, y + self.oy, r + self.ox, y + step + self.oy), line, size, color, pad=pad)
            y += step


def _draw(p: Painter, w: Widget) -> None:
    k = w.kind
    c = p.c
    box = w.box
    lf, t, r, b = p.r(box)
    d = p.d
    if k == "window":
        d.rectangle((lf, t, r, b), fill=c["bg"])
    elif k == "wallpaper":
        d.rectangle((lf, t, r, b), fill=c["wallpaper"])
    elif k in ("statusbar", "navbar"):
        d.rectangle((lf, t, r, b), fill=c["statusbar"])
    elif k == "keyboard":
        d.rectangle((lf, t, r, b), fill=c["kb_bg"])
    elif k == "key":
        d.rounded_rectangle((lf + 6, t + 8, r - 6, b - 8), radius=12, fill=c["key"])
        p.text(box, w.display or "", max(24, (b - t + 1) // 3), "key_text", "center")
    elif k == "appbar":
        d.rectangle((lf, t, r, b), fill=c["appbar"])
    elif k == "dialog":
        d.rounded_rectangle((lf, t, r, b), radius=max(4, (b - t) // 30), fill=c["dialog"])
    elif k == "footer":
        d.rectangle((lf, t, r, b), fill=c["surface"])
        d.line((lf, t, r, t), fill=c["divider"], width=2)
    elif k == "row":
        d.line((lf, b, r, b), fill=c["divider"], width=1)
    elif k == "tab":
        if w.selected:
            d.rectangle((lf, b - 6, r, b), fill=c["primary"])
        p.text(box, w.text, w.size, "primary" if w.selected else "muted", "center")
    elif k == "text":
        if "\n" in w.text:
            p.lines(box, w.text, w.size, w.color or "text", 0)
        else:
            p.text(box, w.text, w.size, w.color or "text", w.align)
    elif k in ("button", "fab"):
        fill = c["primary"] if w.enabled else c["disabled"]
        d.rounded_rectangle((lf, t, r, b), radius=min((b - t) // 2, (r - lf) // 2, 40 if k == "button" else 999),
                            fill=fill)
        if w.display == "plus":
            _glyph(p, box, "plus", "on_primary")
        else:
            p.text(box, w.text, w.size, "on_primary" if w.enabled else "muted", "center", pad=8)
    elif k == "flat":
        d.rounded_rectangle((lf, t, r, b), radius=min((b - t) // 2, 30), outline=c["divider"], width=2)
        p.text(box, w.text, w.size, "primary" if w.enabled else "muted", "center", pad=6)
    elif k == "icon":
        _glyph(p, box, w.display or "", w.color or "text")
    elif k == "switch":
        h = b - t
        th = h * 2 // 3
        ty = t + (h - th) // 2
        d.rounded_rectangle((lf, ty, r, ty + th), radius=th // 2, fill=c["track_on" if w.checked else "track_off"])
        cx = r - h // 2 if w.checked else lf + h // 2
        d.ellipse((cx - h // 2 + 2, t + 2, cx + h // 2 - 2, b - 2), fill=c["primary" if w.checked else "thumb_off"])
    elif k in ("radio", "checkbox"):
        s = min(b - t, 64)
        y0 = (t + b - s) // 2
        outer = (lf + 8, y0, lf + 8 + s, y0 + s)
        if k == "radio":
            d.ellipse(outer, outline=c["primary"], width=5)
            if w.checked:
                d.ellipse((outer[0] + 14, outer[1] + 14, outer[2] - 14, outer[3] - 14), fill=c["primary"])
        else:
            d.rectangle(outer, outline=c["primary"], width=5, fill=c["primary"] if w.checked else None)
        p.text((box[0] + s + 40, box[1], box[2], box[3]), w.text, w.size, "text")
    elif k == "edit":
        d.rectangle((lf, t, r, b), fill=c["edit_bg"])
        d.rectangle((lf, t, r, b), outline=c["primary" if w.focused else "divider"], width=5 if w.focused else 2)
        pad = 24
        hint = w.display is not None
        if hint:
            p.text(box, w.text, w.size, "muted", pad=pad)
        elif w.password:
            n = len(w.text)
            dot = max(6, w.size // 3)
            cy = (t + b) // 2
            for i in range(n):
                x = lf + pad + i * (dot + dot // 1)
                if x + dot > r - pad:
                    break
                d.ellipse((x, cy - dot // 2, x + dot, cy + dot // 2), fill=c["text"])
        elif w.color == "multiline":
            p.lines(box, w.text, w.size, "text", pad)
        else:
            p.text(box, w.text, w.size, "text", pad=pad)
        if w.focused and not hint and not w.password and w.color != "multiline":
            tw = min(font(w.size).getlength(fit(w.text, w.size, r - lf - 2 * pad)), r - lf - 2 * pad)
            x = int(lf + pad + tw + 4)
            d.line((x, t + 16, x, b - 16), fill=c["primary"], width=3)
    elif k == "launcher_icon":
        s = min(r - lf, b - t) * 3 // 5
        cx = (lf + r) // 2
        d.ellipse((cx - s // 2, t + 10, cx + s // 2, t + 10 + s), fill=Colors.icon(w.text))
        p.text((box[0], box[1] + 10, box[2], box[1] + 10 + s), w.text[:1], w.size * 2, "on_primary", "center")
        p.text((box[0], box[1] + s + 20, box[2], box[3]), w.text, w.size, "wall_text", "center")
    elif k == "avatar":
        d.ellipse((lf, t, r, b), fill=Colors.icon(w.display or "?"))
        p.text(box, w.display or "", (b - t) // 2, "on_primary", "center")
    for child in w.children:
        if child.kind == "list":
            _draw_list(p, child)
        else:
            _draw(p, child)


def _glyph(p: Painter, box: Rect, name: str, color: str) -> None:
    lf, t, r, b = p.r(box)
    cx, cy = (lf + r) // 2, (t + b) // 2
    s = max(8, min(r - lf, b - t) // 4)
    col = p.c[color]
    wd = max(3, s // 4)
    if name in ("plus", "minus"):
        p.d.line((cx - s, cy, cx + s, cy), fill=col, width=wd)
        if name == "plus":
            p.d.line((cx, cy - s, cx, cy + s), fill=col, width=wd)
    elif name == "back":
        p.d.line((cx - s, cy, cx + s, cy), fill=col, width=wd)
        p.d.line((cx - s, cy, cx, cy - s), fill=col, width=wd)
        p.d.line((cx - s, cy, cx, cy + s), fill=col, width=wd)
    elif name == "more":  # the overflow menu's three vertical dots
        dot = max(3, s // 3)
        for dy in (-s, 0, s):
            p.d.ellipse((cx - dot // 2, cy + dy - dot // 2, cx + dot // 2, cy + dy + dot // 2), fill=col)
    elif name == "nav_back":  # a triangle pointing left
        s = max(8, min(r - lf, b - t) // 6)
        p.d.polygon([(cx - s, cy), (cx + s, cy - s), (cx + s, cy + s)], outline=col, width=max(3, s // 5))
    elif name == "nav_home":
        s = max(8, min(r - lf, b - t) // 6)
        p.d.ellipse((cx - s, cy - s, cx + s, cy + s), outline=col, width=max(3, s // 5))
    elif name == "nav_recents":
        s = max(7, min(r - lf, b - t) // 7)
        p.d.rounded_rectangle((cx - s, cy - s, cx + s, cy + s), radius=max(2, s // 4), outline=col,
                              width=max(3, s // 5))
    else:
        p.d.ellipse((cx - s, cy - s, cx + s, cy + s), outline=col, width=wd)


def _draw_list(p: Painter, lst: Widget) -> None:
    """Rows are drawn at their unclipped frames onto a viewport-sized layer, then pasted."""
    lf, t, r, b = lst.bounds
    if r <= lf or b <= t:
        return
    layer = Image.new("P", (r - lf, b - t), p.c["bg"])
    sub = Painter(layer, p.c, lf, t)
    for child in lst.children:
        _draw(sub, child)
    p.img.paste(layer, (lf - p.ox, t - p.oy))


def render(windows: list[Window], width: int, height: int, *, dark: bool) -> Image.Image:
    """Draw ``windows`` bottom to top; a modal window dims everything drawn before it."""
    colors = Colors(dark)
    img = Image.new("P", (width, height), colors["bg"])
    img.putpalette(_PALETTE)
    for win in windows:
        if win.modal:
            img = img.point(_SCRIM_LUT)
            img.putpalette(_PALETTE)
        p = Painter(img, colors)
        if win.root.kind == "list":
            _draw_list(p, win.root)
        else:
            _draw(p, win.root)
    return img


def encode_png(img: Image.Image) -> bytes:
    buf = io.BytesIO()
    img.save(buf, "PNG", compress_level=1, compress_type=3)  # Z_RLE: fast on flat UI pictures
    return buf.getvalue()
