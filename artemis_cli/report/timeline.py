"""The timeline: one ``<article class='step'>`` per step and the chunk / era / period bands
between them. Everything from the device, a model or the database is escaped (:func:`e`)."""

from __future__ import annotations

import json
from typing import Any

from artemis_cli.engine.clock import format_offset
from artemis_cli.engine.records import StepRecord
from artemis_cli.engine.segments import Stop
from artemis_cli.memory.ledger_lines import action_phrase, describe_target, verdict_phrase
from artemis_cli.plural import counted
from artemis_cli.replay.kinds import KINDS, step_kind
from artemis_cli.report.charts import StepTokens
from artemis_cli.report.chunks import ChunkView
from artemis_cli.report.images import ImageStore, Thumb, marker_svg
from artemis_cli.report.levels import IN_FULL, TAG_MEANINGS, Level
from artemis_cli.report.summary import e

_STATUS_CLASS = {"ok": "ok", "finished": "ok", "no_change": "nochange"}  # the rest: "error"


def _shot(step: StepRecord, thumb: Thumb | None) -> str:
    if thumb is None:
        return "<div class='noshot'>no screenshot</div>"
    points: list[tuple[int, int]] = []
    if step.x is not None and step.y is not None:
        points.append((step.x, step.y))
        if step.x2 is not None and step.y2 is not None:
            points.append((step.x2, step.y2))
    alt = f"screen before step {step.number}"
    size = f"width='160' height='{max(1, round(thumb.thumb_height / 2))}'"
    if thumb.src is not None and thumb.full is None and thumb.src.startswith("data:"):  # first use: the data
        img = f"<img id='i-{thumb.key}' src='{thumb.src}' {size} loading='lazy' decoding='async' alt='{e(alt)}'>"
    elif thumb.src is not None:  # assets mode: a file beside the report
        img = f"<img src='{e(thumb.src)}' {size} loading='lazy' decoding='async' alt='{e(alt)}'>"
    else:  # seen before: the page script copies the first image's data
        img = f"<img data-same='{thumb.key}' {size} loading='lazy' decoding='async' alt='{e(alt)}'>"
    href = e(thumb.full) if thumb.full else "#"
    return (f"<a class='shotbox' href='{href}' data-key='{thumb.key}' title='full screenshot'>{img}"
            f"{marker_svg(step.action_type, points, thumb.width, thumb.height)}</a>")


def _element(step: StepRecord) -> str:
    target = step.target or {}
    described = describe_target(step.target)
    if not described:
        return ""
    extra = []
    if target.get("bounds"):
        extra.append("bounds " + ",".join(str(v) for v in target["bounds"]))
    if target.get("label_source"):
        extra.append(f"via {target['label_source']}")
    line = f"<p class='target'><span class='label'>element</span> {e(described)}"
    if extra:
        line += f" <span class='muted'>({e(' · '.join(extra))})</span>"
    end = describe_target(step.target_end)
    if end:
        line += f"<br><span class='label'>to</span> {e(end)}"
    return line + "</p>"


def _outcome(step: StepRecord) -> str:
    status = step.result_status
    cls = _STATUS_CLASS.get(status, "error")
    outcome = step.outcome or {}
    word = "no visible change" if status == "no_change" else status
    detail = step.result_detail or str(outcome.get("detail") or "")
    if detail == word:
        detail = ""
    parts = [f"<p class='result {cls}'>{e(status) if status != 'no_change' else e(word)}"
             f"{(' — ' + e(detail)) if detail else ''}</p>"]
    seen = str(outcome.get("summary") or "")
    if seen:
        parts.append(f"<p class='observed'>observed: {e(seen)}</p>")
    before, after = outcome.get("app_before"), outcome.get("app_after")
    if before and after and before != after and str(after) not in seen:
        parts.append(f"<p class='observed muted'>app: {e(before)} → {e(after)}</p>")
    elif outcome.get("screen_changed") is False and status == "ok":
        parts.append("<p class='observed muted'>the screen did not change</p>")
    parts += _log_lines(outcome)
    return "".join(parts)


