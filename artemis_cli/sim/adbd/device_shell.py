"""The device side behind the adbd: the simulated phone's shell plus what uiautomator2 installs.

Everything the adb backend and uiautomator2 run goes to ``SimPhone.run`` (the phone's shell),
except the few things a plain phone shell does not provide and a real device gets from
uiautomator2's files and apps:

* ``CLASSPATH=/data/local/tmp/u2.jar app_process / com.wetest.uia2.Main -p 9008``: starts the
  uiautomator2 server (it runs while that shell stream stays open, like the real process);
* ``ime list|enable|set|disable`` and ``am broadcast -a ADB_KEYBOARD_…``: uiautomator2's
  AdbKeyboard IME, present only when the device was built with ``adb_keyboard=True`` (as after
  ``python -m uiautomator2 init``); otherwise ``ime list`` shows only the stock keyboard and
  broadcasts are not received (``result=0``);
* ``…; echo X4EXIT:$?`` (adbutils' exit-status trick over legacy ``shell:``), ``dumpsys display``
  (rotation), ``dumpsys SurfaceFlinger --display-id`` and ``screencap -d ID``.

All phone access goes through one lock: streams run concurrently, the phone is single-threaded.
"""

from __future__ import annotations

import base64
import binascii
import re
import shlex
import threading
from dataclasses import dataclass, field

from artemis_cli.sim.phone import SimPhone
from artemis_cli.sim.shell import ShellResult

U2_JAR = "/data/local/tmp/u2.jar"
U2_MAIN = "com.wetest.uia2.Main"
U2_PORT = 9008
LATIN_IME = "com.android.inputmethod.latin/.LatinIME"
ADB_KEYBOARD = "com.github.uiautomator/.AdbKeyboard"
DISPLAY_ID = "4619827259835644672"

_EXIT_TRICK = re.compile(r"^(?P<cmd>.*?);?\s*echo\s+(?P<magic>\w+:)\$\?\s*$", re.DOTALL)
_U2_LAUNCH = re.compile(r"app_process\s.*\b" + re.escape(U2_MAIN) + r"\b(?:.*-p\s+(?P<port>\d+))?")
_SCREENCAP_D = re.compile(r"^(\s*screencap\b.*?)\s-d\s+\d+(.*)$")


@dataclass
class U2State:
    """Whether the uiautomator2 server "process" runs, and on which device port."""

    running: bool = False
    port: int = U2_PORT
    clipboard: str = ""
    touch_down: tuple[int, int] | None = None
    starts: int = 0


