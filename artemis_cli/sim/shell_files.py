"""Shell commands on files and text (toybox-like): rm cat echo ls md5sum mkdir touch grep head tail wc.

Errors go to stderr as toybox prints them (``cat: PATH: No such file or directory``, exit 1).
The text filters read stdin when no file is named (``stdin_readers`` tells the interpreter).
"""

from __future__ import annotations

import hashlib
import re
from typing import TYPE_CHECKING

from artemis_cli.sim.shell import Command, ShellResult, StdinTest, err, out
from artemis_cli.sim.vfs import FsError

if TYPE_CHECKING:
    from artemis_cli.sim.phone import SimPhone


class FileCommands:
    def __init__(self, phone: SimPhone) -> None:
        self.phone = phone

    def table(self) -> dict[str, Command]:
        return {"rm": self.rm, "cat": self.cat, "echo": self.echo, "ls": self.ls, "md5sum": self.md5sum,
                "mkdir": self.mkdir, "touch": self.touch, "grep": self.grep, "head": self.head,
                "tail": self.tail, "wc": self.wc}

    @staticmethod
    def stdin_readers() -> dict[str, StdinTest]:
        return {"cat": lambda a: not _files(a) or "-" in _files(a),
                "grep": lambda a: len(_files(a)) <= 1,
                "head": lambda a: not _files(_drop_count(a)),
                "tail": lambda a: not _files(_drop_count(a)),
                "wc": lambda a: not _files(a),
                "md5sum": lambda a: not _files(a)}

    def _read(self, path: str) -> bytes:
        return self.phone.fs.read_file(path)

    def rm(self, args: list[str], _: bytes) -> ShellResult:
        force = any(a.startswith("-") and "f" in a for a in args)
        rec = any(a.startswith("-") and "r" in a.lower() for a in args)
        errs, code = [], 0
        for path in _files(args):
            try:
                self.phone.fs.remove(path, recursive=rec)
            except FsError as e:
                if not (force and e.reason == "No such file or directory"):
                    errs.append(f"rm: {path}: {e.reason}\n")
                    code = 1
        return err("".join(errs), code)

    def cat(self, args: list[str], stdin: bytes) -> ShellResult:
        paths = _files(args)
        if not paths:
            return ShellResult(stdin, 0)
        chunks: list[bytes] = []
        errs: list[bytes] = []
        merged: list[bytes] = []
        code = 0
        for path in paths:
            try:
                data = stdin if path == "-" else self._read(path)
                chunks.append(data)
                merged.append(data)
            except FsError as e:
                msg = f"cat: {path}: {e.reason}\n".encode()
                errs.append(msg)
                merged.append(msg)
                code = 1
        return ShellResult(b"".join(chunks), code, b"".join(errs), b"".join(merged))

    def echo(self, args: list[str], _: bytes) -> ShellResult:
        if args[:1] == ["-n"]:
            return out(" ".join(args[1:]))
        return out(" ".join(args) + "\n")

    def ls(self, args: list[str], _: bytes) -> ShellResult:
        paths = _files(args) or ["/"]
        lines, errs, code = [], [], 0
        for path in paths:
            try:
                names = self.phone.fs.listdir(path)
                if self.phone.fs.is_dir(path):
                    if len(paths) > 1:
                        lines.append(f"{path}:\n")
                    lines.extend(f"{n}\n" for n in names)
                else:
                    lines.append(f"{path}\n")
            except FsError as e:
                errs.append(f"ls: {path}: {e.reason}\n")
                code = 1
        return err("".join(errs), code, "".join(lines))

    def md5sum(self, args: list[str], stdin: bytes) -> ShellResult:
        paths = _files(args)
        if not paths:
            return out(f"{hashlib.md5(stdin).hexdigest()}  -\n")
        lines, errs, code = [], [], 0
        for path in paths:
            try:
                lines.append(f"{hashlib.md5(self._read(path)).hexdigest()}  {path}\n")
            except FsError as e:
                errs.append(f"md5sum: {path}: {e.reason}\n")
                code = 1
        return err("".join(errs), code, "".join(lines))

    def mkdir(self, args: list[str], _: bytes) -> ShellResult:
        parents = "-p" in args
        errs, code = [], 0
        for path in _files(args):
            try:
                self.phone.fs.mkdir(path, parents=parents)
            except FsError as e:
                errs.append(f"mkdir: '{path}': {e.reason}\n")
                code = 1
        return err("".join(errs), code)

    def touch(self, args: list[str], _: bytes) -> ShellResult:
        fs = self.phone.fs
        for path in _files(args):
            try:
                fs.write_file(path, fs.read_file(path) if fs.exists(path) else b"")
            except FsError as e:
                return err(f"touch: '{path}': {e.reason}\n", 1)
        return out("")

    # -- text filters ------------------------------------------------------------------------
    def _input(self, paths: list[str], stdin: bytes, tool: str) -> tuple[str, str, int]:
        """(text of the named files, or stdin; error lines; exit code)."""
        if not paths:
            return stdin.decode("utf-8", "replace"), "", 0
        texts, errs, code = [], [], 0
        for path in paths:
            try:
                texts.append((stdin if path == "-" else self._read(path)).decode("utf-8", "replace"))
            except FsError as e:
                errs.append(f"{tool}: {path}: {e.reason}\n")
                code = 1
        return "".join(texts), "".join(errs), code

    def grep(self, args: list[str], stdin: bytes) -> ShellResult:
        flags = "".join(a[1:] for a in args if a.startswith("-") and len(a) > 1)
        words = _files(args)
        if not words:
            return err("usage: grep [-civE] PATTERN [FILE...]\n", 2)
        try:
            rx = re.compile(words[0], re.IGNORECASE if "i" in flags else 0)
        except re.error:
            rx = re.compile(re.escape(words[0]), re.IGNORECASE if "i" in flags else 0)
        text, errs, code = self._input(words[1:], stdin, "grep")
        hits = [ln for ln in text.splitlines() if bool(rx.search(ln)) != ("v" in flags)]
        status = 2 if code else (0 if hits else 1)
        if "c" in flags:
            return err(errs, status, f"{len(hits)}\n")
        return err(errs, status, "".join(h + "\n" for h in hits))

    def head(self, args: list[str], stdin: bytes) -> ShellResult:
        n = _count_arg(args, 10)
        text, errs, code = self._input(_files(_drop_count(args)), stdin, "head")
        return err(errs, code, "".join(x + "\n" for x in text.splitlines()[:n]))

    def tail(self, args: list[str], stdin: bytes) -> ShellResult:
        n = _count_arg(args, 10)
        text, errs, code = self._input(_files(_drop_count(args)), stdin, "tail")
        lines = text.splitlines()
        return err(errs, code, "".join(x + "\n" for x in lines[max(0, len(lines) - n):]))

    def wc(self, args: list[str], stdin: bytes) -> ShellResult:
        text, errs, code = self._input(_files(args), stdin, "wc")
        return err(errs, code, f"{text.count(chr(10))}\n")


def _files(args: list[str]) -> list[str]:
    """The operands: everything that is not an option (``-`` alone is stdin)."""
    return [a for a in args if not a.startswith("-") or a == "-"]


def _drop_count(args: list[str]) -> list[str]:
    """``args`` without ``-n N`` (so N is not taken for a file name)."""
    kept: list[str] = []
    skip = False
    for a in args:
        if skip:
            skip = False
        elif a == "-n":
            skip = True
        else:
            kept.append(a)
    return kept


def _count_arg(args: list[str], default: int) -> int:
    for i, a in enumerate(args):
        if a == "-n" and i + 1 < len(args) and args[i + 1].isdigit():
            return int(args[i + 1])
        if a.startswith("-") and a[1:].isdigit():
            return int(a[1:])
    return default
