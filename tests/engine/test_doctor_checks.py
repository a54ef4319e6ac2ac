"""engine.health: the data checks behind `artemis doctor`, on real data dirs (real SQLite, real
files). Each damage is made on disk the way it happens to users: a deleted or edited blob file,
overwritten database pages, a read-only or immutable file, a database from an older or newer
Artemis."""

from __future__ import annotations

import os
import shutil
import sqlite3
import subprocess
from pathlib import Path

import pytest
import sqlite_utils

from artemis_cli.engine import DataEngine, StepRecord
from artemis_cli.engine.health import (
    DB_DAMAGED_HINT,
    FREE_SPACE_ERROR_BYTES,
    FREE_SPACE_WARN_BYTES,
    Finding,
    check_blobs,
    check_data_dir,
    check_free_space,
    open_read_only,
)
from artemis_cli.engine.migrations import MIGRATIONS, migrate


def problems(found: list[Finding]) -> list[Finding]:
    return [f for f in found if f.level != "ok"]


def rows(found: list[Finding], check: str) -> list[Finding]:
    return [f for f in found if f.check == check]


def record(engine: DataEngine, session_id: str, number: int, **blobs: bytes) -> StepRecord:
    kinds = {"ui_xml": "ui_xml", "post_ui_xml": "ui_xml", "marker": "marker"}
    return engine.record_step(
        StepRecord(session_id=session_id, number=number, action_type="tap"),
        blobs={name: (data, kinds.get(name, "screenshot")) for name, data in blobs.items()},
    )


@pytest.fixture
def recorded(engine: DataEngine, session_id: str) -> list[StepRecord]:
    """Three steps; step 2's pre_screenshot is step 1's post_screenshot (stored once)."""
    return [
        record(engine, session_id, 1, pre_screenshot=b"screen-a", post_screenshot=b"screen-b", ui_xml=b"<a/>"),
        record(engine, session_id, 2, pre_screenshot=b"screen-b", post_screenshot=b"screen-c", ui_xml=b"<b/>"),
        record(engine, session_id, 3, pre_screenshot=b"screen-c", post_screenshot=b"screen-d", marker=b"mk"),
    ]


def test_a_healthy_data_dir_has_no_problems(engine: DataEngine, recorded: list[StepRecord]) -> None:
    for deep in (False, True):
        found = check_data_dir(engine.data_dir, deep=deep)
        assert problems(found) == [], found
        assert [f.check for f in found] == ["data dir", "data dir writable", "free space", "database", "blobs"]
        assert "integrity ok, foreign keys ok" in rows(found, "database")[0].detail
        assert f"schema {len(MIGRATIONS)}/{len(MIGRATIONS)}" in rows(found, "database")[0].detail
        blobs = rows(found, "blobs")[0].detail
        assert blobs.startswith("7 referenced blob(s) present")
        assert ("SHA-256 verified" in blobs) is deep


def test_a_deleted_blob_names_its_step_session_and_field(
    engine: DataEngine, session_id: str, recorded: list[StepRecord]
) -> None:
    sha = recorded[2].post_screenshot
    assert sha is not None
    engine.blobs.path(sha).unlink()
    [problem] = problems(check_data_dir(engine.data_dir))
    assert problem.check == "blobs" and problem.level == "error"
    assert problem.detail == f"step 3 of session {session_id}: post_screenshot blob {sha[:12]}… is missing"
    assert "restore the missing files" in problem.hint and str(engine.blobs.root) in problem.hint


def test_a_shared_blob_names_its_first_step_and_the_others(
    engine: DataEngine, session_id: str, recorded: list[StepRecord]
) -> None:
    sha = recorded[0].post_screenshot  # also step 2's pre_screenshot
    assert sha is not None and sha == recorded[1].pre_screenshot
    engine.blobs.path(sha).unlink()
    [problem] = problems(check_data_dir(engine.data_dir))
    assert problem.detail.startswith(f"step 1 of session {session_id}: post_screenshot blob {sha[:12]}… is missing")
    assert problem.detail.endswith("(also used by step 2 pre_screenshot)")


def test_many_missing_blobs_are_listed_by_session_and_step(
    engine: DataEngine, session_id: str, recorded: list[StepRecord]
) -> None:
    shutil.rmtree(engine.blobs.root)
    found = problems(check_data_dir(engine.data_dir))
    assert len(found) == 7  # one line per missing blob, not per reference
    assert [f.detail.split(":")[0] for f in found] == [
        f"step {n} of session {session_id}" for n in (1, 1, 1, 2, 2, 3, 3)
    ]


def test_a_blob_only_in_the_blobs_table_is_named_by_its_kind(engine: DataEngine, recorded: list[StepRecord]) -> None:
    sha = engine.store_blob(b"an attachment", "screenshot")
    engine.blobs.path(sha).unlink()
    [problem] = problems(check_data_dir(engine.data_dir))
    assert problem.detail == f"blobs table, kind screenshot: blob {sha[:12]}… is missing"


