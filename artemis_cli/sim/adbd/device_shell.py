"""The device side behind the adbd: the simulated phone's shell plus what uiautomator2 installs.

Everything the adb backend and uiautomator2 run goes to the phone's shell (``SimPhone.sh``), which
gains here what a real device gets from uiautomator2's files and apps and from being served:

* ``CLASSPATH=/data/local/tmp/u2.jar app_process / com.wetest.uia2.Main -p 9008``: starts the
  uiautomator2 server (it runs while that shell stream stays open, like the real process; the
  services module sees it before the shell does);
* ``ime list|enable|set|disable`` and ``am broadcast -a ADB_KEYBOARD_…``: uiautomator2's
  AdbKeyboard IME, present when the device was built with ``adb_keyboard=True`` (as after
  ``python -m uiautomator2 init``) or once ``pm install`` installed uiautomator2's own APK
  (``assets/app-uiautomator.apk``, what ``set_input_ime``/``hide_keyboard``/``send_action``
  install on a phone without it); otherwise ``ime list`` shows only Gboard and broadcasts are
  not received (``result=0``);
* ``app_process`` (mobilecli's ``CLASSPATH=/data/local/tmp/mobilecli.dex nohup app_process /
  com.mobilenext.mobilecli.DeviceServer &``: starts mobilecli's server, mobilecli_server.py) and
  ``pgrep``/``pkill`` (``-f``: by command line) over the phone's processes; while that server
  holds the phone's one UiAutomation, ``uiautomator dump`` fails as on a phone;
* ``reboot``: the served device drops every connection and comes back later (``on_reboot``).

These are commands of the phone's shell, so they work inside ``;`` ``&&`` ``|`` and with
adbutils' ``…; echo X4EXIT:$?`` exit-status trick like any other command.

All phone access goes through one lock: streams run concurrently, the phone is single-threaded.
"""

from __future__ import annotations

import base64
import binascii
import re
import threading
from collections.abc import Callable
from dataclasses import dataclass, field

from artemis_cli.sim.adbd.mobilecli_server import MAIN as MOBILECLI_MAIN
from artemis_cli.sim.adbd.mobilecli_server import UIAUTOMATION_TAKEN, MobilecliServer
from artemis_cli.sim.gestures import TAP_SLOP, Stroke
from artemis_cli.sim.latency import Latency
from artemis_cli.sim.phone import SimPhone
from artemis_cli.sim.processes import SHELL_UID, Proc
from artemis_cli.sim.shell import Shell, ShellResult, err, out
from artemis_cli.sim.system import GBOARD

U2_JAR = "/data/local/tmp/u2.jar"
U2_MAIN = "com.wetest.uia2.Main"
U2_PORT = 9008
LATIN_IME = GBOARD  # the stock keyboard, Gboard (sim/sysui.IME_PACKAGE draws it)
U2_APP = "com.github.uiautomator"  # the app uiautomator2 installs; its AdbKeyboard is an IME
ADB_KEYBOARD = "com.github.uiautomator/.AdbKeyboard"

_U2_LAUNCH = re.compile(r"app_process\s.*\b" + re.escape(U2_MAIN) + r"\b(?:.*-p\s+(?P<port>\d+))?")


@dataclass
class U2State:
    """Whether the uiautomator2 server "process" runs, and on which device port."""

    running: bool = False
    port: int = U2_PORT
    clipboard: str = ""
    stroke: Stroke = field(default_factory=lambda: Stroke(TAP_SLOP))  # touch.down/move/up so far
    starts: int = 0
    toast: str | None = None  # the last Toast (makeToast / getLastToast)


