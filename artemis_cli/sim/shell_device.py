"""Shell commands that drive the phone: screencap, uiautomator, input, am, monkey, dumpsys, wm, reboot.

Output goes where Android sends it: ``am start`` prints ``Starting: Intent {…}`` on stdout and its
errors on stderr *with exit status 0* (ActivityManagerShellCommand.runStartActivity always returns
0); ``input`` / ``uiautomator`` / ``screencap`` errors go to stderr with a non-zero status.
"""

from __future__ import annotations

import hashlib
import struct
from typing import TYPE_CHECKING

from artemis_cli.sim.faults import IDLE_STATE_MSG, NULL_ROOT_MSG
from artemis_cli.sim.gestures import INPUT_START_MS, Stroke
from artemis_cli.sim.shell import Command, ShellResult, err, out
from artemis_cli.sim.vfs import FsError

if TYPE_CHECKING:
    from artemis_cli.sim.phone import SimPhone

DEFAULT_DUMP = "/sdcard/window_dump.xml"
DISPLAY_ID = "4619827259835644672"
LAUNCHER_ACTIVITY = ".MainActivity"
#: Activities each app declares (besides LAUNCHER_ACTIVITY, which every app has); anything else
#: is "Error type 3 … does not exist." like an undeclared activity on a phone.
ACTIVITIES: dict[str, tuple[str, ...]] = {
    "com.android.launcher3": (".Launcher", ".uioverrides.QuickstepLauncher"),
    "com.android.settings": (".Settings", ".SubSettings"),
    "com.android.deskclock": (".DeskClock",),
    "com.android.contacts": (".activities.PeopleActivity",),
}
SETTINGS_ACTIONS: dict[str, str | None] = {
    "android.settings.SETTINGS": None, "android.settings.WIFI_SETTINGS": "network",
    "android.settings.WIRELESS_SETTINGS": "network", "android.settings.AIRPLANE_MODE_SETTINGS": "network",
    "android.settings.BLUETOOTH_SETTINGS": "connected", "android.settings.DISPLAY_SETTINGS": "display",
    "android.settings.DEVICE_INFO_SETTINGS": "about",
}

KEYCODE_NAMES: dict[str, int] = {
    "HOME": 3, "BACK": 4, "DPAD_UP": 19, "DPAD_DOWN": 20, "DPAD_LEFT": 21, "DPAD_RIGHT": 22, "DPAD_CENTER": 23,
    "VOLUME_UP": 24, "VOLUME_DOWN": 25, "POWER": 26, "CAMERA": 27, "COMMA": 55, "PERIOD": 56, "TAB": 61,
    "SPACE": 62, "ENTER": 66, "DEL": 67, "MINUS": 69, "AT": 77, "PLUS": 81, "MENU": 82, "SEARCH": 84,
    "ESCAPE": 111, "FORWARD_DEL": 112, "MOVE_END": 123, "VOLUME_MUTE": 164, "APP_SWITCH": 187, "SLEEP": 223,
    "WAKEUP": 224,
}
KEYCODE_NAMES.update({str(d): 7 + d for d in range(10)})
KEYCODE_NAMES.update({chr(ord("A") + i): 29 + i for i in range(26)})
KEY_POWER, KEY_SLEEP, KEY_WAKEUP = 26, 223, 224
_CODE_ACTION: dict[int, str] = {3: "home", 4: "back", 66: "enter", 67: "delete", 61: "tab", 82: "menu",
                                84: "search", 187: "recents"}
_CODE_CHAR: dict[int, str] = {62: " ", 55: ",", 56: ".", 69: "-", 77: "@", 81: "+"}
_CODE_CHAR.update({7 + d: str(d) for d in range(10)})
_CODE_CHAR.update({29 + i: chr(ord("a") + i) for i in range(26)})
_INPUT_USAGE = ("Usage: input [<source>] [-d DISPLAY_ID] <command> [<arg>...]\n\nThe commands and default "
                "sources are:\n      text <string> (Default: keyboard)\n      keyevent [--longpress|--doubletap]"
                " <key code number or name> ... (Default: keyboard)\n      tap <x> <y> (Default: touchscreen)\n"
                "      swipe <x1> <y1> <x2> <y2> [duration(ms)] (Default: touchscreen)\n"
                "      draganddrop <x1> <y1> <x2> <y2> [duration(ms)] (Default: touchscreen)\n"
                "      motionevent <DOWN|UP|MOVE|CANCEL> <x> <y> (Default: touchscreen)\n")


