"""Where a recorded step is done on the screen a replay shows now: its target found by its
semantics (``match``), else at its recorded coordinates scaled to this screen; a stroke along the
recorded line, scaled; and the action to send there (``Planner.plan``)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from artemis_cli.engine.records import StepRecord
from artemis_cli.operators.act import REDACTED, PlannedAction
from artemis_cli.operators.observe import Observation
from artemis_cli.perception.hittest import hit_test
from artemis_cli.perception.types import Target, UITree
from artemis_cli.replay.match import TargetMatch, contradicts, find_by_semantics, scale_point
from artemis_cli.replay.secrets import is_secret_step
from artemis_cli.replay.source import POINTED, STROKES
from artemis_cli.replay.verify import element_at


@dataclass
class Located:
    match: TargetMatch | None
    detail: str = ""


@dataclass(frozen=True)
class Planner:
    """Plans recorded steps recorded on a ``rec_size`` screen for a ``size`` screen."""

    by: str  # "semantics" or "coordinates" (``ReplayOptions.by``)
    rec_size: tuple[int, int]
    size: tuple[int, int]
    secret: Callable[[StepRecord], str]  # the password text a secret step types

    def locate(self, rec: StepRecord, obs: Observation, rec_pre: UITree | None) -> Located:
        target = Target.from_dict(rec.target)
        if self.by == "semantics":
            found = find_by_semantics(target, obs.elements, obs.tree, recorded_tree=rec_pre,
                                      recorded_size=self.rec_size, current_size=self.size)
            if found is not None:
                return Located(found)
        if rec.x is None or rec.y is None:
            return Located(None, "the recorded target is not on this screen and the step has no coordinates")
        x, y = scale_point(rec.x, rec.y, self.rec_size, self.size)
        at = hit_test(obs.tree, x, y)
        if self.by == "semantics" and contradicts(target, at):
            return Located(None, f"the recorded target {target.describe(40)} is not on this screen and its recorded "
                                 f"point now holds {at.describe(40)}: not tapped there")
        note = "" if self.by == "coordinates" or target.label_source == "none" else \
            "target not found by semantics; used the recorded coordinates"
        return Located(TargetMatch(element_at(obs.elements, x, y), at, x, y, "coordinates"), note)

    def blind(self, rec: StepRecord, match: TargetMatch | None) -> bool:
        """A semantics replay fell back to a labelled target's recorded point."""
        return (self.by == "semantics" and match is not None and match.how == "coordinates"
                and rec.action_type in POINTED and Target.from_dict(rec.target).label_source != "none")

    def drop_point(self, rec: StepRecord, obs: Observation, rec_pre: UITree | None) -> tuple[int, int, Target]:
        """Where a replayed drag ends: the recorded end's element by semantics, else its scaled point."""
        end = Target.from_dict(rec.target_end) if rec.target_end else None
        if self.by == "semantics" and end is not None and end.label_source != "none":
            found = find_by_semantics(end, obs.elements, obs.tree, recorded_tree=rec_pre,
                                      recorded_size=self.rec_size, current_size=self.size)
            if found is not None:
                return found.x, found.y, found.target
        x2, y2 = scale_point(rec.x2, rec.y2, self.rec_size, self.size)  # type: ignore[arg-type]
        return x2, y2, hit_test(obs.tree, x2, y2)

    def plan(self, rec: StepRecord, obs: Observation, rec_pre: UITree | None) -> tuple[PlannedAction | None, Located]:
        """The action to send for ``rec`` on the screen ``obs`` (None when its target is not
        there: the ``Located``'s detail says why); ``rec_pre`` is the recorded screen before it."""
        t = rec.action_type
        args = dict(rec.action_args)
        if t in POINTED or (t == "type_text" and "index" in args):
            loc = self.locate(rec, obs, rec_pre)
            m = loc.match
            if m is None:
                return None, loc
            action = PlannedAction(t, args, m.x, m.y, target=m.target, element=m.element)
            if t == "type_text" and m.element is None:
                # nothing to tap at the scaled point: type into whatever has focus
                action.args.pop("index", None)
        elif t == "type_text":
            focused = obs.focused_element()
            target = Target()
            fx = fy = None
            if focused is not None:
                fx, fy = focused.center
                target = hit_test(obs.tree, fx, fy)
            action = PlannedAction(t, args, fx, fy, target=target, element=focused)
            loc = Located(None)
        elif t == "drag":
            if None in (rec.x, rec.y, rec.x2, rec.y2):
                return None, Located(None, "the recorded drag has no coordinates")
            loc = self.locate(rec, obs, rec_pre)
            if (m := loc.match) is None:
                return None, loc
            x2, y2, end = self.drop_point(rec, obs, rec_pre)
            action = PlannedAction(t, args, m.x, m.y, x2, y2, target=m.target, target_end=end, element=m.element)
        elif t in STROKES:
            if None in (rec.x, rec.y, rec.x2, rec.y2):
                return None, Located(None, f"the recorded {t} has no coordinates")
            x1, y1 = scale_point(rec.x, rec.y, self.rec_size, self.size)  # type: ignore[arg-type]
            x2, y2 = scale_point(rec.x2, rec.y2, self.rec_size, self.size)  # type: ignore[arg-type]
            action = PlannedAction(t, args, x1, y1, x2, y2, target=hit_test(obs.tree, x1, y1),
                                   target_end=hit_test(obs.tree, x2, y2),
                                   pre_dhash=obs.dhash if args.get("to_end") else None)
            loc = Located(TargetMatch(None, action.target, x1, y1, "coordinates"))
        else:
            action = PlannedAction(t, args)
            loc = Located(None)
        if t == "type_text" and is_secret_step(rec):
            action.secret = self.secret(rec)
            action.args["text"] = REDACTED
            action.args["redacted"] = True
        return action, loc
