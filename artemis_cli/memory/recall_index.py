"""The recall index (SPEC §10.5): what is written to the FTS5 tables, and the lazy back-fill.

Per step (``step_fts``, one row per field ``kind``): the thought, the action with its element
semantics and result (``action``), the validator verdict, the user instruction, the UI text (the
labels of the step's screen, system bars and keyboard left out) and the visual summary; plus
notes (``note_fts``) and chunk text (``chunk_fts``). Tokenizer ``unicode61 remove_diacritics 2``.

Steps recorded before indexing was wired in (or whose summary arrived later) are indexed lazily
at the next ``recall`` (:meth:`RecallIndex.sync`), so recall also works on any stored session.
"""

from __future__ import annotations

import json
from typing import Any

from artemis_cli.engine.db import DataEngine
from artemis_cli.engine.errors import BlobMissing
from artemis_cli.engine.records import StepRecord
from artemis_cli.engine.transaction import write_transaction
from artemis_cli.memory.ledger_lines import action_phrase, result_phrase
from artemis_cli.memory.notes import Note, engine_lock, index_note
from artemis_cli.memory.recall_args import RecallError
from artemis_cli.memory.recall_text import ScreenText, index_text_from_xml, screen_text

__all__ = ["STEP_KINDS", "RecallIndex", "step_fields", "target_words", "verdict_text"]

STEP_KINDS: tuple[str, ...] = ("thought", "action", "verdict", "user", "ui", "summary")
_KIND_INDEX = {kind: i for i, kind in enumerate(STEP_KINDS)}
_KIND_SLOTS = 8  # rowid = steps.id * 8 + kind


def target_words(target: dict[str, Any] | None) -> list[str]:
    if not target:
        return []
    return [str(target.get(k) or "") for k in ("text", "content_desc", "resource_id", "class_name") if target.get(k)]


def verdict_text(verdict: dict[str, Any] | None) -> str:
    if not verdict:
        return ""
    parts = []
    for key, value in verdict.items():
        shown = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, sort_keys=True)
        parts.append(f"{key}: {shown}")
    return "; ".join(parts)


def step_fields(step: StepRecord, ui_text: str) -> dict[str, str]:
    """The text indexed for a step, by kind (empty kinds are left out)."""
    action = " ".join(
        [f"{action_phrase(step)} -> {result_phrase(step)}", step.intent or "", *target_words(step.target), *target_words(step.target_end)]
    )
    fields_ = {
        "thought": step.thought or "",
        "action": action,
        "verdict": verdict_text(step.verdict),
        "user": step.user_instruction or "",
        "ui": ui_text,
        "summary": step.summary or "" if step.summary_status == "ready" else "",
    }
    return {kind: text for kind, text in fields_.items() if text.strip()}


