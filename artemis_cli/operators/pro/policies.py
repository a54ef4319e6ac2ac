"""Context policies of the Pro auxiliary agents (SPEC §9): ONE table, one declaration per agent,
and ``compile_view`` which builds an agent's history view from the DataEngine.

A compiled view (format pinned by tests/pro/golden/compiled_*.txt)::

    # HISTORY (steps 1–20)
    ## Earlier history (chunk digests)
    [Chunk 1 | Open Settings | Steps 1–6 | T+00:00 → T+01:10]
    <band ① summary lines, as the loop passes them>

    ## Earlier steps (ledger)
    - Step 7 (T+01:15): tap Button "Network" (id net) @(540,700) -> ok

    ## Recent steps 13–20
    User @ Step 13: "also check Bluetooth"
    - Step 13 (T+03:05): tap Switch "Wi-Fi" (id wifi_switch) @(962,348) -> ok; validator: progress "the switch reads ON"
      - recovery: press_key back -> ok
      milestone: Turn on Wi-Fi (m:1a2b3c4d5e)
      thought: "…"
      summary: Settings screen; the Wi-Fi switch reads ON.

    ## Notes
    - "wifi_name" (Step 9): "HomeNet"

Older steps are shown through the chunk digests the loop passes (their ``Steps a–b`` header
ranges are read back, so steps they cover are not repeated); older steps no digest covers are
shown as one ledger line each (``older_ledger``), so every step stays readable with its number
and time. User lines are always verbatim.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from artemis_cli.engine.db import DataEngine
from artemis_cli.engine.records import StepRecord
from artemis_cli.memory.ledger_lines import ledger_lines, quote
from artemis_cli.memory.notes import list_notes
from artemis_cli.perception.model_image import scale_for_model

from .failure_analyzer import recovery_lines

__all__ = ["CONTEXT_POLICIES", "SCREENSHOT_LABELS", "ContextPolicy", "compile_view", "digest_ranges", "policy_for",
           "screenshots_for"]

_RANGE_RE = re.compile(r"Steps? (\d+)(?:\s*[–-]\s*(\d+))?")
_WS = re.compile(r"\s+")
MAX_THOUGHT_CHARS = 240
MAX_SUMMARY_CHARS = 600
MAX_NOTE_CHARS = 200


@dataclass(frozen=True)
class ContextPolicy:
    """What history an auxiliary agent sees."""

    #: the newest N steps in full (ledger line + milestone/verdict, thought, summary lines)
    recent_steps: int
    #: older history through the chunk digests the loop passes (header + band ① lines)
    chunk_digests: bool
    #: older steps that no digest covers, one ledger line each
    older_ledger: bool
    #: the session's notes (newest version of each key written up to the step)
    include_notes: bool
    #: ready visual summaries of the recent steps
    include_summaries: bool
    #: the operator's thought of each recent step
    include_thoughts: bool = False
    #: milestone stamp and validator verdict of each recent step
    include_verdicts: bool = True
    #: the screenshots the agent is sent (``SCREENSHOT_LABELS``): ``pre`` / ``post`` of the step it
    #: judges, ``current``: the screen now; scaled like the operator's, without marks
    screenshots: tuple[str, ...] = ()


#: How each screenshot is introduced in an agent's request (it follows the request text).
SCREENSHOT_LABELS: dict[str, str] = {
    "pre": "Screenshot before the action:",
    "post": "Screenshot after the action:",
    "current": "Screenshot of the current screen:",
}


#: THE table: one declaration per auxiliary agent.
CONTEXT_POLICIES: dict[str, ContextPolicy] = {
    "planner": ContextPolicy(
        recent_steps=8, chunk_digests=True, older_ledger=True, include_notes=True, include_summaries=True,
        screenshots=("current",),
    ),
    "validator": ContextPolicy(
        recent_steps=2, chunk_digests=False, older_ledger=False, include_notes=False, include_summaries=False,
        screenshots=("pre", "post"),
    ),
    "failure_analyzer": ContextPolicy(
        recent_steps=6,
        chunk_digests=False,
        older_ledger=False,
        include_notes=False,
        include_summaries=True,
        include_thoughts=True,
    ),
    "checker": ContextPolicy(
        recent_steps=12, chunk_digests=True, older_ledger=True, include_notes=True, include_summaries=True
    ),
}


def policy_for(role: str) -> ContextPolicy:
    try:
        return CONTEXT_POLICIES[role]
    except KeyError:
        raise KeyError(f"no context policy for {role!r}; known: {', '.join(CONTEXT_POLICIES)}") from None


def screenshots_for(role: str, max_side: int | None, **pngs: bytes | None) -> list[tuple[str, bytes]]:
    """(label, PNG) of the screenshots ``role``'s policy sends, in its order, each scaled to
    ``max_side`` (the operator's ``screenshot.max_side``); one the caller lacks is left out."""
    out = []
    for kind in policy_for(role).screenshots:
        png = pngs.get(kind)
        if png:
            out.append((SCREENSHOT_LABELS[kind], scale_for_model(png, max_side)))
    return out


def _flat(text: str, limit: int) -> str:
    text = _WS.sub(" ", text).strip()
    return text if len(text) <= limit else text[:limit] + "…"


def digest_ranges(chunk_digests: Sequence[str]) -> list[tuple[int, int]]:
    """The ``Steps a–b`` range named in each digest's first line (digests without one: skipped)."""
    out: list[tuple[int, int]] = []
    for digest in chunk_digests:
        first = digest.strip().split("\n", 1)[0]
        m = _RANGE_RE.search(first)
        if m:
            a = int(m.group(1))
            b = int(m.group(2) or a)
            out.append((min(a, b), max(a, b)))
    return out


def _recoveries(engine: DataEngine, session_id: str, start: int, end: int) -> dict[int, list[str]]:
    return recovery_lines(engine, session_id, start, end)


def _step_block(step: StepRecord, recoveries: list[str], policy: ContextPolicy) -> list[str]:
    lines = ledger_lines(step, recoveries)
    if policy.include_verdicts:
        bits = []
        if step.subgoal_hash or step.milestone:
            title = _flat(step.milestone or "", 120)
            tag = f"(m:{step.subgoal_hash})" if step.subgoal_hash else ""
            bits.append("milestone: " + " ".join(b for b in (title, tag) if b))
        # the validator's verdict is on the ledger line itself (band ③), not repeated here
        if bits:
            lines.append("  " + " · ".join(bits))
    if policy.include_thoughts and step.thought:
        lines.append("  thought: " + quote(_flat(step.thought, 10_000), MAX_THOUGHT_CHARS))
    if policy.include_summaries and step.summary_status == "ready" and step.summary:
        lines.append("  summary: " + _flat(step.summary, MAX_SUMMARY_CHARS))
    return lines


def compile_view(
    engine: DataEngine,
    session_id: str,
    policy: ContextPolicy,
    upto_step: int,
    chunk_digests: Sequence[str] = (),
) -> str:
    """An agent's history view of steps 1..``upto_step`` under ``policy`` (see module docstring)."""
    if upto_step < 1:
        return "# HISTORY\n(no steps yet)"
    steps = engine.get_steps(session_id, 1, upto_step)
    if not steps:
        return "# HISTORY\n(no steps yet)"
    last = steps[-1].number
    recent_start = max(1, last - max(0, policy.recent_steps) + 1) if policy.recent_steps > 0 else last + 1
    out = [f"# HISTORY (steps 1–{last})"]

    covered: list[tuple[int, int]] = []
    if policy.chunk_digests and chunk_digests:
        covered = digest_ranges(chunk_digests)
        out.append("## Earlier history (chunk digests)")
        for digest in chunk_digests:
            out.append(digest.strip())
        out.append("")

    if policy.older_ledger:
        older = [
            s
            for s in steps
            if s.number < recent_start and not any(a <= s.number <= b for a, b in covered)
        ]
        if older:
            out.append("## Earlier steps (ledger)")
            for s in older:
                out += ledger_lines(s)
            out.append("")

    recent = [s for s in steps if s.number >= recent_start]
    if recent:
        rec = _recoveries(engine, session_id, recent[0].number, recent[-1].number)
        a, b = recent[0].number, recent[-1].number
        out.append(f"## Recent step {a}" if a == b else f"## Recent steps {a}–{b}")
        for s in recent:
            out += _step_block(s, rec.get(s.number, []), policy)
        out.append("")

    if policy.include_notes:
        notes = [n for n in list_notes(engine, session_id) if n.step is None or n.step <= upto_step]
        if notes:
            out.append("## Notes")
            for n in notes:
                where = f" (Step {n.step})" if n.step is not None else ""
                out.append(f"- {quote(n.key)}{where}: {quote(n.content, MAX_NOTE_CHARS)}")
            out.append("")
    return "\n".join(out).rstrip("\n")
