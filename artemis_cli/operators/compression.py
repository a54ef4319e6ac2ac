"""Compression events (SPEC §10.3): close segments, summarise them in the background, swap them
into F when ready, fold eras and period paragraphs, and take the L3 snapshot at the hard ratio.

A trigger only *closes* a segment and dispatches its chunk lens; the raw turns stay in A until
the chunk is ready, and the swap happens at the next render after that (ready-gated), never
leaving fewer than ``min_active_steps`` steps in A. Swaps go in order (only the ready
contiguous prefix swaps), so a segment whose lens gives up would hold back every later one: it
keeps its raw turns and is re-sent (to the fallback chunk lens when there is one) at the next
trigger — a segment closing, or the context at or above the soft ratio — at most one re-send
per event and ``max_resends`` per segment; after that only the hard threshold forces it out (as
a ledger-only chunk).

F is kept within ``frozen_budget_tokens``: a swap appends its chunk (F text = old F text, a
blank line, the chunk) and folds when F is over its limits (chunks into eras, eras into period
paragraphs, periods merged — :meth:`FrozenHistory.fold`). The L3 snapshot at the hard ratio is
taken only when it shrinks F (a snapshot that would not is counted in ``snapshots_skipped``), at
most once per ``emergency_interval_steps`` turns, and (when the turn's request can be measured)
only when forcing the closed segments out and scrubbing A's older screenshots did not already
bring the request within the budget (so it leaves room and does not re-fire).

The budget is a hard limit (:meth:`Compressor.on_turn` with ``measure``): when the turn's request
is still over ``budget_tokens`` after the triggers, the mechanical emergency level (no model call)
forces every step above ``min_active_steps`` out (ledger-only where the lens is not ready — also a
segment whose lens failed), scrubs A's older screenshots early, then takes the snapshot if its
interval allows. Only if that is not enough — the floor case, which the start check
(:mod:`artemis_cli.operators.budget_floor`) keeps from happening — does it go below the minimum
active window (and then A's last screenshots), recording a ``budget_floor`` event.
A new F text that does not start with the previous one is a *rewrite* (it breaks the cached
prefix): ``f_rewrites`` counts them, and :func:`session_f_rewrites` counts them from the record.

Every F change is one ledger decision carrying the F operations and the resulting text, so a
resumed session rebuilds the same F without a model call.
"""

from __future__ import annotations

import copy
import json
import math
import threading
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

from artemis_cli.engine.db import DataEngine
from artemis_cli.engine.records import EventRecord
from artemis_cli.memory.chunk_lens import ChunkJob, ChunkLensError, ChunkSummarizer, run_chunk_lens
from artemis_cli.memory.chunk_store import ChunkRow, append_chunk_version, newest_chunks
from artemis_cli.memory.frozen import (
    FrozenHistory,
    add_op,
    build_chunk,
    fold_op,
    is_rewrite,
    snapshot_op,
)
from artemis_cli.memory.jobs import BackgroundJobs
from artemis_cli.memory.ledger import LedgerDecision, LedgerEntry, TranscriptLedger
from artemis_cli.memory.notes import notes_written
from artemis_cli.memory.restore import LEDGER_EVENT
from artemis_cli.operators.pro.failure_analyzer import recovery_lines

RESEND_EVENT = "chunk_resend"
SNAPSHOT_SKIPPED_EVENT = "snapshot_skipped"
#: the hard limit had to go below the minimum active window (the floor case)
BUDGET_FLOOR_EVENT = "budget_floor"
#: F's budget when the profile names none: this share of the context budget, at least
#: MIN_FROZEN_BUDGET tokens.
FROZEN_SHARE = 0.025
MIN_FROZEN_BUDGET = 1000
#: A snapshot is taken only when it saves at least this share of F's tokens (and SNAPSHOT_MIN_GAIN).
SNAPSHOT_GAIN = 0.1
SNAPSHOT_MIN_GAIN = 200


