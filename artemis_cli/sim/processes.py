"""Processes on the simulated phone: pids, uids and the ActivityManager lines they log.

The system processes (init, zygote64, system_server, System UI, the keyboard, the launcher...)
run from boot; an app's process starts on its first launch (a cold start, ``Start proc`` in the
system log) and dies on ``am force-stop``, a crash or an ANR's "Close app"; the next launch gets a
new, higher pid.  Pids are deterministic from the seed: app pids start a little above 2000 and
grow by a seeded step per process start, as on a phone where other processes start in between.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import TYPE_CHECKING

from artemis_cli.sim.activities import full_class, launch_activity
from artemis_cli.sim.logbuf import LogBuffers

if TYPE_CHECKING:
    from collections.abc import Callable

SYSTEM_UID, SHELL_UID, ROOT_UID = 1000, 2000, 0
SYSTEM_SERVER = "system_server"


@dataclass
class Proc:
    pid: int
    ppid: int
    uid: int
    name: str
    vsz: int  # KiB
    rss: int  # KiB
    wchan: str = "do_epoll_wait"
    state: str = "S"

    @property
    def user(self) -> str:
        if self.uid >= 10000:
            return f"u0_a{self.uid - 10000}"
        return {0: "root", 1000: "system", 1001: "radio", 1036: "logd", 2000: "shell", 1068: "secure_element",
                1041: "audioserver"}.get(self.uid, str(self.uid))


#: (name, uid, ppid name, pid offset from the boot base) of what runs from boot
_BOOT: tuple[tuple[str, int, str, int], ...] = (
    ("init", ROOT_UID, "", 1), ("[kthreadd]", ROOT_UID, "", 2), ("ueventd", ROOT_UID, "init", 180),
    ("logd", 1036, "init", 290), ("servicemanager", SYSTEM_UID, "init", 312),
    ("surfaceflinger", SYSTEM_UID, "init", 540), ("zygote64", ROOT_UID, "init", 611),
    ("adbd", SHELL_UID, "init", 702), ("audioserver", 1041, "init", 731),
    (SYSTEM_SERVER, SYSTEM_UID, "zygote64", 1108),
)
#: app processes that run from boot (after system_server)
BOOT_APPS = ("com.android.systemui", "com.google.android.inputmethod.latin", "com.android.phone",
             "com.android.launcher3")


class ProcessTable:
    """The running processes, by pid; ``app_uid`` gives each installed package its uid."""

    def __init__(self, seed: int | str, app_uid: Callable[[str], int]) -> None:
        self._rng = random.Random(f"artemis-sim-pids|{seed}")
        self.app_uid = app_uid
        self.procs: dict[int, Proc] = {}
        by_name: dict[str, int] = {}
        for name, uid, parent, pid in _BOOT:
            vsz = 0 if name.startswith("[") else self._rng.randrange(10_000_000, 12_000_000)
            self.procs[pid] = Proc(pid, by_name.get(parent, 0), uid, name, vsz,
                                   0 if vsz == 0 else self._rng.randrange(3_000, 40_000))
            by_name[name] = pid
        self.zygote = by_name["zygote64"]
        self.system_server = by_name[SYSTEM_SERVER]
        self.next_pid = 1400 + self._rng.randrange(0, 200)
        for pkg in BOOT_APPS:
            self.spawn(pkg)
        self.next_pid = max(self.next_pid, 2000 + self._rng.randrange(0, 900))

    def spawn(self, name: str) -> Proc:
        pid = self.next_pid
        self.next_pid += self._rng.randint(3, 47)
        uid = SYSTEM_UID if name == "com.android.phone" else self.app_uid(name)
        proc = Proc(pid, self.zygote, uid, name, self._rng.randrange(14_000_000, 16_500_000),
                    self._rng.randrange(90_000, 260_000))
        self.procs[pid] = proc
        return proc

    def pid_of(self, name: str) -> int | None:
        return next((p.pid for p in self.procs.values() if p.name == name), None)

    def kill(self, name: str) -> int | None:
        pid = self.pid_of(name)
        if pid is not None:
            del self.procs[pid]
        return pid

    def listing(self) -> list[Proc]:
        return sorted(self.procs.values(), key=lambda p: p.pid)


class ActivityManager:
    """Process lifecycle with the lines ActivityManager / ActivityTaskManager / the app log."""

    def __init__(self, seed: int | str, logs: LogBuffers, app_uid: Callable[[str], int]) -> None:
        self.logs = logs
        self.table = ProcessTable(seed, app_uid)
        self._rng = random.Random(f"artemis-sim-am|{seed}")
        self._boot_log()

    def _boot_log(self) -> None:
        ss = self.table.system_server
        w = self.logs.write
        w("main", "I", "Zygote", f"System server process {ss} has been created",
          self.table.zygote, uid=0)
        w("system", "I", "SystemServer", "Entered the Android system server!", ss)
        for pkg in BOOT_APPS:
            pid = self.table.pid_of(pkg)
            if pid is not None and pkg != "com.android.phone":
                w("system", "I", "ActivityManager", f"Start proc {pid}:{pkg}/{_uid_name(self.table.app_uid(pkg))} "
                  f"for {'top-activity' if pkg == 'com.android.launcher3' else 'service'} "
                  f"{{{pkg}/{full_class(pkg, launch_activity(pkg))}}}", ss)
        w("events", "I", "boot_progress_enable_screen", str(18000 + self._rng.randrange(0, 4000)), ss)
        w("system", "I", "ActivityManager", "System now ready", ss)

    def pid(self, pkg: str) -> int | None:
        return self.table.pid_of(pkg)

    def ensure_running(self, pkg: str, reason: str = "top-activity") -> tuple[int, bool]:
        """The pid of ``pkg``'s process, starting it (a cold start) if needed: (pid, cold)."""
        pid = self.table.pid_of(pkg)
        if pid is not None:
            return pid, False
        proc = self.table.spawn(pkg)
        ss = self.table.system_server
        cmp = f"{pkg}/{full_class(pkg, launch_activity(pkg))}"
        self.logs.write("system", "I", "ActivityManager",
                        f"Start proc {proc.pid}:{pkg}/{_uid_name(proc.uid)} for {reason} {{{cmp}}}", ss)
        self.logs.write("events", "I", "am_proc_start",
                        f"[0,{proc.pid},{proc.uid},{pkg},{reason},{{{cmp}}}]", ss)
        self.logs.write("main", "I", "Zygote", f"Process {proc.pid} created for {pkg}", self.table.zygote, uid=0)
        self.logs.write("main", "I", _short(pkg), "Late-enabling -Xcheck:jni", proc.pid, uid=proc.uid)
        self.logs.write("main", "D", "CompatibilityChangeReporter",
                        f"Compat change id reported: 171979766; UID {proc.uid}; state: ENABLED", proc.pid,
                        uid=proc.uid)
        return proc.pid, True

    def launched(self, pkg: str, caller_uid: int) -> None:
        """An activity of ``pkg`` came to the front (``am start``, a launcher icon, an app's link)."""
        ss = self.table.system_server
        self.logs.write("system", "I", "ActivityTaskManager",
                        "START u0 {act=android.intent.action.MAIN cat=[android.intent.category.LAUNCHER] "
                        f"flg=0x10000000 cmp={pkg}/{launch_activity(pkg)}}} with LAUNCH_MULTIPLE from uid {caller_uid} "
                        "(BAL_ALLOW_PERMISSION) result code=0", ss)
        _, cold = self.ensure_running(pkg)
        took = self._rng.randrange(280, 900) if cold else self._rng.randrange(60, 240)
        self.logs.write("system", "I", "ActivityTaskManager", f"Displayed {pkg}/{launch_activity(pkg)} for user 0: "
                        f"+{took}ms", ss)

    def force_stop(self, pkg: str) -> None:
        pid = self.table.pid_of(pkg)
        if pid is None:
            return
        ss = self.table.system_server
        self.logs.write("system", "I", "ActivityManager", f"Force stopping {pkg} appid={self.table.app_uid(pkg)} "
                        "user=0: from pid 0", ss)
        self.logs.write("system", "I", "ActivityManager", f"Killing {pid}:{pkg}/{_uid_name(self.table.app_uid(pkg))}"
                        " (adj 0): stop " + pkg + " due to from pid 0", ss)
        self.table.kill(pkg)
        self.logs.write("system", "I", "ActivityManager", f"Process {pkg} (pid {pid}) has died: fg  TOP ", ss)

    def died(self, pkg: str) -> int | None:
        """The process of ``pkg`` is gone (after a crash or "Close app"): the system log says so."""
        pid = self.table.kill(pkg)
        if pid is not None:
            self.logs.write("main", "I", "Process", f"Sending signal. PID: {pid} SIG: 9", pid,
                            uid=self.table.app_uid(pkg))
            self.logs.write("system", "I", "ActivityManager", f"Process {pkg} (pid {pid}) has died: fg  TOP ",
                            self.table.system_server)
        return pid

    def chatter(self, pkg: str) -> None:
        """Now and then, a line from the foreground app (a phone's logs are never quiet)."""
        pid = self.table.pid_of(pkg)
        if pid is None or self._rng.random() >= 0.35:
            return
        tag, prio, msg = self._rng.choice(_CHATTER)
        self.logs.write("main", prio, tag, msg, pid, uid=self.table.app_uid(pkg))


_CHATTER = (
    ("ViewRootImpl", "D", "dispatchPointerEvent handled=true"),
    ("InsetsController", "D", "hide(ime(), fromIme=false)"),
    ("ProfileInstaller", "D", "Installing profile for " "app"),
    ("OpenGLRenderer", "D", "endAllActiveAnimators on 0xb400007b6c2a1e00 (RippleDrawable) with handle 0x7b4c"),
    ("ImeTracker", "I", "onCancelled at PHASE_CLIENT_ALREADY_HIDDEN"),
    ("Choreographer", "I", "Skipped 31 frames!  The application may be doing too much work on its main thread."),
)


def _uid_name(uid: int) -> str:
    """ActivityManager's short uid name: ``u0a123`` for app uid 10123."""
    return f"u0a{uid - 10000}" if uid >= 10000 else str(uid)


def _short(pkg: str) -> str:
    """The tag an app's runtime logs under before it sets its name: the last 15 characters."""
    return pkg[-15:]
