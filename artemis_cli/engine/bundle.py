"""Session bundles: one file that carries a recorded session to another data dir.

``write_bundle`` writes a zip (stdlib ``zipfile``) holding:

* ``manifest.json``: ``format: "artemis-bundle"``, ``version: 1``, the schema migration level
  (``schema: {migration, name}``), ``session_id``, ``created_at``, a summary of the session,
  ``tables`` (carried), ``derived`` (rebuilt on import), ``counts`` and the SHA-256 of every
  other member: ``rows: {member, sha256, size}`` and ``blobs: [{sha256, size}]``.
* ``rows.json``: every row of the session, as stored (JSON columns stay JSON text), per table
  ``{columns, rows}``: ``sessions`` (its row), every table with a ``session_id`` column (``steps``,
  ``llm_calls``, ``events``, ``notes``, ``history_chunks``, and tables later migrations add), and
  the ``blobs`` metadata rows of the blobs it carries.
* ``blobs/<sha256>``: every blob the rows refer to (step screenshots, UI dumps, markers, and any
  stored hash named in a row, e.g. the images of the recorded model turns). PNG/WebP/JPEG blobs
  are ``ZIP_STORED`` (already compressed), the rest deflated.

Not carried: ``session_leases`` (which process on which host owns the session: host-local) and
the recall index (``recall_indexed``, ``step_fts``, ``note_fts``, ``chunk_fts``: derived from the
carried rows, rebuilt by ``import_bundle`` in its transaction).

``import_bundle`` checks the manifest (format, version, schema: a bundle from a newer schema is
refused), every member's SHA-256 and the rows' shape before it writes anything; then writes the
blob files (content-addressed: idempotent), then every row in one transaction. The session keeps
its id and every timestamp; integer row ids are kept too unless one of them is already taken in
the target table (then that table's rows get new ids, in their original order: nothing refers to
them). A session already present with the same content is left alone (``imported=False``); with
different content the import is refused (``BundleConflict``): sessions are never merged.

The hashes detect damage and tampering of the members; the manifest itself is not signed.
"""

from __future__ import annotations

import contextlib
import json
import os
import stat
import zipfile
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from artemis_cli.errors import BundleConflict, BundleError, OutputError

from .blobs import sha256_hex
from .bundle_format import (
    _IN_BATCH,
    _SHA_IN_TEXT,
    _STORED_MAGIC,
    BLOB_DIR,
    BLOBS_TABLE,
    DERIVED_TABLES,
    EXCLUDED_TABLES,
    FORMAT,
    MANIFEST_MEMBER,
    ROWS_MEMBER,
    VERSION,
    _canonical,
    _check_schema,
    _columns,
    _encode_value,
    _fingerprint,
    _load_rows,
    _manifest,
    _open_zip,
    _owner_column,
    _rowid_alias,
    _schema,
    _select,
    _session_rows,
    _snapshot,
    _verify_members,
    read_manifest,
    session_tables,
)
from .clock import now_iso
from .errors import BlobMissing, DataEngineError
from .records import BLOB_FIELDS
from .storage import read_only, storage_errors

if TYPE_CHECKING:
    import sqlite_utils

    from .db import DataEngine

__all__ = [
    "BLOBS_TABLE",
    "DERIVED_TABLES",
    "EXCLUDED_TABLES",
    "FORMAT",
    "VERSION",
    "BundleConflict",
    "BundleError",
    "ImportResult",
    "import_bundle",
    "read_manifest",
    "session_tables",
    "write_bundle",
]

@dataclass(frozen=True)
class ImportResult:
    """What ``import_bundle`` did. ``rows``/``blobs``: the session rows (every carried table but
    the blob metadata) and blob files the bundle holds; ``imported`` is False when the session was
    already present with the same content (nothing was written)."""

    session_id: str
    imported: bool  # False when it was already present (idempotent)
    rows: int
    blobs: int


# --- blobs referenced by the rows -------------------------------------------------------------


