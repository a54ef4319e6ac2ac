"""Data-dir health checks for ``artemis doctor`` (SPEC §3.3, §5).

Everything here only *reads*: it never creates the data dir, never migrates the database and
never writes a row, so it works on a read-only or damaged data dir. The database is opened with
its own read-only connection (``mode=ro``; ``immutable=1`` when no other connection has it open
or when the directory cannot hold SQLite's ``-shm`` file), never through ``DataEngine.open``.

What is checked, each problem as one ``Finding`` with a fix:

- the data dir exists (a missing one is fine: the first run creates it) and is a directory;
- it is writable: the directory, ``blobs/``, ``artemis.db`` and its ``-wal``/``-shm`` files
  (``os.access``, which also sees a read-only mount or an immutable file for root, plus the
  mode bits, which root ignores but other users do not);
- free space on its file system (warning under ``FREE_SPACE_WARN_BYTES``, error under
  ``FREE_SPACE_ERROR_BYTES``);
- ``PRAGMA integrity_check``, ``PRAGMA foreign_key_check`` and the recorded migrations;
- every blob referenced by a step (or listed in the ``blobs`` table) has its file: one query for
  the referenced hashes and one listing of ``blobs/``, compared as sets; with ``deep``, every
  referenced file is hashed once and must match its name. A problem names the step that uses
  the blob (``step 12 of session …: post_screenshot blob 3fa2… is missing``).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import shutil
import sqlite3
import stat
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from .blobs import is_sha256
from .connection import BLOB_DIRNAME
from .migrations import MIGRATIONS
from .reading import DB_FILENAME
from .records import BLOB_FIELDS
from .rows import select_rows

#: Free space under this on the data dir's file system is a warning: a long run may fill it.
FREE_SPACE_WARN_BYTES = 100 * 1024 * 1024
#: Free space under this is an error: the next run would stop with "disk full" within steps.
FREE_SPACE_ERROR_BYTES = 10 * 1024 * 1024
#: ``--deep`` reads blob files in pieces of this size (screenshots are a few hundred KB).
HASH_CHUNK_BYTES = 1024 * 1024

DB_SIDE_FILES = ("-wal", "-shm")

Level = Literal["ok", "warning", "error"]
#: ``progress(done, total)`` while ``deep`` hashes blob files.
Progress = Callable[[int, int], None]

DB_DAMAGED_HINT = (
    "the database is damaged: restore artemis.db from a backup of the data dir, or pass another "
    "--data-dir; to salvage rows, `sqlite3 artemis.db .recover > rows.sql` on a copy"
)
_BLOB_MISSING_HINT = (
    "restore the missing files under {root} from a backup of the data dir (a blob cannot be "
    "recreated), or remove the affected sessions with `artemis sessions rm`"
)
_BLOB_ALTERED_HINT = (
    "the file's bytes changed after it was recorded: restore it from a backup of the data dir, "
    "or remove the affected sessions with `artemis sessions rm`"
)
_BAD_REF_HINT = (
    "the row was edited outside Artemis; remove the session with `artemis sessions rm` or "
    "restore the data dir from a backup"
)
_WRITE_HINT = (
    "runs cannot record here (read commands still work): make it writable ({how}), or pass a "
    "writable --data-dir or set ARTEMIS_HOME"
)
_SPACE_HINT = "free space on that disk, or pass --data-dir (or set ARTEMIS_HOME) on a bigger one"


@dataclass(frozen=True)
class Finding:
    """One doctor row: ``check`` names the group (``database``, ``blobs``, …)."""

    check: str
    level: Level
    detail: str
    hint: str = ""

    @property
    def ok(self) -> bool:
        """Warnings are shown but do not fail the doctor."""
        return self.level != "error"


@dataclass(frozen=True)
class BlobRef:
    """Where a blob hash is used: a step's field, or only a ``blobs`` table row (``step`` 0)."""

    session_id: str
    step: int
    field: str

    def describe(self) -> str:
        if self.step == 0:
            return f"blobs table, kind {self.field}:"
        return f"step {self.step} of session {self.session_id}: {self.field}"


