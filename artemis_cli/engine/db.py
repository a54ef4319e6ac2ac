"""The DataEngine: one SQLite database (``artemis.db``, WAL) plus a content-addressed blob store.

Threading: one connection (``check_same_thread=False``) shared by the operator thread and the
background lens workers. Every public method takes ``self._lock`` (an RLock) for its whole
duration — reads too, because a shared sqlite3 connection has a single transaction state and
sqlite-utils' ``query`` uses savepoints. Other *processes* are handled by SQLite itself: writes
use ``BEGIN IMMEDIATE`` and ``busy_timeout`` is 5000 ms.
"""

from __future__ import annotations

import contextlib
import secrets
import sqlite3
import threading
from collections.abc import Iterable, Iterator
from dataclasses import fields, replace
from datetime import datetime
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any

from artemis_cli.errors import SessionNotFound

from .blobs import BlobStore
from .clock import normalize_iso, now_iso, utc_now
from .connection import BLOB_DIRNAME, OPEN_ENGINES, open_database, session_query
from .errors import BlobMissing, DataDirReadOnly, DataEngineError, StepNotFound, StorageFull
from .lease import Lease, LeaseOwner, acquire, derived_status, heartbeat, read_owner, release
from .reading import DB_FILENAME, connect_if_current, connect_read_only, require_data
from .records import (
    FINAL_SESSION_STATUSES,
    SESSION_STATUSES,
    SUMMARY_STATUSES,
    EventRecord,
    LlmCallRecord,
    SessionRecord,
    SessionStatus,
    StepRecord,
)
from .removal import RemovedSession, remove_session_rows
from .rows import (
    DEFAULT_BLOB_KIND,
    EVENT_JSON,
    NO_JSON,
    SESSION_HINT,
    SESSION_JSON,
    STEP_JSON,
    check_choice,
    complete_step,
    decode,
    dump_json,
    duplicate_step,
    encode,
    event_for_step,
    insert_row,
    select_rows,
    validate_step,
)
from .storage import read_only, storage_errors, writes
from .summaries import SUMMARY_UPDATE_SQL
from .transaction import write_transaction

if TYPE_CHECKING:
    import sqlite_utils

def new_session_id() -> str:
    """``YYYYMMDD-HHMMSS-xxxx``: UTC start time plus 4 random hex digits; sorts by time."""
    return f"{utc_now().strftime('%Y%m%d-%H%M%S')}-{secrets.token_hex(2)}"


