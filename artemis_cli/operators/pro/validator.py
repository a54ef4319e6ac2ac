"""The Pro validator (SPEC §9): a structured verdict on one action from pre/post evidence.

Fallback when the model gives up: ``Verdict("unclear", False, "<why>", fallback=True)``.
``Verdict.to_dict()`` is what the loop stores in ``StepRecord.verdict``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal, get_args

from artemis_cli.models.base import Model
from artemis_cli.operators.prompts import screen_fence
from artemis_cli.perception.quoting import quote_untrusted

from .plan import Milestone
from .prompts import VALIDATOR_SYSTEM_PROMPT, history_block
from .structured import RecordCall, ReplyError, ask_structured

__all__ = ["VERDICTS", "Evidence", "Validator", "Verdict", "parse_validator_reply", "validator_request_text"]

VerdictKind = Literal["progress", "no_effect", "regress", "unclear"]
VERDICTS: tuple[str, ...] = get_args(VerdictKind)
MAX_REASON_CHARS = 400

#: Screen evidence: a summary text, or the element list (one line per element).
Evidence = str | Sequence[str]


@dataclass(frozen=True)
class Verdict:
    verdict: VerdictKind
    milestone_complete: bool
    reason: str
    fallback: bool = False

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "verdict": self.verdict,
            "milestone_complete": self.milestone_complete,
            "reason": self.reason,
        }
        if self.fallback:
            out["fallback"] = True
        return out

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Verdict:
        kind = data.get("verdict")
        return cls(
            verdict=kind if kind in VERDICTS else "unclear",
            milestone_complete=bool(data.get("milestone_complete", False)),
            reason=str(data.get("reason") or ""),
            fallback=bool(data.get("fallback", False)),
        )

    def line(self) -> str:
        """``progress — the switch reads ON`` (+ ``; milestone complete``)."""
        done = "; milestone complete" if self.milestone_complete else ""
        return f"{self.verdict} — {self.reason}{done}" if self.reason else f"{self.verdict}{done}"


def parse_validator_reply(data: Any) -> Verdict:
    if not isinstance(data, dict):
        raise ReplyError('expected an object with "verdict", "milestone_complete" and "reason"')
    kind = data.get("verdict")
    if kind not in VERDICTS:
        raise ReplyError(f'"verdict" must be one of {", ".join(VERDICTS)}; got {kind!r}')
    complete = data.get("milestone_complete", False)
    if not isinstance(complete, bool):
        raise ReplyError('"milestone_complete" must be true or false')
    reason = data.get("reason", "")
    if not isinstance(reason, str):
        raise ReplyError('"reason" must be a string')
    reason = " ".join(reason.split())[:MAX_REASON_CHARS]
    return Verdict(verdict=kind, milestone_complete=complete, reason=reason)


def _screen(evidence: Evidence) -> str:
    body = evidence if isinstance(evidence, str) else "\n".join(evidence)
    return "\n".join(screen_fence(body.strip(), "(nothing)"))


def validator_request_text(
    pre: Evidence,
    action_phrase: str,
    post: Evidence,
    milestone: Milestone | None,
    *,
    operator_note: str = "",
    history: str = "",
    intent: str | None = None,
) -> str:
    """The validator's request. ``intent`` (what the operator said the action would do) is
    model text that may quote the screen: it is JSON-quoted on its own line."""
    ms = f"{milestone.title} ({milestone.tag})" if milestone is not None else "(no milestone: judge against the goal)"
    lines = ["# MILESTONE", ms, ""]
    if history.strip():
        lines += [*history_block(history), ""]
    if operator_note.strip():
        lines += ["# OPERATOR'S NOTE (what the agent meant to do)", " ".join(operator_note.split()), ""]
    lines += [
        "# ACTION",
        " ".join(action_phrase.split()) or "(none)",
        "",
        "# EXPECTED EFFECT (the agent's stated intent)",
        quote_untrusted(intent, None) if intent else "(not stated)",
        "",
        "# BEFORE THE ACTION",
        _screen(pre),
        "",
        "# AFTER THE ACTION",
        _screen(post),
        "",
        "Judge the action.",
    ]
    return "\n".join(lines)


class Validator:
    role = "validator"

    def __init__(self, model: Model, *, record_call: RecordCall | None = None,
                 media_resolution: str | None = None) -> None:
        self.model = model
        self.record_call = record_call
        self.media_resolution = media_resolution

    def judge(
        self,
        pre: Evidence,
        action_phrase: str,
        post: Evidence,
        milestone: Milestone | None,
        *,
        operator_note: str = "",
        history: str = "",
        intent: str | None = None,
        screenshots: Sequence[tuple[str, bytes]] = (),
    ) -> Verdict:
        """``screenshots``: (label, PNG) pairs sent after the text (the step's before and after)."""
        text = validator_request_text(
            pre, action_phrase, post, milestone, operator_note=operator_note, history=history, intent=intent
        )
        outcome = ask_structured(
            self.model,
            role=self.role,
            system=VALIDATOR_SYSTEM_PROMPT,
            user_text=text,
            parse=parse_validator_reply,
            record_call=self.record_call,
            images=screenshots,
            media_resolution=self.media_resolution,
        )
        if outcome.value is None:
            return Verdict("unclear", False, f"validator gave no usable verdict: {outcome.error}", fallback=True)
        return outcome.value
