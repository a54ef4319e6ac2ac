"""A session bundle's format: its members and constants, how values are carried, and how a
bundle is read and checked (``engine.bundle`` writes and imports them; its doc describes the
format)."""

from __future__ import annotations

import base64
import contextlib
import hashlib
import json
import re
import zipfile
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from artemis_cli.errors import BundleError

from .blobs import is_sha256
from .migrations import MIGRATIONS, applied_migrations
from .records import BLOB_FIELDS
from .removal import tables_with_session_id

if TYPE_CHECKING:
    import sqlite_utils

    from .db import DataEngine

FORMAT = "artemis-bundle"
VERSION = 1
MANIFEST_MEMBER = "manifest.json"
ROWS_MEMBER = "rows.json"
BLOB_DIR = "blobs/"
BLOBS_TABLE = "blobs"
#: Session rows that stay behind: which process on which host owns the session.
EXCLUDED_TABLES: tuple[str, ...] = ("session_leases",)
#: Derived from the carried rows (the recall index); ``import_bundle`` rebuilds them.
DERIVED_TABLES: tuple[str, ...] = ("recall_indexed", "step_fts", "note_fts", "chunk_fts")

_MAX_MANIFEST_BYTES = 64 * 1024 * 1024
_CHUNK = 1 << 20
_STORED_MAGIC = (b"\x89PNG\r\n\x1a\n", b"\xff\xd8\xff", b"RIFF", b"GIF8")
_SHA_IN_TEXT = re.compile(r"(?<![0-9a-f])[0-9a-f]{64}(?![0-9a-f])")
_IN_BATCH = 500


# --- tables ---------------------------------------------------------------------------------


def _columns(db: sqlite_utils.Database, table: str) -> list[tuple[str, str, int]]:
    """(name, declared type, pk position) per column."""
    return [(r[1], str(r[2] or ""), int(r[5])) for r in db.execute(f"PRAGMA table_info([{table}])").fetchall()]


def _rowid_alias(db: sqlite_utils.Database, table: str) -> str | None:
    """The ``INTEGER PRIMARY KEY`` column (a surrogate id nothing refers to), if any."""
    pks = [(name, kind) for name, kind, pk in _columns(db, table) if pk]
    if len(pks) == 1 and pks[0][1].upper() == "INTEGER":
        return pks[0][0]
    return None


def session_tables(db: sqlite_utils.Database) -> list[str]:
    """The tables a bundle carries, ``sessions`` first: every table with a ``session_id`` column
    but the excluded (``EXCLUDED_TABLES``), derived (``DERIVED_TABLES``) and virtual ones."""
    virtual = {
        r[0] for r in db.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND upper(sql) LIKE 'CREATE VIRTUAL TABLE%'"
        ).fetchall()
    }
    skip = set(EXCLUDED_TABLES) | set(DERIVED_TABLES) | virtual | {BLOBS_TABLE}
    return ["sessions", *(t for t in tables_with_session_id(db) if t not in skip)]


def _order_by(db: sqlite_utils.Database, table: str) -> str:
    pks = sorted((pk, name) for name, _, pk in _columns(db, table) if pk)
    return ", ".join(f"[{name}]" for _, name in pks) if pks else "rowid"


def _select(db: sqlite_utils.Database, table: str, columns: list[str], where: str,
            params: list[Any]) -> list[list[Any]]:
    names = ", ".join(f"[{c}]" for c in columns)
    sql = f"SELECT {names} FROM [{table}] WHERE {where} ORDER BY {_order_by(db, table)}"
    return [list(r) for r in db.execute(sql, params).fetchall()]


def _owner_column(table: str) -> str:
    return "id" if table == "sessions" else "session_id"


def _session_rows(db: sqlite_utils.Database, table: str, session_id: str) -> dict[str, Any]:
    columns = [name for name, _, _ in _columns(db, table)]
    return {"columns": columns, "rows": _select(db, table, columns, f"[{_owner_column(table)}] = ?", [session_id])}


