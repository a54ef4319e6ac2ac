"""Versioned, append-only chunk rows in ``history_chunks`` (SPEC §5, §10.3).

A chunk covers the step range ``start_step..end_step`` of a session. Writing never updates a
row: :func:`append_chunk_version` adds a row with ``version = newest + 1`` for that range (a late
checker verdict, a lens that became ready after a ledger-only row, ...). Readers take the newest
version per range (:func:`newest_chunks`). A ready chunk's rendered text is indexed for recall
in the same call (a newer version of the range replaces the indexed text).
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, replace
from typing import Any, Literal, get_args

from artemis_cli.engine.clock import now_iso
from artemis_cli.engine.db import DataEngine
from artemis_cli.engine.transaction import write_transaction
from artemis_cli.errors import SessionNotFound, UsageError
from artemis_cli.memory.frozen import FrozenChunk
from artemis_cli.memory.notes import engine_lock
from artemis_cli.memory.recall import Recall

__all__ = [
    "CHUNK_STATUSES",
    "ChunkRow",
    "ChunkStatus",
    "ChunkStoreError",
    "append_chunk_version",
    "chunk_history",
    "frozen_chunk_from_row",
    "newest_chunks",
]

ChunkStatus = Literal["pending", "ready", "failed", "ledger_only"]
CHUNK_STATUSES: tuple[str, ...] = get_args(ChunkStatus)


class ChunkStoreError(UsageError):
    """A chunk row that cannot be stored as given (bad range or status)."""


@dataclass(frozen=True, kw_only=True)
class ChunkRow:
    session_id: str
    start_step: int
    end_step: int
    status: ChunkStatus
    milestone: str | None = None
    band1: dict[str, Any] | None = None
    band2: str | None = None
    band3: str | None = None
    rendered: str | None = None
    source: str = "mechanical"
    checker: dict[str, Any] | None = None
    version: int = 0  # assigned by append_chunk_version
    id: int | None = None
    created_at: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def _row(data: dict[str, Any]) -> ChunkRow:
    return ChunkRow(
        id=data["id"],
        session_id=data["session_id"],
        start_step=data["start_step"],
        end_step=data["end_step"],
        version=data["version"],
        status=data["status"],
        milestone=data["milestone"],
        band1=json.loads(data["band1"]) if data["band1"] is not None else None,
        band2=data["band2"],
        band3=data["band3"],
        rendered=data["rendered"],
        source=data["source"] or "mechanical",
        checker=json.loads(data["checker"]) if data["checker"] is not None else None,
        created_at=data["created_at"],
    )


def _dump(value: dict[str, Any] | None) -> str | None:
    return None if value is None else json.dumps(value, ensure_ascii=False, sort_keys=True)


def append_chunk_version(engine: DataEngine, row: ChunkRow) -> ChunkRow:
    """Store ``row`` as the next version of its range; returns it with ``id``, ``version`` and
    ``created_at`` filled. A ready row's ``rendered`` text is indexed for recall."""
    if row.status not in CHUNK_STATUSES:
        raise ChunkStoreError(f"unknown chunk status {row.status!r}", hint=f"use one of {', '.join(CHUNK_STATUSES)}")
    if row.start_step < 1 or row.end_step < row.start_step:
        raise ChunkStoreError(f"bad chunk range {row.start_step}-{row.end_step}")
    db = engine.db
    with engine_lock(engine):
        if not list(db.query("SELECT 1 AS x FROM sessions WHERE id = ?", [row.session_id])):
            raise SessionNotFound(f"no session {row.session_id!r}")
        with write_transaction(db):
            found = list(
                db.query(
                    "SELECT max(version) AS v FROM history_chunks WHERE session_id = ? AND start_step = ? AND end_step = ?",
                    [row.session_id, row.start_step, row.end_step],
                )
            )
            version = int(found[0]["v"] or 0) + 1
            created = now_iso()
            cursor = db.execute(
                """
                INSERT INTO history_chunks (session_id, start_step, end_step, version, status, milestone,
                    band1, band2, band3, rendered, source, checker, created_at)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                """,
                [
                    row.session_id, row.start_step, row.end_step, version, row.status, row.milestone,
                    _dump(row.band1), row.band2, row.band3, row.rendered, row.source, _dump(row.checker), created,
                ],
            )
        stored = replace(row, id=cursor.lastrowid, version=version, created_at=created)
        if stored.status == "ready" and stored.rendered:
            Recall(engine).index_chunk(stored.session_id, stored.start_step, stored.end_step, stored.rendered)
    return stored


def newest_chunks(engine: DataEngine, session_id: str) -> list[ChunkRow]:
    """The newest version of every range of the session, ordered by start (then end) step."""
    with engine_lock(engine):
        rows = list(
            engine.db.query(
                """
                SELECT c.* FROM history_chunks c
                WHERE c.session_id = ? AND c.version = (
                    SELECT max(version) FROM history_chunks d
                    WHERE d.session_id = c.session_id AND d.start_step = c.start_step AND d.end_step = c.end_step)
                ORDER BY c.start_step, c.end_step
                """,
                [session_id],
            )
        )
    return [_row(r) for r in rows]


def chunk_history(engine: DataEngine, session_id: str, start: int, end: int) -> list[ChunkRow]:
    """Every version of the range ``start..end``, oldest first."""
    with engine_lock(engine):
        rows = list(
            engine.db.query(
                "SELECT * FROM history_chunks WHERE session_id = ? AND start_step = ? AND end_step = ? ORDER BY version",
                [session_id, start, end],
            )
        )
    return [_row(r) for r in rows]


def frozen_chunk_from_row(engine: DataEngine, row: ChunkRow, index: int) -> FrozenChunk:
    """The chunk as the transcript shows it, rebuilt from a stored row and its steps' records
    (times and the per-step index come from the steps). A row that is not ready shows as ledger-only."""
    from artemis_cli.memory.ledger_lines import action_phrase, step_header

    steps = engine.get_steps(row.session_id)
    by_number = {s.number: s for s in steps}
    covered = [by_number[n] for n in range(row.start_step, row.end_step + 1) if n in by_number]
    first = by_number.get(row.start_step)
    last = by_number.get(row.end_step)
    return FrozenChunk(
        index=index,
        start=row.start_step,
        end=row.end_step,
        start_ms=(first.offset_ms or 0) if first else 0,
        end_ms=(last.offset_ms or 0) if last else 0,
        milestone=row.milestone,
        band1=dict(row.band1 or {}),
        band2=[line for line in (row.band2 or "").splitlines() if line.strip()],
        band3=(row.band3 or "").splitlines(),
        step_index=[f"{step_header(s.number, s.offset_ms)} {action_phrase(s)}" for s in covered],
        status="ready" if row.status == "ready" and row.band1 else "ledger_only",
        checker=row.checker,
    )
