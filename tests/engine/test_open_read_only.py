"""``DataEngine.open_read_only`` (what ``sessions list`` opens, issue 38 start-up): a read-only
stdlib connection that reads the same rows as the usual open, takes no write lock, and hands a
database that needs upgrading to the usual open (which upgrades it). Real SQLite throughout."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from artemis_cli.engine import DataEngine, SessionRecord
from artemis_cli.engine import lease as lease_mod
from artemis_cli.engine.errors import DataDirReadOnly, NoArtemisData
from artemis_cli.engine.migrations import MIGRATIONS, applied_migrations, migrate


def _seed(data_dir: Path) -> list[str]:
    with DataEngine.open(data_dir) as engine:
        ids = [engine.create_session(SessionRecord(goal=f"goal {i}", task_id=f"task-{i % 2}", status=status))
               for i, status in enumerate(["succeeded", "failed", "running", "running"])]
        # the first running session's owner is gone (a dead pid): it is listed as interrupted
        engine.db.execute("INSERT INTO session_leases VALUES (?, ?, ?, NULL, 'run', 'tok', ?, ?)",
                          [ids[2], lease_mod.this_host(), 2**22 + 17, lease_mod.now_iso(), lease_mod.now_iso()])
        engine.db.conn.commit()
    return ids


def test_it_reads_the_same_rows_as_the_usual_open(tmp_path: Path) -> None:
    data_dir = tmp_path / "data"
    ids = _seed(data_dir)
    with DataEngine.open_for_reading(data_dir) as usual, DataEngine.open_read_only(data_dir) as light:
        assert light.read_only and light._db is None  # a stdlib connection, no sqlite-utils
        for kwargs in ({}, {"status": "interrupted"}, {"status": "running"}, {"task_id": "task-1"}, {"limit": 2}):
            assert light.list_sessions(**kwargs) == usual.list_sessions(**kwargs), kwargs
        assert light.session_count() == usual.session_count() == 4
        assert [light.step_count(i) for i in ids] == [usual.step_count(i) for i in ids]
        statuses = {r.id: r.status for r in light.list_sessions()}
        assert statuses[ids[2]] == "interrupted" and statuses[ids[3]] == "interrupted"  # no live owner
        with pytest.raises(DataDirReadOnly):
            light.create_session(SessionRecord(goal="not here"))


def test_it_needs_artemis_data_and_creates_nothing(tmp_path: Path) -> None:
    with pytest.raises(NoArtemisData):
        DataEngine.open_read_only(tmp_path / "none")
    assert not (tmp_path / "none").exists()


def test_a_database_that_needs_upgrading_is_upgraded_as_before(tmp_path: Path) -> None:
    from artemis_cli.engine._sqlite import sqlite_utils

    data_dir = tmp_path / "data"
    data_dir.mkdir()
    older = sqlite_utils.Database(data_dir / "artemis.db")  # as the Artemis before the last migration left it
    migrate(older, MIGRATIONS[:-1])
    older.close()
    with DataEngine.open_read_only(data_dir) as engine:
        assert not engine.read_only  # the usual open, which upgraded it
        assert len(applied_migrations(engine.conn)) == len(MIGRATIONS)


def test_it_takes_no_write_lock(tmp_path: Path) -> None:
    """A writer holds the write lock (BEGIN IMMEDIATE): ``sessions list`` still answers at once,
    where opening for writing waits out the busy timeout and fails."""
    data_dir = tmp_path / "data"
    ids = _seed(data_dir)
    writer = sqlite3.connect(data_dir / "artemis.db", timeout=0)
    writer.execute("BEGIN IMMEDIATE")
    try:
        proc = subprocess.run([sys.executable, "-m", "artemis_cli", "sessions", "list", "--quiet"],
                              capture_output=True, text=True, timeout=60,
                              env={**os.environ, "ARTEMIS_HOME": str(data_dir)})
    finally:
        writer.rollback()
        writer.close()
    assert proc.returncode == 0, proc.stderr
    assert sorted(proc.stdout.split()) == sorted(ids)


def test_a_write_lock_held_too_long_is_named_as_such(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Opening to write while another connection keeps the write lock past the busy timeout says
    so, and does not call the database damaged."""
    from artemis_cli.engine import connection
    from artemis_cli.engine.errors import DataEngineError

    data_dir = tmp_path / "data"
    _seed(data_dir)
    monkeypatch.setattr(connection, "BUSY_TIMEOUT_MS", 200)  # the wait itself is SQLite's
    writer = sqlite3.connect(data_dir / "artemis.db", timeout=0)
    writer.execute("BEGIN IMMEDIATE")
    try:
        with pytest.raises(DataEngineError) as caught:
            DataEngine.open(data_dir)
    finally:
        writer.rollback()
        writer.close()
    assert "held its write lock for 0.2 s" in str(caught.value)
    assert "damaged" not in (caught.value.hint or "") and "try again" in (caught.value.hint or "")
