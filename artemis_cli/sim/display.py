"""The phone's display: physical size, ``wm size``/``wm density`` overrides and the rotation.

The rotation (0-3, Surface.ROTATION_0..270) follows the settings as on Android 14 with no
accelerometer reading to act on: with ``accelerometer_rotation`` 0 (the default, auto-rotate off)
the display takes ``user_rotation``; with auto-rotate on the phone lies upright (rotation 0).
The logical display is the override size (else the physical size), its sides swapped when the
rotation is 1 or 3: screenshots, dumps, ``input`` coordinates and the apps' layout all use it;
``wm size`` keeps printing the physical (natural-orientation) size, as a phone does.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from artemis_cli.sim.system import SettingsStore

PHYSICAL_DENSITY = 420
ROTATIONS = (0, 1, 2, 3)
_SIZE = re.compile(r"(\d+)x(\d+)")


@dataclass
class Display:
    phys_w: int
    phys_h: int
    override: tuple[int, int] | None = None
    density: int | None = None  # wm density override

    def rotation(self, settings: SettingsStore) -> int:
        if settings.get_int("system", "accelerometer_rotation", 0) != 0:
            return 0
        r = settings.get_int("system", "user_rotation", 0)
        return r if r in ROTATIONS else 0

    def natural(self) -> tuple[int, int]:
        return self.override or (self.phys_w, self.phys_h)

    def logical(self, settings: SettingsStore) -> tuple[int, int]:
        w, h = self.natural()
        return (h, w) if self.rotation(settings) % 2 else (w, h)

    # --- wm ------------------------------------------------------------------------------
    def wm(self, args: list[str]) -> tuple[str, str, int]:
        """``wm size [WxH|reset]`` / ``wm density [N|reset]``: (stdout, stderr, status)."""
        sub, rest = (args[0] if args else ""), args[1:]
        if sub == "size":
            if not rest:
                text = f"Physical size: {self.phys_w}x{self.phys_h}\n"
                if self.override:
                    text += f"Override size: {self.override[0]}x{self.override[1]}\n"
                return text, "", 0
            if rest[0] == "reset":
                self.override = None
                return "", "", 0
            m = _SIZE.fullmatch(rest[0])
            if m is None:
                return "", f"Error: bad size {rest[0]}\n", 255
            w, h = int(m.group(1)), int(m.group(2))
            if not (200 <= w <= 4000 and 300 <= h <= 6000):  # the sim's supported sizes (SimPhone)
                return "", f"Error: bad size {rest[0]}\n", 255
            self.override = None if (w, h) == (self.phys_w, self.phys_h) else (w, h)
            return "", "", 0
        if sub == "density":
            if not rest:
                text = f"Physical density: {PHYSICAL_DENSITY}\n"
                if self.density:
                    text += f"Override density: {self.density}\n"
                return text, "", 0
            if rest[0] == "reset":
                self.density = None
                return "", "", 0
            if not rest[0].isdigit():  # WindowManagerShellCommand.runDisplayDensity's messages
                return "", (f"Error: bad number java.lang.NumberFormatException: For input string: "
                            f"\"{rest[0]}\"\n"), 255
            if int(rest[0]) < 72:
                return "", "Error: density must be >= 72\n", 255
            self.density = None if int(rest[0]) == PHYSICAL_DENSITY else int(rest[0])
            return "", "", 0
        if not sub:
            return "", _WM_USAGE, 255
        return "", f"Error: unknown command '{sub}'\n" + _WM_USAGE, 255

    # --- dumpsys ---------------------------------------------------------------------------
    def dumpsys_display(self, settings: SettingsStore, screen_on: bool) -> str:
        """``dumpsys display``: adbutils' ``rotation()`` reads the first ``orientation=N``."""
        rot = self.rotation(settings)
        w, h = self.logical(settings)
        pw, ph = self.phys_w, self.phys_h
        dw, dh = (ph, pw) if rot % 2 else (pw, ph)
        dens = self.density or PHYSICAL_DENSITY
        return ("DISPLAY MANAGER (dumpsys display)\n  mOnlyCore=false\n"
                f"  mDefaultViewport=DisplayViewport{{type=INTERNAL, valid=true, isActive=true, displayId=0, "
                f"uniqueId='local:0', physicalPort=0, orientation={rot}, logicalFrame=Rect(0, 0 - {w}, {h}), "
                f"physicalFrame=Rect(0, 0 - {dw}, {dh}), deviceWidth={dw}, deviceHeight={dh}}}\n"
                "Display Devices: size=1\n"
                f'  DisplayDeviceInfo{{"Built-in Screen": uniqueId="local:0", {pw} x {ph}, modeId 1, '
                f"density {PHYSICAL_DENSITY}, rotation 0, type INTERNAL}}\n"
                f"  mScreenState={'ON' if screen_on else 'OFF'}\n"
                "Logical Displays: size=1\n  Display 0:\n"
                f"    mBaseDisplayInfo=DisplayInfo{{\"Built-in Screen\", displayId 0, real {w} x {h}, "
                f"rotation {rot}, density {dens}}}\n")

    def dumpsys_input(self, settings: SettingsStore) -> str:
        """``dumpsys input``: the viewport and ``SurfaceOrientation`` lines of InputReader."""
        rot = self.rotation(settings)
        w, h = self.logical(settings)
        return ("INPUT MANAGER (dumpsys input)\n\nInput Manager State:\n  Interactive: true\n"
                "Input Reader State (Nums of device: 1):\n"
                "  Device 1: sec_touchscreen\n    Sources: TOUCHSCREEN\n"
                f"    Viewport INTERNAL: displayId=0, uniqueId=local:0, port=0, orientation={rot}, "
                f"logicalFrame=[0, 0, {w}, {h}], physicalFrame=[0, 0, {w}, {h}], "
                f"deviceSize=[{self.phys_w}, {self.phys_h}]\n"
                f"    SurfaceWidth: {w}px\n    SurfaceHeight: {h}px\n    SurfaceOrientation: {rot}\n"
                f"  Configuration:\n    Rotation: {rot}\n")


_WM_USAGE = ("Window manager (window) commands:\n  help\n      Print this help text.\n"
             "  size [reset|WxH|WdpxHdp] [-d DISPLAY_ID]\n    Return or override display size.\n"
             "  density [reset|DENSITY] [-d DISPLAY_ID]\n    Return or override display density.\n")


def with_rotation(xml: str, rotation: int) -> str:
    """A dump's ``<hierarchy rotation="N">`` for the display's rotation (the dumpers write 0)."""
    if rotation == 0:
        return xml
    return xml.replace('<hierarchy rotation="0">', f'<hierarchy rotation="{rotation}">', 1)