def check_data_dir(
    path: Path | str,
    *,
    deep: bool = False,
    progress: Progress | None = None,
    warn_bytes: int = FREE_SPACE_WARN_BYTES,
    error_bytes: int = FREE_SPACE_ERROR_BYTES,
) -> list[Finding]:
    """Every data-dir finding, in the order doctor prints them. Never raises for a bad dir."""
    root = Path(path).expanduser().absolute()
    if not root.exists():
        anchor = _existing_ancestor(root)
        found = [Finding("data dir", "ok", f"{root} does not exist yet; the first `artemis run` creates it")]
        if anchor is not None:
            found.append(_dir_creatable(root, anchor))
            found.append(check_free_space(anchor, warn_bytes=warn_bytes, error_bytes=error_bytes))
        return found
    if not root.is_dir():
        return [Finding("data dir", "error", f"{root} is not a directory",
                        "pass --data-dir or set ARTEMIS_HOME to a folder")]
    found = [Finding("data dir", "ok", str(root))]
    found += check_writable(root)
    found.append(check_free_space(root, warn_bytes=warn_bytes, error_bytes=error_bytes))
    found += check_contents(root, deep=deep, progress=progress)
    return found


# --- writable --------------------------------------------------------------------------------


def check_writable(root: Path) -> list[Finding]:
    """The directory, ``blobs/`` and the database files: writable for this user, and marked so."""
    if _read_only_mount(root):
        return [Finding("data dir writable", "error", f"{root} is on a read-only file system",
                        _WRITE_HINT.format(how="remount it read-write"))]
    items = [(root, "directory", os.W_OK | os.X_OK)]
    blob_root = root / BLOB_DIRNAME
    if blob_root.is_dir():
        items.append((blob_root, "directory", os.W_OK | os.X_OK))
    for name in (DB_FILENAME, *(DB_FILENAME + s for s in DB_SIDE_FILES)):
        if (root / name).exists():
            items.append((root / name, "file", os.W_OK))
    found: list[Finding] = []
    for item, kind, mode in items:
        try:
            st = item.stat()
        except OSError as exc:
            found.append(Finding("data dir writable", "error", f"cannot stat {item}: {exc.strerror or exc}",
                                 _WRITE_HINT.format(how="check the path")))
            continue
        bits = stat.filemode(st.st_mode)
        if not os.access(item, mode):
            found.append(Finding("data dir writable", "error",
                                 f"{item} is not writable ({kind}, mode {bits}, owner uid {st.st_uid})",
                                 _WRITE_HINT.format(how=_fix_for(item, st))))
        elif not st.st_mode & (stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH):
            who = "you run as root" if _euid() == 0 else "of an ACL or capability"
            found.append(Finding("data dir writable", "warning",
                                 f"{item} is marked read-only (mode {bits}); writable only because {who}",
                                 f"`chmod u+w {item}` so that other users' runs can record"))
    if not any(f.level == "error" for f in found):
        names = ["the directory", *(i.name + ("/" if k == "directory" else "") for i, k, _ in items[1:])]
        found.insert(0, Finding("data dir writable", "ok", f"{root}: {', '.join(names)}"))
    return found


def _dir_creatable(root: Path, anchor: Path) -> Finding:
    if _read_only_mount(anchor):
        return Finding("data dir writable", "error", f"cannot create {root}: {anchor} is on a read-only file system",
                       _WRITE_HINT.format(how="remount it read-write"))
    if not anchor.is_dir() or not os.access(anchor, os.W_OK | os.X_OK):
        return Finding("data dir writable", "error", f"cannot create {root}: {anchor} is not a writable directory",
                       "pass --data-dir or set ARTEMIS_HOME to a writable folder")
    return Finding("data dir writable", "ok", f"{anchor} is writable (the data dir can be created)")


