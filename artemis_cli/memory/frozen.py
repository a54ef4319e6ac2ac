"""The F zone model (SPEC §10.2, §10.3): chunks, eras, period paragraphs and the L3 snapshot.

:class:`FrozenHistory` is plain data plus four deterministic operations; no model is ever
called here (chunk bands ① and ② come from :mod:`artemis_cli.memory.chunk_lens`):

- :meth:`FrozenHistory.add_chunk` appends a closed, ready (or ledger-only) chunk;
- :meth:`FrozenHistory.fold` folds the oldest chunks into an era above ``max_chunks``
  (① merged field-wise, ② reduced to interval titles, ③ kept) and turns the oldest era into a
  period paragraph above ``max_eras`` (range, times, recall guidance, user lines verbatim);
- :meth:`FrozenHistory.snapshot` replaces everything by one L3 session snapshot (merged fields,
  then a minimal per-step index and every user line verbatim);
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
    [Period 1 | Steps 1–20 | T+00:00 → T+04:40] <one paragraph>
    [Session snapshot | Steps 1–80 | T+00:00 → T+20:00]
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
        return cls(**{k: data[k] for k in cls.__dataclass_fields__})


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
    band1: dict[str, Any]  # the era's merged fields, kept for the L3 merge (not rendered)

    def header(self) -> str:
        return f"[Period {self.index} | {_range(self.start, self.end)} | {_times(self.start_ms, self.end_ms)}]"

    def render(self) -> str:
        return "\n".join([f"{self.header()} {self.paragraph}", recall_line(self.start, self.end), *self.user_lines])

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Period:
        return cls(**{k: data[k] for k in cls.__dataclass_fields__})


def _paragraph(era: Era) -> str:
    """One paragraph assembled mechanically from the era's ① fields (no model)."""
    parts = []
    if era.milestones:
        parts.append("Milestones: " + "; ".join(era.milestones) + ".")
    for name in BAND1_PROSE:
        value = _flat(era.band1.get(name) or "")
        if value:
            parts.append(f"{BAND1_LABELS[name]}: {value.rstrip('.')}.")
    for name in BAND1_LISTS:
        items = era.band1.get(name) or []
        if items:
            parts.append(f"{BAND1_LABELS[name]}: {'; '.join(_flat(i) for i in items)}.")
    return " ".join(parts) if parts else "No synopsis (step ledger only)."


def _make_period(index: int, era: Era) -> Period:
    return Period(
        index=index,
        start=era.start,
        end=era.end,
        start_ms=era.start_ms,
        end_ms=era.end_ms,
        paragraph=_paragraph(era),
        user_lines=_user_lines(era.band3),
        band1=dict(era.band1),
    )


@dataclass
class Snapshot:
    start: int
    end: int
    start_ms: int
    end_ms: int
    goal: str
    plan_state: str
    device_state: str
    band1: dict[str, Any]  # merged list fields (verified_facts, unresolved, failed_paths, entities)
    index_lines: list[str]  # period range lines, per-step index lines and user lines, in order

    def render(self) -> str:
        lines = [
            f"[Session snapshot | {_range(self.start, self.end)} | {_times(self.start_ms, self.end_ms)}]",
            f"Overall goal: {_flat(self.goal) or 'none'}",
            f"Plan state: {_flat(self.plan_state) or 'none'}",
        ]
        for name in BAND1_LISTS:
            items = self.band1.get(name) or []
            lines.append(f"{BAND1_LABELS[name]}: {'; '.join(items) if items else 'none'}")
        lines.append(f"Device/app state: {_flat(self.device_state) or 'none'}")
        lines.append(f"Step index ({recall_line(self.start, self.end)[len('Details: '):]} returns any range in full):")
        lines += self.index_lines
        return "\n".join(lines)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Snapshot:
        return cls(**{k: data[k] for k in cls.__dataclass_fields__})


# --- the F zone --------------------------------------------------------------------------------


def add_op(chunk: FrozenChunk) -> dict[str, Any]:
    return {"op": "add", "chunk": chunk.to_dict()}


def fold_op(max_chunks: int, max_eras: int | None = None) -> dict[str, Any]:
    return {"op": "fold", "max_chunks": max_chunks, "max_eras": max_eras}


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

    # -- operations --

    def add_chunk(self, chunk: FrozenChunk) -> FrozenChunk:
        """Append a chunk (numbered here: ``Chunk k`` counts every chunk ever added)."""
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

    def fold(self, max_chunks: int, max_eras: int | None = None, *, era_chunks: int | None = None) -> bool:
        """Fold above the limits; returns True when F changed.

        Above ``max_chunks`` chunks, the oldest ``max(excess, ceil(max_chunks / 2))`` chunks (or
        ``era_chunks``) become one era; above ``max_eras`` eras (default ``max_chunks``), the oldest
        era becomes a period paragraph, repeatedly."""
        if max_chunks < 1:
            raise FrozenError(f"max_chunks must be >= 1 (got {max_chunks})")
        limit = max_chunks if max_eras is None else max_eras
        if limit < 0:
            raise FrozenError(f"max_eras must be >= 0 (got {max_eras})")
        changed = False
        while len(self.chunks) > max_chunks:
            take = era_chunks or max(len(self.chunks) - max_chunks, math.ceil(max_chunks / 2))
            take = max(1, min(take, len(self.chunks)))
            self.eras_made += 1
            self.eras.append(_make_era(self.eras_made, self.chunks[:take]))
            self.chunks = self.chunks[take:]
            changed = True
        while len(self.eras) > limit:
            self.periods_made += 1
            self.periods.append(_make_period(self.periods_made, self.eras.pop(0)))
            changed = True
        return changed

    def snapshot(self, goal: str, plan_state: str, device_state: str) -> Snapshot:
        """L3: F becomes one session snapshot merged mechanically from every level's ① fields,
        followed by the per-step index (period range lines kept) and every user line verbatim."""
        if self.is_empty():
            raise FrozenError("nothing to snapshot: F is empty")
        prior = self.snapshot_block
        sources: list[dict[str, Any]] = []
        index_lines: list[str] = []
        if prior is not None:
            sources.append(prior.band1)
            index_lines += prior.index_lines
        for period in self.periods:
            sources.append(period.band1)
            index_lines += [period.header(), recall_line(period.start, period.end), *period.user_lines]
        for era in self.eras:
            sources.append(era.band1)
            index_lines += _index_lines(era.band3, era.step_index)
        for chunk in self.chunks:
            sources.append(chunk.band1)
            index_lines += _index_lines(chunk.band3, chunk.step_index)
        firsts = [(b.start, b.start_ms) for b in [prior, *self.periods, *self.eras, *self.chunks] if b is not None]
        lasts = [(b.end, b.end_ms) for b in [prior, *self.periods, *self.eras, *self.chunks] if b is not None]
        start, start_ms = min(firsts)
        end, end_ms = max(lasts)
        block = Snapshot(
            start=start,
            end=end,
            start_ms=start_ms,
            end_ms=end_ms,
            goal=goal,
            plan_state=plan_state,
            device_state=device_state,
            band1={name: _merge_lists(s.get(name) or [] for s in sources) for name in BAND1_LISTS},
            index_lines=index_lines,
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
            self.fold(int(op["max_chunks"]), op.get("max_eras"))
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
