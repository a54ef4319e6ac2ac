"""A small Android shell: the commands the adb backend and success checks use (see WORLD.md)."""

from __future__ import annotations

import hashlib
import re
import struct
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from artemis_cli.errors import ArtemisError
from artemis_cli.sim.faults import IDLE_STATE_MSG, NULL_ROOT_MSG
from artemis_cli.sim.system import NAMESPACES
from artemis_cli.sim.vfs import FsError

if TYPE_CHECKING:
    from artemis_cli.sim.phone import SimPhone

DEFAULT_DUMP = "/sdcard/window_dump.xml"

KEYCODE_NAMES: dict[str, int] = {
    "HOME": 3, "BACK": 4, "DPAD_UP": 19, "DPAD_DOWN": 20, "DPAD_LEFT": 21, "DPAD_RIGHT": 22, "DPAD_CENTER": 23,
    "VOLUME_UP": 24, "VOLUME_DOWN": 25, "POWER": 26, "COMMA": 55, "PERIOD": 56, "TAB": 61, "SPACE": 62,
    "ENTER": 66, "DEL": 67, "MINUS": 69, "AT": 77, "PLUS": 81, "MENU": 82, "SEARCH": 84, "ESCAPE": 111,
    "FORWARD_DEL": 112, "MOVE_END": 123, "APP_SWITCH": 187, "SLEEP": 223, "WAKEUP": 224,
}
KEYCODE_NAMES.update({str(d): 7 + d for d in range(10)})
KEYCODE_NAMES.update({chr(ord("A") + i): 29 + i for i in range(26)})
_CODE_ACTION: dict[int, str] = {3: "home", 4: "back", 66: "enter", 67: "delete", 61: "tab", 82: "menu",
                                84: "search", 187: "recents"}
_CODE_CHAR: dict[int, str] = {62: " ", 55: ",", 56: ".", 69: "-", 77: "@", 81: "+"}
_CODE_CHAR.update({7 + d: str(d) for d in range(10)})
_CODE_CHAR.update({29 + i: chr(ord("a") + i) for i in range(26)})

PROPS_BASE: dict[str, str] = {
    "ro.product.model": "Artemis Sim", "ro.product.manufacturer": "Artemis", "ro.product.brand": "artemis",
    "ro.product.name": "artemis_sim", "ro.product.device": "artemis_sim", "ro.product.cpu.abi": "arm64-v8a",
    "ro.build.version.sdk": "34", "ro.build.version.release": "14", "ro.build.id": "AP1A.240305.019",
    "ro.build.display.id": "AP1A.240305.019", "ro.build.type": "user", "ro.build.characteristics": "default",
    "ro.sf.lcd_density": "420", "sys.boot_completed": "1", "persist.sys.locale": "en-US",
    "ro.product.locale": "en-US", "gsm.operator.alpha": "Artemis Mobile",
}
EXTRA_PACKAGES = ("android", "com.android.systemui", "com.android.phone", "com.android.providers.settings",
                  "com.android.shell", "com.android.inputmethod.latin")


@dataclass(frozen=True)
class ShellResult:
    output: bytes
    exit_code: int


class _Op(str):
    """An unquoted shell operator token (; && || | > >>)."""


