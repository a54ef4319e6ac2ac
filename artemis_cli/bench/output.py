"""Bench output: the side-by-side Rich table with the goals, the SVG chart, and ``compare``."""

from __future__ import annotations

from html import escape
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

MODE_COLOURS = {"transcript": "#1f77b4", "legacy": "#ff7f0e", "naive": "#2ca02c"}

#: (key, label, goal text, fmt)
ROWS: list[tuple[str, str, str, str]] = [
    ("success_share", "success share", "", "share"),
    ("steps", "steps (all tasks)", "", "int"),
    ("calls", "operator calls", "", "int"),
    ("prompt_tokens_p50", "prompt tokens / call p50", "", "int"),
    ("prompt_tokens_p95", "prompt tokens / call p95", "", "int"),
    ("prompt_tokens_max", "prompt tokens / call max", "", "int"),
    ("prompt_tokens_last_quartile_mean", "prompt tokens, last-quartile mean", "", "int"),
    ("steady_state_share", "steady-state context / budget", "", "share"),
    ("steady_state_share_at_200", "context at step 200 / budget", "≤ 25%", "share"),
    ("share_at_200_vs_naive", "context at step 200 ÷ naive", "≤ 0.15×", "ratio"),
    ("cache_hit_call_share", "calls with cached tokens", "≥ 90%", "share"),
    ("cached_token_share", "cached-token share", "≥ 70%", "share"),
    ("overhead_ms_p50_step10", "overhead / step p50 @10 (ms)", "≤ 5 ms", "ms"),
    ("overhead_ms_p50_step1000", "overhead / step p50 @1000 (ms)", "≤ 5 ms, flat", "ms"),
    ("overhead_ms_p50", "overhead / step p50, suite (ms)", "", "ms"),
    ("summary_ready_ms_p50", "summary ready p50 (lens ms)", "", "ms"),
    ("summary_ready_ms_p90", "summary ready p90 (lens ms)", "", "ms"),
    ("chunks", "chunks", "", "int"),
    ("eras", "eras", "", "int"),
    ("repeated_action_rate", "repeated-action rate", "", "share"),
    ("recall_ms_p50_10k", "recall p50 @10k steps (ms)", "≤ 20 ms", "ms"),
    ("fidelity_share", "fidelity (context + recall)", "", "share"),
    ("fidelity_text_share", "fidelity (context only)", "", "share"),
    # every role's billed attempts, summed over the tasks (metrics.aggregate_tokens)
    ("operator_prompt_tokens", "tokens: operator prompt", "", "int"),
    ("lens_prompt_tokens", "tokens: lens prompt", "", "int"),
    ("lens_prompt_vs_operator", "lens ÷ operator prompt", "", "ratio"),
    ("pro_roles_prompt_tokens", "tokens: Pro-role prompt", "", "int"),
    ("total_prompt_tokens", "tokens: all roles prompt", "", "int"),
    ("total_cached_tokens", "tokens: all roles cached", "", "int"),
    ("total_output_tokens", "tokens: all roles output", "", "int"),
    ("cost_usd", "cost, all roles (USD)", "", "usd"),
    ("wall_s", "wall time (s)", "", "num"),
]


def _count(n: int) -> str:
    """A step count as a label: 1000, 500, 10k (whole thousands from ten thousand on)."""
    return f"{n // 1000}k" if n >= 10_000 and n % 1000 == 0 else str(n)


def _at(counts: list[Any]) -> str | None:
    """``@1000`` for the step counts the figures were measured at (``@500/@1000`` when modes or
    files differ); None when no count is known."""
    known = list(dict.fromkeys(int(c) for c in counts if isinstance(c, int | float) and c))
    return "/".join(f"@{_count(c)}" for c in known) or None


def labels(*results: dict[str, Any]) -> dict[str, str]:
    """Each figure's label, the synthetic runs' labels with the step counts they actually had
    (``--synthetic-steps``, ``--recall-steps``), not the defaults' ``@1000`` / ``@10k``."""
    named = {key: label for key, label, _goal, _kind in ROWS}
    overhead = _at([m.get("synthetic_steps") for r in results for m in r["modes"].values()])
    recall = _at([(r.get("recall") or {}).get("steps") for r in results])
    named["overhead_ms_p50_step1000"] = (f"overhead / step p50 {overhead} (ms)" if overhead
                                         else "overhead / step p50, synthetic run (ms)")
    named["recall_ms_p50_10k"] = (f"recall p50 {recall} steps (ms)" if recall
                                  else "recall p50, synthetic session (ms)")
    return named


