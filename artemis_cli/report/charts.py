"""Per-step figures of the operator's calls and their inline SVG charts (no JS library).

Context size is the operator's prompt tokens at each step (its largest answered attempt), drawn
with the transcript budget and its soft and hard thresholds when they fall in the chart's range
(a budget far above the data is named in the legend instead of flattening the line). Cached share
is cached / prompt tokens per step. Charts appear only when there is data: an offline model's
session, whose calls carry no tokens, has none.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from artemis_cli.engine.db import DataEngine
from artemis_cli.engine.records import SessionRecord
from artemis_cli.report.summary import e

WIDTH = 1000
LEFT = 64
RIGHT = 12


@dataclass(frozen=True)
class StepTokens:
    prompt: int  # largest answered operator attempt at the step
    cached: int  # its cached tokens
    calls: int

    @property
    def share(self) -> float | None:
        return self.cached / self.prompt if self.prompt else None


def step_tokens(engine: DataEngine, session_id: str) -> dict[int, StepTokens]:
    """Operator prompt / cached tokens per step, one grouped query."""
    with engine.lock:
        rows = list(engine.db.query(
            """
            SELECT step, COUNT(*) AS calls, MAX(prompt_tokens) AS prompt,
                   MAX(cached_tokens) AS cached
            FROM llm_calls
            WHERE session_id = ? AND role = 'operator' AND status = 'ok' AND step IS NOT NULL
            GROUP BY step
            """,
            [session_id],
        ))
    return {int(r["step"]): StepTokens(int(r["prompt"] or 0), int(r["cached"] or 0), int(r["calls"])) for r in rows}


def budgets(rec: SessionRecord) -> dict[str, int]:
    """Transcript budget and its soft / hard thresholds from the session's profile (if stored)."""
    try:
        transcript: dict[str, Any] = rec.config["profile"]["memory"]["transcript"]
        budget = int(transcript["context_budget_tokens"])
        return {"budget": budget, "soft": round(budget * float(transcript.get("soft_ratio", 0.7))),
                "hard": round(budget * float(transcript.get("hard_ratio", 0.9)))}
    except (KeyError, TypeError, ValueError):
        return {}


def _nice(peak: float) -> float:
    """A round axis maximum at or above ``peak``."""
    if peak <= 0:
        return 1.0
    scale = 10 ** (len(str(int(peak))) - 1)
    for m in (1, 1.5, 2, 2.5, 3, 4, 5, 6, 8, 10):
        if m * scale >= peak:
            return m * scale
    return 10.0 * scale


def _polyline(points: list[tuple[float, float]], cls: str) -> str:
    pts = " ".join(f"{x:.1f},{y:.1f}" for x, y in points)
    return f"<polyline class='{cls}' points='{pts}'/>"


def _frame(kind: str, label: str, height: int, first: int, last: int, top: float, unit: str) -> list[str]:
    plot = WIDTH - LEFT - RIGHT
    bottom = height - 24
    parts = [
        f"<svg class='chart' id='{kind}-chart' xmlns='http://www.w3.org/2000/svg' viewBox='0 0 {WIDTH} {height}' "
        f"role='img' aria-label='{e(label)}' data-left='{LEFT}' data-plot='{plot}' data-first='{first}' "
        f"data-last='{last}'>",
        f"<text x='{LEFT}' y='14' class='axis'>{e(label)}</text>",
    ]
    for frac in (0, 0.5, 1):
        y = bottom - frac * (bottom - 24)
        value = top * frac
        text = f"{value:.0f}%" if unit == "%" else f"{value:,.0f}"
        parts.append(f"<line class='grid' x1='{LEFT}' x2='{WIDTH - RIGHT}' y1='{y:.1f}' y2='{y:.1f}'/>"
                     f"<text x='{LEFT - 6}' y='{y + 4:.1f}' class='axis' text-anchor='end'>{text}</text>")
    for frac in (0, 0.25, 0.5, 0.75, 1):
        n = round(first + frac * (last - first))
        x = LEFT + frac * plot
        anchor = "end" if frac == 1 else "middle"
        parts.append(f"<text x='{x:.1f}' y='{height - 6}' class='axis' text-anchor='{anchor}'>{n}</text>")
    return parts


def charts_html(tokens: dict[int, StepTokens], rec: SessionRecord) -> str:
    """Context size and cached share per step; "" when no call carried tokens."""
    numbers = sorted(n for n, t in tokens.items() if t.prompt > 0)
    if not numbers:
        return ""
    first, last = numbers[0], numbers[-1]
    span = max(1, last - first)
    plot = WIDTH - LEFT - RIGHT

    def x_of(n: int) -> float:
        return LEFT + (n - first) / span * plot

    # context size
    height = 200
    bottom, top_y = height - 24, 24
    peak = max(tokens[n].prompt for n in numbers)
    limits = budgets(rec)
    shown = {k: v for k, v in limits.items() if v <= peak * 1.6}
    top = _nice(max([peak, *shown.values()]))
    label = "Context size per step (operator prompt tokens)"
    parts = _frame("context", label, height, first, last, top, "tokens")

    def y_of(v: float) -> float:
        return bottom - v / top * (bottom - top_y)

    for name, value in shown.items():
        y = y_of(value)
        parts.append(f"<line class='{name}' x1='{LEFT}' x2='{WIDTH - RIGHT}' y1='{y:.1f}' y2='{y:.1f}'/>"
                     f"<text x='{WIDTH - RIGHT - 4}' y='{y - 4:.1f}' class='axis' text-anchor='end'>"
                     f"{e(name)} {value:,}</text>")
    parts.append(_polyline([(x_of(n), y_of(tokens[n].prompt)) for n in numbers], "ctx"))
    hidden = {k: v for k, v in limits.items() if k not in shown}
    if hidden:
        note = ", ".join(f"{k} {v:,}" for k, v in hidden.items())
        parts.append(f"<text x='{LEFT + 420}' y='14' class='axis'>above the chart: {e(note)}</text>")
    parts.append("</svg>")
    # cached share
    height = 130
    bottom = height - 24
    share_parts = _frame("cache", "Cached share of the prompt per step", height, first, last, 100, "%")
    share_parts.append(_polyline(
        [(x_of(n), bottom - (tokens[n].share or 0) * (bottom - top_y)) for n in numbers], "share"))
    share_parts.append("</svg>")
    return (f"<section id='charts'><h2>Context</h2>{''.join(parts)}{''.join(share_parts)}"
            "<p class='muted'>Click a chart to jump to that step.</p></section>")
