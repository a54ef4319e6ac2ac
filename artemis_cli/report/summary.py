"""The summary block at the top of the report: goal, result (with the failing success checks and
what they got), model (offline models say so), steps, active and wall time (interruptions), tokens and cache share by role.

The cost is what each call was priced at when it was recorded (``models.pricing``: genai-prices
and the profile's ``prices:``), in total and per role; "unknown" where a price is not known,
never an invented 0. Tokens by role and their cached share are shown too. An offline model's session says "none billed" instead of a table of
zeros. Every value is escaped.
"""

from __future__ import annotations

from html import escape
from typing import Any

from artemis_cli.cli.token_table import no_billed_line
from artemis_cli.engine.records import SessionRecord
from artemis_cli.engine.segments import SessionTime, stops
from artemis_cli.engine.token_usage import OUTPUT_IS, CostSummary, TokenCounts, TokenUsage


def e(value: Any) -> str:
    """Escape anything for HTML text and attribute values (quotes included)."""
    return escape("" if value is None else str(value), quote=True)


def is_offline(rec: SessionRecord) -> bool:
    return bool((rec.config or {}).get("offline_model"))


def model_text(rec: SessionRecord) -> str:
    label = rec.model_label or ", ".join(str(v) for v in (rec.models or {}).values()) or "unknown"
    if is_offline(rec) and "offline" not in label.lower():
        label += " (offline model)"
    return label


def wall_seconds(rec: SessionRecord) -> float | None:
    from artemis_cli.engine.clock import parse_iso

    if not rec.started_at or not rec.ended_at:
        return None
    return (parse_iso(rec.ended_at) - parse_iso(rec.started_at)).total_seconds()


def duration_text(seconds: float | None) -> str:
    if seconds is None:
        return "still running"
    if seconds < 90:
        return f"{seconds:.1f} s"
    minutes, sec = divmod(round(seconds), 60)
    hours, minutes = divmod(minutes, 60)
    return f"{hours} h {minutes:02d} min" if hours else f"{minutes} min {sec:02d} s"


def _share(c: TokenCounts) -> str:
    share = c.cached_share
    return "—" if share is None else f"{100 * share:.0f}%"


def _token_row(label: str, c: TokenCounts, cls: str = "") -> str:
    return (f"<tr class='{cls}'><td>{e(label)}</td><td>{c.calls:,}</td><td>{c.prompt:,}</td><td>{c.cached:,}</td>"
            f"<td>{_share(c)}</td><td>{c.output:,}</td></tr>")


def token_table(usage: TokenUsage) -> str:
    """Tokens by role group (roles indented below a group of several), total as the footer."""
    rows = []
    for group in usage.groups:
        if not group.roles:
            continue
        if len(group.roles) == 1 and group.group == "operator":
            rows.append(_token_row(group.roles[0].label, group.counts))
            continue
        rows.append(_token_row(group.label, group.counts, "group"))
        rows.extend(_token_row(r.label, r.counts, "sub") for r in group.roles)
    t = usage.total
    foot = (f"<tfoot><tr><td>total</td><td>{t.calls:,}</td><td>{t.prompt:,}</td><td>{t.cached:,}</td>"
            f"<td>{_share(t)}</td><td>{t.output:,}</td></tr></tfoot>")
    return ("<table class='tokens'><thead><tr><th>role</th><th>calls</th><th>prompt</th><th>cached</th>"
            f"<th>cached %</th><th>output</th></tr></thead><tbody>{''.join(rows)}</tbody>{foot}</table>"
            f"<p class='muted'>output = {e(OUTPUT_IS)} · calls = HTTP attempts, retries included · "
            "no price data in Artemis, so no cost is shown</p>")


def _checks(result: dict[str, Any]) -> str:
    checks = [c for c in result.get("checks") or [] if isinstance(c, dict)]
    failed = [c for c in checks if not c.get("passed")]
    if not checks:
        return ""
    if not failed:
        return ""
    items = "".join(f"<li>{e(c.get('check'))}<br><span class='got'>{e(c.get('detail') or '(no detail)')}</span></li>"
                    for c in failed)
    return (f"<p>{len(failed)} of {len(checks)} success checks failed:</p>"
            f"<ul class='checks' id='failed-checks'>{items}</ul>")


def summary_html(rec: SessionRecord, *, steps: int, usage: TokenUsage, level_counts: dict[str, int],
                 timing: SessionTime | None = None, cost: CostSummary | None = None) -> str:
    """The ``<section id='summary'>`` block. ``timing``: the session's run segments (active time,
    wall time, interruptions); without it only the wall time from ``started_at`` to ``ended_at``."""
    result = rec.result or {}
    status = rec.status
    message = str(result.get("message") or "")
    answer = str(result.get("answer") or "")
    facts: list[tuple[str, str]] = [("model", model_text(rec))]
    roles = {k: v for k, v in (rec.models or {}).items() if k != "operator"}
    if roles:
        facts.append(("other models", ", ".join(f"{k}: {v}" for k, v in roles.items())))
    facts.append(("steps", f"{steps:,}"))
    if timing is not None and timing.segments:
        running = rec.status == "running"
        facts.append(("active time", duration_text(timing.active_s) + (" so far" if running else "")))
        facts.append(("wall time", duration_text(timing.wall_s) + (" so far" if running else "")))
        if marks := stops(timing):
            facts.append(("interruptions", f"{len(marks)}: " + "; ".join(
                f"after step {m.after_step} ({m.reason})" + ("" if m.resumed_at is None else ", resumed")
                for m in marks)))
    else:
        facts.append(("wall time", duration_text(wall_seconds(rec))))
    total = usage.total
    if usage.billed:
        facts.append(("tokens", f"{total.prompt:,} prompt · {total.output:,} output · {total.calls:,} calls"))
        facts.append(("cache share", f"{_share(total)} of prompt tokens cached"))
    else:
        facts.append(("tokens", no_billed_line(usage, offline=is_offline(rec))))
    if cost is not None and cost.by_role and usage.billed:  # offline: "none billed" says it, no "$0"
        facts.append(("cost", cost.text()))
    if level_counts:
        facts.append(("compression", ", ".join(f"{n} {k}" for k, n in level_counts.items() if n) or "none"))
    facts.append(("device", f"{rec.device_serial or '?'} ({rec.device_kind or '?'}, "
                            f"{rec.screen_width or '?'}×{rec.screen_height or '?'})"))
    if rec.task_id:
        facts.append(("task", rec.task_id))
    if rec.parent_session:
        facts.append(("replay of", rec.parent_session))
    grid = "".join(f"<div><dt>{e(k)}</dt><dd>{e(v)}</dd></div>" for k, v in facts)
    parts = [
        "<section id='summary'>",
        f"<div class='sid'>Artemis session {e(rec.id)}{(' · ' + e(rec.loop) + ' loop') if rec.loop else ''}"
        f" · started {e(rec.started_at or '?')}</div>",
        f"<h1 id='goal'>{e(rec.goal or '(no goal)')}</h1>",
        f"<p id='result'><span class='badge {e(status)}'>{e(status)}</span> {e(message)}"
        f"{(' · answer: ' + e(answer)) if answer else ''}</p>",
        _checks(result),
    ]
    parts.append(f"<dl class='facts'>{grid}</dl>")
    if usage.billed:
        parts.append(token_table(usage))
    parts.append("</section>")
    return "".join(parts)
