"""recall_history (SPEC §10.5): full-text search over what a session recorded.

Indexed per step (``step_fts``, one row per field ``kind``): the thought, the action with its
element semantics and result (``action``), the validator verdict, the user instruction, the UI
text (labels of the step's elements) and the visual summary; plus notes (``note_fts``) and chunk
text (``chunk_fts``). Tokenizer ``unicode61 remove_diacritics 2``; CJK runs are one token to it,
so CJK terms (and any query FTS cannot answer) are also looked up as substrings.

Rules: every result carries its step number and ``T+mm:ss``; at most ``max_results`` results and
about ``max_text_tokens`` (characters / 4) of text, cut per result but never the step header;
``include_images`` returns at most one step's screenshot; a ``step_range`` always brings that
range's full-width band ③ ledger lines; an empty query without a range raises ``RecallError``.
Model-written queries are never passed to FTS as syntax: they are reduced to quoted word tokens.
Ranking: bm25 (summed over a step's matching fields), ties broken by step number.

Steps recorded before indexing was wired in (or whose summary arrived later) are indexed lazily
at the next ``recall`` (``sync``), so recall also works on any stored session.
"""

from __future__ import annotations

import json
import re
import sqlite3
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from artemis_cli.engine.db import DataEngine
from artemis_cli.engine.errors import BlobMissing
from artemis_cli.engine.records import StepRecord
from artemis_cli.engine.transaction import write_transaction
from artemis_cli.errors import ArtemisError, UsageError
from artemis_cli.memory.ledger_lines import action_phrase, ledger_lines, result_phrase, step_header
from artemis_cli.memory.notes import Note, engine_lock, index_note
from artemis_cli.operators.prompts import format_offset

__all__ = [
    "DEFAULT_MAX_RESULTS",
    "DEFAULT_MAX_TEXT_TOKENS",
    "MAX_RANGE_STEPS",
    "MAX_RESULTS_LIMIT",
    "Recall",
    "RecallError",
    "RecallHit",
    "RecallImage",
    "RecallResult",
    "parse_step_range",
    "query_terms",
    "ui_text_from_xml",
]

DEFAULT_MAX_RESULTS = 5  # memory.recall.max_results (SPEC §13)
DEFAULT_MAX_TEXT_TOKENS = 2000  # memory.recall.max_text_tokens
MAX_RESULTS_LIMIT = 20
MAX_RANGE_STEPS = 200
MAX_TERMS = 24
MAX_TERM_CHARS = 64
CHARS_PER_TOKEN = 4
_MIN_TEXT_CHARS = 400  # results keep at least this much room even beside a long range
_FTS_ROWS = 400  # per table and query, before grouping by step
_KIND_INDEX = {"thought": 0, "action": 1, "verdict": 2, "user": 3, "ui": 4, "summary": 5}
_KIND_SLOTS = 8  # rowid = steps.id * 8 + kind
_SNIPPET_TOKENS = 16
_DETAIL_CHARS = 600

StepKind = Literal["thought", "action", "verdict", "user", "ui", "summary"]
STEP_KINDS: tuple[str, ...] = ("thought", "action", "verdict", "user", "ui", "summary")
_KIND_LABEL = {
    "thought": "thought",
    "action": "action",
    "verdict": "validator",
    "user": "user",
    "ui": "screen",
    "summary": "summary",
}

_TOKEN = re.compile(r"[^\W_]+")
_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff]")
_RANGE = re.compile(r"^\s*(\d{1,9})\s*(?:(?:-|–|—|\.\.|to|:)\s*(\d{1,9}))?\s*$", re.IGNORECASE)
_WS = re.compile(r"\s+")
_STOPWORDS = frozenset(
    ["a", "an", "and", "are", "as", "at", "be", "by", "did", "do", "for", "from", "had", "has", "have", "i", "in", "is", "it", "its", "me", "my", "of", "on", "or", "the", "this", "that", "to", "was", "were", "what", "when", "where", "which", "who", "with", "you"]
)


class RecallError(UsageError):
    """A recall request that cannot be answered as asked (no query and no range, bad range).

    The operator returns it to the model as a tool error; the CLI exits with 2."""