def _log_lines(outcome: dict[str, Any]) -> list[str]:
    """The deciding crash's first frames, other apps' crashes and ANRs, error lines counted."""
    out = []
    fault = outcome.get("fault")
    if isinstance(fault, dict) and fault.get("frames"):
        frames = " · ".join(str(f) for f in fault["frames"])
        out.append(f"<p class='observed muted'>{e(str(fault.get('package') or ''))}: {e(frames)}</p>")
    logs = outcome.get("logs")
    if not isinstance(logs, dict):
        return out
    for other in logs.get("faults") or ():
        if not isinstance(other, dict) or (isinstance(fault, dict) and other == fault):
            continue
        what = "crashed" if other.get("kind") == "crash" else "not responding"
        out.append(f"<p class='observed muted'>log: {e(str(other.get('package') or ''))} {what} — "
                   f"{e(str(other.get('detail') or ''))}</p>")
    if logs.get("errors"):
        out.append(f"<p class='observed muted'>log: {e(str(logs['errors']))} other error line(s)</p>")
    return out


#: How a replay step found its element, in words (``ReplayStepResult.how``).
_FOUND = {"semantics": "element found by its text, id or description",
          "coordinates": "at the recorded coordinates (scaled to this screen)",
          "model": "a step of the healing model", "none": "the recorded element was not found"}


def replay_badge(kind: str | None, replay: dict[str, object]) -> str:
    """A replay step's kind (``replay.kinds``, its meaning on hover), source step and how its
    element was found; empty for a step of a run."""
    if kind is None:
        return ""
    how = str(replay.get("how") or "")
    found = _FOUND.get(how, how)
    source = replay.get("source_step")
    where = " · ".join(x for x in (f"recorded step {source}" if source is not None else "", found) if x)
    return (f"<p><span class='replay {e(kind)}' title='{e(KINDS.get(kind, ''))}'>{e(kind)}</span> "
            f"<span class='muted'>{e(where)}</span></p>")


def step_card(step: StepRecord, images: ImageStore, tokens: StepTokens | None, level: str,
              replay_mark: str | None = None) -> str:
    """One step: screenshot with the action marker, thought, action with its element, outcome.
    ``replay_mark``: the step's final replay kind (``replay.lineage.marks``) for a replay."""
    meta = [format_offset(step.offset_ms or 0)]
    if step.foreground_app:
        meta.append(step.foreground_app)
    if tokens is not None and tokens.prompt:
        share = f" ({100 * tokens.share:.0f}% cached)" if tokens.share else ""
        meta.append(f"{tokens.prompt:,} prompt tokens{share}")
    lvl_cls = "verbatim" if level == IN_FULL else "folded"
    badge = replay_badge(step_kind(replay_mark, step.meta), (step.meta or {}).get("replay") or {})
    extra = []
    verdict = verdict_phrase(step.verdict, None)
    if verdict:
        extra.append(f"<p><span class='label'>validator</span> {e(verdict)}</p>")
    if step.summary:
        extra.append(f"<p><span class='label'>summary</span> {e(step.summary)}</p>")
    if step.user_instruction:
        extra.append(f"<p><span class='label'>user</span> {e(step.user_instruction)}</p>")
    thought = (f"<p class='thought'><span class='label'>thought</span> {e(step.thought)}</p>"
               if step.thought else "")
    intent = (f"<p class='intent'><span class='label'>intent</span> {e(step.intent)}</p>"
              if step.intent else "")
    return (
        f"<article class='step' id='step-{step.number}' data-step='{step.number}' tabindex='-1'>"
        f"{_shot(step, images.thumb(*images.view(step)))}<div class='body'>"
        f"<h3>Step {step.number} <span class='muted'>{e(' · '.join(meta))}</span> "
        f"<span class='lvl {lvl_cls}' title='how the model reads this step now (see How to read this report)'>{e(level)}</span></h3>"
        f"{badge}{thought}"
        f"<p class='action'><span class='label'>action</span> <code>{e(action_phrase(step))}</code></p>"
        f"{intent}"
        f"{_element(step)}{_outcome(step)}{''.join(extra)}</div></article>\n"
    )


def reading_legend() -> str:
    """What the tag on each step and the bands between steps mean, in plain words."""
    rows = "".join(f"<p><span class='lvl'>{e(tag)}</span> <span class='muted'>{e(meaning)}</span></p>"
                   for tag, meaning in TAG_MEANINGS.items())
    return ("<details id='legend'><summary>How to read this report</summary>"
            "<p>The tag after each step's number says how the model reads that step now: a long session "
            "keeps its recent steps in full and folds older ones into shorter summaries, so it fits the "
            "model's context. The bands between steps show those summaries where they start.</p>"
            f"{rows}</details>\n")


