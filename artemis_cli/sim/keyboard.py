"""The on-screen keyboard's keys: shown when a text field is focused, as a window of its own
(``sysui.ime_window``: drawn, and dumped by uiautomator2 like Gboard's window)."""

from __future__ import annotations

from dataclasses import dataclass

from artemis_cli.sim.widgets import Rect

LETTERS = ["qwertyuiop", "asdfghjkl", "zxcvbnm"]
SYMBOLS = ["1234567890", "@#$_&-+()/", "*\"':;!?"]


@dataclass(frozen=True)
class Key:
    rect: Rect
    label: str  # what is drawn
    action: str  # a character to type, or one of: shift, delete, mode, space, enter


@dataclass
class KeyboardState:
    shift: bool = False
    symbols: bool = False


def keyboard_top(width: int, height: int) -> int:
    return height - min(round(760 * width / 1080), height * 2 // 5)


def layout(width: int, height: int, st: KeyboardState) -> list[Key]:
    top = keyboard_top(width, height)
    row_h = (height - top - round(40 * width / 1080)) // 4
    rows = SYMBOLS if st.symbols else LETTERS
    keys: list[Key] = []
    unit = width // 10
    for r, chars in enumerate(rows):
        y0 = top + round(20 * width / 1080) + r * row_h
        if r < 2:
            x0 = (width - unit * len(chars)) // 2
            for i, ch in enumerate(chars):
                c = ch.upper() if st.shift and not st.symbols else ch
                keys.append(Key((x0 + i * unit, y0, x0 + (i + 1) * unit, y0 + row_h), c, c))
        else:
            keys.append(Key((0, y0, unit * 3 // 2, y0 + row_h), "Shift" if not st.symbols else "", "shift"))
            x0 = unit * 3 // 2
            for i, ch in enumerate(chars):
                c = ch.upper() if st.shift and not st.symbols else ch
                keys.append(Key((x0 + i * unit, y0, x0 + (i + 1) * unit, y0 + row_h), c, c))
            keys.append(Key((width - unit * 3 // 2, y0, width, y0 + row_h), "Del", "delete"))
    y0 = top + round(20 * width / 1080) + 3 * row_h
    keys += [
        Key((0, y0, unit * 3 // 2, y0 + row_h), "ABC" if st.symbols else "?123", "mode"),
        Key((unit * 3 // 2, y0, unit * 5 // 2, y0 + row_h), ",", ","),
        Key((unit * 5 // 2, y0, unit * 15 // 2, y0 + row_h), "space", "space"),
        Key((unit * 15 // 2, y0, unit * 17 // 2, y0 + row_h), ".", "."),
        Key((unit * 17 // 2, y0, width, y0 + row_h), "Enter", "enter"),
    ]
    return keys