@dataclass
class DeviceSide:
    phone: SimPhone
    adb_keyboard: bool = False
    u2_can_start: bool = True  # False: app_process fails like a phone where another UiAutomation runs
    lock: threading.RLock = field(default_factory=threading.RLock)
    u2: U2State = field(default_factory=U2State)

    # --- shell ----------------------------------------------------------------------------
    def is_u2_launch(self, command: str) -> int | None:
        """The port when ``command`` starts the uiautomator2 server, else None."""
        m = _U2_LAUNCH.search(command)
        if m is None:
            return None
        return int(m.group("port") or U2_PORT)

    def run(self, command: str) -> ShellResult:
        m = _EXIT_TRICK.match(command)
        if m is not None and m.group("cmd").strip():
            res = self.run(m.group("cmd"))
            return ShellResult(res.output + f"{m.group('magic')}{res.exit_code}\n".encode(), res.exit_code)
        stripped = command.strip()
        try:
            argv = shlex.split(stripped)
        except ValueError:
            argv = []
        if argv[:1] == ["ime"]:
            return self._ime(argv[1:])
        if argv[:2] == ["am", "broadcast"]:
            return self._broadcast(argv[2:])
        if argv[:2] == ["dumpsys", "display"]:
            return self._text(self._dumpsys_display())
        if argv[:2] == ["dumpsys", "SurfaceFlinger"] and "--display-id" in argv:
            return self._text(f'Display {DISPLAY_ID} (HWC display 0): port=0 pnpId=GGL displayName="Artemis Sim"\n')
        sc = _SCREENCAP_D.match(stripped)
        if sc is not None:
            command = sc.group(1) + sc.group(2)
        with self.lock:
            return self.phone.run(command)

    @staticmethod
    def _text(text: str, code: int = 0) -> ShellResult:
        return ShellResult(text.encode("utf-8"), code)

    def _dumpsys_display(self) -> str:
        w, h = self.phone.width, self.phone.height
        return (
            "DISPLAY MANAGER (dumpsys display)\n"
            "  mOnlyCore=false\n"
            f"  mDefaultViewport=DisplayViewport{{valid=true, displayId=0, uniqueId='local:0', physicalPort=0, "
            f"orientation=0, logicalFrame=Rect(0, 0 - {w}, {h}), physicalFrame=Rect(0, 0 - {w}, {h}), "
            f"deviceWidth={w}, deviceHeight={h}, isActive=true}}\n"
            "Display Devices: size=1\n"
            f'  DisplayDeviceInfo{{"Built-in Screen": uniqueId="local:0", {w} x {h}, modeId 1, '
            "density 420, rotation 0, type INTERNAL}\n"
        )

    # --- uiautomator2's AdbKeyboard ---------------------------------------------------------
    def _imes(self) -> list[str]:
        return [LATIN_IME, ADB_KEYBOARD] if self.adb_keyboard else [LATIN_IME]

    def _ime(self, args: list[str]) -> ShellResult:
        sub = args[0] if args else ""
        rest = [a for a in args[1:] if not a.startswith("-")]
        if sub == "list":
            return self._text("".join(f"{i}\n" for i in self._imes()))
        if sub in ("enable", "disable", "set") and rest:
            ime = rest[0]
            if ime not in self._imes():
                return self._text(f"Unknown input method {ime} cannot be {sub}d for user #0\n", 255)
            if sub == "set":
                with self.lock:
                    self.phone.settings.put("secure", "default_input_method", ime)
                return self._text(f"Input method {ime} selected for user #0\n")
            if sub == "disable":
                with self.lock:
                    if self.phone.settings.get("secure", "default_input_method") == ime:
                        self.phone.settings.put("secure", "default_input_method", LATIN_IME)
            return self._text(f"Input method {ime}: {'already ' if sub == 'enable' else ''}{sub}d for user #0\n")
        return self._text("ime <command>:\n  list [-a] [-s]\n  enable [--user <USER_ID>] <ID>\n"
                          "  disable [--user <USER_ID>] <ID>\n  set [--user <USER_ID>] <ID>\n", 255)

    def _broadcast(self, args: list[str]) -> ShellResult:
        action = ""
        extras: dict[str, str] = {}
        i = 0
        while i < len(args):
            a = args[i]
            if a == "-a" and i + 1 < len(args):
                action, i = args[i + 1], i + 2
            elif a in ("--es", "--ei", "-e") and i + 2 < len(args):
                extras[args[i + 1]] = args[i + 2]
                i += 3
            else:
                i += 1
        head = f"Broadcasting: Intent {{ act={action} flg=0x400000{' (has extras)' if extras else ''} }}\n"
        with self.lock:
            receiving = (self.adb_keyboard and action.startswith("ADB_KEYBOARD_")
                         and self.phone.settings.get("secure", "default_input_method") == ADB_KEYBOARD)
            if not receiving:
                return self._text(head + "Broadcast completed: result=0\n")
            if action == "ADB_KEYBOARD_INPUT_TEXT":
                try:
                    text = base64.b64decode(extras.get("text", ""), validate=True).decode("utf-8")
                except (binascii.Error, UnicodeDecodeError):
                    return self._text(head + 'Broadcast completed: result=0, data="bad base64"\n')
                self.phone.do_type(text)
            elif action == "ADB_KEYBOARD_CLEAR_TEXT":
                self.clear_focused_field()
            elif action == "ADB_KEYBOARD_SMART_ENTER":
                self.phone.do_key("enter")
            # ADB_KEYBOARD_HIDE and others: acknowledged; the sim's keyboard follows the focus
        return self._text(head + 'Broadcast completed: result=-1, data="success"\n')

    def clear_focused_field(self) -> None:
        with self.lock:
            st = self.phone.apps[self.phone.foreground].ui_state
            if st.focus is not None:
                st.fields[st.focus] = ""
                self.phone.invalidate()
