"""``artemis test --report-dir``: ``index.html``, one row per case linking its report.

Everything that came from a device, a model or a task file (names, failure text, answers) is
escaped; the page is one self-contained file (no scripts, no remote assets) next to the case
reports it links by relative path."""

from __future__ import annotations

import html
import os
from pathlib import Path
from typing import Any

STYLE = ("body{font:14px system-ui,sans-serif;margin:2em}table{border-collapse:collapse}"
         "td,th{border-bottom:1px solid #ddd;padding:4px 10px;text-align:left;vertical-align:top}"
         ".passed{color:#1a7f37}.failed,.interrupted{color:#cf222e}.flaky{color:#9a6700}")


def _usd(cost: Any) -> str:
    from artemis_cli.models.pricing import format_usd

    total = (cost or {}).get("total_usd") if isinstance(cost, dict) else None
    return format_usd(total) if isinstance(cost, dict) else "—"


def render_index(suite: dict[str, Any], report_dir: Path) -> str:
    e = html.escape
    t = suite["totals"]
    rows = []
    for c in suite["cases"]:
        status = c["status"] + (" (flaky)" if c.get("flaky") else "")
        css = "flaky" if c.get("flaky") else c["status"]
        report = c.get("report")
        link = (f'<a href="{e(os.path.relpath(report, report_dir))}">{e(c.get("session_id") or "")}</a>'
                if report else e(c.get("session_id") or "—"))
        rows.append(
            f'<tr><td>{e(c["name"])}</td><td>{e(c.get("kind") or "task")}</td>'
            f'<td class="{e(css)}">{e(status)}</td><td>{e(str(c.get("device") or "—"))}</td>'
            f'<td>{e(str(c.get("steps") or 0))}</td><td>{e(str(c.get("model_calls") or 0))}</td>'
            f'<td>{e(_usd(c.get("cost")))}</td><td>{link}</td><td>{e(c.get("failure") or "")}</td></tr>')
    head = "".join(f"<th>{h}</th>" for h in
                   ("case", "kind", "status", "device", "steps", "model calls", "cost", "session", "failure"))
    summary = (f'{t["passed"]}/{t["cases"]} passed · {t["failed"]} failed · {t["flaky"]} flaky'
               f' · {t.get("interrupted", 0)} interrupted')
    return (f'<!doctype html>\n<html lang="en"><head><meta charset="utf-8"><title>artemis test {e(suite["id"])}</title>'
            f'<style>{STYLE}</style></head>\n<body><h1>artemis test {e(suite["id"])}: {e(suite["status"])}</h1>\n'
            f'<p>{e(summary)}</p>\n<table><thead><tr>{head}</tr></thead><tbody>\n' + "\n".join(rows)
            + '\n</tbody></table></body></html>\n')


def write_index(suite: dict[str, Any], report_dir: Path) -> Path:
    report_dir.mkdir(parents=True, exist_ok=True)
    path = report_dir / "index.html"
    tmp = path.with_suffix(".html.tmp")
    tmp.write_text(render_index(suite, report_dir), encoding="utf-8")
    tmp.replace(path)
    return path
