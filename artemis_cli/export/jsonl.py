"""JSONL export: one JSON object per recorded step, in step order, UTF-8, one line each.

Fields of every line (``JSONL_FIELDS``; absent values are ``null``):

- ``session_id``, ``task_id``: the session and its task.
- ``number``: step number (1…n). ``started_at``, ``ended_at``: ISO-8601 UTC. ``offset_ms``: ms since
  the session started.
- ``thought``: the operator's reasoning text (password text is never stored).
- ``intent``: what the model said it expected the action to do (the action tool's ``intent``
  argument); null when it gave none and for steps recorded before intents.
- ``action``: ``{"type", "args", "x", "y", "x2", "y2"}`` — pixel coordinates on the recorded
  screen (``screen`` gives its size); typed password text appears as ``[redacted]`` with
  ``args.redacted = true``.
- ``target`` / ``target_end``: element semantics under the action (``text``, ``content_desc``,
  ``resource_id``, ``class_name``, ``bounds`` [l,t,r,b], ``label_source`` index|hit_test|none,
  ``element_index``, ``password``); ``target_end`` for a swipe's end point.
- ``result``: ``{"status": ok|no_change|failed|error|app_crashed|app_not_responding|finished (ignored in older sessions), "detail"}``.
  ``outcome``: what was observed after the action (screen changed, the target's new state, the
  field's text, windows opened or closed, app switched), null for steps recorded before outcomes.
  ``verdict``: validator verdict.
- ``foreground_app``: package in front before the action; ``post_foreground_app`` after it.
- ``screen``: ``[width, height]`` of the recorded device.
- ``pre_screenshot``, ``post_screenshot``, ``ui_xml``, ``post_ui_xml``: SHA-256 of the blobs in the
  data dir (``blobs/<first two hex>/<sha>``). ``pre_dhash``, ``post_dhash``: 64-bit dHash (hex).
- ``user_instruction``: text injected by the user at this step.
- ``summary``: ``{"text", "status", "source", "version"}``.
- ``replay``: for replay sessions, ``{"status": replayed|retargeted|diverged, "source_step", "how",
  "detail", …}``; else ``null``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import IO, Any

from artemis_cli.engine.db import DataEngine
from artemis_cli.engine.records import SessionRecord, StepRecord

JSONL_FIELDS: tuple[str, ...] = (
    "session_id", "task_id", "number", "started_at", "ended_at", "offset_ms", "thought", "intent", "action", "target",
    "target_end", "result", "outcome", "verdict", "foreground_app", "post_foreground_app", "screen", "pre_screenshot",
    "post_screenshot", "ui_xml", "post_ui_xml", "pre_dhash", "post_dhash", "user_instruction", "summary",
    "replay",
)


def step_line(session: SessionRecord, step: StepRecord) -> dict[str, Any]:
    meta = step.meta or {}
    line = {
        "session_id": session.id,
        "task_id": session.task_id,
        "number": step.number,
        "started_at": step.started_at,
        "ended_at": step.ended_at,
        "offset_ms": step.offset_ms,
        "thought": step.thought,
        "intent": step.intent,
        "action": {"type": step.action_type, "args": step.action_args, "x": step.x, "y": step.y,
                   "x2": step.x2, "y2": step.y2},
        "target": step.target,
        "target_end": step.target_end,
        "result": {"status": step.result_status, "detail": step.result_detail},
        "outcome": step.outcome,
        "verdict": step.verdict,
        "foreground_app": step.foreground_app,
        "post_foreground_app": meta.get("post_foreground_app"),
        "screen": [session.screen_width, session.screen_height],
        "pre_screenshot": step.pre_screenshot,
        "post_screenshot": step.post_screenshot,
        "ui_xml": step.ui_xml,
        "post_ui_xml": step.post_ui_xml,
        "pre_dhash": step.pre_dhash,
        "post_dhash": step.post_dhash,
        "user_instruction": step.user_instruction,
        "summary": {"text": step.summary, "status": step.summary_status, "source": step.summary_source,
                    "version": step.summary_version},
        "replay": meta.get("replay"),
    }
    assert tuple(line) == JSONL_FIELDS
    return line


def write_jsonl(engine: DataEngine, session: str, stream: IO[str]) -> int:
    """Write the lines to ``stream``; returns the number of lines (= steps)."""
    rec = engine.get_session(session)
    n = 0
    for step in engine.get_steps(rec.id):
        stream.write(json.dumps(step_line(rec, step), ensure_ascii=False) + "\n")
        n += 1
    return n


def export_jsonl(engine: DataEngine, session: str, output: Path | str) -> int:
    path = Path(output)
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8") as fh:
        return write_jsonl(engine, session, fh)
