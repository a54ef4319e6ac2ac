from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from artemis_cli.engine import BlobMissing, BlobStore, DataEngine, StepRecord


def test_put_is_sharded_and_verifiable(tmp_path: Path) -> None:
    store = BlobStore(tmp_path / "blobs")
    data = b"\x89PNG fake screenshot bytes"
    sha = store.put(data)
    assert sha == hashlib.sha256(data).hexdigest()
    assert store.path(sha) == tmp_path / "blobs" / sha[:2] / sha
    assert store.path(sha).read_bytes() == data
    assert store.get(sha) == data
    assert store.exists(sha) and store.verify(sha)
    assert list(store) == [sha]
    assert not [p for p in (tmp_path / "blobs").rglob("*") if p.name.startswith(".tmp-")]


def test_same_bytes_are_stored_once(tmp_path: Path) -> None:
    store = BlobStore(tmp_path / "blobs")
    sha = store.put(b"same")
    before = store.path(sha).stat()
    assert store.put(b"same") == sha
    after = store.path(sha).stat()
    assert (before.st_ino, before.st_mtime_ns) == (after.st_ino, after.st_mtime_ns)  # write skipped
    assert [p for p in (tmp_path / "blobs").rglob("*") if p.is_file()] == [store.path(sha)]


def test_missing_and_malformed_blobs_raise(tmp_path: Path) -> None:
    store = BlobStore(tmp_path / "blobs")
    with pytest.raises(BlobMissing, match="missing"):
        store.get("ab" * 32)
    with pytest.raises(BlobMissing, match="not a SHA-256"):
        store.get("../../etc/passwd")
    assert not store.exists("nope")
    sha = store.put(b"x")
    store.path(sha).write_bytes(b"tampered")
    assert not store.verify(sha)


def test_engine_dedupes_files_and_rows(engine: DataEngine, session_id: str) -> None:
    shot = b"identical screenshot"
    for number in (1, 2):
        engine.record_step(
            StepRecord(session_id=session_id, number=number, action_type="tap"),
            blobs={"pre_screenshot": (shot, "screenshot"), "post_screenshot": (shot, "screenshot")},
        )
    sha = engine.store_blob(shot, "screenshot")
    rows = list(engine.db.query("SELECT * FROM blobs"))
    assert [(r["sha256"], r["kind"], r["size"]) for r in rows] == [(sha, "screenshot", len(shot))]
    files = [p for p in (engine.data_dir / "blobs").rglob("*") if p.is_file()]
    assert files == [engine.data_dir / "blobs" / sha[:2] / sha]
    assert engine.blob(sha) == shot
