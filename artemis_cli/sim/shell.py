"""A small Android shell for the simulated phone: the interpreter (see WORLD.md §4).

The commands live in families: ``shell_device`` (screen, input, activities, power, display),
``shell_system`` (settings, properties, packages, content providers, id/date) and
``shell_files`` (files and text filters).  This module tokenizes a command line like mksh does
(quotes, backslashes, ``;`` ``&&`` ``||`` ``|``, ``> >> < 2> 2>> 2>&1 >&2``, ``$?``) and runs it.

Every result keeps stdout and stderr apart (the shell v2 protocol sends them apart) and also
in the order they were written (what the legacy ``shell:`` service and a pty show).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from artemis_cli.errors import ArtemisError
from artemis_cli.sim.vfs import FsError

if TYPE_CHECKING:
    from artemis_cli.sim.phone import SimPhone

STATUS = "\x00?"  # `$?` outside single quotes; expanded when the command runs
SH = "/system/bin/sh"


@dataclass(frozen=True)
class ShellResult:
    """What a command line printed and its exit status.

    ``output`` is stdout and stderr as they were written (``merged``, or stdout then stderr);
    ``exited`` is set when ``exit`` ran (the shell stops there)."""

    stdout: bytes
    exit_code: int
    stderr: bytes = b""
    merged: bytes | None = None
    exited: bool = False

    @property
    def output(self) -> bytes:
        return self.merged if self.merged is not None else self.stdout + self.stderr


Command = Callable[[list[str], bytes], ShellResult]
StdinTest = Callable[[list[str]], bool]


def out(text: str | bytes = "", code: int = 0) -> ShellResult:
    """A result on stdout."""
    return ShellResult(text.encode("utf-8") if isinstance(text, str) else text, code)


def err(text: str, code: int = 1, stdout: str | bytes = "") -> ShellResult:
    """A result with ``text`` on stderr (after ``stdout``)."""
    head = stdout.encode("utf-8") if isinstance(stdout, str) else stdout
    return ShellResult(head, code, text.encode("utf-8"))


class _Op(str):
    """An unquoted shell operator token: ; && || | > >> < 2> 2>> 2>&1 >&2."""


_REDIRECTS = (">", ">>", "<", "2>", "2>>")
_MERGES = ("2>&1", ">&2")


def tokenize(cmd: str) -> list[str]:
    """Split like sh: quotes, backslashes, operators and redirections; ``$?`` becomes STATUS."""
    toks: list[str] = []
    buf: list[str] = []
    has_word = quoted = False
    i, n = 0, len(cmd)

    def flush() -> None:
        nonlocal has_word, quoted
        if has_word:
            toks.append("".join(buf))
        buf.clear()
        has_word = quoted = False

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
            has_word = quoted = True
            i = j + 1
        elif ch == '"':
            i += 1
            while i < n and cmd[i] != '"':
                if cmd[i] == "\\" and i + 1 < n and cmd[i + 1] in '"\\$`':
                    i += 1
                    buf.append(cmd[i])
                elif cmd.startswith("$?", i):
                    buf.append(STATUS)
                    i += 1
                else:
                    buf.append(cmd[i])
                i += 1
            if i >= n:
                raise ValueError("syntax error: '\"' unmatched")
            has_word = quoted = True
            i += 1
        elif ch == "\\":
            if i + 1 < n:
                buf.append(cmd[i + 1])
                has_word = quoted = True
            i += 2
        elif cmd.startswith("$?", i):
            buf.append(STATUS)
            has_word = True
            i += 2
        elif ch in "<>":
            fd = "".join(buf) if has_word and not quoted and "".join(buf) in ("1", "2") else ""
            if fd:
                buf.clear()
                has_word = False
            flush()
            op, i = _redirect(cmd, i, fd)
            if op:
                toks.append(_Op(op))
        elif ch in ";&|":
            flush()
            two = cmd[i:i + 2]
            if two in ("&&", "||"):
                toks.append(_Op(two))
                i += 2
            elif ch == "&":
                i += 1  # background: run in the foreground
                toks.append(_Op(";"))
            else:
                toks.append(_Op(ch))
                i += 1
        else:
            buf.append(ch)
            has_word = True
            i += 1
    flush()
    return toks


def _redirect(cmd: str, i: int, fd: str) -> tuple[str, int]:
    """The redirection operator at ``cmd[i]`` (``<`` or ``>``) with its fd prefix, and the next index."""
    if cmd[i] == "<":
        return "<", i + 1
    if cmd.startswith(">&", i):
        j = i + 2
        target = ""
        while j < len(cmd) and cmd[j].isdigit():
            target += cmd[j]
            j += 1
        if fd == "2" and target == "1":
            return "2>&1", j
        if fd in ("", "1") and target == "2":
            return ">&2", j
        return "", j  # 1>&1, 2>&2: no change
    if cmd.startswith(">>", i):
        return ("2>>" if fd == "2" else ">>"), i + 2
    return ("2>" if fd == "2" else ">"), i + 1


@dataclass
class _Run:
    """One command line's state: the unread stdin and ``$?``."""

    stdin: bytes
    status: int


