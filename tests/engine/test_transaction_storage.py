"""Every SQL write, whoever makes it, names the data dir when the disk is full or the dir is not
writable: ``write_transaction`` classifies, so writers beside the DataEngine (the recall index,
notes, chunks) need no wrapper of their own."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
import sqlite_utils

from artemis_cli.engine.errors import DataDirReadOnly
from artemis_cli.engine.transaction import write_transaction


def test_a_write_to_a_read_only_database_names_its_directory(tmp_path: Path) -> None:
    path = tmp_path / "artemis.db"
    sqlite_utils.Database(path)["notes"].insert({"text": "x"})
    db = sqlite_utils.Database(sqlite3.connect(f"file:{path}?mode=ro", uri=True))
    with pytest.raises(DataDirReadOnly, match=f"the data dir {tmp_path} is not writable"), write_transaction(db):
        db.execute("INSERT INTO notes (text) VALUES ('y')")


def test_other_errors_pass_unchanged(tmp_path: Path) -> None:
    db = sqlite_utils.Database(tmp_path / "artemis.db")
    with pytest.raises(sqlite3.OperationalError, match="no such table"), write_transaction(db):
        db.execute("INSERT INTO nosuch (text) VALUES ('y')")
