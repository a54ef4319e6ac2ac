"""``artemis report``: one HTML file that opens offline.

Layout: a header (task, goal, device, model, result, tokens, cache share, time), a per-step chart
of prompt and cached tokens (inline SVG), chunk boundaries with their three bands (when the
database has ``history_chunks``), and a timeline with one ``<article class="step">`` card per
step: the pre-action screenshot with the action marker, thought, action, target semantics, result,
validator verdict, summary and — for replays — the replay status. ``j``/``k`` or the arrow keys move
between steps.

Images are inlined as base64 ``data:`` URIs (screenshots scaled down to ``THUMB_WIDTH``), so
the single file is the whole report. Every string that comes from the device, a model or the
database goes through ``html.escape``; nothing is built from unescaped text.
"""

from __future__ import annotations

import base64
import io
import json
from html import escape
from pathlib import Path
from typing import Any

from PIL import Image

from artemis_cli.engine.db import DataEngine
from artemis_cli.engine.errors import BlobMissing
from artemis_cli.engine.records import LlmCallRecord, SessionRecord, StepRecord
from artemis_cli.errors import ScreenshotError
from artemis_cli.memory.ledger_lines import action_phrase
from artemis_cli.perception.marker import draw_action_marker
from artemis_cli.perception.types import Target
from artemis_cli.report.chunks import ChunkView, load_chunks

THUMB_WIDTH = 360


def e(value: Any) -> str:
    """Escape anything for HTML text and attribute values (quotes included)."""
    return escape("" if value is None else str(value), quote=True)


# --- data -----------------------------------------------------------------------------------


def _tokens_per_step(calls: list[LlmCallRecord]) -> dict[int, tuple[int, int]]:
    out: dict[int, tuple[int, int]] = {}
    for c in calls:
        if c.step is None:
            continue
        p, k = out.get(c.step, (0, 0))
        out[c.step] = (p + c.prompt_tokens, k + c.cached_tokens)
    return out


def _thumbnail(engine: DataEngine, step: StepRecord) -> str | None:
    """The pre-action screenshot with the action marker, scaled, as a data URI."""
    if not step.pre_screenshot:
        return None
    try:
        png = engine.blob(step.pre_screenshot)
        points: list[tuple[int, int]] = []
        if step.x is not None and step.y is not None:
            points.append((step.x, step.y))
            if step.x2 is not None and step.y2 is not None:
                points.append((step.x2, step.y2))
        marked = draw_action_marker(png, step.action_type, points) if points else png
        image: Image.Image = Image.open(io.BytesIO(marked))
        if image.width > THUMB_WIDTH:
            image = image.resize((THUMB_WIDTH, round(image.height * THUMB_WIDTH / image.width)))
        buf = io.BytesIO()
        image.convert("RGB").save(buf, format="PNG", optimize=True)
    except (BlobMissing, ScreenshotError, OSError):
        return None
    return "data:image/png;base64," + base64.b64encode(buf.getvalue()).decode("ascii")


def _duration(rec: SessionRecord) -> str:
    from artemis_cli.engine.clock import parse_iso

    if not rec.started_at or not rec.ended_at:
        return "-"
    seconds = (parse_iso(rec.ended_at) - parse_iso(rec.started_at)).total_seconds()
    return f"{seconds:.1f} s"


# --- pieces ---------------------------------------------------------------------------------