def tokenize(cmd: str) -> list[str]:
    """Split like sh: quotes, backslashes, operators. ``2>...`` / ``2>&1`` are dropped."""
    out: list[str] = []
    buf: list[str] = []
    has_word = False
    i, n = 0, len(cmd)

    def flush() -> None:
        nonlocal has_word
        if has_word:
            out.append("".join(buf))
        buf.clear()
        has_word = False

    while i < n:
        ch = cmd[i]
        if ch in " \t\n":
            flush()
            i += 1
        elif ch == "'":
            j = cmd.find("'", i + 1)
            if j < 0:
                raise ValueError("syntax error: ''' unmatched")
            buf.append(cmd[i + 1:j])
            has_word = True
            i = j + 1
        elif ch == '"':
            i += 1
            while i < n and cmd[i] != '"':
                if cmd[i] == "\\" and i + 1 < n and cmd[i + 1] in '"\\$`':
                    i += 1
                buf.append(cmd[i])
                i += 1
            if i >= n:
                raise ValueError("syntax error: '\"' unmatched")
            has_word = True
            i += 1
        elif ch == "\\":
            if i + 1 < n:
                buf.append(cmd[i + 1])
                has_word = True
            i += 2
        elif ch in ";&|>":
            if ch == ">" and has_word and "".join(buf) == "2":  # 2>/dev/null, 2>&1
                buf.clear()
                has_word = False
                i += 1
                if i < n and cmd[i] == "&":
                    i += 1
                    while i < n and cmd[i].isdigit():
                        i += 1
                    continue
                while i < n and cmd[i] == " ":
                    i += 1
                while i < n and cmd[i] not in " \t;&|":
                    i += 1
                continue
            flush()
            two = cmd[i:i + 2]
            if two in ("&&", "||", ">>"):
                out.append(_Op(two))
                i += 2
            elif ch == "&":
                i += 1  # background: run in the foreground
                out.append(_Op(";"))
            else:
                out.append(_Op(ch))
                i += 1
        else:
            buf.append(ch)
            has_word = True
            i += 1
    flush()
    return out