@dataclass
class DeviceSide:
    phone: SimPhone
    adb_keyboard: bool = False
    u2_can_start: bool = True  # False: app_process fails like a phone where another UiAutomation runs
    lock: threading.RLock = field(default_factory=threading.RLock)
    u2: U2State = field(default_factory=U2State)
    on_reboot: Callable[[], None] | None = None  # set by SimAdbd: drop everything, come back later
    rebooting: bool = False  # between a reboot request and the connections dropping
    latency: Latency = field(default_factory=Latency)  # the profile each call pays (sim/latency.py)
    mobilecli: MobilecliServer = field(init=False, repr=False)  # mobilecli's DeviceServer (mobilecli_server.py)
    _shell: Shell | None = field(default=None, init=False, repr=False)  # the shell our commands are in

    def __post_init__(self) -> None:
        self.mobilecli = MobilecliServer(self)
        self._hook_shell()

    def _hook_shell(self) -> None:
        """Add this side's commands to the phone's shell (again after ``artemis-sim reset``, which
        gives the phone a new shell)."""
        sh = self._shell = self.phone.sh
        plain_am = sh.commands["am"]

        def am(args: list[str], stdin: bytes) -> ShellResult:
            if args[:1] == ["broadcast"]:
                return self._broadcast(args[1:])
            return plain_am(args, stdin)

        # `pm install` of uiautomator2's own APK installs com.github.uiautomator (its binary
        # manifest names it: sim/packages.py), and with it the AdbKeyboard (_imes)
        plain_uiautomator = sh.commands["uiautomator"]

        def uiautomator(args: list[str], stdin: bytes) -> ShellResult:
            if args[:1] == ["dump"] and self.mobilecli.running:  # it holds the one UiAutomation
                return err(UIAUTOMATION_TAKEN, 1)
            return plain_uiautomator(args, stdin)

        sh.commands.update({"ime": lambda args, _: self._ime(args), "am": am, "reboot": self._reboot,
                            "uiautomator": uiautomator,
                            "app_process": self._app_process, "pgrep": self._pgrep, "pkill": self._pkill})

    # --- shell ----------------------------------------------------------------------------
    def is_u2_launch(self, command: str) -> int | None:
        """The port when ``command`` starts the uiautomator2 server, else None."""
        m = _U2_LAUNCH.search(command)
        if m is None:
            return None
        return int(m.group("port") or U2_PORT)

    def run(self, command: str, *, stdin: bytes = b"", status: int = 0) -> ShellResult:
        """Run a command line in the phone's shell (``status`` is ``$?`` at the start)."""
        with self.lock:
            if self.phone.sh is not self._shell:
                self._hook_shell()
            self.phone.touch.arrive()  # its taps are timed from when it reached the phone (sim/gestures.py)
            return self.phone.sh.run(command, stdin=stdin, status=status)

    def reads_stdin(self, command: str) -> bool:
        with self.lock:
            if self.phone.sh is not self._shell:
                self._hook_shell()
            return self.phone.sh.reads_stdin(command)

    def _reboot(self, args: list[str], _: bytes) -> ShellResult:
        if self.on_reboot is None:
            self.phone.reboot()
        else:
            self.on_reboot()
        return out("")

    def _app_process(self, args: list[str], _: bytes) -> ShellResult:
        """``app_process PARENT_DIR [--opts] CLASS [args]`` with ``CLASSPATH`` from the environment."""
        names = [a for a in args[1:] if not a.startswith("-")]
        if not args or not names:
            return err("Usage: app_process [java-options] cmd-dir start-class-name [options]\n", 1)
        classpath = self.phone.sh.builtins.env.get("CLASSPATH", "")
        if names[0] == MOBILECLI_MAIN:
            problem, status = self.mobilecli.launch(classpath)
            return err(problem, status) if status else out("")
        return err(f"Error: Could not find or load main class {names[0]}\n", 1)  # the sim runs no other Java

    def _cmdline(self, proc: Proc) -> str:
        return self.mobilecli.cmdline() if proc is self.mobilecli.state.proc else proc.name

    def _matches(self, args: list[str], tool: str) -> tuple[list[Proc], ShellResult | None]:
        full = "-f" in args
        patterns = [a for a in args if not a.startswith("-")]
        if len(patterns) != 1:
            return [], err(f"{tool}: Needs 1 argument\n", 1)
        try:
            rx = re.compile(patterns[0])
        except re.error as e:
            return [], err(f"{tool}: bad regex '{patterns[0]}': {e}\n", 1)
        with self.lock:
            procs = self.phone.am.table.listing()
            return [p for p in procs if rx.search(self._cmdline(p) if full else p.name)], None

    def _pgrep(self, args: list[str], _: bytes) -> ShellResult:
        found, problem = self._matches(args, "pgrep")
        if problem is not None:
            return problem
        return out("".join(f"{p.pid}\n" for p in found), 0 if found else 1)

    def _pkill(self, args: list[str], _: bytes) -> ShellResult:
        """Kills what the shell user owns; other users' processes are not its to kill."""
        found, problem = self._matches([a for a in args if not a.startswith("-") or a == "-f"], "pkill")
        if problem is not None:
            return problem
        denied = [p for p in found if p.uid != SHELL_UID]
        with self.lock:
            for p in found:
                if p.uid == SHELL_UID:
                    self.phone.am.table.procs.pop(p.pid, None)
        msg = "".join(f"pkill: kill {p.pid}: Operation not permitted\n" for p in denied)
        return err(msg, 1) if denied else out("", 0 if found else 1)

    # --- uiautomator2's AdbKeyboard ---------------------------------------------------------
    def _imes(self) -> list[str]:
        """Gboard, plus the AdbKeyboard once served with it (``--adb-keyboard``) or once its app
        (``com.github.uiautomator``) is installed, as ``u2.set_input_ime()`` installs it."""
        installed = self.adb_keyboard or self.phone.has_package(U2_APP)
        return [LATIN_IME, ADB_KEYBOARD] if installed else [LATIN_IME]

    def _ime(self, args: list[str]) -> ShellResult:
        sub = args[0] if args else ""
        rest = [a for a in args[1:] if not a.startswith("-")]
        if sub == "list":
            return out("".join(f"{i}\n" for i in self._imes()))
        if sub in ("enable", "disable", "set") and rest:
            ime = rest[0]
            if ime not in self._imes():
                return err(f"Unknown input method {ime} cannot be {sub}d for user #0\n", 255)
            if sub == "set":
                with self.lock:
                    self.phone.settings.put("secure", "default_input_method", ime)
                return out(f"Input method {ime} selected for user #0\n")
            if sub == "disable":
                with self.lock:
                    if self.phone.settings.get("secure", "default_input_method") == ime:
                        self.phone.settings.put("secure", "default_input_method", LATIN_IME)
            return out(f"Input method {ime}: {'already ' if sub == 'enable' else ''}{sub}d for user #0\n")
        return err("ime <command>:\n  list [-a] [-s]\n  enable [--user <USER_ID>] <ID>\n"
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
            receiving = (ADB_KEYBOARD in self._imes() and action.startswith("ADB_KEYBOARD_")
                         and self.phone.settings.get("secure", "default_input_method") == ADB_KEYBOARD)
            if not receiving:
                return out(head + "Broadcast completed: result=0\n")
            if action == "ADB_KEYBOARD_INPUT_TEXT":
                try:
                    text = base64.b64decode(extras.get("text", ""), validate=True).decode("utf-8")
                except (binascii.Error, UnicodeDecodeError):
                    return out(head + 'Broadcast completed: result=0, data="bad base64"\n')
                self.phone.do_type(text)
            elif action == "ADB_KEYBOARD_CLEAR_TEXT":
                self.clear_focused_field()
            elif action == "ADB_KEYBOARD_SMART_ENTER":
                self.phone.do_key("enter")
            elif action == "ADB_KEYBOARD_EDITOR_CODE":  # send_action: go/search/send/next/done/previous
                if extras.get("code", "") not in ("2", "3", "4", "5", "6", "7"):
                    return out(head + 'Broadcast completed: result=0, data="bad editor code"\n')
                self.phone.do_key("enter")  # the field's IME action is what Enter does in the sim's apps
            # ADB_KEYBOARD_HIDE and others: acknowledged; the sim's keyboard follows the focus
        return out(head + 'Broadcast completed: result=-1, data="success"\n')

    def clear_focused_field(self) -> None:
        with self.lock:
            self.phone.do_clear()  # the same clear as the in-process sim's (one action)
