"""Agent notes (SPEC §10.5): ``save_note(key, content)`` / ``read_note(key)``.

Rows are append-only: saving an existing key adds a row with ``version + 1``; readers take the
newest version. Every save is indexed for recall in the same transaction (only the newest version
of a key stays in ``note_fts``: an overwritten note is not recalled with its old content).

What ``read_note`` hands the model is capped (:func:`readable_content`): at most
``READ_MAX_CHARS`` characters (about 2000 tokens), cut at a line or between whole values, with a
last line saying how much was left out. The stored note is never cut.
"""

from __future__ import annotations

from contextlib import AbstractContextManager
from dataclasses import asdict, dataclass
from typing import Any

from artemis_cli.engine.clock import now_iso
from artemis_cli.engine.db import DataEngine
from artemis_cli.engine.rows import select_rows
from artemis_cli.engine.transaction import write_transaction
from artemis_cli.errors import SessionNotFound, UsageError

__all__ = [
    "MAX_CONTENT_CHARS",
    "MAX_KEY_CHARS",
    "READ_MAX_CHARS",
    "Note",
    "NoteError",
    "engine_lock",
    "index_note",
    "list_notes",
    "notes_written",
    "read_note",
    "readable_content",
    "recited_notes",
    "save_note",
]

MAX_KEY_CHARS = 200
#: what save_note accepts: about 8000 tokens. A larger note is refused with a tool error the model
#: reads (it can split the note), so one call cannot put megabytes into the DataEngine and recall.
MAX_CONTENT_CHARS = 32_000
READ_MAX_CHARS = 8000  # what read_note returns: about 2000 tokens (characters / 4)
#: The current observation recites at most this many notes, in at most RECITE_MAX_CHARS
#: characters, each value cut to RECITE_NOTE_CHARS (read_note gives the whole note).
RECITE_MAX_NOTES = 10
RECITE_MAX_CHARS = 1500
RECITE_NOTE_CHARS = 300


class NoteError(UsageError):
    """A note request the model can fix (empty key, key too long). Shown to it as a tool error."""


@dataclass(frozen=True)
class Note:
    session_id: str
    key: str
    content: str
    step: int | None
    version: int
    created_at: str
    id: int | None = None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def engine_lock(engine: DataEngine) -> AbstractContextManager[Any]:
    """The engine's connection lock (the connection is shared with lens worker threads)."""
    return engine.lock


def _clean_key(key: str) -> str:
    key = (key or "").strip()
    if not key:
        raise NoteError("a note needs a non-empty key")
    if len(key) > MAX_KEY_CHARS:
        raise NoteError(f"a note key has at most {MAX_KEY_CHARS} characters (got {len(key)})")
    return key


def _note(row: dict[str, Any]) -> Note:
    return Note(
        session_id=row["session_id"],
        key=row["key"],
        content=row["content"],
        step=row["step"],
        version=row["version"],
        created_at=row["created_at"],
        id=row["id"],
    )


def index_note(engine: DataEngine, note: Note) -> None:
    """(Re-)index a note for recall: replaces any indexed version of the same key."""
    with engine_lock(engine), write_transaction(engine.db):
        engine.db.execute(
            "DELETE FROM note_fts WHERE session_id = ? AND note_key = ?", [note.session_id, note.key]
        )
        engine.db.execute(
            "INSERT INTO note_fts (session_id, step, note_key, version, text) VALUES (?, ?, ?, ?, ?)",
            [note.session_id, note.step, note.key, note.version, f"{note.key}: {note.content}"],
        )


def save_note(engine: DataEngine, session_id: str, key: str, content: str, step: int | None) -> int:
    """Store a new version of note ``key`` written at ``step``; returns its version (1, 2, …)."""
    key = _clean_key(key)
    content = content if isinstance(content, str) else str(content)
    if len(content) > MAX_CONTENT_CHARS:
        raise NoteError(f"a note holds at most {MAX_CONTENT_CHARS} characters (got {len(content)}); "
                        "save it as several notes")
    with engine_lock(engine):
        if not list(engine.db.query("SELECT 1 AS x FROM sessions WHERE id = ?", [session_id])):
            raise SessionNotFound(f"no session {session_id!r}")
        with write_transaction(engine.db):
            rows = list(
                engine.db.query(
                    "SELECT max(version) AS v FROM notes WHERE session_id = ? AND key = ?", [session_id, key]
                )
            )
            version = int(rows[0]["v"] or 0) + 1
            created = now_iso()
            cursor = engine.db.execute(
                "INSERT INTO notes (session_id, key, content, step, version, created_at) VALUES (?, ?, ?, ?, ?, ?)",
                [session_id, key, content, step, version, created],
            )
            index_note(
                engine,
                Note(session_id, key, content, step, version, created, id=cursor.lastrowid),
            )
    return version


