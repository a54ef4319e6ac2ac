"""``dumpsys SERVICE …``: the dispatch and the services about apps (activity, package, meminfo).

The services about the screen (window, input_method, power, display, battery, SurfaceFlinger)
are printed by ``shell_device.DeviceCommands``; they are registered here, in :attr:`services`,
so a new service is one entry.  A service the phone lacks: ``Can't find service: X`` on stderr,
exit 0, as ``dumpsys`` does (WORLD.md §4).
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from typing import TYPE_CHECKING

from artemis_cli.sim import packages as P
from artemis_cli.sim.shell import Command, ShellResult, err, out
from artemis_cli.sim.worlds import LAUNCHER

if TYPE_CHECKING:
    from artemis_cli.sim.phone import SimPhone
    from artemis_cli.sim.shell_device import DeviceCommands

Service = Callable[[list[str]], ShellResult]


def _uid_name(uid: int) -> str:
    """A process record's user: ``u0a123`` for app uid 10123, the number for a system uid."""
    return f"u0a{uid - 10000}" if uid >= 10000 else str(uid)


def _hex(*parts: str) -> str:
    return hashlib.md5("|".join(parts).encode()).hexdigest()[:7]


class DumpsysCommands:
    def __init__(self, phone: SimPhone, device: DeviceCommands) -> None:
        self.phone = phone
        self.device = device
        self.services: dict[str, Service] = {
            "window": lambda a: out(device._window()),
            "input_method": lambda a: out(device._input_method()),
            "battery": lambda a: out("Current Battery Service state:\n  AC powered: true\n  level: 100\n"
                                     "  scale: 100\n"),
            "power": lambda a: out(device._power()),
            "display": lambda a: out(device._display()),
            "input": lambda a: out(phone.display.dumpsys_input(phone.settings)),
            "SurfaceFlinger": self.surface_flinger,
            "activity": self.activity,
            "package": self.package,
            "meminfo": self.meminfo,
        }

    def table(self) -> dict[str, Command]:
        return {"dumpsys": self.dumpsys}

    def dumpsys(self, args: list[str], _: bytes) -> ShellResult:
        if not args:
            return out("")
        if args[0] == "-l":
            return out("Currently running services:\n" + "".join(f"  {s}\n" for s in sorted(self.services)))
        service = self.services.get(args[0])
        if service is None:
            return err(f"Can't find service: {args[0]}\n", 0)
        return service(args[1:])

    def surface_flinger(self, args: list[str]) -> ShellResult:
        from artemis_cli.sim.shell_device import DISPLAY_ID

        if "--display-id" in args:
            return out(f'Display {DISPLAY_ID} (HWC display 0): port=0 pnpId=GGL displayName="Artemis Sim"\n')
        return out("")

    # -- processes ---------------------------------------------------------------------------
    def pid(self, package: str) -> int | None:
        """The pid of ``package``'s process (the process table, sim/processes.py), None when it
        is not running."""
        return self.phone.am.pid(package)

    def _task(self, package: str) -> int:
        return 1 if package == LAUNCHER else 10 + self.phone.packages().index(package)

    def _record(self, package: str) -> str:
        comp = self.phone.activity_of(package)
        return f"ActivityRecord{{{_hex(comp)} u0 {comp} t{self._task(package)}}}"

    # -- activity ----------------------------------------------------------------------------
    def activity(self, args: list[str]) -> ShellResult:
        what = args[0] if args else "activities"
        if what in ("activities", "a"):
            return out(self._activities())
        if what == "top":
            return out(self._top())
        if what in ("processes", "p"):
            return out(self._processes())
        if what in ("-h", "help"):
            return out("Activity manager dump options:\n  activities: activity stack state\n"
                       "  top: the top activity\n  processes: process state\n")
        # ``dumpsys activity PKG|COMPONENT``: that app's activities, or nothing
        pkg = what.split("/", 1)[0]
        if self.pid(pkg) is not None:
            return out(self._top(pkg))
        return out(f"No activity found for: {what}\n" if "." in what else f"Bad activity command, or no activities "
                   f"match: {what}\n  Use -h for help.\n")

    def _running_order(self) -> list[str]:
        fg = self.phone.current_package()
        others = [p for p in self.phone.activities.top if p not in (fg, LAUNCHER) and p in self.phone.apps
                  and self.pid(p) is not None]
        order = [fg, *others]
        if LAUNCHER not in order:
            order.append(LAUNCHER)
        return order

    def _activities(self) -> str:
        fg = self.phone.current_package()
        lines = ["ACTIVITY MANAGER ACTIVITIES (dumpsys activity activities)",
                 "Display #0 (activities from top to bottom):"]
        for pkg in self._running_order():
            top = pkg == fg
            kind = "home" if pkg == LAUNCHER else "standard"
            rec = self._record(pkg)
            lines += [f"  * Task{{{_hex('task', pkg)} #{self._task(pkg)} type={kind} A={P.uid_of(pkg)}:{pkg} U=0 "
                      f"visible={str(top).lower()} visibleRequested={str(top).lower()} mode=fullscreen "
                      "translucent=false sz=1}",
                      f"    mResumedActivity: {rec if top else 'null'}",
                      "    isSleeping=false"]
            if top:
                lines.append(f"    topResumedActivity={rec}")
            pid = self.pid(pkg)
            lines += [f"    * Hist  #0: {rec}",
                      f"      packageName={pkg} processName={pkg}",
                      "      launchedFromUid=2000 launchedFromPackage=com.android.shell userId=0",
                      f"      app=ProcessRecord{{{_hex('proc', pkg)} {pid}:{pkg}/{_uid_name(P.uid_of(pkg))}}}"
                      if pid else "      app=null",
                      f"      state={'RESUMED' if top else 'STOPPED'} stopped={str(not top).lower()} "
                      "delayedResume=false finishing=false"]
        rec = self._record(fg)
        lines += ["", "  Resumed activities in task display areas (from top to bottom):",
                  f"    Resumed: {rec}", "", f"  ResumedActivity: {rec}", ""]
        return "\n".join(lines) + "\n"

    def _top(self, package: str | None = None) -> str:
        pkg = package or self.phone.current_package()
        comp = self.phone.activity_of(pkg)
        pid = self.pid(pkg)
        return (f"TASK {P.uid_of(pkg)}:{pkg} id={self._task(pkg)} userId=0\n"
                f"  ACTIVITY {comp} {_hex(comp)} pid={pid if pid else '(not running)'}\n"
                f"    Local Activity {_hex('local', comp)} State:\n"
                f"      mResumed={str(pkg == self.phone.current_package()).lower()} mStopped=false mFinished=false\n"
                f"      mIsChangingConfigurations=false\n      mCurrentConfig={{1.0 ?mcc?mnc [en_US] ldltr sw411dp "
                f"w411dp h842dp 420dpi nrml port finger -keyb/v/h -nav/h}}\n")

    def _processes(self) -> str:
        lines = ["ACTIVITY MANAGER RUNNING PROCESSES (dumpsys activity processes)", "  All known processes:"]
        for pkg in self._running_order():
            pid = self.pid(pkg)
            if pid:
                lines.append(f"  *APP* UID {P.uid_of(pkg)} ProcessRecord{{{_hex('proc', pkg)} {pid}:{pkg}/"
                             f"u0a{P.uid_of(pkg) % 10000}}}")
        return "\n".join(lines) + "\n"

    # -- package -----------------------------------------------------------------------------
    def package(self, args: list[str]) -> ShellResult:
        names = [a for a in args if not a.startswith("-")]
        if names and names[0] in ("packages", "p") and len(names) > 1:
            names = names[1:]
        pkgs = self.phone.packages() if not names else [n for n in names[:1] if n in self.phone.packages()
                                                        or n in P.CORE_PACKAGES]
        if not pkgs:
            return out("")
        return out("Packages:\n" + "".join(self._package(p) for p in pkgs))

    def _package(self, pkg: str) -> str:
        system = P.is_system(pkg)
        name, code = P.version_of(pkg)
        path = P.apk_path(pkg)
        code_path = path.rsplit("/", 1)[0]
        state = self.phone.pm_state
        flags = "[ SYSTEM HAS_CODE ALLOW_CLEAR_USER_DATA ]" if system else "[ HAS_CODE ALLOW_CLEAR_USER_DATA ]"
        when = state.install_time(pkg)
        perms = P.permissions_of(pkg)
        install = [p for p, runtime in perms if not runtime]
        runtime = [p for p, rt in perms if rt]
        enabled = 3 if pkg in state.disabled else 0
        lines = [f"  Package [{pkg}] ({_hex('pkg', pkg)}):",
                 f"    appId={P.uid_of(pkg)}",
                 f"    pkg=Package{{{_hex('pkgobj', pkg)} {pkg}}}",
                 f"    codePath={code_path}", f"    resourcePath={code_path}",
                 f"    legacyNativeLibraryDir={code_path}/lib",
                 "    extractNativeLibs=false", "    primaryCpuAbi=arm64-v8a", "    secondaryCpuAbi=null",
                 "    cpuAbiOverride=null",
                 f"    versionCode={code} minSdk=26 targetSdk=34",
                 "    minExtensionVersions=[]",
                 f"    versionName={name}",
                 "    usesNonSdkApi=false", "    splits=[base]", "    apkSigningVersion=3",
                 f"    flags={flags}",
                 "    privateFlags=[ PRIVATE_FLAG_ACTIVITIES_RESIZE_MODE_RESIZEABLE ALLOW_AUDIO_PLAYBACK_CAPTURE ]",
                 "    forceQueryable=false",
                 f"    dataDir=/data/user/0/{pkg}",
                 "    supportsScreens=[small, medium, large, xlarge, resizeable, anyDensity]",
                 f"    timeStamp={when}", f"    lastUpdateTime={when}",
                 f"    installerPackageName={'null' if system else 'com.android.shell'}",
                 f"    signatures=PackageSignatures{{{_hex('sig', pkg)} version:3, signatures:[{_hex('cert', pkg)}], "
                 "past signatures:[]}",
                 "    installPermissionsFixed=true",
                 f"    pkgFlags={flags}"]
        if perms:
            lines += ["    requested permissions:", *[f"      {p}" for p, _ in perms]]
        if install:
            lines += ["    install permissions:", *[f"      {p}: granted=true" for p in install]]
        lines += [f"    User 0: ceDataInode={int(_hex('inode', pkg), 16) % 100000} installed=true hidden=false "
                  f"suspended=false distractionFlags=0 stopped={str(self.pid(pkg) is None).lower()} "
                  f"notLaunched=false enabled={enabled} instant=false virtual=false quarantined=false",
                  f"      firstInstallTime={when}", "      uninstallReason=0"]
        if runtime:
            lines.append("      runtime permissions:")
            for p in runtime:
                granted = state.is_granted(pkg, p)
                lines.append(f"        {p}: granted={str(granted).lower()}, flags=[ USER_SENSITIVE_WHEN_GRANTED|"
                             "USER_SENSITIVE_WHEN_DENIED]")
        lines.append("      enabledComponents:\n      disabledComponents:\n")
        return "\n".join(lines)

    # -- meminfo -----------------------------------------------------------------------------
    def meminfo(self, args: list[str]) -> ShellResult:
        names = [a for a in args if not a.startswith("-")]
        uptime = self.phone.clock.epoch_s() % 100000 * 1000 + 1234567
        head = f"Applications Memory Usage (in Kilobytes):\nUptime: {uptime} Realtime: {uptime}\n\n"
        if not names:
            rows = []
            for pkg in self._running_order():
                pid = self.pid(pkg)
                if pid:
                    rows.append(f"{self._pss(pkg):>11,}K: {pkg} (pid {pid}{' / activities' if pkg else ''})")
            total = sum(self._pss(p) for p in self._running_order() if self.pid(p))
            return out(head + "Total PSS by process:\n" + "\n".join(rows) + "\n\n"
                       f"Total RAM: 7,869,532K (status normal)\n Free RAM: {5_200_000 - total:,}K\n"
                       f" Used RAM: {2_100_000 + total:,}K\n Lost RAM:   412,236K\n")
        target = names[0]
        pkg = target if not target.isdigit() else next(
            (p for p in self._running_order() if str(self.pid(p)) == target), "")
        pid = self.pid(pkg) if pkg else None
        if pid is None:
            return out(f"No process found for: {target}\n")
        return out(head + self._meminfo(pkg, pid))

    def _pss(self, pkg: str) -> int:
        return 28_000 + int(_hex("pss", pkg, str(self.phone.actions // 5)), 16) % 40_000

    def _meminfo(self, pkg: str, pid: int) -> str:
        """One process's ``dumpsys meminfo`` (Android 14's table; uiautomator2's perf reads TOTAL)."""
        total = self._pss(pkg)
        native, dalvik = total * 32 // 100, total * 17 // 100
        code = total * 24 // 100
        other = total - native - dalvik - code
        rss = total * 36 // 10
        return (f"** MEMINFO in pid {pid} [{pkg}] **\n"
                "                   Pss  Private  Private  SwapPss      Rss     Heap     Heap     Heap\n"
                "                 Total    Dirty    Clean    Dirty    Total     Size    Alloc     Free\n"
                "                ------   ------   ------   ------   ------   ------   ------   ------\n"
                f"  Native Heap {native:>9} {native - 60:>8} {0:>8} {25:>8} {native + 2000:>8} {native + 6000:>8}"
                f" {native + 1400:>8} {4137:>8}\n"
                f"  Dalvik Heap {dalvik:>9} {dalvik - 100:>8} {0:>8} {17:>8} {dalvik + 4400:>8} {dalvik * 2:>8}"
                f" {dalvik:>8} {dalvik:>8}\n"
                f"        .so mmap {code // 2:>6} {436:>8} {code // 4:>8} {38:>8} {code * 4:>8}\n"
                f"       .dex mmap {code - code // 2:>6} {28:>8} {code // 3:>8} {0:>8} {code:>8}\n"
                f"        Unknown {other:>7} {other - 12:>8} {0:>8} {10:>8} {other * 2:>8}\n"
                f"          TOTAL {total:>7} {total * 6 // 10:>8} {total * 2 // 10:>8} {90:>8} {rss:>8}"
                f" {native + dalvik * 2 + 6000:>8} {native + dalvik + 1400:>8} {dalvik + 4137:>8}\n\n"
                " App Summary\n                       Pss(KB)                        Rss(KB)\n"
                "                        ------                         ------\n"
                f"           Java Heap: {dalvik:>8} {dalvik + 4400:>30}\n"
                f"         Native Heap: {native:>8} {native + 2000:>30}\n"
                f"                Code: {code:>8} {code * 5:>30}\n"
                f"               Stack: {800:>8} {808:>30}\n"
                f"            Graphics: {0:>8} {0:>30}\n"
                f"       Private Other: {other:>8}\n"
                f"              System: {max(0, total - native - dalvik - code - other - 800):>8}\n\n"
                f"           TOTAL PSS: {total:>8}            TOTAL RSS: {rss:>8}       TOTAL SWAP PSS: {90:>8}\n\n"
                " Objects\n"
                f"               Views: {45:>8}         ViewRootImpl: {1:>8}\n"
                f"         AppContexts: {5:>8}           Activities: {1:>8}\n")
