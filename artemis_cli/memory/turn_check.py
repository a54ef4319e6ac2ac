"""Does a past turn re-render to the request that was sent? (SPEC §5 invariant 4, §10.6)

Used by ``artemis sessions prompt`` and by the crash matrix after every kill."""

from __future__ import annotations

from dataclasses import dataclass
from types import SimpleNamespace
from typing import Any

from artemis_cli.engine.db import DataEngine
from artemis_cli.memory.restore import SessionSpec, rebuild_ledger, turn_requests
from artemis_cli.models.base import ModelRequest


@dataclass(frozen=True)
class TurnCheck:
    requests: list[ModelRequest]  # the turn's requests, re-rendered from the DataEngine
    rendered: list[str]  # their hashes
    recorded: list[str]  # the hashes recorded when the turn's calls were sent
    rows: list[dict[str, Any]]  # one per re-rendered call: call, rendered, recorded, match
    match: bool  # every call matches and the counts agree


def recorded_request_hashes(engine: DataEngine, session_id: str, step: int) -> list[str]:
    """The operator request hashes recorded for ``step``'s committed turn, in order.

    A turn cut off by a crash (its process killed after a model call, before the step was
    committed) is played again by ``artemis resume``: calls made before the resume that restarted
    this turn belong to the lost attempt, not to the committed step, and are left out."""
    restarts = [e.created_at or "" for e in engine.events(session_id, kind="resume")
                if (e.payload or {}).get("after_step") == step - 1]
    since = max(restarts, default="")
    recorded: list[str] = []
    for call in engine.llm_calls(session_id):
        # retries repeat the same request: count each distinct request once
        if (call.step == step and call.role == "operator" and call.request_hash
                and (call.created_at or "") >= since
                and (not recorded or recorded[-1] != call.request_hash)):
            recorded.append(call.request_hash)
    return recorded


def check_turn(engine: DataEngine, session_id: str, step: int) -> TurnCheck:
    """Re-render ``step``'s requests from stored records and compare them with the recorded hashes."""
    from artemis_cli.runner import new_ledger

    spec = SessionSpec.load(engine, session_id)
    record = engine.get_step(session_id, step)
    ledger = new_ledger(SimpleNamespace(goal=spec.goal, app=spec.app), spec.profile, engine, spec.max_steps)
    rebuild_ledger(engine, session_id, ledger, before_step=step)
    requests = turn_requests(engine, session_id, ledger, record)
    recorded = recorded_request_hashes(engine, session_id, step)
    rendered = [r.request_hash() for r in requests]
    rows = [
        {"call": i + 1, "rendered": h, "recorded": recorded[i] if i < len(recorded) else None,
         "match": i < len(recorded) and recorded[i] == h}
        for i, h in enumerate(rendered)
    ]
    ok = bool(rows) and len(rendered) == len(recorded) and all(r["match"] for r in rows)
    return TurnCheck(requests, rendered, recorded, rows, ok)


