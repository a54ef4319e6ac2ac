"""Shell commands that drive the phone: screencap, uiautomator, input, am, monkey, wm, reboot, and the
screen's dumpsys services (window, input_method, power, display; dispatched by ``shell_dumpsys``).

Output goes where Android sends it: ``am start`` prints ``Starting: Intent {…}`` on stdout and its
errors on stderr *with exit status 0* (ActivityManagerShellCommand.runStartActivity always returns
0); ``input`` / ``uiautomator`` / ``screencap`` errors go to stderr with a non-zero status.
"""

from __future__ import annotations

import hashlib
import struct
from typing import TYPE_CHECKING

from artemis_cli.sim.activities import activity_of, declares, full_class, launch_activity, short_name
from artemis_cli.sim.faults import IDLE_STATE_MSG, NULL_ROOT_MSG
from artemis_cli.sim.gestures import INPUT_START_MS, TAP_SLOP, Stroke
from artemis_cli.sim.latency import PIXEL
from artemis_cli.sim.shell import Command, ShellResult, err, out
from artemis_cli.sim.vfs import FsError
from artemis_cli.sim.wm_dump import window_dump

if TYPE_CHECKING:
    from artemis_cli.sim.phone import SimPhone

DEFAULT_DUMP = "/sdcard/window_dump.xml"
DISPLAY_ID = "4619827259835644672"
SETTINGS_ACTIONS: dict[str, str | None] = {
    "android.settings.SETTINGS": None, "android.settings.WIFI_SETTINGS": "network",
    "android.settings.WIRELESS_SETTINGS": "network", "android.settings.AIRPLANE_MODE_SETTINGS": "network",
    "android.settings.BLUETOOTH_SETTINGS": "connected", "android.settings.DISPLAY_SETTINGS": "display",
    "android.settings.DEVICE_INFO_SETTINGS": "about",
}
#: URL schemes the sim's apps open from a VIEW intent (the sim has no browser: https:// resolves
#: to nothing, as on a phone with no browser installed)
URL_SCHEMES: dict[str, str] = {"artemis-shop": "com.artemis.shop"}

KEYCODE_NAMES: dict[str, int] = {
    "HOME": 3, "BACK": 4, "DPAD_UP": 19, "DPAD_DOWN": 20, "DPAD_LEFT": 21, "DPAD_RIGHT": 22, "DPAD_CENTER": 23,
    "VOLUME_UP": 24, "VOLUME_DOWN": 25, "POWER": 26, "CAMERA": 27, "COMMA": 55, "PERIOD": 56, "TAB": 61,
    "SPACE": 62, "ENTER": 66, "DEL": 67, "MINUS": 69, "AT": 77, "PLUS": 81, "MENU": 82, "SEARCH": 84,
    "ESCAPE": 111, "FORWARD_DEL": 112, "MOVE_END": 123, "VOLUME_MUTE": 164, "APP_SWITCH": 187, "SLEEP": 223,
    "WAKEUP": 224, "ALT_LEFT": 57, "ALT_RIGHT": 58, "SHIFT_LEFT": 59, "SHIFT_RIGHT": 60, "CTRL_LEFT": 113,
    "CTRL_RIGHT": 114, "META_LEFT": 117, "META_RIGHT": 118, "CUT": 277, "COPY": 278, "PASTE": 279,
}
MODIFIERS = frozenset({57, 58, 59, 60, 113, 114, 117, 118})
INPUT_SOURCES = ("touchscreen", "touchpad", "touchnavigation", "keyboard", "mouse", "stylus", "dpad", "gamepad",
                 "joystick", "trackball", "rotaryencoder")
KEYCODE_NAMES.update({str(d): 7 + d for d in range(10)})
KEYCODE_NAMES.update({chr(ord("A") + i): 29 + i for i in range(26)})
KEY_POWER, KEY_SLEEP, KEY_WAKEUP = 26, 223, 224
_CODE_ACTION: dict[int, str] = {3: "home", 4: "back", 66: "enter", 67: "delete", 61: "tab", 82: "menu",
                                84: "search", 187: "recents", 111: "escape", 24: "volume_up", 25: "volume_down"}