def _schema(db: sqlite_utils.Database) -> dict[str, Any]:
    applied = applied_migrations(db.conn)
    level = max(applied, default=0)
    return {"migration": level, "name": applied.get(level, "")}


@contextlib.contextmanager
def _snapshot(engine: DataEngine) -> Iterator[None]:
    """One read transaction: the rows of a session still being recorded are read consistently."""
    with engine.lock:
        conn = engine.db.conn
        if conn.in_transaction:
            yield
            return
        conn.execute("BEGIN")
        try:
            yield
        finally:
            if conn.in_transaction:
                conn.execute("COMMIT")


# --- values ---------------------------------------------------------------------------------


def _encode_value(value: Any) -> Any:
    if isinstance(value, bytes | bytearray | memoryview):
        return {"$base64": base64.b64encode(bytes(value)).decode("ascii")}
    return value


def _decode_value(value: Any, where: str) -> Any:
    if value is None or isinstance(value, str | float) or (isinstance(value, int) and not isinstance(value, bool)):
        return value
    if isinstance(value, dict) and set(value) == {"$base64"} and isinstance(value["$base64"], str):
        try:
            return base64.b64decode(value["$base64"], validate=True)
        except ValueError:
            pass
    raise BundleError(f"{where}: a value of an unexpected type ({type(value).__name__})")


def _canonical(data: Any) -> bytes:
    return json.dumps(data, ensure_ascii=False, sort_keys=True, separators=(",", ":")).encode("utf-8")


def _fingerprint(rows: list[list[Any]]) -> list[str]:
    """Rows as an order-free multiset (canonical JSON strings, sorted)."""
    return sorted(json.dumps([_encode_value(v) for v in row], ensure_ascii=False) for row in rows)


# --- reading ----------------------------------------------------------------------------------


@contextlib.contextmanager
def _open_zip(path: Path) -> Iterator[zipfile.ZipFile]:
    try:
        zf = zipfile.ZipFile(path)
    except FileNotFoundError:
        raise BundleError(f"no such file: {path}") from None
    except IsADirectoryError:
        raise BundleError(f"{path} is a directory, not a session bundle") from None
    except (zipfile.BadZipFile, zlib.error, EOFError, ValueError):
        raise BundleError(f"{path} is not an Artemis session bundle (not a zip file)",
                          hint="make one with `artemis sessions export ID --format bundle -o FILE`") from None
    except OSError as exc:
        raise BundleError(f"cannot read {path}: {exc.strerror or exc}") from None
    with zf:
        yield zf


def _field(data: dict[str, Any], key: str, kind: type | tuple[type, ...], where: str) -> Any:
    value = data.get(key)
    if not isinstance(value, kind) or isinstance(value, bool):
        raise BundleError(f"{where}: field {key!r} is missing or malformed")
    return value