def _euid() -> int:
    return os.geteuid() if hasattr(os, "geteuid") else -1  # -1: no uids (Windows)


def _fix_for(item: Path, st: os.stat_result) -> str:
    euid = _euid()
    if euid > 0 and st.st_uid != euid:
        return f"run Artemis as its owner (uid {st.st_uid}), or `chown` it to your user"
    if euid != 0 and not st.st_mode & stat.S_IWUSR:
        return f"`chmod u+w {item}`"
    # root, or the mode allows it, yet the kernel refuses: an immutable or append-only attribute.
    return f"`lsattr {item}` shows an immutable flag: `chattr -i {item}`"


def _read_only_mount(path: Path) -> bool:
    try:
        return bool(os.statvfs(path).f_flag & os.ST_RDONLY)
    except (OSError, AttributeError):  # AttributeError: no statvfs on Windows
        return False


def _existing_ancestor(path: Path) -> Path | None:
    for p in (path, *path.parents):
        if p.exists():
            return p
    return None


# --- free space ------------------------------------------------------------------------------


def check_free_space(
    root: Path, *, warn_bytes: int = FREE_SPACE_WARN_BYTES, error_bytes: int = FREE_SPACE_ERROR_BYTES
) -> Finding:
    try:
        usage = shutil.disk_usage(root)
    except OSError as exc:
        return Finding("free space", "warning", f"cannot tell the free space at {root}: {exc.strerror or exc}")
    free = f"{format_bytes(usage.free)} free of {format_bytes(usage.total)} at {root}"
    if usage.free < error_bytes:
        return Finding("free space", "error",
                       f"only {free} (under {format_bytes(error_bytes)}): a run would stop with 'disk full'",
                       _SPACE_HINT)
    if usage.free < warn_bytes:
        return Finding("free space", "warning",
                       f"{free} (under {format_bytes(warn_bytes)}): a long run may fill it", _SPACE_HINT)
    return Finding("free space", "ok", free)


def format_bytes(n: int) -> str:
    size = float(n)
    for unit in ("B", "KB", "MB", "GB"):
        if size < 1024 or unit == "GB":
            return f"{size:.0f} {unit}" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1024
    raise AssertionError("unreachable")


# --- database and blobs ----------------------------------------------------------------------


def check_contents(root: Path, *, deep: bool = False, progress: Progress | None = None) -> list[Finding]:
    """The database (integrity, foreign keys, migrations) and the blobs it references."""
    db_path = root / DB_FILENAME
    blob_root = root / BLOB_DIRNAME
    if not db_path.exists():
        stray = sum(1 for _ in _blob_files(blob_root))
        if stray:
            return [Finding("database", "warning",
                            f"no {DB_FILENAME}, but {stray} blob file(s) under {blob_root}: the database was "
                            "moved or deleted?",
                            f"restore {DB_FILENAME} from a backup; without it the blobs are unused")]
        return [Finding("database", "ok", f"no {DB_FILENAME} yet (a new data dir; the first run creates it)")]
    try:
        conn, note = open_read_only(db_path)
    except sqlite3.Error as exc:
        return [Finding("database", "error", f"cannot open {db_path}: {exc}", DB_DAMAGED_HINT)]
    try:
        found, readable = _check_database(conn, db_path, note)
        if readable:
            found += check_blobs(conn, blob_root, deep=deep, progress=progress)
        return found
    finally:
        conn.close()


