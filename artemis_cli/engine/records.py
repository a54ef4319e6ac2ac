"""Typed records read from and written to the DataEngine.

JSON columns (``models``, ``config``, ``result``, ``action_args``, ``target``, ``target_end``,
``verdict``, ``meta``, ``payload``) are plain dicts/lists here; the engine (de)serialises them.
Timestamps are ISO-8601 UTC strings (see ``clock``). ``id`` fields are filled by the engine.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, fields
from typing import Any, Literal, get_args

from artemis_cli.models.base import CallAttempt, ModelRequest
from artemis_cli.perception.types import Target

SessionStatus = Literal["running", "succeeded", "failed", "aborted", "interrupted"]
FinalSessionStatus = Literal["succeeded", "failed", "aborted", "interrupted"]
SummaryStatus = Literal["pending", "ready", "failed", "stale"]
#: What a step's action came to (SPEC §15 "Action outcomes"): ``ok`` its intended effect was seen;
#: ``no_change`` it ran and nothing visible changed; ``failed`` it ran (or was held back) and the
#: intended effect demonstrably did not happen (typed text that did not land, a field that did not
#: take focus, an app that is not in front); ``error`` the device or the model call failed;
#: ``app_crashed`` / ``app_not_responding`` the app in front when the action ran crashed or
#: stopped responding (its logcat says so; the detail quotes the exception line or the reason);
#: ``ignored`` (older records) and ``finished`` (the ``finish`` tool).
ResultStatus = Literal["ok", "no_change", "failed", "error", "ignored", "finished", "app_crashed",
                       "app_not_responding"]
#: The statuses of an app that crashed or stopped responding.
APP_FAULT_STATUSES: tuple[str, ...] = ("app_crashed", "app_not_responding")

SESSION_STATUSES: tuple[str, ...] = get_args(SessionStatus)
FINAL_SESSION_STATUSES: tuple[str, ...] = get_args(FinalSessionStatus)
SUMMARY_STATUSES: tuple[str, ...] = get_args(SummaryStatus)
RESULT_STATUSES: tuple[str, ...] = get_args(ResultStatus)

#: Step fields that hold a blob hash (and may be filled from ``record_step(blobs=...)``).
BLOB_FIELDS: tuple[str, ...] = ("pre_screenshot", "post_screenshot", "ui_xml", "post_ui_xml", "marker")

#: What typed password text is replaced by before it is stored (SPEC §5 invariant 5).
REDACTED = "[redacted]"
#: The ``loop`` of a session an MCP client drove (``artemis mcp``).
MCP_LOOP = "mcp"
#: The loop of a session a Python program drove through ``artemis_cli.Phone`` (its calls are the steps).
LIBRARY_LOOP = "library"
#: The event of each Python API call that is not a plain step (``act``, ``tap(ai=)``, ``query``,
#: ``check``, ``sees``, ``wait_for``, ``screen``): what was asked and what came of it. An AI
#: step's names its goal, step budget and steps (``first_step``..``last_step``): the cache replays
#: them and ``sessions prompt`` re-renders their requests from it.
LIBRARY_CALL_EVENT = "library_call"


def continue_command(session_id: str, loop: str | None) -> str:
    """The command that continues a stopped session: ``artemis mcp --resume ID`` for one an MCP
    client drove (``artemis resume`` refuses those), else ``artemis resume ID``. A Python
    program's session is not continued: the program runs again (a new session)."""
    if loop == LIBRARY_LOOP:
        return "run the Python program or test again (a Phone session is not resumed)"
    return f"artemis mcp --resume {session_id}" if loop == MCP_LOOP else f"artemis resume {session_id}"


def secret_label(name: str) -> str:
    """How a step typed from the task's secret ``name`` shows the text it typed: the name, never
    the value (``operators.secrets``)."""
    return f"‹secret {name}›"


@dataclass(kw_only=True)
class SessionRecord:
    id: str = ""  # empty: create_session assigns new_session_id()
    goal: str = ""
    task_id: str | None = None
    profile: str | None = None
    loop: str | None = None
    device_serial: str | None = None
    device_kind: str | None = None
    screen_width: int | None = None
    screen_height: int | None = None
    models: dict[str, Any] = field(default_factory=dict)
    model_label: str | None = None
    status: SessionStatus = "running"
    started_at: str | None = None  # None: now
    ended_at: str | None = None
    config: dict[str, Any] = field(default_factory=dict)
    result: dict[str, Any] | None = None
    parent_session: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(kw_only=True)
