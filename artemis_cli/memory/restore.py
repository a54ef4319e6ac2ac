"""Rebuild a session's transcript from the DataEngine alone (SPEC §5 invariant 4, §10.6).

No model is called: the committed steps carry the text that opened each turn, the model's own
messages (thought signatures included) and the answers that closed it; the ledger's decisions
(scrub edge, chunks) were recorded as events at the turn they were taken. Replaying both in
order yields the same projection, so a resumed run's first request shares its cached prefix with
the last request before the interruption, and any past turn re-renders to its recorded hash.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from typing import Any

from artemis_cli.config.profile import Profile
from artemis_cli.engine.db import DataEngine
from artemis_cli.engine.records import StepRecord
from artemis_cli.memory.ledger import LedgerDecision, LedgerEntry, Tail, TranscriptLedger
from artemis_cli.models.base import Message, ModelRequest
from artemis_cli.operators.recording import responses_from_dicts
from artemis_cli.perception.marks import marks_from_json

LEDGER_EVENT = "ledger"


@dataclass(frozen=True)
class SessionSpec:
    """What a session was started with (its ``config``), enough to rebuild and continue it."""

    goal: str
    app: str | None
    max_steps: int
    profile: Profile
    run: dict[str, Any]
    task: dict[str, Any]
    #: the S zone the session was sent (``runner.session_prompt``); None before sessions stored it
    prompt: dict[str, Any] | None = None

    @classmethod
    def load(cls, engine: DataEngine, session_id: str) -> SessionSpec:
        rec = engine.get_session(session_id)
        config = rec.config or {}
        task = config.get("task") or {}
        return cls(
            goal=rec.goal or task.get("goal", ""),
            app=task.get("app"),
            max_steps=int(config.get("max_steps") or task.get("max_steps") or 30),
            profile=Profile.model_validate(config.get("profile") or {"name": "flash", "loop": "flash"}),
            run=config.get("run") or {},
            task=task,
            prompt=_stored_prompt(config.get("prompt")),
        )


def _stored_prompt(raw: Any) -> dict[str, Any] | None:
    """The stored S zone when it has the shape ``runner.session_prompt`` writes, else None."""
    if not isinstance(raw, dict) or not isinstance(raw.get("system"), str) or not isinstance(raw.get("tools"), list):
        return None
    tools = raw["tools"]
    ok = all(isinstance(t, dict) and isinstance(t.get("name"), str) and isinstance(t.get("description"), str)
             and isinstance(t.get("parameters"), dict) for t in tools)
    return raw if ok else None


def _messages(engine: DataEngine, dicts: list[dict[str, Any]]) -> list[Message]:
    shas = {p["image_sha256"] for m in dicts for p in m.get("parts", []) if "image_sha256" in p}
    images = {sha: engine.blob(sha) for sha in shas}
    return [Message.from_dict(m, images) for m in dicts]


def entry_from_step(engine: DataEngine, step: StepRecord) -> LedgerEntry:
    meta = step.meta or {}
    return LedgerEntry(
        step=step.number,
        observation=meta.get("observation", ""),
        image_sha=step.pre_screenshot,
        replies_in=responses_from_dicts(meta.get("replies_in")),
        turn=_messages(engine, meta.get("messages") or []),
        marks=marks_from_json(meta.get("marks")),
    )


def decisions_by_turn(engine: DataEngine, session_id: str) -> dict[int, list[LedgerDecision]]:
    out: dict[int, list[LedgerDecision]] = defaultdict(list)
    for ev in engine.events(session_id, kind=LEDGER_EVENT):
        out[int(ev.step or 0)].append(LedgerDecision.from_dict(ev.payload))
    return out


def rebuild_ledger(engine: DataEngine, session_id: str, ledger: TranscriptLedger, *, before_step: int | None = None,
                   from_step: int = 1) -> None:
    """Replay steps ``from_step`` to ``< before_step`` (all when None) and the decisions taken up
    to that turn (``from_step``: where a Python API's AI step started its own transcript)."""
    decisions = decisions_by_turn(engine, session_id)
    steps = engine.get_steps(session_id, start=from_step)
    last = before_step if before_step is not None else (steps[-1].number + 1 if steps else 1)
    for step in steps:
        if step.number >= last:
            break
        for d in decisions.get(step.number, []):
            ledger.apply(d)
        ledger.commit(entry_from_step(engine, step))
    for d in decisions.get(last, []):
        ledger.apply(d)


def turn_requests(engine: DataEngine, session_id: str, ledger: TranscriptLedger, step: StepRecord) -> list[ModelRequest]:
    """Every operator request of ``step``'s turn, re-rendered (one per model call in the turn)."""
    meta = step.meta or {}
    tail = Tail(
        step=step.number,
        replies_in=responses_from_dicts(meta.get("replies_in")),
        observation=meta.get("observation", ""),
        image_png=engine.blob(step.pre_screenshot) if step.pre_screenshot else None,
        marks=marks_from_json(meta.get("marks")),
    )
    messages = _messages(engine, meta.get("messages") or [])
    requests = []
    for i, m in enumerate(messages):
        if m.role == "model":
            requests.append(ledger.request(tail, messages[:i]))
    return requests
