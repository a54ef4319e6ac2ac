"""Session bundles (engine/bundle.py): a recorded session carried to another data dir, checked
hash by hash before anything is written, imported once, never merged."""

from __future__ import annotations

import json
import re
import zipfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from artemis_cli.engine import BlobMissing, DataEngine, SessionRecord
from artemis_cli.engine.blobs import sha256_hex
from artemis_cli.engine.bundle import (
    DERIVED_TABLES,
    FORMAT,
    VERSION,
    ImportResult,
    import_bundle,
    read_manifest,
    session_tables,
    write_bundle,
)
from artemis_cli.engine.health import integrity_problems, missing_blobs
from artemis_cli.engine.migrations import MIGRATIONS
from artemis_cli.errors import BundleConflict, BundleError, UsageError
from artemis_cli.memory.chunk_store import ChunkRow, append_chunk_version
from artemis_cli.memory.notes import save_note
from artemis_cli.memory.turn_check import check_turn

CARRIED = ("sessions", "steps", "llm_calls", "events", "notes", "history_chunks")


@pytest.fixture
def recorded(engine: DataEngine, record_task: Callable[..., Any]) -> str:
    """demo.yaml recorded with the scripted model, plus two note versions and a chunk."""
    sid: str = record_task(engine, "demo.yaml").session_id
    save_note(engine, sid, "wifi", "the switch is on the Internet page", 2)
    save_note(engine, sid, "wifi", "Wi-Fi switch id: wifi_switch", 3)
    append_chunk_version(engine, ChunkRow(session_id=sid, start_step=1, end_step=2, status="ready",
                                          band2="opened settings", rendered="steps 1-2: opened Settings, Network"))
    return sid


@pytest.fixture
def other(tmp_path: Path) -> Iterator[DataEngine]:
    with DataEngine.open(tmp_path / "other") as eng:
        yield eng


def rows(engine: DataEngine, table: str, sid: str, *, drop: tuple[str, ...] = ()) -> list[dict[str, Any]]:
    key = "id" if table == "sessions" else "session_id"
    found = [dict(r) for r in engine.db.query(f"SELECT * FROM [{table}] WHERE [{key}] = ? ORDER BY rowid", [sid])]
    return [{k: v for k, v in r.items() if k not in drop} for r in found]


def dump(engine: DataEngine) -> dict[str, list[tuple[Any, ...]]]:
    """Every row of every table (FTS shadow tables included): to prove nothing changed."""
    names = [r[0] for r in engine.db.execute("SELECT name FROM sqlite_master WHERE type = 'table'").fetchall()]
    return {n: sorted(map(tuple, engine.db.execute(f"SELECT * FROM [{n}]").fetchall()), key=repr) for n in names}


def blob_files(engine: DataEngine) -> set[str]:
    return set(engine.blobs)


def rewrite(src: Path, dst: Path, *, members: dict[str, bytes | None] | None = None,
            manifest: Callable[[dict[str, Any]], None] | None = None,
            payload: Callable[[dict[str, Any]], None] | None = None) -> Path:
    """A copy of bundle ``src``: members replaced (None drops one), the manifest edited, or the
    rows payload edited and re-hashed in the manifest (a consistent, forged bundle)."""
    with zipfile.ZipFile(src) as zf:
        content = {n: zf.read(n) for n in zf.namelist()}
    for name, data in (members or {}).items():
        if data is None:
            content.pop(name, None)
        else:
            content[name] = data
    meta = json.loads(content["manifest.json"])
    if payload is not None:
        data_rows = json.loads(content["rows.json"])
        payload(data_rows)
        content["rows.json"] = json.dumps(data_rows).encode()
        meta["rows"].update(sha256=sha256_hex(content["rows.json"]), size=len(content["rows.json"]))
    if manifest is not None:
        manifest(meta)
    content["manifest.json"] = json.dumps(meta).encode()
    with zipfile.ZipFile(dst, "w") as zf:
        for name, data in content.items():
            zf.writestr(name, data)
    return dst