class Shell:
    def __init__(self, phone: SimPhone) -> None:
        self.phone = phone
        self.commands: dict[str, Callable[[list[str], bytes], ShellResult]] = {
            "screencap": self.screencap, "uiautomator": self.uiautomator, "input": self.input, "am": self.am,
            "monkey": self.monkey, "dumpsys": self.dumpsys, "wm": self.wm, "settings": self.settings,
            "getprop": self.getprop, "pm": self.pm, "rm": self.rm, "cat": self.cat, "echo": self.echo,
            "ls": self.ls, "md5sum": self.md5sum, "toybox": self.toybox, "content": self.content,
            "mkdir": self.mkdir, "touch": self.touch, "sleep": _ok, "true": _ok, "false": _fail,
            "grep": self.grep, "head": self.head, "tail": self.tail, "wc": self.wc, "id": self.id_,
            "whoami": lambda a, i: _out("shell\n"), "date": self.date, "exit": self.exit_,
        }

    # -- the interpreter -----------------------------------------------------------------------
    def run(self, command: str) -> ShellResult:
        """Run a command line; never raises (errors become output + non-zero exit code)."""
        try:
            tokens = tokenize(command)
        except ValueError as e:
            return ShellResult(f"/system/bin/sh: <stdin>[1]: {e}\n".encode(), 1)
        # split into (pipeline, connector) items
        result = ShellResult(b"", 0)
        chunks: list[tuple[list[str], str]] = []
        cur: list[str] = []
        for t in tokens:
            if isinstance(t, _Op) and t in (";", "&&", "||"):
                chunks.append((cur, str(t)))
                cur = []
            else:
                cur.append(t)
        chunks.append((cur, ";"))
        outputs: list[bytes] = []
        connector = ";"
        for words, nxt in chunks:
            if words and not (connector == "&&" and result.exit_code != 0) and not (
                connector == "||" and result.exit_code == 0
            ):
                result = self.pipeline(words)
                outputs.append(result.output)
            connector = nxt
        return ShellResult(b"".join(outputs), result.exit_code)

    def pipeline(self, words: list[str]) -> ShellResult:
        stages: list[list[str]] = [[]]
        for t in words:
            if isinstance(t, _Op) and t == "|":
                stages.append([])
            else:
                stages[-1].append(t)
        data = b""
        res = ShellResult(b"", 0)
        for stage in stages:
            res = self.simple(stage, data)
            data = res.output
        return res

    def simple(self, words: list[str], stdin: bytes) -> ShellResult:
        redirect: tuple[str, bool] | None = None
        argv: list[str] = []
        i = 0
        while i < len(words):
            t = words[i]
            if isinstance(t, _Op) and t in (">", ">>"):
                if i + 1 >= len(words):
                    return ShellResult(b"/system/bin/sh: syntax error: newline unexpected\n", 1)
                redirect = (words[i + 1], t == ">>")
                i += 2
                continue
            argv.append(str(t))
            i += 1
        if not argv:
            return ShellResult(b"", 0)
        name = argv[0].rsplit("/", 1)[-1]
        handler = self.commands.get(name)
        if handler is None:
            return ShellResult(f"/system/bin/sh: {argv[0]}: inaccessible or not found\n".encode(), 127)
        try:
            res = handler(argv[1:], stdin)
        except ArtemisError as e:  # documented errors from the phone become shell errors
            res = ShellResult(f"Error: {e}\n".encode(), 1)
        if redirect is not None:
            path, append = redirect
            if path == "/dev/null":
                return ShellResult(b"", res.exit_code)
            try:
                self.phone.fs.write_file(path, res.output, append=append)
            except FsError as e:
                return ShellResult(f"/system/bin/sh: can't create {path}: {e.reason}\n".encode(), 1)
            return ShellResult(b"", res.exit_code)
        return res

    # -- screen --------------------------------------------------------------------------------
    def screencap(self, args: list[str], _: bytes) -> ShellResult:
        png = "-p" in args
        paths = [a for a in args if not a.startswith("-")]
        if self.phone.faults.screencap_fails():
            return ShellResult(b"Capturing failed.\n", 1)
        if paths:
            data = self.phone.render_png()
            try:
                self.phone.fs.write_file(paths[0], data)
            except FsError as e:
                return ShellResult(f"Error opening file: {paths[0]} ({e.reason})\n".encode(), 1)
            return ShellResult(b"", 0)
        if png:
            return ShellResult(self.phone.render_png(), 0)
        img = self.phone.render_image().convert("RGBA")
        header = struct.pack("<IIII", img.width, img.height, 1, 0)
        return ShellResult(header + img.tobytes(), 0)

    def uiautomator(self, args: list[str], _: bytes) -> ShellResult:
        if not args or args[0] != "dump":
            return _out("Usage: uiautomator <subcommand> [options]\n\nAvailable subcommands:\n\n"
                        "dump: creates an XML dump of current UI hierarchy\n", 1)
        rest = [a for a in args[1:] if not a.startswith("--")]
        path = rest[0] if rest else DEFAULT_DUMP
        fault = self.phone.faults.dump_fault()
        if fault == "idle_state":
            return _out(IDLE_STATE_MSG + "\n", 1)
        if fault == "null_root":
            return _out(NULL_ROOT_MSG + "\n", 1)
        xml = self.phone.dump_xml()
        if fault is not None:  # garbage_xml / empty_hierarchy: a "successful" dump with bad content
            xml = self.phone.faults.faulty_content(fault, xml)
        if path in ("/dev/tty", "/dev/stdout"):
            return _out(xml + f"UI hierchary dumped to: {path}\n")
        if fault != "stale_dump":
            try:
                self.phone.fs.write_file(path, xml.encode())
            except FsError as e:
                return _out(f"ERROR: could not write {path}: {e.reason}\n", 1)
        return _out(f"UI hierchary dumped to: {path}\n")

    # -- input ---------------------------------------------------------------------------------
    def input(self, args: list[str], _: bytes) -> ShellResult:
        if args and args[0] in ("touchscreen", "touchpad", "keyboard", "mouse", "stylus", "dpad", "gamepad"):
            args = args[1:]
        if len(args) >= 2 and args[0] == "-d":
            args = args[2:]
        if not args:
            return _usage_input()
        sub, rest = args[0], args[1:]
        p = self.phone
        try:
            if sub == "tap" and len(rest) == 2:
                p.do_tap(_num(rest[0]), _num(rest[1]))
            elif sub == "swipe" and len(rest) in (4, 5):
                x1, y1, x2, y2 = (_num(v) for v in rest[:4])
                ms = _num(rest[4]) if len(rest) == 5 else 300
                p.do_swipe(x1, y1, x2, y2, ms)
            elif sub == "text" and rest:
                p.do_type(" ".join(rest).replace("%s", " "))
            elif sub == "keyevent" and rest:
                for code in [r for r in rest if not r.startswith("--")]:
                    err = self.keyevent(code)
                    if err:
                        return _out(err, 1)
            else:
                return _usage_input(sub)
        except ValueError:
            return _out(f"Error: Invalid arguments for command: {sub}\n" + _INPUT_USAGE, 1)
        return _out("")

    def keyevent(self, code: str) -> str:
        name = code.upper().removeprefix("KEYCODE_")
        if name.isdigit() and not code.upper().startswith("KEYCODE_"):
            num = int(name)
        elif name in KEYCODE_NAMES:
            num = KEYCODE_NAMES[name]
        else:
            return f"Error: Unknown keycode: {code}\n"
        if num in _CODE_ACTION:
            self.phone.do_key(_CODE_ACTION[num])
        elif num in _CODE_CHAR:
            self.phone.do_type(_CODE_CHAR[num])
        else:
            self.phone.note_ignored(f"keyevent {num}")
        return ""

    # -- activities ----------------------------------------------------------------------------
    def am(self, args: list[str], _: bytes) -> ShellResult:
        if not args:
            return _out("usage: am [subcommand] [options]\n", 1)
        sub, rest = args[0], args[1:]
        p = self.phone
        if sub == "force-stop":
            pkgs = [a for a in rest if not a.startswith("-") and not a.isdigit()]
            for pkg in pkgs:
                p.force_stop(pkg)
            return _out("")
        if sub not in ("start", "start-activity"):
            return _out(f"Error: Unknown command: {sub}\n", 1)
        comp = action = ""
        cats: list[str] = []
        positional: list[str] = []
        stop = wait = False
        i = 0
        while i < len(rest):
            a = rest[i]
            if a == "-n" and i + 1 < len(rest):
                comp = rest[i + 1]
                i += 2
            elif a == "-a" and i + 1 < len(rest):
                action = rest[i + 1]
                i += 2
            elif a == "-c" and i + 1 < len(rest):
                cats.append(rest[i + 1])
                i += 2
            elif a in ("-d", "-t", "-f", "--user", "-p") and i + 1 < len(rest):
                if a == "-p":
                    positional.append(rest[i + 1])
                i += 2
            elif a in ("-e", "--es", "--ei", "--ez", "--el", "--ef") and i + 2 < len(rest):
                i += 3
            elif a == "-S":
                stop, i = True, i + 1
            elif a == "-W":
                wait, i = True, i + 1
            elif a.startswith("-"):
                i += 1
            else:
                positional.append(a)
                i += 1
        pkg = comp.split("/", 1)[0] if comp else (positional[-1] if positional else "")
        act = comp.split("/", 1)[1] if "/" in comp else ".MainActivity"
        parts = []
        if action:
            parts.append(f"act={action}")
        if cats:
            parts.append(f"cat=[{','.join(cats)}]")
        screen = None
        if not pkg and action.startswith("android.settings."):
            pkg = "com.android.settings"
            screen = {"android.settings.WIFI_SETTINGS": "network", "android.settings.WIRELESS_SETTINGS": "network",
                      "android.settings.AIRPLANE_MODE_SETTINGS": "network",
                      "android.settings.BLUETOOTH_SETTINGS": "connected",
                      "android.settings.DISPLAY_SETTINGS": "display",
                      "android.settings.DEVICE_INFO_SETTINGS": "about"}.get(action)
        if not pkg and "android.intent.category.HOME" in cats:
            pkg = "com.android.launcher3"
        if pkg:
            parts.append(f"cmp={pkg}/{act}")
        head = "Starting: Intent { " + " ".join(parts) + " }\n"
        if not pkg:
            return _out(head + "Error: Activity not started, unable to resolve Intent { "
                        + " ".join(parts) + " }\n", 1)
        if not p.has_package(pkg):
            return _out(head + f"Error type 3\nError: Activity class {{{pkg}/{act}}} does not exist.\n", 1)
        if stop:
            p.force_stop(pkg)
        p.do_launch(pkg, screen=screen)
        tail = ""
        if wait:
            tail = (f"Status: ok\nLaunchState: WARM\nActivity: {pkg}/{act}\nTotalTime: 120\nWaitTime: 125\n"
                    "Complete\n")
        return _out(head + tail)

    def monkey(self, args: list[str], _: bytes) -> ShellResult:
        pkg = ""
        for i, a in enumerate(args):
            if a == "-p" and i + 1 < len(args):
                pkg = args[i + 1]
        echo = "".join(f"  bash arg: {a}\n" for a in args)
        if not pkg or not self.phone.has_package(pkg) or pkg == "com.android.systemui":
            return _out(echo + "** No activities found to run, monkey aborted.\n", 252)
        self.phone.do_launch(pkg)
        return _out(echo + "Events injected: 1\n## Network stats: elapsed time=14ms (0ms mobile, 0ms wifi, "
                    "14ms not connected)\n")

    def dumpsys(self, args: list[str], _: bytes) -> ShellResult:
        pkg = self.phone.current_package()
        wid = hashlib.md5(pkg.encode()).hexdigest()[:7]
        act = f"{pkg}/{pkg}.MainActivity"
        if args and args[0] == "window":
            return _out(
                "WINDOW MANAGER WINDOWS (dumpsys window windows)\n"
                f"  Window #0 Window{{{wid} u0 {act}}}:\n"
                "    mDisplayId=0 rootTaskId=12 mSession=Session{5f3a2c1 2345:u0a10123}\n"
                f"  mCurrentFocus=Window{{{wid} u0 {act}}}\n"
                f"  mFocusedApp=ActivityRecord{{{wid[::-1]} u0 {pkg}/.MainActivity t12}}\n"
                f"  mInputMethodWindow=Window{{1c2d3e4 u0 InputMethod}} visible={str(self.phone.keyboard_visible()).lower()}\n"
            )
        if args and args[0] == "activity":
            return _out(
                "ACTIVITY MANAGER ACTIVITIES (dumpsys activity activities)\n"
                f"    mResumedActivity: ActivityRecord{{{wid[::-1]} u0 {pkg}/.MainActivity t12}}\n"
                f"  ResumedActivity: ActivityRecord{{{wid[::-1]} u0 {pkg}/.MainActivity t12}}\n"
            )
        if args and args[0] == "battery":
            return _out("Current Battery Service state:\n  AC powered: true\n  level: 100\n  scale: 100\n")
        return _out(f"Can't find service: {args[0] if args else ''}\n" if args else "", 0)

    def wm(self, args: list[str], _: bytes) -> ShellResult:
        info = self.phone.info()
        if args[:1] == ["size"]:
            return _out(f"Physical size: {info.width}x{info.height}\n")
        if args[:1] == ["density"]:
            return _out("Physical density: 420\n")
        return _out("usage: wm [size|density]\n", 1)

    # -- settings / props / packages ------------------------------------------------------------
    def settings(self, args: list[str], _: bytes) -> ShellResult:
        a = list(args)
        if len(a) >= 2 and a[0] == "--user":
            a = a[2:]
        usage = "usage:  settings [--user <USER_ID> | current] get namespace key\n" \
                "        settings [--user <USER_ID> | current] put namespace key value\n"
        if len(a) < 2:
            return _out(usage, 1)
        verb, ns = a[0], a[1]
        if ns not in NAMESPACES:
            return _out(f"Invalid namespace '{ns}'\n" + usage, 1)
        s = self.phone.settings
        if verb == "get" and len(a) == 3:
            v = s.get(ns, a[2])
            return _out(("null" if v is None else v) + "\n")
        if verb == "put" and len(a) >= 4:
            s.put(ns, a[2], a[3])
            self.phone.invalidate()
            return _out("")
        if verb == "delete" and len(a) == 3:
            existed = s.values.get(ns, {}).pop(a[2], None) is not None
            self.phone.invalidate()
            return _out(f"Deleted {int(existed)} rows\n")
        if verb == "list" and len(a) == 2:
            return _out("".join(f"{k}={v}\n" for k, v in sorted(s.values.get(ns, {}).items())))
        return _out(usage, 1)

    def props(self) -> dict[str, str]:
        info = self.phone.info()
        return {**PROPS_BASE, "ro.serialno": info.serial, "ro.boot.serialno": info.serial}

    def getprop(self, args: list[str], _: bytes) -> ShellResult:
        props = self.props()
        if not args:
            return _out("".join(f"[{k}]: [{v}]\n" for k, v in sorted(props.items())))
        return _out(props.get(args[0], args[1] if len(args) > 1 else "") + "\n")

    def pm(self, args: list[str], _: bytes) -> ShellResult:
        pkgs = [*self.phone.packages(), *EXTRA_PACKAGES]
        if args[:2] == ["list", "packages"]:
            filt = [a for a in args[2:] if not a.startswith("-")]
            return _out("".join(f"package:{p}\n" for p in pkgs if not filt or filt[0] in p))
        if args[:1] == ["path"] and len(args) == 2:
            if args[1] in pkgs:
                return _out(f"package:/data/app/{args[1]}/base.apk\n")
            return _out("", 1)
        return _out("usage: pm list packages [FILTER]\n", 1)

    # -- files ---------------------------------------------------------------------------------
    def rm(self, args: list[str], _: bytes) -> ShellResult:
        force = any(a.startswith("-") and "f" in a for a in args)
        rec = any(a.startswith("-") and "r" in a.lower() for a in args)
        out, code = [], 0
        for path in (a for a in args if not a.startswith("-")):
            try:
                self.phone.fs.remove(path, recursive=rec)
            except FsError as e:
                if not (force and e.reason == "No such file or directory"):
                    out.append(f"rm: {path}: {e.reason}\n")
                    code = 1
        return _out("".join(out), code)

    def cat(self, args: list[str], stdin: bytes) -> ShellResult:
        if not args:
            return ShellResult(stdin, 0)
        chunks, errs, code = [], [], 0
        for path in args:
            try:
                chunks.append(self.phone.fs.read_file(path))
            except FsError as e:
                errs.append(f"cat: {path}: {e.reason}\n".encode())
                code = 1
        return ShellResult(b"".join(chunks + errs), code)

    def echo(self, args: list[str], _: bytes) -> ShellResult:
        if args[:1] == ["-n"]:
            return _out(" ".join(args[1:]))
        return _out(" ".join(args) + "\n")

    def ls(self, args: list[str], _: bytes) -> ShellResult:
        paths = [a for a in args if not a.startswith("-")] or ["/"]
        out, code = [], 0
        for path in paths:
            try:
                names = self.phone.fs.listdir(path)
                if self.phone.fs.is_dir(path):
                    if len(paths) > 1:
                        out.append(f"{path}:\n")
                    out.extend(f"{n}\n" for n in names)
                else:
                    out.append(f"{path}\n")
            except FsError as e:
                out.append(f"ls: {path}: {e.reason}\n")
                code = 1
        return _out("".join(out), code)

    def md5sum(self, args: list[str], _: bytes) -> ShellResult:
        out, code = [], 0
        for path in (a for a in args if not a.startswith("-")):
            try:
                out.append(f"{hashlib.md5(self.phone.fs.read_file(path)).hexdigest()}  {path}\n")
            except FsError as e:
                out.append(f"md5sum: {path}: {e.reason}\n")
                code = 1
        return _out("".join(out), code)

    def toybox(self, args: list[str], stdin: bytes) -> ShellResult:
        if not args:
            return _out("usage: toybox [command] [arguments...]\n", 1)
        handler = self.commands.get(args[0])
        if handler is None or args[0] == "toybox":
            return _out(f"toybox: Unknown command {args[0]}\n", 1)
        return handler(args[1:], stdin)

    def mkdir(self, args: list[str], _: bytes) -> ShellResult:
        parents = "-p" in args
        out, code = [], 0
        for path in (a for a in args if not a.startswith("-")):
            try:
                self.phone.fs.mkdir(path, parents=parents)
            except FsError as e:
                out.append(f"mkdir: '{path}': {e.reason}\n")
                code = 1
        return _out("".join(out), code)

    def touch(self, args: list[str], _: bytes) -> ShellResult:
        for path in (a for a in args if not a.startswith("-")):
            try:
                fs = self.phone.fs
                fs.write_file(path, fs.read_file(path) if fs.exists(path) else b"")
            except FsError as e:
                return _out(f"touch: '{path}': {e.reason}\n", 1)
        return _out("")

    # -- text filters ---------------------------------------------------------------------------
    def grep(self, args: list[str], stdin: bytes) -> ShellResult:
        flags = "".join(a[1:] for a in args if a.startswith("-") and len(a) > 1)
        pats = [a for a in args if not a.startswith("-") or a == "-"]
        if not pats:
            return _out("usage: grep [-civE] PATTERN\n", 2)
        try:
            rx = re.compile(pats[0], re.IGNORECASE if "i" in flags else 0)
        except re.error:
            rx = re.compile(re.escape(pats[0]), re.IGNORECASE if "i" in flags else 0)
        lines = stdin.decode("utf-8", "replace").splitlines()
        hits = [ln for ln in lines if bool(rx.search(ln)) != ("v" in flags)]
        if "c" in flags:
            return _out(f"{len(hits)}\n", 0 if hits else 1)
        return _out("".join(h + "\n" for h in hits), 0 if hits else 1)

    def head(self, args: list[str], stdin: bytes) -> ShellResult:
        n = _count_arg(args, 10)
        return _out("".join(x + "\n" for x in stdin.decode("utf-8", "replace").splitlines()[:n]))

    def tail(self, args: list[str], stdin: bytes) -> ShellResult:
        n = _count_arg(args, 10)
        lines = stdin.decode("utf-8", "replace").splitlines()
        return _out("".join(x + "\n" for x in lines[max(0, len(lines) - n):]))

    def wc(self, args: list[str], stdin: bytes) -> ShellResult:
        lines = stdin.count(b"\n")
        return _out(f"{lines}\n")

    def id_(self, args: list[str], _: bytes) -> ShellResult:
        return _out("uid=2000(shell) gid=2000(shell) groups=2000(shell),1004(input),1007(log),1015(sdcard_rw) "
                    "context=u:r:shell:s0\n")

    def date(self, args: list[str], _: bytes) -> ShellResult:
        import time as _t

        epoch = self.phone.clock.epoch_s()
        if args[:1] == ["+%s"]:
            return _out(f"{epoch}\n")
        return _out(_t.strftime("%a %b %d %H:%M:%S UTC %Y", _t.gmtime(epoch)) + "\n")

    def exit_(self, args: list[str], _: bytes) -> ShellResult:
        try:
            return _out("", int(args[0]) & 255 if args else 0)
        except ValueError:
            return _out(f"/system/bin/sh: exit: {args[0]}: bad number\n", 1)

    # -- content providers ------------------------------------------------------------------------
    def content(self, args: list[str], _: bytes) -> ShellResult:
        if not args or args[0] != "query":
            return _out("usage: adb shell content [subcommand] [options]\n  content query --uri <URI> "
                        "[--projection <PROJECTION>] [--where <WHERE>] [--sort <SORT_ORDER>]\n", 1)
        opts: dict[str, str] = {}
        it = iter(args[1:])
        for a in it:
            if a.startswith("--"):
                opts[a[2:]] = next(it, "")
        uri = opts.get("uri", "")
        if not uri:
            return _out("Error: missing --uri\n", 1)
        m = re.fullmatch(r"content://([^/]+)/?([^/?#]*)", uri)
        rows = self.phone.provider_rows(m.group(1), m.group(2)) if m else None
        if rows is None:
            auth = m.group(1) if m else uri
            return _out(f"Error while accessing provider:{auth}\njava.lang.IllegalArgumentException: Unknown URI "
                        f"{uri}\n", 1)
        where = opts.get("where", "").strip()
        if where:
            try:
                rows = [r for r in rows if _where(where)(r)]
            except ValueError as e:
                return _out(f"Error while accessing provider:{m.group(1) if m else ''}\n"
                            f"android.database.sqlite.SQLiteException: {e}\n", 1)
        proj = [p for p in re.split(r"[:,]", opts.get("projection", "")) if p]
        if not rows:
            return _out("No result found.\n")
        lines = []
        for i, r in enumerate(rows):
            keys = proj or list(r)
            cells = ", ".join(f"{k}={'NULL' if r.get(k) is None else r.get(k)}" for k in keys)
            lines.append(f"Row: {i} {cells}\n")
        return _out("".join(lines))