def open_read_only(db_path: Path) -> tuple[sqlite3.Connection, str]:
    """A connection that cannot write. ``immutable=1`` (no locks, no ``-shm``/``-wal`` created)
    when there is no ``-wal`` (nor a rollback ``-journal``): every commit is then in the main
    file and no connection has it open (a WAL connection keeps its ``-wal`` until the last one
    closes; a run starting meanwhile writes to a new ``-wal``, not to the main file). Else
    ``mode=ro``, which reads the WAL too, falling back to the main file alone when the
    directory cannot hold the ``-shm`` file. Returns the connection and a warning ("" if none)."""
    uri = db_path.resolve().as_uri()
    wal = db_path.with_name(db_path.name + "-wal")
    if not wal.exists() and not db_path.with_name(db_path.name + "-journal").exists():
        return sqlite3.connect(f"{uri}?mode=ro&immutable=1", uri=True), ""
    try:
        conn = sqlite3.connect(f"{uri}?mode=ro", uri=True)
        conn.execute("SELECT count(*) FROM sqlite_schema").fetchone()
        return conn, ""
    except sqlite3.OperationalError:
        conn = sqlite3.connect(f"{uri}?mode=ro&immutable=1", uri=True)
        return conn, (f"checked the main file only: the newest changes, in {wal.name}, cannot be read "
                      "without a writable directory")


def _check_database(conn: sqlite3.Connection, db_path: Path, note: str) -> tuple[list[Finding], bool]:
    """Integrity, foreign keys, migrations. Returns the findings and whether rows can be read."""
    try:
        tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_schema WHERE type = 'table'")}
    except sqlite3.Error as exc:
        return [Finding("database", "error", f"cannot read {db_path}: {exc}", DB_DAMAGED_HINT)], False
    if not tables:
        return [Finding("database", "ok", f"{db_path} is empty (the first run creates the tables)")], False
    found: list[Finding] = []
    try:
        problems = [str(r[0]) for r in conn.execute("PRAGMA integrity_check") if r[0] != "ok"]
    except sqlite3.Error as exc:
        problems = [f"integrity check stopped: {exc}"]
    found += [Finding("database", "error", f"{db_path.name}: {p}", DB_DAMAGED_HINT) for p in problems]
    try:
        fk = conn.execute("PRAGMA foreign_key_check").fetchall()
    except sqlite3.Error as exc:
        fk = []
        if not problems:
            found.append(Finding("database", "error", f"foreign key check failed: {exc}", DB_DAMAGED_HINT))
    found += [
        Finding("database", "error", f"foreign key: {table} row {rowid} refers to a missing {parent} row",
                DB_DAMAGED_HINT)
        for table, rowid, parent, _ in fk
    ]
    schema = _check_schema(conn, tables)
    if schema.level != "ok":
        found.append(schema)
    if any(f.level == "error" for f in found):
        return found, "steps" in tables
    counts = _counts(conn, tables)
    found.insert(0, Finding("database", "ok", f"{db_path.name}: integrity ok, foreign keys ok, {schema.detail}"
                            f"{counts}"))
    if note:
        found.append(Finding("database", "warning", note, "run doctor again where the data dir is writable"))
    return found, "steps" in tables


def _check_schema(conn: sqlite3.Connection, tables: set[str]) -> Finding:
    known = [name for name, _ in MIGRATIONS]
    if "_migrations" not in tables:
        return Finding("database", "error", "no _migrations table: not an Artemis database",
                       "pass the right --data-dir, or move this artemis.db away")
    try:
        applied = dict(conn.execute("SELECT id, name FROM _migrations ORDER BY id").fetchall())
    except sqlite3.Error as exc:
        return Finding("database", "error", f"cannot read _migrations: {exc}", DB_DAMAGED_HINT)
    for number, name in applied.items():
        if number > len(known):
            return Finding("database", "error",
                           f"schema: migration {number} ({name}) is unknown to this Artemis (written by a newer one)",
                           "upgrade Artemis, or pass another --data-dir")
        if name != known[number - 1]:
            return Finding("database", "error",
                           f"schema: migration {number} is recorded as {name!r}, this Artemis calls it "
                           f"{known[number - 1]!r}", "the data dir belongs to an incompatible build; "
                           "pass another --data-dir")
    if len(applied) < len(known):
        return Finding("database", "ok", f"schema {len(applied)}/{len(known)} (the next run upgrades it)")
    return Finding("database", "ok", f"schema {len(applied)}/{len(known)}")