# --- writing --------------------------------------------------------------------------------


def test_bundle_holds_the_rows_every_blob_and_a_manifest_of_hashes(engine: DataEngine, recorded: str,
                                                                  tmp_path: Path) -> None:
    path = tmp_path / "run.artemis"
    manifest = write_bundle(engine, recorded, path)
    assert manifest == read_manifest(path)
    assert manifest["format"] == FORMAT == "artemis-bundle" and manifest["version"] == VERSION == 1
    assert manifest["schema"] == {"migration": len(MIGRATIONS), "name": MIGRATIONS[-1][0]}
    assert manifest["session_id"] == recorded and manifest["created_at"]
    assert manifest["tables"] == [*CARRIED, "blobs"] and manifest["derived"] == list(DERIVED_TABLES)
    counts = manifest["counts"]["rows"]
    assert counts["sessions"] == 1 and counts["steps"] == engine.step_count(recorded) == 4
    assert counts["llm_calls"] == len(engine.llm_calls(recorded)) and counts["events"] == len(engine.events(recorded))
    assert counts["notes"] == 2 and counts["history_chunks"] == 1

    step_blobs = {sha for s in engine.get_steps(recorded) for sha in s.blob_refs().values()}
    carried = {b["sha256"] for b in manifest["blobs"]}
    assert step_blobs and step_blobs <= carried and manifest["counts"]["blobs"] == len(carried)
    with zipfile.ZipFile(path) as zf:
        names = set(zf.namelist())
        assert names == {"manifest.json", "rows.json", *(f"blobs/{sha}" for sha in carried)}
        assert sha256_hex(zf.read("rows.json")) == manifest["rows"]["sha256"]
        for sha in carried:
            info = zf.getinfo(f"blobs/{sha}")
            data = zf.read(info)
            assert sha256_hex(data) == sha and data == engine.blob(sha)
            if data.startswith(b"\x89PNG"):
                assert info.compress_type == zipfile.ZIP_STORED  # already compressed
        payload = json.loads(zf.read("rows.json"))
    assert "session_leases" not in payload["tables"] and not set(DERIVED_TABLES) & set(payload["tables"])


def test_session_tables_are_the_carried_ones(engine: DataEngine) -> None:
    assert session_tables(engine.db) == list(CARRIED)


def test_a_missing_blob_is_refused_at_export(engine: DataEngine, recorded: str, tmp_path: Path) -> None:
    sha = engine.get_step(recorded, 2).pre_screenshot
    assert sha
    engine.blobs.path(sha).unlink()
    with pytest.raises(BlobMissing, match="step 2: pre_screenshot"):
        write_bundle(engine, recorded, tmp_path / "run.artemis")
    assert not (tmp_path / "run.artemis").exists()


# --- importing ------------------------------------------------------------------------------


def test_round_trip_into_a_fresh_data_dir_keeps_rows_ids_timestamps_and_blobs(
        engine: DataEngine, recorded: str, other: DataEngine, tmp_path: Path) -> None:
    path = tmp_path / "run.artemis"
    manifest = write_bundle(engine, recorded, path)
    result = import_bundle(other, path)
    n_rows = sum(v for t, v in manifest["counts"]["rows"].items() if t != "blobs")
    assert result == ImportResult(session_id=recorded, imported=True, rows=n_rows, blobs=manifest["counts"]["blobs"])
    for table in CARRIED:  # every column, integer ids and timestamps included
        assert rows(other, table, recorded) == rows(engine, table, recorded), table
    for entry in manifest["blobs"]:
        assert other.blob(entry["sha256"]) == engine.blob(entry["sha256"])
    src_blobs = {r["sha256"]: r for r in engine.db.query("SELECT * FROM blobs")}
    for r in other.db.query("SELECT * FROM blobs"):
        assert r == src_blobs[r["sha256"]]
    assert other.get_session(recorded) == engine.get_session(recorded)
    assert missing_blobs(other) == [] and integrity_problems(other) == []
    assert check_turn(other, recorded, 1).match and check_turn(other, recorded, 3).match
    # the recall index was rebuilt (not carried): every step field, the newest note version and
    # the chunk, with the same words (the UI text is re-read from the dump: separators may differ)
    def index(eng: DataEngine, fts: str) -> list[tuple[Any, ...]]:
        found = eng.db.execute(f"SELECT * FROM {fts} WHERE session_id = ? ORDER BY rowid", [recorded]).fetchall()
        return [(*r[:-1], sorted(set(re.findall(r"\w+", r[-1])))) for r in found]

    for fts in ("step_fts", "note_fts", "chunk_fts"):
        assert index(other, fts) == index(engine, fts), fts
    assert [r["version"] for r in other.db.query("SELECT version FROM note_fts")] == [2]
    assert other.db.execute("SELECT count(*) FROM recall_indexed WHERE session_id = ?", [recorded]).fetchone()[0] == 4


