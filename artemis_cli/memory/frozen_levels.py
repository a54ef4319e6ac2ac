"""F-zone levels above the chunk (SPEC §10.3): eras, period paragraphs (a bounded, mechanical
recipe) and the L3 session snapshot with its bounded step index. Formats are described in
:mod:`artemis_cli.memory.frozen`."""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field, replace
from typing import Any

from artemis_cli.memory.frozen_chunk import (
    _QUOTED,
    _USER_LINE,
    BAND1_LABELS,
    BAND1_LISTS,
    NO_NOTES,
    FrozenChunk,
    _band1_lines,
    _flat,
    _merge_lists,
    _range,
    _times,
    _user_lines,
    interval_title,
    recall_line,
)

# --- eras, periods, snapshot -------------------------------------------------------------------

#: A period paragraph is at most this many characters (the header, recall line and user lines
#: come on top of it).
PERIOD_CHARS = 600
#: A first clause taken from a chunk's prose field is at most this many characters; its ``done``
#: (what was observed to change) at most DONE_CLAUSE_CHARS.
CLAUSE_CHARS = 120
DONE_CLAUSE_CHARS = 240
#: When a period's intervals do not all fit, each is cut to an equal share of the room, as long
#: as that share is at least this long (else the later ones are counted, "…(N more intervals)").
MIN_SHARE_CHARS = 100
#: The L3 snapshot keeps per-step index lines for at most this many of the newest steps (whole
#: blocks); older blocks become ranged lines, at most SNAPSHOT_RANGES of them.
SNAPSHOT_STEP_LINES = 24
SNAPSHOT_RANGES = 8
#: Each merged list of the snapshot (and of a merged period) keeps its newest items up to this.
SNAPSHOT_LIST_ITEMS = 12
MILESTONE_CHARS = 160
#: Budgeted folding shrinks F down to this share of its budget once it went over (so the next
#: chunks append again for a while instead of rewriting F at every swap).
LOW_WATERMARK = 0.4
#: Periods may take this share of the budget before the two oldest merge.
PERIOD_SHARE = 0.25


def text_tokens(text: str) -> int:
    """The estimate every F size decision uses (characters / 4, as the token meter does)."""
    return math.ceil(len(text) / 4)


def cut_text(text: str, limit: int) -> str:
    """``text`` in at most ``limit`` characters: whole when it fits, else cut after the last
    ``, `` outside quoted screen text that leaves room for "…" (a list keeps whole items), else
    at the limit."""
    if len(text) <= limit:
        return text
    blanked = _QUOTED.sub(lambda m: " " * len(m.group(0)), text)
    at = blanked.rfind(", ", 0, max(0, limit - 1))
    if at >= limit // 3:
        return text[:at].rstrip() + ", …"
    return text[: max(1, limit - 1)].rstrip() + "…"


def first_clause(text: str, limit: int = CLAUSE_CHARS) -> str:
    """The text up to its first clause boundary (``;``, a sentence end, `` — ``) outside quoted
    screen text, whitespace collapsed, at most ``limit`` characters (:func:`cut_text`)."""
    text = _flat(text)
    blanked = _QUOTED.sub(lambda m: " " * len(m.group(0)), text)
    match = re.search(r";|\.(?:\s|$)|\s[—–]\s", blanked)
    clause = (text[: match.start()] if match else text).strip().rstrip(".")
    return cut_text(clause, limit)


def _chunk_clause(chunk: FrozenChunk) -> str:
    """``Steps a–b: <purpose>; <done>; <effects>`` (first clauses), or the milestone label for a
    chunk whose lens never answered."""
    if chunk.status != "ready":
        label = _flat(chunk.milestone or "") or "no milestone"
        return f"{_range(chunk.start, chunk.end)}: {label} (step ledger only)"
    bits: list[str] = []
    for name in ("purpose", "done", "effects"):
        text = str(chunk.band1.get(name) or "")
        if name == "effects" and _flat(text) == NO_NOTES:
            continue  # says nothing
        clause = first_clause(text, DONE_CLAUSE_CHARS if name == "done" else CLAUSE_CHARS)
        if clause and clause not in bits:
            bits.append(clause)
    label = "; ".join(bits) or _flat(chunk.milestone or "") or "no synopsis"
    return f"{_range(chunk.start, chunk.end)}: {label}"


