"""F-zone chunks (SPEC §10.3): band ① fields, the chunk block and :func:`build_chunk`, plus the
text helpers every F level shares. Formats are described in :mod:`artemis_cli.memory.frozen`."""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass
from typing import Any, Literal

from artemis_cli.engine.clock import format_offset
from artemis_cli.engine.records import StepRecord
from artemis_cli.errors import UsageError
from artemis_cli.memory.ledger_lines import action_phrase, ledger_lines, step_header

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
#: The mechanical chunk lens's ``effects`` when the segment wrote no note (a period paragraph
#: leaves it out: it says nothing).
NO_NOTES = "No notes written."
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