def _manifest(zf: zipfile.ZipFile, path: Path) -> dict[str, Any]:
    where = f"{path}: {MANIFEST_MEMBER}"
    try:
        info = zf.getinfo(MANIFEST_MEMBER)
    except KeyError:
        raise BundleError(f"{path} is not an Artemis session bundle (it has no {MANIFEST_MEMBER})") from None
    if info.file_size > _MAX_MANIFEST_BYTES:
        raise BundleError(f"{where} is too large ({info.file_size} bytes)")
    try:
        data = json.loads(zf.read(info).decode("utf-8"))
    except (zipfile.BadZipFile, zlib.error, EOFError) as exc:
        raise BundleError(f"{where} is damaged: {exc}") from None
    except (UnicodeDecodeError, ValueError) as exc:
        raise BundleError(f"{where} is not valid JSON: {exc}") from None
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        got = data.get("format") if isinstance(data, dict) else None
        raise BundleError(f"{path} is not an Artemis session bundle (format {got!r}, expected {FORMAT!r})")
    version = data.get("version")
    if not isinstance(version, int) or isinstance(version, bool):
        raise BundleError(f"{where}: bundle version {version!r} is not a number")
    if version > VERSION:
        raise BundleError(f"{path} is an {FORMAT} of version {version}; this Artemis reads version {VERSION}",
                          hint="it was written by a newer Artemis: upgrade to import it")
    if version != VERSION:
        raise BundleError(f"{path}: unsupported {FORMAT} version {version} (this Artemis reads version {VERSION})")
    sid = _field(data, "session_id", str, where)
    if not sid.strip():
        raise BundleError(f"{where}: field 'session_id' is empty")
    schema = _field(data, "schema", dict, where)
    if _field(schema, "migration", int, where) < 1:
        raise BundleError(f"{where}: schema migration {schema['migration']} is not a migration level")
    _field(schema, "name", str, where)
    rows = _field(data, "rows", dict, where)
    if rows.get("member") != ROWS_MEMBER or not is_sha256(rows.get("sha256")):
        raise BundleError(f"{where}: field 'rows' is malformed")
    _field(rows, "size", int, where)
    blobs = _field(data, "blobs", list, where)
    for entry in blobs:
        if not isinstance(entry, dict) or not is_sha256(entry.get("sha256")):
            raise BundleError(f"{where}: a blob entry has no SHA-256")
        _field(entry, "size", int, where)
    _field(data, "counts", dict, where)
    return data


def read_manifest(path: Path) -> dict[str, Any]:
    """The manifest of bundle ``path``, after checking its format and version (no member hashes:
    ``import_bundle`` checks those). Raises ``BundleError``."""
    path = Path(path)
    with _open_zip(path) as zf:
        return _manifest(zf, path)


def _check_schema(manifest: dict[str, Any], path: Path) -> None:
    level, name = manifest["schema"]["migration"], manifest["schema"]["name"]
    if level > len(MIGRATIONS):
        raise BundleError(
            f"{path} was written by a newer Artemis (schema migration {level}, {name}); "
            f"this one knows {len(MIGRATIONS)} migrations",
            hint="upgrade Artemis to import it",
        )
    expected = MIGRATIONS[level - 1][0]
    if name != expected:
        raise BundleError(f"{path}: schema migration {level} is {name!r} in the bundle but {expected!r} here",
                          hint="the bundle comes from an incompatible build of Artemis")


def _member_digest(zf: zipfile.ZipFile, name: str, size: int, path: Path) -> str:
    """SHA-256 of member ``name`` (streamed), or ``BundleError`` naming it."""
    try:
        info = zf.getinfo(name)
    except KeyError:
        raise BundleError(f"{path}: member {name} is missing") from None
    if info.file_size != size:
        raise BundleError(f"{path}: member {name} does not match its SHA-256 in the manifest "
                          f"({info.file_size} bytes, the manifest says {size})", hint="nothing was imported")
    digest = hashlib.sha256()
    try:
        with zf.open(info) as fh:
            for chunk in iter(lambda: fh.read(_CHUNK), b""):
                digest.update(chunk)
    except (zipfile.BadZipFile, zlib.error, EOFError, OSError) as exc:
        raise BundleError(f"{path}: member {name} is damaged ({exc})") from None
    return digest.hexdigest()


def _verify_members(zf: zipfile.ZipFile, manifest: dict[str, Any], path: Path) -> None:
    names = zf.namelist()
    if len(names) != len(set(names)):
        raise BundleError(f"{path}: a member appears twice")
    blob_names = {BLOB_DIR + entry["sha256"]: entry for entry in manifest["blobs"]}
    if len(blob_names) != len(manifest["blobs"]):
        raise BundleError(f"{path}: {MANIFEST_MEMBER} lists a blob twice")
    expected = {MANIFEST_MEMBER, ROWS_MEMBER, *blob_names}
    unexpected = sorted(set(names) - expected)
    if unexpected:
        raise BundleError(f"{path}: member {unexpected[0]} is not listed in {MANIFEST_MEMBER}")
    rows = manifest["rows"]
    if _member_digest(zf, ROWS_MEMBER, rows["size"], path) != rows["sha256"]:
        raise BundleError(f"{path}: member {ROWS_MEMBER} does not match its SHA-256 in the manifest "
                          "(the session rows were altered or damaged)", hint="nothing was imported")
    for name, entry in blob_names.items():
        if _member_digest(zf, name, entry["size"], path) != entry["sha256"]:
            raise BundleError(f"{path}: member {name} does not match its SHA-256 in the manifest "
                              "(the blob was altered or damaged)", hint="nothing was imported")