def _referenced_blobs(engine: DataEngine, tables: dict[str, dict[str, Any]]) -> list[str]:
    """Every blob the rows name: the steps' blob fields (which must be stored) and any other
    SHA-256 found in a text value that is a stored blob (e.g. images of recorded model turns)."""
    store = engine.blobs
    found: set[str] = set()
    steps = tables.get("steps")
    if steps:
        cols = steps["columns"]
        number = cols.index("number")
        for name in BLOB_FIELDS:
            if name not in cols:
                continue
            at = cols.index(name)
            for row in steps["rows"]:
                sha = row[at]
                if not sha:
                    continue
                if not store.exists(sha):
                    raise BlobMissing(
                        f"step {row[number]}: {name} refers to blob {str(sha)[:12]}… which is missing "
                        f"from {store.root}; the bundle would be incomplete",
                        hint="`artemis doctor` checks the data dir",
                    )
                found.add(sha)
    checked: set[str] = set(found)
    for table in tables.values():
        for row in table["rows"]:
            for value in row:
                if not isinstance(value, str) or len(value) < 64:
                    continue
                for sha in _SHA_IN_TEXT.findall(value):
                    if sha not in checked:
                        checked.add(sha)
                        if store.exists(sha):  # request/prefix hashes are no blobs
                            found.add(sha)
    return sorted(found)


# --- writing ----------------------------------------------------------------------------------


def _zip_info(name: str, when: datetime, compress: bool) -> zipfile.ZipInfo:
    info = zipfile.ZipInfo(name, date_time=(when.year, when.month, when.day, when.hour, when.minute, when.second))
    info.compress_type = zipfile.ZIP_DEFLATED if compress else zipfile.ZIP_STORED
    info.external_attr = 0o644 << 16
    return info


def _write_error(path: Path, exc: OSError) -> OutputError:
    reason = exc.strerror or os.strerror(exc.errno or 0) or type(exc).__name__
    return OutputError(str(path), reason,
                       hint="give -o a file in a directory you can write to, on a disk with free space")


def write_bundle(engine: DataEngine, session_id: str, path: Path) -> dict[str, Any]:  # returns the manifest
    """Write session ``session_id`` (a full id, a unique prefix or ``latest``) with every blob
    its rows refer to into the bundle ``path`` (replaced atomically); returns the manifest.

    Raises ``SessionNotFound``, ``BlobMissing`` (a referenced blob is not stored),
    ``DataEngineError`` (a stored blob no longer matches its hash) or ``OutputError``."""
    from artemis_cli import __version__

    path = Path(path)
    db = engine.db
    with _snapshot(engine):
        rec = engine.get_session(session_id)
        sid = rec.id
        schema = _schema(db)
        tables = {t: _session_rows(db, t, sid) for t in session_tables(db)}
        shas = _referenced_blobs(engine, tables)
        blob_cols = [name for name, _, _ in _columns(db, BLOBS_TABLE)]
        blob_rows: list[list[Any]] = []
        for i in range(0, len(shas), _IN_BATCH):
            part = shas[i:i + _IN_BATCH]
            marks = ", ".join("?" for _ in part)
            blob_rows += _select(db, BLOBS_TABLE, blob_cols, f"sha256 IN ({marks})", part)
    for table in tables.values():
        table["rows"] = [[_encode_value(v) for v in row] for row in table["rows"]]
    tables[BLOBS_TABLE] = {"columns": blob_cols, "rows": blob_rows}
    payload = _canonical({"format": FORMAT, "session_id": sid, "tables": tables})
    try:
        sizes = {sha: engine.blobs.path(sha).stat().st_size for sha in shas}
    except FileNotFoundError as exc:
        raise BlobMissing(f"a blob of session {sid} vanished while it was exported: {exc.filename}") from None
    when = datetime.now(UTC)
    manifest: dict[str, Any] = {
        "format": FORMAT,
        "version": VERSION,
        "artemis_version": __version__,
        "schema": schema,
        "session_id": sid,
        "created_at": now_iso(),
        "session": {
            "task_id": rec.task_id,
            "goal": rec.goal,
            "status": rec.status,
            "started_at": rec.started_at,
            "ended_at": rec.ended_at,
            "parent_session": rec.parent_session,
        },
        "tables": list(tables),
        "derived": list(DERIVED_TABLES),
        "counts": {"rows": {t: len(v["rows"]) for t, v in tables.items()}, "blobs": len(shas)},
        "rows": {"member": ROWS_MEMBER, "sha256": sha256_hex(payload), "size": len(payload)},
        "blobs": [{"sha256": sha, "size": sizes[sha]} for sha in shas],
    }
    _write_zip(engine, path, manifest, payload, shas, when)
    return manifest


