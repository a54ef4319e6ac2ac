"""Telling storage failures apart: a full disk and a read-only data dir are the user's to fix,
not bugs. ``is_disk_full`` / ``is_read_only`` classify an exception from SQLite or the file
system; ``disk_full`` builds the one-line error with the free space and what to do next."""

from __future__ import annotations

import contextlib
import errno
import functools
import logging
import shutil
import sqlite3
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, TypeVar

from artemis_cli.errors import debug_enabled

from .errors import DataDirReadOnly, StorageFull

_SQLITE_FULL = 13
_SQLITE_READONLY = 8
_SQLITE_CANTOPEN = 14
_SQLITE_IOERR_SHMSIZE = 4874  # the WAL index (-shm) cannot grow: a full file system
_FULL_ERRNOS = {errno.ENOSPC, getattr(errno, "EDQUOT", errno.ENOSPC), errno.EFBIG}


def _chain(exc: BaseException) -> list[BaseException]:
    seen: list[BaseException] = []
    cur: BaseException | None = exc
    while cur is not None and cur not in seen:
        seen.append(cur)
        cur = cur.__cause__ or cur.__context__
    return seen


def is_disk_full(exc: BaseException) -> bool:
    """ENOSPC (or a quota) from a file write, or SQLITE_FULL, anywhere in the exception chain."""
    for e in _chain(exc):
        if isinstance(e, StorageFull):
            return True
        if isinstance(e, sqlite3.Error):
            code = getattr(e, "sqlite_errorcode", None)
            if (code is not None and (code & 0xFF == _SQLITE_FULL or code == _SQLITE_IOERR_SHMSIZE)) \
                    or "database or disk is full" in str(e):
                return True
        if isinstance(e, OSError) and e.errno in _FULL_ERRNOS:
            return True
    return False


def is_read_only(exc: BaseException) -> bool:
    """EROFS/EACCES from a file write, or SQLITE_READONLY."""
    for e in _chain(exc):
        if isinstance(e, DataDirReadOnly):
            return True
        if isinstance(e, sqlite3.Error):
            code = getattr(e, "sqlite_errorcode", None)
            if (code is not None and code & 0xFF == _SQLITE_READONLY) or "readonly database" in str(e):
                return True
        if isinstance(e, OSError) and e.errno in (errno.EROFS, errno.EACCES, errno.EPERM):
            return True
    return False


def free_mb(path: Path) -> float | None:
    for p in (path, *path.parents):
        try:
            return shutil.disk_usage(p).free / 1e6
        except OSError:
            continue
    return None


def disk_full(data_dir: Path, session_id: str | None = None) -> StorageFull:
    free = free_mb(data_dir)
    room = f"{free:.0f} MB free" if free is not None else "free space unknown"
    then = f"artemis resume {session_id}" if session_id else "run the command again"
    return StorageFull(f"disk full at {data_dir} ({room}): free space, then {then}",
                       hint="nothing recorded so far is lost; the step in flight was not stored")


def read_only(data_dir: Path) -> DataDirReadOnly:
    return DataDirReadOnly(f"the data dir {data_dir} is not writable",
                           hint="read commands (sessions, report, recall, export) still work; to run, "
                                "pass a writable --data-dir or set ARTEMIS_HOME")


@contextlib.contextmanager
def storage_errors(data_dir: Path) -> Iterator[None]:
    """Raise a full disk or an unwritable data dir met while writing as ``StorageFull`` /
    ``DataDirReadOnly`` naming ``data_dir`` (the engine knows its dir; no caller has to guess it).
    Other errors pass unchanged."""
    try:
        yield
    except (OSError, sqlite3.Error) as exc:
        problem = storage_error(exc, data_dir)
        if problem is None:
            raise
        raise problem from exc


def storage_error(exc: BaseException, data_dir: Path) -> StorageFull | DataDirReadOnly | None:
    """``exc`` (met while writing) as the full disk or unwritable dir it is, naming ``data_dir``;
    None when it is neither."""
    if is_disk_full(exc):
        return disk_full(data_dir)
    if is_read_only(exc):
        return read_only(data_dir)
    return None


_F = TypeVar("_F", bound=Callable[..., Any])


def writes(method: _F) -> _F:
    """Decorate a write method of an object with a ``data_dir``: its storage errors name that dir.
    SQL writes are classified by ``transaction.write_transaction`` already; this covers a
    method's file I/O around them (blobs written, files removed)."""

    @functools.wraps(method)
    def wrapper(self: Any, *args: Any, **kwargs: Any) -> Any:
        with storage_errors(self.data_dir):
            return method(self, *args, **kwargs)

    return wrapper  # type: ignore[return-value]


def log_failure(logger: logging.Logger, exc: BaseException, message: str, *args: object) -> None:
    """Log a background thread's failure as one line naming what failed and the error (its full
    traceback only with ``ARTEMIS_DEBUG=1``), or as one debug line when the disk is full (the run
    stops on its own with one clear message; threads stay quiet)."""
    if is_disk_full(exc):
        logger.debug(message + ": disk full", *args)
    else:
        logger.error(message + ": %s: %s", *args, type(exc).__name__, exc,
                     exc_info=exc if debug_enabled() else None)
