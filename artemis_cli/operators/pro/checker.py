"""The Pro checker (SPEC §9): verifies a milestone after the fact, from the history.

The loop runs ``verify`` off the operator's path (lens worker pool); its verdict annotates the
chunk that covers the milestone by a version bump. Fallback when the model gives up:
``CheckerVerdict(milestone_id, verified=False, evidence="checker gave no usable answer: …",
fallback=True)``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from artemis_cli.models.base import Model

from .plan import Milestone
from .prompts import CHECKER_SYSTEM_PROMPT, history_block
from .structured import RecordCall, ReplyError, ask_structured

__all__ = ["Checker", "CheckerVerdict", "checker_request_text", "parse_checker_reply"]

MAX_EVIDENCE_CHARS = 600


@dataclass(frozen=True)
class CheckerVerdict:
    milestone_id: str
    verified: bool
    evidence: str
    fallback: bool = False

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "milestone_id": self.milestone_id,
            "verified": self.verified,
            "evidence": self.evidence,
        }
        if self.fallback:
            out["fallback"] = True
        return out

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> CheckerVerdict:
        return cls(
            milestone_id=str(data.get("milestone_id", "")),
            verified=bool(data.get("verified", False)),
            evidence=str(data.get("evidence") or ""),
            fallback=bool(data.get("fallback", False)),
        )

    def line(self) -> str:
        """``Checker: verified (m:…) — <evidence>`` / ``Checker: not verified (m:…) — …``."""
        state = "verified" if self.verified else "not verified"
        return f"Checker: {state} (m:{self.milestone_id}) — {self.evidence}"


def parse_checker_reply(data: Any) -> tuple[bool, str]:
    if not isinstance(data, dict):
        raise ReplyError('expected an object with "verified" and "evidence"')
    verified = data.get("verified")
    if not isinstance(verified, bool):
        raise ReplyError('"verified" must be true or false')
    evidence = data.get("evidence", "")
    if not isinstance(evidence, str):
        raise ReplyError('"evidence" must be a string')
    evidence = " ".join(evidence.split())[:MAX_EVIDENCE_CHARS]
    if verified and not evidence:
        raise ReplyError('a verified milestone needs "evidence" naming the steps that show it')
    return verified, evidence


def checker_request_text(milestone: Milestone, compiled_history: str) -> str:
    return "\n".join(
        [
            "# MILESTONE TO VERIFY",
            f"{milestone.title} ({milestone.tag})",
            "",
            *history_block(compiled_history),
            "",
            "Was this milestone reached? Cite the steps.",
        ]
    )


class Checker:
    role = "checker"

    def __init__(self, model: Model, *, record_call: RecordCall | None = None) -> None:
        self.model = model
        self.record_call = record_call

    def verify(self, milestone: Milestone, compiled_history: str) -> CheckerVerdict:
        outcome = ask_structured(
            self.model,
            role=self.role,
            system=CHECKER_SYSTEM_PROMPT,
            user_text=checker_request_text(milestone, compiled_history),
            parse=parse_checker_reply,
            record_call=self.record_call,
        )
        if outcome.value is None:
            return CheckerVerdict(
                milestone.id, False, f"checker gave no usable answer: {outcome.error}", fallback=True
            )
        verified, evidence = outcome.value
        return CheckerVerdict(milestone.id, verified, evidence)
