"""The Pro task plan (SPEC §9): a checklist of milestones, each with a stable hash.

A milestone's id is created once, from its title (``sha1`` of the normalised title, 10 hex
digits), and then travels with the milestone: a revision that renames a milestone keeps the id,
so every step stamped with it stays attributed to the same milestone. A new milestone gets a
fresh id (salted when its title collides with an id already in use).

The recitation (recited in the operator's tail every turn, the same checklist as the Flash
operator's ``plan`` tool keeps) is pinned by a test::

    Plan (v3, the planner's; work on the first unchecked milestone):
    - [x] "Open Settings"
    - [ ] "Turn on Wi-Fi"
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from artemis_cli.errors import UsageError
from artemis_cli.memory.checklist import checklist_lines
from artemis_cli.perception.quoting import quote_untrusted

__all__ = [
    "ID_HEX_CHARS",
    "Milestone",
    "Plan",
    "PlanError",
    "milestone_id",
    "normalise_title",
    "revised_plan",
]

ID_HEX_CHARS = 10
MAX_TITLE_CHARS = 120
_WS = re.compile(r"\s+")
_ID_RE = re.compile(rf"^[0-9a-f]{{{ID_HEX_CHARS}}}$")


class PlanError(UsageError):
    """A plan document that cannot be read (bad JSON, wrong shape)."""


def normalise_title(title: str) -> str:
    """Case-folded, whitespace-collapsed title: what a milestone id is derived from."""
    return _WS.sub(" ", str(title)).strip().casefold()


def clean_title(title: str) -> str:
    """The title as shown: one line, at most MAX_TITLE_CHARS characters."""
    text = _WS.sub(" ", str(title)).strip()
    return text if len(text) <= MAX_TITLE_CHARS else text[:MAX_TITLE_CHARS] + "…"


def milestone_id(title: str, existing: Iterable[str] = ()) -> str:
    """A new milestone's id: sha1 of the normalised title (10 hex), salted until unique."""
    taken = set(existing)
    base = normalise_title(title)
    salt = 0
    while True:
        seed = base if salt == 0 else f"{base}#{salt}"
        mid = hashlib.sha1(seed.encode("utf-8")).hexdigest()[:ID_HEX_CHARS]
        if mid not in taken:
            return mid
        salt += 1


@dataclass(frozen=True)
class Milestone:
    id: str
    title: str
    done: bool = False

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.id, "title": self.title, "done": self.done}

    @classmethod
    def from_dict(cls, data: Any) -> Milestone:
        if not isinstance(data, dict):
            raise PlanError(f"a milestone must be an object, not {type(data).__name__}")
        mid, title = data.get("id"), data.get("title")
        if not isinstance(mid, str) or not _ID_RE.match(mid):
            raise PlanError(f"milestone id must be {ID_HEX_CHARS} lowercase hex digits, got {mid!r}")
        if not isinstance(title, str) or not title.strip():
            raise PlanError("a milestone needs a non-empty title")
        return cls(id=mid, title=title, done=bool(data.get("done", False)))

    @property
    def tag(self) -> str:
        """``m:1a2b3c4d5e``: how the milestone is named next to its title."""
        return f"m:{self.id}"