def _counts(conn: sqlite3.Connection, tables: set[str]) -> str:
    parts = []
    for table, noun in (("sessions", "session(s)"), ("steps", "step(s)")):
        if table in tables:
            with contextlib.suppress(sqlite3.Error):
                parts.append(f"{conn.execute(f'SELECT count(*) FROM {table}').fetchone()[0]} {noun}")
    return f", {', '.join(parts)}" if parts else ""


def check_blobs(
    conn: sqlite3.Connection, blob_root: Path, *, deep: bool = False, progress: Progress | None = None
) -> list[Finding]:
    """Referenced hashes (one query) against the files under ``blobs/`` (one listing)."""
    try:
        columns = _blob_columns(conn)
        referenced = {r[0] for r in conn.execute(_referenced_sql(conn, columns))}
    except sqlite3.Error as exc:
        return [Finding("blobs", "error", f"cannot list the blob references: {exc}", DB_DAMAGED_HINT)]
    on_disk = set(_blob_files(blob_root))
    malformed = {sha for sha in referenced if not is_sha256(sha)}
    missing = referenced - malformed - on_disk
    altered: dict[str, str] = {}
    present = sorted(referenced & on_disk)
    if deep:
        for done, sha in enumerate(present, start=1):
            try:
                actual = _hash_file(blob_root / sha[:2] / sha)
            except OSError as exc:
                actual = f"unreadable: {exc.strerror or exc}"
            if actual != sha:
                altered[sha] = actual
            if progress is not None:
                progress(done, len(present))
    if not (malformed or missing or altered):
        detail = f"{len(referenced)} referenced blob(s) present"
        detail += ", SHA-256 verified" if deep else " (contents not hashed: --deep verifies them)"
        extra = len(on_disk - referenced)
        return [Finding("blobs", "ok", detail + (f"; {extra} unreferenced file(s)" if extra else ""))]
    try:
        where = _locate(conn, columns, malformed | missing | set(altered))
    except sqlite3.Error as exc:
        where = {}
        if missing:
            return [Finding("blobs", "error", f"{len(missing)} blob(s) missing; cannot name their steps: {exc}",
                            _BLOB_MISSING_HINT.format(root=blob_root))]
    problems: list[tuple[int, BlobRef, str, str, str]] = []  # (order, first reference, more, what, hint)
    for sha in malformed:
        problems.append((0, *_first(where, sha), f"holds {sha!r}, which is not a SHA-256 hash", _BAD_REF_HINT))
    for sha in missing:
        problems.append((1, *_first(where, sha), f"blob {sha[:12]}… is missing",
                         _BLOB_MISSING_HINT.format(root=blob_root)))
    for sha, actual in altered.items():
        what = (f"blob {sha[:12]}… is {actual}" if actual.startswith("unreadable")
                else f"blob {sha[:12]}… is altered (its bytes hash to {actual[:12]}…)")
        problems.append((2, *_first(where, sha), what, _BLOB_ALTERED_HINT))
    problems.sort(key=lambda p: (p[0], p[1].session_id, p[1].step, p[1].field))
    return [Finding("blobs", "error", f"{ref.describe()} {what}{more}", hint) for _, ref, more, what, hint in problems]


def _first(where: dict[str, list[BlobRef]], sha: str) -> tuple[BlobRef, str]:
    """The first reference to ``sha`` and how many more there are (as a suffix)."""
    refs = where.get(sha) or [BlobRef("", 0, "unknown reference")]
    first, others = refs[0], refs[1:]
    if not others:
        return first, ""
    if len(others) > 3:
        return first, f" (also used by {len(others)} more steps)"
    named = [f"step {r.step}" + ("" if r.session_id == first.session_id else f" of session {r.session_id}")
             + f" {r.field}" for r in others]
    return first, f" (also used by {', '.join(named)})"