def _chart(steps: list[StepRecord], tokens: dict[int, tuple[int, int]]) -> str:
    numbers = [s.number for s in steps]
    if not numbers:
        return "<p class='muted'>No steps.</p>"
    peak = max([p for p, _ in tokens.values()] + [1])
    bar = 10
    gap = 4
    height = 160
    left = 56
    width = max(left + len(numbers) * (bar + gap) + 10, 340)
    parts = [
        f"<svg id='token-chart' xmlns='http://www.w3.org/2000/svg' width='{width}' height='{height + 40}' "
        f"viewBox='0 0 {width} {height + 40}' role='img' aria-label='prompt and cached tokens per step'>",
        f"<line x1='{left}' y1='{height}' x2='{width}' y2='{height}' stroke='#888'/>",
        f"<text x='4' y='14' class='axis'>{e(peak)}</text><text x='4' y='{height}' class='axis'>0</text>",
    ]
    for i, n in enumerate(numbers):
        prompt, cached = tokens.get(n, (0, 0))
        x = left + i * (bar + gap)
        ph = round(height * prompt / peak)
        ch = round(height * cached / peak)
        parts.append(
            f"<g class='bar' data-step='{n}'><title>step {n}: {prompt} prompt, {cached} cached</title>"
            f"<rect class='prompt' x='{x}' y='{height - ph}' width='{bar}' height='{ph}'/>"
            f"<rect class='cached' x='{x}' y='{height - ch}' width='{bar}' height='{ch}'/></g>"
        )
        if len(numbers) <= 30 or n % 10 == 0 or i == 0:
            parts.append(f"<text x='{x}' y='{height + 14}' class='axis'>{n}</text>")
    parts.append(
        f"<rect x='{left}' y='{height + 22}' width='10' height='10' class='prompt'/>"
        f"<text x='{left + 14}' y='{height + 31}' class='axis'>prompt tokens</text>"
        f"<rect x='{left + 120}' y='{height + 22}' width='10' height='10' class='cached'/>"
        f"<text x='{left + 134}' y='{height + 31}' class='axis'>cached tokens</text></svg>"
    )
    if not tokens:
        parts.append("<p class='muted'>No model calls were recorded for this session.</p>")
    return "".join(parts)


def _chunks_section(chunks: list[ChunkView] | None) -> str:
    if chunks is None:
        return ""
    if not chunks:
        return "<section id='chunks'><h2>Chunks</h2><p class='muted'>No chunks were made for this session.</p></section>"
    items = []
    for c in chunks:
        bands = "".join(f"<div class='band'><h4>{e(label)}</h4><pre>{e(text)}</pre></div>" for label, text in c.bands)
        items.append(
            f"<div class='chunk' data-start='{c.start_step}' data-end='{c.end_step}'>"
            f"<h3><a href='#step-{c.start_step}'>Steps {c.start_step}–{c.end_step}</a> "
            f"{e(c.milestone)} <span class='muted'>v{c.version} {e(c.status)}</span></h3>{bands}</div>"
        )
    return f"<section id='chunks'><h2>Chunks</h2>{''.join(items)}</section>"


def _target_rows(target: dict[str, Any] | None) -> str:
    t = Target.from_dict(target)
    if t.label_source == "none":
        return "<p class='muted'>no element</p>"
    rows = [("text", t.text), ("content-desc", t.content_desc), ("resource-id", t.resource_id),
            ("class", t.class_name), ("bounds", list(t.bounds) if t.bounds else ""),
            ("label source", t.label_source)]
    if t.password:
        rows.append(("password", "yes"))
    body = "".join(f"<tr><th>{e(k)}</th><td>{e(v)}</td></tr>" for k, v in rows if v not in ("", None))
    return f"<table class='target'>{body}</table>"