_CODE_CHAR: dict[int, str] = {62: " ", 55: ",", 56: ".", 69: "-", 77: "@", 81: "+"}
_CODE_CHAR.update({7 + d: str(d) for d in range(10)})
_CODE_CHAR.update({29 + i: chr(ord("a") + i) for i in range(26)})
_INPUT_USAGE = ("Usage: input [<source>] [-d DISPLAY_ID] <command> [<arg>...]\n\nThe commands and default "
                "sources are:\n      text <string> (Default: keyboard)\n      keyevent [--longpress|--doubletap]"
                " <key code number or name> ... (Default: keyboard)\n      tap <x> <y> (Default: touchscreen)\n"
                "      swipe <x1> <y1> <x2> <y2> [duration(ms)] (Default: touchscreen)\n"
                "      draganddrop <x1> <y1> <x2> <y2> [duration(ms)] (Default: touchscreen)\n"
                "      motionevent <DOWN|UP|MOVE|CANCEL> <x> <y> (Default: touchscreen)\n"
                "      keycombination [-t duration(ms)] <key code 1> <key code 2> ... (Default: keyboard)\n")


class DeviceCommands:
    def __init__(self, phone: SimPhone) -> None:
        self.phone = phone
        self.stroke = Stroke(TAP_SLOP)  # `input motionevent` DOWN … UP, one command per event

    def table(self) -> dict[str, Command]:
        return {"screencap": self.screencap, "uiautomator": self.uiautomator, "input": self.input,
                "am": self.am, "monkey": self.monkey, "wm": self.wm,
                "reboot": self.reboot}

    # -- screen ----------------------------------------------------------------------------
    def screencap(self, args: list[str], _: bytes) -> ShellResult:
        rest = list(args)
        if "-d" in rest:  # display id (one display here)
            i = rest.index("-d")
            del rest[i:i + 2]
        png = "-p" in rest
        paths = [a for a in rest if not a.startswith("-")]
        if self.phone.faults.screencap_fails():
            return err("Capturing failed.\n", 1)
        if paths:
            try:
                self.phone.fs.write_file(paths[0], self.phone.render_png())
            except FsError as e:
                return err(f"Error opening file: {paths[0]} ({e.reason})\n", 1)
            return out("")
        if png:
            return out(self.phone.render_png())
        img = self.phone.render_image().convert("RGBA")
        return out(struct.pack("<IIII", img.width, img.height, 1, 0) + img.tobytes())

    def uiautomator(self, args: list[str], _: bytes) -> ShellResult:
        if not args or args[0] != "dump":
            return err("Usage: uiautomator <subcommand> [options]\n\nAvailable subcommands:\n\n"
                       "dump: creates an XML dump of current UI hierarchy\n", 1)
        rest = [a for a in args[1:] if not a.startswith("--")]
        path = rest[0] if rest else DEFAULT_DUMP
        fault = self.phone.faults.dump_fault()
        if fault == "idle_state":
            return err(IDLE_STATE_MSG + "\n", 1)
        if fault == "null_root":
            return err(NULL_ROOT_MSG + "\n", 1)
        xml = self.phone.dump_xml()
        if fault is not None:  # garbage_xml / empty_hierarchy: a "successful" dump with bad content
            xml = self.phone.faults.faulty_content(fault, xml)
        if path in ("/dev/tty", "/dev/stdout"):
            return out(xml + f"UI hierchary dumped to: {path}\n")
        if fault != "stale_dump":
            try:
                self.phone.fs.write_file(path, xml.encode())
            except FsError as e:
                return err(f"ERROR: could not write {path}: {e.reason}\n", 1)
        return out(f"UI hierchary dumped to: {path}\n")

    # -- input -----------------------------------------------------------------------------
    def input(self, args: list[str], _: bytes) -> ShellResult:
        first = args[0] if args else ""  # the name a Java exception is reported under
        if args and args[0] in INPUT_SOURCES:
            args = args[1:]
        if len(args) >= 2 and args[0] == "-d":
            args = args[2:]
        if not args:
            return err(_INPUT_USAGE, 1)
        sub, rest = args[0], args[1:]
        if sub not in ("tap", "swipe", "motionevent", "draganddrop", "text", "keyevent", "keycombination"):
            return err(f"Error: Unknown command: {sub}\n" + _INPUT_USAGE, 1)
        p = self.phone
        p.touch.advance(INPUT_START_MS)  # each `input` is an app_process start (sim/gestures.py)
        try:
            if sub == "tap" and len(rest) == 2:
                p.do_tap(_num(rest[0]), _num(rest[1]))
            elif sub == "swipe" and len(rest) in (4, 5):
                x1, y1, x2, y2 = (_num(v) for v in rest[:4])
                p.do_swipe(x1, y1, x2, y2, _num(rest[4]) if len(rest) == 5 else 300)
            elif sub == "motionevent" and len(rest) == 3 and rest[0].upper() in ("DOWN", "MOVE", "UP", "CANCEL"):
                event = rest[0].lower()
                if event == "cancel":
                    self.stroke.down_at = None
                else:
                    self.stroke.feed(p, event, _num(rest[1]), _num(rest[2]))
            elif sub == "draganddrop" and len(rest) in (4, 5):
                x1, y1, x2, y2 = (_num(v) for v in rest[:4])
                p.do_drag(x1, y1, x2, y2)
            elif sub == "text":
                return self._text(first or sub, rest)
            elif sub == "keyevent" and rest:
                with p.one_action():  # one `input keyevent A B C` is one action
                    for code in [r for r in rest if not r.startswith("--")]:
                        problem = self.keyevent(code)
                        if problem:
                            return err(problem, 1)
            elif sub == "keycombination" and rest:
                return self._keycombination(first or sub, rest)
            else:
                return err(f"Error: Invalid arguments for command: {sub}\n" + _INPUT_USAGE, 1)
        except ValueError:
            return err(f"Error: Invalid arguments for command: {sub}\n" + _INPUT_USAGE, 1)
        return out("")

    def _text(self, cmd: str, rest: list[str]) -> ShellResult:
        """``input text ARG``: InputShellCommand.sendText types its ONE argument (further words are
        ignored), ``%s`` is a space, and a character the virtual keyboard's key map cannot make
        (anything but printable ASCII, newline and tab) makes ``getEvents`` return null: a
        NullPointerException, exit 255, and nothing typed."""
        if not rest:
            return err(f"Exception occurred while executing '{cmd}':\njava.lang.IllegalArgumentException: "
                       'Argument expected after "text"\n', 255)
        text = rest[0].replace("%s", " ")
        if any(not (32 <= ord(ch) < 127 or ch in "\n\t") for ch in text):
            return err(f"Exception occurred while executing '{cmd}':\njava.lang.NullPointerException: Attempt to "
                       "get length of null array\n\tat com.android.server.input.InputShellCommand.sendText"
                       "(InputShellCommand.java:431)\n", 255)
        if text:
            self.phone.do_type(text)
        return out("")

    def _keycombination(self, cmd: str, rest: list[str]) -> ShellResult:
        """``input keycombination [-t MS] KEY KEY…``: the keys go down together, then up. With a
        Ctrl key, Ctrl+A selects the focused field's text (the next typing replaces it); with Shift,
        a letter is typed in capitals; other modifier combinations are accepted and change nothing
        (noted as ignored), as most do in an app's text field."""
        keys = list(rest)
        if keys[:1] == ["-t"]:
            keys = keys[2:]
        codes = []
        for k in keys:
            num = _keycode(k)
            if num is None:
                return err(f"Exception occurred while executing '{cmd}':\njava.lang.IllegalArgumentException: "
                           f"Unknown keycode: {k}\n", 255)
            codes.append(num)
        if len(codes) < 2:
            return err(f"Exception occurred while executing '{cmd}':\njava.lang.IllegalArgumentException: "
                       "keycombination requires at least 2 keycodes\n", 255)
        mods = {c for c in codes if c in MODIFIERS}
        plain = [c for c in codes if c not in MODIFIERS]
        p = self.phone
        with p.one_action():
            if not mods:
                for c in plain:
                    self.keyevent(str(c))
            elif mods <= {59, 60} and all(c in _CODE_CHAR for c in plain):  # Shift + characters
                p.do_type("".join(_CODE_CHAR[c].upper() for c in plain))
            elif mods & {113, 114} and plain == [KEYCODE_NAMES["A"]]:
                st = p.apps[p.foreground].ui_state
                if st.focus is not None and not p.popup_visible:
                    st.replace_next = True
                    p.invalidate()
                else:
                    p.note_ignored("keycombination ctrl+a: no focused text field")
            else:
                p.note_ignored("keycombination " + "+".join(str(c) for c in codes))
        return out("")

    def keyevent(self, code: str) -> str:
        """Press one key (number or ``[KEYCODE_]NAME``): "" or an error message."""
        num = _keycode(code)
        if num is None:
            return f"Error: Unknown keycode: {code}\n"
        p = self.phone
        if num in (KEY_POWER, KEY_SLEEP, KEY_WAKEUP):
            p.set_screen(num == KEY_WAKEUP or (num == KEY_POWER and not p.screen_on))
        elif num in _CODE_ACTION:
            p.do_key(_CODE_ACTION[num])
        elif num in _CODE_CHAR:
            p.do_type(_CODE_CHAR[num])
        elif num == KEYCODE_NAMES["MOVE_END"]:
            pass  # the sim's text cursor is always at the end of the field
        else:
            p.note_ignored(f"keyevent {num}")
        return ""

    # -- activities ------------------------------------------------------------------------
    def am(self, args: list[str], _: bytes) -> ShellResult:
        if not args:
            return err("usage: am [subcommand] [options]\n", 1)
        sub, rest = args[0], args[1:]
        if sub == "force-stop":
            for pkg in [a for a in rest if not a.startswith("-") and not a.isdigit()]:
                self.phone.force_stop(pkg)
            return out("")
        if sub == "broadcast":
            action = next((rest[i + 1] for i, a in enumerate(rest[:-1]) if a == "-a"), "")
            act = f"act={action} " if action else ""
            return out(f"Broadcasting: Intent {{ {act}flg=0x400000 }}\nBroadcast completed: result=0\n")
        if sub not in ("start", "start-activity"):
            return err(f"Error: Unknown command: {sub}\n", 1)
        return self._start(rest)

    def _start(self, rest: list[str]) -> ShellResult:
        comp = action = data = ""
        cats: list[str] = []
        positional: list[str] = []
        stop = wait = False
        i = 0
        while i < len(rest):
            a = rest[i]
            if a in ("-n", "-a", "-c") and i + 1 < len(rest):
                if a == "-n":
                    comp = rest[i + 1]
                elif a == "-a":
                    action = rest[i + 1]
                else:
                    cats.append(rest[i + 1])
                i += 2
            elif a in ("-d", "-t", "-f", "--user", "-p") and i + 1 < len(rest):
                if a == "-p":
                    positional.append(rest[i + 1])
                elif a == "-d":
                    data = rest[i + 1]
                i += 2
            elif a in ("-e", "--es", "--ei", "--ez", "--el", "--ef") and i + 2 < len(rest):
                i += 3
            elif a in ("-S", "-W"):
                stop, wait = stop or a == "-S", wait or a == "-W"
                i += 1
            else:
                if not a.startswith("-"):
                    positional.append(a)
                i += 1
        if comp and "/" not in comp:
            return err("Exception occurred while executing 'start':\n"
                       f"java.lang.IllegalArgumentException: Bad component name: {comp}\n", 255)
        pkg, _, act = comp.partition("/")
        screen = None
        if not pkg and positional:
            pkg = positional[-1]
        if not pkg and action in SETTINGS_ACTIONS:
            pkg, screen = "com.android.settings", SETTINGS_ACTIONS[action]
        if not pkg and "android.intent.category.HOME" in cats:
            pkg = "com.android.launcher3"
        if not pkg and data and action == "android.intent.action.VIEW":
            handler = URL_SCHEMES.get(data.partition(":")[0].lower())
            pkg = handler if handler and self.phone.has_package(handler) else ""
        act = short_name(pkg, act) if act else launch_activity(pkg)
        parts = ([f"act={action}"] if action else []) + ([f"dat={_safe_uri(data)}"] if data else []) + (
            [f"cat=[{','.join(cats)}]"] if cats else [])
        if pkg:
            parts.append(f"cmp={pkg}/{act}")
        head = "Starting: Intent { " + " ".join(parts) + " }\n"
        if not pkg:
            intent = " ".join([*parts, "flg=0x10000000"])
            return _failed(head, f"Error: Activity not started, unable to resolve Intent {{ {intent} }}\n", wait)
        if not self.phone.has_package(pkg) or not declares(pkg, act):
            return _failed(head, f"Error type 3\nError: Activity class {{{pkg}/{full_class(pkg, act)}}} "
                                 "does not exist.\n", wait)
        if stop:
            head = f"Stopping: {pkg}\n" + head
            self.phone.force_stop(pkg)
        p = self.phone
        running = p.am.pid(pkg) is not None  # the process table says whether it runs (sim/processes.py)
        state = "HOT" if running and p.current_package() == pkg else "WARM" if running else "COLD"
        p.do_launch(pkg, screen=screen)
        p.activities.started(pkg, act)  # after the launch, which shows the launch activity on a cold start
        tail = ""
        if wait:
            total = self._launch_ms(state)
            tail = (f"Status: ok\nLaunchState: {state}\nActivity: {activity_of(pkg, act)}\nTotalTime: {total}\n"
                    f"WaitTime: {total + 3 + total // 40}\nComplete\n")
        return out(head + tail)

    def _launch_ms(self, state: str) -> int:
        """How long the launch took, in ms: the latency profile's ``am_start`` median (the phone's
        own profile when it is charged one, else ``pixel``'s: the sim reports what a phone
        measures even when it does not make you wait) scaled by the launch state (a cold start
        creates the process) with seeded jitter, never a constant."""
        latency = getattr(self.phone, "latency", None)
        medians = getattr(latency, "medians", None) or PIXEL
        scale = {"COLD": 1.0, "WARM": 0.35, "HOT": 0.12}[state]
        digest = hashlib.md5(f"{self.phone.seed}|{self.phone.actions}|{state}".encode()).digest()
        jitter = 0.8 + (digest[0] / 255.0) * 0.5
        return max(1, round(medians["am_start"] * 1000.0 * scale * jitter))

    def monkey(self, args: list[str], _: bytes) -> ShellResult:
        pkg = ""
        for i, a in enumerate(args):
            if a == "-p" and i + 1 < len(args):
                pkg = args[i + 1]
        echo = "".join(f"  bash arg: {a}\n" for a in args)
        if not pkg or not self.phone.has_package(pkg) or pkg == "com.android.systemui":
            return err("** No activities found to run, monkey aborted.\n", 252, echo)
        self.phone.do_launch(pkg)
        return out(echo + "Events injected: 1\n## Network stats: elapsed time=14ms (0ms mobile, 0ms wifi, "
                   "14ms not connected)\n")

    # -- system services -------------------------------------------------------------------
    def _focus(self) -> tuple[str, str]:
        pkg = self.phone.current_package()
        return pkg, hashlib.md5(pkg.encode()).hexdigest()[:7]

    def _window(self) -> str:
        return window_dump(self.phone)  # every window, top-most first (sim/wm_dump.py)

    def _input_method(self) -> str:
        """Android 14's ``dumpsys input_method`` (the lines a reader looks at)."""
        shown = str(self.phone.keyboard_visible()).lower()
        ime = "com.google.android.inputmethod.latin/com.android.inputmethod.latin.LatinIME"
        return ("Current Input Method Manager state:\n  Input Methods: mMethodMapUpdateCount=2\n"
                f"  mCurMethodId={ime}\n"
                f"  mCurFocusedWindowClient=ClientState{{{self._focus()[1]} mUid=10123 mPid=2345}}\n"
                f"  mInputShown={shown}\n  mSystemReady=true mInteractive={str(self.phone.screen_on).lower()}\n"
                f"  mImeWindowVis={'0x3' if shown == 'true' else '0x0'}\n  mCurrentUserId=0\n")

    def _power(self) -> str:
        on = self.phone.screen_on
        s = self.phone.settings
        return ("POWER MANAGER (dumpsys power)\n\nPower Manager State:\n  mDirty=0x0\n"
                f"  mWakefulness={'Awake' if on else 'Asleep'}\n  mWakefulnessChanging=false\n"
                "  mIsPowered=true\n  mPlugType=1\n  mBatteryLevel=100\n  mStayOn=false\n"
                "  mProximityPositive=false\n  mBootCompleted=true\n  mSystemReady=true\n"
                f"  mHalAutoSuspendModeEnabled=false\n  mHalInteractiveModeEnabled={str(on).lower()}\n"
                f"  mWakeLockSummary=0x0\n  mUserActivitySummary={'0x1' if on else '0x0'}\n"
                f"  mDisplayReady=true\n  mHoldingWakeLockSuspendBlocker=false\n"
                f"  mHoldingDisplaySuspendBlocker={str(on).lower()}\n\n"
                "Settings and Configuration:\n"
                f"  mScreenOffTimeoutSetting={s.get('system', 'screen_off_timeout') or '30000'}\n"
                f"  mScreenBrightnessSetting={s.get('system', 'screen_brightness') or '128'}\n\n"
                f"Display Power: state={'ON' if on else 'OFF'}\n")

    def _display(self) -> str:
        return self.phone.display.dumpsys_display(self.phone.settings, self.phone.screen_on)

    def wm(self, args: list[str], _: bytes) -> ShellResult:
        """``wm size [WxH|reset]``, ``wm density [N|reset]`` (sim/display.py): an override size
        is the screen the apps, screenshots and dumps use from then on."""
        stdout, stderr, code = self.phone.display.wm(args)
        self.phone.invalidate()
        return err(stderr, code, stdout) if stderr else out(stdout, code)

    def reboot(self, args: list[str], _: bytes) -> ShellResult:
        """In process the phone restarts at once; served over adb (adbd.DeviceSide) the connection
        drops and the device comes back a few seconds later."""
        self.phone.reboot()
        return out("")


