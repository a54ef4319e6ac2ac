from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
import sqlite_utils

from artemis_cli.engine import DataEngine, SchemaVersionError
from artemis_cli.engine.migrations import MIGRATIONS, migrate


def test_migrations_are_recorded(engine: DataEngine) -> None:
    rows = list(engine.db.query("SELECT id, name, applied_at FROM _migrations ORDER BY id"))
    assert [(r["id"], r["name"]) for r in rows] == [(i, name) for i, (name, _) in enumerate(MIGRATIONS, 1)]
    assert all(r["applied_at"] for r in rows)
    tables = set(engine.db.table_names())
    assert {"sessions", "steps", "blobs", "llm_calls", "events", "_migrations"} <= tables


def test_reopen_is_idempotent(data_dir: Path) -> None:
    DataEngine.open(data_dir).close()
    first = list(sqlite_utils.Database(data_dir / "artemis.db").query("SELECT * FROM _migrations"))
    with DataEngine.open(data_dir) as engine:
        assert migrate(engine.db) == []
        again = list(engine.db.query("SELECT * FROM _migrations"))
    assert again == first


def test_wal_foreign_keys_busy_timeout(engine: DataEngine) -> None:
    assert engine.db.journal_mode == "wal"
    assert next(iter(engine.db.query("PRAGMA foreign_keys")))["foreign_keys"] == 1
    assert next(iter(engine.db.query("PRAGMA busy_timeout")))["timeout"] == 5000
    assert (engine.data_dir / "blobs").is_dir()
    assert (engine.data_dir / "artemis.db").is_file()


def test_new_migration_is_applied_once_in_order(tmp_path: Path) -> None:
    db = sqlite_utils.Database(tmp_path / "x.db")
    assert migrate(db) == [name for name, _ in MIGRATIONS]

    def add_notes(d: sqlite_utils.Database) -> None:
        d.execute("CREATE TABLE demo_notes (id INTEGER PRIMARY KEY, key TEXT)")

    extended = [*MIGRATIONS, ("0002_demo_notes", add_notes)]
    assert migrate(db, extended) == ["0002_demo_notes"]
    assert migrate(db, extended) == []
    assert "demo_notes" in db.table_names()


def test_failing_migration_leaves_nothing(tmp_path: Path) -> None:
    db = sqlite_utils.Database(tmp_path / "x.db")
    migrate(db)

    def broken(d: sqlite_utils.Database) -> None:
        d.execute("CREATE TABLE half_done (id INTEGER PRIMARY KEY)")
        d.execute("THIS IS NOT SQL")

    with pytest.raises(sqlite3.OperationalError):
        migrate(db, [*MIGRATIONS, ("0002_broken", broken)])
    assert "half_done" not in db.table_names()
    assert [r["name"] for r in db.query("SELECT name FROM _migrations")] == [n for n, _ in MIGRATIONS]


def test_database_from_a_newer_artemis_is_refused(data_dir: Path) -> None:
    DataEngine.open(data_dir).close()
    db = sqlite_utils.Database(data_dir / "artemis.db")
    db.execute("INSERT INTO _migrations (id, name, applied_at) VALUES (99, '0099_future', 'x')")
    db.close()
    with pytest.raises(SchemaVersionError, match="0099_future"):
        DataEngine.open(data_dir)


def test_not_a_database_is_a_clear_error(data_dir: Path) -> None:
    from artemis_cli.engine import DataEngineError

    data_dir.mkdir(parents=True)
    (data_dir / "artemis.db").write_bytes(b"this is not sqlite at all" * 100)
    with pytest.raises(DataEngineError, match="cannot open"):
        DataEngine.open(data_dir)