def read_note(engine: DataEngine, session_id: str, key: str) -> Note | None:
    """The newest version of ``key``, or None when it was never saved."""
    key = _clean_key(key)
    with engine_lock(engine):
        rows = list(
            engine.db.query(
                "SELECT * FROM notes WHERE session_id = ? AND key = ? ORDER BY version DESC LIMIT 1",
                [session_id, key],
            )
        )
    return _note(rows[0]) if rows else None


def list_notes(engine: DataEngine, session_id: str) -> list[Note]:
    """The newest version of every key, ordered by the step it was written at."""
    with engine_lock(engine):  # one statement: it runs every step (the recited notes)
        rows = select_rows(
            engine.db.conn,
            """
            SELECT n.* FROM notes n
            WHERE n.session_id = ? AND n.version = (
                SELECT max(version) FROM notes m WHERE m.session_id = n.session_id AND m.key = n.key)
            ORDER BY n.step, n.id
            """,
            [session_id],
        )
    return [_note(r) for r in rows]


def notes_written(engine: DataEngine, session_id: str, start_step: int, end_step: int) -> list[Note]:
    """Every note version written at steps ``start_step..end_step`` (inclusive), oldest first.
    A chunk's effects must mention each of them (SPEC §10.3)."""
    with engine_lock(engine):
        rows = list(
            engine.db.query(
                "SELECT * FROM notes WHERE session_id = ? AND step BETWEEN ? AND ? ORDER BY step, id",
                [session_id, start_step, end_step],
            )
        )
    return [_note(r) for r in rows]


def readable_content(content: str, limit: int = READ_MAX_CHARS) -> tuple[str, bool]:
    """``content`` as ``read_note`` returns it: whole when it fits in ``limit`` characters, else
    its start (cut at a line break when one is near, else between whole values) and a line
    saying how much was cut. Returns ``(text, cut)``."""
    if len(content) <= limit:
        return content, False
    from artemis_cli.memory.recall_text import safe_cut

    room = limit - 120  # the closing line fits in the limit too
    head = content[:room]
    newline = head.rfind("\n")
    head = head[:newline] if newline >= room * 3 // 4 else safe_cut(content, room - 1).removesuffix("…")
    head = head.rstrip()
    shown = len(head)
    line = (f"[note cut: showing the first {shown} of {len(content)} characters; "
            f"{len(content) - shown} more are not shown]")
    return f"{head}\n{line}", True


def recited_notes(notes: list[Note], *, max_notes: int = RECITE_MAX_NOTES, max_chars: int = RECITE_MAX_CHARS,
                  note_chars: int = RECITE_NOTE_CHARS) -> list[str]:
    """The lines that recite ``notes`` (newest version of each key, as :func:`list_notes` gives
    them) in the current observation: newest first, ``- "key": "value"``, key and value quoted as
    untrusted text (a note may hold what the screen showed) and the value cut to ``note_chars``;
    at most ``max_notes`` lines in ``max_chars`` characters, then ``(+N more: read_note)``.
    [] when there are no notes."""
    from artemis_cli.perception.quoting import quote_untrusted

    newest = sorted(notes, key=lambda n: (n.step or 0, n.id or 0), reverse=True)
    lines: list[str] = []
    used = 0
    for note in newest[:max_notes]:
        line = f"- {quote_untrusted(note.key)}: {quote_untrusted(note.content, note_chars)}"
        if lines and used + len(line) + 1 > max_chars:
            break
        lines.append(line)
        used += len(line) + 1
    if len(lines) < len(newest):
        lines.append(f"(+{len(newest) - len(lines)} more: read_note)")
    return lines