def test_an_altered_blob_is_found_only_by_deep(
    engine: DataEngine, session_id: str, recorded: list[StepRecord]
) -> None:
    sha = recorded[1].ui_xml
    assert sha is not None
    engine.blobs.path(sha).write_bytes(b"<b changed='1'/>")
    assert problems(check_data_dir(engine.data_dir)) == []  # presence only: same name, file there
    [problem] = problems(check_data_dir(engine.data_dir, deep=True))
    assert problem.detail.startswith(f"step 2 of session {session_id}: ui_xml blob {sha[:12]}… is altered")
    assert "restore it from a backup" in problem.hint


def test_deep_reports_progress_once_per_file(engine: DataEngine, recorded: list[StepRecord]) -> None:
    seen: list[tuple[int, int]] = []
    check_data_dir(engine.data_dir, deep=True, progress=lambda done, total: seen.append((done, total)))
    assert seen == [(n, 7) for n in range(1, 8)]


def test_a_step_that_holds_no_hash_is_reported(engine: DataEngine, session_id: str, recorded: list[StepRecord]) -> None:
    engine.db.execute("UPDATE steps SET marker = 'not-a-hash' WHERE number = 3")
    [problem] = problems(check_data_dir(engine.data_dir))
    assert problem.detail == f"step 3 of session {session_id}: marker holds 'not-a-hash', which is not a SHA-256 hash"


def test_the_presence_check_is_one_query_whatever_the_number_of_steps(
    engine: DataEngine, session_id: str
) -> None:
    def statements(steps: int) -> int:
        first = engine.last_step_number(session_id) + 1
        with engine.batch():
            for n in range(first, first + steps):
                record(engine, session_id, n, pre_screenshot=b"same", post_screenshot=f"{n}".encode())
        conn = sqlite3.connect(engine.db_path)
        run: list[str] = []
        conn.set_trace_callback(run.append)
        found = check_blobs(conn, engine.blobs.root)
        conn.close()
        assert [f.level for f in found] == ["ok"], found
        return len(run)

    assert statements(5) == statements(1000)


def test_a_missing_data_dir_is_fine_and_not_created(tmp_path: Path) -> None:
    path = tmp_path / "not" / "yet"
    found = check_data_dir(path)
    assert problems(found) == []
    assert "does not exist yet" in rows(found, "data dir")[0].detail
    assert rows(found, "data dir writable")[0].detail.startswith(f"{tmp_path} is writable")
    assert not (tmp_path / "not").exists()