def _card(engine: DataEngine, step: StepRecord, tokens: tuple[int, int] | None, chunk_start: ChunkView | None) -> str:
    img = _thumbnail(engine, step)
    shot = (f"<img class='shot' alt='screen before step {step.number}' src='{img}'>" if img
            else "<div class='shot missing'>no screenshot</div>")
    replay = (step.meta or {}).get("replay") or {}
    badge = ""
    if replay:
        badge = (f"<span class='replay {e(replay.get('status'))}'>{e(replay.get('status'))}</span> "
                 f"<span class='muted'>source step {e(replay.get('source_step'))} · by {e(replay.get('how'))}</span>")
    verdict = ""
    if step.verdict:
        verdict = f"<div class='field'><h4>Validator</h4><pre>{e(json.dumps(step.verdict, ensure_ascii=False, indent=2))}</pre></div>"
    summary = ""
    if step.summary:
        summary = (f"<div class='field'><h4>Summary <span class='muted'>{e(step.summary_status)}</span></h4>"
                   f"<p>{e(step.summary)}</p></div>")
    user = f"<div class='field'><h4>User instruction</h4><p>{e(step.user_instruction)}</p></div>" if step.user_instruction else ""
    tok = f"{tokens[0]} prompt · {tokens[1]} cached" if tokens else "no model call"
    boundary = ""
    if chunk_start is not None:
        boundary = (f"<div class='boundary'>chunk {chunk_start.start_step}–{chunk_start.end_step} "
                    f"{e(chunk_start.milestone)}</div>")
    status_class = {"ok": "ok", "finished": "ok", "no_change": "nochange"}.get(step.result_status, "error")
    seen = str((step.outcome or {}).get("summary") or "")
    observed = f"<p class='observed'>observed: {e(seen)}</p>" if seen else ""
    return (
        f"{boundary}<article class='step' id='step-{step.number}' data-step='{step.number}' tabindex='-1'>"
        f"<div class='left'>{shot}</div><div class='right'>"
        f"<h3>Step {step.number} <span class='muted'>T+{(step.offset_ms or 0) / 1000:.1f}s · {e(tok)} · "
        f"{e(step.foreground_app or '')}</span></h3>{badge}"
        f"<div class='field'><h4>Thought</h4><p class='thought'>{e(step.thought or '')}</p></div>"
        f"<div class='field'><h4>Action</h4><p class='action'><code>{e(action_phrase(step))}</code></p></div>"
        f"<div class='field'><h4>Target</h4>{_target_rows(step.target)}</div>"
        f"<div class='field'><h4>Result</h4><p class='result {status_class}'>{e(step.result_status)}"
        f"{(' — ' + e(step.result_detail)) if step.result_detail else ''}</p>{observed}</div>"
        f"{verdict}{summary}{user}</div></article>"
    )


_STYLE = """
body{font:14px/1.45 system-ui,sans-serif;margin:0;background:#f6f6f8;color:#222}
header{background:#1d2733;color:#fff;padding:16px 24px}header h1{margin:0 0 6px;font-size:20px}
header dl{display:grid;grid-template-columns:max-content 1fr;gap:2px 14px;margin:8px 0 0}
header dt{color:#9fb0c2}header dd{margin:0}
main{padding:16px 24px;max-width:1200px}section{margin-bottom:24px}
.muted{color:#777;font-weight:normal}header .muted{color:#9fb0c2}
.step{display:flex;gap:18px;background:#fff;border:1px solid #ddd;border-radius:8px;padding:12px;margin:10px 0}
.step.current{outline:3px solid #3b82f6}.shot{width:240px;border:1px solid #ccc;border-radius:6px}
.shot.missing{height:120px;display:flex;align-items:center;justify-content:center;color:#888}
.right{flex:1;min-width:0}.right h3{margin:0 0 6px}.field h4{margin:8px 0 2px;font-size:12px;color:#555;text-transform:uppercase}
.field p{margin:0;white-space:pre-wrap;word-break:break-word}pre{white-space:pre-wrap;word-break:break-word;margin:0;background:#f3f3f3;padding:6px;border-radius:4px}
table.target th{text-align:left;color:#666;padding-right:10px;font-weight:normal}table.target td{word-break:break-all}
.result.error{color:#b91c1c}.result.ok{color:#15803d}.result.nochange{color:#b45309}.observed{color:#444}
.replay{padding:1px 8px;border-radius:10px;color:#fff;font-size:12px}.replay.matched{background:#15803d}
.replay.retargeted{background:#b45309}.replay.diverged{background:#b91c1c}
.boundary{margin:18px 0 4px;padding:4px 10px;border-left:4px solid #7c3aed;color:#5b21b6;background:#f1ebff}
.chunk{background:#fff;border:1px solid #ddd;border-radius:8px;padding:8px 12px;margin:8px 0}.band h4{margin:6px 0 2px}
svg .prompt{fill:#93c5fd}svg .cached{fill:#1d4ed8}svg .axis{font-size:10px;fill:#555}
nav.help{position:fixed;right:12px;bottom:12px;background:#1d2733;color:#fff;padding:6px 10px;border-radius:6px;font-size:12px}
"""