def _safe_uri(data: str) -> str:
    """How ``am`` prints an intent's data (``Uri.toSafeString``): a web URL as scheme://host/...,
    a phone number or address with its characters hidden, any other scheme whole."""
    scheme, sep, rest = data.partition(":")
    low = scheme.lower()
    if not sep:
        return data
    if low in ("tel", "sip", "sms", "smsto", "mailto", "nfc"):
        return f"{scheme}:" + "".join("x" if c.isalnum() else c for c in rest)
    if low in ("http", "https", "ftp", "rtsp"):
        host = rest.removeprefix("//").split("/", 1)[0]
        return f"{scheme}://{host}/..."
    return data


def _failed(head: str, message: str, wait: bool) -> ShellResult:
    """``am start`` that did not start anything: still exit status 0, the error on stderr (on
    stdout with ``-W``)."""
    return out(head + message) if wait else err(message, 0, head)


def _keycode(code: str) -> int | None:
    """A key code from a number or ``[KEYCODE_]NAME`` (KeyEvent.keyCodeFromString), None if unknown."""
    name = code.upper().removeprefix("KEYCODE_")
    if name.isdigit() and not code.upper().startswith("KEYCODE_"):
        return int(name)
    return KEYCODE_NAMES.get(name)


def _num(s: str) -> int:
    return round(float(s))
