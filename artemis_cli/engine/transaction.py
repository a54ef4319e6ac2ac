"""One write transaction helper shared by migrations and the engine.

``BEGIN IMMEDIATE`` takes SQLite's write lock up front, so two processes writing the same
data dir wait on ``busy_timeout`` instead of failing with a lock-upgrade deadlock. Nested use
(already inside a transaction) becomes a savepoint via sqlite-utils' ``atomic()``.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import sqlite_utils


@contextmanager
def write_transaction(db: sqlite_utils.Database) -> Iterator[sqlite_utils.Database]:
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
