"""One write transaction helper shared by migrations and the engine.

``BEGIN IMMEDIATE`` takes SQLite's write lock up front, so two processes writing the same
data dir wait on ``busy_timeout`` instead of failing with a lock-upgrade deadlock. Nested use
(already inside a transaction) becomes a savepoint via sqlite-utils' ``atomic()``.

Every SQL write goes through here, so a full disk or an unwritable data dir met by any writer
(the DataEngine, the recall index, notes, chunks, the lease, migrations) becomes one
``StorageFull`` / ``DataDirReadOnly`` naming the database's own directory.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

from .storage import storage_error

if TYPE_CHECKING:
    import sqlite_utils


def _data_dir(db: sqlite_utils.Database) -> Path | None:
    """The directory of ``db``'s main file (None for an in-memory database or when unreadable)."""
    try:
        files = db.conn.execute("PRAGMA database_list").fetchall()
    except sqlite3.Error:
        return None
    for _, name, file in files:
        if name == "main" and file:
            return Path(file).parent
    return None


@contextmanager
def write_transaction(db: sqlite_utils.Database) -> Iterator[sqlite_utils.Database]:
    try:
        with _transaction(db) as held:
            yield held
    except (OSError, sqlite3.Error) as exc:
        where = _data_dir(db)  # looked up only when a write failed: no cost on the write path
        problem = storage_error(exc, where) if where is not None else None
        if problem is None:
            raise
        raise problem from exc


@contextmanager
def _transaction(db: sqlite_utils.Database) -> Iterator[sqlite_utils.Database]:
    conn = db.conn
    if conn.in_transaction:
        with db.atomic():
            yield db
        return
    conn.execute("BEGIN IMMEDIATE")
    try:
        yield db
    except BaseException:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise
    try:
        conn.execute("COMMIT")
    except BaseException:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise
