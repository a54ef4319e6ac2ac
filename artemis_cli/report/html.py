"""``artemis report``: one HTML file that reads like a story and opens offline.

Order: the summary (goal, result and failing checks, model, steps, wall time, tokens and cache
share by role), the context charts (only when calls carried tokens), then the timeline — one
card per step (thumbnail with the action marker, thought, action with its hit-tested element,
outcome, and the compression level the step lives in now), with chunk, era and period bands as
readable text where their ranges start.

Scale: the document is streamed to its file (:func:`render_report` writes to any text stream),
steps are read in pages, each screenshot blob is read when its step is written and scaled once
per sha (:class:`~artemis_cli.report.images.ImageStore`). Every string from the device, a model
or the database goes through ``html.escape``.
"""

from __future__ import annotations

import contextlib
import io
import os
import stat
from pathlib import Path
from typing import Any, TextIO

from artemis_cli.engine.db import DataEngine
from artemis_cli.engine.records import LIBRARY_CALL_EVENT, LIBRARY_LOOP
from artemis_cli.engine.segments import Stop, session_time, stops
from artemis_cli.engine.token_usage import token_usage
from artemis_cli.memory.restore import SessionSpec
from artemis_cli.plural import counted
from artemis_cli.replay.kinds import KINDS
from artemis_cli.replay.lineage import marks as replay_kinds
from artemis_cli.report.charts import charts_html, step_tokens
from artemis_cli.report.chunks import load_chunks
from artemis_cli.report.images import FULL_EMBED_LIMIT, ImageStore, distinct_screenshot_bytes
from artemis_cli.report.levels import IN_FULL, load_levels
from artemis_cli.report.style import CSP, SCRIPT, STYLE
from artemis_cli.report.summary import e, summary_html
from artemis_cli.report.timeline import (
    call_band,
    chunk_band,
    level_band,
    reading_legend,
    step_card,
    stop_band,
)

#: Steps read from the database at a time.
PAGE = 200


def render_report(engine: DataEngine, session: str, out: TextIO, *, assets: Path | None = None,
                  html_dir: Path | None = None, embed_full: bool | None = None, marks: bool = False) -> None:
    """Write the report of ``session`` (id, unique prefix or ``latest``) to ``out``.

    ``assets``: write thumbnails and full screenshots into this directory and link them (relative
    to ``html_dir``, where the HTML file will be). ``embed_full``: embed the full screenshots too
    (default: when the session's distinct screenshots come to at most ``FULL_EMBED_LIMIT``).
    ``marks``: show each step's screenshot as the operator saw it (scaled, set-of-marks drawn)."""
    rec = engine.get_session(session)
    sid = rec.id
    count = engine.step_count(sid)
    last = engine.last_step_number(sid)
    usage = token_usage(engine, sid)
    tokens = step_tokens(engine, sid)
    chunks = load_chunks(engine, sid) or []
    levels = load_levels(engine, sid)
    if embed_full is None:
        embed_full = assets is None and distinct_screenshot_bytes(engine, sid) <= FULL_EMBED_LIMIT
    max_side = SessionSpec.load(engine, sid).profile.screenshot.max_side if marks else None
    images = ImageStore(engine, assets=assets, html_dir=html_dir, embed_full=embed_full, marked=marks,
                        max_side=max_side)
    kinds = {"chunks": len(chunks), "eras": 0, "periods": 0, "snapshot": 0}
    for block in levels.blocks:
        if block.kind in ("era", "period", "snapshot"):
            kinds[block.kind + ("s" if block.kind != "snapshot" else "")] += 1
    counts = {k: v for k, v in kinds.items() if v}

    out.write("<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'>"
              "<meta name='viewport' content='width=device-width,initial-scale=1'>"
              f"<meta http-equiv='Content-Security-Policy' content=\"{CSP}\">"
              f"<title>Artemis report {e(sid)}</title><style>{STYLE}</style></head><body><main>\n")
    timing = session_time(engine, rec, running=engine.derived_status(rec) == "running")
    stopped: dict[int, list[Stop]] = {}
    for stop in stops(timing):
        stopped.setdefault(stop.after_step, []).append(stop)
    from artemis_cli.engine.token_usage import session_costs

    out.write(summary_html(rec, steps=count, usage=usage, level_counts=counts, timing=timing,
                           cost=session_costs(engine, sid)))
    out.write("\n")
    out.write(charts_html(tokens, rec))
    replay_marks = replay_kinds(engine, sid) if rec.loop in ("replay", LIBRARY_LOOP) else {}
    calls = library_calls(engine, sid) if rec.loop == LIBRARY_LOOP else {}
    if replay_marks:
        out.write(replay_legend(replay_marks))
    timeline_note = " · screenshots as the model saw them, element numbers drawn" if marks else ""
    if levels.blocks or chunks:
        out.write(reading_legend())
    out.write(f"<section id='timeline'><h2>Timeline <span class='muted'>{counted(count, 'step', sep=',')}{timeline_note}</span></h2>\n")
    if not count:
        out.write("<p class='muted'>No steps recorded.</p>")
    starts = {c.start_step: c for c in chunks}
    try:
        page = engine.get_steps(sid, 1, PAGE)
        images.prefetch(images.view(s) for s in page)
        start = 1
        while page:
            start += PAGE
            following = engine.get_steps(sid, start, start + PAGE - 1) if start <= last else []
            images.prefetch(images.view(s) for s in following)  # scaled while this page is written
            for step in page:
                n = step.number
                for block in levels.starting_at(n):
                    out.write(level_band(block))
                for call in calls.pop(n, []):
                    out.write(call_band(call))
                chunk = starts.get(n)
                if chunk is not None:
                    now = levels.label(n)
                    out.write(chunk_band(chunk, "" if now.startswith("chunk") or now == IN_FULL else now))
                out.write(step_card(step, images, tokens.get(n), levels.label(n), replay_marks.get(n)))
                for stop in stopped.pop(n, []):
                    out.write(stop_band(stop))
            page = following
    finally:
        images.close()
    for rest_calls in calls.values():  # asks and looks after the last step
        for call in rest_calls:
            out.write(call_band(call))
    for rest in stopped.values():  # a stop before the first step, or after steps that are gone
        for stop in rest:
            out.write(stop_band(stop))
    out.write("</section></main>\n<div id='zoom' role='dialog' aria-label='full screenshot'>"
              "<div class='frame'></div><div class='note'></div></div>"
              "<nav class='help'>j / ↓ next step · k / ↑ previous · click a screenshot to enlarge</nav>\n")
    if images.full_keys:  # full screenshots, after everything visible: fetched from here on click
        out.write("<script>window.ARTEMIS_FULL={};\n")
        for key in images.full_keys:
            data = images.full_data(key)
            if data:
                out.write(f"ARTEMIS_FULL['{key}']='{data}';\n")
        out.write("</script>\n")
    out.write(f"<script>{SCRIPT}</script></body></html>\n")