def fmt(value: Any, kind: str) -> str:
    if value is None:
        return "—"
    if kind == "share":
        return f"{100 * float(value):.1f}%"
    if kind == "int":
        return f"{int(value):,}"
    if kind == "ratio":
        return f"{float(value):.3f}×"
    if kind == "ms":
        return f"{float(value):.2f}"
    if kind == "usd":
        from artemis_cli.models.pricing import format_usd

        return format_usd(float(value))
    return f"{float(value):g}"


def results_table(results: dict[str, Any], width: int | None = None) -> Table:
    """Every figure, one column per memory mode; laid out for ``width`` (None: as wide as it
    needs): the goal column goes first on a narrow terminal, the figure names are cut with an
    ellipsis, the modes' figures stay whole."""
    from artemis_cli.cli.tables import Column, FitTable

    modes = list(results["modes"])
    table = FitTable([Column("figure", "label", min_width=24),
                      *[Column(m, justify="right") for m in modes],
                      Column("goal (transcript)", "label", drop=1, style="dim", min_width=12)],
                     title=f"artemis bench · {results['suite']} · model {results['model']} · profile "
                           f"{results['profile']} · budget {results['context_budget_tokens']:,} tokens")
    named = labels(results)
    for key, _label, goal, kind in ROWS:
        table.add_row(named[key], *[fmt(results["modes"][m].get(key), kind) for m in modes], goal)
    return table.build(width)


#: The per-task table's columns (header, key of the drop order): on a narrow terminal the columns
#: with the highest number go first; task, mode and ok always stay.
TASK_COLUMNS: tuple[tuple[str, int], ...] = (
    ("task", 0), ("mode", 0), ("ok", 0), ("steps", 1), ("calls", 6), ("tok p50", 8), ("tok max", 3),
    ("@200", 4), ("cache hit", 5), ("cached", 7), ("lens tok", 9), ("facts", 2), ("wall s", 10),
)


def task_table(results: dict[str, Any], width: int | None = None) -> Table:
    """One row per task × mode, laid out for ``width`` (None: every column): the task id is never
    cut or wrapped; secondary figures are left out on a narrow terminal (the results JSON has
    them all)."""
    from rich.text import Text

    from artemis_cli.cli.tables import Column, FitTable

    table = FitTable([Column(col, "id" if col == "task" else "fixed", drop=drop,
                             justify="left" if col in ("task", "mode") else "right")
                      for col, drop in TASK_COLUMNS], title="per task")
    for t in results["tasks"]:
        table.add_row(t["task"], t["mode"], Text("yes") if t["success"] else Text("NO", style="red"),
                      str(t["steps"]), str(t["calls"]),
                      fmt(t.get("prompt_tokens_p50"), "int"), fmt(t.get("prompt_tokens_max"), "int"),
                      fmt(t.get("steady_state_share_at_200"), "share"), fmt(t.get("cache_hit_call_share"), "share"),
                      fmt(t.get("cached_token_share"), "share"), fmt(t.get("lens_prompt_tokens"), "int"),
                      f"{t.get('fidelity_answered', 0)}/{t.get('fidelity_facts', 0)}",
                      fmt(t.get("pair_wall_s", t.get("wall_s")), "num"))
    return table.build(width)


def print_results(results: dict[str, Any], console: Console) -> None:
    console.print(task_table(results, console.width))
    console.print(results_table(results, console.width))
    console.print("[dim]Goals are printed next to the figures; they are not assertions.[/dim]", soft_wrap=False)
    console.print("[dim]tokens: every role's billed attempts, summed over the tasks; "
                  "output = completion + thoughts.[/dim]", soft_wrap=False)


# -- SVG chart -------------------------------------------------------------------------------------


