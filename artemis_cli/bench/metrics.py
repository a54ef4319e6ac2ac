"""Per-task figures from a finished session, and their aggregate per memory mode (SPEC §12)."""

from __future__ import annotations

import itertools
import json
import math
from collections.abc import Sequence
from typing import Any

from artemis_cli.engine.db import DataEngine
from artemis_cli.engine.token_usage import GROUP_KEYS, TokenUsage, session_costs, sum_cost_dicts, token_usage
from artemis_cli.memory.frozen import FrozenHistory
from artemis_cli.operators.recording import action_key


def percentile(values: Sequence[float], q: float) -> float | None:
    """Nearest-rank percentile (q in 0..100); None for no values."""
    if not values:
        return None
    ordered = sorted(values)
    rank = max(1, math.ceil(q / 100 * len(ordered)))
    return float(ordered[min(rank, len(ordered)) - 1])


def mean(values: Sequence[float]) -> float | None:
    return float(sum(values) / len(values)) if values else None


def rounded(value: float | None, digits: int = 3) -> float | None:
    return None if value is None else round(value, digits)


def window_p50(per_step: dict[int, float], step: int, half: int = 5) -> float | None:
    """p50 of the per-step values of steps ``step-half .. step`` (the figure "at step N")."""
    return percentile([v for s, v in per_step.items() if step - half <= s <= step], 50)


def replay_frozen(engine: DataEngine, session_id: str) -> tuple[FrozenHistory, int]:
    """The session's F zone rebuilt from its recorded operations, and how many snapshots it took."""
    frozen = FrozenHistory()
    snapshots = 0
    for ev in engine.events(session_id, kind="ledger"):
        if ev.payload.get("op") == "frozen" and ev.payload.get("ops"):
            for op in json.loads(ev.payload["ops"]):
                if op.get("op") != "checker":  # verdict annotations do not change the structure
                    frozen.apply(op)
                snapshots += op.get("op") == "snapshot"
    return frozen, snapshots


def compression_figures(engine: DataEngine, session_id: str) -> dict[str, int]:
    """Chunks, eras, periods and snapshots from the recorded F operations; F rewrites (F changes
    that are not a pure append: each breaks the cached prefix at F) and failed chunk segments
    re-sent."""
    from artemis_cli.operators.compression import RESEND_EVENT, session_f_rewrites

    frozen, snapshots = replay_frozen(engine, session_id)
    return {"chunks": frozen.chunks_added, "eras": frozen.eras_made, "periods": frozen.periods_made,
            "snapshots": snapshots, "f_rewrites": session_f_rewrites(engine, session_id),
            "chunk_resends": len(engine.events(session_id, kind=RESEND_EVENT))}


#: The token figures of a role group in bench results (output = completion + thoughts).
TOKEN_FIELDS = ("prompt", "cached", "output")
TOKEN_GROUPS = (*GROUP_KEYS, "total")


def token_figures(usage: TokenUsage) -> dict[str, Any]:
    """``tokens`` ({operator, lens, pro_roles, asks, other, total} x {prompt, cached, output}: every
    billed attempt of the session, failed ones included) and ``lens_prompt_tokens``."""
    groups = {g.group: g.counts for g in usage.groups}
    groups["total"] = usage.total
    tokens = {name: {f: getattr(groups[name], f) for f in TOKEN_FIELDS} for name in TOKEN_GROUPS}
    return {"tokens": tokens, "lens_prompt_tokens": groups["lens"].prompt}