def chunk_band(chunk: ChunkView, level_now: str) -> str:
    """A chunk as a readable band: title, range, status, its fields one per line."""
    title = f"Chunk {chunk.number} · Steps {chunk.start_step}–{chunk.end_step}"
    if chunk.milestone:
        title += f" · {chunk.milestone}"
    status = f"{chunk.status} v{chunk.version}" + (f" · now in {level_now}" if level_now else "")
    lines = [f"<p><span class='k'>{e(label)}:</span> {e(text)}</p>" for label, text in chunk.fields]
    lines += [f"<p><span class='k'>Checker {e(label)}:</span> {e(text)}</p>" for label, text in chunk.checker]
    if not chunk.fields:
        lines.append("<p class='muted'>No chunk-lens fields (step ledger only).</p>")
    more = []
    if chunk.intervals:
        more.append(f"<details><summary>Intervals ({len(chunk.intervals)})</summary>"
                    + "".join(f"<p>{e(line)}</p>" for line in chunk.intervals) + "</details>")
    if chunk.ledger:
        more.append(f"<details><summary>Step ledger ({len(chunk.ledger)} lines)</summary>"
                    + "".join(f"<p>{e(line)}</p>" for line in chunk.ledger) + "</details>")
    return (f"<section class='band chunk' id='chunk-{chunk.number}' data-start='{chunk.start_step}' "
            f"data-end='{chunk.end_step}'><h3>{e(title)} <span class='muted'>{e(status)}</span></h3>"
            f"<div class='fields'>{''.join(lines)}</div>{''.join(more)}</section>\n")


def level_band(level: Level) -> str:
    """An era, a period paragraph or the session snapshot: its title and text lines."""
    lines = "".join(f"<p>{e(line)}</p>" for line in level.lines)
    return (f"<section class='band {e(level.kind)}' data-start='{level.start}' data-end='{level.end}'>"
            f"<h3>{e(level.title)}</h3>{lines}</section>\n")


def stop_band(stop: Stop) -> str:
    """Where the session stopped (after which step, why, when) and when and on what device it
    went on: between the last step before the stop and the first after it."""
    return (f"<section class='band stop' data-after='{stop.after_step}'><h3>Interrupted after step "
            f"{stop.after_step} <span class='muted'>{e(stop.reason)}</span></h3><p>{e(stop.text())}</p></section>\n")


#: How a Python API AI step came about, for its band (``library.cache``).
_HOW = {"model": "the model decided its steps", "cache": "replayed from the baseline, no model call",
        "healed": "replayed from the baseline; a model healed what diverged"}


def call_band(call: dict[str, Any]) -> str:
    """A Python API call that is not a plain step (``engine.records.LIBRARY_CALL_EVENT``): an AI
    step before its first step; a query, check or look before the step it preceded. The program's
    and the model's words are shown as text (escaped), never as markup."""
    kind = str(call.get("call", ""))
    failed = call.get("success") is False or call.get("passed") is False or call.get("seen") is False
    status = "<span class='bad'>failed</span>" if failed else "<span class='ok'>ok</span>"
    if kind in ("act", "tap_ai"):
        name = "phone.act" if kind == "act" else "phone.tap(ai=…)"
        title = f"{name} {e(_quoted(call.get('goal')))} · {status}"
        lines = [f"{_HOW.get(str(call.get('how')), str(call.get('how')))}; steps {call.get('first_step')}–"
                 f"{call.get('last_step')}; {counted(int(call.get('model_calls') or 0), 'model call')}", str(call.get("message") or "")]
    elif kind in ("query", "check"):
        asked = call.get("question") if kind == "query" else call.get("statement")
        title = f"phone.{kind} {e(_quoted(asked))} · {status}"
        answer = f"answer {json.dumps(call.get('answer'), ensure_ascii=False)[:300]} · " if kind == "query" else ""
        lines = [f"{answer}{call.get('model', '')}: {call.get('reason', '')}"]
    else:  # sees, wait_for, screen: looks, not steps
        what = f" {_quoted(call.get('text'))}" if call.get("text") is not None else ""
        title = f"phone.{e(kind)}{e(what)}" + (f" · {status}" if "seen" in call else "")
        lines = []
    body = "".join(f"<p>{e(line)}</p>" for line in lines if line)
    return f"<section class='band call'><h3>{title}</h3>{body}</section>\n"


def _quoted(text: Any) -> str:
    return json.dumps(str(text if text is not None else ""), ensure_ascii=False)
