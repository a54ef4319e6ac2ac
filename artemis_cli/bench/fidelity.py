"""The fidelity probe: natural-language questions about facts the agent saw but never typed.

A suite's probe file (``fidelity-probe.json`` next to its tasks, written by
``artemis_cli.bench.generate_suite``) lists per task the facts to ask about: phone numbers and
e-mails shown in Contacts, prices and order numbers shown in the Shop, settings values — each with
a question ("What is Grace Ito's phone number?") and its value. For each fact the probe finds, in
the finished session itself:

* **seen**: the steps whose recorded screen (the step's UI dump, what the agent saw) shows the
  value; a value never on screen cannot be answered;
* **typed** / **in the goal**: a value the agent typed, or that the task text holds, is not a
  memory test (the transcript keeps both verbatim): such a fact counts as unanswered;
* **in text**: the value is in the newest ``budget`` tokens' share of the final context (the
  mode's prompt for the next turn);
* **in recall**: the value is in what ``Recall.recall(session, question)`` returns for the
  question as asked — the words of the question, never a step range that already knows where
  to look.

A fact is answered when it was seen, neither typed nor given, and found in the text or by recall.
``fidelity`` = answered / facts. The session's own notes and typed texts are still checked as a
secondary figure (``fidelity_notes_*``: a note's key as the query, a typed value by its step).
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from artemis_cli.bench.metrics import compression_figures
from artemis_cli.engine.db import DataEngine
from artemis_cli.engine.errors import BlobMissing
from artemis_cli.engine.records import REDACTED
from artemis_cli.errors import UsageError
from artemis_cli.memory.ledger import Tail, TranscriptLedger, estimate_tokens
from artemis_cli.memory.notes import list_notes
from artemis_cli.memory.recall import DEFAULT_MAX_RESULTS, DEFAULT_MAX_TEXT_TOKENS, Recall, ui_text_from_xml

MIN_TYPED_CHARS = 3
PROBE_FILE = "fidelity-probe.json"


@dataclass(frozen=True)
class Fact:
    """A planted fact of the secondary probe: a note the agent saved or a text it typed."""

    step: int
    kind: str  # note | typed
    key: str
    value: str


@dataclass(frozen=True)
class ProbeFact:
    """A fact the agent sees but never types, asked about in natural language."""

    id: str
    kind: str  # phone | email | price | order | setting | note
    question: str
    value: str
    planned_step: int | None = None  # where the generator put it; the probe reads the recording


# -- the probe file -----------------------------------------------------------------------------------


def probe_path(suite: Path) -> Path:
    return (suite if suite.is_dir() else suite.parent) / PROBE_FILE


def load_probe(suite: Path) -> dict[str, list[ProbeFact]]:
    """Task id → its probe facts, from the suite's probe file ({} when the suite has none)."""
    path = probe_path(suite)
    if not path.is_file():
        return {}
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        tasks = data["tasks"]
        return {
            str(task_id): [ProbeFact(id=str(f["id"]), kind=str(f["kind"]), question=str(f["question"]),
                                     value=str(f["value"]), planned_step=f.get("planned_step"))
                           for f in facts]
            for task_id, facts in tasks.items()
        }
    except (json.JSONDecodeError, KeyError, TypeError, AttributeError) as exc:
        raise UsageError(f"the fidelity probe file {path} is not valid: {exc}",
                         hint="regenerate it: python -m artemis_cli.bench.generate_suite tasks/bench") from None


# -- helpers ----------------------------------------------------------------------------------------


def _norm(s: str) -> str:
    return " ".join(s.casefold().split())


def final_context_text(ledger: TranscriptLedger, next_step: int, budget_tokens: int) -> str:
    """The text the model would see next turn, keeping only the newest ``budget`` tokens' share."""
    request = ledger.request(Tail(step=next_step, replies_in=[], observation="", image_png=None), [])
    text = "\n".join(p.text for m in request.messages for p in m.parts if p.text)
    total = estimate_tokens(request)
    if total > budget_tokens:
        keep = int(len(text) * budget_tokens / total)
        text = text[len(text) - keep:]
    return text


def screen_texts(engine: DataEngine, session_id: str) -> dict[int, str]:
    """Step number → the normalised text of the screen the agent saw at that step (its UI dump's
    element labels); dumps shared by several steps are parsed once."""
    parsed: dict[str, str] = {}
    out: dict[int, str] = {}
    for step in engine.get_steps(session_id):
        sha = step.ui_xml
        if not sha:
            continue
        if sha not in parsed:
            try:
                parsed[sha] = _norm(ui_text_from_xml(engine.blob(sha)))
            except BlobMissing:
                parsed[sha] = ""
        out[step.number] = parsed[sha]
    return out


