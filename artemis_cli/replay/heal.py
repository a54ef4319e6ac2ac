"""Self-healing replay: hand a diverged stretch of a replay to the operator loop, then rejoin.

At a divergence the real Flash loop (``runner.build_loop``) runs in the replay session with the
source's goal, the recording's remaining steps as the plan (``models.offline.healer.render_plan``, in
the task text so any model reads it) and the recorded pre-step screen of the diverged step as
the target. After each model step the screen is compared with the recorded pre-step screens of
the source from the diverged step on (``match.screen_matches``); at the first that matches the
replay takes over again from that step. No rejoin within ``heal.max_steps`` model steps (or the
model finishing first) ends the heal as failed.

A diverged step whose action was *done* (the screen changed, or a tap reached its element with
no window over it: its effect may be off screen) is not done again: the plan, the target and the
rejoin start after it. Of a run of recorded screens that match (taps on one screen) the rejoin
takes the one most exactly like this screen, never skipping further; with no model step it only
goes on at the next step, or passes over one recorded step whose screen is not here at all (a
pop-up dismissal when the pop-up did not show).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from artemis_cli.engine.records import StepRecord
from artemis_cli.models.offline.healer import render_plan
from artemis_cli.operators.observe import Observation
from artemis_cli.operators.secrets import step_secret, task_secrets
from artemis_cli.perception.dhash import hamming
from artemis_cli.perception.elements import index_elements
from artemis_cli.perception.types import Target, UITree
from artemis_cli.replay.match import scale_point, screen_matches
from artemis_cli.replay.secrets import is_secret_step
from artemis_cli.replay.verify import nodes_similarity, only_removed

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
    """A recorded step as a reference action (``models.offline.scripted`` vocabulary), None for a step
    with nothing to do on the device."""
    t, args = rec.action_type, dict(rec.action_args)
    target = Target.from_dict(rec.target)
    if t in ("tap", "double_tap", "long_press"):
        return {t: _selector(target, rec.x, rec.y, rec_size, size)}
    if t == "type_text":
        # a named secret by its name (the heal's loop types its value); any other password: no text
        value: dict[str, Any] = ({"secret": step_secret(rec) or True} if is_secret_step(rec)
                                 else {"text": str(args.get("text", ""))})
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
    if t == "open_url":
        return {"open_url": str(args.get("url", ""))}
    if t == "stop_app":
        return {"stop": str(args.get("package") or args.get("app", ""))}
    if t == "wait":
        return {"wait": float(args.get("seconds", 0) or 0)}
    if t == "finish":
        return {"finish": {"success": bool(args.get("success", True)), "answer": str(args.get("answer", ""))}}
    return None


def heal_goal(goal: str, source_id: str, diverged: StepRecord, why: str, plan: list[dict[str, Any]],
              target_labels: list[str], target_app: str | None, target_step: int | None = None) -> str:
    """The goal the operator loop gets for a heal (the ``# TASK`` text; golden-pinned);
    ``target_step``: the step whose recorded screen is the target (default: the diverged one)."""
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
        f"Recorded before step {target_step or diverged.number}" + (f" in {target_app}" if target_app else "") + f": {names}",
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
    #: the source task's secrets (name → description): the heal's model is told them too
    secrets: dict[str, str] = field(default_factory=dict)


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
    *,
    done: bool = False,
    current: Observation | None = None,
) -> HealOutcome:
    """Heal from ``recorded[index]`` (the diverged step) on ``replayer``'s device and session;
    the loop's steps are numbered from ``first_number``.

    ``done``: the diverged action was done and changed the screen (only not as recorded: a
    pop-up the recording had is missing, or one it did not have showed), so the plan, the target
    and the rejoin start after it -- redoing it would add a second item to a cart. ``current``:
    the screen now; when it already is a later step's recorded screen (a step that dismissed a
    pop-up that did not show this time), the replay rejoins there with no model call."""
    from artemis_cli.operators.background import STOP_BOUND_S, stop_background
    from artemis_cli.runner import Callbacks, build_loop, priced

    r = replayer
    opts = r.opts
    max_steps = opts.heal_max_steps or getattr(getattr(opts.profile, "heal", None), "max_steps", DEFAULT_MAX_STEPS)
    budget = max_steps - spent  # model steps already spent healing this same recorded step count
    if budget <= 0:
        return HealOutcome(None, None, 0, f"step {recorded[index].number} diverged again after "
                                          f"{spent} heal steps (heal.max_steps={max_steps})")
    start = index + 1 if done and index + 1 < len(recorded) else index
    rec = recorded[start]
    plan = [a for s in recorded[start:] if (a := plan_action(s, r.rec_size, r.size)) is not None]
    rec_pre = r.tree_of(rec.ui_xml)
    target_labels = [e.label for e in index_elements(rec_pre) if e.label] if rec_pre is not None else []
    goal = heal_goal(r.goal, r.src.id, recorded[index], why, plan, target_labels, rec.foreground_app,
                     target_step=rec.number)
    task_cfg = (r.src.config or {}).get("task") or {}
    task = HealTask(goal=goal, app=task_cfg.get("app"), secrets=task_secrets(task_cfg))
    # the values the replay settled before it started, by secret name
    secrets = {name: r.secrets[s.number] for s in recorded
               if (name := step_secret(s)) and s.number in r.secrets}
    pre_trees: dict[int, UITree | None] = {}

    def is_screen_of(cand: StepRecord, post: Observation, target: Target) -> bool:
        if cand.number not in pre_trees:
            pre_trees[cand.number] = r.tree_of(cand.ui_xml)
        tree = pre_trees[cand.number]
        if tree is None or (cand.foreground_app and post.foreground and cand.foreground_app != post.foreground):
            return False
        dist = hamming(cand.pre_dhash, post.dhash) if cand.pre_dhash else None
        return screen_matches(target, index_elements(tree), cand.pre_dhash, dist, post.elements, post.tree,
                              recorded_size=r.rec_size, current_size=r.size, recorded_tree=tree)

    def rejoin_at(post: Observation, first: int = start, last: int = len(recorded)) -> int | None:
        """The earliest recorded step whose pre-step screen this is -- or, of a run of them (taps
        on one screen), a later one while its screen is more exactly this one (the count the
        model's tap raised marks the step after it). Never further: skipping recorded steps
        that did something would lose their work."""
        best: tuple[float, int] | None = None
        for at in range(first, last):
            if not is_screen_of(recorded[at], post, Target.from_dict(recorded[at].target)):
                continue
            sim = nodes_similarity(pre_trees[recorded[at].number], post.tree)
            if best is not None and sim <= best[0]:
                break
            best = (sim, at)
        return best[1] if best else None

    # With no model step the replay goes on at the step to do next, or passes over that one step
    # when this is another screen altogether and the step only took something away (it dismissed
    # a pop-up that did not show this time); a step that added something (an item to a cart, with
    # a pop-up that came a step early here) did work a look at the screen cannot vouch for.
    # Further on it would skip recorded steps, and their work with them.
    if current is not None:
        at = rejoin_at(current, start, start + 1) if done else None  # not done: replaying it again is no heal
        if (at is None and not is_screen_of(rec, current, Target()) and start + 1 < len(recorded)
                and only_removed(rec_pre, r.tree_of(rec.post_ui_xml))):
            at = rejoin_at(current, start + 1, start + 2)
        if at is not None:
            return HealOutcome(at, current, 0)

    found: list[int] = []

    def after_step(number: int, post: Observation) -> bool:
        on_model_step(number)
        at = rejoin_at(post)
        if at is not None:
            found.append(at)
        return at is not None

    loop, service = build_loop(r.session_id, task, opts.profile, r.device, opts.model, r.engine,
                               max_steps=first_number + budget - 1, real_time=opts.real_time,
                               callbacks=Callbacks(), lease=r.lease, secrets=secrets)
    loop.after_step = after_step
    loop.t0 = r.t0  # the replay session's clock goes on: its T+ does not restart with the heal
    try:
        with priced(r.engine, r.session_id, opts.model, opts.profile):
            outcome = loop.run(start_step=first_number)
    except BaseException:  # a stop or an error: the summaries in flight get the short bound
        stop_background(loop, service, STOP_BOUND_S)
        raise
    stop_background(loop, service, opts.profile.memory.runtime.flush_timeout_s)
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


def healing_choice(name: str | None, prof: Any) -> tuple[str, str, bool]:
    """(model name, why, fell back) a healing replay uses with profile ``prof``: ``name`` as
    ``artemis run`` takes it; without one, the profile's default model when an API key is set,
    else the offline healer, which ``scripted`` also means here. One rule for ``replay --heal``
    and ``artemis test`` (which says it before its first case)."""
    from artemis_cli.models.registry import model_choice

    chosen, why = model_choice(name, prof)
    # without an API key the default is the heuristic baseline; ``scripted`` plays a task's
    # reference, which a heal has none of (its plan is the recording): both heal with the healer
    if (name is None and chosen == "heuristic") or chosen == "scripted":
        return "healer", f"{why}: the offline healer follows the recording as a plan; not an LLM", True
    return chosen, why, False


def healing_model(name: str | None, profile: str | None, source: Any) -> tuple[Any, Any, bool]:
    """(model, profile, fell back) a healing replay of ``source`` uses (:func:`healing_choice`;
    ``fell back`` True: callers say so)."""
    from artemis_cli.config.profile import load_profile
    from artemis_cli.models.registry import build_model

    prof = load_profile(profile or getattr(source, "profile", None) or "flash")
    chosen, _why, fell_back = healing_choice(name, prof)
    return build_model(chosen, task=None, profile=prof), prof, fell_back