def library_calls(engine: DataEngine, session_id: str) -> dict[int, list[dict[str, Any]]]:
    """A Python API session's calls by the step they come before: an AI step at its first step,
    an ask or a look at the step it preceded."""
    out: dict[int, list[dict[str, Any]]] = {}
    for ev in engine.events(session_id, LIBRARY_CALL_EVENT):
        p = dict(ev.payload or {})
        at = p.get("first_step") if p.get("call") in ("act", "tap_ai") else ev.step
        out.setdefault(int(at or 0), []).append(p)
    return out


def replay_legend(step_marks: dict[int, str]) -> str:
    """A replay's step kinds, each with its count and meaning (``replay.kinds``): the counts the
    replay's summary, ``--json`` and ``sessions show`` give, the words on the step badges."""
    counts = {kind: 0 for kind in KINDS}
    for kind in step_marks.values():
        counts[kind] = counts.get(kind, 0) + 1
    rows = "".join(f"<p><span class='replay {e(kind)}'>{e(kind)}</span> {counts[kind]:,} · "
                   f"<span class='muted'>{e(meaning)}</span></p>" for kind, meaning in KINDS.items())
    return f"<section id='replay-steps'><h2>Replay steps</h2>{rows}</section>\n"


def build_report(engine: DataEngine, session: str, *, assets: Path | None = None, marks: bool = False) -> str:
    """The report as one string (small sessions and tests; the CLI streams to a file)."""
    buf = io.StringIO()
    render_report(engine, session, buf, assets=assets, marks=marks)
    return buf.getvalue()


def default_name(engine: DataEngine, session: str) -> str:
    return f"artemis-report-{engine.get_session(session).id}.html"


def write_report(engine: DataEngine, session: str, output: Path | str | None = None, *,
                 assets: Path | str | None = None, marks: bool = False) -> Path:
    """Stream the report to a file (default ``artemis-report-<id>.html`` in the cwd; a directory
    gets that name inside it). A regular file is replaced atomically; other targets (a FIFO,
    ``/dev/stdout``) are written in place. Write failures raise ``OSError`` (the CLI names the
    file); a failing assets file raises :class:`~artemis_cli.report.images.AssetWriteError`."""
    path = Path(output) if output is not None else Path(default_name(engine, session))
    if path.is_dir():
        path = path / default_name(engine, session)
    path.parent.mkdir(parents=True, exist_ok=True)
    assets_dir = Path(assets) if assets is not None else None
    try:
        mode: int | None = path.lstat().st_mode
    except FileNotFoundError:
        mode = None
    if mode is not None and not stat.S_ISREG(mode):
        with open(path, "w", encoding="utf-8") as fh:
            render_report(engine, session, fh, assets=assets_dir, html_dir=path.parent, marks=marks)
        return path
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        with open(tmp, "w", encoding="utf-8") as fh:
            render_report(engine, session, fh, assets=assets_dir, html_dir=path.parent, marks=marks)
        os.replace(tmp, path)
    finally:
        with contextlib.suppress(OSError):
            tmp.unlink()
    return path
