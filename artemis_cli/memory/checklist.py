"""The model's plan (SPEC §10.5): a short checklist of subgoals, each ``todo`` or ``done``.

The Flash operator sets it with the ``plan`` tool (``items: [{"text": …, "status": "todo"|"done"},
…]``, the whole list each time: it replaces the previous one) and sees it recited every turn beside
its notes; the Pro planner's milestone plan is recited as the same list (:func:`checklist_lines`,
the one renderer)::

    Plan (set at step 4; keep it up to date with plan):
    - [x] Turn on Wi-Fi
    - [ ] Turn on dark theme

Bounded like notes: at most :data:`MAX_ITEMS` items of at most :data:`MAX_ITEM_CHARS` characters
(a longer list or item is refused with an error naming the limit, never cut). Each accepted
plan is one ``plan_set`` event in the DataEngine (its version, the step it was set at, the
items), so a resumed session recites the same plan: the plan of a turn is the newest one set at
an earlier step (:func:`plan_before`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from artemis_cli.engine.db import DataEngine
from artemis_cli.engine.records import EventRecord
from artemis_cli.errors import UsageError
from artemis_cli.perception.quoting import quote_untrusted

__all__ = [
    "MAX_ITEMS",
    "MAX_ITEM_CHARS",
    "PLAN_DESCRIPTION",
    "PLAN_PARAMETERS",
    "PLAN_SET_EVENT",
    "STATUSES",
    "Checklist",
    "ChecklistError",
    "PlanItem",
    "checklist_lines",
    "parse_items",
    "plan_before",
    "recited_plan",
    "save_plan",
]

#: A plan holds at most this many items, each at most MAX_ITEM_CHARS characters.
MAX_ITEMS = 12
MAX_ITEM_CHARS = 120
STATUSES = ("todo", "done")
PLAN_SET_EVENT = "plan_set"
_WS = re.compile(r"\s+")
_ITEM_KEYS = frozenset({"text", "status"})


#: The ``plan`` tool as the operator model is given it (``operators.tools``).
PLAN_DESCRIPTION = (
    "Set or update your plan: a short checklist of the subgoals of the task, each todo or done "
    "(does not end the turn). Send the whole list each time; it replaces the previous one. Mark an "
    "item done only once you saw its effect on the screen. Your plan is shown every turn."
)
PLAN_PARAMETERS: dict[str, Any] = {
    "type": "object",
    "properties": {
        "items": {
            "type": "array",
            "description": f"The subgoals in order, at most {MAX_ITEMS} (an empty list clears the plan).",
            "items": {
                "type": "object",
                "properties": {
                    "text": {"type": "string",
                             "description": f"The subgoal in a few words, at most {MAX_ITEM_CHARS} characters."},
                    "status": {"type": "string", "enum": list(STATUSES),
                               "description": "todo, or done once its effect was seen."},
                },
                "required": ["text", "status"],
            },
        },
    },
    "required": ["items"],
}


class ChecklistError(UsageError):
    """A plan the model can fix (too many items, an item too long, a bad status)."""


@dataclass(frozen=True)
class PlanItem:
    text: str
    done: bool = False

    def to_dict(self) -> dict[str, Any]:
        return {"text": self.text, "status": "done" if self.done else "todo"}


@dataclass(frozen=True)
class Checklist:
    items: tuple[PlanItem, ...]
    version: int
    step: int | None

    @property
    def done(self) -> int:
        return sum(1 for i in self.items if i.done)


def parse_items(raw: Any) -> list[PlanItem]:
    """The plan tool's ``items``, checked: a list of at most MAX_ITEMS objects, each with a
    non-empty ``text`` of at most MAX_ITEM_CHARS characters (whitespace collapsed) and a
    ``status`` of ``todo`` or ``done``; nothing else. An empty list clears the plan."""
    if not isinstance(raw, list):
        raise ChecklistError(f"`items` must be a list of {{text, status}} objects, got {type(raw).__name__}")
    if len(raw) > MAX_ITEMS:
        raise ChecklistError(f"a plan has at most {MAX_ITEMS} items (got {len(raw)}); merge or drop some")
    out: list[PlanItem] = []
    for n, item in enumerate(raw, 1):
        if not isinstance(item, dict):
            raise ChecklistError(f"item {n} must be an object with `text` and `status`, got {item!r:.60}")
        extra = sorted(str(k) for k in item if k not in _ITEM_KEYS)
        if extra:
            raise ChecklistError(f"item {n} takes no {', '.join(f'`{k[:40]}`' for k in extra[:5])}; "
                                 "an item has `text` and `status`")
        text = item.get("text")
        if not isinstance(text, str) or not _WS.sub(" ", text).strip():
            raise ChecklistError(f"item {n} needs a non-empty `text`")
        text = _WS.sub(" ", text).strip()
        if len(text) > MAX_ITEM_CHARS:
            raise ChecklistError(f"item {n} has {len(text)} characters; an item has at most {MAX_ITEM_CHARS}")
        status = item.get("status", "todo")
        if status not in STATUSES:
            raise ChecklistError(f"item {n}: `status` must be todo or done, got {status!r:.40}")
        out.append(PlanItem(text, status == "done"))
    return out


def _checklists(engine: DataEngine, session_id: str) -> list[Checklist]:
    out: list[Checklist] = []
    for ev in engine.events(session_id, kind=PLAN_SET_EVENT):
        p = ev.payload
        items = tuple(PlanItem(str(i.get("text", "")), i.get("status") == "done")
                      for i in p.get("items") or [] if isinstance(i, dict))
        out.append(Checklist(items, int(p.get("version") or len(out) + 1), ev.step))
    return out


def save_plan(engine: DataEngine, session_id: str, items: Sequence[PlanItem], step: int | None) -> Checklist:
    """Record ``items`` as the session's plan, set at ``step``; returns it with its version."""
    version = len(_checklists(engine, session_id)) + 1
    engine.record_event(EventRecord(session_id=session_id, step=step, kind=PLAN_SET_EVENT,
                                    payload={"version": version, "items": [i.to_dict() for i in items]}))
    return Checklist(tuple(items), version, step)


def plan_before(engine: DataEngine, session_id: str, step: int | None = None) -> Checklist | None:
    """The plan the turn of ``step`` recites: the newest set at an earlier step (``step`` None: the
    newest of all); None when none was set."""
    earlier = [c for c in _checklists(engine, session_id) if step is None or c.step is None or c.step < step]
    return earlier[-1] if earlier else None


def checklist_lines(heading: str, items: Iterable[tuple[str, bool]], *, quoted: bool = False) -> list[str]:
    """The one rendering of a plan: the heading, then ``- [x] text`` (done) / ``- [ ] text``
    (todo), one line each; ``quoted``: the texts are JSON-quoted (the model wrote them and may
    have copied screen text). No items: ``- (no items)``."""
    lines = [heading]
    for text, done in items:
        shown = quote_untrusted(text, MAX_ITEM_CHARS) if quoted else _WS.sub(" ", text).strip()
        lines.append(f"- [{'x' if done else ' '}] {shown}")
    if len(lines) == 1:
        lines.append("- (no items)")
    return lines


def recited_plan(plan: Checklist | None) -> str | None:
    """The Flash operator's plan as its observation recites it (None: no plan set yet)."""
    if plan is None:
        return None
    heading = f"Your plan (set at step {plan.step}, {plan.done} of {len(plan.items)} done; keep it up to date with plan):" \
        if plan.step is not None else "Your plan (keep it up to date with plan):"
    return "\n".join(checklist_lines(heading, ((i.text, i.done) for i in plan.items), quoted=True))
