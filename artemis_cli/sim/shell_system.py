"""Shell commands about the system: settings, getprop, pm, content query, id, whoami, date,
sleep, true, false."""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING

from artemis_cli.sim.shell import Command, ShellResult, err, out
from artemis_cli.sim.shell_device import LAUNCHER_ACTIVITY
from artemis_cli.sim.system import NAMESPACES
from artemis_cli.sim.worlds import LAUNCHER

if TYPE_CHECKING:
    from artemis_cli.sim.phone import SimPhone

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
_SETTINGS_USAGE = ("usage:  settings [--user <USER_ID> | current] get namespace key\n"
                   "        settings [--user <USER_ID> | current] put namespace key value\n")


class SystemCommands:
    def __init__(self, phone: SimPhone) -> None:
        self.phone = phone

    def table(self) -> dict[str, Command]:
        return {"settings": self.settings, "getprop": self.getprop, "pm": self.pm, "cmd": self.cmd,
                "content": self.content,
                "id": self.id_, "whoami": lambda a, i: out("shell\n"), "date": self.date,
                "sleep": self.sleep, "true": lambda a, i: out(""), "false": lambda a, i: out("", 1)}

    def sleep(self, args: list[str], _: bytes) -> ShellResult:
        """``sleep N``: returns at once, but the phone's touch clock moves N seconds (sim/gestures.py)."""
        try:
            seconds = float(args[0]) if args else 0.0
        except ValueError:
            return err(f"sleep: invalid number '{args[0]}'\n", 1)
        self.phone.touch.advance(seconds * 1000.0)
        return out("")

    def settings(self, args: list[str], _: bytes) -> ShellResult:
        a = list(args)
        if len(a) >= 2 and a[0] == "--user":
            a = a[2:]
        if len(a) < 2:
            return err(_SETTINGS_USAGE, 1)
        verb, ns = a[0], a[1]
        if ns not in NAMESPACES:
            return err(f"Invalid namespace '{ns}'\n" + _SETTINGS_USAGE, 1)
        s = self.phone.settings
        if verb == "get" and len(a) == 3:
            v = s.get(ns, a[2])
            return out(("null" if v is None else v) + "\n")
        if verb == "put" and len(a) >= 4:
            s.put(ns, a[2], a[3])
            self.phone.invalidate()
            return out("")
        if verb == "delete" and len(a) == 3:
            existed = s.values.get(ns, {}).pop(a[2], None) is not None
            self.phone.invalidate()
            return out(f"Deleted {int(existed)} rows\n")
        if verb == "list" and len(a) == 2:
            return out("".join(f"{k}={v}\n" for k, v in sorted(s.values.get(ns, {}).items())))
        return err(_SETTINGS_USAGE, 1)

    def props(self) -> dict[str, str]:
        info = self.phone.info()
        return {**PROPS_BASE, "ro.serialno": info.serial, "ro.boot.serialno": info.serial}

    def getprop(self, args: list[str], _: bytes) -> ShellResult:
        props = self.props()
        if not args:
            return out("".join(f"[{k}]: [{v}]\n" for k, v in sorted(props.items())))
        return out(props.get(args[0], args[1] if len(args) > 1 else "") + "\n")

    def pm(self, args: list[str], _: bytes) -> ShellResult:
        pkgs = [*self.phone.packages(), *EXTRA_PACKAGES]
        if args[:2] == ["list", "packages"]:
            filt = [a for a in args[2:] if not a.startswith("-")]
            return out("".join(f"package:{p}\n" for p in pkgs if not filt or filt[0] in p))
        if args[:1] in (["grant"], ["revoke"]):
            return self._grant(args)
        if args[:1] == ["path"] and len(args) == 2:
            if args[1] in pkgs:
                return out(f"package:/data/app/{args[1]}/base.apk\n")
            return out("", 1)
        return err("usage: pm list packages [FILTER]\n", 1)

    def _grant(self, args: list[str]) -> ShellResult:
        """``pm grant|revoke [--user N] PKG PERM`` (sim/permissions.py)."""
        from artemis_cli.sim.permissions import PermissionError_

        rest = list(args[1:])
        if rest[:1] == ["--user"]:
            rest = rest[2:]
        if len(rest) != 2:
            return err("Error: no package or permission specified\n", 1) if len(rest) < 2 else \
                err("Error: too many arguments\n", 1)
        try:
            (self.phone.grant if args[0] == "grant" else self.phone.revoke)(rest[0], rest[1])
        except PermissionError_ as e:
            return err(f"Exception occurred while executing '{args[0]}':\n{e}\n", 255)
        return out("")

    def cmd(self, args: list[str], _: bytes) -> ShellResult:
        """``cmd package query-activities [--brief] -a ACTION -c CATEGORY``: what a launcher asks
        for. Every app but the home screen has a launcher activity (the stubs of ``--packages``
        too); the home screen answers CATEGORY_HOME."""
        if not args:
            return err("cmd: no service specified; use -l to list all services\n", 20)
        if args[0] != "package":
            return err(f"cmd: Can't find service: {args[0]}\n", 20)
        if args[1:2] != ["query-activities"]:
            return err(f"Unknown command: {' '.join(args[1:2])}\n", 255)
        cats = [args[i + 1] for i, a in enumerate(args[:-1]) if a == "-c"]
        if "android.intent.category.HOME" in cats:
            pkgs = [LAUNCHER]
        else:
            pkgs = [p for p in self.phone.packages() if p != LAUNCHER] if "android.intent.category.LAUNCHER" in cats \
                else []
        if not pkgs:
            return out("No activities found\n")
        rows = "".join(f"  Activity #{i}:\n    {p}/{LAUNCHER_ACTIVITY}\n" for i, p in enumerate(pkgs))
        return out(f"{len(pkgs)} activities found:\n" + rows)

    def id_(self, args: list[str], _: bytes) -> ShellResult:
        return out("uid=2000(shell) gid=2000(shell) groups=2000(shell),1004(input),1007(log),1015(sdcard_rw) "
                   "context=u:r:shell:s0\n")

    def date(self, args: list[str], _: bytes) -> ShellResult:
        epoch = self.phone.clock.epoch_s()
        if args[:1] == ["+%s"]:
            return out(f"{epoch}\n")
        return out(time.strftime("%a %b %d %H:%M:%S UTC %Y", time.gmtime(epoch)) + "\n")

    def content(self, args: list[str], _: bytes) -> ShellResult:
        if not args or args[0] != "query":
            return err("usage: adb shell content [subcommand] [options]\n  content query --uri <URI> "
                       "[--projection <PROJECTION>] [--where <WHERE>] [--sort <SORT_ORDER>]\n", 1)
        opts: dict[str, str] = {}
        it = iter(args[1:])
        for a in it:
            if a.startswith("--"):
                opts[a[2:]] = next(it, "")
        uri = opts.get("uri", "")
        if not uri:
            return err("Error: missing --uri\n", 1)
        m = re.fullmatch(r"content://([^/]+)/?([^/?#]*)", uri)
        rows = self.phone.provider_rows(m.group(1), m.group(2)) if m else None
        if rows is None:
            auth = m.group(1) if m else uri
            return err(f"Error while accessing provider:{auth}\njava.lang.IllegalArgumentException: Unknown URI "
                       f"{uri}\n", 1)
        where = opts.get("where", "").strip()
        if where:
            try:
                rows = [r for r in rows if _where(where)(r)]
            except ValueError as e:
                return err(f"Error while accessing provider:{m.group(1) if m else ''}\n"
                           f"android.database.sqlite.SQLiteException: {e}\n", 1)
        proj = [p for p in re.split(r"[:,]", opts.get("projection", "")) if p]
        if not rows:
            return out("No result found.\n")
        lines = []
        for i, r in enumerate(rows):
            keys = proj or list(r)
            cells = ", ".join(f"{k}={'NULL' if r.get(k) is None else r.get(k)}" for k in keys)
            lines.append(f"Row: {i} {cells}\n")
        return out("".join(lines))


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