def _capped_join(items: Sequence[str], sep: str, limit: int, more: str) -> str:
    """``items`` joined while they fit in ``limit`` characters, the rest counted by ``more`` (a
    format with ``{n}``). At least the first item shows (cut, with "…", when it alone is too long)."""
    out: list[str] = []
    used = 0
    for i, item in enumerate(items):
        rest = len(items) - i - 1
        cost = len(item) + (len(sep) if out else 0)
        reserve = len(sep) + len(more.format(n=rest)) if rest else 0
        if used + cost + reserve <= limit:
            out.append(item)
            used += cost
            continue
        if not out:  # the first item alone is too long: cut it
            room = limit - len(sep) - len(more.format(n=rest)) - 1 if rest else limit - 1
            out.append(item[: max(8, room)].rstrip() + "…")
            rest_now = rest
        else:
            rest_now = len(items) - i
        if rest_now:
            out.append(more.format(n=rest_now))
        return sep.join(out)
    return sep.join(out)


def period_paragraph(milestones: Sequence[str], clauses: Sequence[str], facts: Sequence[str],
                     limit: int = PERIOD_CHARS) -> str:
    """The period paragraph, assembled mechanically (no model) in at most ``limit`` characters:
    the milestones (up to half of it), then the first clauses of each chunk's purpose / done /
    effects while they fit, then the verified facts while they fit; what does not fit is counted
    by an explicit ``…(N more intervals)`` / ``…(N more facts; recall_history)`` mark."""
    parts: list[str] = []
    room = limit
    fact_room = 60 if facts else 0
    if milestones:
        text = "Milestones: " + _capped_join(list(milestones), "; ", limit // 2 - 13, "(+{n} more)") + "."
        parts.append(text)
        room -= len(text) + 1
    if clauses:
        space = max(40, room - fact_room - 1)
        items = list(clauses)
        share = (space - 2 * (len(items) - 1)) // len(items)
        if sum(len(c) + 2 for c in items) - 2 > space and share >= MIN_SHARE_CHARS:
            items = [cut_text(c, share) for c in items]  # every interval keeps its share
        text = _capped_join(items, ". ", space, "…({n} more intervals)") + "."
        parts.append(text)
        room -= len(text) + 1
    if facts:
        text = "Verified: " + _capped_join(list(facts), "; ", max(40, room - 11), "…({n} more facts; recall_history)") + "."
        parts.append(text)
    return " ".join(parts) if parts else "No synopsis (step ledger only)."


@dataclass
class Era:
    index: int
    start: int
    end: int
    start_ms: int
    end_ms: int
    milestones: list[str]
    band1: dict[str, Any]
    titles: list[str]
    band3: list[str]
    step_index: list[str]
    clauses: list[str] = field(default_factory=list)  # per chunk, for its period paragraph (not rendered)

    def render(self) -> str:
        lines = [f"[Era {self.index} | {_range(self.start, self.end)} | {_times(self.start_ms, self.end_ms)}]"]
        lines.append("Milestones: " + ("; ".join(self.milestones) if self.milestones else "none"))
        lines += _band1_lines(self.band1)
        lines += ["Interval titles:", *self.titles, "Step ledger:", *self.band3]
        return "\n".join(lines)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Era:
        return cls(**{k: data[k] for k in cls.__dataclass_fields__ if k in data})


def _make_era(index: int, chunks: Sequence[FrozenChunk]) -> Era:
    ready = [c for c in chunks if c.status == "ready"]
    band1: dict[str, Any] = {}
    for name in ("purpose", "done", "effects"):
        parts = [f"{_range(c.start, c.end)}: {_flat(c.band1.get(name) or '')}" for c in ready if _flat(c.band1.get(name) or "")]
        band1[name] = " | ".join(parts)
    entries = [_flat(c.band1.get("entry_state") or "") for c in ready]
    exits = [_flat(c.band1.get("exit_state") or "") for c in ready]
    band1["entry_state"] = next((e for e in entries if e), "")
    band1["exit_state"] = next((e for e in reversed(exits) if e), "")
    for name in BAND1_LISTS:
        band1[name] = _merge_lists(c.band1.get(name) or [] for c in ready)
    titles: list[str] = []
    for c in chunks:
        if c.status == "ready":
            titles += [interval_title(line) for line in c.band2]
        else:
            titles.append(f"{_range(c.start, c.end)}: step ledger only")
    milestones = _merge_lists([_flat(c.milestone)] for c in chunks if c.milestone and _flat(c.milestone))
    return Era(
        index=index,
        start=chunks[0].start,
        end=chunks[-1].end,
        start_ms=chunks[0].start_ms,
        end_ms=chunks[-1].end_ms,
        milestones=milestones,
        band1=band1,
        titles=titles,
        band3=[line for c in chunks for line in c.band3],
        step_index=[line for c in chunks for line in c.step_index],
        clauses=[_chunk_clause(c) for c in chunks],
    )


@dataclass
class Period:
    index: int
    start: int
    end: int
    start_ms: int
    end_ms: int
    paragraph: str
    user_lines: list[str]
    band1: dict[str, Any]  # merged list fields, kept for the L3 merge (not rendered)
    milestones: list[str] = field(default_factory=list)
    clauses: list[str] = field(default_factory=list)  # the paragraph's ingredients (a merge re-derives it)

    def header(self) -> str:
        return f"[Period {self.index} | {_range(self.start, self.end)} | {_times(self.start_ms, self.end_ms)}]"

    def render(self) -> str:
        return "\n".join([f"{self.header()} {self.paragraph}", recall_line(self.start, self.end), *self.user_lines])

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Period:
        return cls(**{k: data[k] for k in cls.__dataclass_fields__ if k in data})


def _make_period(index: int, era: Era) -> Period:
    lists = {name: list(era.band1.get(name) or []) for name in BAND1_LISTS}
    clauses = era.clauses or [f"{_range(era.start, era.end)}: step ledger only"]
    return Period(
        index=index,
        start=era.start,
        end=era.end,
        start_ms=era.start_ms,
        end_ms=era.end_ms,
        paragraph=period_paragraph(era.milestones, clauses, lists["verified_facts"]),
        user_lines=_user_lines(era.band3),
        band1=lists,
        milestones=list(era.milestones),
        clauses=list(clauses),
    )


def _merge_periods(a: Period, b: Period) -> Period:
    """Two consecutive periods as one (the older one's number): range and times joined, the
    paragraph re-assembled by the same bounded recipe, every user line kept."""
    milestones = _merge_lists([a.milestones, b.milestones])
    lists = {name: _merge_lists([a.band1.get(name) or [], b.band1.get(name) or []]) for name in BAND1_LISTS}
    clauses = [*a.clauses, *b.clauses]
    return Period(
        index=a.index,
        start=a.start,
        end=b.end,
        start_ms=a.start_ms,
        end_ms=b.end_ms,
        paragraph=period_paragraph(milestones, clauses, lists["verified_facts"]),
        user_lines=[*a.user_lines, *b.user_lines],
        band1=lists,
        milestones=milestones,
        clauses=clauses,
    )


@dataclass
class IndexBlock:
    """A stretch of the snapshot's step index: per-step ``lines`` (index lines with the user lines
    among them) or, once folded, one ranged line with the stretch's milestones and user lines."""

    start: int
    end: int
    start_ms: int
    end_ms: int
    milestones: list[str]
    user_lines: list[str]
    lines: list[str] = field(default_factory=list)  # empty: shown as one ranged line

    def step_lines(self) -> int:
        return sum(1 for line in self.lines if not line.startswith(_USER_LINE))

    def ranged(self) -> str:
        label = _capped_join(self.milestones, "; ", MILESTONE_CHARS, "(+{n} more)") if self.milestones else "no milestone"
        return f"{_range(self.start, self.end)} ({_times(self.start_ms, self.end_ms)}): {label}; {recall_line(self.start, self.end)}"

    def render(self) -> list[str]:
        return list(self.lines) if self.lines else [self.ranged(), *self.user_lines]

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> IndexBlock:
        return cls(**{k: data[k] for k in cls.__dataclass_fields__ if k in data})


def _merge_blocks(a: IndexBlock, b: IndexBlock) -> IndexBlock:
    return IndexBlock(a.start, b.end, a.start_ms, b.end_ms, _merge_lists([a.milestones, b.milestones]),
                      [*a.user_lines, *b.user_lines])


def _bound_index(blocks: list[IndexBlock]) -> list[IndexBlock]:
    """Per-step lines for the newest blocks (at most SNAPSHOT_STEP_LINES steps; the newest block
    always), ranged lines before them, at most SNAPSHOT_RANGES (the oldest merge first)."""
    out = list(blocks)
    kept = 0
    detailed = True
    for i in range(len(out) - 1, -1, -1):
        block = out[i]
        n = block.step_lines()
        if detailed and block.lines and (kept == 0 or kept + n <= SNAPSHOT_STEP_LINES):
            kept += n
            continue
        detailed = False  # a contiguous newest suffix keeps its lines; everything older is ranged
        if block.lines:
            out[i] = replace(block, lines=[])
    ranged = [b for b in out if not b.lines]
    detail = [b for b in out if b.lines]
    while len(ranged) > SNAPSHOT_RANGES:
        ranged[0:2] = [_merge_blocks(ranged[0], ranged[1])]
    return ranged + detail


def _capped_list(items: Sequence[str], dropped: int) -> str:
    if not items and not dropped:
        return "none"
    shown = "; ".join(items)
    if dropped:
        return f"…({dropped} earlier; recall_history)" + (f"; {shown}" if shown else "")
    return shown


@dataclass
class Snapshot:
    start: int
    end: int
    start_ms: int
    end_ms: int
    goal: str
    plan_state: str
    device_state: str
    band1: dict[str, Any]  # merged list fields (verified_facts, unresolved, failed_paths, entities), newest kept
    blocks: list[IndexBlock]  # the step index: ranged lines, then per-step lines, user lines kept
    dropped: dict[str, int] = field(default_factory=dict)  # list items left out of band1, per field

    @property
    def index_lines(self) -> list[str]:
        return [line for block in self.blocks for line in block.render()]

    def render(self) -> str:
        lines = [
            f"[Session snapshot | {_range(self.start, self.end)} | {_times(self.start_ms, self.end_ms)}]",
            f"Overall goal: {_flat(self.goal) or 'none'}",
            f"Plan state: {_flat(self.plan_state) or 'none'}",
        ]
        for name in BAND1_LISTS:
            lines.append(f"{BAND1_LABELS[name]}: {_capped_list(self.band1.get(name) or [], self.dropped.get(name, 0))}")
        lines.append(f"Device/app state: {_flat(self.device_state) or 'none'}")
        lines.append(f"Step index ({recall_line(self.start, self.end)[len('Details: '):]} returns any range in full):")
        lines += self.index_lines
        return "\n".join(lines)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Snapshot:
        values = {k: data[k] for k in cls.__dataclass_fields__ if k in data}
        values["blocks"] = [IndexBlock.from_dict(b) for b in data.get("blocks") or []]
        return cls(**values)


