"""The search behind recall_history (SPEC §10.5): FTS5 over steps, notes and chunks, then ranking.

Ranking, best first:

1. **phrase** — the step (note, chunk) shows one of the query's phrases word for word: "device
   name" ranks a screen showing "Device name" above one showing "Connected devices"; then two
   adjacent words of a longer phrase ("desk lamp" of "how much did the desk lamp cost");
2. **coverage** — more of the query's terms, over all of the step's fields (all terms first);
3. **bm25** — summed over the step's matching fields; bm25 of the three tables are not on one
   scale (a table of three notes has almost no IDF), so each source is scaled by its own best;
4. ties: earlier step first.

A step whose screen text matched and is the same as a better step's — the same screen seen again
— goes after the steps with text of their own, and the better one names it ("same screen text at
steps 4, 6"), so five results show five different screens when there are five.

Three FTS queries per table fetch the candidates: any term (``OR``), all terms in one field
(``AND``) and the phrases, each capped at ``FTS_ROWS`` rows, so a phrase match is never lost
behind hundreds of single-term matches. Terms FTS cannot answer (CJK words inside a run, or
nothing found at all) are looked up as substrings.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from artemis_cli.engine.clock import format_offset
from artemis_cli.engine.db import DataEngine
from artemis_cli.engine.errors import BlobMissing
from artemis_cli.engine.records import StepRecord
from artemis_cli.memory.ledger_lines import action_phrase, intent_phrase, result_phrase, step_header
from artemis_cli.memory.recall_args import CJK, fts_and, fts_or, fts_phrases
from artemis_cli.memory.recall_index import STEP_KINDS, verdict_text
from artemis_cli.memory.recall_result import RecallHit, step_runs
from artemis_cli.memory.recall_text import (
    Matcher,
    ScreenText,
    flat,
    label_snippet,
    safe_cut,
    screen_text,
    snippet,
)
from artemis_cli.perception.bytecache import MB, ByteLRU, cost_of
from artemis_cli.perception.quoting import one_token, quote_untrusted

__all__ = ["Candidate", "ScreenCache", "Search", "build_hits"]

FTS_ROWS = 400  # per table and query, before grouping by step
DETAIL_CHARS = 600
NOTE_CHARS = 1000
CHUNK_SNIPPET_CHARS = 400
KIND_LABEL = {
    "thought": "thought",
    "action": "action",
    "verdict": "validator",
    "user": "user",
    "ui": "screen",
    "summary": "summary",
}


@dataclass
class Candidate:
    kind: Literal["step", "note", "chunk"]
    step: int
    score: float = 0.0
    texts: dict[str, str] = field(default_factory=dict)
    phrase: int = 0  # Matcher.phrase_level: 2 whole phrase, 1 two adjacent words, 0 none
    coverage: int = 0
    row: dict[str, Any] = field(default_factory=dict)
    same_as: list[int] = field(default_factory=list)  # later steps with the same matching text


#: What one ScreenElement costs besides its strings (the object and its attribute dict).
ELEMENT_BYTES = 200


def _screen_text_cost(sha: str, text: ScreenText) -> int:
    return cost_of(sha, text.problem) + sum(ELEMENT_BYTES + cost_of(e.cls, e.label, e.desc, e.flags)
                                            for e in text.elements)


class ScreenCache:
    """Screen text per UI dump, parsed once per recall. Bound: 8 MB of text (~2,000 screens of
    ~4 KB): a recall over a long session reads each distinct dump once while it fits, and
    again when it was dropped, rather than hold every screen of the session at once."""

    def __init__(self, engine: DataEngine) -> None:
        self.engine = engine
        self._cache: ByteLRU[str, ScreenText] = ByteLRU("memory.recall_screen_texts", 8 * MB, _screen_text_cost)

    def of(self, step: StepRecord) -> ScreenText:
        sha = step.ui_xml
        if not sha:
            return ScreenText(problem="no UI dump was recorded for this step")
        return self._cache.get_or_make(sha, lambda: self._read(sha))

    def _read(self, sha: str) -> ScreenText:
        try:
            return screen_text(self.engine.blob(sha))
        except BlobMissing:
            return ScreenText(problem="its UI dump is missing from the data dir")


class Search:
    """One query over one session, optionally within a step range and/or one app's steps."""

    def __init__(
        self,
        engine: DataEngine,
        session_id: str,
        matcher: Matcher,
        rng: tuple[int, int] | None = None,
        package: str | None = None,
    ) -> None:
        self.engine = engine
        self.session_id = session_id
        self.matcher = matcher
        self.rng = rng
        self.package = package
        self.steps: dict[int, Candidate] = {}
        self.notes: dict[tuple[str, int], Candidate] = {}
        self.chunks: dict[tuple[int, int], Candidate] = {}

    # --- SQL filters -------------------------------------------------------------------------

    def _step_filter(self, column: str = "step") -> tuple[str, list[Any]]:
        sql, args = "", list[Any]()
        if self.rng is not None:
            sql += f" AND {column} BETWEEN ? AND ?"
            args += [self.rng[0], self.rng[1]]
        if self.package is not None:
            sql += f" AND {column} IN (SELECT number FROM steps WHERE session_id = ? AND foreground_app = ?)"
            args += [self.session_id, self.package]
        return sql, args

    def _chunk_filter(self) -> tuple[str, list[Any]]:
        if self.rng is None:
            return "", []
        return " AND end_step >= ? AND start_step <= ?", [self.rng[0], self.rng[1]]

    # --- collecting -------------------------------------------------------------------------

    def run(self) -> list[Candidate]:
        """Every candidate, best first."""
        terms = list(self.matcher.terms)
        queries = [("or", fts_or(terms))]
        if len(terms) >= 2:
            queries.append(("and", fts_and(terms)))
        phrases = [*self.matcher.phrases, *self.matcher.pairs]
        if phrases:
            queries.append(("phrase", fts_phrases(phrases)))
        try:
            for how, expression in queries:
                self._fts(how, expression)
        except sqlite3.OperationalError:
            self.steps.clear()
            self.notes.clear()
            self.chunks.clear()
        like_terms = [t for t in terms if CJK.search(t)]
        if not (self.steps or self.notes or self.chunks):
            like_terms = terms
        if like_terms:
            self._like(like_terms)
        return self._ranked()

    def _add(self, table: dict[Any, Candidate], key: Any, new: Candidate, field_kind: str, text: str,
             score: float | None) -> None:
        cand = table.setdefault(key, new)
        if field_kind not in cand.texts:
            cand.texts[field_kind] = text
            if score is not None:
                cand.score += score

    def _fts(self, how: str, expression: str) -> None:
        db = self.engine.db
        phrase = how == "phrase"
        where, extra = self._step_filter()
        for row in db.query(
            f"SELECT step, kind, rank AS score, text FROM step_fts WHERE step_fts MATCH ? AND session_id = ?"
            f"{where} ORDER BY rank LIMIT {FTS_ROWS}",
            [expression, self.session_id, *extra],
        ):
            n = int(row["step"])
            self._add(self.steps, n, Candidate("step", n), row["kind"], row["text"], None if phrase else row["score"])
        for row in db.query(
            f"SELECT step, note_key, version, rank AS score, text FROM note_fts WHERE note_fts MATCH ?"
            f" AND session_id = ?{where} ORDER BY rank LIMIT {FTS_ROWS}",
            [expression, self.session_id, *extra],
        ):
            key = (str(row["note_key"]), int(row["version"]))
            new = Candidate("note", int(row["step"] or 0), row=dict(row))
            self._add(self.notes, key, new, "note", row["text"], None if phrase else row["score"])
        if self.package is not None:
            return  # a chunk spans many apps: not part of an app's steps
        cwhere, cextra = self._chunk_filter()
        for row in db.query(
            f"SELECT start_step, end_step, rank AS score, text FROM chunk_fts WHERE chunk_fts MATCH ?"
            f" AND session_id = ?{cwhere} ORDER BY rank LIMIT {FTS_ROWS}",
            [expression, self.session_id, *cextra],
        ):
            key2 = (int(row["start_step"]), int(row["end_step"]))
            new = Candidate("chunk", key2[0], row=dict(row))
            self._add(self.chunks, key2, new, "chunk", row["text"], None if phrase else row["score"])

    def _like(self, terms: Sequence[str]) -> None:
        """Substring search (CJK words inside a run, or when FTS found nothing)."""
        db = self.engine.db
        any_term = " OR ".join("instr(lower(text), ?) > 0" for _ in terms)

        def score(text: str) -> float:
            low = text.casefold()
            return -float(sum(1 for t in terms if t in low))

        where, extra = self._step_filter()
        for row in db.query(
            f"SELECT step, kind, text FROM step_fts WHERE session_id = ?{where} AND ({any_term})",
            [self.session_id, *extra, *terms],
        ):
            if s := score(row["text"]):
                n = int(row["step"])
                self._add(self.steps, n, Candidate("step", n), row["kind"], row["text"], s)
        for row in db.query(
            f"SELECT step, note_key, version, text FROM note_fts WHERE session_id = ?{where} AND ({any_term})",
            [self.session_id, *extra, *terms],
        ):
            key = (str(row["note_key"]), int(row["version"]))
            if key not in self.notes and (s := score(row["text"])):
                self._add(self.notes, key, Candidate("note", int(row["step"] or 0), row=dict(row)), "note",
                          row["text"], s)
        if self.package is not None:
            return
        cwhere, cextra = self._chunk_filter()
        for row in db.query(
            f"SELECT start_step, end_step, text FROM chunk_fts WHERE session_id = ?{cwhere} AND ({any_term})",
            [self.session_id, *cextra, *terms],
        ):
            key2 = (int(row["start_step"]), int(row["end_step"]))
            if key2 not in self.chunks and (s := score(row["text"])):
                self._add(self.chunks, key2, Candidate("chunk", key2[0], row=dict(row)), "chunk", row["text"], s)

    # --- ranking ------------------------------------------------------------------------------

    def _ranked(self) -> list[Candidate]:
        sources = [list(self.steps.values()), list(self.notes.values()), list(self.chunks.values())]
        ranked: list[tuple[tuple[int, int, float, int, int], Candidate]] = []
        for order, cands in enumerate(sources):
            best = min((c.score for c in cands), default=-1.0)
            norm = abs(best) if best < 0 else 1.0
            for cand in cands:
                covered: set[int] = set()
                for text in cand.texts.values():
                    covered |= self.matcher.covered(text)
                    cand.phrase = max(cand.phrase, self.matcher.phrase_level(text))
                cand.coverage = len(covered)
                ranked.append(((-cand.phrase, -cand.coverage, cand.score / norm, cand.step, order), cand))
        ranked.sort(key=lambda item: item[0])
        first: list[Candidate] = []
        again: list[Candidate] = []
        seen: dict[str, Candidate] = {}
        for _, cand in ranked:
            ui = cand.texts.get("ui") if cand.kind == "step" else None
            if ui and ui in seen:
                seen[ui].same_as.append(cand.step)
                again.append(cand)
                continue
            if ui:
                seen[ui] = cand
            first.append(cand)
        return first + again