class RecallIndex:
    """Index writes over one DataEngine (thread-safe via its lock)."""

    def __init__(self, engine: DataEngine) -> None:
        self.engine = engine

    def index_step(self, step: StepRecord, ui_text: str | None = None, *, screen: ScreenText | None = None) -> None:
        """Index a recorded step (call after ``record_step``); replaces its earlier index rows.

        The UI text is ``screen``'s labels when given (the step writer has the parsed dump), else
        every text of the step's UI dump (a quick pass, :func:`index_text_from_xml`), so text a
        list row only shows through its children is searchable too; ``ui_text`` only when the
        step has no dump or nothing in it has text."""
        if screen is not None and screen.problem is None:
            text = " | ".join(screen.labels())
        else:
            from_dump = self._ui_text(step)
            text = from_dump or ui_text or ""
        rows = step_fields(step, text)
        db = self.engine.db
        with engine_lock(self.engine), write_transaction(db):
            base = self._row_base(step.session_id, step.number, step.id)
            # rowids are derived from the step's id: replacing a step's rows is a rowid range
            # delete, not a scan of the whole index (which made long sessions quadratic)
            db.execute("DELETE FROM step_fts WHERE rowid BETWEEN ? AND ?", [base, base + _KIND_SLOTS - 1])
            for kind, text in rows.items():
                db.execute(
                    "INSERT INTO step_fts (rowid, session_id, step, kind, text) VALUES (?, ?, ?, ?, ?)",
                    [base + _KIND_INDEX[kind], step.session_id, step.number, kind, text],
                )
            self._mark(step.session_id, step.number, step.summary_version)

    def _row_base(self, session_id: str, number: int, step_id: int | None = None) -> int:
        if step_id is None:
            row = self.engine.db.execute(
                "SELECT id FROM steps WHERE session_id = ? AND number = ?", [session_id, number]
            ).fetchone()
            if row is None:
                raise RecallError(f"step {number} of session {session_id} is not recorded")
            step_id = int(row[0])
        return int(step_id) * _KIND_SLOTS

    def index_summary(self, session_id: str, step: int, text: str | None, *, version: int | None = None) -> None:
        """(Re-)index a step's summary (it arrives after the step). Empty text removes it."""
        db = self.engine.db
        with engine_lock(self.engine), write_transaction(db):
            rowid = self._row_base(session_id, step) + _KIND_INDEX["summary"]
            db.execute("DELETE FROM step_fts WHERE rowid = ?", [rowid])
            if text and text.strip():
                db.execute(
                    "INSERT INTO step_fts (rowid, session_id, step, kind, text) VALUES (?, ?, ?, 'summary', ?)",
                    [rowid, session_id, step, text],
                )
            if version is not None:
                db.execute(
                    "UPDATE recall_indexed SET summary_version = max(summary_version, ?) WHERE session_id = ? AND step = ?",
                    [version, session_id, step],
                )

    def index_note(self, note: Note) -> None:
        """Re-index a note (``notes.save_note`` already indexes every save)."""
        index_note(self.engine, note)

    def index_chunk(self, session_id: str, start_step: int, end_step: int, text: str) -> None:
        """Index a chunk's text (bands ①–③); a newer version of the same range replaces it."""
        db = self.engine.db
        with engine_lock(self.engine), write_transaction(db):
            db.execute(
                "DELETE FROM chunk_fts WHERE session_id = ? AND start_step = ? AND end_step = ?",
                [session_id, start_step, end_step],
            )
            db.execute(
                "INSERT INTO chunk_fts (session_id, start_step, end_step, text) VALUES (?, ?, ?, ?)",
                [session_id, start_step, end_step, text],
            )

    def sync(self, session_id: str) -> int:
        """Index steps not indexed yet and summaries that changed since; returns steps touched.
        Nothing on a read-only data dir (``recall`` then says what is not indexed)."""
        if self.engine.read_only:
            return 0
        with engine_lock(self.engine):
            # Fast path: every step indexed at its current summary version. Indexed versions never
            # exceed the step's and indexed rows are a subset of the steps, so equal counts and
            # equal version totals mean nothing is left to do (two index scans, not a join).
            totals = "SELECT count(*), total(summary_version) FROM {} WHERE session_id = ?"
            have = self.engine.db.execute(totals.format("steps"), [session_id]).fetchone()
            done = self.engine.db.execute(totals.format("recall_indexed"), [session_id]).fetchone()
            if tuple(have) == tuple(done):
                return 0
            rows = list(
                self.engine.db.query(
                    """
                    SELECT s.number AS number, s.summary_version AS version, r.step AS done
                    FROM steps s LEFT JOIN recall_indexed r ON r.session_id = s.session_id AND r.step = s.number
                    WHERE s.session_id = ? AND (r.step IS NULL OR s.summary_version > r.summary_version)
                    ORDER BY s.number
                    """,
                    [session_id],
                )
            )
            for row in rows:
                step = self.engine.get_step(session_id, row["number"])
                if row["done"] is None:
                    self.index_step(step)
                else:
                    ready = step.summary if step.summary_status == "ready" else None
                    self.index_summary(session_id, step.number, ready, version=step.summary_version)
        return len(rows)

    def _unindexed(self, session_id: str) -> int:
        """Steps whose current text ``sync`` would still index."""
        row = self.engine.db.execute(
            """
            SELECT count(*) FROM steps s LEFT JOIN recall_indexed r ON r.session_id = s.session_id AND r.step = s.number
            WHERE s.session_id = ? AND (r.step IS NULL OR s.summary_version > r.summary_version)
            """,
            [session_id],
        ).fetchone()
        return int(row[0])

    def _mark(self, session_id: str, step: int, summary_version: int) -> None:
        self.engine.db.execute(
            """
            INSERT INTO recall_indexed (session_id, step, summary_version) VALUES (?, ?, ?)
            ON CONFLICT (session_id, step) DO UPDATE SET summary_version = excluded.summary_version
            """,
            [session_id, step, summary_version],
        )

    def _ui_text(self, step: StepRecord) -> str | None:
        """The labels of the step's UI dump; None without a readable one."""
        if not step.ui_xml:
            return None
        try:
            xml = self.engine.blob(step.ui_xml)
        except BlobMissing:
            return None
        quick = index_text_from_xml(xml)
        if quick is not None:
            return quick
        screen = screen_text(xml)  # the full parser recovers more of a broken dump
        return " | ".join(screen.labels()) if screen.problem is None else None
