"""The words of a replay's verdict (``ReplayResult.status`` and ``message``) once its steps are
replayed and the task's success checks ran: divergence first, then the checks (with none, the
replayed finish), a heal's outcome, and what the source session was."""

from __future__ import annotations

from collections.abc import Callable

from artemis_cli.engine.records import StepRecord
from artemis_cli.operators.checks import CheckResult, Finish
from artemis_cli.plural import counted
from artemis_cli.replay.kinds import counts_phrase
from artemis_cli.replay.results import ReplayOptions, ReplayResult


def word_verdict(result: ReplayResult, recorded: list[StepRecord], opts: ReplayOptions, *, has_checks: bool,
                 finish: Finish | None, step: Callable[[int], str], replay_id: str, source_id: str,
                 incomplete: str | None) -> None:
    """Set ``result``'s status and message. ``has_checks``: the task has success checks (their
    results are in ``result.checks``); ``finish``: the replayed finish; ``step``: how a recorded
    step number is named; ``replay_id``: the session ``artemis replay`` takes to replay it again
    (the user's recording when a baseline stood in); ``source_id``: the session replayed;
    ``incomplete``: why that session never finished."""
    counts = counts_phrase(result.counts(), ("replayed", "retargeted"))
    if opts.heal:
        counts = f"{counts_phrase(result.counts(), ('replayed', 'retargeted', 'healed'))}; {counted(result.model_calls, 'model call')}"
    if result.heal and result.first_divergence is not None and result.message:
        ok, verdict = False, result.message  # a heal that did not rejoin says why
    elif result.heal and result.first_divergence is not None and result.finished:
        ok = all(c.passed for c in result.checks) if has_checks else bool(finish and finish.model_success)
        verdict = f"healed from {step(result.first_divergence)}; " + (
            checks_phrase(result.checks) if has_checks else f"the replayed finish said success={str(ok).lower()}")
        verdict = f"{counted(len(result.steps), 'step')} ({counts}); {verdict}"
    elif result.first_divergence is not None:
        ok = False
        verdict = f"diverged at {step(result.first_divergence)}" + (
            f" ({result.count('diverged')} diverged steps in all)" if opts.continue_on_divergence else "")
        if result.checks:
            verdict += "; " + checks_phrase(result.checks)
        if not opts.heal:
            verdict += (f"; `artemis replay {replay_id} --heal` hands a diverged stretch "
                        "to a model and rejoins the recording")
    elif has_checks:
        ok = all(c.passed for c in result.checks)
        verdict = checks_phrase(result.checks)
    elif finish is not None:
        ok = bool(finish.model_success)
        verdict = (f"the task has no success checks; the replayed finish said "
                   f"success={str(ok).lower()}")
    else:
        ok = False
        verdict = "the task has no success checks and no finish step was replayed: nothing shows the goal was met"
    result.status = "succeeded" if ok else "failed"
    first, last = recorded[0].number, recorded[-1].number
    if incomplete is not None:
        which = f"its {len(recorded)} recorded steps" if first == 1 else f"its recorded steps {first}-{last}"
        head = f"source session {source_id} was incomplete ({incomplete}): replayed {which}"
        if result.first_divergence is None:
            head += f" ({counts})"
        result.message = f"{head}; {verdict}"
    elif result.first_divergence is not None:
        result.message = verdict
    else:
        result.message = f"all {counted(len(result.steps), 'step')} replayed: {counts}; {verdict}"


def checks_phrase(checks: list[CheckResult]) -> str:
    failed = [c.check for c in checks if not c.passed]
    if not failed:
        return f"all {len(checks)} success checks passed" if len(checks) > 1 else "the success check passed"
    return "success checks failed: " + "; ".join(failed)
