"""``pm`` and ``cmd`` (``cmd package`` is ``pm``: on Android ``pm`` is a script running
``cmd package "$@"``), in Android 14's formats (WORLD.md §4).

A subcommand the sim does not have answers as PackageManagerShellCommand does: ``Unknown
command: X`` on stdout, exit 255.  ``cmd`` with a service the phone lacks: ``cmd: Can't find
service: X`` on stderr, exit 20.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from artemis_cli.sim import packages as P
from artemis_cli.sim.activities import activity_of, full_class, launch_activity
from artemis_cli.sim.shell import Command, ShellResult, err, out
from artemis_cli.sim.vfs import FsError
from artemis_cli.sim.worlds import LAUNCHER

if TYPE_CHECKING:
    from artemis_cli.sim.phone import SimPhone
    from artemis_cli.sim.shell import Shell

FEATURES = ("android.hardware.audio.output", "android.hardware.bluetooth", "android.hardware.camera",
            "android.hardware.camera.any", "android.hardware.faketouch", "android.hardware.location",
            "android.hardware.location.gps", "android.hardware.screen.landscape", "android.hardware.screen.portrait",
            "android.hardware.sensor.accelerometer", "android.hardware.telephony", "android.hardware.touchscreen",
            "android.hardware.touchscreen.multitouch", "android.hardware.wifi", "android.software.app_widgets",
            "android.software.home_screen", "android.software.input_methods", "android.software.webview")
#: Services a phone has whose subcommands the sim does not implement: "Unknown command: X".
OTHER_SERVICES = ("appops", "statusbar", "notification", "locale", "uimode", "power", "battery", "wifi",
                  "connectivity", "alarm", "jobscheduler", "role", "media_session", "overlay", "device_config")
_PM_HELP = ("Package manager (package) commands:\n  help\n    Print this help text.\n\n"
            "  path [--user USER_ID] PACKAGE\n    Print the path to the .apk of the given PACKAGE.\n\n"
            "  dump PACKAGE\n    Print various system state associated with the given PACKAGE.\n\n"
            "  list features\n    Prints all features of the system.\n\n"
            "  list packages [-f] [-d] [-e] [-s] [-3] [-i] [-l] [-u] [-U]\n      [--show-versioncode] [--apex-only] "
            "[--uid UID] [--user USER_ID] [FILTER]\n    Prints all packages; optionally only those whose name "
            "contains\n    the text in FILTER.\n\n"
            "  query-activities [--brief] [--components] [--query-flags FLAGS]\n       [--user USER_ID] INTENT\n\n"
            "  resolve-activity [--brief] [--components] [--query-flags FLAGS]\n       [--user USER_ID] INTENT\n\n"
            "  install [-rtfdg] [-i PACKAGE] [--user USER_ID|all|current] [PATH|-]\n\n"
            "  uninstall [-k] [--user USER_ID] [--versionCode VERSION_CODE]\n       PACKAGE [SPLIT...]\n\n"
            "  clear [--user USER_ID] [--cache-only] PACKAGE\n    Deletes data associated with a package.\n\n"
            "  enable [--user USER_ID] PACKAGE_OR_COMPONENT\n  disable-user [--user USER_ID] PACKAGE_OR_COMPONENT\n\n"
            "  grant [--user USER_ID] [--all-permissions] PACKAGE PERMISSION\n"
            "  revoke [--user USER_ID] [--all-permissions] PACKAGE PERMISSION\n")
_LIST_FLAGS = set("fdes3iluU")


def _exception(cmd: str, text: str) -> ShellResult:
    """A Java exception out of a shell command (BasicShellCommandHandler): stderr, exit 255."""
    return err(f"Exception occurred while executing '{cmd}':\n{text}\n", 255)


def _drop_user(args: list[str]) -> tuple[list[str], str | None]:
    """``args`` without ``--user N`` and the user it named."""
    rest, user = [], None
    i = 0
    while i < len(args):
        if args[i] == "--user" and i + 1 < len(args):
            user = args[i + 1]
            i += 2
        else:
            rest.append(args[i])
            i += 1
    return rest, user


class PackageCommands:
    def __init__(self, phone: SimPhone, shell: Shell) -> None:
        self.phone = phone
        self.shell = shell

    def table(self) -> dict[str, Command]:
        return {"pm": self.pm, "cmd": self.cmd}

    def installed(self) -> list[str]:
        return [*self.phone.packages(), *[p for p in P.CORE_PACKAGES if p not in self.phone.apps]]

    # -- cmd -------------------------------------------------------------------------------
    def cmd(self, args: list[str], stdin: bytes) -> ShellResult:
        if not args:
            return err("cmd: No service specified; use -l to list all services\n", 20)
        service, rest = args[0], args[1:]
        if service == "-l":
            names = sorted(["package", "activity", "settings", "input", "window", "display", *OTHER_SERVICES])
            return out("Currently running services:\n" + "".join(f"  {n}\n" for n in names))
        alias = {"package": "pm", "activity": "am", "settings": "settings", "input": "input", "window": "wm"}
        if service in alias:
            return self.shell.commands[alias[service]](rest, stdin)
        if service == "display":
            return self.display(rest)
        if service in OTHER_SERVICES:
            return out(f"Unknown command: {rest[0] if rest else ''}\n" if rest else "", 255)
        return err(f"cmd: Can't find service: {service}\n", 20)

    def display(self, args: list[str]) -> ShellResult:
        if args[:1] != ["get-displays"]:
            return out(f"Unknown command: {args[0]}\n" if args else "Display manager commands:\n  help\n"
                       "  get-displays [-c|--category CATEGORY] [-i|--ids-only]\n", 255)
        from artemis_cli.sim.shell_device import DISPLAY_ID

        if "-i" in args or "--ids-only" in args:
            return out("0\n")
        w, h = self.phone.width, self.phone.height
        state = "ON" if self.phone.screen_on else "OFF"
        return out(f'Display id 0: DisplayInfo{{"Built-in Screen", displayId 0, displayGroupId 0, FLAG_SECURE, '
                   f'FLAG_SUPPORTS_PROTECTED_BUFFERS, FLAG_TRUSTED, real {w} x {h}, largest app {h} x {h}, '
                   f'smallest app {w} x {w}, appVsyncOff 1000000, presDeadline 16666666, mode 1 {w} x {h} @ 60.0, '
                   f'defaultMode 1, rotation 0, state {state}, density 420 (420.0 x 420.0) dpi, '
                   f'type INTERNAL, uniqueId "local:{DISPLAY_ID}", app {w} x {h}, layerStack 0}}\n')

    # -- pm --------------------------------------------------------------------------------
    def pm(self, args: list[str], stdin: bytes) -> ShellResult:
        if not args or args[0] in ("help", "-h"):
            return out(_PM_HELP, 255 if not args else 0)
        sub, rest = args[0], args[1:]
        handlers = {"list": self.list_, "path": self.path, "install": self.install, "uninstall": self.uninstall,
                    "clear": self.clear, "dump": self.dump, "grant": self.grant, "revoke": self.grant,
                    "enable": self.enable, "disable-user": self.enable, "disable": self.enable,
                    "query-activities": self.query_activities, "resolve-activity": self.resolve_activity}
        handler = handlers.get(sub)
        if handler is None:
            return out(f"Unknown command: {sub}\n", 255)
        if sub in ("grant", "revoke", "enable", "disable-user", "disable"):
            return handler([sub, *rest])
        return handler(rest)

    def list_(self, args: list[str]) -> ShellResult:
        what = args[0] if args else ""
        if what == "features":
            return out("".join(f"feature:{f}\n" for f in FEATURES) + "feature:reqGlEsVersion=0x30002\n")
        if what not in ("packages", "package"):
            if what in ("permission-groups", "permissions", "instrumentation", "libraries", "users"):
                return out("")
            return err(f"Error: unknown list type '{what}'\n", 255)
        flags: set[str] = set()
        version = False
        opts, _ = _drop_user(args[1:])
        filt = ""
        for a in opts:
            if a == "--show-versioncode":
                version = True
            elif a.startswith("--"):
                if a not in ("--apex-only", "--factory-only"):
                    return err(f"Error: Unknown option: {a}\n", 255)
            elif a.startswith("-") and len(a) > 1:
                bad = [c for c in a[1:] if c not in _LIST_FLAGS]
                if bad:
                    return err(f"Error: Unknown option: -{bad[0]}\n", 255)
                flags.update(a[1:])
            else:
                filt = a
        state = self.phone.pm_state
        lines = []
        for p in self.installed():
            system = P.is_system(p)
            if ("s" in flags and not system) or ("3" in flags and system):
                continue
            disabled = p in state.disabled
            if ("d" in flags and not disabled) or ("e" in flags and disabled):
                continue
            if filt and filt not in p:
                continue
            line = "package:" + (f"{P.apk_path(p)}=" if "f" in flags else "") + p
            if version:
                line += f" versionCode:{P.version_of(p)[1]}"
            if "i" in flags:
                line += f"  installer={'null' if system else 'com.android.shell'}"
            if "U" in flags:
                line += f" uid:{P.uid_of(p)}"
            lines.append(line + "\n")
        return out("".join(lines))

    def path(self, args: list[str]) -> ShellResult:
        rest, _ = _drop_user(args)
        if len(rest) != 1:
            return err("Error: no package specified\n", 255)
        if rest[0] not in self.installed():
            return out("", 1)
        return out(f"package:{P.apk_path(rest[0])}\n")

    def install(self, args: list[str]) -> ShellResult:
        rest, _ = _drop_user(args)
        paths = []
        i = 0
        while i < len(rest):
            a = rest[i]
            if a in ("-i", "--installer", "-S", "--install-reason", "-p"):
                i += 2
                continue
            if a.startswith("-") and a != "-":
                if not all(c in "rtfdgl" for c in a[1:]) and not a.startswith("--"):
                    return err(f"Error: Unknown option: {a}\n", 255)
            else:
                paths.append(a)
            i += 1
        if not paths or paths[0] == "-":
            return err("Error: must either specify a package size or an APK file\n", 1)
        path = paths[0]
        try:
            data = self.phone.fs.read_file(path)
        except FsError:
            return err(f"Error: Unable to open file: {path}\nConsider using a file under /data/local/tmp/\n"
                       f"Error: Can't open file: {path}\n", 1)
        try:
            package = P.package_of_apk(data, path)
        except P.InstallError as e:
            return out(f"Failure [{e}]\n", 1)
        if package in self.phone.apps and P.is_system(package):
            return out(f"Failure [INSTALL_FAILED_UPDATE_INCOMPATIBLE: Existing package {package} signatures do not "
                       "match newer version; ignoring!]\n", 1)
        P.install(self.phone, package)
        if any(a.startswith("-") and not a.startswith("--") and "g" in a for a in rest):
            self.phone.pm_state.granted[package] = {perm for perm, runtime in P.permissions_of(package) if runtime}
        return out("Success\n")

    def uninstall(self, args: list[str]) -> ShellResult:
        rest, user = _drop_user(args)
        names = [a for a in rest if not a.startswith("-")]
        if not names:
            return err("Error: package name not specified\n", 255)
        pkg = names[0]
        # An unknown package, a system app without ``--user 0`` (it cannot leave the system
        # image) and the home app all fail alike on Android 14.
        if pkg not in self.phone.apps or pkg == LAUNCHER or (P.is_system(pkg) and user is None):
            return out("Failure [DELETE_FAILED_INTERNAL_ERROR]\n", 1)
        P.uninstall(self.phone, pkg)
        return out("Success\n")

    def clear(self, args: list[str]) -> ShellResult:
        rest, _ = _drop_user(args)
        names = [a for a in rest if not a.startswith("-")]
        if not names:
            return err("Error: no package specified\n", 255)
        if names[0] not in self.phone.apps:
            return err("Failed\n", 1)
        P.clear(self.phone, names[0])
        return out("Success\n")

    def dump(self, args: list[str]) -> ShellResult:
        if not args:
            return err("Error: no package specified\n", 255)
        return self.shell.commands["dumpsys"](["package", args[0]], b"")

    def grant(self, args: list[str]) -> ShellResult:
        verb, rest = args[0], _drop_user(args[1:])[0]
        names = [a for a in rest if not a.startswith("-")]
        if len(names) < 2:
            return _exception(verb, "java.lang.IllegalArgumentException: Error: no permission specified")
        pkg, perm = names[0], names[1]
        if pkg not in self.installed():
            return _exception(verb, f"java.lang.IllegalArgumentException: Unknown package: {pkg}")
        requested = dict(P.permissions_of(pkg))
        if perm not in requested:
            return _exception(verb, f"java.lang.SecurityException: Package {pkg} has not requested permission {perm}")
        if not requested[perm]:
            return _exception(verb, f"java.lang.SecurityException: Permission {perm} requested by {pkg} is not a "
                                    "changeable permission type")
        hook = getattr(self.phone, "grant" if verb == "grant" else "revoke", None)
        if callable(hook):  # the phone's own permission state (runtime-permission dialogs)
            hook(pkg, perm)
        granted = self.phone.pm_state.granted.setdefault(pkg, set())
        if verb == "grant":
            granted.add(perm)
        else:
            granted.discard(perm)
            self.phone.force_stop(pkg)  # revoking a runtime permission kills the app, as on a phone
        return out("")

    def enable(self, args: list[str]) -> ShellResult:
        verb, rest = args[0], [a for a in _drop_user(args[1:])[0] if not a.startswith("-")]
        if not rest:
            return err("Error: no package or component specified\n", 255)
        pkg = rest[0].split("/", 1)[0]
        if pkg not in self.installed():
            return _exception(verb, f"java.lang.IllegalArgumentException: Unknown package: {pkg}")
        state = self.phone.pm_state
        if verb == "enable":
            state.disabled.discard(pkg)
            word = "enabled"
        else:
            state.disabled.add(pkg)
            self.phone.force_stop(pkg)
            word = "disabled-user" if verb == "disable-user" else "disabled"
        return out(f"Package {pkg} new state: {word}\n")

    # -- intents ---------------------------------------------------------------------------
    def _intent(self, args: list[str]) -> tuple[set[str], str, list[str], str]:
        """(flags, action, categories, package) of ``[--brief] [--components] -a A -c C [PKG]``."""
        flags: set[str] = set()
        action, cats, pkg = "", [], ""
        i = 0
        while i < len(args):
            a = args[i]
            if a in ("--brief", "--components"):
                flags.add(a)
            elif a in ("-a", "-c", "-n", "--user", "--query-flags", "-d", "-t") and i + 1 < len(args):
                if a == "-a":
                    action = args[i + 1]
                elif a == "-c":
                    cats.append(args[i + 1])
                elif a == "-n":
                    pkg = args[i + 1].split("/", 1)[0]
                i += 1
            elif not a.startswith("-"):
                pkg = a
            i += 1
        return flags, action, cats, pkg

    def _matches(self, action: str, cats: list[str], pkg: str) -> list[str]:
        """Packages whose launch activity matches the intent (MAIN + LAUNCHER, or HOME)."""
        if action not in ("", "android.intent.action.MAIN"):
            return []
        candidates = [p for p in self.phone.packages() if p not in self.phone.pm_state.disabled]
        if pkg:
            candidates = [p for p in candidates if p == pkg]
        if "android.intent.category.HOME" in cats:
            return [p for p in candidates if p == LAUNCHER]
        if any(c not in ("android.intent.category.LAUNCHER", "android.intent.category.DEFAULT") for c in cats):
            return []
        if not cats and not action and not pkg:
            return []
        return [p for p in candidates if p != LAUNCHER]

    def _resolve_info(self, pkg: str, indent: str) -> str:
        """One ResolveInfo as ``ResolveInfo.dump`` prints it (the lines tools read)."""
        act = launch_activity(pkg)
        home = pkg == LAUNCHER
        cls = full_class(pkg, act)
        i2, i3 = indent + "  ", indent + "    "
        return (f"{indent}priority=0 preferredOrder=0 match=0x108000 specificIndex=-1 isDefault={str(home).lower()}\n"
                f"{indent}ActivityInfo:\n{i2}name={cls}\n{i2}packageName={pkg}\n"
                f"{i2}enabled=true exported=true directBootAware={str(P.is_system(pkg)).lower()}\n"
                f"{i2}taskAffinity={pkg} targetActivity=null persistableMode=PERSIST_ROOT_ONLY\n"
                f"{i2}launchMode={2 if home else 0} flags=0x{'3' if home else '2'}e30200 privateFlags=0x0 "
                "theme=0x7f1502ae\n"
                f"{i2}screenOrientation=-1 configChanges=0x40003fb3 softInputMode=0x0\n"
                f"{i2}lockTaskLaunchMode=LOCK_TASK_LAUNCH_MODE_DEFAULT\n{i2}resizeMode=RESIZE_MODE_RESIZEABLE\n"
                f"{i2}ApplicationInfo:\n{i3}packageName={pkg}\n{i3}labelRes=0x7f140045 nonLocalizedLabel=null "
                "icon=0x7f0f0000 banner=0x0\n"
                f"{i3}processName={pkg}\n{i3}taskAffinity={pkg}\n"
                f"{i3}uid={P.uid_of(pkg)} flags=0x{'38c8be45' if P.is_system(pkg) else '38c8be44'} "
                "privateFlags=0x24a01110 theme=0x7f1502ae\n"
                f"{i3}sourceDir={P.apk_path(pkg)}\n{i3}dataDir=/data/user/0/{pkg}\n"
                f"{i3}enabled=true minSdkVersion=26 targetSdkVersion=34 versionCode={P.version_of(pkg)[1]} "
                "targetSandboxVersion=1\n")

    def query_activities(self, args: list[str]) -> ShellResult:
        flags, action, cats, pkg = self._intent(args)
        found = self._matches(action, cats, pkg)
        if not found:
            return out("No activities found\n")
        if "--components" in flags:
            return out("".join(f"{activity_of(p)}\n" for p in found))
        rows = []
        for i, p in enumerate(found):
            body = f"    {activity_of(p)}\n" if "--brief" in flags else self._resolve_info(p, "    ")
            rows.append(f"  Activity #{i}:\n{body}")
        return out(f"{len(found)} activities found:\n" + "".join(rows))

    def resolve_activity(self, args: list[str]) -> ShellResult:
        flags, action, cats, pkg = self._intent(args)
        if pkg and not action and not cats:
            action, cats = "android.intent.action.MAIN", ["android.intent.category.LAUNCHER"]
            if pkg == LAUNCHER:
                cats = ["android.intent.category.HOME"]
        found = self._matches(action, cats, pkg)
        if not found:
            return out("No activity found\n")
        p = found[0]
        if "--components" in flags:
            return out(f"{activity_of(p)}\n")
        if "--brief" in flags:
            return out(f"priority=0 preferredOrder=0 match=0x108000 specificIndex=-1 isDefault=false\n"
                       f"{activity_of(p)}\n")
        return out(self._resolve_info(p, ""))