def count_f_rewrites(texts: list[str]) -> int:
    """How many F texts in order (each ``frozen`` decision's) do not start with the one before."""
    count, previous = 0, ""
    for text in texts:
        if is_rewrite(previous, text):
            count += 1
        previous = text
    return count


def session_f_rewrites(engine: DataEngine, session_id: str) -> int:
    """F rewrites of a session, from its recorded ``frozen`` ledger decisions."""
    texts = [str(ev.payload.get("text") or "") for ev in engine.events(session_id, kind=LEDGER_EVENT)
             if ev.payload.get("op") == "frozen"]
    return count_f_rewrites(texts)


def entry_source_tokens(ledger: TranscriptLedger, entry: LedgerEntry) -> int:
    """Estimated tokens a step contributes to A once scrubbed (what a chunk would replace)."""
    text = ledger.scrubbed_observation(entry.step, entry.observation) + (entry.image_text or "")
    calls = json.dumps([m.to_dict() for m in entry.turn], ensure_ascii=False)
    return math.ceil((len(text) + len(calls)) / 4)


@dataclass(frozen=True)
class CompressionPolicy:
    max_steps: int = 12
    target_source_tokens: int = 2000
    min_active_steps: int = 5
    max_chunks: int = 8
    max_eras: int | None = None
    budget_tokens: int = 80_000
    soft_ratio: float = 0.7
    hard_ratio: float = 0.9
    retries: int = 3
    max_resends: int = 3
    frozen_budget_tokens: int | None = None  # None: FROZEN_SHARE of budget_tokens
    emergency_interval_steps: int = 12  # the L3 snapshot at most once per this many turns
    image_scrub_depth: int = 3  # the emergency level keeps the screenshots of depth below it

    def frozen_budget(self) -> int:
        if self.frozen_budget_tokens is not None:
            return self.frozen_budget_tokens
        return max(MIN_FROZEN_BUDGET, round(self.budget_tokens * FROZEN_SHARE))

    @classmethod
    def from_profile(cls, profile: Any) -> CompressionPolicy:
        m = profile.memory
        return cls(
            max_steps=m.chunking.max_steps,
            target_source_tokens=m.chunking.target_source_tokens,
            min_active_steps=m.transcript.min_active_steps,
            max_chunks=m.chunking.max_chunks,
            max_eras=m.chunking.max_eras,
            budget_tokens=m.transcript.context_budget_tokens,
            soft_ratio=m.transcript.soft_ratio,
            hard_ratio=m.transcript.hard_ratio,
            retries=m.runtime.retry_limit,
            frozen_budget_tokens=m.chunking.frozen_budget_tokens,
            max_resends=m.chunking.max_resends,
            emergency_interval_steps=m.transcript.emergency_interval_steps,
            image_scrub_depth=m.transcript.image_scrub_depth,
        )


@dataclass
class Segment:
    start: int
    end: int
    milestone: str | None
    status: str = "pending"  # pending | ready | failed
    band1: dict[str, Any] | None = None
    band2: str = ""
    resends: int = 0