@dataclass(frozen=True)
class Plan:
    milestones: tuple[Milestone, ...] = field(default_factory=tuple)
    version: int = 1

    @classmethod
    def from_titles(cls, titles: Sequence[str], version: int = 1) -> Plan:
        out: list[Milestone] = []
        for title in titles:
            out.append(Milestone(milestone_id(title, (m.id for m in out)), clean_title(title)))
        return cls(tuple(out), version)

    def current(self) -> Milestone | None:
        """The first milestone not done (None when every milestone is done)."""
        return next((m for m in self.milestones if not m.done), None)

    def get(self, mid: str) -> Milestone | None:
        return next((m for m in self.milestones if m.id == mid), None)

    @property
    def ids(self) -> list[str]:
        return [m.id for m in self.milestones]

    @property
    def all_done(self) -> bool:
        return bool(self.milestones) and self.current() is None

    def mark_done(self, mid: str) -> Plan:
        """The plan with ``mid`` done and the version bumped (unchanged when already done/unknown)."""
        target = self.get(mid)
        if target is None or target.done:
            return self
        milestones = tuple(replace(m, done=True) if m.id == mid else m for m in self.milestones)
        return Plan(milestones, self.version + 1)

    def recitation(self) -> str:
        """The plan as the operator's observation recites it: the same checklist as the Flash
        operator's own plan (``memory.checklist.checklist_lines``), one milestone per line."""
        if not self.milestones:
            return f"Plan (v{self.version}, the planner's): (no milestones)"
        current = self.current()
        state = "all milestones done" if current is None else "work on the first unchecked milestone"
        return "\n".join(checklist_lines(f"Plan (v{self.version}, the planner's; {state}):",
                                          ((m.title, m.done) for m in self.milestones), quoted=True))

    def checklist(self) -> str:
        """The plan as one milestone per line (what the planner and the checker read)."""
        if not self.milestones:
            return f"Plan version {self.version}: (no milestones)"
        current = self.current()
        lines = [f"Plan version {self.version}:"]
        for m in self.milestones:
            box = "[x]" if m.done else ("[>]" if current is not None and m.id == current.id else "[ ]")
            lines.append(f"{box} id={m.id} {quote_untrusted(m.title, None)}")
        return "\n".join(lines)

    # -- JSON --

    def to_dict(self) -> dict[str, Any]:
        return {"version": self.version, "milestones": [m.to_dict() for m in self.milestones]}

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), ensure_ascii=False, sort_keys=True, separators=(",", ":"))

    @classmethod
    def from_dict(cls, data: Any) -> Plan:
        if not isinstance(data, dict):
            raise PlanError(f"a plan must be an object, not {type(data).__name__}")
        version = data.get("version", 1)
        if not isinstance(version, int) or isinstance(version, bool) or version < 1:
            raise PlanError(f"plan version must be a positive integer, got {version!r}")
        raw = data.get("milestones", [])
        if not isinstance(raw, list):
            raise PlanError("plan milestones must be a list")
        milestones = tuple(Milestone.from_dict(m) for m in raw)
        if len({m.id for m in milestones}) != len(milestones):
            raise PlanError("plan milestone ids must be unique")
        return cls(milestones, version)

    @classmethod
    def from_json(cls, text: str) -> Plan:
        try:
            data = json.loads(text)
        except (TypeError, json.JSONDecodeError) as exc:
            raise PlanError(f"plan JSON cannot be read: {exc}") from exc
        return cls.from_dict(data)


@dataclass(frozen=True)
class ProposedMilestone:
    """One milestone as a planner proposes it: ``id`` set when it keeps an existing milestone."""

    title: str
    id: str | None = None
    done: bool | None = None


def revised_plan(old: Plan | None, proposed: Sequence[ProposedMilestone]) -> Plan:
    """Apply a planner's proposal to ``old``: ids survive renames.

    A proposed milestone keeps its id when that id names a milestone of ``old`` (renamed or not);
    without a known id it takes the id of an unclaimed old milestone with the same normalised
    title; otherwise it gets a new id. ``done`` not given inherits the old milestone's flag.
    The version is ``old.version + 1`` (1 for a first plan).
    """
    old_by_id = {m.id: m for m in old.milestones} if old else {}
    old_by_title: dict[str, Milestone] = {}
    for m in old.milestones if old else ():
        old_by_title.setdefault(normalise_title(m.title), m)
    used: set[str] = set()
    out: list[Milestone] = []
    for p in proposed:
        title = clean_title(p.title)
        if not title:
            continue
        kept: Milestone | None = None
        if p.id and p.id in old_by_id and p.id not in used:
            kept = old_by_id[p.id]
        elif not p.id or p.id not in old_by_id:
            cand = old_by_title.get(normalise_title(title))
            if cand is not None and cand.id not in used and cand.id not in {q.id for q in proposed}:
                kept = cand
        if kept is not None:
            done = kept.done if p.done is None else p.done
            mid = kept.id
        else:
            done = bool(p.done)
            mid = milestone_id(title, used | set(old_by_id))
        used.add(mid)
        out.append(Milestone(mid, title, done))
    return Plan(tuple(out), (old.version + 1) if old else 1)