# --- hits ------------------------------------------------------------------------------------------


def build_hits(
    engine: DataEngine,
    session_id: str,
    cands: Sequence[Candidate],
    matcher: Matcher,
    details: bool,
    screens: ScreenCache,
) -> list[RecallHit]:
    wanted = {c.step for c in cands} | {int(c.row["end_step"]) for c in cands if c.kind == "chunk"}
    records = {s.number: s for s in engine.steps_numbered(session_id, (n for n in wanted if n > 0))}
    out: list[RecallHit] = []
    for cand in cands:
        if cand.kind == "step":
            record = records.get(cand.step)
            if record is not None:
                out.append(_step_hit(record, cand, matcher, details, screens))
        elif cand.kind == "note":
            out.append(_note_hit(cand, records.get(cand.step)))
        else:
            out.append(_chunk_hit(cand, matcher, records.get(cand.step), records.get(int(cand.row["end_step"]))))
    return out


def _ui_snippet(step: StepRecord, text: str, matcher: Matcher, screens: ScreenCache) -> str:
    labels = screens.of(step).labels() if step.ui_xml else []
    if any(matcher.score(label) != (0, 0) for label in labels):
        return label_snippet(labels, matcher)
    return label_snippet(text.split(" | "), matcher) if " | " in text else snippet(text, matcher)