def session_figures(engine: DataEngine, session_id: str, budget: int) -> dict[str, Any]:
    """Token, cache, lens-latency, compression and repetition figures of one session. The
    prompt-size and cache figures are the operator's successful calls; ``tokens`` counts every
    role and attempt (``token_figures``)."""
    calls = [c for c in engine.llm_calls(session_id) if c.role == "operator" and c.status == "ok"]
    prompts = [c.prompt_tokens for c in calls]
    per_step: dict[int, int] = {}
    for c in calls:
        if c.step is not None:
            per_step[c.step] = max(per_step.get(c.step, 0), c.prompt_tokens)
    last_quarter = prompts[len(prompts) - max(1, len(prompts) // 4):] if prompts else []
    lq_mean = mean(last_quarter)
    lens = [c.latency_ms for c in engine.llm_calls(session_id) if c.role == "lens" and c.status == "ok"]
    steps = engine.get_steps(session_id)
    repeated = 0
    for prev, cur in itertools.pairwise(steps):
        same_screen = bool(cur.pre_dhash) and cur.pre_dhash == prev.pre_dhash
        if same_screen and action_key(cur.action_type, cur.action_args, cur.target) == action_key(
                prev.action_type, prev.action_args, prev.target):
            repeated += 1
    at_200 = per_step.get(200)
    return {
        "calls": len(calls),
        "prompt_tokens_p50": percentile(prompts, 50),
        "prompt_tokens_p95": percentile(prompts, 95),
        "prompt_tokens_max": max(prompts) if prompts else None,
        "prompt_tokens_last_quartile_mean": rounded(lq_mean, 1),
        "steady_state_share": rounded(lq_mean / budget if lq_mean is not None else None, 4),
        "steady_state_share_at_200": rounded(at_200 / budget, 4) if at_200 is not None else None,
        "cache_hit_call_share": rounded(sum(1 for c in calls if c.cached_tokens > 0) / len(calls)) if calls else None,
        "cached_token_share": rounded(sum(c.cached_tokens for c in calls) / max(1, sum(prompts))) if calls else None,
        "summary_ready_ms_p50": rounded(percentile(lens, 50), 1),
        "summary_ready_ms_p90": rounded(percentile(lens, 90), 1),
        "repeated_action_rate": rounded(repeated / max(1, len(steps) - 1)),
        "prompt_tokens_per_step": [[s, per_step[s]] for s in sorted(per_step)],
        **compression_figures(engine, session_id),
        **token_figures(token_usage(engine, session_id)),
        "cost": session_costs(engine, session_id).to_dict(),
    }


def aggregate(tasks: list[dict[str, Any]]) -> dict[str, Any]:
    """One mode's aggregate over its task results (mean of per-task shares; pooled token figures)."""

    def vals(key: str) -> list[float]:
        return [float(t[key]) for t in tasks if t.get(key) is not None]

    prompts = [p for t in tasks for _, p in t.get("prompt_tokens_per_step", [])]
    overhead = [v for t in tasks for v in t.get("overhead_ms", {}).values()]
    return {
        "tasks": len(tasks),
        "success_share": rounded(sum(1 for t in tasks if t["success"]) / len(tasks)) if tasks else None,
        "steps": int(sum(vals("steps"))),
        "calls": int(sum(vals("calls"))),
        "prompt_tokens_p50": percentile(prompts, 50),
        "prompt_tokens_p95": percentile(prompts, 95),
        "prompt_tokens_max": max(prompts) if prompts else None,
        "prompt_tokens_last_quartile_mean": rounded(mean(vals("prompt_tokens_last_quartile_mean")), 1),
        "steady_state_share": rounded(mean(vals("steady_state_share")), 4),
        "steady_state_share_at_200": rounded(mean(vals("steady_state_share_at_200")), 4),
        "cache_hit_call_share": rounded(mean(vals("cache_hit_call_share"))),
        "cached_token_share": rounded(mean(vals("cached_token_share"))),
        "overhead_ms_p50": rounded(percentile(overhead, 50), 2),
        "summary_ready_ms_p50": rounded(mean(vals("summary_ready_ms_p50")), 1),
        "summary_ready_ms_p90": rounded(mean(vals("summary_ready_ms_p90")), 1),
        "chunks": int(sum(vals("chunks"))),
        "eras": int(sum(vals("eras"))),
        "repeated_action_rate": rounded(mean(vals("repeated_action_rate"))),
        "fidelity_share": rounded(_pooled(tasks, "fidelity_answered")),
        "fidelity_text_share": rounded(_pooled(tasks, "fidelity_in_text")),
        "wall_s": rounded(sum(vals("wall_s")), 1),
        "cost_usd": aggregate_cost(tasks),
        **aggregate_tokens(tasks),
    }


def aggregate_cost(tasks: list[dict[str, Any]]) -> float | None:
    """A mode's cost in USD over its tasks, every role priced as each call was recorded. None when
    any task's cost is unknown or was not recorded (a result kept from an older run): a partial
    sum would look like a real one."""
    return sum_cost_dicts([t.get("cost") for t in tasks]) if tasks else None


def aggregate_tokens(tasks: list[dict[str, Any]]) -> dict[str, Any]:
    """A mode's token sums over its tasks: ``tokens`` as per task, and flat figures for the
    table and ``bench compare``. None when a task has no ``tokens`` (a result kept from an
    older run): a partial sum would look like a real one."""
    complete = bool(tasks) and all(isinstance(t.get("tokens"), dict) for t in tasks)
    tokens = ({name: {f: sum(int(t["tokens"].get(name, {}).get(f, 0)) for t in tasks) for f in TOKEN_FIELDS}
               for name in TOKEN_GROUPS} if complete else None)

    def figure(group: str, f: str) -> int | None:
        return tokens[group][f] if tokens is not None else None

    operator, lens = figure("operator", "prompt"), figure("lens", "prompt")
    return {
        "tokens": tokens,
        "operator_prompt_tokens": operator,
        "lens_prompt_tokens": lens,
        "lens_prompt_vs_operator": rounded(lens / operator, 4) if lens is not None and operator else None,
        "pro_roles_prompt_tokens": figure("pro_roles", "prompt"),
        "total_prompt_tokens": figure("total", "prompt"),
        "total_cached_tokens": figure("total", "cached"),
        "total_output_tokens": figure("total", "output"),
    }


def _pooled(tasks: list[dict[str, Any]], key: str) -> float | None:
    total = sum(int(t.get("fidelity_facts", 0)) for t in tasks)
    return sum(int(t.get(key, 0)) for t in tasks) / total if total else None