class DeviceCommands:
    def __init__(self, phone: SimPhone) -> None:
        from artemis_cli.sim.phone import TAP_SLOP

        self.phone = phone
        self.stroke = Stroke(TAP_SLOP)  # `input motionevent` DOWN … UP, one command per event

    def table(self) -> dict[str, Command]:
        return {"screencap": self.screencap, "uiautomator": self.uiautomator, "input": self.input,
                "am": self.am, "monkey": self.monkey, "dumpsys": self.dumpsys, "wm": self.wm,
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
        if args and args[0] in ("touchscreen", "touchpad", "keyboard", "mouse", "stylus", "dpad", "gamepad"):
            args = args[1:]
        if len(args) >= 2 and args[0] == "-d":
            args = args[2:]
        if not args:
            return err(_INPUT_USAGE, 1)
        sub, rest = args[0], args[1:]
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
            elif sub == "text" and rest:
                p.do_type(" ".join(rest).replace("%s", " "))
            elif sub == "keyevent" and rest:
                with p.one_action():  # one `input keyevent A B C` is one action
                    for code in [r for r in rest if not r.startswith("--")]:
                        problem = self.keyevent(code)
                        if problem:
                            return err(problem, 1)
            else:
                return err(f"Error: Invalid arguments for command: {sub}\n" + _INPUT_USAGE, 1)
        except ValueError:
            return err(f"Error: Invalid arguments for command: {sub}\n" + _INPUT_USAGE, 1)
        return out("")

    def keyevent(self, code: str) -> str:
        """Press one key (number or ``[KEYCODE_]NAME``): "" or an error message."""
        name = code.upper().removeprefix("KEYCODE_")
        if name.isdigit() and not code.upper().startswith("KEYCODE_"):
            num = int(name)
        elif name in KEYCODE_NAMES:
            num = KEYCODE_NAMES[name]
        else:
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
        comp = action = ""
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
        act = act or LAUNCHER_ACTIVITY
        parts = ([f"act={action}"] if action else []) + ([f"cat=[{','.join(cats)}]"] if cats else [])
        if pkg:
            parts.append(f"cmp={pkg}/{act}")
        head = "Starting: Intent { " + " ".join(parts) + " }\n"
        if not pkg:
            intent = " ".join([*parts, "flg=0x10000000"])
            return _failed(head, f"Error: Activity not started, unable to resolve Intent {{ {intent} }}\n", wait)
        if not self._declares(pkg, act):
            cls = pkg + act if act.startswith(".") else act
            return _failed(head, f"Error type 3\nError: Activity class {{{pkg}/{cls}}} does not exist.\n", wait)
        if stop:
            head = f"Stopping: {pkg}\n" + head
            self.phone.force_stop(pkg)
        cold = self.phone.am.pid(pkg) is None  # no process yet: a cold start (sim/processes.py)
        self.phone.do_launch(pkg, screen=screen)
        tail = ""
        if wait:
            state, total = ("COLD", 412) if cold else ("WARM", 120)
            tail = (f"Status: ok\nLaunchState: {state}\nActivity: {pkg}/{act}\nTotalTime: {total}\n"
                    f"WaitTime: {total + 5}\nComplete\n")
        return out(head + tail)

    def _declares(self, pkg: str, act: str) -> bool:
        if not self.phone.has_package(pkg):
            return False
        short = "." + act[len(pkg) + 1:] if act.startswith(pkg + ".") else act
        return short == LAUNCHER_ACTIVITY or short in ACTIVITIES.get(pkg, ())

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
    def dumpsys(self, args: list[str], _: bytes) -> ShellResult:
        service = args[0] if args else ""
        if service == "window":
            return out(self._window())
        if service == "activity":
            pkg, wid = self._focus()
            return out("ACTIVITY MANAGER ACTIVITIES (dumpsys activity activities)\n"
                       f"    mResumedActivity: ActivityRecord{{{wid[::-1]} u0 {pkg}/.MainActivity t12}}\n"
                       f"  ResumedActivity: ActivityRecord{{{wid[::-1]} u0 {pkg}/.MainActivity t12}}\n")
        if service == "input_method":
            return out(self._input_method())
        if service == "battery":
            return out("Current Battery Service state:\n  AC powered: true\n  level: 100\n  scale: 100\n")
        if service == "power":
            return out(self._power())
        if service == "display":
            return out(self._display())
        if service == "SurfaceFlinger" and "--display-id" in args:
            return out(f'Display {DISPLAY_ID} (HWC display 0): port=0 pnpId=GGL displayName="Artemis Sim"\n')
        if not service:
            return out("")
        return err(f"Can't find service: {service}\n", 0)

    def _focus(self) -> tuple[str, str]:
        pkg = self.phone.current_package()
        return pkg, hashlib.md5(pkg.encode()).hexdigest()[:7]

    def _window(self) -> str:
        pkg, wid = self._focus()
        act = f"{pkg}/{pkg}.MainActivity"
        return ("WINDOW MANAGER WINDOWS (dumpsys window windows)\n"
                f"  Window #0 Window{{{wid} u0 {act}}}:\n"
                "    mDisplayId=0 rootTaskId=12 mSession=Session{5f3a2c1 2345:u0a10123}\n"
                f"  mCurrentFocus=Window{{{wid} u0 {act}}}\n"
                f"  mFocusedApp=ActivityRecord{{{wid[::-1]} u0 {pkg}/.MainActivity t12}}\n"
                f"  mInputMethodWindow=Window{{1c2d3e4 u0 InputMethod}} "
                f"visible={str(self.phone.keyboard_visible()).lower()}\n"
                + _keyguard_lines(self.phone.locked))

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
        w, h = self.phone.width, self.phone.height
        return ("DISPLAY MANAGER (dumpsys display)\n  mOnlyCore=false\n"
                f"  mDefaultViewport=DisplayViewport{{valid=true, displayId=0, uniqueId='local:0', physicalPort=0, "
                f"orientation=0, logicalFrame=Rect(0, 0 - {w}, {h}), physicalFrame=Rect(0, 0 - {w}, {h}), "
                f"deviceWidth={w}, deviceHeight={h}, isActive=true}}\n"
                "Display Devices: size=1\n"
                f'  DisplayDeviceInfo{{"Built-in Screen": uniqueId="local:0", {w} x {h}, modeId 1, '
                "density 420, rotation 0, type INTERNAL}\n"
                f"  mScreenState={'ON' if self.phone.screen_on else 'OFF'}\n")

    def wm(self, args: list[str], _: bytes) -> ShellResult:
        info = self.phone.info()
        if args[:1] == ["size"]:
            return out(f"Physical size: {info.width}x{info.height}\n")
        if args[:1] == ["density"]:
            return out("Physical density: 420\n")
        return err("usage: wm [size|density]\n", 1)

    def reboot(self, args: list[str], _: bytes) -> ShellResult:
        """In process the phone restarts at once; served over adb (adbd.DeviceSide) the connection
        drops and the device comes back a few seconds later."""
        self.phone.reboot()
        return out("")


def _keyguard_lines(locked: bool) -> str:
    """The policy lines lock-screen checks read (Appium: mShowingLockscreen / mDreamingLockscreen)."""
    on = str(locked).lower()
    return (f"WINDOW MANAGER POLICY STATE (dumpsys window policy)\n    mShowingLockscreen={on} "
            f"mShowingDream=false mDreamingLockscreen={on}\n    isKeyguardShowing={on}\n"
            f"    KeyguardServiceDelegate\n      showing={on}\n")


def _failed(head: str, message: str, wait: bool) -> ShellResult:
    """``am start`` that did not start anything: still exit status 0, the error on stderr (on
    stdout with ``-W``)."""
    return out(head + message) if wait else err(message, 0, head)


def _num(s: str) -> int:
    return round(float(s))
