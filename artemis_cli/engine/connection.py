"""Opening the DataEngine's database, and the query behind ``sessions list``.

``open_database`` creates the data dir and its blob store, connects (WAL, ``busy_timeout``,
foreign keys, ``synchronous = NORMAL``) and migrates, turning every way that can fail into one
named error (read-only, disk full, not an Artemis database)."""

from __future__ import annotations

import atexit
import os
import sqlite3
import weakref
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from artemis_cli.errors import UsageError

from .blobs import BlobStore
from .clock import normalize_iso
from .errors import DataEngineError
from .migrations import migrate
from .reading import BUSY_TIMEOUT_MS, DB_FILENAME
from .records import SESSION_STATUSES
from .rows import cant_open, is_locked
from .storage import disk_full, is_disk_full, is_read_only, read_only

if TYPE_CHECKING:
    import sqlite_utils

BLOB_DIRNAME = "blobs"

#: engines not yet closed: closed at interpreter exit, which otherwise may never free a connection
#: (a frame kept by a traceback, a daemon thread); SQLite checkpoints the WAL into ``artemis.db``
#: and removes ``-wal``/``-shm`` only when the last connection closes. Commands close their engine
#: themselves; this is the net under the ones that return early or raise.
OPEN_ENGINES: weakref.WeakSet[Any] = weakref.WeakSet()


@atexit.register
def _close_open_engines() -> None:
    for engine in list(OPEN_ENGINES):
        engine.close()


def open_database(root: Path) -> tuple[sqlite_utils.Database, BlobStore]:
    """``root/artemis.db`` (created and migrated) and ``root/blobs/``."""
    from ._sqlite import sqlite_utils

    try:
        root.mkdir(parents=True, exist_ok=True)
        blobs = BlobStore(root / BLOB_DIRNAME)
    except OSError as exc:
        if is_read_only(exc):
            raise read_only(root) from exc
        raise DataEngineError(
            f"cannot create the data dir {root}: {exc.strerror or exc}",
            hint="pass a writable --data-dir or set ARTEMIS_HOME",
        ) from exc
    path = root / DB_FILENAME
    conn = sqlite3.connect(str(path), check_same_thread=False, timeout=BUSY_TIMEOUT_MS / 1000)
    try:
        conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
        conn.execute("PRAGMA foreign_keys = ON")
        db = sqlite_utils.Database(conn)
        if db.journal_mode != "wal":
            db.enable_wal()
        # WAL + NORMAL: a committed step survives any process crash (kill -9); only a power
        # loss may drop the newest commits. Blob fsync follows the same choice (blobs.py).
        conn.execute("PRAGMA synchronous = NORMAL")
        migrate(db)
    except sqlite3.DatabaseError as exc:
        conn.close()
        if is_read_only(exc) or (cant_open(exc) and path.exists() and not os.access(root, os.W_OK)):
            raise read_only(root) from exc
        if is_disk_full(exc):
            raise disk_full(root) from exc
        if is_locked(exc):
            raise DataEngineError(
                f"cannot open {path}: another process held its write lock for {BUSY_TIMEOUT_MS / 1000:g} s",
                hint="another artemis command (or a program with the database open) is writing it; try again "
                     "when it is done") from exc
        raise DataEngineError(
            f"cannot open {path}: {exc}",
            hint="the file is not an Artemis database or is damaged; use another --data-dir",
        ) from exc
    except BaseException:
        conn.close()
        raise
    return db, blobs


def session_query(limit: int | None, status: str | None, task_id: str | None,
                  since: str | datetime | None) -> tuple[str, list[Any], bool]:
    """(SQL, parameters, derive) of ``DataEngine.list_sessions``: ``derive`` when the status asked
    for (running, interrupted) must be derived from the lease after the rows are read (the limit
    is then applied after it)."""
    where: list[str] = []
    params: list[Any] = []
    if status is not None:
        if status not in SESSION_STATUSES:
            raise UsageError(
                f"unknown session status {status!r}", hint=f"use one of: {', '.join(SESSION_STATUSES)}"
            )
        where.append("status = ?")
        params.append(status)
    if task_id is not None:
        where.append("task_id = ?")
        params.append(task_id)
    if since is not None:
        try:
            params.append(normalize_iso(since))
        except ValueError as exc:
            raise UsageError(
                f"invalid time {since!r}", hint="use ISO-8601, e.g. 2024-05-01T09:30"
            ) from exc
        where.append("started_at >= ?")
    derive = status in ("running", "interrupted")  # a running session may have lost its owner
    if derive:
        where[where.index("status = ?")] = "status IN ('running', 'interrupted')"
        params.remove(status)
    sql = "SELECT * FROM sessions"
    if where:
        sql += " WHERE " + " AND ".join(where)
    sql += " ORDER BY started_at DESC, id DESC"
    if limit is not None and limit > 0 and not derive:
        sql += " LIMIT ?"
        params.append(limit)
    return sql, params, derive
