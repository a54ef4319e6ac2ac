"""Which compression level each step lives in now, and the era / period / snapshot bands.

The session's F zone is rebuilt from its recorded operations (:func:`replay_frozen`, the same
replay ``artemis bench`` uses); every block of it (snapshot, periods, eras, chunks) covers a step
range. A step no block covers is still verbatim in the transcript. The mapping is a short list of
ranges, so looking a step up is a scan of a few dozen entries, not a per-step table.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

from artemis_cli.engine.db import DataEngine
from artemis_cli.memory.frozen import FrozenError, FrozenHistory

#: The tag of a step the transcript still holds word for word (not folded into any block).
IN_FULL = "in full"
#: What each tag on a step means, for the report's legend (the words a reader sees).
TAG_MEANINGS: dict[str, str] = {
    IN_FULL: "the model still reads this step word for word: thought, action and result",
    "chunk N": "folded into a summary of a few steps (one line each); the Chunk bands show it",
    "era N": "older chunks merged into a shorter paragraph (the Era bands)",
    "period N": "older eras merged again, shorter still (the Period bands)",
    "snapshot": "the oldest steps, summed up in a few lines (the Snapshot band)",
}


@dataclass(frozen=True)
class Level:
    """One F block: ``kind`` is snapshot, period, era or chunk; ``lines`` its text (eras,
    periods and the snapshot: shown as a band; chunks come from the chunk table instead)."""

    kind: str
    index: int
    start: int
    end: int
    title: str
    lines: tuple[str, ...] = ()

    @property
    def label(self) -> str:
        return self.kind if self.kind == "snapshot" else f"{self.kind} {self.index}"


@dataclass
class Levels:
    blocks: list[Level] = field(default_factory=list)
    error: str = ""

    def of_step(self, number: int) -> Level | None:
        for block in self.blocks:
            if block.start <= number <= block.end:
                return block
        return None

    def label(self, number: int) -> str:
        block = self.of_step(number)
        return IN_FULL if block is None else block.label

    def starting_at(self, number: int) -> list[Level]:
        """Blocks above the chunk level that start at this step (bands in the timeline)."""
        return [b for b in self.blocks if b.start == number and b.kind != "chunk"]


def replay_frozen(engine: DataEngine, session_id: str) -> FrozenHistory:
    """The session's F zone at its end, from the recorded ``frozen`` ledger operations."""
    frozen = FrozenHistory()
    with engine.lock:
        rows = list(engine.db.query(
            "SELECT payload FROM events WHERE session_id = ? AND kind = 'ledger' "
            "AND json_extract(payload, '$.op') = 'frozen' ORDER BY id", [session_id]))
    for row in rows:
        try:
            payload = json.loads(row["payload"] or "{}")
        except ValueError:
            continue
        if not isinstance(payload, dict) or payload.get("op") != "frozen" or not payload.get("ops"):
            continue
        ops = payload["ops"]
        for op in json.loads(ops) if isinstance(ops, str) else ops:
            if isinstance(op, dict) and op.get("op") != "checker":
                frozen.apply(op)
    return frozen


def _text_lines(text: str) -> tuple[str, ...]:
    return tuple(line for line in text.splitlines() if line.strip())


def load_levels(engine: DataEngine, session_id: str) -> Levels:
    """The F blocks at the end of the session (empty when it never made a chunk)."""
    try:
        frozen = replay_frozen(engine, session_id)
    except (FrozenError, KeyError, TypeError, ValueError) as exc:  # an F zone this code cannot rebuild
        return Levels(error=str(exc))
    blocks: list[Level] = []
    snap = frozen.snapshot_block
    if snap is not None:
        blocks.append(Level("snapshot", 0, snap.start, snap.end, f"Session snapshot · Steps {snap.start}–{snap.end}",
                            _text_lines(snap.render())[1:]))
    for p in frozen.periods:
        blocks.append(Level("period", p.index, p.start, p.end, f"Period {p.index} · Steps {p.start}–{p.end}",
                            _text_lines(p.render())))
    for e in frozen.eras:
        blocks.append(Level("era", e.index, e.start, e.end, f"Era {e.index} · Steps {e.start}–{e.end}",
                            _text_lines(e.render())[1:]))
    for c in frozen.chunks:
        blocks.append(Level("chunk", c.index, c.start, c.end, f"Chunk {c.index} · Steps {c.start}–{c.end}"))
    blocks.sort(key=lambda b: (b.start, b.end))
    return Levels(blocks)