def svg_chart(results: dict[str, Any], task: str | None = None) -> str:
    """Prompt tokens per step, one line per mode, for the longest task (or ``task``)."""
    rows = results["tasks"]
    if task is None and rows:
        task = max(rows, key=lambda r: r["steps"])["task"]
    series = {r["mode"]: r["prompt_tokens_per_step"] for r in rows if r["task"] == task}
    w, h, left, bottom, top, right = 900, 480, 80, 50, 40, 150
    max_x = max((p[0] for s in series.values() for p in s), default=1)
    max_y = max((p[1] for s in series.values() for p in s), default=1)
    budget = results.get("context_budget_tokens")

    def x(v: float) -> float:
        return left + (w - left - right) * v / max(1, max_x)

    def y(v: float) -> float:
        return h - bottom - (h - bottom - top) * v / max(1, max_y)

    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" font-family="sans-serif" '
           f'font-size="12"><rect width="100%" height="100%" fill="white"/>',
           f'<text x="{left}" y="22" font-size="15">Prompt tokens per step · {escape(str(task))}</text>',
           f'<line x1="{left}" y1="{h - bottom}" x2="{w - right}" y2="{h - bottom}" stroke="black"/>',
           f'<line x1="{left}" y1="{top}" x2="{left}" y2="{h - bottom}" stroke="black"/>']
    for i in range(5):
        v = max_y * i / 4
        out.append(f'<text x="{left - 6}" y="{y(v) + 4:.1f}" text-anchor="end">{int(v):,}</text>')
        out.append(f'<line x1="{left}" y1="{y(v):.1f}" x2="{w - right}" y2="{y(v):.1f}" stroke="#eee"/>')
        s = max_x * i / 4
        out.append(f'<text x="{x(s):.1f}" y="{h - bottom + 18}" text-anchor="middle">{int(s)}</text>')
    out.append(f'<text x="{(left + w - right) / 2}" y="{h - 12}" text-anchor="middle">step</text>')
    if budget and budget <= max_y:
        out.append(f'<line x1="{left}" y1="{y(budget):.1f}" x2="{w - right}" y2="{y(budget):.1f}" '
                   f'stroke="red" stroke-dasharray="4 4"/><text x="{w - right + 4}" y="{y(budget) + 4:.1f}" '
                   f'fill="red">budget</text>')
    for i, (mode, pts) in enumerate(series.items()):
        colour = MODE_COLOURS.get(mode, "#555")
        path = " ".join(f"{x(s):.1f},{y(t):.1f}" for s, t in pts)
        out.append(f'<polyline fill="none" stroke="{colour}" stroke-width="2" points="{path}"/>')
        out.append(f'<rect x="{w - right + 10}" y="{top + 20 * i}" width="14" height="4" fill="{colour}"/>'
                   f'<text x="{w - right + 30}" y="{top + 20 * i + 6}">{escape(mode)}</text>')
    out.append("</svg>")
    return "\n".join(out)


def write_chart(results: dict[str, Any], json_path: Path) -> Path:
    path = json_path.with_suffix(".svg")
    path.write_text(svg_chart(results), encoding="utf-8")
    return path


# -- compare ------------------------------------------------------------------------------------------


def compare_table(a: dict[str, Any], b: dict[str, Any], a_name: str, b_name: str,
                  width: int | None = None) -> Table:
    """Every figure of A and B with B − A and B ÷ A, laid out for ``width`` (None: every column):
    on a narrow terminal B − A goes first, then B ÷ A; figure names are cut with an ellipsis."""
    from artemis_cli.cli.tables import Column, FitTable

    table = FitTable([Column("mode"), Column("figure", "label", min_width=20), Column("A", justify="right"),
                      Column("B", justify="right"), Column("B − A", justify="right", drop=2),
                      Column("B ÷ A", justify="right", drop=1)],
                     title=f"bench compare · A = {a_name} · B = {b_name}")
    named = labels(a, b)
    for mode in [m for m in a["modes"] if m in b["modes"]]:
        for key, _label, _goal, kind in ROWS:
            va, vb = a["modes"][mode].get(key), b["modes"][mode].get(key)
            if va is None and vb is None:
                continue
            diff = ratio = "—"
            if isinstance(va, int | float) and isinstance(vb, int | float):
                diff = f"{vb - va:+.4g}"
                ratio = f"{vb / va:.3f}×" if va else "—"
            table.add_row(mode, named[key], fmt(va, kind), fmt(vb, kind), diff, ratio)
    only = sorted(set(a["modes"]) ^ set(b["modes"]))
    if only:
        table.caption = "modes in only one file: " + ", ".join(only)
    return table.build(width)