class StepRecord:
    session_id: str
    number: int
    action_type: str
    id: int | None = None
    started_at: str | None = None  # None: the time of record_step
    ended_at: str | None = None  # None: the time of record_step
    offset_ms: int | None = None  # None: started_at minus the session's started_at
    thought: str | None = None
    #: What the model said it expected the action to do (the tool's ``intent`` argument); None
    #: when it gave none and for steps recorded before migration 0008.
    intent: str | None = None
    action_args: dict[str, Any] = field(default_factory=dict)
    x: int | None = None
    y: int | None = None
    x2: int | None = None
    y2: int | None = None
    target: dict[str, Any] | None = None  # Target.to_dict()
    target_end: dict[str, Any] | None = None
    # Flattened copies of ``target`` (filled by the engine from ``target`` when left None).
    label_source: str | None = None
    target_text: str | None = None
    target_resource_id: str | None = None
    target_class: str | None = None
    result_status: ResultStatus = "ok"
    result_detail: str | None = None
    #: What observably happened (``operators.outcome.ActionOutcome.to_dict``); None before
    #: migration 0006 and for steps recorded without an observation of their effect.
    outcome: dict[str, Any] | None = None
    verdict: dict[str, Any] | None = None
    pre_screenshot: str | None = None
    post_screenshot: str | None = None
    ui_xml: str | None = None
    post_ui_xml: str | None = None
    marker: str | None = None
    pre_dhash: str | None = None
    post_dhash: str | None = None
    foreground_app: str | None = None
    subgoal_hash: str | None = None
    milestone: str | None = None
    user_instruction: str | None = None
    summary: str | None = None
    summary_status: SummaryStatus = "pending"
    summary_source: str | None = None
    summary_version: int = 0
    summary_model: str | None = None
    meta: dict[str, Any] = field(default_factory=dict)

    def target_semantics(self) -> Target:
        return Target.from_dict(self.target)

    def target_end_semantics(self) -> Target | None:
        return Target.from_dict(self.target_end) if self.target_end else None

    def blob_refs(self) -> dict[str, str]:
        """Blob fields that are set: field name -> sha256."""
        refs = {name: getattr(self, name) for name in BLOB_FIELDS}
        return {name: sha for name, sha in refs.items() if sha}

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(kw_only=True)
class EventRecord:
    kind: str
    session_id: str = ""  # empty inside record_step: taken from the step
    step: int | None = None  # step number; None inside record_step: taken from the step
    payload: dict[str, Any] = field(default_factory=dict)
    id: int | None = None
    created_at: str | None = None  # None: now

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(kw_only=True)
class LlmCallRecord:
    session_id: str
    role: str
    model: str
    step: int | None = None
    prompt_tokens: int = 0
    cached_tokens: int = 0
    completion_tokens: int = 0
    thoughts_tokens: int = 0
    latency_ms: float = 0.0
    status: str = "ok"
    error_class: str | None = None
    prefix_hash: str | None = None
    request_hash: str | None = None
    attempt: int = 1
    #: The provider's wire rendering (OpenAI-compatible calls; ``CallAttempt.wire_hash``).
    wire_hash: str | None = None
    #: What the call cost in USD when it was recorded (``models.pricing``); None: unknown (no
    #: price for the model, or recorded before migration 0009).
    cost_usd: float | None = None
    #: Which price list priced it (genai-prices | profile | local | offline | unknown); None
    #: before migration 0009 or when the engine has no pricer for the session.
    price_source: str | None = None
    id: int | None = None
    created_at: str | None = None  # None: now

    @classmethod
    def from_attempt(
        cls,
        *,
        session_id: str,
        step: int | None,
        request: ModelRequest,
        attempt: CallAttempt,
        attempt_number: int = 1,
    ) -> LlmCallRecord:
        """One row per HTTP attempt of ``Model.generate`` (retries and fallbacks included)."""
        return cls(
            session_id=session_id,
            step=step,
            role=request.role,
            model=attempt.model,
            prompt_tokens=attempt.usage.prompt_tokens,
            cached_tokens=attempt.usage.cached_tokens,
            completion_tokens=attempt.usage.completion_tokens,
            thoughts_tokens=attempt.usage.thoughts_tokens,
            latency_ms=attempt.latency_ms,
            status=attempt.status,
            error_class=attempt.error_class,
            prefix_hash=request.prefix_hash(),
            request_hash=request.request_hash(),
            attempt=attempt_number,
            wire_hash=attempt.wire_hash,
        )

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def column_names(record_type: type) -> tuple[str, ...]:
    return tuple(f.name for f in fields(record_type))