# --- results -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class RecallHit:
    """One result. ``head`` (never cut) names the step(s) and time; ``body`` may be cut."""

    kind: Literal["step", "note", "chunk"]
    step: int
    offset_ms: int
    head: str
    body: str
    score: float
    fields: tuple[str, ...] = ()
    end_step: int | None = None
    note_key: str | None = None
    truncated: bool = False

    def text(self) -> str:
        return self.head + self.body

    def cut(self, chars: int) -> RecallHit:
        """This hit with its text cut to about ``chars`` characters (the head always stays)."""
        room = chars - len(self.head)
        if len(self.body) <= max(room, 0):
            return self
        body = self.body[: max(room - 1, 0)].rstrip() + "…"
        return RecallHit(**{**self.__dict__, "body": body, "truncated": True})

    def to_dict(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "step": self.step,
            "end_step": self.end_step,
            "time": format_offset(self.offset_ms),
            "offset_ms": self.offset_ms,
            "note_key": self.note_key,
            "fields": list(self.fields),
            "score": round(self.score, 6),
            "truncated": self.truncated,
            "text": self.text(),
        }


@dataclass(frozen=True)
class RecallImage:
    step: int
    sha256: str
    png: bytes = field(repr=False)


@dataclass
class RecallResult:
    session_id: str
    query: str
    terms: tuple[str, ...]
    step_range: tuple[int, int] | None
    hits: list[RecallHit]
    total_matches: int
    max_results: int
    range_lines: list[str] = field(default_factory=list)
    image: RecallImage | None = None
    notices: list[str] = field(default_factory=list)

    @property
    def steps(self) -> list[int]:
        return [hit.step for hit in self.hits]

    def render(self) -> str:
        """The compact text the model receives (pinned by a golden test)."""
        what = []
        if self.query.strip():
            what.append(f"query={json.dumps(self.query.strip(), ensure_ascii=False)}")
        if self.step_range:
            what.append(f"steps={self.step_range[0]}-{self.step_range[1]}")
        lines = [f"recall_history {' '.join(what)}"]
        if self.terms:
            if not self.hits:
                lines[0] += ": no matches."
            elif self.total_matches > len(self.hits):
                lines[0] += f": {len(self.hits)} of {self.total_matches} matches (best first)"
            else:
                lines[0] += f": {len(self.hits)} match{'es' if len(self.hits) != 1 else ''} (best first)"
        lines += [hit.text() for hit in self.hits]
        if self.step_range:
            a, b = self.step_range
            lines.append(f"Ledger of steps {a}-{b}:")
            lines += self.range_lines or ["(no steps recorded in this range)"]
        if self.image is not None:
            lines.append(f"Screenshot of step {self.image.step} attached.")
        lines += self.notices
        return "\n".join(lines)

    def to_dict(self) -> dict[str, Any]:
        return {
            "session_id": self.session_id,
            "query": self.query,
            "terms": list(self.terms),
            "step_range": list(self.step_range) if self.step_range else None,
            "total_matches": self.total_matches,
            "max_results": self.max_results,
            "results": [hit.to_dict() for hit in self.hits],
            "ledger_lines": list(self.range_lines),
            "image": {"step": self.image.step, "sha256": self.image.sha256, "size": len(self.image.png)}
            if self.image
            else None,
            "notices": list(self.notices),
        }


# --- query and range parsing -------------------------------------------------------------------


def query_terms(query: str) -> tuple[str, ...]:
    """Safe search terms: word tokens (letters/digits), case-folded, deduplicated, stop words
    dropped unless nothing else is left. Quotes, parentheses, ``AND``, ``*``, ``:`` are just text."""
    if not isinstance(query, str):
        return ()
    seen: dict[str, None] = {}
    for token in _TOKEN.findall(query):
        seen.setdefault(token.casefold()[:MAX_TERM_CHARS], None)
    tokens = list(seen)
    content = [t for t in tokens if t not in _STOPWORDS]
    return tuple((content or tokens)[:MAX_TERMS])


def _fts_expression(terms: Sequence[str]) -> str:
    parts = []
    for term in terms:
        quoted = '"' + term.replace('"', '""') + '"'
        parts.append(quoted + "*" if len(term) >= 4 and not _CJK.search(term) else quoted)
    return " OR ".join(parts)