class DataEngine:
    """Sessions, steps, model calls and events in SQLite; screenshots and dumps as blobs."""

    def __init__(self, data_dir: Path, conn: sqlite3.Connection, blobs: BlobStore,
                 db: sqlite_utils.Database | None = None) -> None:
        self.data_dir = data_dir
        self.conn = conn  # the one connection: reads use it with the stdlib, no sqlite-utils
        self._db = db
        self._blobs = blobs
        self._lock = threading.RLock()
        self._closed = False
        self.read_only = False
        #: session id -> its run's ``models.pricing.Pricer``: ``record_llm_call`` prices each call
        #: of that session as it is recorded (set by the runner, ``set_pricer``).
        self._pricers: dict[str, Any] = {}
        OPEN_ENGINES.add(self)

    # --- lifecycle -----------------------------------------------------------------------

    @classmethod
    def open(cls, data_dir: Path | str, *, create: bool = True) -> DataEngine:
        """Open (creating if needed) ``data_dir/artemis.db`` and ``data_dir/blobs/``; migrate.
        A data dir that cannot be written raises ``DataDirReadOnly`` (see ``open_for_reading``).
        ``create=False`` (commands that act on recorded sessions: resume, replay, rm) raises
        ``NoArtemisData`` for a dir without a database, and creates nothing."""
        root = Path(data_dir).expanduser()
        if not create:
            require_data(root)
        db, blobs = open_database(root)
        return cls(root, db.conn, blobs, db)

    @classmethod
    def open_for_reading(cls, data_dir: Path | str) -> DataEngine:
        """For commands that only read (sessions, report, recall, export, prompt): open as usual,
        and when the data dir is read-only (a read-only mount, another user's files) open the
        database read-only instead of failing. Writes on such an engine raise DataDirReadOnly.
        A dir without ``artemis.db`` raises ``NoArtemisData``: reading never creates a data dir."""
        try:
            return cls.open(data_dir, create=False)
        except (DataDirReadOnly, StorageFull):  # a full disk cannot even hold the WAL index
            return cls._open_read_only(Path(data_dir).expanduser())

    @classmethod
    def _open_read_only(cls, root: Path, conn: sqlite3.Connection | None = None) -> DataEngine:
        engine = cls(root, conn or connect_read_only(root), BlobStore(root / BLOB_DIRNAME, create=False))
        engine.read_only = True
        return engine

    @classmethod
    def open_read_only(cls, data_dir: Path | str) -> DataEngine:
        """For a command that only reads rows (``sessions list``): read-only, no write lock, no
        sqlite-utils (``reading.connect_if_current``); a database that needs upgrading is opened
        as :meth:`open_for_reading` opens it. Writes on the engine raise DataDirReadOnly."""
        root = Path(data_dir).expanduser()
        conn = connect_if_current(root)
        return cls.open_for_reading(root) if conn is None else cls._open_read_only(root, conn)

    @property
    def db(self) -> sqlite_utils.Database:
        """sqlite-utils over :attr:`conn` (writes, and modules that query with it), built on first use."""
        with self._lock:
            if self._db is None:
                from ._sqlite import sqlite_utils

                self._db = sqlite_utils.Database(self.conn)
            return self._db

    @property
    def db_path(self) -> Path:
        return self.data_dir / DB_FILENAME

    @property
    def blobs(self) -> BlobStore:
        return self._blobs

    @property
    def lock(self) -> threading.RLock:
        """The connection lock: hold it to run several statements as one unit from any thread."""
        return self._lock

    @contextlib.contextmanager
    def batch(self) -> Iterator[DataEngine]:
        """Group many writes into one transaction (bulk imports, synthetic sessions): each write
        inside becomes a savepoint, and nothing is visible to others until the batch commits."""
        with storage_errors(self.data_dir), self._lock, write_transaction(self.db):
            yield self

    def close(self) -> None:
        with self._lock:
            if not self._closed:
                self._closed = True
                self.conn.close()

    def abandon_interrupted_write(self) -> bool:
        """Roll back a write a stop signal cut short. ``write_transaction`` rolls back what it was
        inside, but a signal that lands between its ``BEGIN IMMEDIATE`` and its ``try`` (or inside
        contextlib's machinery around them) leaves the transaction open on this connection; every
        later write then nests in it and is lost when the process exits, the final status and the
        lease release included. Call it only where no write of this process can be under way (the
        stop path, after the background work is closed). True when something was rolled back."""
        with self._lock:
            if self._closed or not self.conn.in_transaction:
                return False
            self.conn.execute("ROLLBACK")
            return True

    def __enter__(self) -> DataEngine:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    def _rows(self, sql: str, params: list[Any] | dict[str, Any] | None = None) -> list[dict[str, Any]]:
        return select_rows(self.conn, sql, params)

    # --- sessions ------------------------------------------------------------------------

    new_session_id = staticmethod(new_session_id)

    @writes
    def create_session(self, rec: SessionRecord) -> str:
        """Store a new session; returns its id (``rec.id``, or a fresh one when empty)."""
        check_choice("session status", rec.status, SESSION_STATUSES)
        generated = not rec.id
        started_at = normalize_iso(rec.started_at) if rec.started_at else now_iso()
        with self._lock:
            for _ in range(20):
                session_id = new_session_id() if generated else rec.id
                row = encode(replace(rec, id=session_id, started_at=started_at), SESSION_JSON, skip=())
                try:
                    with write_transaction(self.db):
                        self.db.table("sessions").insert(row)
                    return session_id
                except sqlite3.IntegrityError as exc:
                    if "FOREIGN KEY" in str(exc):
                        raise SessionNotFound(
                            f"parent session {rec.parent_session!r} does not exist", hint=SESSION_HINT
                        ) from exc
                    if not generated:
                        raise DataEngineError(f"session {session_id} already exists") from exc
            raise DataEngineError("could not allocate a unique session id")

    @writes
    def update_session(self, session_id: str, **changes: Any) -> None:
        """Set some session columns (JSON columns take dicts)."""
        allowed = {f.name for f in fields(SessionRecord)} - {"id"}
        unknown = sorted(set(changes) - allowed)
        if unknown:
            raise DataEngineError(f"unknown session field(s): {', '.join(unknown)}")
        if not changes:
            return
        if "status" in changes:
            check_choice("session status", changes["status"], SESSION_STATUSES)
        for key in ("started_at", "ended_at"):
            if changes.get(key) is not None:
                changes[key] = normalize_iso(changes[key])
        params = {k: (dump_json(v) if k in SESSION_JSON else v) for k, v in changes.items()}
        assignments = ", ".join(f"{k} = :{k}" for k in params)
        params["_id"] = session_id
        with self._lock, write_transaction(self.db):
            cursor = self.db.execute(f"UPDATE sessions SET {assignments} WHERE id = :_id", params)
            if cursor.rowcount == 0:
                raise SessionNotFound(f"no session {session_id!r}", hint=SESSION_HINT)

    def finish_session(self, session_id: str, status: str, result: dict[str, Any] | None = None) -> None:
        """Mark a session ended: final status, result JSON, ``ended_at`` = now."""
        check_choice("final session status", status, FINAL_SESSION_STATUSES)
        self.update_session(session_id, status=status, result=result or {}, ended_at=now_iso())

    def get_session(self, id_or_prefix: str) -> SessionRecord:
        """By full id, unique prefix, or ``latest``. Raises ``SessionNotFound`` (with candidates)."""
        key = (id_or_prefix or "").strip()
        if not key:
            raise SessionNotFound("no session id given", hint=SESSION_HINT)
        with self._lock:
            if key in ("latest", "last"):
                latest = self.latest_session()
                if latest is None:
                    raise SessionNotFound("there are no sessions yet", hint="start one with `artemis run`")
                return latest
            rows = self._rows("SELECT * FROM sessions WHERE id = ?", [key])
            if not rows:
                rows = self._rows(
                    "SELECT * FROM sessions WHERE substr(id, 1, ?) = ? ORDER BY id LIMIT 11", [len(key), key]
                )
        if not rows:
            raise SessionNotFound(f"no session matches {key!r}", hint=SESSION_HINT)
        if len(rows) > 1:
            names = ", ".join(r["id"] for r in rows[:10]) + (", …" if len(rows) > 10 else "")
            raise SessionNotFound(
                f"session prefix {key!r} is ambiguous: {names}",
                hint="type more characters of the session id",
            )
        return decode(rows[0], SESSION_JSON, SessionRecord)

    def list_sessions(
        self,
        limit: int | None = 20,
        status: str | None = None,
        task_id: str | None = None,
        since: str | datetime | None = None,
    ) -> list[SessionRecord]:
        """Newest first. ``since``: sessions started at or after this time (ISO string or datetime).
        Statuses are as a user should see them (``derived_status``): a ``running`` session whose
        owner is gone is listed, and filtered, as ``interrupted``."""
        sql, params, derive = session_query(limit, status, task_id, since)
        with self._lock:
            rows = self._rows(sql, params)
            found = [decode(r, SESSION_JSON, SessionRecord) for r in rows]
            found = [replace(r, status=self.derived_status(r)) for r in found]
        if derive:
            found = [r for r in found if r.status == status]
            if limit is not None and limit > 0:
                found = found[:limit]
        return found

    def session_count(self) -> int:
        with self._lock:
            return int(self._rows("SELECT count(*) AS n FROM sessions")[0]["n"])

    def latest_session(self) -> SessionRecord | None:
        found = self.list_sessions(limit=1)
        return found[0] if found else None

    def _require_session(self, session_id: str) -> dict[str, Any]:
        rows = self._rows("SELECT * FROM sessions WHERE id = ?", [session_id])
        if not rows:
            raise SessionNotFound(f"no session {session_id!r}", hint=SESSION_HINT)
        return rows[0]

    # --- steps ---------------------------------------------------------------------------

    @writes
    def record_step(
        self,
        step: StepRecord,
        blobs: dict[str, tuple[bytes, str]] | None = None,
        events: list[EventRecord] | tuple[EventRecord, ...] = (),
    ) -> StepRecord:
        """Commit one step atomically: blob files first, then (one transaction) blob rows, the
        step row and its events. Returns the stored record (id, blob hashes, times filled in).

        ``blobs`` maps a blob field (``pre_screenshot``, ``post_screenshot``, ``ui_xml``,
        ``post_ui_xml``, ``marker``) to ``(bytes, kind)``. A duplicate step number raises
        ``DuplicateStep`` and stores no row. Text typed into a password field is redacted.
        """
        blobs = dict(blobs or {})
        validate_step(step, blobs)
        with self._lock:
            session = self._require_session(step.session_id)
            if self._step_exists(step.session_id, step.number):
                raise duplicate_step(step)
            # 1. Blob files, durable before any row refers to them.
            blob_rows: dict[str, tuple[str, int]] = {}  # sha -> (kind, size)
            filled: dict[str, Any] = {}
            for name, (data, kind) in blobs.items():
                sha = self._blobs.put(data)
                filled[name] = sha
                blob_rows.setdefault(sha, (kind, len(data)))
            for name, sha in step.blob_refs().items():
                if name in filled:
                    continue
                if not self._blobs.exists(sha):
                    raise BlobMissing(
                        f"step {step.number}: {name} refers to blob {sha[:12]}… which is not stored"
                    )
                blob_rows.setdefault(sha, (DEFAULT_BLOB_KIND[name], self._blobs.path(sha).stat().st_size))
            record = complete_step(replace(step, **filled), session["started_at"])
            # 2. Rows, all or nothing.
            created = now_iso()
            with write_transaction(self.db):
                for sha, (kind, size) in blob_rows.items():
                    insert_row(self.conn, "blobs", {"sha256": sha, "kind": kind, "size": size,
                                                    "created_at": created}, ignore=True)
                try:
                    step_id = insert_row(self.conn, "steps", encode(record, STEP_JSON))
                except sqlite3.IntegrityError as exc:
                    if "UNIQUE" in str(exc):
                        raise duplicate_step(step) from exc
                    raise DataEngineError(f"step {step.number} could not be stored: {exc}") from exc
                for event in events:
                    self._insert_event(event_for_step(event, record))
            return replace(record, id=step_id)

    def _step_exists(self, session_id: str, number: int) -> bool:
        return bool(
            self._rows("SELECT 1 AS x FROM steps WHERE session_id = ? AND number = ?", [session_id, number])
        )

    def get_steps(
        self, session_id: str, start: int | None = None, end: int | None = None
    ) -> list[StepRecord]:
        """Steps ordered by number; ``start``/``end`` are inclusive step numbers."""
        sql = "SELECT * FROM steps WHERE session_id = ?"
        params: list[Any] = [session_id]
        if start is not None:
            sql += " AND number >= ?"
            params.append(start)
        if end is not None:
            sql += " AND number <= ?"
            params.append(end)
        sql += " ORDER BY number"
        with self._lock:
            rows = self._rows(sql, params)
        return [decode(r, STEP_JSON, StepRecord) for r in rows]

    def steps_numbered(self, session_id: str, numbers: Iterable[int]) -> list[StepRecord]:
        """The recorded steps among ``numbers``, ordered by number (one query)."""
        wanted = sorted({int(n) for n in numbers})
        if not wanted:
            return []
        marks = ", ".join("?" for _ in wanted)
        with self._lock:
            rows = self._rows(f"SELECT * FROM steps WHERE session_id = ? AND number IN ({marks}) ORDER BY number",
                              [session_id, *wanted])
        return [decode(r, STEP_JSON, StepRecord) for r in rows]

    def get_step(self, session_id: str, number: int) -> StepRecord:
        with self._lock:
            rows = self._rows("SELECT * FROM steps WHERE session_id = ? AND number = ?", [session_id, number])
            if not rows:
                last = self.last_step_number(session_id)
        if not rows:
            have = f"it has steps 1–{last}" if last else "it has no steps"
            raise StepNotFound(f"session {session_id} has no step {number}", hint=have)
        return decode(rows[0], STEP_JSON, StepRecord)

    def step_count(self, session_id: str) -> int:
        with self._lock:
            rows = self._rows("SELECT count(*) AS n FROM steps WHERE session_id = ?", [session_id])
        return int(rows[0]["n"])

    def step_times(self, session_id: str) -> list[tuple[str, str | None]]:
        """(started_at, ended_at) of every step: two columns, no step record decoded."""
        with self._lock:
            rows = self.conn.execute("SELECT started_at, ended_at FROM steps WHERE session_id = ?", [session_id])
            return [(started, ended) for started, ended in rows.fetchall()]

    def last_step_number(self, session_id: str) -> int:
        """Highest recorded step number, 0 when the session has no steps."""
        with self._lock:
            rows = self._rows("SELECT max(number) AS n FROM steps WHERE session_id = ?", [session_id])
        return int(rows[0]["n"] or 0)

    # --- summaries -----------------------------------------------------------------------

    @writes
    def write_summary(
        self,
        session_id: str,
        step_number: int,
        *,
        status: str,
        text: str | None = None,
        source: str,
        version: int,
        model: str | None = None,
    ) -> bool:
        """Versioned summary write (SPEC §5 invariant 3; rule in ``engine.summaries``).

        One conditional UPDATE decides and applies; returns whether the write was applied.
        Raises ``StepNotFound`` when the step does not exist.
        """
        check_choice("summary status", status, SUMMARY_STATUSES)
        if not isinstance(version, int) or isinstance(version, bool) or version < 0:
            raise DataEngineError(f"summary version must be a non-negative integer, not {version!r}")
        params = {
            "status": status,
            "version": version,
            "text": text,
            "source": source,
            "model": model,
            "session_id": session_id,
            "number": step_number,
        }
        with self._lock:
            with write_transaction(self.db):
                applied = self.db.execute(SUMMARY_UPDATE_SQL, params).rowcount == 1
            if not applied and not self._step_exists(session_id, step_number):
                raise StepNotFound(f"session {session_id} has no step {step_number}")
        return applied

    # --- model calls and events ----------------------------------------------------------

    def set_pricer(self, session_id: str, pricer: Any) -> None:
        """Price every call of ``session_id`` recorded from now on with ``pricer``
        (``models.pricing.Pricer``); None stops pricing it."""
        with self._lock:
            if pricer is None:
                self._pricers.pop(session_id, None)
            else:
                self._pricers[session_id] = pricer

    @writes
    def record_llm_call(self, rec: LlmCallRecord) -> int:
        pricer = self._pricers.get(rec.session_id)
        if pricer is not None and rec.price_source is None:
            price = pricer.price(rec.model, prompt=rec.prompt_tokens, cached=rec.cached_tokens,
                                 output=rec.completion_tokens + rec.thoughts_tokens)
            rec.cost_usd, rec.price_source = price.usd, price.source
        row = encode(rec, NO_JSON)
        row["created_at"] = normalize_iso(rec.created_at) if rec.created_at else now_iso()
        with self._lock:
            try:
                with write_transaction(self.db):
                    return insert_row(self.conn, "llm_calls", row)
            except sqlite3.IntegrityError as exc:
                raise SessionNotFound(f"no session {rec.session_id!r}", hint=SESSION_HINT) from exc

    def llm_calls(self, session_id: str) -> list[LlmCallRecord]:
        with self._lock:
            rows = self._rows("SELECT * FROM llm_calls WHERE session_id = ? ORDER BY id", [session_id])
        return [decode(r, NO_JSON, LlmCallRecord) for r in rows]

    @writes
    def record_event(self, rec: EventRecord) -> int:
        if not rec.session_id:
            raise DataEngineError(f"event {rec.kind!r} has no session_id")
        with self._lock:
            try:
                with write_transaction(self.db):
                    return self._insert_event(rec)
            except sqlite3.IntegrityError as exc:
                raise SessionNotFound(f"no session {rec.session_id!r}", hint=SESSION_HINT) from exc

    @writes
    def record_events(self, recs: Iterable[EventRecord]) -> list[int]:
        """Several events of one moment in one transaction, all or none (a turn's ledger
        decisions and the ``turn`` event that closes them)."""
        recs = list(recs)
        for rec in recs:
            if not rec.session_id:
                raise DataEngineError(f"event {rec.kind!r} has no session_id")
        with self._lock:
            try:
                with write_transaction(self.db):
                    return [self._insert_event(rec) for rec in recs]
            except sqlite3.IntegrityError as exc:
                raise SessionNotFound(f"no session {recs[0].session_id!r}", hint=SESSION_HINT) from exc

    def _insert_event(self, rec: EventRecord) -> int:
        if not rec.kind:
            raise DataEngineError("an event needs a kind")
        row = encode(rec, EVENT_JSON)
        row["created_at"] = normalize_iso(rec.created_at) if rec.created_at else now_iso()
        return insert_row(self.conn, "events", row)

    def events(self, session_id: str, kind: str | None = None) -> list[EventRecord]:
        sql = "SELECT * FROM events WHERE session_id = ?"
        params: list[Any] = [session_id]
        if kind is not None:
            sql += " AND kind = ?"
            params.append(kind)
        with self._lock:
            rows = self._rows(sql + " ORDER BY id", params)
        return [decode(r, EVENT_JSON, EventRecord) for r in rows]

    # --- blobs ---------------------------------------------------------------------------

    def blob(self, sha: str) -> bytes:
        return self._blobs.get(sha)

    @writes
    def store_blob(self, data: bytes, kind: str) -> str:
        """Store bytes outside a step (file, then an ``INSERT OR IGNORE`` row); returns the sha."""
        with self._lock:
            sha = self._blobs.put(data)
            with write_transaction(self.db):
                insert_row(self.conn, "blobs", {"sha256": sha, "kind": kind, "size": len(data),
                                                "created_at": now_iso()}, ignore=True)
        return sha

    @writes
    def remove_session(self, id_or_prefix: str, *, delete_blobs: bool = True) -> RemovedSession:
        """Delete a session and every row that names it; with ``delete_blobs``, also the blob
        files no other row refers to."""
        with self._lock:
            rec = self.get_session(id_or_prefix)
            return remove_session_rows(self.db, self._blobs, rec.id, delete_blobs=delete_blobs)

    # --- ownership (engine/lease.py) -----------------------------------------------------

    @writes
    def acquire_lease(self, session_id: str, command: str) -> Lease:
        """Own ``session_id`` for this process until ``release()``; ``SessionBusy`` (exit 2) when a
        live process owns it. Call before touching the device."""
        self._check_writable()
        with self._lock:
            self._require_session(session_id)
            owner, previous = acquire(self.db, session_id, command)
        return Lease(self, owner, previous)

    @writes
    def heartbeat_lease(self, owner: LeaseOwner) -> bool:
        """Refresh our heartbeat; False when the lease is no longer ours."""
        with self._lock:
            return heartbeat(self.db, owner)

    @writes
    def release_lease(self, owner: LeaseOwner) -> None:
        with self._lock:
            release(self.db, owner)

    def data_version(self) -> int:
        """SQLite's ``PRAGMA data_version``: it changes when another connection (another process,
        or another engine on the same data dir) commits, never for this engine's own writes."""
        with self._lock:
            return int(self.conn.execute("PRAGMA data_version").fetchone()[0])

    def lease_owner(self, session_id: str) -> LeaseOwner | None:
        """The stored owner of ``session_id`` (live or not), None when nobody holds it."""
        with self._lock:
            return read_owner(self.conn, session_id)

    def derived_status(self, rec: SessionRecord) -> SessionStatus:
        """``rec.status``, except that a ``running`` session with no live owner is ``interrupted``."""
        if rec.status != "running":
            return rec.status
        return derived_status(rec.status, self.lease_owner(rec.id))

    def _check_writable(self) -> None:
        if self.read_only:
            raise read_only(self.data_dir)