_INPUT_USAGE = ("Usage: input [<source>] [-d DISPLAY_ID] <command> [<arg>...]\n\nThe commands and default "
                "sources are:\n      text <string> (Default: keyboard)\n      keyevent [--longpress|--doubletap]"
                " <key code number or name> ... (Default: keyboard)\n      tap <x> <y> (Default: touchscreen)\n"
                "      swipe <x1> <y1> <x2> <y2> [duration(ms)] (Default: touchscreen)\n")


def _usage_input(sub: str = "") -> ShellResult:
    head = f"Error: Invalid arguments for command: {sub}\n" if sub else ""
    return _out(head + _INPUT_USAGE, 1)


def _num(s: str) -> int:
    return round(float(s))


def _count_arg(args: list[str], default: int) -> int:
    for i, a in enumerate(args):
        if a == "-n" and i + 1 < len(args) and args[i + 1].isdigit():
            return int(args[i + 1])
        if a.startswith("-") and a[1:].isdigit():
            return int(a[1:])
    return default


def _out(text: str, code: int = 0) -> ShellResult:
    return ShellResult(text.encode("utf-8"), code)


def _ok(args: list[str], _: bytes) -> ShellResult:
    return ShellResult(b"", 0)


def _fail(args: list[str], _: bytes) -> ShellResult:
    return ShellResult(b"", 1)