def parse_step_range(value: tuple[int, int] | Sequence[int] | str | None) -> tuple[int, int] | None:
    """``(a, b)``, ``"a-b"`` (also ``a–b``, ``a..b``, ``a to b``) or ``"n"`` → ``(a, b)``, a ≤ b."""
    if value is None:
        return None
    if isinstance(value, str):
        if not value.strip():
            return None
        match = _RANGE.match(value)
        if not match:
            raise RecallError(
                f"step_range {value!r} is not a step range", hint='write it as "a-b", e.g. "12-20", or one step "12"'
            )
        a = int(match.group(1))
        b = int(match.group(2)) if match.group(2) else a
    else:
        items = list(value)
        if len(items) != 2 or not all(isinstance(i, int) and not isinstance(i, bool) for i in items):
            raise RecallError(f"step_range {value!r} must be two step numbers")
        a, b = items
    a, b = min(a, b), max(a, b)
    if b < 1:
        raise RecallError(f"step_range {a}-{b} has no step: steps are numbered from 1")
    a = max(a, 1)
    if b - a + 1 > MAX_RANGE_STEPS:
        raise RecallError(
            f"step_range {a}-{b} spans {b - a + 1} steps; ask for at most {MAX_RANGE_STEPS} at a time"
        )
    return a, b


# --- indexing helpers ----------------------------------------------------------------------------


def ui_text_from_xml(xml: bytes | str | None) -> str:
    """Labels of the screen's elements (what the element list shows), `` | ``-separated."""
    if not xml:
        return ""
    from artemis_cli.perception.elements import index_elements
    from artemis_cli.perception.hierarchy import parse_hierarchy

    try:
        elements = index_elements(parse_hierarchy(xml))
    except (ArtemisError, ValueError):
        return ""
    labels: list[str] = []
    for element in elements:
        node = element.node
        for text in (element.label, node.content_desc):
            text = _WS.sub(" ", text or "").strip()
            if text and text not in labels:
                labels.append(text)
    return " | ".join(labels)


def _target_words(target: dict[str, Any] | None) -> list[str]:
    if not target:
        return []
    return [str(target.get(k) or "") for k in ("text", "content_desc", "resource_id", "class_name") if target.get(k)]


def _verdict_text(verdict: dict[str, Any] | None) -> str:
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
        [f"{action_phrase(step)} -> {result_phrase(step)}", *_target_words(step.target), *_target_words(step.target_end)]
    )
    fields_ = {
        "thought": step.thought or "",
        "action": action,
        "verdict": _verdict_text(step.verdict),
        "user": step.user_instruction or "",
        "ui": ui_text,
        "summary": step.summary or "" if step.summary_status == "ready" else "",
    }
    return {kind: text for kind, text in fields_.items() if text.strip()}