def _load_rows(zf: zipfile.ZipFile, manifest: dict[str, Any], path: Path,
               db: sqlite_utils.Database) -> dict[str, dict[str, Any]]:
    """The verified ``rows.json``, checked against this database: only carried tables, known
    columns, rows of this session only; values decoded."""
    sid = manifest["session_id"]
    where = f"{path}: {ROWS_MEMBER}"
    try:
        data = json.loads(zf.read(ROWS_MEMBER).decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as exc:
        raise BundleError(f"{where} is not valid JSON: {exc}") from None
    if not isinstance(data, dict) or data.get("session_id") != sid or not isinstance(data.get("tables"), dict):
        raise BundleError(f"{where} does not hold the rows of session {sid}")
    allowed = set(session_tables(db)) | {BLOBS_TABLE}
    carried = {manifest_blob["sha256"] for manifest_blob in manifest["blobs"]}
    tables: dict[str, dict[str, Any]] = {}
    for table, content in data["tables"].items():
        if table not in allowed:
            raise BundleError(f"{where}: table {table!r} cannot be imported here",
                              hint="it is not a session table of this Artemis")
        if not isinstance(content, dict) or not isinstance(content.get("columns"), list) \
                or not isinstance(content.get("rows"), list):
            raise BundleError(f"{where}: table {table!r} is malformed")
        columns = content["columns"]
        known = {name for name, _, _ in _columns(db, table)}
        if not all(isinstance(c, str) for c in columns) or len(set(columns)) != len(columns):
            raise BundleError(f"{where}: table {table!r} has malformed columns")
        unknown = sorted(set(columns) - known)
        if unknown:
            raise BundleError(f"{where}: table {table!r} has column(s) {', '.join(unknown)} this Artemis does not know")
        key = "sha256" if table == BLOBS_TABLE else _owner_column(table)
        if key not in columns:
            raise BundleError(f"{where}: table {table!r} has no {key!r} column")
        at = columns.index(key)
        rows: list[list[Any]] = []
        for row in content["rows"]:
            if not isinstance(row, list) or len(row) != len(columns):
                raise BundleError(f"{where}: a row of table {table!r} is malformed")
            decoded = [_decode_value(v, f"{where}: table {table!r}") for v in row]
            owner = decoded[at]
            if (table == BLOBS_TABLE and owner not in carried) or (table != BLOBS_TABLE and owner != sid):
                raise BundleError(f"{where}: table {table!r} has a row of another session or blob ({owner!r})")
            rows.append(decoded)
        tables[table] = {"columns": columns, "rows": rows}
    if len(tables.get("sessions", {}).get("rows", [])) != 1:
        raise BundleError(f"{where} does not hold the row of session {sid}")
    counts = manifest["counts"].get("rows")
    if isinstance(counts, dict) and any(counts.get(t) != len(v["rows"]) for t, v in tables.items()):
        raise BundleError(f"{where}: the row counts disagree with {MANIFEST_MEMBER}")
    steps = tables.get("steps")
    if steps:
        for name in BLOB_FIELDS:
            if name in steps["columns"]:
                at = steps["columns"].index(name)
                missing = [r[at] for r in steps["rows"] if r[at] and r[at] not in carried]
                if missing:
                    raise BundleError(f"{where}: steps refer to blob {str(missing[0])[:12]}… which the bundle "
                                      "does not hold")
    return tables


