"""Self-healing replay: hand a diverged stretch of a replay to the operator loop, then rejoin.

At a divergence the real Flash loop (``runner.build_loop``) runs in the replay session with the
source's goal, the recording's remaining steps as the plan (``models.healer.render_plan``, in
the task text so any model reads it) and the recorded pre-step screen of the diverged step as
the target. After each model step the screen is compared with the recorded pre-step screens of
the source from the diverged step on (``match.screen_matches``); at the first that matches the
replay takes over again from that step. No rejoin within ``heal.max_steps`` model steps (or the
model finishing first) ends the heal as failed.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from artemis_cli.engine.records import StepRecord
from artemis_cli.models.healer import render_plan
from artemis_cli.operators.observe import Observation
from artemis_cli.perception.dhash import hamming
from artemis_cli.perception.elements import index_elements
from artemis_cli.perception.types import Target, UITree
from artemis_cli.replay.match import scale_point, screen_matches
from artemis_cli.replay.secrets import is_secret_step

DEFAULT_MAX_STEPS = 15
#: How many of the recorded target screen's labels the prompt names.
TARGET_LABELS = 14


def _selector(t: Target, x: int | None, y: int | None, rec_size: tuple[int, int],
              size: tuple[int, int]) -> dict[str, Any]:
    if t.content_desc:
        return {"desc": t.content_desc}
    if t.text:
        return {"text": t.text}
    if t.resource_id:
        return {"id": t.resource_id.rsplit("/", 1)[-1]}
    if x is not None and y is not None:
        sx, sy = scale_point(x, y, rec_size, size)
        return {"x": sx, "y": sy}
    return {}


def plan_action(rec: StepRecord, rec_size: tuple[int, int], size: tuple[int, int]) -> dict[str, Any] | None:
    """A recorded step as a reference action (``models.scripted`` vocabulary), None for a step
    with nothing to do on the device."""
    t, args = rec.action_type, dict(rec.action_args)
    target = Target.from_dict(rec.target)
    if t in ("tap", "double_tap", "long_press"):
        return {t: _selector(target, rec.x, rec.y, rec_size, size)}
    if t == "type_text":
        value: dict[str, Any] = {"secret": True} if is_secret_step(rec) else {"text": str(args.get("text", ""))}
        if "index" in args:
            value["into"] = _selector(target, rec.x, rec.y, rec_size, size)
        value.update({k: True for k in ("clear", "submit") if args.get(k)})
        return {"type": value}
    if t in ("swipe", "scroll") and None not in (rec.x, rec.y, rec.x2, rec.y2):
        a = scale_point(rec.x, rec.y, rec_size, size)  # type: ignore[arg-type]
        b = scale_point(rec.x2, rec.y2, rec_size, size)  # type: ignore[arg-type]
        return {"swipe": {"from": list(a), "to": list(b)}}
    if t == "press_key":
        return {"key": str(args.get("key", ""))}
    if t == "launch_app":
        return {"launch": str(args.get("app", ""))}
    if t == "wait":
        return {"wait": float(args.get("seconds", 0) or 0)}
    if t == "finish":
        return {"finish": {"success": bool(args.get("success", True)), "answer": str(args.get("answer", ""))}}
    return None


def heal_goal(goal: str, source_id: str, diverged: StepRecord, why: str, plan: list[dict[str, Any]],
              target_labels: list[str], target_app: str | None) -> str:
    """The goal the operator loop gets for a heal (the ``# TASK`` text; golden-pinned)."""
    names = ", ".join(f'"{label}"' for label in target_labels[:TARGET_LABELS]) or "(no labelled elements)"
    lines = [
        goal,
        "",
        "# HEAL",
        f"A replay of recording {source_id} diverged at its step {diverged.number} "
        f"({diverged.action_type}): {why or 'the screen did not change as recorded'}.",
        "Bring the app to where the recording expects it; the replay takes over again as soon as "
        "the screen matches one the recording saw.",
        "",
        "# TARGET SCREEN",
        f"Recorded before step {diverged.number}" + (f" in {target_app}" if target_app else "") + f": {names}",
        "",
        render_plan(plan),
    ]
    return "\n".join(lines)


@dataclass
class HealTask:
    """What ``runner.build_loop`` reads of a task."""

    goal: str
    app: str | None = None
    inject: list[Any] = field(default_factory=list)
    success: list[Any] = field(default_factory=list)


@dataclass
class HealOutcome:
    rejoin: int | None  # index into the recorded steps to continue from; None: not rejoined
    final: Observation | None
    model_steps: int
    message: str = ""


def run_heal(
    replayer: Any,
    recorded: list[StepRecord],
    index: int,
    why: str,
    first_number: int,
    on_model_step: Callable[[int], None],
    spent: int = 0,
) -> HealOutcome:
    """Heal from ``recorded[index]`` (the diverged step) on ``replayer``'s device and session;
    the loop's steps are numbered from ``first_number``."""
    from artemis_cli.runner import Callbacks, _close_background, build_loop

    r = replayer
    opts = r.opts
    max_steps = opts.heal_max_steps or getattr(getattr(opts.profile, "heal", None), "max_steps", DEFAULT_MAX_STEPS)
    budget = max_steps - spent  # model steps already spent healing this same recorded step count
    if budget <= 0:
        return HealOutcome(None, None, 0, f"step {recorded[index].number} diverged again after "
                                          f"{spent} heal steps (heal.max_steps={max_steps})")
    rec = recorded[index]
    plan = [a for s in recorded[index:] if (a := plan_action(s, r.rec_size, r.size)) is not None]
    rec_pre = r.tree_of(rec.ui_xml)
    target_labels = [e.label for e in index_elements(rec_pre) if e.label] if rec_pre is not None else []
    goal = heal_goal(r.src.goal, r.src.id, rec, why, plan, target_labels, rec.foreground_app)
    task_cfg = (r.src.config or {}).get("task") or {}
    task = HealTask(goal=goal, app=task_cfg.get("app"))
    candidates = recorded[index:]
    pre_trees: dict[int, UITree | None] = {}

    def rejoin_at(post: Observation) -> int | None:
        for offset, cand in enumerate(candidates):
            if cand.number not in pre_trees:
                pre_trees[cand.number] = r.tree_of(cand.ui_xml)
            tree = pre_trees[cand.number]
            if tree is None or (cand.foreground_app and post.foreground and cand.foreground_app != post.foreground):
                continue
            dist = hamming(cand.pre_dhash, post.dhash) if cand.pre_dhash else None
            if screen_matches(Target.from_dict(cand.target), index_elements(tree), cand.pre_dhash, dist,
                              post.elements, post.tree, recorded_size=r.rec_size, current_size=r.size,
                              recorded_tree=tree):
                return index + offset
        return None

    found: list[int] = []

    def after_step(number: int, post: Observation) -> bool:
        on_model_step(number)
        at = rejoin_at(post)
        if at is not None:
            found.append(at)
        return at is not None

    loop, service = build_loop(r.session_id, task, opts.profile, r.device, opts.model, r.engine,
                               max_steps=first_number + budget - 1, real_time=opts.real_time,
                               callbacks=Callbacks(), lease=r.lease)
    loop.after_step = after_step
    try:
        outcome = loop.run(start_step=first_number)
    finally:
        service.flush(opts.profile.memory.runtime.flush_timeout_s)
        _close_background(loop, service)
    steps = outcome.steps - first_number + 1 if outcome.steps >= first_number else 0
    if found:
        return HealOutcome(found[0], outcome.final, steps)
    if outcome.stop_reason == "finished":
        why_not = f"the model finished (success={str(bool(outcome.model_success)).lower()}) without rejoining"
    elif outcome.stop_reason == "max_steps":
        why_not = f"no recorded screen matched within heal.max_steps={max_steps} model steps"
    else:
        why_not = f"the heal stopped ({outcome.stop_reason}: {outcome.stop_message})"
    return HealOutcome(None, outcome.final, steps, why_not)