def _blob_columns(conn: sqlite3.Connection) -> list[str]:
    columns = {r[1] for r in conn.execute("PRAGMA table_info(steps)")}
    return [name for name in BLOB_FIELDS if name in columns]


def _referenced_sql(conn: sqlite3.Connection, columns: list[str]) -> str:
    parts = [f"SELECT {name} FROM steps WHERE {name} IS NOT NULL" for name in columns]
    if conn.execute("SELECT 1 FROM sqlite_schema WHERE type = 'table' AND name = 'blobs'").fetchone():
        parts.append("SELECT sha256 FROM blobs")
    return " UNION ".join(parts) if parts else "SELECT NULL WHERE 0"


def _locate(conn: sqlite3.Connection, columns: list[str], shas: Iterable[str]) -> dict[str, list[BlobRef]]:
    """Every step that uses one of ``shas``, by session and step (one query); a hash that no
    step uses gets its ``blobs`` table row (``step`` 0, ``field`` = its kind)."""
    selects = [
        f"SELECT session_id AS s, number AS n, '{name}' AS f, {name} AS sha FROM steps "
        f"WHERE {name} IN (SELECT value FROM json_each(:wanted))"
        for name in columns
    ]
    selects.append("SELECT '', 0, kind, sha256 FROM blobs WHERE sha256 IN (SELECT value FROM json_each(:wanted))")
    sql = f"SELECT s, n, f, sha FROM ({' UNION ALL '.join(selects)}) ORDER BY n = 0, s, n, f"
    where: dict[str, list[BlobRef]] = {}
    for session_id, number, field, sha in conn.execute(sql, {"wanted": json.dumps(sorted(shas))}):
        refs = where.setdefault(sha, [])
        if number == 0 and refs:
            continue  # the blobs-table row of a blob a step uses: the step names it better
        refs.append(BlobRef(session_id, number, field))
    return where


def _blob_files(blob_root: Path) -> Iterable[str]:
    """Hash names of the files in their right shard (``blobs/ab/ab…``); temp files skipped."""
    try:
        shards = [e for e in os.scandir(blob_root) if len(e.name) == 2 and e.is_dir()]
    except OSError:
        return
    for shard in shards:
        try:
            entries = list(os.scandir(shard.path))
        except OSError:
            continue
        for entry in entries:
            if entry.name[:2] == shard.name and is_sha256(entry.name) and entry.is_file():
                yield entry.name


def _hash_file(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        while chunk := handle.read(HASH_CHUNK_BYTES):
            digest.update(chunk)
    return digest.hexdigest()


def integrity_problems(engine: Any) -> list[str]:
    """Problems ``PRAGMA integrity_check`` and ``foreign_key_check`` find in ``engine``'s
    database; [] when clean."""
    with engine.lock:
        rows = [next(iter(r.values())) for r in select_rows(engine.db.conn, "PRAGMA integrity_check")]
        fk_rows = select_rows(engine.db.conn, "PRAGMA foreign_key_check")
    problems = [str(r) for r in rows if r != "ok"]
    problems += [f"foreign key: {r['table']} row {r['rowid']} refers to a missing {r['parent']} row" for r in fk_rows]
    return problems


def missing_blobs(engine: Any) -> list[str]:
    """Hashes referenced by steps (or listed in ``blobs``) whose file is absent."""
    union = " UNION ".join(f"SELECT {name} AS sha FROM steps WHERE {name} IS NOT NULL" for name in BLOB_FIELDS)
    with engine.lock:
        rows = select_rows(engine.db.conn, f"{union} UNION SELECT sha256 AS sha FROM blobs")
    return sorted(r["sha"] for r in rows if not engine.blobs.exists(r["sha"]))