_SCRIPT = """
(function(){
  var cards=[].slice.call(document.querySelectorAll('article.step'));
  var i=-1;
  function go(n){ if(!cards.length) return; i=Math.max(0,Math.min(cards.length-1,n));
    cards.forEach(function(c){c.classList.remove('current');});
    cards[i].classList.add('current'); cards[i].scrollIntoView({block:'start'});
    if(history.replaceState) history.replaceState(null,'','#'+cards[i].id); }
  document.addEventListener('keydown',function(ev){
    if(ev.altKey||ev.ctrlKey||ev.metaKey) return;
    if(ev.key==='j'||ev.key==='ArrowDown'||ev.key==='ArrowRight'){go(i+1);ev.preventDefault();}
    else if(ev.key==='k'||ev.key==='ArrowUp'||ev.key==='ArrowLeft'){go(i-1);ev.preventDefault();}
    else if(ev.key==='Home'){go(0);ev.preventDefault();}
    else if(ev.key==='End'){go(cards.length-1);ev.preventDefault();}
  });
  document.querySelectorAll('#token-chart g.bar').forEach(function(g){
    g.addEventListener('click',function(){ var n=+g.getAttribute('data-step');
      go(cards.findIndex(function(c){return +c.getAttribute('data-step')===n;})); });
  });
})();
"""


def build_report(engine: DataEngine, session: str) -> str:
    """The report of ``session`` (id, unique prefix or ``latest``) as one HTML document."""
    rec = engine.get_session(session)
    steps = engine.get_steps(rec.id)
    calls = engine.llm_calls(rec.id)
    tokens = _tokens_per_step(calls)
    chunks = load_chunks(engine, rec.id)
    prompt = sum(c.prompt_tokens for c in calls)
    cached = sum(c.cached_tokens for c in calls)
    completion = sum(c.completion_tokens for c in calls)
    share = f"{100 * cached / prompt:.0f}%" if prompt else "-"
    result = rec.result or {}
    models = ", ".join(f"{k}: {v}" for k, v in (rec.models or {}).items())
    rows = [
        ("task", rec.task_id or "(ad-hoc goal)"),
        ("goal", rec.goal),
        ("device", f"{rec.device_serial or '?'} ({rec.device_kind or '?'}, {rec.screen_width}x{rec.screen_height})"),
        ("model", f"{rec.model_label or ''}" + (f" [{models}]" if models else "")),
        ("result", f"{rec.status}" + (f" — {result.get('message')}" if result.get("message") else "")),
        ("steps", str(len(steps))),
        ("tokens", f"{prompt} prompt, {cached} cached, {completion} completion, {len(calls)} model calls"),
        ("cache share", share),
        ("time", f"{rec.started_at or '?'} → {rec.ended_at or 'running'} ({_duration(rec)})"),
    ]
    if rec.parent_session:
        rows.append(("replay of", rec.parent_session))
    header = "".join(f"<dt>{e(k)}</dt><dd>{e(v)}</dd>" for k, v in rows)
    starts = {c.start_step: c for c in chunks or []}
    cards = "".join(_card(engine, s, tokens.get(s.number), starts.get(s.number)) for s in steps)
    return (
        "<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'>"
        "<meta name='viewport' content='width=device-width,initial-scale=1'>"
        "<meta http-equiv='Content-Security-Policy' content=\"default-src 'none'; img-src data:; "
        "style-src 'unsafe-inline'; script-src 'unsafe-inline'\">"
        f"<title>Artemis report {e(rec.id)}</title><style>{_STYLE}</style></head><body>"
        f"<header><h1>Session {e(rec.id)} <span class='muted'>{e(rec.loop or '')}</span></h1><dl>{header}</dl></header>"
        f"<main><section id='tokens'><h2>Tokens per step</h2>{_chart(steps, tokens)}</section>"
        f"{_chunks_section(chunks)}"
        f"<section id='timeline'><h2>Timeline</h2>{cards or '<p class=muted>No steps recorded.</p>'}</section></main>"
        "<nav class='help'>j / ↓ next step · k / ↑ previous</nav>"
        f"<script>{_SCRIPT}</script></body></html>"
    )


def write_report(engine: DataEngine, session: str, output: Path | str | None = None) -> Path:
    """Write the report; default file name ``artemis-report-<session id>.html`` in the cwd."""
    rec = engine.get_session(session)
    path = Path(output) if output is not None else Path(f"artemis-report-{rec.id}.html")
    if path.is_dir():
        path = path / f"artemis-report-{rec.id}.html"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(build_report(engine, rec.id), encoding="utf-8")
    return path
