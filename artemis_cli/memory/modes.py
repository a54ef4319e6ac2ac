"""Memory modes for ``artemis bench`` (SPEC §12): the transcript ledger and two baselines.

- ``transcript``  the Artemis ledger (``TranscriptLedger``): scrub edge, chunks, eras, snapshot.
- ``legacy``      every turn the whole history is re-rendered into one fresh user message: the
                  task, one line per earlier step (the model's words, its calls, their results,
                  the visual summary when ready), then the current observation and screenshot.
                  No multi-turn history and no cache-friendly prefix beyond the system prompt.
- ``naive``       append everything: every observation keeps its element list and screenshot;
                  nothing is scrubbed or compressed.

Both baselines are ``TranscriptLedger`` subclasses with the same interface, so the operator loop
runs unchanged; ``begin_turn`` takes no decisions (so the compressor is never consulted).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from artemis_cli.errors import UsageError
from artemis_cli.memory.ledger import (
    LedgerDecision,
    LedgerEntry,
    SummaryLookup,
    Tail,
    TranscriptLedger,
    _append,
)
from artemis_cli.models.base import Message, Part
from artemis_cli.perception.quoting import close_quotes, quote_untrusted, untrusted_json

MEMORY_MODES = ("transcript", "legacy", "naive")
LEGACY_HISTORY_HEADING = "# HISTORY (every earlier step)"


class NaiveLedger(TranscriptLedger):
    """Append everything: no scrub edge, no compression; every screenshot stays."""

    def begin_turn(
        self,
        step: int,
        summaries: SummaryLookup,
        *,
        compress: Callable[[], list[LedgerDecision]] | None = None,
    ) -> list[LedgerDecision]:
        return []


def _call_text(part: Part) -> str:
    fc = part.function_call
    if fc is None:
        return ""
    return f"{fc.name}({untrusted_json(fc.args, sort_keys=True)})"


def _flat(text: str, limit: int = 400) -> str:
    """One line of at most ``limit`` characters; a quoted string the cut goes into is closed."""
    text = " ".join(text.split())
    return text if len(text) <= limit else close_quotes(text[:limit]) + "…"


@dataclass
class LegacyLedger(TranscriptLedger):
    """The whole history re-rendered into one fresh user message every turn."""

    _summaries: dict[int, str] = field(default_factory=dict)

    def begin_turn(
        self,
        step: int,
        summaries: SummaryLookup,
        *,
        compress: Callable[[], list[LedgerDecision]] | None = None,
    ) -> list[LedgerDecision]:
        # remember ready visual summaries (the history line shows them); no decisions are taken
        for entry in self.entries:
            if entry.step not in self._summaries:
                status, text = summaries(entry.step)
                if status == "ready" and text:
                    self._summaries[entry.step] = text
        return []

    def step_line(self, entry: LedgerEntry, results: list[str]) -> str:
        words: list[str] = []
        calls: list[str] = []
        for m in entry.turn:
            if m.role != "model":
                continue
            for p in m.parts:
                if p.text and not p.thought:
                    words.append(_flat(p.text))
                if p.function_call is not None:
                    calls.append(_call_text(p))
        obs = self.scrubbed_observation(entry.step, entry.observation).splitlines()
        head = obs[0] if obs else f"# OBSERVATION (step {entry.step})"
        line = f"- Step {entry.step}: {head.lstrip('# ')}"
        if words:
            line += " | model: " + " ".join(words)
        if calls:
            line += " | calls: " + "; ".join(calls)
        if results:
            line += " | results: " + "; ".join(results)
        summary = self._summaries.get(entry.step)
        if summary:
            line += " | screen: " + quote_untrusted(" ".join(summary.split()), 300)
        return line

    def history_text(self, tail: Tail) -> str:
        lines: list[str] = []
        for i, entry in enumerate(self.entries):
            nxt = self.entries[i + 1].replies_in if i + 1 < len(self.entries) else tail.replies_in
            results = [_flat(f"{r.name} -> {untrusted_json(r.response, sort_keys=True)}", 300) for r in nxt]
            lines.append(self.step_line(entry, results))
        return "\n".join(lines)

    def messages(self, tail: Tail, turn: list[Message]) -> list[Message]:
        """One user message (task, history, observation, screenshot), then this turn's messages."""
        parts = [Part(text=self.task_text)]
        if self.entries:
            parts.append(Part(text=LEGACY_HISTORY_HEADING + "\n" + self.history_text(tail)))
        parts.append(Part(text=tail.observation))
        if tail.image_png is not None:
            parts.append(Part(image_png=self._tail_image(tail.image_png, tail.marks)))
        out: list[Message] = [Message("user", parts)]
        for m in turn:
            _append(out, m)
        return out


def ledger_for_mode(mode: str, base: TranscriptLedger) -> TranscriptLedger:
    """A ledger of ``mode`` built with the same S zone, task text, settings and image loader."""
    kwargs: dict[str, Any] = {
        "system": base.system,
        "tools": base.tools,
        "task_text": base.task_text,
        "settings": base.settings,
        "load_image": base.load_image,
    }
    if mode == "transcript":
        return base
    if mode == "legacy":
        return LegacyLedger(**kwargs)
    if mode == "naive":
        return NaiveLedger(**kwargs)
    raise UsageError(f"unknown memory mode {mode!r}", hint="modes: " + ", ".join(MEMORY_MODES))