def test_a_data_dir_that_is_a_file_is_an_error(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("x")
    [problem] = check_data_dir(tmp_path / "file")
    assert problem.level == "error" and "not a directory" in problem.detail


def test_an_empty_data_dir_is_new(tmp_path: Path) -> None:
    found = check_data_dir(tmp_path)
    assert problems(found) == []
    assert rows(found, "database")[0].detail.startswith("no artemis.db yet")
    assert sorted(os.listdir(tmp_path)) == []


def test_blob_files_without_a_database_are_a_warning(engine: DataEngine, recorded: list[StepRecord]) -> None:
    engine.close()
    engine.db_path.unlink()
    [problem] = problems(check_data_dir(engine.data_dir))
    assert problem.level == "warning" and "7 blob file(s)" in problem.detail and problem.ok


def test_the_check_never_migrates_or_writes(tmp_path: Path) -> None:
    """An old database stays old (the next run upgrades it), and no file appears or changes."""
    root = tmp_path / "data"
    root.mkdir()
    old = sqlite_utils.Database(root / "artemis.db")
    old.enable_wal()
    migrate(old, MIGRATIONS[:2])
    old.close()
    before = {p.name: p.read_bytes() for p in root.iterdir()}
    found = check_data_dir(root, deep=True)
    assert problems(found) == []
    assert f"schema 2/{len(MIGRATIONS)} (the next run upgrades it)" in rows(found, "database")[0].detail
    assert {p.name: p.read_bytes() for p in root.iterdir()} == before


def test_a_database_from_a_newer_artemis_is_an_error(engine: DataEngine) -> None:
    engine.db.execute("INSERT INTO _migrations (id, name, applied_at) VALUES (?, 'from_the_future', 'x')",
                      [len(MIGRATIONS) + 1])
    [problem] = problems(check_data_dir(engine.data_dir))
    assert "unknown to this Artemis" in problem.detail and "upgrade Artemis" in problem.hint


def test_the_open_engine_s_newest_rows_in_the_wal_are_read(engine: DataEngine, recorded: list[StepRecord]) -> None:
    assert engine.db_path.with_name("artemis.db-wal").exists()  # the engine is open: rows may be in the WAL
    sha = engine.store_blob(b"just now", "screenshot")
    conn, note = open_read_only(engine.db_path)
    with conn:
        assert note == ""
        assert conn.execute("SELECT count(*) FROM blobs WHERE sha256 = ?", [sha]).fetchone() == (1,)
    conn.close()


def test_foreign_key_violations_are_reported(engine: DataEngine) -> None:
    engine.db.execute("PRAGMA foreign_keys = OFF")
    engine.db.execute(
        "INSERT INTO events (session_id, kind, created_at) VALUES ('ghost', 'x', '2024-01-01T00:00:00+00:00')"
    )
    [problem] = problems(check_data_dir(engine.data_dir))
    assert problem.detail.startswith("foreign key: events row") and "missing sessions row" in problem.detail
    assert problem.hint == DB_DAMAGED_HINT


def _checkpointed(engine: DataEngine) -> Path:
    engine.close()  # the last connection checkpoints the WAL into artemis.db and removes it
    assert not engine.db_path.with_name("artemis.db-wal").exists()
    return engine.db_path


def test_a_damaged_index_is_reported_by_integrity_check(
    engine: DataEngine, session_id: str, recorded: list[StepRecord]
) -> None:
    path = _checkpointed(engine)
    data = bytearray(path.read_bytes())
    # Change the session id inside the index entries (not the table rows) of steps.
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    root = conn.execute("SELECT rootpage FROM sqlite_schema WHERE name = 'idx_steps_session_number'").fetchone()[0]
    page_size = conn.execute("PRAGMA page_size").fetchone()[0]
    conn.close()
    page = slice((root - 1) * page_size, root * page_size)
    at = data[page].find(session_id.encode())
    assert at > 0
    start = page.start + at
    data[start:start + 4] = b"1999"
    path.write_bytes(bytes(data))
    found = problems(check_data_dir(path.parent))
    assert found and all(f.check == "database" and f.level == "error" for f in found)
    assert any("missing from index idx_steps_session_number" in f.detail for f in found)
    assert all(f.hint == DB_DAMAGED_HINT for f in found)


def test_overwritten_pages_are_reported_not_raised(engine: DataEngine, recorded: list[StepRecord]) -> None:
    path = _checkpointed(engine)
    size = path.stat().st_size
    with open(path, "r+b") as handle:
        handle.seek(size // 2)
        handle.write(b"\xa5" * 8192)
    found = problems(check_data_dir(path.parent))
    assert found and found[0].check == "database" and found[0].level == "error"
    assert "malformed" in found[0].detail and found[0].hint == DB_DAMAGED_HINT


def test_a_file_that_is_not_a_database(engine: DataEngine) -> None:
    path = _checkpointed(engine)
    path.write_bytes(b"this is not SQLite" * 300)
    [problem] = problems(check_data_dir(path.parent))
    assert "file is not a database" in problem.detail and problem.hint == DB_DAMAGED_HINT


def test_free_space_thresholds(tmp_path: Path) -> None:
    assert FREE_SPACE_ERROR_BYTES < FREE_SPACE_WARN_BYTES
    free = shutil.disk_usage(tmp_path).free
    assert check_free_space(tmp_path, warn_bytes=0, error_bytes=0).level == "ok"
    warn = check_free_space(tmp_path, warn_bytes=free * 2, error_bytes=0)
    assert warn.level == "warning" and warn.ok and "a long run may fill it" in warn.detail
    error = check_free_space(tmp_path, warn_bytes=free * 2, error_bytes=free * 2)
    assert error.level == "error" and "disk full" in error.detail and "free space" in error.hint


def test_a_database_marked_read_only(engine: DataEngine, recorded: list[StepRecord]) -> None:
    path = _checkpointed(engine)
    path.chmod(0o444)
    found = problems(check_data_dir(path.parent))
    assert [f.check for f in found] == ["data dir writable"]
    assert str(path) in found[0].detail and "r--r--r--" in found[0].detail
    if os.geteuid() == 0:  # root writes anyway: say so, without failing
        assert found[0].level == "warning" and "chmod u+w" in found[0].hint
    else:
        assert found[0].level == "error"


def test_an_immutable_database_is_not_writable_even_for_root(engine: DataEngine, recorded: list[StepRecord]) -> None:
    path = _checkpointed(engine)
    if subprocess.run(["chattr", "+i", str(path)], capture_output=True).returncode != 0:
        pytest.skip("chattr +i is not permitted here")
    try:
        found = problems(check_data_dir(path.parent))
    finally:
        subprocess.run(["chattr", "-i", str(path)], check=True)
    [problem] = found
    assert problem.level == "error" and f"{path} is not writable" in problem.detail
    assert "chattr -i" in problem.hint


def test_a_relative_data_dir_is_checked_and_named_in_full(
    engine: DataEngine, recorded: list[StepRecord], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(engine.data_dir.parent)
    found = check_data_dir(engine.data_dir.name)
    assert problems(found) == []
    assert rows(found, "data dir")[0].detail == str(engine.data_dir)