@dataclass
class _Acc:
    stdout: list[bytes] = field(default_factory=list)
    stderr: list[bytes] = field(default_factory=list)
    merged: list[bytes] = field(default_factory=list)

    def add(self, r: ShellResult) -> None:
        self.stdout.append(r.stdout)
        self.stderr.append(r.stderr)
        self.merged.append(r.output)

    def result(self, code: int, exited: bool = False) -> ShellResult:
        return ShellResult(b"".join(self.stdout), code, b"".join(self.stderr), b"".join(self.merged), exited)


class Shell:
    def __init__(self, phone: SimPhone) -> None:
        from artemis_cli.sim.shell_device import DeviceCommands
        from artemis_cli.sim.shell_files import FileCommands
        from artemis_cli.sim.shell_logcat import LogCommands
        from artemis_cli.sim.shell_system import SystemCommands

        self.phone = phone
        self.device = DeviceCommands(phone)
        self.files = FileCommands(phone)
        self.system = SystemCommands(phone)
        self.logcmds = LogCommands(phone)
        self.commands: dict[str, Command] = {
            **self.device.table(), **self.files.table(), **self.system.table(), **self.logcmds.table(),
            "sh": self.sh, "exit": self.exit_, "toybox": self.toybox, "artemis-sim": self.artemis_sim,
            "export": self.export, "exec": self.exec_,
        }
        self.env: dict[str, str] = {}
        self.stdin_readers: dict[str, StdinTest] = {
            **self.files.stdin_readers(), "sh": lambda a: "-c" not in a,
            "toybox": lambda a: bool(a) and self._reads(a[0], a[1:]),
            "exec": lambda a: bool(a) and self._reads(a[0], a[1:]),
        }

    # -- the interpreter -------------------------------------------------------------------
    def run(self, command: str, *, stdin: bytes = b"", status: int = 0) -> ShellResult:
        """Run a command line; never raises (errors become stderr + a non-zero exit code).
        ``stdin`` goes to the first command that reads it; ``status`` is ``$?`` at the start."""
        try:
            tokens = tokenize(command)
        except ValueError as e:
            return err(f"{SH}: <stdin>[1]: {e}\n", 1)
        ctx = _Run(stdin, status)
        acc = _Acc()
        connector = ";"
        for words, nxt in _sequence(tokens):
            run_it = words and not (connector == "&&" and ctx.status != 0) and not (
                connector == "||" and ctx.status == 0)
            connector = nxt
            if not run_it:
                continue
            res = self._pipeline(words, ctx)
            acc.add(res)
            ctx.status = res.exit_code
            if res.exited:
                return acc.result(res.exit_code, exited=True)
        return acc.result(ctx.status)

    def reads_stdin(self, command: str) -> bool:
        """Whether running ``command`` reads stdin (so a caller must collect it first)."""
        try:
            tokens = tokenize(command)
        except ValueError:
            return False
        for words, _ in _sequence(tokens):
            stage = _stages(words)[0]
            argv, redirects = _split_redirects(stage)
            if argv and not any(op == "<" for op, _ in redirects) and self._reads(argv[0], argv[1:]):
                return True
        return False

    def _reads(self, name: str, args: list[str]) -> bool:
        test = self.stdin_readers.get(name.rsplit("/", 1)[-1])
        return test is not None and test(args)

    def _pipeline(self, words: list[str], ctx: _Run) -> ShellResult:
        stages = _stages(words)
        acc = _Acc()
        data = b""
        res = ShellResult(b"", 0)
        for i, stage in enumerate(stages):
            res = self._simple(stage, data if i else None, ctx)
            data = res.stdout
            if i < len(stages) - 1:  # earlier stages' stderr passes through; their stdout is piped
                acc.stderr.append(res.stderr)
                acc.merged.append(res.stderr)
        acc.add(res)
        return acc.result(res.exit_code, exited=res.exited and len(stages) == 1)

    def _simple(self, words: list[str], piped: bytes | None, ctx: _Run) -> ShellResult:
        argv, redirects = _split_redirects(words)
        argv = [a.replace(STATUS, str(ctx.status)) for a in argv]
        redirects = [(op, p.replace(STATUS, str(ctx.status))) for op, p in redirects]
        if any(op in _REDIRECTS and not p for op, p in redirects):
            return err(f"{SH}: syntax error: newline unexpected\n", 1)
        if not argv:
            return ShellResult(b"", 0)
        stdin = piped if piped is not None else b""
        for op, path in redirects:
            if op == "<":
                try:
                    stdin = self.phone.fs.read_file(path)
                except FsError as e:
                    return err(f"{SH}: can't open {path}: {e.reason}\n", 1)
        if piped is None and not any(op == "<" for op, _ in redirects) and self._reads(argv[0], argv[1:]):
            stdin, ctx.stdin = ctx.stdin, b""
        name = argv[0].rsplit("/", 1)[-1]
        handler = self.commands.get(name)
        if handler is None:
            res = err(f"{SH}: {argv[0]}: inaccessible or not found\n", 127)
        else:
            try:
                res = handler(argv[1:], stdin)
            except ArtemisError as e:  # documented errors from the phone become shell errors
                res = err(f"Error: {e}\n", 1)
        return self._apply(res, redirects)

    def _apply(self, res: ShellResult, redirects: list[tuple[str, str]]) -> ShellResult:
        """Apply ``> >> 2> 2>> 2>&1 >&2`` to a command's result."""
        if not any(op != "<" for op, _ in redirects):
            return res
        stdout, stderr, merged = res.stdout, res.stderr, res.merged
        for op, path in redirects:
            if op == "2>&1":
                stdout, stderr, merged = res.output, b"", None
            elif op == ">&2":
                stdout, stderr, merged = b"", res.output, None
            elif op in (">", ">>", "2>", "2>>"):
                data = stdout if op in (">", ">>") else stderr
                if path != "/dev/null":
                    try:
                        self.phone.fs.write_file(path, data, append=op.endswith(">>"))
                    except FsError as e:
                        return err(f"{SH}: can't create {path}: {e.reason}\n", 1)
                if op in (">", ">>"):
                    stdout, merged = b"", None
                else:
                    stderr, merged = b"", None
        return ShellResult(stdout, res.exit_code, stderr, merged, res.exited)

    # -- shell builtins --------------------------------------------------------------------
    def sh(self, args: list[str], stdin: bytes) -> ShellResult:
        if args[:1] == ["-c"]:
            if len(args) < 2:
                return err(f"{SH}: -c: option requires an argument\n", 1)
            res = self.run(args[1])
        else:
            res = self.run(stdin.decode("utf-8", "replace"))
        return ShellResult(res.stdout, res.exit_code, res.stderr, res.merged)

    def exit_(self, args: list[str], _: bytes) -> ShellResult:
        try:
            code = int(args[0]) & 255 if args else 0
        except ValueError:
            return ShellResult(b"", 1, f"{SH}: exit: {args[0]}: bad number\n".encode(), exited=True)
        return ShellResult(b"", code, exited=True)

    def artemis_sim(self, args: list[str], _: bytes) -> ShellResult:
        """``artemis-sim reset --world W --seed S [--popups|--no-popups]``: the simulated phone
        starts over as that world (only the simulated phone has this command)."""
        usage = "usage: artemis-sim reset --world WORLD --seed N [--popups|--no-popups]\n"
        if not args or args[0] != "reset":
            return err(usage, 2)
        world, seed, popups = self.phone.world, self.phone.seed, False
        rest = args[1:]
        try:
            while rest:
                flag = rest.pop(0)
                if flag == "--world":
                    world = rest.pop(0)
                elif flag == "--seed":
                    seed = int(rest.pop(0))
                elif flag in ("--popups", "--no-popups"):
                    popups = flag == "--popups"
                else:
                    return err(f"artemis-sim: unknown option {flag}\n" + usage, 2)
        except (IndexError, ValueError):
            return err(usage, 2)
        self.phone.reset_to(world, seed, popups)  # an unknown world is a UsageError: a shell error
        return out(f"reset to world {world} seed {seed}\n")

    def export(self, args: list[str], _: bytes) -> ShellResult:
        """``export NAME=VALUE``: remembered (``adb logcat`` sends ``export ANDROID_LOG_TAGS=...``)."""
        for a in args:
            name, eq, value = a.partition("=")
            if not name.replace("_", "a").isalnum() or name[0].isdigit():
                return err(f"{SH}: export: {a}: is not an identifier\n", 1)
            if eq:
                self.env[name] = value
        return out("")

    def exec_(self, args: list[str], stdin: bytes) -> ShellResult:
        """``exec CMD ARGS``: runs CMD in place of the shell (``adb logcat`` ends with ``exec logcat``)."""
        if not args:
            return out("")
        name = args[0].rsplit("/", 1)[-1]
        handler = self.commands.get(name)
        if handler is None or name == "exec":
            return ShellResult(b"", 127, f"{SH}: exec: {args[0]}: inaccessible or not found\n".encode(),
                               exited=True)
        res = handler(args[1:], stdin)
        return ShellResult(res.stdout, res.exit_code, res.stderr, res.merged, exited=True)

    def toybox(self, args: list[str], stdin: bytes) -> ShellResult:
        if not args:
            return err("usage: toybox [command] [arguments...]\n", 1)
        handler = self.commands.get(args[0])
        if handler is None or args[0] in ("toybox", "sh", "exit"):
            return err(f"toybox: Unknown command {args[0]}\n", 1)
        return handler(args[1:], stdin)

    def keyevent(self, code: str) -> str:
        """``input keyevent CODE``: "" or an error message (used by the uiautomator2 server too)."""
        return self.device.keyevent(code)


