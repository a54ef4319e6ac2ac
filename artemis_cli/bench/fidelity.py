"""The fidelity probe: questions about facts planted at known steps, answered from the final
context (the mode's last prompt text, cut to the context budget) plus ``recall_history``.

Facts are read from the session itself: every note saved (``save_note`` key → content) and every
text typed (at least 3 characters, never a redacted password). A fact counts as answered when its
value appears in the newest ``budget`` tokens of the final prompt text, or in what recall returns
for the question (a note's key as the query; a typed value via the step range of its step).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from artemis_cli.engine.db import DataEngine
from artemis_cli.engine.records import REDACTED
from artemis_cli.memory.ledger import Tail, TranscriptLedger, estimate_tokens
from artemis_cli.memory.notes import list_notes
from artemis_cli.memory.recall import Recall

MIN_TYPED_CHARS = 3


@dataclass(frozen=True)
class Fact:
    step: int
    kind: str  # note | typed
    key: str
    value: str


def planted_facts(engine: DataEngine, session_id: str) -> list[Fact]:
    facts = [Fact(n.step or 0, "note", n.key, n.content) for n in list_notes(engine, session_id)]
    for s in engine.get_steps(session_id):
        text = str((s.action_args or {}).get("text", ""))
        if s.action_type == "type_text" and len(text.strip()) >= MIN_TYPED_CHARS and REDACTED not in text:
            facts.append(Fact(s.number, "typed", s.target_resource_id or "", text))
    return facts


def final_context_text(ledger: TranscriptLedger, next_step: int, budget_tokens: int) -> str:
    """The text the model would see next turn, keeping only the newest ``budget`` tokens' share."""
    request = ledger.request(Tail(step=next_step, replies_in=[], observation="", image_png=None), [])
    text = "\n".join(p.text for m in request.messages for p in m.parts if p.text)
    total = estimate_tokens(request)
    if total > budget_tokens:
        keep = int(len(text) * budget_tokens / total)
        text = text[len(text) - keep:]
    return text


def _norm(s: str) -> str:
    return " ".join(s.casefold().split())


def probe(engine: DataEngine, session_id: str, ledger: TranscriptLedger | None, budget_tokens: int) -> dict[str, Any]:
    facts = planted_facts(engine, session_id)
    last = engine.last_step_number(session_id)
    text = _norm(final_context_text(ledger, last + 1, budget_tokens)) if ledger is not None else ""
    recall = Recall(engine)
    in_text = answered = 0
    for f in facts:
        value = _norm(f.value)
        hit_text = value in text
        if f.kind == "note":
            result = recall.recall(session_id, f.key)
        else:
            result = recall.recall(session_id, step_range=(f.step, f.step))
        hit_recall = value in _norm(result.render())
        in_text += hit_text
        answered += hit_text or hit_recall
    return {"fidelity_facts": len(facts), "fidelity_in_text": in_text, "fidelity_answered": answered}
