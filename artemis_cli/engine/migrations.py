"""Append-only schema migrations, recorded in ``_migrations``.

Rules: never edit or reorder an entry of ``MIGRATIONS`` once released; add a new one at the end.
Entry *i* (1-based) is recorded with ``id = i`` and its name; ``migrate`` refuses a database whose
recorded names disagree with this list or that knows more migrations than this build (it was
written by a newer Artemis).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from typing import TYPE_CHECKING

from .clock import now_iso
from .errors import SchemaVersionError
from .transaction import write_transaction

if TYPE_CHECKING:
    import sqlite_utils

Migration = Callable[["sqlite_utils.Database"], None]

_CREATE_MIGRATIONS_TABLE = """
CREATE TABLE IF NOT EXISTS _migrations (
    id INTEGER PRIMARY KEY,
    name TEXT NOT NULL UNIQUE,
    applied_at TEXT NOT NULL
)
"""


def _m001_core_tables(db: sqlite_utils.Database) -> None:
    statements = [
        """
        CREATE TABLE sessions (
            id TEXT PRIMARY KEY,
            task_id TEXT,
            goal TEXT NOT NULL DEFAULT '',
            profile TEXT,
            loop TEXT,
            device_serial TEXT,
            device_kind TEXT,
            screen_width INTEGER,
            screen_height INTEGER,
            models TEXT,            -- JSON object: role -> model name
            model_label TEXT,
            status TEXT NOT NULL DEFAULT 'running',
            started_at TEXT NOT NULL,
            ended_at TEXT,
            config TEXT,            -- JSON
            result TEXT,            -- JSON
            parent_session TEXT REFERENCES sessions(id) ON DELETE SET NULL
        )
        """,
        "CREATE INDEX idx_sessions_started_at ON sessions(started_at)",
        "CREATE INDEX idx_sessions_task_id ON sessions(task_id)",
        """
        CREATE TABLE steps (
            id INTEGER PRIMARY KEY,
            session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
            number INTEGER NOT NULL,
            started_at TEXT NOT NULL,
            ended_at TEXT,
            offset_ms INTEGER,
            thought TEXT,
            action_type TEXT NOT NULL,
            action_args TEXT,       -- JSON object
            x INTEGER,
            y INTEGER,
            x2 INTEGER,
            y2 INTEGER,
            target TEXT,            -- JSON: Target.to_dict()
            target_end TEXT,        -- JSON: swipe end Target
            label_source TEXT,
            target_text TEXT,
            target_resource_id TEXT,
            target_class TEXT,
            result_status TEXT NOT NULL DEFAULT 'ok',
            result_detail TEXT,
            verdict TEXT,           -- JSON
            pre_screenshot TEXT,
            post_screenshot TEXT,
            ui_xml TEXT,
            post_ui_xml TEXT,
            marker TEXT,
            pre_dhash TEXT,
            post_dhash TEXT,
            foreground_app TEXT,
            subgoal_hash TEXT,
            milestone TEXT,
            user_instruction TEXT,
            summary TEXT,
            summary_status TEXT NOT NULL DEFAULT 'pending',
            summary_source TEXT,
            summary_version INTEGER NOT NULL DEFAULT 0,
            summary_model TEXT,
            meta TEXT,              -- JSON
            UNIQUE (session_id, number)
        )
        """,
        "CREATE INDEX idx_steps_session_number ON steps(session_id, number)",
        """
        CREATE TABLE blobs (
            sha256 TEXT PRIMARY KEY,
            kind TEXT NOT NULL,
            size INTEGER NOT NULL,
            created_at TEXT NOT NULL
        )
        """,
        """
        CREATE TABLE llm_calls (
            id INTEGER PRIMARY KEY,
            session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
            step INTEGER,           -- step number (the step row may not exist yet)
            role TEXT NOT NULL,
            model TEXT NOT NULL,
            prompt_tokens INTEGER NOT NULL DEFAULT 0,
            cached_tokens INTEGER NOT NULL DEFAULT 0,
            completion_tokens INTEGER NOT NULL DEFAULT 0,
            thoughts_tokens INTEGER NOT NULL DEFAULT 0,
            latency_ms REAL NOT NULL DEFAULT 0,
            status TEXT NOT NULL DEFAULT 'ok',
            error_class TEXT,
            prefix_hash TEXT,
            request_hash TEXT,
            attempt INTEGER NOT NULL DEFAULT 1,
            created_at TEXT NOT NULL
        )
        """,
        "CREATE INDEX idx_llm_calls_session ON llm_calls(session_id, step)",
        """
        CREATE TABLE events (
            id INTEGER PRIMARY KEY,
            session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
            step INTEGER,           -- step number (nullable: session-level events)
            kind TEXT NOT NULL,
            payload TEXT,           -- JSON
            created_at TEXT NOT NULL
        )
        """,
        "CREATE INDEX idx_events_session ON events(session_id, step)",
    ]
    for sql in statements:
        db.execute(sql)


#: Recall tokenizer: case- and accent-insensitive words (SPEC §10.5). CJK runs form one token with
#: unicode61, so recall also falls back to a substring (LIKE) search; see ``memory.recall``.
_FTS_TOKENIZE = "unicode61 remove_diacritics 2"


def _m002_memory_notes_fts(db: sqlite_utils.Database) -> None:
    statements = [
        """
        CREATE TABLE notes (
            id INTEGER PRIMARY KEY,
            session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
            key TEXT NOT NULL,
            content TEXT NOT NULL,
            step INTEGER,           -- step number the note was written at
            version INTEGER NOT NULL,
            created_at TEXT NOT NULL,
            UNIQUE (session_id, key, version)
        )
        """,
        "CREATE INDEX idx_notes_session_step ON notes(session_id, step)",
        # Which steps recall has indexed (and at which summary version): lets recall back-fill
        # steps recorded before indexing was wired in, and re-index late summaries.
        """
        CREATE TABLE recall_indexed (
            session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
            step INTEGER NOT NULL,
            summary_version INTEGER NOT NULL DEFAULT 0,
            PRIMARY KEY (session_id, step)
        )
        """,
        f"""
        CREATE VIRTUAL TABLE step_fts USING fts5(
            session_id UNINDEXED, step UNINDEXED, kind UNINDEXED, text,
            tokenize = '{_FTS_TOKENIZE}'
        )
        """,
        f"""
        CREATE VIRTUAL TABLE note_fts USING fts5(
            session_id UNINDEXED, step UNINDEXED, note_key UNINDEXED, version UNINDEXED, text,
            tokenize = '{_FTS_TOKENIZE}'
        )
        """,
        f"""
        CREATE VIRTUAL TABLE chunk_fts USING fts5(
            session_id UNINDEXED, start_step UNINDEXED, end_step UNINDEXED, text,
            tokenize = '{_FTS_TOKENIZE}'
        )
        """,
    ]
    for sql in statements:
        db.execute(sql)


def _m003_history_chunks(db: sqlite_utils.Database) -> None:
    statements = [
        # SPEC §5: chunk rows are append-only; a new version of a range is a new row and readers
        # take the newest version per (session_id, start_step, end_step).
        """
        CREATE TABLE history_chunks (
            id INTEGER PRIMARY KEY,
            session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
            start_step INTEGER NOT NULL,
            end_step INTEGER NOT NULL,
            version INTEGER NOT NULL,
            status TEXT NOT NULL,   -- pending | ready | failed | ledger_only
            milestone TEXT,
            band1 TEXT,             -- JSON object: synopsis and effects
            band2 TEXT,             -- interval narrative, one line per interval
            band3 TEXT,             -- step ledger lines (mechanical)
            rendered TEXT,          -- the chunk as the transcript shows it
            source TEXT,            -- lens name/model, or "mechanical"
            checker TEXT,           -- JSON, nullable: late checker verdict
            created_at TEXT NOT NULL,
            UNIQUE (session_id, start_step, end_step, version)
        )
        """,
        "CREATE INDEX idx_history_chunks_range ON history_chunks(session_id, start_step, end_step, version)",
    ]
    for sql in statements:
        db.execute(sql)


def _m005_session_leases(db: sqlite_utils.Database) -> None:
    # SPEC §15 session ownership: one row per owned session (engine/lease.py). The row is
    # written and checked inside one BEGIN IMMEDIATE transaction, so two processes can never
    # both believe they own a session.
    db.execute(
        """
        CREATE TABLE session_leases (
            session_id TEXT PRIMARY KEY REFERENCES sessions(id) ON DELETE CASCADE,
            owner_host TEXT NOT NULL,
            owner_pid INTEGER NOT NULL,
            owner_started TEXT,          -- the owner's process start time (guards pid reuse)
            command TEXT NOT NULL,       -- run | resume | replay
            token TEXT NOT NULL,         -- random, identifies this holding of the lease
            acquired_at TEXT NOT NULL,
            heartbeat_at TEXT NOT NULL
        )
        """
    )


def _m004_recall_sync_indexes(db: sqlite_utils.Database) -> None:
    # Recall.sync compares (count, total summary_version) of steps and recall_indexed per session:
    # covering indexes make both index-only scans instead of table scans.
    db.execute("CREATE INDEX idx_steps_session_summary_version ON steps(session_id, summary_version)")
    db.execute("CREATE INDEX idx_recall_indexed_session_version ON recall_indexed(session_id, summary_version)")


def _m006_step_outcomes(db: sqlite_utils.Database) -> None:
    # SPEC §15 action outcomes: what observably happened after each step's action (screen
    # changed or not, the target's new state, a field's text, new windows), as JSON
    # (operators/outcome.py). Older steps keep NULL: their ledger lines render as before.
    db.execute("ALTER TABLE steps ADD COLUMN outcome TEXT")


def _m007_llm_call_wire_hash(db: sqlite_utils.Database) -> None:
    # The hash of what went over the provider's wire, where that is not a one-to-one map of the
    # provider-neutral request (the OpenAI chat-completions body): `sessions prompt` re-renders
    # and checks it. NULL for Gemini and offline calls.
    db.execute("ALTER TABLE llm_calls ADD COLUMN wire_hash TEXT")


def _m008_step_intent(db: sqlite_utils.Database) -> None:
    # Issue 22: what the model said it expected each action to do (the action tools' `intent`
    # argument), shown beside the observed outcome. Older steps keep NULL (no intent).
    db.execute("ALTER TABLE steps ADD COLUMN intent TEXT")


def _m009_llm_call_cost(db: sqlite_utils.Database) -> None:
    # Issue 24: what each model call cost in USD, priced when it was recorded
    # (models/pricing.py), and which price list said so (genai-prices, profile, local, offline,
    # unknown). Calls recorded before keep NULL in both: their cost shows as unknown.
    db.execute("ALTER TABLE llm_calls ADD COLUMN cost_usd REAL")
    db.execute("ALTER TABLE llm_calls ADD COLUMN price_source TEXT")


def _m010_replay_lineage(db: sqlite_utils.Database) -> None:
    # Issue 24 self-healing replay: how each replay step came about (replayed, retargeted or
    # healed; NULL for steps of runs and of replays recorded before this), and which replay a
    # user promoted to be the baseline later replays of a source session use.
    db.execute("ALTER TABLE steps ADD COLUMN replay_mark TEXT")
    db.execute(
        """
        CREATE TABLE replay_baselines (
            source_session TEXT PRIMARY KEY REFERENCES sessions(id) ON DELETE CASCADE,
            baseline_session TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
            promoted_at TEXT NOT NULL
        )
        """
    )


def _m011_suites(db: sqlite_utils.Database) -> None:
    # ``artemis test`` suites and their cases (artemis_cli.suite.store). The case's session column
    # is ``session``, not ``session_id``, so session bundles do not carry suite rows.
    db.execute("""CREATE TABLE suites (id TEXT PRIMARY KEY, started_at TEXT NOT NULL, ended_at TEXT,
                  args TEXT NOT NULL, status TEXT NOT NULL, totals TEXT)""")
    db.execute("""CREATE TABLE suite_cases (suite_id TEXT NOT NULL REFERENCES suites(id), case_key TEXT NOT NULL,
                  attempt INTEGER NOT NULL, session TEXT, status TEXT NOT NULL, device TEXT, failure TEXT,
                  flaky INTEGER NOT NULL DEFAULT 0, PRIMARY KEY (suite_id, case_key, attempt))""")
    db.execute("CREATE INDEX suite_cases_session ON suite_cases(session)")


def _m012_library_baselines(db: sqlite_utils.Database) -> None:
    # Issue 37: the Python API's cached AI steps. A cache key (``Phone.open(cache=…)``, the pytest
    # plugin's test node id) names the session whose AI steps later runs replay with no model call.
    # (``baseline_session``, not ``session_id``: a key is not part of a session, so bundles do not carry it)
    db.execute("""CREATE TABLE library_baselines (cache_key TEXT PRIMARY KEY,
                  baseline_session TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
                  updated_at TEXT NOT NULL)""")


#: Append-only. (name, function); position + 1 is the migration id.
MIGRATIONS: list[tuple[str, Migration]] = [
    ("0001_core_tables", _m001_core_tables),
    ("0002_memory_notes_fts", _m002_memory_notes_fts),
    ("0003_history_chunks", _m003_history_chunks),
    ("0004_recall_sync_indexes", _m004_recall_sync_indexes),
    ("0005_session_leases", _m005_session_leases),
    ("0006_step_outcomes", _m006_step_outcomes),
    ("0007_llm_call_wire_hash", _m007_llm_call_wire_hash),
    ("0008_step_intent", _m008_step_intent),
    ("0009_llm_call_cost", _m009_llm_call_cost),
    ("0010_replay_lineage", _m010_replay_lineage),
    ("0011_suites", _m011_suites),
    ("0012_library_baselines", _m012_library_baselines),
]


def applied_migrations(conn: sqlite3.Connection) -> dict[int, str]:
    """The migrations recorded in the database (read with the stdlib connection)."""
    if conn.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = '_migrations'").fetchone() is None:
        return {}
    return {int(number): str(name) for number, name in conn.execute("SELECT id, name FROM _migrations ORDER BY id")}


def migrate(db: sqlite_utils.Database, migrations: list[tuple[str, Migration]] | None = None) -> list[str]:
    """Apply every missing migration in order, each in its own transaction. Returns names applied.

    Safe to call from several processes at once: the applied set is re-read inside each
    migration's write transaction, so a migration another process just applied is skipped.
    """
    migrations = MIGRATIONS if migrations is None else migrations
    db.execute(_CREATE_MIGRATIONS_TABLE)
    _check_known(applied_migrations(db.conn), migrations)
    done: list[str] = []
    for number, (name, apply) in enumerate(migrations, start=1):
        with write_transaction(db):
            applied = applied_migrations(db.conn)
            if number in applied:
                continue
            apply(db)
            db.execute(
                "INSERT INTO _migrations (id, name, applied_at) VALUES (?, ?, ?)",
                [number, name, now_iso()],
            )
        done.append(name)
    return done


def check_schema_current(conn: sqlite3.Connection) -> None:
    """For a database that cannot be migrated (read-only): every migration must be applied."""
    applied = applied_migrations(conn)
    _check_known(applied, MIGRATIONS)
    if len(applied) < len(MIGRATIONS):
        raise SchemaVersionError(
            f"the database is at migration {len(applied)} of {len(MIGRATIONS)} and cannot be upgraded "
            "because it is read-only",
            hint="open it once where it is writable (any artemis command upgrades it), or copy it",
        )


def _check_known(applied: dict[int, str], migrations: list[tuple[str, Migration]]) -> None:
    for number, name in applied.items():
        if number > len(migrations):
            raise SchemaVersionError(
                f"the database has migration {number} ({name}) that this Artemis does not know",
                hint="it was written by a newer Artemis; upgrade, or use another --data-dir",
            )
        expected = migrations[number - 1][0]
        if name != expected:
            raise SchemaVersionError(
                f"migration {number} is recorded as {name!r} but this Artemis calls it {expected!r}",
                hint="the data dir belongs to an incompatible build; use another --data-dir",
            )