def typed_texts(engine: DataEngine, session_id: str) -> list[str]:
    return [_norm(str((s.action_args or {}).get("text", ""))) for s in engine.get_steps(session_id)
            if s.action_type == "type_text"]


def compression_levels(engine: DataEngine, session_id: str) -> dict[str, int]:
    """How many of each F level the session made (from its recorded F operations)."""
    levels = compression_figures(engine, session_id)
    return {k: levels[k] for k in ("chunks", "eras", "periods", "snapshots")}


# -- the secondary probe: notes and typed texts -------------------------------------------------------


def planted_facts(engine: DataEngine, session_id: str) -> list[Fact]:
    facts = [Fact(n.step or 0, "note", n.key, n.content) for n in list_notes(engine, session_id)]
    for s in engine.get_steps(session_id):
        text = str((s.action_args or {}).get("text", ""))
        if s.action_type == "type_text" and len(text.strip()) >= MIN_TYPED_CHARS and REDACTED not in text:
            facts.append(Fact(s.number, "typed", s.target_resource_id or "", text))
    return facts


def notes_probe(engine: DataEngine, session_id: str, text: str) -> dict[str, int]:
    recall = Recall(engine)
    facts = planted_facts(engine, session_id)
    in_text = answered = 0
    for f in facts:
        value = _norm(f.value)
        hit_text = value in text
        if f.kind == "note":
            result = recall.recall(session_id, f.key)
        else:
            result = recall.recall(session_id, step_range=(f.step, f.step))
        in_text += hit_text
        answered += hit_text or value in _norm(result.render())
    return {"fidelity_notes_facts": len(facts), "fidelity_notes_in_text": in_text,
            "fidelity_notes_answered": answered}


# -- the headline probe ------------------------------------------------------------------------------


def ask(engine: DataEngine, session_id: str, facts: list[ProbeFact], *, context_text: str, goal: str,
        max_results: int = DEFAULT_MAX_RESULTS, max_text_tokens: int = DEFAULT_MAX_TEXT_TOKENS,
        ) -> list[dict[str, Any]]:
    """One result per fact (see the module docstring for what each field means)."""
    screens = screen_texts(engine, session_id)
    typed = typed_texts(engine, session_id)
    goal_n = _norm(goal)
    recall = Recall(engine)
    out: list[dict[str, Any]] = []
    for f in facts:
        value = _norm(f.value)
        seen = [n for n, text in sorted(screens.items()) if value in text]
        was_typed = any(value in t for t in typed)
        in_goal = value in goal_n
        in_text = value in context_text
        result = recall.recall(session_id, f.question, max_results=max_results, max_text_tokens=max_text_tokens)
        in_recall = value in _norm(result.render())
        miss = None
        if not seen:
            miss = "never on screen"
        elif was_typed:
            miss = "typed by the agent (not a seen-only fact)"
        elif in_goal:
            miss = "given in the task text"
        elif not (in_text or in_recall):
            miss = "not in the final context nor in recall's answer"
        out.append({
            **{k: v for k, v in asdict(f).items() if v is not None},
            "seen_step": seen[0] if seen else None,
            "last_seen_step": seen[-1] if seen else None,
            "seen_steps": len(seen),
            "in_text": in_text,
            "in_recall": in_recall,
            "recall_steps": result.steps,
            "answered": miss is None,
            "miss": miss,
        })
    return out


def probe(engine: DataEngine, session_id: str, ledger: TranscriptLedger | None, budget_tokens: int,
          facts: list[ProbeFact] | None = None, *, goal: str = "", max_results: int = DEFAULT_MAX_RESULTS,
          max_text_tokens: int = DEFAULT_MAX_TEXT_TOKENS) -> dict[str, Any]:
    """The probe's figures for one finished session."""
    last = engine.last_step_number(session_id)
    text = _norm(final_context_text(ledger, last + 1, budget_tokens)) if ledger is not None else ""
    results = ask(engine, session_id, facts or [], context_text=text, goal=goal, max_results=max_results,
                  max_text_tokens=max_text_tokens)
    answered = sum(1 for r in results if r["answered"])
    in_text = sum(1 for r in results if r["answered"] and r["in_text"])
    return {
        "fidelity": round(answered / len(results), 4) if results else None,
        "fidelity_facts": len(results),
        "fidelity_answered": answered,
        "fidelity_in_text": in_text,
        "fidelity_by_recall_only": sum(1 for r in results if r["answered"] and not r["in_text"]),
        "fidelity_probe": results,
        "compression_levels": compression_levels(engine, session_id),
        **notes_probe(engine, session_id, text),
    }
