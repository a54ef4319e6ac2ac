"""The replay plan (what ``--dry-run`` prints) and what a replay reads of its source session:
whether it finished and its stored success checks."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from artemis_cli.engine.db import DataEngine
from artemis_cli.engine.records import SessionRecord, StepRecord
from artemis_cli.errors import UsageError
from artemis_cli.perception.types import Target
from artemis_cli.replay.secrets import is_secret_step

#: Actions replayed at a target found on the screen (by semantics, else at the scaled point).
POINTED = {"tap", "double_tap", "long_press"}
#: Actions replayed along the recorded line, scaled to the screen.
STROKES = {"swipe", "scroll"}


# --- the plan (also what --dry-run prints) ----------------------------------------------------


@dataclass(frozen=True)
class PlanStep:
    number: int
    action: str
    args: dict[str, Any]
    locate: str  # how the target will be found
    secret: bool

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def describe_locator(step: StepRecord, by: str) -> str:
    t = Target.from_dict(step.target)
    at = f"({step.x},{step.y})" if step.x is not None else ""
    if step.action_type in STROKES:
        return f"{step.action_type} {at}->({step.x2},{step.y2}) scaled"
    if step.action_type == "drag":
        end, to = Target.from_dict(step.target_end or {}), f"({step.x2},{step.y2})"
        if by == "coordinates" or (t.label_source == "none" and end.label_source == "none"):
            return f"drag {at}->{to} scaled"
        return f"drag by {t.describe() or at} to {end.describe() or to}; else scaled"
    if step.action_type in POINTED or (step.action_type == "type_text" and "index" in step.action_args):
        if by == "coordinates" or t.label_source == "none":
            return f"at {at} scaled" if at else "(no target)"
        bits = [f"{k}={v!r}" for k, v in (("id", t.resource_id.rsplit("/", 1)[-1]), ("desc", t.content_desc),
                                          ("text", t.text), ("class", t.class_name.rsplit(".", 1)[-1])) if v]
        return "by " + ", ".join(bits) + (f"; else at {at} scaled" if at else "")
    if step.action_type == "type_text":
        return "into the focused field"
    return "-"


def plan(engine: DataEngine, source: str, options: Any = None) -> list[PlanStep]:
    """``options``: a ``ReplayOptions`` (its ``from_step`` and ``by``); None: from step 1 by semantics."""
    from_step = getattr(options, "from_step", 1)
    by = getattr(options, "by", "semantics")
    src = engine.get_session(source)
    steps = engine.get_steps(src.id, start=from_step)
    return [
        PlanStep(s.number, s.action_type, dict(s.action_args), describe_locator(s, by), is_secret_step(s))
        for s in steps
    ]


# --- the source session and its checks -------------------------------------------------------

_UNFINISHED_STATUSES = ("interrupted", "aborted", "running")


def incomplete_reason(engine: DataEngine, source: SessionRecord) -> str | None:
    """Why ``source`` never finished (``"interrupted at step 12"``), or None when the model
    ended it with a ``finish`` step and the session ended (succeeded or failed)."""
    steps = engine.get_steps(source.id)
    last = steps[-1].number if steps else 0
    finished = bool(steps) and steps[-1].action_type == "finish"
    if source.status in _UNFINISHED_STATUSES:
        word = "still running or stopped without a trace" if source.status == "running" else source.status
        return f"{word} at step {last}" if steps else f"{word} before its first step"
    if not finished:
        stop = str((source.result or {}).get("stop_reason") or "")
        why = f", stop reason {stop}" if stop and stop != "finished" else ""
        return f"stopped at step {last} without calling finish{why}"
    return None


def success_checks(source: SessionRecord) -> list[Any]:
    """The success checks stored with ``source`` (its task as run); a UsageError when they
    cannot be read (a replay that cannot be judged does not start)."""
    from pydantic import ValidationError

    from artemis_cli.config.task import SuccessCheck

    raw = ((source.config or {}).get("task") or {}).get("success") or []
    try:
        return [SuccessCheck.model_validate(c) for c in raw]
    except ValidationError as exc:
        raise UsageError(f"session {source.id}: its stored success checks cannot be read: "
                         f"{exc.errors(include_url=False)[0]['msg']}",
                         hint="replay a session recorded with a valid task file") from None


