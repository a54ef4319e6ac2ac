"""Chunking of the active window into F (SPEC §10.3, L2).

This module decides *when* a segment of old steps closes and renders its text. A chunk keeps
every step: band ③ is one mechanical line per step (``ledger_lines``), user instructions
verbatim, all from the DataEngine (no model). The chunk lens bands ① and ② join it in the
memory-runtime II work; until then a closed segment is a ledger-only chunk, ready at once.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import dataclass

from artemis_cli.engine.records import StepRecord
from artemis_cli.memory.ledger import LedgerEntry, TranscriptLedger
from artemis_cli.memory.ledger_lines import ledger_lines
from artemis_cli.operators.prompts import format_offset


@dataclass(frozen=True)
class ChunkPolicy:
    max_steps: int = 12
    target_source_tokens: int = 2000
    min_active_steps: int = 5

    @classmethod
    def from_profile(cls, profile: object) -> ChunkPolicy:
        memory = profile.memory  # type: ignore[attr-defined]
        return cls(
            max_steps=memory.chunking.max_steps,
            target_source_tokens=memory.chunking.target_source_tokens,
            min_active_steps=memory.transcript.min_active_steps,
        )


def entry_source_tokens(ledger: TranscriptLedger, entry: LedgerEntry) -> int:
    """Estimated tokens a step contributes to A once scrubbed (what a chunk would replace)."""
    text = ledger.scrubbed_observation(entry.step, entry.observation) + (entry.image_text or "")
    calls = json.dumps([m.to_dict() for m in entry.turn], ensure_ascii=False)
    return math.ceil((len(text) + len(calls)) / 4)


def plan_chunks(
    ledger: TranscriptLedger, entries: Sequence[LedgerEntry], policy: ChunkPolicy, *, pressure: bool = False
) -> list[tuple[int, int]]:
    """Segments to close now, oldest first. Never leaves fewer than ``min_active_steps`` in A.

    A segment closes when it reaches ``max_steps`` steps or ``target_source_tokens``; under
    context pressure (the soft ratio) everything above the floor closes.
    """
    candidates = list(entries[: max(0, len(entries) - policy.min_active_steps)])
    out: list[tuple[int, int]] = []
    start = 0
    tokens = 0
    for i, entry in enumerate(candidates):
        tokens += entry_source_tokens(ledger, entry)
        count = i - start + 1
        if count >= policy.max_steps or tokens >= policy.target_source_tokens:
            out.append((candidates[start].step, entry.step))
            start, tokens = i + 1, 0
    if pressure and start < len(candidates):
        out.append((candidates[start].step, candidates[-1].step))
    return out


def render_ledger_chunk(index: int, steps: Sequence[StepRecord], milestone: str | None = None) -> str:
    """``[Chunk k | <milestone> | Steps a–b | T+mm:ss → T+mm:ss]`` then one line per step."""
    first, last = steps[0], steps[-1]
    header = (
        f"[Chunk {index} | {milestone or 'no milestone'} | Steps {first.number}–{last.number} | "
        f"{format_offset(first.offset_ms or 0)} → {format_offset(last.offset_ms or 0)}]"
    )
    lines = [header]
    for step in steps:
        lines.extend(ledger_lines(step))
    return "\n".join(lines)
