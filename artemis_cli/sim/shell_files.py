"""Shell commands on files and text (toybox-like): rm cat echo ls md5sum mkdir touch cp mv chmod df
grep head tail wc.

Errors go to stderr as toybox prints them (``cat: PATH: No such file or directory``, exit 1).
The text filters read stdin when no file is named (``stdin_readers`` tells the interpreter).
"""

from __future__ import annotations

import hashlib
import posixpath
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
                "tail": self.tail, "wc": self.wc, "cp": self.cp, "mv": self.mv, "chmod": self.chmod, "df": self.df}

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

    def _target(self, src: str, dst: str) -> str:
        """Where ``cp``/``mv`` put ``src``: into ``dst`` when it is a directory."""
        return posixpath.join(dst, posixpath.basename(src.rstrip("/"))) if self.phone.fs.is_dir(dst) else dst

    def _copy(self, tool: str, args: list[str], move: bool) -> ShellResult:
        paths = _files(args)
        if len(paths) < 2:
            return err(f"{tool}: Need 2 arguments\n", 1)
        *srcs, dst = paths
        fs = self.phone.fs
        if len(srcs) > 1 and not fs.is_dir(dst):
            return err(f"{tool}: '{dst}' not directory\n", 1)
        errs, code = [], 0
        recursive = any(a.startswith("-") and ("r" in a.lower() or "a" in a) for a in args)
        for src in srcs:
            try:
                kind = fs.stat(src)[0]
                target = self._target(src, dst)
                if kind == "dir":
                    if not (move or recursive):
                        errs.append(f"{tool}: {src}: Is a directory\n" if tool == "cp" else "")
                        code = 1
                        continue
                    self._copy_dir(src, target)
                else:
                    fs.write_file(target, fs.read_file(src))
                if move:
                    fs.remove(src, recursive=True)
            except FsError as e:
                errs.append(f"{tool}: {e.path}: {e.reason}\n")
                code = 1
        return err("".join(errs), code)

    def _copy_dir(self, src: str, dst: str) -> None:
        fs = self.phone.fs
        fs.mkdir(dst, parents=True)
        for name in fs.listdir(src):
            s, d = posixpath.join(src, name), posixpath.join(dst, name)
            if fs.is_dir(s):
                self._copy_dir(s, d)
            else:
                fs.write_file(d, fs.read_file(s))

    def cp(self, args: list[str], _: bytes) -> ShellResult:
        return self._copy("cp", args, move=False)

    def mv(self, args: list[str], _: bytes) -> ShellResult:
        return self._copy("mv", args, move=True)

    def chmod(self, args: list[str], _: bytes) -> ShellResult:
        """``chmod MODE FILE…`` (octal or ``[ugoa][+-=][rwx]``); on /sdcard it succeeds and changes
        nothing (a FUSE mount), under /system it is a read-only file system."""
        words = [a for a in args if a != "-R"]
        if len(words) < 2:
            return err("chmod: Need 2 arguments\n", 1)
        mode_s, paths = words[0], words[1:]
        if not re.fullmatch(r"[0-7]{1,4}|([ugoa]*[-+=][rwxXst]*)(,[ugoa]*[-+=][rwxXst]*)*", mode_s):
            return err(f"chmod: bad mode '{mode_s}'\n", 1)
        fs = self.phone.fs
        errs, code = [], 0
        for path in paths:
            try:
                kind = fs.stat(path)[0]
                p = fs.norm(path)
                new = _apply_mode(fs.mode(path), mode_s)
                if p.startswith("/system"):
                    raise FsError(path, "Read-only file system")
                if not fs.writable(p) and kind != "char":
                    raise FsError(path, "Operation not permitted")
                if kind == "file" and not p.startswith("/sdcard"):
                    fs.modes[p] = new
            except FsError as e:
                errs.append(f"chmod: {e.path}: {e.reason}\n" if e.reason == "No such file or directory" else
                            f"chmod: chmod '{path}' to {_apply_mode(0o644, mode_s):o}: {e.reason}\n")
                code = 1
        return err("".join(errs), code)

    def df(self, args: list[str], _: bytes) -> ShellResult:
        """toybox ``df`` (1K blocks, or ``-h``): the phone's mounts, /data's use growing with the
        files written."""
        used = sum(len(v) for v in self.phone.fs.files.values()) // 1024
        mounts = [("/dev/block/dm-5", 5079040, 5063368, "/"), ("tmpfs", 3934764, 1512, "/dev"),
                  ("/dev/block/dm-48", 113811948, 9876544 + used, "/data"),
                  ("/dev/fuse", 113811948, 9876544 + used, "/storage/emulated")]
        want = _files(args)
        if want:
            chosen = []
            for path in want:
                try:
                    self.phone.fs.stat(path)
                except FsError as e:
                    return err(f"df: {path}: {e.reason}\n", 1)
                p = self.phone.fs.norm(path)
                p = "/storage/emulated" + p[len("/sdcard"):] if p.startswith("/sdcard") else p
                chosen.append(max((m for m in mounts if p == m[3] or p.startswith(m[3].rstrip("/") + "/")),
                                  key=lambda m: len(m[3])))
            mounts = chosen
        human = "-h" in args
        if human:
            lines = ["Filesystem        Size Used Avail Use% Mounted on\n"]
            lines += [f"{fs:<17} {_human(size):>4} {_human(u):>4} {_human(size - u):>5} {_pct(u, size):>3}% {on}\n"
                      for fs, size, u, on in mounts]
        else:
            lines = ["Filesystem       1K-blocks    Used Available Use% Mounted on\n"]
            lines += [f"{fs:<16} {size:>9} {u:>7} {size - u:>9} {_pct(u, size):>3}% {on}\n"
                      for fs, size, u, on in mounts]
        return out("".join(lines))

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


def _pct(used: int, size: int) -> int:
    return -(-used * 100 // size) if size else 0


def _human(kib: int) -> str:
    size = float(kib)
    for unit in ("K", "M", "G", "T"):
        if size < 1024 or unit == "T":
            return f"{size:.1f}{unit}" if size < 10 else f"{round(size)}{unit}"
        size /= 1024
    return f"{kib}K"


def _apply_mode(mode: int, spec: str) -> int:
    """``spec`` (octal or symbolic) applied to ``mode``."""
    if re.fullmatch(r"[0-7]{1,4}", spec):
        return int(spec, 8)
    for part in spec.split(","):
        m = re.fullmatch(r"([ugoa]*)([-+=])([rwxXst]*)", part)
        if not m:
            continue
        who = m.group(1) or "a"
        shifts = [s for c, s in (("u", 6), ("g", 3), ("o", 0)) if c in who or "a" in who]
        bits = sum({"r": 4, "w": 2, "x": 1, "X": 1}.get(c, 0) for c in m.group(3))
        for sh in shifts:
            if m.group(2) == "+":
                mode |= bits << sh
            elif m.group(2) == "-":
                mode &= ~(bits << sh)
            else:
                mode = (mode & ~(7 << sh)) | (bits << sh)
    return mode


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
