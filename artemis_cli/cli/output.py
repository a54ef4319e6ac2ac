"""Files the commands write (``report -o``, ``sessions export -o``, ``bench run --out``).

Every way the target can be unwritable (its directory does not exist — it is not created, so a
mistyped directory is an error, not a new tree —, it is a directory, permission denied, no space
left on the device, also when that only shows on flush) becomes one
:class:`~artemis_cli.errors.OutputError` (exit 2, ``Error:`` and ``Hint:`` lines) naming the file,
never an unexpected OSError.
A regular file is replaced atomically, so a failed write never leaves half a file behind or
clobbers the previous one; other targets (``/dev/stdout``, a FIFO, a device) are written in place.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
from pathlib import Path

from artemis_cli.errors import OutputError


def _error(path: Path, exc: OSError, option: str) -> OutputError:
    reason = exc.strerror or os.strerror(exc.errno or 0) or type(exc).__name__
    if exc.errno == errno.EISDIR:
        return OutputError(str(path), reason, hint=f"give {option} a file path, not a directory")
    if exc.errno in (errno.ENOTDIR, errno.EEXIST):  # a file where a directory should be
        reason = os.strerror(errno.ENOTDIR)
    if exc.errno == errno.ENOENT:
        return OutputError(str(path), reason, hint=f"create {path.parent} first, or give {option} a file in "
                                                   "a directory that exists")
    return OutputError(str(path), reason,
                       hint=f"give {option} a file in a directory you can write to, on a disk with free space")


def check_output(path: Path, *, option: str = "--output") -> None:
    """Fail before any slow work when ``path`` obviously cannot be written: it is a directory, or
    its directory does not exist or is not one (nothing is created)."""
    try:
        if path.is_dir():
            raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR), str(path))
        parent = path.parent
        if not parent.is_dir():
            if any(p.exists() and not p.is_dir() for p in (parent, *parent.parents)):
                raise NotADirectoryError(errno.ENOTDIR, os.strerror(errno.ENOTDIR), str(path))
            raise FileNotFoundError(errno.ENOENT, os.strerror(errno.ENOENT), str(path))
    except OSError as exc:
        raise _error(path, exc, option) from None


def write_output(path: Path, data: str | bytes, *, option: str = "--output") -> None:
    """Write ``data`` (text as UTF-8) to ``path``; an unwritable target raises ``OutputError``."""
    check_output(path, option=option)
    payload = data.encode("utf-8") if isinstance(data, str) else data
    try:
        mode = path.lstat().st_mode
    except FileNotFoundError:
        mode = None
    except OSError as exc:
        raise _error(path, exc, option) from None
    try:
        if mode is not None and not stat.S_ISREG(mode):  # /dev/stdout, a FIFO, a device, a symlink
            with open(path, "wb") as fh:
                fh.write(payload)
            return
        tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        try:
            with open(tmp, "wb") as fh:
                fh.write(payload)
            os.replace(tmp, path)
        finally:
            with contextlib.suppress(OSError):
                tmp.unlink()
    except OSError as exc:
        raise _error(path, exc, option) from None