def _flat(text: str, limit: int) -> str:
    text = _WS.sub(" ", text).strip()
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _like_snippet(text: str, terms: Sequence[str], width: int = 90) -> str:
    flat = _WS.sub(" ", text).strip()
    low = flat.casefold()
    positions = [low.find(t) for t in terms if low.find(t) >= 0]
    if not positions:
        return _flat(flat, width)
    start = max(0, min(positions) - width // 3)
    piece = flat[start : start + width]
    return ("…" if start else "") + piece + ("…" if start + width < len(flat) else "")


# --- the recall service ------------------------------------------------------------------------


@dataclass
class _StepMatch:
    step: int
    score: float = 0.0
    snippets: dict[str, str] = field(default_factory=dict)


class Recall:
    """Index writes and ``recall`` queries over one DataEngine (thread-safe via its lock)."""

    def __init__(self, engine: DataEngine) -> None:
        self.engine = engine

    # --- indexing ---------------------------------------------------------------------------

    def index_step(self, step: StepRecord, ui_text: str | None = None) -> None:
        """Index a recorded step (call after ``record_step``); replaces its earlier index rows.
        ``ui_text`` None: derived from the step's UI XML blob."""
        if ui_text is None:
            ui_text = self._ui_text(step)
        rows = step_fields(step, ui_text)
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

    def _ui_text(self, step: StepRecord) -> str:
        if not step.ui_xml:
            return ""
        try:
            return ui_text_from_xml(self.engine.blob(step.ui_xml))
        except BlobMissing:
            return ""

    # --- querying ---------------------------------------------------------------------------

    def recall(
        self,
        session_id: str,
        query: str = "",
        *,
        step_range: tuple[int, int] | Sequence[int] | str | None = None,
        include_details: bool = False,
        include_images: bool = False,
        max_results: int = DEFAULT_MAX_RESULTS,
        max_text_tokens: int = DEFAULT_MAX_TEXT_TOKENS,
    ) -> RecallResult:
        query = query if isinstance(query, str) else ""
        terms = query_terms(query)
        rng = parse_step_range(step_range)
        if not terms and rng is None:
            raise RecallError(
                "recall_history needs a query (words to search for) or a step_range",
                hint='e.g. query="wifi password" or step_range="12-20"',
            )
        limit = min(max(int(max_results or DEFAULT_MAX_RESULTS), 1), MAX_RESULTS_LIMIT)
        budget = max(int(max_text_tokens or DEFAULT_MAX_TEXT_TOKENS), 1) * CHARS_PER_TOKEN
        with engine_lock(self.engine):
            session_id = self.engine.get_session(session_id).id  # SessionNotFound; prefixes work
            notices: list[str] = []
            self.sync(session_id)
            if self.engine.read_only and (unindexed := self._unindexed(session_id)):
                notices.append(f"Note: the data dir is read-only and {unindexed} step(s) are not indexed yet; "
                               "their text is not searched (a step_range still shows their ledger lines).")
            hits, total = self._search(session_id, terms, rng, include_details) if terms else ([], 0)
            hits = hits[:limit]
            range_lines: list[str] = []
            range_steps: list[StepRecord] = []
            if rng is not None:
                range_steps = self.engine.get_steps(session_id, rng[0], rng[1])
                for step in range_steps:
                    range_lines += ledger_lines(step)
                if not range_steps:
                    last = self.engine.last_step_number(session_id)
                    have = f"steps 1-{last}" if last else "no steps yet"
                    notices.append(f"Note: no steps {rng[0]}-{rng[1]} in this session (it has {have}).")
            range_chars = sum(len(line) + 1 for line in range_lines)
            hits = _fit(hits, max(budget - range_chars, _MIN_TEXT_CHARS))
            image = None
            if include_images:
                image, notice = self._image(session_id, hits, range_steps)
                if notice:
                    notices.append(notice)
        return RecallResult(
            session_id=session_id,
            query=query,
            terms=terms,
            step_range=rng,
            hits=hits,
            total_matches=total,
            max_results=limit,
            range_lines=range_lines,
            image=image,
            notices=notices,
        )

    def _search(
        self, session_id: str, terms: tuple[str, ...], rng: tuple[int, int] | None, details: bool
    ) -> tuple[list[RecallHit], int]:
        """The best hits (at most ``MAX_RESULTS_LIMIT``) and how many matched in all."""
        steps: dict[int, _StepMatch] = {}
        notes: list[tuple[float, dict[str, Any]]] = []
        chunks: list[tuple[float, dict[str, Any]]] = []
        expression = _fts_expression(terms)
        try:
            self._fts(session_id, expression, rng, steps, notes, chunks)
        except sqlite3.OperationalError:
            steps.clear()
            notes.clear()
            chunks.clear()
        like_terms = [t for t in terms if _CJK.search(t)]
        if not (steps or notes or chunks):
            like_terms = list(terms)
        if like_terms:
            self._like(session_id, like_terms, rng, steps, notes, chunks)
        total = len(steps) + len(notes) + len(chunks)
        return self._hits(session_id, steps, notes, chunks, details), total

    def _fts(
        self,
        session_id: str,
        expression: str,
        rng: tuple[int, int] | None,
        steps: dict[int, _StepMatch],
        notes: list[tuple[float, dict[str, Any]]],
        chunks: list[tuple[float, dict[str, Any]]],
    ) -> None:
        db = self.engine.db
        where, extra = _range_sql("step", rng)
        for row in db.query(
            f"""
            SELECT step, kind, rank AS score,
                   snippet(step_fts, 3, '', '', '…', {_SNIPPET_TOKENS}) AS snip
            FROM step_fts WHERE step_fts MATCH ? AND session_id = ? {where}
            ORDER BY rank LIMIT {_FTS_ROWS}
            """,
            [expression, session_id, *extra],
        ):
            match = steps.setdefault(int(row["step"]), _StepMatch(int(row["step"])))
            match.score += float(row["score"])
            match.snippets.setdefault(row["kind"], row["snip"])
        for row in db.query(
            f"""
            SELECT step, note_key, version, text, rank AS score
            FROM note_fts WHERE note_fts MATCH ? AND session_id = ? {where}
            ORDER BY rank LIMIT {_FTS_ROWS}
            """,
            [expression, session_id, *extra],
        ):
            notes.append((float(row["score"]), row))
        cwhere, cextra = _chunk_range_sql(rng)
        for row in db.query(
            f"""
            SELECT start_step, end_step, rank AS score,
                   snippet(chunk_fts, 3, '', '', '…', {_SNIPPET_TOKENS * 2}) AS snip
            FROM chunk_fts WHERE chunk_fts MATCH ? AND session_id = ? {cwhere}
            ORDER BY rank LIMIT {_FTS_ROWS}
            """,
            [expression, session_id, *cextra],
        ):
            chunks.append((float(row["score"]), row))

    def _like(
        self,
        session_id: str,
        terms: Sequence[str],
        rng: tuple[int, int] | None,
        steps: dict[int, _StepMatch],
        notes: list[tuple[float, dict[str, Any]]],
        chunks: list[tuple[float, dict[str, Any]]],
    ) -> None:
        """Substring search (CJK words inside a run, or when FTS found nothing)."""
        db = self.engine.db
        any_term = " OR ".join("instr(lower(text), ?) > 0" for _ in terms)
        where, extra = _range_sql("step", rng)

        def score(text: str) -> float:
            low = text.casefold()
            return -float(sum(1 for t in terms if t in low))

        for row in db.query(
            f"SELECT step, kind, text FROM step_fts WHERE session_id = ? {where} AND ({any_term})",
            [session_id, *extra, *terms],
        ):
            s = score(row["text"])
            if not s:
                continue
            match = steps.setdefault(int(row["step"]), _StepMatch(int(row["step"])))
            if row["kind"] not in match.snippets:
                match.score += s
                match.snippets[row["kind"]] = _like_snippet(row["text"], terms)
        seen_notes = {(r["note_key"], r["version"]) for _, r in notes}
        for row in db.query(
            f"SELECT step, note_key, version, text FROM note_fts WHERE session_id = ? {where} AND ({any_term})",
            [session_id, *extra, *terms],
        ):
            if (row["note_key"], row["version"]) not in seen_notes and score(row["text"]):
                notes.append((score(row["text"]), row))
        cwhere, cextra = _chunk_range_sql(rng)
        seen_chunks = {(r["start_step"], r["end_step"]) for _, r in chunks}
        for row in db.query(
            f"SELECT start_step, end_step, text FROM chunk_fts WHERE session_id = ? {cwhere} AND ({any_term})",
            [session_id, *cextra, *terms],
        ):
            if (row["start_step"], row["end_step"]) not in seen_chunks and score(row["text"]):
                chunks.append((score(row["text"]), {**row, "snip": _like_snippet(row["text"], terms, 180)}))

    def _hits(
        self,
        session_id: str,
        steps: dict[int, _StepMatch],
        notes: list[tuple[float, dict[str, Any]]],
        chunks: list[tuple[float, dict[str, Any]]],
        details: bool,
    ) -> list[RecallHit]:
        ranked: list[tuple[float, int, int, Any]] = []  # (score, step, kind order, payload)
        # bm25 of different FTS tables are not on one scale (a table of three notes has almost no
        # IDF), so each source is scaled by its own best score: the best note or chunk competes
        # with the best step on equal terms.
        step_norm = _normaliser([m.score for m in steps.values()])
        note_norm = _normaliser([s for s, _ in notes])
        chunk_norm = _normaliser([s for s, _ in chunks])
        ranked += [(m.score / step_norm, m.step, 0, m) for m in steps.values()]
        ranked += [(s / note_norm, int(r["step"] or 0), 1, r) for s, r in notes]
        ranked += [(s / chunk_norm, int(r["start_step"]), 2, r) for s, r in chunks]
        ranked.sort(key=lambda item: (item[0], item[1], item[2]))
        ranked = ranked[:MAX_RESULTS_LIMIT]
        wanted = {item[1] for item in ranked} | {int(r["end_step"]) for _, r in chunks}
        records = {s.number: s for s in self._steps(session_id, wanted)}
        out: list[RecallHit] = []
        for score, step, order, payload in ranked:
            if order == 0:
                record = records.get(step)
                if record is not None:
                    out.append(_step_hit(record, payload, details))
            elif order == 1:
                out.append(_note_hit(payload, score, records.get(step)))
            else:
                end = records.get(int(payload["end_step"]))
                out.append(_chunk_hit(payload, score, records.get(step), end))
        return out

    def _steps(self, session_id: str, numbers: Iterable[int]) -> list[StepRecord]:
        return self.engine.steps_numbered(session_id, (n for n in numbers if n > 0))

    def _image(
        self, session_id: str, hits: Sequence[RecallHit], range_steps: Sequence[StepRecord]
    ) -> tuple[RecallImage | None, str | None]:
        """At most one screenshot: the best step hit's, else the range's last step's."""
        candidates = [h.step for h in hits if h.kind == "step"] + [s.number for s in reversed(range_steps)]
        for number in candidates:
            step = self._steps(session_id, [number])
            if step and step[0].pre_screenshot:
                sha = step[0].pre_screenshot
                try:
                    return RecallImage(number, sha, self.engine.blob(sha)), None
                except BlobMissing:
                    return None, f"Note: the screenshot of step {number} is missing from the data dir."
        if candidates:
            return None, "Note: no screenshot is recorded for these steps."
        return None, None


# --- hit construction and budget ---------------------------------------------------------------


def _normaliser(scores: Sequence[float]) -> float:
    best = min(scores, default=-1.0)
    return abs(best) if best < 0 else 1.0


def _range_sql(column: str, rng: tuple[int, int] | None) -> tuple[str, list[int]]:
    if rng is None:
        return "", []
    return f"AND {column} BETWEEN ? AND ?", [rng[0], rng[1]]


def _chunk_range_sql(rng: tuple[int, int] | None) -> tuple[str, list[int]]:
    if rng is None:
        return "", []
    return "AND end_step >= ? AND start_step <= ?", [rng[0], rng[1]]


def _step_hit(step: StepRecord, match: _StepMatch, details: bool) -> RecallHit:
    lines = []
    head = f"- {step_header(step.number, step.offset_ms)}"
    body_first = f": {action_phrase(step)} -> {result_phrase(step)}"
    shown: set[str] = {"action"}
    for kind in STEP_KINDS:
        snip = match.snippets.get(kind)
        if snip and kind not in shown:
            lines.append(f"    {_KIND_LABEL[kind]}: {_flat(snip, 240)}")
            shown.add(kind)
    if details:
        extra = {
            "thought": step.thought or "",
            "verdict": _verdict_text(step.verdict),
            "user": step.user_instruction or "",
            "summary": step.summary or "" if step.summary_status == "ready" else "",
        }
        for kind, text in extra.items():
            if text.strip() and kind not in shown:
                lines.append(f"    {_KIND_LABEL[kind]}: {_flat(text, _DETAIL_CHARS)}")
        if step.foreground_app:
            lines.append(f"    app: {step.foreground_app}")
    body = body_first + "".join("\n" + line for line in lines)
    return RecallHit(
        kind="step",
        step=step.number,
        offset_ms=step.offset_ms or 0,
        head=head,
        body=body,
        score=match.score,
        fields=tuple(k for k in STEP_KINDS if k in match.snippets),
    )


def _note_hit(row: dict[str, Any], score: float, step: StepRecord | None) -> RecallHit:
    number = int(row["step"] or 0)
    offset = (step.offset_ms or 0) if step else 0
    key = str(row["note_key"])
    text = str(row["text"])
    content = text[len(key) + 2 :] if text.startswith(key + ": ") else text
    where = step_header(number, offset) if number else "session start"
    return RecallHit(
        kind="note",
        step=number,
        offset_ms=offset,
        head=f"- Note {json.dumps(key, ensure_ascii=False)} v{row['version']} @ {where}",
        body=f": {_flat(content, 1000)}",
        score=score,
        fields=("note",),
        note_key=key,
    )


def _chunk_hit(row: dict[str, Any], score: float, start: StepRecord | None, end: StepRecord | None) -> RecallHit:
    a, b = int(row["start_step"]), int(row["end_step"])
    t0 = (start.offset_ms or 0) if start else 0
    t1 = (end.offset_ms or 0) if end else t0
    return RecallHit(
        kind="chunk",
        step=a,
        end_step=b,
        offset_ms=t0,
        head=f"- Steps {a}-{b} ({format_offset(t0)} → {format_offset(t1)})",
        body=f": {_flat(str(row['snip']), 600)}",
        score=score,
        fields=("chunk",),
    )


def _fit(hits: list[RecallHit], budget_chars: int) -> list[RecallHit]:
    """Cut hits so their text totals about ``budget_chars``: each gets a fair share of what is
    left, unused room flows to the next; the head (step number and time) is never cut."""
    out: list[RecallHit] = []
    left = budget_chars
    for i, hit in enumerate(hits):
        share = max(left // (len(hits) - i), 0)
        cut = hit.cut(share)
        out.append(cut)
        left -= len(cut.text()) + 1
    return out
