"""A tiny in-memory filesystem for /sdcard and /data/local/tmp (used by the shell and adb sync)."""

from __future__ import annotations

import posixpath
from dataclasses import dataclass, field

from artemis_cli.errors import ShellError

WRITABLE = ("/sdcard", "/data/local/tmp")
BASE_DIRS = ("/", "/sdcard", "/sdcard/Download", "/sdcard/DCIM", "/sdcard/Pictures", "/sdcard/Documents",
             "/data", "/data/local", "/data/local/tmp", "/system", "/system/bin", "/storage", "/storage/emulated",
             "/dev")
#: Character devices: ``/dev/null`` reads as empty and swallows what is written to it.
DEVICES = ("/dev/null", "/dev/zero")


class FsError(ShellError):
    """A filesystem operation failed; ``reason`` is the errno text ("No such file or directory")."""

    def __init__(self, path: str, reason: str) -> None:
        super().__init__(f"{path}: {reason}")
        self.path = path
        self.reason = reason


@dataclass
class VirtualFS:
    files: dict[str, bytes] = field(default_factory=dict)
    mtimes: dict[str, int] = field(default_factory=dict)
    dirs: set[str] = field(default_factory=lambda: set(BASE_DIRS))
    modes: dict[str, int] = field(default_factory=dict)  # chmod'ed files under /data/local/tmp
    now: int = 1717372800

    @staticmethod
    def norm(path: str) -> str:
        if not path:
            raise FsError(path, "No such file or directory")
        p = posixpath.normpath(path if path.startswith("/") else "/" + path)  # adb shell cwd is /
        for alias in ("/storage/emulated/0", "/storage/self/primary", "/mnt/sdcard"):
            if p == alias or p.startswith(alias + "/"):
                p = "/sdcard" + p[len(alias):]
        return "/" + p.lstrip("/")

    def writable(self, p: str) -> bool:
        return any(p == root or p.startswith(root + "/") for root in WRITABLE)

    def exists(self, path: str) -> bool:
        p = self.norm(path)
        return p in self.files or p in self.dirs or p in DEVICES

    def is_dir(self, path: str) -> bool:
        return self.norm(path) in self.dirs

    def read_file(self, path: str) -> bytes:
        p = self.norm(path)
        if p in self.dirs:
            raise FsError(path, "Is a directory")
        if p in DEVICES:
            return b"" if p == "/dev/null" else b"\0" * 65536
        if p not in self.files:
            raise FsError(path, "No such file or directory")
        return self.files[p]

    def write_file(self, path: str, data: bytes, *, append: bool = False) -> None:
        p = self.norm(path)
        if p in self.dirs:
            raise FsError(path, "Is a directory")
        if p in DEVICES:
            return
        if not self.writable(p):
            raise FsError(path, "Read-only file system" if p.startswith("/system") else "Permission denied")
        parent = posixpath.dirname(p)
        if parent not in self.dirs:
            raise FsError(path, "No such file or directory")
        self.files[p] = (self.files.get(p, b"") + data) if append else bytes(data)
        self.mtimes[p] = self.now

    def mkdir(self, path: str, *, parents: bool = False) -> None:
        p = self.norm(path)
        if p in self.dirs:
            if parents:
                return
            raise FsError(path, "File exists")
        if not self.writable(p):
            raise FsError(path, "Permission denied")
        parent = posixpath.dirname(p)
        if parent not in self.dirs:
            if not parents:
                raise FsError(path, "No such file or directory")
            self.mkdir(parent, parents=True)
        self.dirs.add(p)

    def remove(self, path: str, *, recursive: bool = False) -> None:
        p = self.norm(path)
        if p in self.files:
            if not self.writable(p):
                raise FsError(path, "Permission denied")
            del self.files[p]
            self.mtimes.pop(p, None)
            self.modes.pop(p, None)
            return
        if p in self.dirs:
            if not recursive:
                raise FsError(path, "Is a directory")
            if not self.writable(p) or p in WRITABLE:
                raise FsError(path, "Permission denied")
            for f in [f for f in self.files if f.startswith(p + "/")]:
                del self.files[f]
            self.dirs = {d for d in self.dirs if d != p and not d.startswith(p + "/")}
            return
        raise FsError(path, "No such file or directory")

    def listdir(self, path: str) -> list[str]:
        p = self.norm(path)
        if p in self.files:
            return [posixpath.basename(p)]
        if p not in self.dirs:
            raise FsError(path, "No such file or directory")
        prefix = p.rstrip("/") + "/"
        names = {x[len(prefix):].split("/")[0] for x in (*self.files, *self.dirs) if x.startswith(prefix) and x != p}
        return sorted(n for n in names if n)

    def stat(self, path: str) -> tuple[str, int, int]:
        """(kind "file"|"dir", size, mtime) — raises FsError when missing."""
        p = self.norm(path)
        if p in self.files:
            return "file", len(self.files[p]), self.mtimes.get(p, self.now)
        if p in self.dirs:
            return "dir", 0, self.now
        if p in DEVICES:
            return "char", 0, self.now
        raise FsError(path, "No such file or directory")

    def mode(self, path: str) -> int:
        """Permission bits: 0o771 for a directory; a file on /sdcard is 0o660 (FUSE, chmod has no
        effect there), elsewhere what chmod set or 0o644; /dev/null is 0o666."""
        p = self.norm(path)
        kind = self.stat(path)[0]
        if kind == "dir":
            return 0o771 if self.writable(p) else 0o755
        if kind == "char":
            return 0o666
        if p.startswith("/sdcard"):
            return 0o660
        return self.modes.get(p, 0o644)
