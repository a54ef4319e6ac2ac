"""What recall returns (SPEC §10.5): hits, step views, and the text the model reads.

Rendered text (pinned by golden tests)::

    recall_history query="koala" steps=3-4: 2 matches (best first)
    - Step 3 (T+00:15): tap TextView "Koala" (id row0) @(540,250) -> ok
        screen: "Wombat" | "Koala"
    Ledger of steps 3-4:
    - Step 3 (T+00:15): …
    Screen of step 3 (T+00:15, com.example.shop), before its action:
      summary: "A list of animals"
      TextView "Wombat"
      TextView "Koala" {selected}
    Note: …

A hit's head (step number and time) is never cut; bodies and screens are cut only between lines
or between whole values (:mod:`artemis_cli.memory.recall_text`).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any, Literal

from artemis_cli.engine.clock import format_offset
from artemis_cli.memory.recall_args import ECHO_CHARS
from artemis_cli.memory.recall_text import safe_cut
from artemis_cli.perception.quoting import close_quotes, one_token, quote_untrusted

_MIN_LINE_CHARS = 24  # a line cut shorter than this is left out instead

__all__ = ["RecallHit", "RecallImage", "RecallResult", "StepView", "fit_hits", "step_runs"]


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
        """This hit with its text cut to about ``chars`` characters (the head always stays):
        whole lines while they fit, then the next line cut between whole values, then "…"."""
        room = chars - len(self.head)
        if len(self.body) <= max(room, 0):
            return self
        kept: list[str] = []
        used = 0
        for i, line in enumerate(self.body.split("\n")):
            sep = 1 if i else 0
            if used + sep + len(line) < room:
                kept.append(line)
                used += sep + len(line)
                continue
            left = room - used - sep - 1
            if i == 0 or left >= _MIN_LINE_CHARS:
                kept.append(close_quotes(safe_cut(line, max(left, 0)).removesuffix("…")))
            break
        body = "\n".join(kept).rstrip() + "…"
        return replace(self, body=body, truncated=True)

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


@dataclass(frozen=True)
class StepView:
    """What one step showed: its screen text (before its action) and summary."""

    step: int
    offset_ms: int
    app: str | None
    summary: str | None
    lines: tuple[str, ...]
    keyboard: bool = False
    problem: str | None = None
    details: tuple[str, ...] = ()
    cut_lines: int = 0  # element lines left out to fit the cap

    def head(self) -> str:
        where = f", {one_token(self.app)}" if self.app else ""
        return f"Screen of step {self.step} ({format_offset(self.offset_ms)}{where}), before its action:"

    def text(self) -> str:
        out = [self.head()]
        if self.summary:
            out.append(f"  summary: {quote_untrusted(self.summary, None)}")
        out += [f"  {line}" for line in self.details]
        if self.problem:
            out.append(f"  ({self.problem})")
        elif not self.lines and not self.cut_lines:
            out.append("  (no text on this screen)")
        if self.keyboard:
            out.append("  (keyboard shown)")
        out += [f"  {line}" for line in self.lines]
        if self.cut_lines:
            out.append(
                f"  … {self.cut_lines} more element line(s) cut to fit; "
                f'ask step_range="{self.step}-{self.step}" for the whole screen'
            )
        return "\n".join(out)

    def fitted(self, chars: int) -> StepView | None:
        """This view within ``chars`` characters by leaving out element lines from the end, or
        None when not even its head, summary and a few lines fit."""
        if len(self.text()) <= chars:
            return self
        keep = len(self.lines)
        while keep > 0:
            keep -= 1
            view = replace(self, lines=self.lines[:keep], cut_lines=self.cut_lines + len(self.lines) - keep)
            if len(view.text()) <= chars:
                return view if keep >= min(3, len(self.lines)) else None
        return None

    def to_dict(self) -> dict[str, Any]:
        return {
            "step": self.step,
            "time": format_offset(self.offset_ms),
            "offset_ms": self.offset_ms,
            "app": self.app,
            "summary": self.summary,
            "screen": list(self.lines),
            "keyboard": self.keyboard,
            "problem": self.problem,
            "details": list(self.details),
            "cut_lines": self.cut_lines,
            "text": self.text(),
        }


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
    views: list[StepView] = field(default_factory=list)
    at: str | None = None
    at_step: int | None = None
    package: str | None = None
    lead: list[str] = field(default_factory=list)  # lines after the header (what at/package found)
    ledger_title: str | None = None

    @property
    def steps(self) -> list[int]:
        return [hit.step for hit in self.hits]

    def header(self) -> str:
        what = []
        query = self.query.strip()
        if query:  # a long query is echoed as its start and its length (to_dict keeps it whole)
            shown = quote_untrusted(query[:ECHO_CHARS], None)
            what.append(f"query={shown}" if len(query) <= ECHO_CHARS
                        else f"query={shown}… ({len(query):,} characters)")
        if self.at is not None:
            what.append(f"at={quote_untrusted(self.at.strip(), None)}")
        if self.package:
            what.append(f"package={self.package}")
        if self.step_range:
            what.append(f"steps={self.step_range[0]}-{self.step_range[1]}")
        line = f"recall_history {' '.join(what)}"
        if self.terms:
            if not self.hits:
                line += ": no matches."
            elif self.total_matches > len(self.hits):
                line += f": {len(self.hits)} of {self.total_matches} matches (best first)"
            else:
                line += f": {len(self.hits)} match{'es' if len(self.hits) != 1 else ''} (best first)"
        return line

    def ledger_heading(self) -> str | None:
        if self.ledger_title:
            return self.ledger_title
        if self.step_range:
            return f"Ledger of steps {self.step_range[0]}-{self.step_range[1]}:"
        return None

    def render(self) -> str:
        """The compact text the model receives (pinned by a golden test)."""
        lines = [self.header(), *self.lead]
        lines += [hit.text() for hit in self.hits]
        heading = self.ledger_heading()
        if heading:
            lines.append(heading)
            lines += self.range_lines or ["(no steps recorded in this range)"]
        lines += [view.text() for view in self.views]
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
            "at": self.at,
            "at_step": self.at_step,
            "package": self.package,
            "total_matches": self.total_matches,
            "max_results": self.max_results,
            "results": [hit.to_dict() for hit in self.hits],
            "ledger_lines": list(self.range_lines),
            "screens": [view.to_dict() for view in self.views],
            "image": {"step": self.image.step, "sha256": self.image.sha256, "size": len(self.image.png)}
            if self.image
            else None,
            "lead": list(self.lead),
            "notices": list(self.notices),
        }


def fit_hits(hits: list[RecallHit], budget_chars: int) -> list[RecallHit]:
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


def step_runs(numbers: list[int]) -> str:
    """``[2, 3, 4, 9, 11, 12]`` → ``"2-4, 9, 11-12"``."""
    runs: list[tuple[int, int]] = []
    for n in sorted(set(numbers)):
        if runs and n == runs[-1][1] + 1:
            runs[-1] = (runs[-1][0], n)
        else:
            runs.append((n, n))
    return ", ".join(f"{a}-{b}" if a != b else f"{a}" for a, b in runs)