def test_importing_twice_changes_nothing(engine: DataEngine, recorded: str, other: DataEngine,
                                         tmp_path: Path) -> None:
    path = tmp_path / "run.artemis"
    write_bundle(engine, recorded, path)
    assert import_bundle(other, path).imported
    before, files, changes = dump(other), blob_files(other), other.db.conn.total_changes
    again = import_bundle(other, path)
    assert again.session_id == recorded and again.imported is False
    assert dump(other) == before and blob_files(other) == files and other.db.conn.total_changes == changes
    # and into the data dir it came from: already present
    assert import_bundle(engine, path).imported is False


def test_a_tampered_blob_is_refused_and_nothing_is_written(engine: DataEngine, recorded: str, other: DataEngine,
                                                           tmp_path: Path) -> None:
    good = tmp_path / "run.artemis"
    manifest = write_bundle(engine, recorded, good)
    sha = manifest["blobs"][-1]["sha256"]
    data = bytearray(engine.blob(sha))
    data[len(data) // 2] ^= 0xFF  # same size, other content
    bad = rewrite(good, tmp_path / "bad.artemis", members={f"blobs/{sha}": bytes(data)})
    before = dump(other)
    with pytest.raises(BundleError, match=f"member blobs/{sha} does not match its SHA-256") as info:
        import_bundle(other, bad)
    assert info.value.exit_code == 2
    assert dump(other) == before and blob_files(other) == set()


def test_a_blob_damaged_in_place_is_refused(engine: DataEngine, recorded: str, other: DataEngine,
                                            tmp_path: Path) -> None:
    """Bytes flipped inside the zip itself (its CRC no longer matches either)."""
    path = tmp_path / "run.artemis"
    manifest = write_bundle(engine, recorded, path)
    sha = next(b["sha256"] for b in manifest["blobs"] if engine.blob(b["sha256"]).startswith(b"\x89PNG"))
    raw = bytearray(path.read_bytes())
    at = raw.index(engine.blob(sha)) + 100  # a stored (uncompressed) member
    raw[at] ^= 0xFF
    path.write_bytes(bytes(raw))
    with pytest.raises(BundleError, match=f"member blobs/{sha}"):
        import_bundle(other, path)
    assert blob_files(other) == set() and other.list_sessions() == []


def test_tampered_rows_are_refused(engine: DataEngine, recorded: str, other: DataEngine, tmp_path: Path) -> None:
    good = tmp_path / "run.artemis"
    write_bundle(engine, recorded, good)
    with zipfile.ZipFile(good) as zf:
        text = zf.read("rows.json").decode()
    for forged in (text.replace('"succeeded"', '"failed"', 1),  # shorter
                   text.replace('"succeeded"', '"succeedeX"', 1)):  # same size, other content
        assert forged != text
        bad = rewrite(good, tmp_path / "bad.artemis", members={"rows.json": forged.encode()})
        with pytest.raises(BundleError, match=r"member rows\.json does not match its SHA-256"):
            import_bundle(other, bad)
    assert other.list_sessions() == [] and blob_files(other) == set()


def test_a_missing_or_extra_member_is_refused(engine: DataEngine, recorded: str, other: DataEngine,
                                              tmp_path: Path) -> None:
    good = tmp_path / "run.artemis"
    manifest = write_bundle(engine, recorded, good)
    sha = manifest["blobs"][0]["sha256"]
    with pytest.raises(BundleError, match=f"member blobs/{sha} is missing"):
        import_bundle(other, rewrite(good, tmp_path / "a.artemis", members={f"blobs/{sha}": None}))
    with pytest.raises(BundleError, match=r"member extra\.txt is not listed"):
        import_bundle(other, rewrite(good, tmp_path / "b.artemis", members={"extra.txt": b"hi"}))
    assert other.list_sessions() == []


def test_a_forged_consistent_bundle_cannot_touch_other_sessions_or_tables(
        engine: DataEngine, recorded: str, other: DataEngine, tmp_path: Path) -> None:
    """Hashes only prove the members match the manifest: the rows are still checked."""
    good = tmp_path / "run.artemis"
    write_bundle(engine, recorded, good)

    def foreign_event(data: dict[str, Any]) -> None:
        events = data["tables"]["events"]
        row = list(events["rows"][0])
        row[events["columns"].index("session_id")] = "someone-else"
        events["rows"].append(row)

    def lease(data: dict[str, Any]) -> None:
        data["tables"]["session_leases"] = {"columns": ["session_id"], "rows": [[recorded]]}

    def unknown_column(data: dict[str, Any]) -> None:
        data["tables"]["steps"]["columns"][0] = "no_such_column"

    for name, edit, needle in [("a", foreign_event, "row of another session"),
                               ("b", lease, "table 'session_leases' cannot be imported"),
                               ("c", unknown_column, "no_such_column")]:
        bad = rewrite(good, tmp_path / f"{name}.artemis", payload=edit,
                      manifest=lambda m: m["counts"].pop("rows"))
        with pytest.raises(BundleError, match=needle):
            import_bundle(other, bad)
    assert other.list_sessions() == [] and blob_files(other) == set()


@pytest.mark.parametrize(("edit", "needle"), [
    (lambda m: m.update(format="zip"), "not an Artemis session bundle"),
    (lambda m: m.update(version=2), "version 2; this Artemis reads version 1"),
    (lambda m: m.update(version="1"), "is not a number"),
    (lambda m: m["schema"].update(migration=len(MIGRATIONS) + 1, name="0099_future"), "written by a newer Artemis"),
    # the newest migration under another name (not pinned to a number: migrations are appended)
    (lambda m: m["schema"].update(name=MIGRATIONS[-1][0][:4] + "_something_else"),
     f"incompatible|but '{MIGRATIONS[-1][0]}'"),
    (lambda m: m.pop("session_id"), "'session_id' is missing"),
])
def test_unknown_format_version_or_newer_schema_is_refused(
        engine: DataEngine, recorded: str, other: DataEngine, tmp_path: Path,
        edit: Callable[[dict[str, Any]], None], needle: str) -> None:
    good = tmp_path / "run.artemis"
    write_bundle(engine, recorded, good)
    bad = rewrite(good, tmp_path / "bad.artemis", manifest=edit)
    with pytest.raises(BundleError, match=needle):
        import_bundle(other, bad)
    assert other.list_sessions() == [] and blob_files(other) == set()


def test_not_a_bundle(other: DataEngine, tmp_path: Path) -> None:
    text = tmp_path / "notes.txt"
    text.write_text("hello")
    with pytest.raises(BundleError, match="not a zip file"):
        read_manifest(text)
    with pytest.raises(BundleError, match="no such file"):
        import_bundle(other, tmp_path / "missing.artemis")
    empty = tmp_path / "empty.zip"
    with zipfile.ZipFile(empty, "w") as zf:
        zf.writestr("hello.txt", "hi")
    with pytest.raises(BundleError, match=r"has no manifest\.json"):
        read_manifest(empty)
    assert issubclass(BundleError, UsageError) and issubclass(BundleConflict, BundleError)


def test_same_id_with_different_content_is_refused_not_merged(
        engine: DataEngine, recorded: str, other: DataEngine, tmp_path: Path) -> None:
    path = tmp_path / "run.artemis"
    write_bundle(engine, recorded, path)
    import_bundle(other, path)
    save_note(engine, recorded, "later", "one more note", 4)  # the source moved on
    newer = tmp_path / "newer.artemis"
    write_bundle(engine, recorded, newer)
    before = dump(other)
    with pytest.raises(BundleConflict, match=f"session {recorded} already exists .* different content") as info:
        import_bundle(other, newer)
    assert "notes: 2 here, 3 in the bundle" in str(info.value) and info.value.exit_code == 2
    assert dump(other) == before
    # a same-id session that shares nothing else
    with DataEngine.open(tmp_path / "third") as third:
        third.create_session(SessionRecord(id=recorded, goal="something else"))
        with pytest.raises(BundleConflict, match="sessions: rows differ"):
            import_bundle(third, path)


def test_into_a_busy_data_dir_integer_ids_are_renumbered_and_turns_still_match(
        engine: DataEngine, recorded: str, other: DataEngine, record_task: Callable[..., Any],
        tmp_path: Path) -> None:
    mine = record_task(other, "demo.yaml").session_id  # takes step/call/event ids 1..n
    path = tmp_path / "run.artemis"
    write_bundle(engine, recorded, path)
    assert import_bundle(other, path).imported
    for table in CARRIED:
        assert rows(other, table, recorded, drop=("id",)) == rows(engine, table, recorded, drop=("id",)), table
    assert rows(other, "sessions", recorded) == rows(engine, "sessions", recorded)
    assert min(r["id"] for r in rows(other, "steps", recorded)) > max(r["id"] for r in rows(other, "steps", mine))
    assert all(check_turn(other, recorded, n).match for n in range(1, 5))
    assert import_bundle(other, path).imported is False  # renumbered ids do not count as a difference


def test_a_replay_whose_source_is_not_shipped_loses_only_the_link(
        engine: DataEngine, recorded: str, other: DataEngine, tmp_path: Path) -> None:
    from artemis_cli.replay import ReplayOptions, replay_session
    from artemis_cli.sim.phone import SimPhone

    result = replay_session(engine, SimPhone(), recorded, ReplayOptions())
    assert engine.get_session(result.session_id).parent_session == recorded
    path = tmp_path / "replay.artemis"
    assert write_bundle(engine, result.session_id, path)["session"]["parent_session"] == recorded
    assert import_bundle(other, path).imported
    assert other.get_session(result.session_id).parent_session is None
    assert rows(other, "steps", result.session_id) == rows(engine, "steps", result.session_id)
    assert import_bundle(other, path).imported is False


def test_a_bundle_from_an_older_schema_imports(engine: DataEngine, recorded: str, other: DataEngine,
                                               tmp_path: Path) -> None:
    """Written before migration 0006 (no steps.outcome, no llm_calls.wire_hash)."""
    good = tmp_path / "run.artemis"
    write_bundle(engine, recorded, good)

    def drop(data: dict[str, Any]) -> None:
        for table, column in (("steps", "outcome"), ("llm_calls", "wire_hash")):
            content = data["tables"][table]
            at = content["columns"].index(column)
            content["columns"].pop(at)
            for row in content["rows"]:
                row.pop(at)

    old = rewrite(good, tmp_path / "old.artemis", payload=drop,
                  manifest=lambda m: m["schema"].update(migration=5, name=MIGRATIONS[4][0]))
    assert import_bundle(other, old).imported
    assert [s.outcome for s in other.get_steps(recorded)] == [None] * 4
    assert rows(other, "steps", recorded, drop=("outcome",)) == rows(engine, "steps", recorded, drop=("outcome",))
