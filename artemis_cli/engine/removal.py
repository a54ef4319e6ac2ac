"""Removing a session: its rows in every table that has a ``session_id``, then blob files no
other row refers to (blobs are shared by content hash, so a screen another session saw stays)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from .records import BLOB_FIELDS
from .transaction import write_transaction

if TYPE_CHECKING:
    import sqlite_utils

    from .blobs import BlobStore

_BLOB_COLUMN_HINTS = ("sha", "screenshot", "blob", "xml", "image")


@dataclass(frozen=True)
class RemovedSession:
    session_id: str
    steps: int
    blobs_removed: int
    blobs_kept: int


def _columns(db: sqlite_utils.Database, table: str) -> list[str]:
    return [r[1] for r in db.execute(f"PRAGMA table_info([{table}])").fetchall()]


def tables_with_session_id(db: sqlite_utils.Database) -> list[str]:
    return [name for name in db.table_names() if name != "sessions" and "session_id" in _columns(db, name)]


def blob_still_used(db: sqlite_utils.Database, sha: str) -> bool:
    """True when any row of any table still names ``sha`` in a blob-like column."""
    for name in db.table_names():
        if name == "blobs":
            continue
        cols = _columns(db, name)
        candidates = BLOB_FIELDS if name == "steps" else [c for c in cols if any(k in c for k in _BLOB_COLUMN_HINTS)]
        for col in candidates:
            if col in cols and db.execute(f"SELECT 1 FROM [{name}] WHERE [{col}] = ? LIMIT 1", [sha]).fetchone():
                return True
    return False


def remove_session_rows(db: sqlite_utils.Database, blobs: BlobStore, session_id: str,
                        *, delete_blobs: bool = True) -> RemovedSession:
    """Delete the session's rows in one transaction, then each unused blob (row and file) in its
    own. Replays of the session keep their rows (their ``parent_session`` becomes NULL)."""
    steps = db.execute("SELECT count(*) FROM steps WHERE session_id = ?", [session_id]).fetchone()[0]
    shas: set[str] = set()
    for row in db.execute(f"SELECT {', '.join(BLOB_FIELDS)} FROM steps WHERE session_id = ?", [session_id]).fetchall():
        shas.update(v for v in row if v)
    with write_transaction(db):
        for table in tables_with_session_id(db):
            db.execute(f"DELETE FROM [{table}] WHERE session_id = ?", [session_id])
        db.execute("DELETE FROM sessions WHERE id = ?", [session_id])
    removed = 0
    if delete_blobs:
        for sha in sorted(shas):
            with write_transaction(db):
                if blob_still_used(db, sha):
                    continue
                db.execute("DELETE FROM blobs WHERE sha256 = ?", [sha])
                blobs.path(sha).unlink(missing_ok=True)
                removed += 1
    return RemovedSession(session_id, steps, removed, len(shas) - removed)
