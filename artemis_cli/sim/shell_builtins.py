"""mksh builtins the sim's shell has besides ``sh``/``exit``: ``export``, ``exec``, ``test``/``[``,
``env``, and toybox's ``which`` (WORLD.md §4).

Variables: ``$NAME`` / ``${NAME}`` expand (outside single quotes) from the shell's environment,
which starts as ``adb shell``'s on Android 14 for each command line and which ``export`` and
``NAME=value`` change for the rest of that line.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from artemis_cli.sim.shell import SH, Command, ShellResult, err, out
from artemis_cli.sim.vfs import FsError

if TYPE_CHECKING:
    from artemis_cli.sim.shell import Shell

ENV: dict[str, str] = {
    "ANDROID_DATA": "/data", "ANDROID_ROOT": "/system", "ANDROID_STORAGE": "/storage",
    "EXTERNAL_STORAGE": "/sdcard", "HOME": "/", "HOSTNAME": "artemis_sim", "LOGNAME": "shell",
    "PATH": "/product/bin:/apex/com.android.runtime/bin:/apex/com.android.art/bin:/system_ext/bin:/system/bin:"
            "/system/xbin:/odm/bin:/vendor/bin:/vendor/xbin",
    "SHELL": "/bin/sh", "TMPDIR": "/data/local/tmp", "USER": "shell",
}
#: Builtins of mksh that ``which`` (an external toybox command) does not find.
SHELL_ONLY = frozenset({"exit", "export", "exec", "cd", "set", "unset", "alias", "[", "artemis-sim"})
NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_NUM_OPS = {"-eq": int.__eq__, "-ne": int.__ne__, "-lt": int.__lt__, "-le": int.__le__, "-gt": int.__gt__,
            "-ge": int.__ge__}


class TestError(Exception):
    """A malformed ``test`` expression (exit status 2)."""


class BuiltinCommands:
    def __init__(self, shell: Shell) -> None:
        self.shell = shell
        self.env: dict[str, str] = dict(ENV)

    def table(self) -> dict[str, Command]:
        return {"export": self.export, "exec": self.exec_, "test": self.test, "[": self.bracket, "env": self.env_,
                "which": self.which, "unset": self.unset}

    def reset(self) -> None:
        self.env = dict(ENV)

    def export(self, args: list[str], _: bytes) -> ShellResult:
        for a in args:
            if a.startswith("-"):
                continue
            name, eq, value = a.partition("=")
            if not NAME.fullmatch(name):
                return err(f"{SH}: export: {name}: is not an identifier\n", 1)
            if eq:
                self.env[name] = value
            else:
                self.env.setdefault(name, "")
        return out("")

    def unset(self, args: list[str], _: bytes) -> ShellResult:
        for a in args:
            self.env.pop(a, None)
        return out("")

    def env_(self, args: list[str], stdin: bytes) -> ShellResult:
        if args:
            return self.shell.commands.get(args[0], self.shell.missing(args[0]))(args[1:], stdin)
        return out("".join(f"{k}={v}\n" for k, v in sorted(self.env.items())))

    def exec_(self, args: list[str], stdin: bytes) -> ShellResult:
        """``exec CMD ARGS``: the command replaces the shell (nothing after it runs)."""
        if not args:
            return out("")
        res = self.shell.commands.get(args[0].rsplit("/", 1)[-1], self.shell.missing(args[0]))(args[1:], stdin)
        return ShellResult(res.stdout, res.exit_code, res.stderr, res.merged, exited=True)

    def which(self, args: list[str], _: bytes) -> ShellResult:
        names = [a for a in args if not a.startswith("-")]
        found = [f"/system/bin/{n}\n" for n in names if n in self.shell.commands and n not in SHELL_ONLY]
        return out("".join(found), 0 if names and len(found) == len(names) else 1)

    # -- test / [ ----------------------------------------------------------------------------
    def bracket(self, args: list[str], stdin: bytes) -> ShellResult:
        if not args or args[-1] != "]":
            return err(f"{SH}: [: missing ]\n", 2)
        return self._test("[", args[:-1])

    def test(self, args: list[str], _: bytes) -> ShellResult:
        return self._test("test", args)

    def _test(self, name: str, args: list[str]) -> ShellResult:
        try:
            return out("", 0 if self._or(list(args)) else 1)
        except TestError as e:
            return err(f"{SH}: {name}: {e}\n", 2)

    def _or(self, a: list[str]) -> bool:
        parts = _split(a, "-o")
        return any(self._and(p) for p in parts)

    def _and(self, a: list[str]) -> bool:
        return all(self._unary(p) for p in _split(a, "-a"))

    def _unary(self, a: list[str]) -> bool:
        if not a:
            return False
        if a[0] == "!" and len(a) > 1:
            return not self._unary(a[1:])
        if len(a) == 1:
            return a[0] != ""
        if len(a) == 2:
            return self._file_or_string(a[0], a[1])
        if len(a) == 3:
            return self._binary(a[0], a[1], a[2])
        raise TestError(f"{a[3]}: unexpected operator/operand")

    def _file_or_string(self, op: str, arg: str) -> bool:
        if op == "-z":
            return arg == ""
        if op == "-n":
            return arg != ""
        fs = self.shell.phone.fs
        if op not in ("-e", "-f", "-d", "-s", "-r", "-w", "-x", "-L", "-h", "-c", "-b", "-p", "-S"):
            raise TestError(f"{op}: unexpected operator")
        try:
            kind, size, _ = fs.stat(arg)
        except FsError:
            return False
        p = fs.norm(arg)
        mode = fs.mode(arg)
        return {"-e": True, "-f": kind == "file", "-d": kind == "dir", "-s": size > 0, "-c": kind == "char",
                "-r": bool(mode & 0o044) or p.startswith("/sdcard"),
                "-w": fs.writable(p) or kind == "char", "-x": bool(mode & 0o111)}.get(op, False)

    def _binary(self, left: str, op: str, right: str) -> bool:
        if op in ("=", "=="):
            return left == right
        if op == "!=":
            return left != right
        if op in _NUM_OPS:
            for v in (left, right):
                if not re.fullmatch(r"\s*-?\d+\s*", v):
                    raise TestError(f"{v}: bad number")
            return bool(_NUM_OPS[op](int(left), int(right)))
        if left == "!":
            return not self._file_or_string(op, right)
        raise TestError(f"{op}: unexpected operator")


def _split(a: list[str], sep: str) -> list[list[str]]:
    parts: list[list[str]] = [[]]
    for w in a:
        if w == sep and parts[-1]:
            parts.append([])
        else:
            parts[-1].append(w)
    return parts