def _step_hit(step: StepRecord, cand: Candidate, matcher: Matcher, details: bool, screens: ScreenCache) -> RecallHit:
    lines = []
    shown: set[str] = {"action"}
    for kind in STEP_KINDS:
        text = cand.texts.get(kind)
        if text and kind not in shown:
            snip = _ui_snippet(step, text, matcher, screens) if kind == "ui" else snippet(text, matcher)
            lines.append(f"    {KIND_LABEL[kind]}: {snip}")
            shown.add(kind)
    if cand.same_as:
        lines.append(f"    same screen text at step{'s' if len(cand.same_as) > 1 else ''} {step_runs(cand.same_as)}")
    if details:
        extra = {
            "thought": step.thought or "",
            "verdict": verdict_text(step.verdict),
            "user": step.user_instruction or "",
            "summary": step.summary or "" if step.summary_status == "ready" else "",
        }
        for kind, text in extra.items():
            if text.strip() and kind not in shown:
                lines.append(f"    {KIND_LABEL[kind]}: {quote_untrusted(safe_cut(flat(text), DETAIL_CHARS), None)}")
        if step.foreground_app:
            lines.append(f"    app: {one_token(step.foreground_app)}")
    body = f": {action_phrase(step)}{intent_phrase(step.intent)} -> {result_phrase(step)}" + "".join("\n" + line for line in lines)
    return RecallHit(
        kind="step",
        step=step.number,
        offset_ms=step.offset_ms or 0,
        head=f"- {step_header(step.number, step.offset_ms)}",
        body=body,
        score=cand.score,
        fields=tuple(k for k in STEP_KINDS if k in cand.texts),
    )


def _note_hit(cand: Candidate, step: StepRecord | None) -> RecallHit:
    row = cand.row
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
        head=f"- Note {quote_untrusted(key, None)} v{row['version']} @ {where}",
        body=f": {quote_untrusted(safe_cut(flat(content), NOTE_CHARS), None)}",
        score=cand.score,
        fields=("note",),
        note_key=key,
    )


def _chunk_hit(cand: Candidate, matcher: Matcher, start: StepRecord | None, end: StepRecord | None) -> RecallHit:
    a, b = int(cand.row["start_step"]), int(cand.row["end_step"])
    t0 = (start.offset_ms or 0) if start else 0
    t1 = (end.offset_ms or 0) if end else t0
    return RecallHit(
        kind="chunk",
        step=a,
        end_step=b,
        offset_ms=t0,
        head=f"- Steps {a}-{b} ({format_offset(t0)} → {format_offset(t1)})",
        body=f": {snippet(cand.texts.get('chunk', ''), matcher, CHUNK_SNIPPET_CHARS)}",
        score=cand.score,
        fields=("chunk",),
    )
