"""Does a past turn re-render to the request that was sent? (SPEC §5 invariant 4, §10.6)

Used by ``artemis sessions prompt`` and by the crash matrix after every kill."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from types import SimpleNamespace
from typing import Any

from artemis_cli.engine.db import DataEngine
from artemis_cli.engine.records import LIBRARY_CALL_EVENT, LlmCallRecord
from artemis_cli.engine.segments import RESUME_EVENT
from artemis_cli.memory.restore import SessionSpec, rebuild_ledger, turn_requests
from artemis_cli.models.base import ModelRequest


@dataclass(frozen=True)
class TurnCheck:
    requests: list[ModelRequest]  # the turn's requests, re-rendered from the DataEngine
    rendered: list[str]  # their hashes
    recorded: list[str]  # the hashes recorded when the turn's calls were sent
    #: one per re-rendered call: call, rendered, recorded, match; and for a provider with its own
    #: wire rendering (OpenAI-compatible), wire_rendered / wire_recorded too
    rows: list[dict[str, Any]]
    match: bool  # every call matches and the counts agree


def recorded_turn_calls(engine: DataEngine, session_id: str, step: int) -> list[LlmCallRecord]:
    """The operator calls recorded for ``step``'s committed turn, one per distinct request, in order.

    A turn cut off by a crash (its process killed after a model call, before the step was
    committed) is played again by ``artemis resume``: calls made before the resume that restarted
    this turn belong to the lost attempt, not to the committed step, and are left out."""
    restarts = [e.created_at or "" for e in engine.events(session_id, kind=RESUME_EVENT)
                if (e.payload or {}).get("after_step") == step - 1]
    since = max(restarts, default="")
    recorded: list[LlmCallRecord] = []
    for call in engine.llm_calls(session_id):
        # retries repeat the same request: count each distinct request once
        if (call.step == step and call.role == "operator" and call.request_hash
                and (call.created_at or "") >= since
                and (not recorded or recorded[-1].request_hash != call.request_hash)):
            recorded.append(call)
    return recorded


def recorded_request_hashes(engine: DataEngine, session_id: str, step: int) -> list[str]:
    """The operator request hashes recorded for ``step``'s committed turn, in order."""
    return [c.request_hash or "" for c in recorded_turn_calls(engine, session_id, step)]


def wire_hasher(spec: SessionSpec) -> Callable[[ModelRequest, str | None], str] | None:
    """How the session's operator rendered its requests on the wire, when that is not a
    one-to-one map of the request (an OpenAI-compatible operator): the re-rendered body's hash
    in the version of the recorded one (``v2:``, or the unprefixed v1 of older sessions); None
    otherwise."""
    from artemis_cli.models.openai_wire import WireOptions, render_body, wire_hash_as
    from artemis_cli.models.registry import OPENAI_PREFIX, wire_options

    name = str(spec.run.get("model") or "")
    operator = spec.profile.models.operator
    if name == "profile" or (not name and operator.provider == "openai"):
        options = wire_options(operator)
    elif name.startswith(OPENAI_PREFIX):
        options = wire_options(operator) if operator.provider == "openai" else WireOptions()
    else:
        return None
    return lambda request, recorded: wire_hash_as(render_body(request, "", options), recorded)


@dataclass(frozen=True)
class AiStepSpan:
    """A Python API AI step (``phone.act``) that ran the operator loop: the steps its transcript holds."""

    goal: str
    max_steps: int
    first_step: int
    last_step: int


def ai_step_span(engine: DataEngine, session_id: str, step: int) -> AiStepSpan | None:
    """The ``phone.act`` whose model decided ``step`` (None: the session is not a Python API
    session, or ``step`` was a plain call, or a replayed one)."""
    for ev in engine.events(session_id, kind=LIBRARY_CALL_EVENT):
        p = ev.payload or {}
        if p.get("call") == "act" and p.get("max_steps") and p.get("first_step") is not None \
                and int(p["first_step"]) <= step <= int(p.get("last_step") or 0):
            return AiStepSpan(str(p.get("goal", "")), int(p["max_steps"]), int(p["first_step"]), int(p["last_step"]))
    return None


def check_turn(engine: DataEngine, session_id: str, step: int) -> TurnCheck:
    """Re-render ``step``'s requests from stored records and compare them with the recorded
    hashes: the provider-neutral request, and the wire body where the provider has its own."""
    from artemis_cli.runner import new_ledger

    spec = SessionSpec.load(engine, session_id)
    record = engine.get_step(session_id, step)
    goal, app, max_steps, first = spec.goal, spec.app, spec.max_steps, 1
    span = ai_step_span(engine, session_id, step)
    if span is not None:  # a Python API's AI step: its own goal, budget and transcript
        goal, app, max_steps, first = span.goal, None, span.max_steps, span.first_step
    ledger = new_ledger(SimpleNamespace(goal=goal, app=app), spec.profile, engine, max_steps, spec.prompt,
                        started_after=first - 1)
    rebuild_ledger(engine, session_id, ledger, before_step=step, from_step=first)
    requests = turn_requests(engine, session_id, ledger, record)
    calls = recorded_turn_calls(engine, session_id, step)
    recorded = [c.request_hash or "" for c in calls]
    rendered = [r.request_hash() for r in requests]
    hasher = wire_hasher(spec)
    rows = []
    for i, (request, digest) in enumerate(zip(requests, rendered, strict=True)):
        call = calls[i] if i < len(calls) else None
        row: dict[str, Any] = {"call": i + 1, "rendered": digest, "recorded": call.request_hash if call else None,
                               "match": call is not None and call.request_hash == digest}
        if hasher is not None and call is not None:  # every OpenAI-compatible call records its wire hash
            wire = hasher(request, call.wire_hash)
            row.update(wire_rendered=wire, wire_recorded=call.wire_hash)
            row["match"] = row["match"] and wire == call.wire_hash
        rows.append(row)
    ok = bool(rows) and len(rendered) == len(recorded) and all(r["match"] for r in rows)
    return TurnCheck(requests, rendered, recorded, rows, ok)
