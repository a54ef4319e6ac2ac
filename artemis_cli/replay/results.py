"""What a replay is asked and what it answers: ``ReplayOptions``, ``ReplayStepResult`` per step and
``ReplayResult`` (its ``to_dict`` is ``artemis replay --json``). The replay itself is
``replay.replayer``."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any, Literal

from artemis_cli.operators.checks import CheckResult
from artemis_cli.replay.kinds import KINDS, ReplayKind
from artemis_cli.replay.secrets import SecretSource

By = Literal["semantics", "coordinates"]
BY_CHOICES: tuple[str, ...] = ("semantics", "coordinates")
REPLAY_MODEL_LABEL = "replay (no model)"


@dataclass
class ReplayOptions:
    by: By = "semantics"
    from_step: int = 1
    continue_on_divergence: bool = False
    real_time: bool = False  # honour recorded waits and observation back-offs
    secret: SecretSource | None = None  # default: environment, then a prompt on a terminal
    #: at a divergence hand the stretch to the operator loop and rejoin the recording (replay.heal)
    heal: bool = False
    model: Any = None  # the healing model (default: the offline healer)
    profile: Any = None  # its profile (default: flash); ``heal.max_steps`` bounds each heal
    heal_max_steps: int | None = None  # overrides the profile's
    use_baseline: bool = True  # a recording with a promoted baseline replays the baseline


@dataclass
class ReplayStepResult:
    number: int  # step number in the replay session
    source_step: int
    action: str
    status: ReplayKind  # replay.kinds: replayed | retargeted | healed | diverged
    how: str  # semantics | coordinates | none
    detail: str = ""
    x: int | None = None
    y: int | None = None
    score: int | None = None
    dhash_distance: int | None = None
    change_overlap: float | None = None
    #: the action was done and changed the screen (a heal then goes on after it, not redoing it)
    took_effect: bool = False

    def to_dict(self) -> dict[str, Any]:
        out = asdict(self)
        del out["took_effect"]
        return out


@dataclass
class ReplayResult:
    session_id: str
    source_session: str
    by: str
    status: str  # succeeded | failed | interrupted
    steps: list[ReplayStepResult] = field(default_factory=list)
    first_divergence: int | None = None  # source step number
    message: str = ""
    checks: list[CheckResult] = field(default_factory=list)
    #: why the source session never finished ("interrupted at step 12"), None when it did
    source_incomplete: str | None = None
    finished: bool = False  # a recorded finish step was replayed
    answer: str = ""  # its answer
    heal: bool = False
    model_calls: int = 0
    model_label: str = ""
    baseline_of: str | None = None  # the recording whose promoted baseline this replayed
    last_matched: int | None = None  # the last source step replayed without diverging

    def counts(self) -> dict[str, int]:
        return {kind: self.count(kind) for kind in KINDS}

    def count(self, status: str) -> int:
        return sum(1 for s in self.steps if s.status == status)

    @property
    def exit_code(self) -> int:
        return {"succeeded": 0, "interrupted": 3}.get(self.status, 1)

    def to_dict(self) -> dict[str, Any]:
        return {
            "session_id": self.session_id,
            "source_session": self.source_session,
            "by": self.by,
            "status": self.status,
            "success": self.status == "succeeded",
            "message": self.message,
            "source_complete": self.source_incomplete is None,
            "source_incomplete": self.source_incomplete,
            "finished": self.finished,
            "answer": self.answer,
            "checks": [c.to_dict() for c in self.checks],
            "first_divergence": self.first_divergence,
            **self.counts(),  # replayed, retargeted, healed, diverged
            "model_calls": self.model_calls,
            "heal": self.heal,
            "model_label": self.model_label,
            "baseline_of": self.baseline_of,
            "last_matched": self.last_matched,
            "steps": [s.to_dict() for s in self.steps],
        }
