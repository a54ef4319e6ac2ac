"""The models a session's roles use beside the operator: the visual and chunk lenses, the Pro
agents (planner, validator, failure analyzer, checker), each chosen from the profile (offline
operators get the mechanical lenses and the Pro agents' documented fallbacks), and the recorder
that writes every HTTP attempt of their calls to ``llm_calls``."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from artemis_cli.engine.db import DataEngine
from artemis_cli.engine.records import LlmCallRecord
from artemis_cli.memory.jobs import defer_write
from artemis_cli.memory.lens import Lens, VisualTransitionLens
from artemis_cli.memory.mechanical import MechanicalLens
from artemis_cli.models.base import Model, ModelRequest, ModelResponse

__all__ = ["LENS_CHOICES", "NullRoleModel", "call_recorder", "make_chunk_lenses", "make_lens", "make_pro_agents"]


def call_recorder(engine: DataEngine, session_id: str) -> Callable[[ModelRequest, ModelResponse | None, Exception | None], None]:
    """Records every HTTP attempt of an auxiliary call (lens, chunk lens, planner…) in llm_calls;
    inside a background summary job, with the job's result (``memory.jobs.defer_write``: a job a
    stop cuts off records no call, and its redo on resume records it once)."""

    def record(request: ModelRequest, response: ModelResponse | None, error: Exception | None) -> None:
        attempts = response.attempts if response is not None else getattr(error, "attempts", []) or []
        defer_write(lambda: _record_attempts(engine, session_id, request, attempts))

    return record


def _record_attempts(engine: DataEngine, session_id: str, request: ModelRequest, attempts: list[Any]) -> None:
    for a in attempts:
        engine.record_llm_call(
            LlmCallRecord(session_id=session_id, step=None, role=request.role, model=a.model,
                          prompt_tokens=a.usage.prompt_tokens, cached_tokens=a.usage.cached_tokens,
                          completion_tokens=a.usage.completion_tokens, thoughts_tokens=a.usage.thoughts_tokens,
                          latency_ms=a.latency_ms, status=a.status, error_class=a.error_class,
                          prefix_hash=request.prefix_hash(), request_hash=request.request_hash(),
                          wire_hash=a.wire_hash)
        )


#: ``lenses`` of :func:`run_task`: ``auto`` = the profile's lens models when the operator is a
#: provider model (Gemini or OpenAI-compatible), mechanical offline; ``mechanical`` = the mechanical lenses whatever the operator
#: (``artemis bench``: the scripted operator plays through the fake server, whose lens answers
#: are stub text, not a model's description).
LENS_CHOICES = ("auto", "mechanical")


def make_lens(model: Model, profile: Any, engine: DataEngine, session_id: str, lenses: str = "auto") -> Lens:
    """The visual lens: the profile's visual_lens model for online runs (``role_model``),
    mechanical offline or when ``lenses`` is ``mechanical``."""
    from artemis_cli.models.registry import role_model

    lens_model = None if lenses == "mechanical" else role_model(model, profile, "visual_lens")
    if lens_model is None:
        return MechanicalLens()
    shot = profile.screenshot
    return VisualTransitionLens(lens_model, record_call=call_recorder(engine, session_id),
                                max_side=shot.max_side, media_resolution=shot.media_resolution)


def make_chunk_lenses(model: Model, profile: Any, engine: DataEngine, session_id: str,
                      lenses: str = "auto") -> tuple[Any, Any]:
    """(chunk lens, fallback): the profile's chunk_lens model and its fallback; mechanical offline
    or when ``lenses`` is ``mechanical``."""
    from artemis_cli.memory.chunk_lens import ChunkLens, MechanicalChunkLens
    from artemis_cli.models.registry import role_model

    lens_model = None if lenses == "mechanical" else role_model(model, profile, "chunk_lens")
    if lens_model is None:
        return MechanicalChunkLens(), None
    chain = list(getattr(lens_model, "chain", [lens_model.name]))
    record = call_recorder(engine, session_id)
    with_chain = getattr(lens_model, "with_chain", None)
    if with_chain is None or len(chain) < 2:
        return ChunkLens(lens_model, record_call=record), None
    return ChunkLens(with_chain(chain[:1]), record_call=record), ChunkLens(with_chain(chain[1:]), record_call=record)


class NullRoleModel:
    """Stands in for the Pro agents' model when the operator is offline: it answers nothing, so
    every agent takes its documented fallback (one milestone = the goal, verdict "unclear", no
    recovery, checker not verified) — labelled as such in each result's ``fallback`` flag."""

    offline = True
    name = "offline-roles"
    label = "no model for Pro roles (offline)"

    def generate(self, request: ModelRequest) -> ModelResponse:
        from artemis_cli.models.base import Message, Part, Usage

        return ModelResponse(Message("model", [Part(text="")]), Usage(), self.name, 0.0)


def make_pro_agents(model: Model, profile: Any, engine: DataEngine, session_id: str) -> Any:
    from artemis_cli.models.registry import role_model
    from artemis_cli.operators.pro.checker import Checker
    from artemis_cli.operators.pro.failure_analyzer import FailureAnalyzer
    from artemis_cli.operators.pro.loop import ProAgents
    from artemis_cli.operators.pro.planner import Planner
    from artemis_cli.operators.pro.validator import Validator

    planner, validator = role_model(model, profile, "planner"), role_model(model, profile, "validator")
    if planner is None or validator is None:
        null = NullRoleModel()
        return ProAgents(Planner(null), Validator(null), FailureAnalyzer(null), Checker(null))
    record = call_recorder(engine, session_id)
    media = profile.screenshot.media_resolution  # the screenshots they get are scaled like the operator's
    return ProAgents(
        Planner(planner, record_call=record, media_resolution=media),
        Validator(validator, record_call=record, media_resolution=media),
        FailureAnalyzer(planner, record_call=record),
        Checker(validator, record_call=record),
    )
