"""Opening a data dir for reading only: refuse a dir that holds no Artemis data (reading never
creates one) and open a database read-only where nothing can be written (a read-only mount,
another user's files, a disk too full for SQLite's WAL index)."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from .errors import DataEngineError, NoArtemisData
from .migrations import check_schema_current

DB_FILENAME = "artemis.db"
BUSY_TIMEOUT_MS = 5000


def require_data(root: Path) -> None:
    if not (root / DB_FILENAME).is_file():
        raise NoArtemisData(f"no Artemis data in {root}",
                            hint="pass the --data-dir your sessions were recorded in (default: $ARTEMIS_HOME, "
                                 "else the user data dir); `artemis run` creates it")


#: mode=ro reads a WAL database when its -shm can be opened; immutable=1 reads it when nothing
#: can be written at all (no other process can be writing a read-only dir; elsewhere it could
#: miss what a writer's WAL holds).
READ_ONLY_FLAGS = ("mode=ro", "mode=ro&immutable=1")


def connect_if_current(root: Path) -> sqlite3.Connection | None:
    """A read-only connection that takes no write lock when the database needs nothing done
    (mode=ro, never immutable: what a writer's WAL holds counts); None when it needs upgrading
    or a read-only connection cannot read it as it is. ``NoArtemisData`` without a database."""
    require_data(root)
    try:
        return connect_read_only(root, ("mode=ro",))
    except DataEngineError:  # an older schema (SchemaVersionError), or a WAL it cannot open
        return None


def connect_read_only(root: Path, flags_tried: tuple[str, ...] = READ_ONLY_FLAGS) -> sqlite3.Connection:
    """A read-only stdlib connection to ``root``'s database, whose schema must be current."""
    path = root / DB_FILENAME  # it exists: the caller ran require_data before us
    last: sqlite3.Error | None = None
    for flags in flags_tried:
        conn = sqlite3.connect(f"{path.resolve().as_uri()}?{flags}", uri=True, check_same_thread=False)
        try:
            conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
            check_schema_current(conn)
        except sqlite3.Error as exc:
            conn.close()
            last = exc
            continue
        except BaseException:
            conn.close()
            raise
        return conn
    raise DataEngineError(f"cannot open {path} read-only: {last}",
                          hint="check the path, or copy the data dir somewhere writable")
