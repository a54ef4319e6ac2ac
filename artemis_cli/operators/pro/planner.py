"""The Pro planner (SPEC §9): writes and revises the milestone checklist.

``plan`` writes the first plan (fallback when the model gives up: one milestone, the goal
itself); ``revise`` returns the next version with ids preserved for kept or renamed milestones
(fallback: the old plan, unchanged, same version). ``last_outcome`` tells how the last call went.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from artemis_cli.models.base import Model

from .plan import MAX_TITLE_CHARS, Plan, ProposedMilestone, revised_plan
from .prompts import PLANNER_SYSTEM_PROMPT, history_block
from .structured import Outcome, RecordCall, ReplyError, ask_structured

__all__ = ["MAX_MILESTONES", "Planner", "parse_planner_reply", "planner_request_text"]

MAX_MILESTONES = 12


def parse_planner_reply(data: Any) -> list[ProposedMilestone]:
    if not isinstance(data, dict) or not isinstance(data.get("milestones"), list):
        raise ReplyError('expected an object with a "milestones" list')
    out: list[ProposedMilestone] = []
    for i, item in enumerate(data["milestones"]):
        if isinstance(item, str):
            item = {"title": item}
        if not isinstance(item, dict):
            raise ReplyError(f"milestones[{i}] must be an object with a title")
        title = item.get("title")
        if not isinstance(title, str) or not title.strip():
            raise ReplyError(f"milestones[{i}] needs a non-empty string title")
        mid = item.get("id")
        if mid is not None and not isinstance(mid, str):
            raise ReplyError(f"milestones[{i}].id must be a string when given")
        done = item.get("done")
        if done is not None and not isinstance(done, bool):
            raise ReplyError(f"milestones[{i}].done must be true or false when given")
        mid = mid.strip().removeprefix("m:") if mid else None
        out.append(ProposedMilestone(title=title[: MAX_TITLE_CHARS * 2], id=mid or None, done=done))
    if not out:
        raise ReplyError("the plan needs at least one milestone")
    if len(out) > MAX_MILESTONES:
        raise ReplyError(f"the plan has {len(out)} milestones; give at most {MAX_MILESTONES}")
    return out


def planner_request_text(goal: str, compiled_history: str, plan: Plan | None, reason: str | None,
                         secrets: Mapping[str, str] | None = None) -> str:
    """The planner's request; ``secrets``: the task's secrets by name and description (never a
    value), so a plan can say "log in" knowing the agent can type the password."""
    lines = ["# GOAL", goal.strip(), ""]
    if secrets:
        lines += ["# SECRETS", "The agent types these by name (type_text secret=NAME); their values are never shown:",
                  *(f"- {name}: {text}" for name, text in secrets.items()), ""]
    if plan is not None:
        lines += ["# CURRENT PLAN", plan.checklist(), "", "# WHY A REVISION IS NEEDED", (reason or "").strip(), ""]
    lines += [*history_block(compiled_history), ""]
    lines.append("Revise the plan." if plan is not None else "Write the plan.")
    return "\n".join(lines)


class Planner:
    role = "planner"

    def __init__(self, model: Model, *, record_call: RecordCall | None = None,
                 media_resolution: str | None = None) -> None:
        self.model = model
        self.record_call = record_call
        self.media_resolution = media_resolution
        self.last_outcome: Outcome[list[ProposedMilestone]] | None = None

    def _ask(self, text: str, screenshots: Sequence[tuple[str, bytes]]) -> Outcome[list[ProposedMilestone]]:
        outcome = ask_structured(
            self.model,
            role=self.role,
            system=PLANNER_SYSTEM_PROMPT,
            user_text=text,
            parse=parse_planner_reply,
            record_call=self.record_call,
            images=screenshots,
            media_resolution=self.media_resolution,
        )
        self.last_outcome = outcome
        return outcome

    def plan(self, goal: str, compiled_history: str = "", screenshots: Sequence[tuple[str, bytes]] = (),
             secrets: Mapping[str, str] | None = None) -> Plan:
        """Version 1 of the plan. Fallback: a single milestone, the goal. ``screenshots``: (label,
        PNG) pairs sent after the text (the current screen); ``secrets``: names and descriptions."""
        outcome = self._ask(planner_request_text(goal, compiled_history, None, None, secrets), screenshots)
        if outcome.value is None:
            return Plan.from_titles([goal or "Complete the task"])
        # Ids the model invents for a first plan mean nothing: every milestone is new.
        proposed = [ProposedMilestone(p.title, None, p.done) for p in outcome.value]
        return revised_plan(None, proposed)

    def revise(self, plan: Plan, goal: str, compiled_history: str, reason: str,
               screenshots: Sequence[tuple[str, bytes]] = (), secrets: Mapping[str, str] | None = None) -> Plan:
        """The next version (ids kept for kept/renamed milestones). Fallback: ``plan`` unchanged."""
        outcome = self._ask(planner_request_text(goal, compiled_history, plan, reason, secrets), screenshots)
        if outcome.value is None:
            return plan
        return revised_plan(plan, outcome.value)
