"""The F zone model (SPEC §10.2, §10.3): chunks, eras, period paragraphs and the L3 snapshot.

:class:`FrozenHistory` is plain data plus four deterministic operations; no model is ever
called here (chunk bands ① and ② come from :mod:`artemis_cli.memory.chunk_lens`):

- :meth:`FrozenHistory.add_chunk` appends a closed, ready (or ledger-only) chunk: the F text
  grows by a blank line and the chunk (an append; every other change is a *rewrite*,
  :func:`is_rewrite`);
- :meth:`FrozenHistory.fold` folds the oldest chunks into an era above ``max_chunks``
  (① merged field-wise, ② reduced to interval titles, ③ kept) and turns the oldest era into a
  period paragraph above ``max_eras``; with a token ``budget`` it also goes down that ladder
  (oldest first; periods merge once they take PERIOD_SHARE of it) while F is over the budget,
  down to LOW_WATERMARK of it, so F plateaus instead of growing with the session;
- a period paragraph (:func:`period_paragraph`) is assembled mechanically and is at most
  PERIOD_CHARS long: milestones, the first clauses of each chunk's purpose / done / effects,
  verified facts, with ``…(N more …)`` marks; the header carries the range and times, then the
  recall guidance line and every user line verbatim;
- :meth:`FrozenHistory.snapshot` replaces everything by one L3 session snapshot (merged fields,
  newest SNAPSHOT_LIST_ITEMS per list, then the step index: per-step lines for the newest
  SNAPSHOT_STEP_LINES steps, at most SNAPSHOT_RANGES ranged lines before them, every user line);
- :meth:`FrozenHistory.render` is the F text after the task; :meth:`to_dict` / :meth:`from_dict`
  round-trip exactly, and :meth:`apply` replays an operation recorded by :func:`add_op`,
  :func:`fold_op` or :func:`snapshot_op` (what resume uses to rebuild F byte for byte).

Formats (pinned by ``tests/memory/golden/chunk_*.txt``)::

    [Chunk 2 | Open Wi-Fi settings | Steps 13–20 | T+03:05 → T+04:40]
    Purpose: ...                           (band ①: prose fields, then list fields)
    Intervals:
    Steps 13–15: ...                       (band ②)
    Step ledger:
    - Step 13 (T+03:05): tap ... -> ok     (band ③, one line per step, user lines verbatim)

    [Era 1 | Steps 1–20 | T+00:00 → T+04:40]
    [Period 1 | Steps 1–20 | T+00:00 → T+04:40] Milestones: …. Steps 1–12: <purpose>; <done>; <effects>. …(3 more intervals). Verified: …; …(4 more facts; recall_history).
    Details: recall_history(step_range="1-20")
    [Session snapshot | Steps 1–80 | T+00:00 → T+20:00]
    Step index (…):
    Steps 1–40 (T+00:00 → T+10:00): <milestones>; Details: recall_history(step_range="1-40")
    Step 57 (T+14:00) tap …
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, field, replace
from typing import Any, Literal

from artemis_cli.engine.records import StepRecord
from artemis_cli.errors import UsageError
from artemis_cli.memory.ledger_lines import action_phrase, ledger_lines, step_header
from artemis_cli.operators.prompts import format_offset

__all__ = [
    "BAND1_FIELDS",
    "BAND1_LABELS",
    "BAND1_LISTS",
    "BAND1_PROSE",
    "ChunkState",
    "Era",
    "FrozenChunk",
    "FrozenError",
    "FrozenHistory",
    "Period",
    "Snapshot",
    "add_op",
    "build_chunk",
    "fold_op",
    "interval_title",
    "recall_line",
    "snapshot_op",
]

ChunkState = Literal["ready", "ledger_only"]

#: Band ① fields: prose (one text each) and lists (of short texts), in render order.
BAND1_PROSE: tuple[str, ...] = ("purpose", "done", "effects", "entry_state", "exit_state")
BAND1_LISTS: tuple[str, ...] = ("verified_facts", "unresolved", "failed_paths", "entities")
BAND1_FIELDS: tuple[str, ...] = BAND1_PROSE + BAND1_LISTS
BAND1_LABELS: dict[str, str] = {
    "purpose": "Purpose",
    "done": "What was done",
    "effects": "Left behind",
    "entry_state": "Entry state",
    "exit_state": "Exit state",
    "verified_facts": "Verified facts",
    "unresolved": "Unresolved",
    "failed_paths": "Failed paths",
    "entities": "Entities",
}

PENDING_MARK = "[chunk lens pending: step ledger only]"
_WS = re.compile(r"\s+")
_QUOTED = re.compile(r'"(?:[^"\\\n]|\\.)*"')
_STEP_LINE = "- Step "
_USER_LINE = "User @ Step "


class FrozenError(UsageError):
    """An F-zone operation that does not fit the history (bad range, unknown operation)."""


def _flat(text: object) -> str:
    return _WS.sub(" ", str(text)).strip()


def _range(start: int, end: int) -> str:
    return f"Steps {start}–{end}"


def _times(start_ms: int, end_ms: int) -> str:
    return f"{format_offset(start_ms)} → {format_offset(end_ms)}"


def recall_line(start: int, end: int) -> str:
    """The recall guidance line of a folded range."""
    return f'Details: recall_history(step_range="{start}-{end}")'


def _user_lines(band3: Iterable[str]) -> list[str]:
    return [line for line in band3 if line.startswith(_USER_LINE)]


def _index_lines(band3: Sequence[str], step_index: Sequence[str]) -> list[str]:
    """Band ③ reduced to the minimal per-step index: user lines verbatim, each step line replaced
    by its ``Step N (T+mm:ss) action`` index line, recovery sub-lines dropped."""
    out: list[str] = []
    steps = iter(step_index)
    for line in band3:
        if line.startswith(_USER_LINE):
            out.append(line)
        elif line.startswith(_STEP_LINE):
            out.append(next(steps))
    return out


def interval_title(line: str) -> str:
    """``Steps a–b: <first clause>``: the interval part plus the text up to the first clause
    boundary (``;``, ``,``, ``:`` or a sentence end) outside quoted screen text."""
    head, sep, text = line.partition(":")
    if not sep:
        return _flat(line)
    text = text.strip()
    blanked = _QUOTED.sub(lambda m: " " * len(m.group(0)), text)
    match = re.search(r"[;,:]|\.(?:\s|$)|\s[—–]\s", blanked)
    clause = text[: match.start()] if match else text
    return f"{head.strip()}: {clause.strip()}"


def _merge_lists(values: Iterable[Iterable[str]]) -> list[str]:
    seen: set[str] = set()
    out: list[str] = []
    for items in values:
        for item in items:
            item = _flat(item)
            if item and item not in seen:
                seen.add(item)
                out.append(item)
    return out


def _band1_lines(band1: dict[str, Any]) -> list[str]:
    lines = []
    for name in BAND1_PROSE:
        value = _flat(band1.get(name) or "")
        lines.append(f"{BAND1_LABELS[name]}: {value or 'none'}")
    for name in BAND1_LISTS:  # an empty list says nothing: it is left out
        items = [_flat(i) for i in band1.get(name) or [] if _flat(i)]
        if items:
            lines.append(f"{BAND1_LABELS[name]}: {'; '.join(items)}")
    return lines


# --- chunks ------------------------------------------------------------------------------------


@dataclass
class FrozenChunk:
    """One L2 chunk: band ① (``band1``), band ② (``band2`` lines), band ③ (``band3`` lines) and the
    minimal per-step index (``step_index``, one ``Step N (T+mm:ss) action`` line per step)."""

    index: int
    start: int
    end: int
    start_ms: int
    end_ms: int
    milestone: str | None
    band1: dict[str, Any]
    band2: list[str]
    band3: list[str]
    step_index: list[str]
    status: ChunkState = "ready"
    checker: dict[str, Any] | None = None

    def header(self) -> str:
        milestone = _flat(self.milestone or "") or "no milestone"
        return f"[Chunk {self.index} | {milestone} | {_range(self.start, self.end)} | {_times(self.start_ms, self.end_ms)}]"

    def render(self) -> str:
        if self.status == "ledger_only":
            lines = [f"{self.header()} {PENDING_MARK}", "Step ledger:", *self.band3, recall_line(self.start, self.end)]
            return "\n".join(lines)
        lines = [self.header()]
        if self.checker is not None:
            lines.append("Checker: " + json.dumps(self.checker, ensure_ascii=False, sort_keys=True))
        lines += _band1_lines(self.band1)
        lines += ["Intervals:", *self.band2, "Step ledger:", *self.band3]
        return "\n".join(lines)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> FrozenChunk:
        try:
            return cls(**{k: data[k] for k in _CHUNK_KEYS if k in data})
        except TypeError as exc:
            raise FrozenError(f"not a stored chunk: {exc}") from None


_CHUNK_KEYS = tuple(FrozenChunk.__dataclass_fields__)


def build_chunk(
    steps: Sequence[StepRecord],
    *,
    index: int = 0,
    milestone: str | None = None,
    band1: dict[str, Any] | None = None,
    band2: str | Sequence[str] = "",
    recoveries: dict[int, list[str]] | None = None,
    checker: dict[str, Any] | None = None,
) -> FrozenChunk:
    """A chunk of consecutive ``steps``; band ③ and the step index are built here, mechanically.
    Without ``band1`` it is a ``ledger_only`` chunk (the lens gave up; only the hard threshold may
    force it out). ``index`` is assigned by :meth:`FrozenHistory.add_chunk`."""
    if not steps:
        raise FrozenError("a chunk needs at least one step")
    numbers = [s.number for s in steps]
    if numbers != list(range(numbers[0], numbers[0] + len(numbers))):
        raise FrozenError(f"a chunk needs consecutive steps, got {numbers[:3]}…{numbers[-3:]}")
    recoveries = recoveries or {}
    band3: list[str] = []
    for step in steps:
        band3 += ledger_lines(step, recoveries.get(step.number, ()))
    lines2 = band2.splitlines() if isinstance(band2, str) else list(band2)
    return FrozenChunk(
        index=index,
        start=steps[0].number,
        end=steps[-1].number,
        start_ms=steps[0].offset_ms or 0,
        end_ms=steps[-1].offset_ms or 0,
        milestone=milestone,
        band1=dict(band1) if band1 is not None else {},
        band2=[line for line in lines2 if line.strip()],
        band3=band3,
        step_index=[f"{step_header(s.number, s.offset_ms)} {action_phrase(s)}" for s in steps],
        status="ready" if band1 is not None else "ledger_only",
        checker=checker,
    )


# --- eras, periods, snapshot -------------------------------------------------------------------

#: A period paragraph is at most this many characters (the header, recall line and user lines
#: come on top of it).
PERIOD_CHARS = 600
#: A first clause taken from a chunk's prose field is at most this many characters.
CLAUSE_CHARS = 120
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


def first_clause(text: str, limit: int = CLAUSE_CHARS) -> str:
    """The text up to its first clause boundary (``;``, a sentence end, `` — ``) outside quoted
    screen text, whitespace collapsed, at most ``limit`` characters (then "…")."""
    text = _flat(text)
    blanked = _QUOTED.sub(lambda m: " " * len(m.group(0)), text)
    match = re.search(r";|\.(?:\s|$)|\s[—–]\s", blanked)
    clause = (text[: match.start()] if match else text).strip().rstrip(".")
    return clause if len(clause) <= limit else clause[:limit].rstrip() + "…"


def _chunk_clause(chunk: FrozenChunk) -> str:
    """``Steps a–b: <purpose>; <done>; <effects>`` (first clauses), or the milestone label for a
    chunk whose lens never answered."""
    if chunk.status != "ready":
        label = _flat(chunk.milestone or "") or "no milestone"
        return f"{_range(chunk.start, chunk.end)}: {label} (step ledger only)"
    bits: list[str] = []
    for name in ("purpose", "done", "effects"):
        clause = first_clause(str(chunk.band1.get(name) or ""))
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
        text = _capped_join(list(clauses), ". ", max(40, room - fact_room - 1), "…({n} more intervals)") + "."
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


# --- the F zone --------------------------------------------------------------------------------


def add_op(chunk: FrozenChunk) -> dict[str, Any]:
    return {"op": "add", "chunk": chunk.to_dict()}


def fold_op(max_chunks: int, max_eras: int | None = None, budget: int | None = None) -> dict[str, Any]:
    op: dict[str, Any] = {"op": "fold", "max_chunks": max_chunks, "max_eras": max_eras}
    if budget is not None:
        op["budget"] = budget
    return op


def snapshot_op(goal: str, plan_state: str, device_state: str) -> dict[str, Any]:
    return {"op": "snapshot", "goal": goal, "plan_state": plan_state, "device_state": device_state}


@dataclass
class FrozenHistory:
    """Everything F shows after the task, oldest first: snapshot, periods, eras, chunks."""

    chunks: list[FrozenChunk] = field(default_factory=list)
    eras: list[Era] = field(default_factory=list)
    periods: list[Period] = field(default_factory=list)
    snapshot_block: Snapshot | None = None
    chunks_added: int = 0
    eras_made: int = 0
    periods_made: int = 0

    # -- queries --

    def covered_end(self) -> int:
        """The last step F covers (0 when empty)."""
        ends = [c.end for c in self.chunks] + [e.end for e in self.eras] + [p.end for p in self.periods]
        if self.snapshot_block is not None:
            ends.append(self.snapshot_block.end)
        return max(ends, default=0)

    def is_empty(self) -> bool:
        return not (self.chunks or self.eras or self.periods or self.snapshot_block)

    def tokens(self) -> int:
        """Estimated tokens of the F text (:func:`text_tokens` of :meth:`render`)."""
        return text_tokens(self.render())

    def level_tokens(self) -> dict[str, int]:
        """Estimated tokens per level: snapshot, periods, eras, chunks."""
        return {
            "snapshot": text_tokens(self.snapshot_block.render()) if self.snapshot_block is not None else 0,
            "periods": sum(text_tokens(p.render()) for p in self.periods),
            "eras": sum(text_tokens(e.render()) for e in self.eras),
            "chunks": sum(text_tokens(c.render()) for c in self.chunks),
        }

    # -- operations --

    def add_chunk(self, chunk: FrozenChunk) -> FrozenChunk:
        """Append a chunk (numbered here: ``Chunk k`` counts every chunk ever added). The F text
        grows by a blank line and the chunk: an append, never a rewrite."""
        if chunk.start <= self.covered_end():
            raise FrozenError(
                f"chunk {chunk.start}-{chunk.end} overlaps F, which already covers steps up to {self.covered_end()}"
            )
        if chunk.end < chunk.start or len(chunk.step_index) != chunk.end - chunk.start + 1:
            raise FrozenError(f"chunk {chunk.start}-{chunk.end} does not have one index line per step")
        self.chunks_added += 1
        added = replace(chunk, index=self.chunks_added)
        self.chunks.append(added)
        return added

    def _fold_chunks(self, take: int) -> None:
        take = max(1, min(take, len(self.chunks)))
        self.eras_made += 1
        self.eras.append(_make_era(self.eras_made, self.chunks[:take]))
        self.chunks = self.chunks[take:]

    def _era_to_period(self) -> None:
        self.periods_made += 1
        self.periods.append(_make_period(self.periods_made, self.eras.pop(0)))

    def _shrink_once(self, budget: int) -> bool:
        """One step down the width ladder, oldest material first: merge the two oldest periods
        when periods take more than their share; else the oldest era becomes a period; else the
        older half of the chunks folds into an era; else periods merge. False: nothing left."""
        period_tokens = sum(text_tokens(p.render()) for p in self.periods)
        if len(self.periods) > 1 and period_tokens > budget * PERIOD_SHARE:
            self.periods[0:2] = [_merge_periods(self.periods[0], self.periods[1])]
        elif self.eras:
            self._era_to_period()
        elif len(self.chunks) > 1:
            self._fold_chunks(math.ceil(len(self.chunks) / 2))
        elif len(self.periods) > 1:
            self.periods[0:2] = [_merge_periods(self.periods[0], self.periods[1])]
        else:
            return False
        return True

    def fold(self, max_chunks: int, max_eras: int | None = None, *, era_chunks: int | None = None,
             budget: int | None = None) -> bool:
        """Fold above the limits; returns True when F changed.

        Above ``max_chunks`` chunks, the oldest ``max(excess, ceil(max_chunks / 2))`` chunks (or
        ``era_chunks``) become one era; above ``max_eras`` eras (default ``max_chunks``), the oldest
        era becomes a period paragraph, repeatedly. With a token ``budget``, F above it goes down
        the width ladder (:meth:`_shrink_once`) until it is at most ``LOW_WATERMARK`` of it."""
        if max_chunks < 1:
            raise FrozenError(f"max_chunks must be >= 1 (got {max_chunks})")
        limit = max_chunks if max_eras is None else max_eras
        if limit < 0:
            raise FrozenError(f"max_eras must be >= 0 (got {max_eras})")
        changed = False
        while len(self.chunks) > max_chunks:
            self._fold_chunks(era_chunks or max(len(self.chunks) - max_chunks, math.ceil(max_chunks / 2)))
            changed = True
        while len(self.eras) > limit:
            self._era_to_period()
            changed = True
        if budget is not None and self.tokens() > budget:
            while self.tokens() > budget * LOW_WATERMARK and self._shrink_once(budget):
                changed = True
        return changed

    def snapshot(self, goal: str, plan_state: str, device_state: str) -> Snapshot:
        """L3: F becomes one session snapshot merged mechanically from every level's ① fields
        (each list keeps its newest items), followed by the step index — per-step lines for the
        newest steps, ranged lines before them, a bounded number of each — and every user line
        verbatim."""
        if self.is_empty():
            raise FrozenError("nothing to snapshot: F is empty")
        prior = self.snapshot_block
        sources: list[dict[str, Any]] = []
        blocks: list[IndexBlock] = []
        dropped: dict[str, int] = dict(prior.dropped) if prior is not None else {}
        if prior is not None:
            sources.append(prior.band1)
            blocks += prior.blocks
        for period in self.periods:
            sources.append(period.band1)
            blocks.append(IndexBlock(period.start, period.end, period.start_ms, period.end_ms, list(period.milestones),
                                     list(period.user_lines)))
        for era in self.eras:
            sources.append(era.band1)
            blocks.append(IndexBlock(era.start, era.end, era.start_ms, era.end_ms, list(era.milestones),
                                     _user_lines(era.band3), _index_lines(era.band3, era.step_index)))
        for chunk in self.chunks:
            sources.append(chunk.band1)
            milestones = [_flat(chunk.milestone)] if chunk.milestone and _flat(chunk.milestone) else []
            blocks.append(IndexBlock(chunk.start, chunk.end, chunk.start_ms, chunk.end_ms, milestones,
                                     _user_lines(chunk.band3), _index_lines(chunk.band3, chunk.step_index)))
        merged: dict[str, Any] = {}
        for name in BAND1_LISTS:
            items = _merge_lists(s.get(name) or [] for s in sources)
            if len(items) > SNAPSHOT_LIST_ITEMS:
                dropped[name] = dropped.get(name, 0) + len(items) - SNAPSHOT_LIST_ITEMS
                items = items[-SNAPSHOT_LIST_ITEMS:]
            merged[name] = items
        block = Snapshot(
            start=blocks[0].start,
            end=blocks[-1].end,
            start_ms=blocks[0].start_ms,
            end_ms=blocks[-1].end_ms,
            goal=goal,
            plan_state=plan_state,
            device_state=device_state,
            band1=merged,
            blocks=_bound_index(blocks),
            dropped={k: v for k, v in dropped.items() if v},
        )
        self.snapshot_block = block
        self.chunks, self.eras, self.periods = [], [], []
        return block

    def apply(self, op: dict[str, Any]) -> None:
        """Replay one recorded operation (:func:`add_op`, :func:`fold_op`, :func:`snapshot_op`)."""
        kind = op.get("op")
        if kind == "add":
            self.add_chunk(FrozenChunk.from_dict(op["chunk"]))
        elif kind == "fold":
            budget = op.get("budget")
            self.fold(int(op["max_chunks"]), op.get("max_eras"), budget=int(budget) if budget is not None else None)
        elif kind == "snapshot":
            self.snapshot(str(op["goal"]), str(op["plan_state"]), str(op["device_state"]))
        else:
            raise FrozenError(f"unknown F operation {kind!r}")

    # -- text and storage --

    def render(self) -> str:
        """The F text after the task heading: blocks oldest first, separated by blank lines."""
        blocks: list[str] = []
        if self.snapshot_block is not None:
            blocks.append(self.snapshot_block.render())
        blocks += [p.render() for p in self.periods]
        blocks += [e.render() for e in self.eras]
        blocks += [c.render() for c in self.chunks]
        return "\n\n".join(blocks)

    def to_dict(self) -> dict[str, Any]:
        return {
            "chunks": [c.to_dict() for c in self.chunks],
            "eras": [e.to_dict() for e in self.eras],
            "periods": [p.to_dict() for p in self.periods],
            "snapshot": self.snapshot_block.to_dict() if self.snapshot_block is not None else None,
            "chunks_added": self.chunks_added,
            "eras_made": self.eras_made,
            "periods_made": self.periods_made,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> FrozenHistory:
        try:
            snap = data.get("snapshot")
            return cls(
                chunks=[FrozenChunk.from_dict(c) for c in data.get("chunks") or []],
                eras=[Era.from_dict(e) for e in data.get("eras") or []],
                periods=[Period.from_dict(p) for p in data.get("periods") or []],
                snapshot_block=Snapshot.from_dict(snap) if snap else None,
                chunks_added=int(data.get("chunks_added") or 0),
                eras_made=int(data.get("eras_made") or 0),
                periods_made=int(data.get("periods_made") or 0),
            )
        except (KeyError, TypeError, ValueError) as exc:
            raise FrozenError(f"not a stored F zone: {exc}") from None


def is_rewrite(old: str, new: str) -> bool:
    """A new F text is a rewrite unless it only appends to the old one (the cached prefix holds)."""
    return not new.startswith(old)