def _sequence(tokens: list[str]) -> list[tuple[list[str], str]]:
    """Split at ``;`` ``&&`` ``||``: (words, the connector after them)."""
    chunks: list[tuple[list[str], str]] = []
    cur: list[str] = []
    for t in tokens:
        if isinstance(t, _Op) and t in (";", "&&", "||"):
            chunks.append((cur, str(t)))
            cur = []
        else:
            cur.append(t)
    chunks.append((cur, ";"))
    return chunks


def _stages(words: list[str]) -> list[list[str]]:
    stages: list[list[str]] = [[]]
    for t in words:
        if isinstance(t, _Op) and t == "|":
            stages.append([])
        else:
            stages[-1].append(t)
    return stages


def _split_redirects(words: list[str]) -> tuple[list[str], list[tuple[str, str]]]:
    """(argv, [(operator, path)]); a redirection missing its path gets ""."""
    argv: list[str] = []
    redirects: list[tuple[str, str]] = []
    i = 0
    while i < len(words):
        t = words[i]
        if isinstance(t, _Op) and t in _MERGES:
            redirects.append((str(t), ""))
            i += 1
        elif isinstance(t, _Op) and t in _REDIRECTS:
            nxt = words[i + 1] if i + 1 < len(words) and not isinstance(words[i + 1], _Op) else ""
            redirects.append((str(t), nxt))
            i += 2 if nxt else 1
        else:
            argv.append(str(t))
            i += 1
    return argv, redirects
