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

import math
from dataclasses import dataclass, field, replace
from typing import Any

from artemis_cli.memory.frozen_chunk import (
    BAND1_FIELDS,
    BAND1_LABELS,
    BAND1_LISTS,
    BAND1_PROSE,
    ChunkState,
    FrozenChunk,
    FrozenError,
    _flat,
    _index_lines,
    _merge_lists,
    _user_lines,
    build_chunk,
    interval_title,
    recall_line,
)
from artemis_cli.memory.frozen_levels import (
    LOW_WATERMARK,
    PERIOD_SHARE,
    SNAPSHOT_LIST_ITEMS,
    Era,
    IndexBlock,
    Period,
    Snapshot,
    _bound_index,
    _make_era,
    _make_period,
    _merge_periods,
    text_tokens,
)

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