_COND = re.compile(r"""\s*([A-Za-z_][A-Za-z0-9_]*)\s*(=|==|!=|<>|\s+LIKE\s+)\s*('([^']*)'|"([^"]*)"|([^\s'"]+))\s*""",
                   re.IGNORECASE)


def _where(expr: str) -> Callable[[Mapping[str, str | int | None]], bool]:
    """``key='v' AND key2=3`` (=, !=, LIKE with %); anything else raises ValueError."""
    conds = []
    for part in re.split(r"\s+AND\s+", expr, flags=re.IGNORECASE):
        m = _COND.fullmatch(part)
        if not m:
            raise ValueError(f"near \"{part.strip()}\": syntax error")
        key, op = m.group(1), m.group(2).strip().upper()
        val = next(g for g in (m.group(4), m.group(5), m.group(6)) if g is not None)
        conds.append((key, op, val))

    def test(row: Mapping[str, str | int | None]) -> bool:
        for key, op, val in conds:
            if key not in row:
                raise ValueError(f"no such column: {key}")
            cell = "" if row[key] is None else str(row[key])
            if op == "LIKE":
                rx = "^" + re.escape(val).replace("%", ".*").replace("_", ".") + "$"
                ok = re.match(rx, cell, re.IGNORECASE | re.DOTALL) is not None
            else:
                ok = cell == val
                if op in ("!=", "<>"):
                    ok = not ok
            if not ok:
                return False
        return True

    return test