def _write_zip(engine: DataEngine, path: Path, manifest: dict[str, Any], payload: bytes, shas: list[str],
               when: datetime) -> None:
    try:
        if path.is_dir():
            raise IsADirectoryError(21, os.strerror(21), str(path))
        path.parent.mkdir(parents=True, exist_ok=True)
        try:
            regular = stat.S_ISREG(path.stat().st_mode)
        except FileNotFoundError:
            regular = True
    except OSError as exc:
        raise _write_error(path, exc) from None
    target = path.with_name(f".{path.name}.{os.getpid()}.tmp") if regular else path
    try:
        with zipfile.ZipFile(target, "w", allowZip64=True) as zf:
            zf.writestr(_zip_info(MANIFEST_MEMBER, when, True), json.dumps(manifest, ensure_ascii=False, indent=2))
            zf.writestr(_zip_info(ROWS_MEMBER, when, True), payload)
            for sha in shas:
                data = engine.blob(sha)
                if sha256_hex(data) != sha:
                    raise DataEngineError(
                        f"blob {sha[:12]}… in {engine.blobs.root} is damaged (its content no longer matches its hash)",
                        hint="`artemis doctor` checks the data dir",
                    )
                zf.writestr(_zip_info(BLOB_DIR + sha, when, not data.startswith(_STORED_MAGIC)), data)
        if regular:
            os.replace(target, path)
    except OSError as exc:
        raise _write_error(path, exc) from None
    finally:
        if regular:
            with contextlib.suppress(OSError):
                target.unlink()


# --- importing --------------------------------------------------------------------------------


def _parent_at(tables: dict[str, dict[str, Any]]) -> int | None:
    columns = tables["sessions"]["columns"]
    return columns.index("parent_session") if "parent_session" in columns else None


def _same_as_stored(engine: DataEngine, sid: str, tables: dict[str, dict[str, Any]]) -> bool:
    """False when ``sid`` is not stored; True when it is, with the bundle's content;
    ``BundleConflict`` when it is stored with other content."""
    db = engine.db
    if db.execute("SELECT 1 FROM sessions WHERE id = ?", [sid]).fetchone() is None:
        return False
    differences: list[str] = []
    for table in session_tables(db):
        content = tables.get(table)
        if content is None:
            count = db.execute(f"SELECT count(*) FROM [{table}] WHERE session_id = ?", [sid]).fetchone()[0]
            if count:
                differences.append(f"{table}: {count} here, none in the bundle")
            continue
        columns = list(content["columns"])
        alias = _rowid_alias(db, table)
        keep = [i for i, c in enumerate(columns) if c != alias]
        theirs = [[row[i] for i in keep] for row in content["rows"]]
        mine = [[row[i] for i in keep] for row in
                _select(db, table, columns, f"[{_owner_column(table)}] = ?", [sid])]
        if table == "sessions" and (at := _parent_at(tables)) is not None:
            at = keep.index(at)
            if mine and mine[0][at] is None:  # the parent was absent when it was imported
                theirs = [[*row[:at], None, *row[at + 1:]] for row in theirs]
        if _fingerprint(mine) != _fingerprint(theirs):
            size = f"{len(mine)} here, {len(theirs)} in the bundle" if len(mine) != len(theirs) else "rows differ"
            differences.append(f"{table}: {size}")
    if differences:
        raise BundleConflict(
            f"session {sid} already exists in {engine.data_dir} with different content "
            f"({'; '.join(differences)}); sessions are not merged",
            hint=f"remove it first (artemis sessions rm {sid}) or import into another --data-dir",
        )
    return True


def _taken(db: sqlite_utils.Database, table: str, column: str, ids: list[Any]) -> bool:
    for i in range(0, len(ids), _IN_BATCH):
        part = ids[i:i + _IN_BATCH]
        marks = ", ".join("?" for _ in part)
        if db.execute(f"SELECT 1 FROM [{table}] WHERE [{column}] IN ({marks}) LIMIT 1", part).fetchone():
            return True
    return False