@dataclass
class Compressor:
    engine: DataEngine
    session_id: str
    ledger: TranscriptLedger
    policy: CompressionPolicy
    lens: ChunkSummarizer
    fallback: ChunkSummarizer | None = None
    goal: str = ""
    plan_state: Callable[[], str] = lambda: ""
    frozen: FrozenHistory = field(default_factory=FrozenHistory)
    segments: list[Segment] = field(default_factory=list)
    snapshots: int = 0
    snapshots_skipped: int = 0
    last_snapshot_at: int | None = None
    f_rewrites: int = 0
    resends: int = 0
    _closed: bool = False  # a segment closed in this turn (a re-send trigger)
    _hard_since: int | None = None  # the turn the context went (and stayed) at or above the hard ratio
    _snapshot_taken_at: int | None = None
    _forced_at: int | None = None  # the last turn the hard ratio forced closed segments out
    _pool: BackgroundJobs = field(init=False)  # the chunk lens jobs (``memory.jobs``): a stop ends them cleanly
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def __post_init__(self) -> None:
        self._pool = BackgroundJobs(1, "artemis-chunk", batch=self.engine.batch)

    # -- bookkeeping -------------------------------------------------------------------------

    def closed_through(self) -> int:
        return max([self.frozen.covered_end(), *(s.end for s in self.segments)])

    def open_entries(self) -> list[LedgerEntry]:
        after = self.closed_through()
        return [e for e in self.ledger.entries if e.step > after]

    # -- triggers ----------------------------------------------------------------------------

    def close(self, start: int, end: int, milestone: str | None) -> None:
        """Close steps start..end and dispatch their chunk lens (background)."""
        if end < start:
            return
        self._closed = True
        if milestone is None:  # closed by size or pressure: label it with the milestones it served
            served: list[str] = []
            for step in self.engine.get_steps(self.session_id, start, end):
                if step.milestone and step.milestone not in served:
                    served.append(step.milestone)
            milestone = " → ".join(served) or None
        seg = Segment(start, end, milestone)
        self.segments.append(seg)
        append_chunk_version(self.engine, ChunkRow(session_id=self.session_id, start_step=start, end_step=end, status="pending",
                                                   milestone=milestone))
        self._pool.submit(lambda: self._summarise(seg), f"chunk lens job for steps {start}-{end}")

    def _summarise(self, seg: Segment, resend: bool = False) -> None:
        steps = self.engine.get_steps(self.session_id, seg.start, seg.end)
        job = ChunkJob(self.session_id, seg.start, seg.end, seg.milestone, steps,
                       notes=notes_written(self.engine, self.session_id, seg.start, seg.end),
                       recoveries=self.recoveries(seg.start, seg.end))
        try:
            if resend:  # a re-send goes to the fallback lens when there is one
                bands = run_chunk_lens(job, self.fallback or self.lens, retries=self.policy.retries)
            else:
                bands = run_chunk_lens(job, self.lens, retries=self.policy.retries, fallback=self.fallback)
        except ChunkLensError as exc:
            with self._pool.commit():
                append_chunk_version(self.engine, ChunkRow(session_id=self.session_id, start_step=seg.start,
                                                           end_step=seg.end, status="failed", milestone=seg.milestone,
                                                           source=(f"resend {seg.resends}: " if resend else "")
                                                           + str(exc)[:200]))
            with self._lock:
                seg.status = "failed"
            return
        except Exception as exc:  # a lens must never take the run down: the raw turns stay
            if self._pool.cut_off():
                raise
            with self._lock:
                seg.status = "failed"
            with self._pool.commit():
                self.engine.record_event(EventRecord(session_id=self.session_id, step=None, kind="chunk_lens_error",
                                                     payload={"error": repr(exc)[:300], "start": seg.start,
                                                              "end": seg.end}))
            return
        chunk = build_chunk(steps, milestone=seg.milestone, band1=bands.band1, band2=bands.band2,
                            recoveries=job.recoveries)
        with self._pool.commit():
            append_chunk_version(self.engine, ChunkRow(session_id=self.session_id, start_step=seg.start,
                                                       end_step=seg.end, status="ready", milestone=seg.milestone,
                                                       band1=bands.band1, band2="\n".join(chunk.band2),
                                                       band3="\n".join(chunk.band3), rendered=chunk.render(),
                                                       source=bands.source))
        with self._lock:
            seg.band1, seg.band2, seg.status = bands.band1, "\n".join(chunk.band2), "ready"

    def recoveries(self, start: int, end: int) -> dict[int, list[str]]:
        return recovery_lines(self.engine, self.session_id, start, end)

    def _resend(self, step: int, why: str) -> Segment | None:
        """Re-send the oldest failed segment that has re-sends left (one per trigger or pressure
        event); records a pending chunk version and a ``chunk_resend`` event."""
        with self._lock:
            seg = next((s for s in self.segments if s.status == "failed" and s.resends < self.policy.max_resends), None)
            if seg is None:
                return None
            seg.status, seg.resends = "pending", seg.resends + 1
        self.resends += 1
        lens = self.fallback or self.lens
        append_chunk_version(self.engine, ChunkRow(session_id=self.session_id, start_step=seg.start, end_step=seg.end,
                                                   status="pending", milestone=seg.milestone,
                                                   source=f"resend {seg.resends} ({why}): {lens.source}"))
        self.engine.record_event(EventRecord(session_id=self.session_id, step=step, kind=RESEND_EVENT,
                                             payload={"start": seg.start, "end": seg.end, "resend": seg.resends,
                                                      "why": why, "lens": lens.source}))
        self._pool.submit(lambda: self._summarise(seg, True), f"chunk lens re-send for steps {seg.start}-{seg.end}")
        return seg

    def in_flight(self) -> int:
        return self._pool.in_flight()

    def flush(self, timeout_s: float) -> bool:
        """Wait up to ``timeout_s`` for the queued and running chunk jobs."""
        return self._pool.wait(timeout_s)

    def cancel_queued(self) -> None:
        """No new chunk job; the queued ones cancelled (the first half of :meth:`stop`)."""
        self._pool.cancel_queued()

    def stop(self, bound_s: float) -> None:
        """No new chunk job; queued ones cancelled, running ones cut off after ``bound_s`` (their
        chunk stays ``pending``; a resume closes those steps again)."""
        self._pool.stop(bound_s)

    # -- the turn ----------------------------------------------------------------------------

    def on_turn(self, step: int, context_tokens: int, milestone_switch: tuple[int, str | None] | None,
                measure: Callable[[], int] | None = None) -> list[LedgerDecision]:
        """Close segments whose trigger fired, then swap ready ones into F (decisions returned).
        ``measure`` gives the context of this turn's request as the decisions so far left it;
        with it the budget binds (:meth:`_bind`)."""
        p = self.policy
        self._closed = False
        open_entries = self.open_entries()
        if milestone_switch is not None and open_entries:
            switch_step, previous_milestone = milestone_switch
            ended = [e for e in open_entries if e.step < switch_step]
            if ended:
                self.close(ended[0].step, ended[-1].step, previous_milestone)
                open_entries = self.open_entries()
        # size: segments of at most max_steps turns or target_source_tokens, oldest first
        size, tokens = 0, 0
        for i, entry in enumerate(open_entries):
            size, tokens = size + 1, tokens + entry_source_tokens(self.ledger, entry)
            if size >= p.max_steps or tokens >= p.target_source_tokens:
                self.close(open_entries[i - size + 1].step, entry.step, None)
                size, tokens = 0, 0
        open_entries = self.open_entries()
        # pressure (soft ratio): close what is open, if it is worth a chunk (churn guard)
        pressure = context_tokens >= p.soft_ratio * p.budget_tokens
        if open_entries and pressure and len(open_entries) >= p.min_active_steps:
            self.close(open_entries[0].step, open_entries[-1].step, None)
        # a failed segment holds back every later swap: re-send it at a trigger or under pressure
        if self._closed or pressure:
            self._resend(step, "soft ratio" if pressure else "segment closed")
        # a swap rewrites everything after F: take it on the turns that scrub screenshots anyway
        # (one cache break, not two), or at once under pressure
        batch = self.ledger.settings.image_batch_turn(step)
        decisions = self._swap_ready(step) if batch or pressure else []
        hard = p.hard_ratio * p.budget_tokens
        now = measure() if measure is not None and decisions else context_tokens
        if now >= hard:
            if self._hard_since is None:
                self._hard_since = step
            decisions += self._hard(step, now - hard, measure)
        else:
            self._hard_since = None
        if measure is not None:
            decisions += self._bind(step, measure)
        return decisions

    def _swap_ready(self, step: int) -> list[LedgerDecision]:
        out: list[LedgerDecision] = []
        while self.segments:
            with self._lock:
                seg = self.segments[0]
                status = seg.status
            if seg.start <= self.frozen.covered_end():  # already forced out by a snapshot
                self.segments.pop(0)
                continue
            if status != "ready":
                break  # ready-gated, in order: a pending or failed segment keeps its raw turns
            remaining = [e for e in self.ledger.entries if e.step > seg.end]
            if len(remaining) < self.policy.min_active_steps:
                break
            steps = self.engine.get_steps(self.session_id, seg.start, seg.end)
            chunk = build_chunk(steps, milestone=seg.milestone, band1=seg.band1, band2=seg.band2,
                                recoveries=self.recoveries(seg.start, seg.end))
            added = self.frozen.add_chunk(chunk)
            ops = [add_op(added), *self._fold()]
            self.segments.pop(0)
            out.append(self._decision(step, seg.end, ops))
        return out

    def _fold(self) -> list[dict[str, Any]]:
        p = self.policy
        if self.frozen.fold(p.max_chunks, p.max_eras, budget=p.frozen_budget()):
            return [fold_op(p.max_chunks, p.max_eras, p.frozen_budget())]
        return []

    def _hard(self, step: int, overshoot: float = 0.0, measure: Callable[[], int] | None = None) -> list[LedgerDecision]:
        """L3, at most once per ``emergency_interval_steps`` turns: force every closed segment out
        (ledger-only where the lens is not ready), close what is above the floor, and — without
        ``measure`` (with it, only when the budget itself is at stake: :meth:`_bind`) — replace
        F by one session snapshot, only when that makes F clearly smaller, and, once a snapshot
        was taken in this stretch above the hard ratio without getting the context below it, only
        when it would by itself (``overshoot`` tokens). A snapshot not taken is counted
        (``snapshots_skipped``) and recorded (``snapshot_skipped`` event)."""
        interval = self.policy.emergency_interval_steps
        if measure is not None:  # the hard ratio forces closed segments out; the snapshot is _bind's
            if self._forced_at is not None and step - self._forced_at < interval:
                return []
            self._forced_at = step
            ops, last = self._force_ops(self.policy.min_active_steps)
            out: list[LedgerDecision] = []
            if ops:
                out.append(self._decision(step, max(last, self.frozen.covered_end()), ops))
                ops = []
            # the snapshot (a rewrite of F) waits until the budget itself is at stake (_bind)
            return out
        if self.last_snapshot_at is not None and step - self.last_snapshot_at < interval:
            return []
        if len(self.ledger.entries) <= self.policy.min_active_steps and self.frozen.is_empty():
            return []
        self.last_snapshot_at = step
        ops, last = self._force_ops(self.policy.min_active_steps)
        out = []
        if self.frozen.is_empty():
            return out
        ops += self._snapshot_ops(step, overshoot)
        if ops:
            out.append(self._decision(step, max(last, self.frozen.covered_end()), ops))
        return out

    def _force_ops(self, keep: int, split_ready: bool = False) -> tuple[list[dict[str, Any]], int]:
        """Force every step above the newest ``keep`` out of A into F: ready segments whole (a
        ready one reaching into the newest ``keep`` stays, unless ``split_ready``), the rest
        ledger-only (pending mark). Returns the F operations and the last step forced out."""
        movable = self.ledger.entries[: max(0, len(self.ledger.entries) - keep)]
        last = movable[-1].step if movable else self.frozen.covered_end()
        for seg in list(self.segments):
            if seg.start <= last < seg.end:
                if seg.status == "ready" and not split_ready and keep >= self.policy.min_active_steps:  # keep it whole
                    last = seg.start - 1
                else:  # emergency: its head goes out ledger-only, the rest returns to A's open part
                    self.segments.remove(seg)
        ops: list[dict[str, Any]] = []
        covered = self.frozen.covered_end()
        pending = [s for s in self.segments if s.end <= last]
        bounds: list[tuple[int, int, Segment | None]] = [(s.start, s.end, s) for s in pending]
        tail_start = max([covered, *(s.end for s in pending)]) + 1
        if tail_start <= last:
            bounds.append((tail_start, last, None))
        for start, end, part in bounds:
            if start <= covered:
                continue
            steps = self.engine.get_steps(self.session_id, start, end)
            ready = part is not None and part.status == "ready"
            chunk = build_chunk(steps, milestone=part.milestone if part else None,
                                band1=part.band1 if ready and part else None,
                                band2=part.band2 if ready and part else "",
                                recoveries=self.recoveries(start, end))
            ops.append(add_op(self.frozen.add_chunk(chunk)))
        self.segments = [s for s in self.segments if s.end > last]
        if ops:
            ops += self._fold()
        return ops, last

    def _snapshot_ops(self, step: int, overshoot: float) -> list[dict[str, Any]]:
        """The snapshot operation when it makes F clearly smaller (else counted as skipped)."""
        device = f"foreground app at step {step - 1}: " + (self._last_app() or "unknown")
        plan = self.plan_state()
        # a snapshot is a rewrite: take it only when it makes F clearly smaller
        before = self.frozen.tokens()
        preview = copy.deepcopy(self.frozen)
        preview.snapshot(self.goal, plan, device)
        after = preview.tokens()
        need = max(SNAPSHOT_MIN_GAIN, SNAPSHOT_GAIN * before)
        again = self._snapshot_taken_at is not None and self._hard_since is not None and (
            self._snapshot_taken_at >= self._hard_since)
        if again:  # the last one did not get the context below the hard ratio: this one must
            need = max(need, overshoot)
        if before - after >= need:
            self.frozen = preview
            self.snapshots += 1
            self._snapshot_taken_at = step
            return [snapshot_op(self.goal, plan, device)]
        self.snapshots_skipped += 1
        self.engine.record_event(EventRecord(session_id=self.session_id, step=step, kind=SNAPSHOT_SKIPPED_EVENT,
                                             payload={"f_tokens": before, "snapshot_tokens": after,
                                                      "needed": math.ceil(need)}))
        return []

    # -- the hard limit ----------------------------------------------------------------------

    def _bind(self, step: int, measure: Callable[[], int]) -> list[LedgerDecision]:
        """Keep this turn's request within ``budget_tokens``, mechanically (no model call): force
        out everything above ``min_active_steps``; scrub A's screenshots at ``image_scrub_depth`` or
        more early (what the scrub edge keeps on its batch turns stays); take the snapshot when its interval
        allows. Still over: the floor case (below the minimum window, then A's last screenshots,
        one step at a time), recorded as a ``budget_floor`` event."""
        limit = self.policy.budget_tokens
        before = measure()
        if before <= limit:
            return []
        out: list[LedgerDecision] = []
        ops, last = self._force_ops(self.policy.min_active_steps)
        if ops:
            out.append(self._decision(step, max(last, self.frozen.covered_end()), ops))
            if measure() <= limit:
                return out
        out += self._scrub_images(step, keep_depth=self.policy.image_scrub_depth, measure=measure, limit=limit)
        if measure() <= limit:
            return out
        if not self.frozen.is_empty() and (self.last_snapshot_at is None
                                           or step - self.last_snapshot_at >= self.policy.emergency_interval_steps):
            self.last_snapshot_at = step
            ops = self._snapshot_ops(step, measure() - limit)
            if ops:
                out.append(self._decision(step, self.frozen.covered_end(), ops))
            if measure() <= limit:
                return out
        # a ready segment reaching into the minimum window held steps back: its head goes out
        # ledger-only (its bands describe the whole range, so they cannot go with a part)
        ops, last = self._force_ops(self.policy.min_active_steps, split_ready=True)
        if ops:
            out.append(self._decision(step, max(last, self.frozen.covered_end()), ops))
            if measure() <= limit:
                return out
        # the floor case: the start check should have refused this budget (or this screen is huge)
        shrunk: list[str] = []
        while measure() > limit and self.ledger.entries:
            scrubbed = self._scrub_images(step, keep_depth=0, measure=measure, limit=limit)
            if scrubbed:
                out += scrubbed
                shrunk.append(f"{len(scrubbed)} screenshot(s) of A scrubbed")
                continue
            keep = len(self.ledger.entries) - 1
            ops, last = self._force_ops(keep)
            if not ops:
                break
            out.append(self._decision(step, max(last, self.frozen.covered_end()), ops))
            shrunk.append(f"active window down to {keep} step(s)")
        after = measure()
        self.engine.record_event(EventRecord(session_id=self.session_id, step=step, kind=BUDGET_FLOOR_EVENT,
                                             payload={"budget_tokens": limit, "before": before, "after": after,
                                                      "min_active_steps": self.policy.min_active_steps,
                                                      "shrunk": shrunk, "over": after > limit}))
        return out

    def _scrub_images(self, step: int, *, keep_depth: int, measure: Callable[[], int],
                      limit: int) -> list[LedgerDecision]:
        """Scrub A's screenshots of depth ``keep_depth`` or more, oldest first, until the request
        fits: each becomes its ready summary, or the unavailable / pending placeholder (the same
        decisions the scrub edge takes, taken early)."""
        from artemis_cli.memory.ledger import pending_placeholder, summary_text, unavailable_placeholder

        out: list[LedgerDecision] = []
        for entry in list(self.ledger.entries):
            if entry.image_state != "image" or not entry.image_sha or step - entry.step < max(1, keep_depth):
                continue
            rec = self.engine.get_step(self.session_id, entry.step)
            status, text = (rec.summary_status, rec.summary) if rec is not None else ("pending", None)
            if status == "ready" and text:
                d = LedgerDecision("image", at=step, step=entry.step, state="summary", text=summary_text(entry.step, text))
            elif status == "failed":
                d = LedgerDecision("image", at=step, step=entry.step, state="failed",
                                   text=unavailable_placeholder(entry.step))
            else:
                d = LedgerDecision("image", at=step, step=entry.step, state="pending", text=pending_placeholder(entry.step))
            self.ledger.apply(d)
            out.append(d)
            if measure() <= limit:
                break
        return out

    def _last_app(self) -> str | None:
        last = self.engine.last_step_number(self.session_id)
        return self.engine.get_step(self.session_id, last).foreground_app if last else None

    def _late_verdicts(self) -> list[dict[str, Any]]:
        """Checker verdicts that arrived (as new chunk versions) since a chunk went into F."""
        newest = {(r.start_step, r.end_step): r for r in newest_chunks(self.engine, self.session_id)}
        ops = []
        for chunk in self.frozen.chunks:
            row = newest.get((chunk.start, chunk.end))
            if row is not None and row.checker and row.checker != chunk.checker:
                ops.append({"op": "checker", "start": chunk.start, "end": chunk.end, "checker": row.checker})
        return ops

    def _apply_checker(self, op: dict[str, Any]) -> None:
        self.frozen.chunks = [
            replace(c, checker=op["checker"]) if (c.start, c.end) == (op["start"], op["end"]) else c
            for c in self.frozen.chunks
        ]

    def _decision(self, step: int, end: int, ops: list[dict[str, Any]]) -> LedgerDecision:
        # late checker verdicts reach F only now, at a compression event (SPEC §10.3)
        for op in self._late_verdicts():
            self._apply_checker(op)
            ops.append(op)
        text = self.frozen.render()
        if is_rewrite(self.ledger.f_body, text):
            self.f_rewrites += 1
        d = LedgerDecision("frozen", at=step, end=end, text=text, ops=json.dumps(ops))
        self.ledger.apply(d)
        return d

    # -- resume ------------------------------------------------------------------------------

    def restore(self, decisions: list[LedgerDecision]) -> None:
        """Rebuild F's structure from recorded decisions (their ops), no model call."""
        for d in decisions:
            if d.op == "frozen" and d.ops:
                for op in json.loads(d.ops):
                    if op.get("op") == "checker":
                        self._apply_checker(op)
                    else:
                        self.frozen.apply(op)
                if any(op.get("op") == "snapshot" for op in json.loads(d.ops)):
                    self.snapshots += 1
                    self.last_snapshot_at = d.at
        self.f_rewrites = session_f_rewrites(self.engine, self.session_id)
        self.resends = len(self.engine.events(self.session_id, kind=RESEND_EVENT))
        self.snapshots_skipped = len(self.engine.events(self.session_id, kind=SNAPSHOT_SKIPPED_EVENT))
