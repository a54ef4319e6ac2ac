"""Files the commands write (``report -o``/``--assets``, ``sessions export -o``, ``bench run --out``,
``test --junit``/``--report-dir``).

One rule for every output path, checked by :func:`check_output` before any slow work starts: the
directory it goes into must exist — none is created (a mistyped directory is the user's to fix);
an output *folder* (``--report-dir``, ``--assets``) is itself created inside an existing one.

Every way the target can be unwritable (its directory does not exist, it is a directory,
permission denied, no space left on the device — also when that only shows on flush) becomes one
:class:`~artemis_cli.errors.OutputError` (exit 2) naming the file, never an unexpected OSError.
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


def _error(path: Path, exc: OSError, option: str, folder: bool = False) -> OutputError:
    reason = exc.strerror or os.strerror(exc.errno or 0) or type(exc).__name__
    if folder and exc.errno == errno.ENOTDIR and Path(exc.filename or "") == path:
        return OutputError(str(path), "it is a file, not a folder", hint=f"give {option} a folder")
    if exc.errno == errno.EISDIR:
        return OutputError(str(path), reason, hint=f"give {option} a file path, not a directory")
    if exc.errno in (errno.ENOTDIR, errno.EEXIST):  # a file where a directory should be
        reason = os.strerror(errno.ENOTDIR)
    return OutputError(str(path), reason,
                       hint=f"give {option} a file in a directory you can write to, on a disk with free space")


def check_output(path: Path, *, option: str = "--output", folder: bool = False) -> None:
    """Fail (``OutputError``, exit 2) before any slow work when ``path`` obviously cannot be
    written: a file that is a directory (``folder``: a folder that is a file), or whose directory
    does not exist. Nothing is created here: a mistyped directory is the user's to fix, not a
    reason to make one. Every command's output options go through this one check."""
    try:
        if folder and path.exists() and not path.is_dir():
            raise NotADirectoryError(errno.ENOTDIR, os.strerror(errno.ENOTDIR), str(path))
        if folder and path.is_dir():
            return
        if not folder and path.is_dir():
            raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR), str(path))
        parent = path.parent
        if parent.is_dir():
            return
        existing = next((p for p in (parent, *parent.parents) if p.exists()), None)
        if existing is not None and not existing.is_dir():  # a file where a directory should be
            raise NotADirectoryError(errno.ENOTDIR, os.strerror(errno.ENOTDIR), str(existing))
    except OSError as exc:
        raise _error(path, exc, option, folder) from None
    what = "a folder" if folder else "a file"
    raise OutputError(str(path), f"the directory {parent} does not exist",
                      hint=f"create it first (mkdir -p {parent}), or give {option} {what} in an existing directory")


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