def _insert_rows(engine: DataEngine, sid: str, tables: dict[str, dict[str, Any]]) -> None:
    db = engine.db
    order = [BLOBS_TABLE, "sessions", *(t for t in tables if t not in (BLOBS_TABLE, "sessions"))]
    for table in order:
        content = tables.get(table)
        if not content or not content["rows"]:
            continue
        columns = list(content["columns"])
        rows = [list(r) for r in content["rows"]]
        if table == "sessions" and (at := _parent_at(tables)) is not None:
            parent = rows[0][at]
            if parent and db.execute("SELECT 1 FROM sessions WHERE id = ?", [parent]).fetchone() is None:
                rows[0][at] = None  # the session it replayed was not shipped with it
        alias = _rowid_alias(db, table) if table != BLOBS_TABLE else None
        if alias is not None and alias in columns:
            at = columns.index(alias)
            if _taken(db, table, alias, [r[at] for r in rows]):
                columns.pop(at)
                for r in rows:
                    r.pop(at)
        names = ", ".join(f"[{c}]" for c in columns)
        marks = ", ".join("?" for _ in columns)
        verb = "INSERT OR IGNORE" if table == BLOBS_TABLE else "INSERT"
        db.conn.executemany(f"{verb} INTO [{table}] ({names}) VALUES ({marks})", rows)


def _rebuild_derived(engine: DataEngine, sid: str) -> None:
    """The recall index of the imported session, as recording it would have left it."""
    from artemis_cli.memory.notes import Note, index_note
    from artemis_cli.memory.recall_index import RecallIndex

    index = RecallIndex(engine)
    index.sync(sid)
    db = engine.db
    for row in db.query("SELECT * FROM notes WHERE session_id = ? ORDER BY version, id", [sid]):
        index_note(engine, Note(row["session_id"], row["key"], row["content"], row["step"], row["version"],
                                row["created_at"], id=row["id"]))
    for row in db.query("SELECT * FROM history_chunks WHERE session_id = ? AND status = 'ready' "
                        "AND rendered IS NOT NULL AND rendered != '' ORDER BY version, id", [sid]):
        index.index_chunk(sid, row["start_step"], row["end_step"], row["rendered"])


def import_bundle(engine: DataEngine, path: Path) -> ImportResult:
    """Import bundle ``path`` into ``engine``'s data dir. Every hash, the format, the version and
    the schema are checked before anything is written; blob files go first, then every row in
    one transaction (the recall index is rebuilt in it). Raises ``BundleError`` (exit 2) for a
    bad bundle and ``BundleConflict`` (a ``BundleError``) when the session is stored with other
    content; importing the same bundle again writes nothing (``imported=False``)."""
    path = Path(path)
    if engine.read_only:
        raise read_only(engine.data_dir)
    with _open_zip(path) as zf:
        manifest = _manifest(zf, path)
        _check_schema(manifest, path)
        _verify_members(zf, manifest, path)
        with engine.lock:
            tables = _load_rows(zf, manifest, path, engine.db)
            sid = manifest["session_id"]
            rows = sum(len(v["rows"]) for t, v in tables.items() if t != BLOBS_TABLE)
            result = ImportResult(sid, False, rows, len(manifest["blobs"]))
            present = _same_as_stored(engine, sid, tables)
        # 1. Blob files (content-addressed: writing one twice changes nothing).
        for entry in manifest["blobs"]:
            sha = entry["sha256"]
            if engine.blobs.exists(sha):
                continue
            data = zf.read(BLOB_DIR + sha)
            if sha256_hex(data) != sha:  # changed since it was verified
                raise BundleError(f"{path}: member {BLOB_DIR + sha} does not match its SHA-256 in the manifest")
            with storage_errors(engine.data_dir):
                engine.blobs.put(data)
    if present:
        return result
    # 2. Rows, all or nothing.
    with engine.batch():
        if _same_as_stored(engine, sid, tables):  # another process imported it meanwhile
            return result
        _insert_rows(engine, sid, tables)
        _rebuild_derived(engine, sid)
    return ImportResult(sid, True, rows, len(manifest["blobs"]))
