"""A session's time: the segments it ran in, its ACTIVE time and its WALL time.

A session runs in one segment per ``run`` and per ``resume``. A segment starts at the session's
``started_at`` (the run) or at a ``resume`` event; it ends at an ``interrupted`` event (the runner
writes one whenever a segment stops without ending the session), else at the last record the
segment left (a process killed without a word), else — the last segment — at ``ended_at``, or now
while it still runs. No schema change: both event kinds are ordinary session events.

- **active** is the sum of the segments: how long the task took, what ``RunResult.elapsed_s``
  and the run summary report.
- **wall** is first start to last end, the time spent stopped included.

The step offsets (``T+mm:ss``) stay on the session clock (wall time since ``started_at``), so a
transcript frozen before an interruption stays true after it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from artemis_cli.engine.clock import parse_iso, utc_now

#: Event kinds that bound segments.
INTERRUPTED_EVENT = "interrupted"
RESUME_EVENT = "resume"
#: A resume bringing a simulated phone to where the session was (``resume.restore_sim``).
FAST_FORWARD_EVENT = "fast_forward"


@dataclass(frozen=True)
class Segment:
    """One run or resume of a session: from ``start`` to ``end`` on ``device``; ``stop`` says why
    it stopped short of the session's end ("" for the last segment, or when nothing was written)."""

    start: datetime
    end: datetime
    device: str
    resumed: bool  # started by `artemis resume`
    after_step: int = 0  # the last step recorded before this segment started
    stop: str = ""
    stopped_after_step: int | None = None

    @property
    def seconds(self) -> float:
        return max(0.0, (self.end - self.start).total_seconds())


@dataclass(frozen=True)
class SessionTime:
    segments: list[Segment] = field(default_factory=list)

    @property
    def active_s(self) -> float:
        return sum(s.seconds for s in self.segments)

    @property
    def wall_s(self) -> float:
        if not self.segments:
            return 0.0
        return max(0.0, (self.segments[-1].end - self.segments[0].start).total_seconds())

    @property
    def interruptions(self) -> int:
        return max(0, len(self.segments) - 1)

    def text(self) -> str:
        return time_text(self.active_s, self.wall_s, self.interruptions)

    def to_dict(self) -> dict[str, Any]:
        return {"active_s": round(self.active_s, 3), "wall_s": round(self.wall_s, 3),
                "interruptions": self.interruptions,
                "segments": [{"start": s.start.isoformat(timespec="milliseconds"),
                              "end": s.end.isoformat(timespec="milliseconds"), "seconds": round(s.seconds, 3),
                              "device": s.device, "resumed": s.resumed, "after_step": s.after_step,
                              "stop": s.stop, "stopped_after_step": s.stopped_after_step}
                             for s in self.segments]}


def time_text(active_s: float, wall_s: float, interruptions: int) -> str:
    """``0.4s active · 118.5s wall (1 interruption)``; never interrupted: ``0.4s`` (both are one)."""
    if not interruptions:
        return f"{active_s:.1f}s"
    plural = "" if interruptions == 1 else "s"
    return f"{active_s:.1f}s active · {wall_s:.1f}s wall ({interruptions} interruption{plural})"


@dataclass(frozen=True)
class Stop:
    """Where a segment stopped short: after which step, why, when; when (and on what device) the
    session went on, if it did."""

    after_step: int
    reason: str  # SIGINT, model_unavailable, … ; "no stop recorded" for a process that just ended
    at: datetime
    resumed_at: datetime | None = None
    device: str = ""

    @property
    def gap_s(self) -> float | None:
        return None if self.resumed_at is None else max(0.0, (self.resumed_at - self.at).total_seconds())

    def text(self) -> str:
        """``interrupted after step 3 (SIGINT) at 2024-05-01 09:30:12 UTC; resumed 118.1s later on sim``"""
        line = f"interrupted after step {self.after_step} ({self.reason}) at {self.at:%Y-%m-%d %H:%M:%S} UTC"
        if self.resumed_at is None:
            return line + "; not resumed"
        return line + f"; resumed {self.gap_s:.1f}s later on {self.device or 'the same device'}"


def stops(timing: SessionTime) -> list[Stop]:
    """Every stop of the session in order: each segment but a last one that ended the session."""
    found = []
    segments = timing.segments
    for i, seg in enumerate(segments):
        nxt = segments[i + 1] if i + 1 < len(segments) else None
        if nxt is None and not seg.stop:
            continue
        after = seg.stopped_after_step if seg.stopped_after_step is not None else (nxt.after_step if nxt else 0)
        reason = "no stop recorded" if seg.stop == "stopped" else seg.stop
        found.append(Stop(int(after or 0), reason, seg.end, nxt.start if nxt else None, nxt.device if nxt else ""))
    return found


def session_time(engine: Any, rec: Any, *, now: datetime | None = None, running: bool | None = None) -> SessionTime:
    """The segments of session ``rec`` from its records. ``running``: the last segment is still
    going (default: the session's status is ``running`` and it has no ``ended_at`` after its last
    resume); it then ends ``now``."""
    if not rec.started_at:
        return SessionTime()
    now = now or utc_now()
    events = engine.events(rec.id)
    marks = sorted(((parse_iso(e.created_at), e) for e in events
                    if e.kind in (INTERRUPTED_EVENT, RESUME_EVENT) and e.created_at),
                   key=lambda mark: mark[0])  # stable: two marks in one millisecond keep their id order
    record_times: list[datetime] = []
    ended = parse_iso(rec.ended_at) if rec.ended_at else None
    start, device, resumed, after = parse_iso(rec.started_at), rec.device_serial or "", False, 0
    stop: tuple[datetime, Any] | None = None
    segments: list[Segment] = []

    def close(until: datetime | None) -> None:
        if stop is not None:
            end, why = stop[0], stop[1].payload
            segments.append(Segment(start, end, device, resumed, after, str(why.get("reason") or "interrupted"),
                                    why.get("after_step")))
            return
        if not record_times:  # a stop that left no event: where its last record was (read once)
            record_times.extend(parse_iso(t) for t in _record_times(engine, rec.id, events))
        inside = [t for t in record_times if t >= start and (until is None or t < until)]
        end = max(inside, default=start)
        segments.append(Segment(start, end, device, resumed, after, "" if until is None else "stopped", None))

    for moment, event in marks:
        if event.kind == INTERRUPTED_EVENT:
            if stop is None:
                stop = (moment, event)
            continue
        close(moment)
        start, resumed, stop = moment, True, None
        device = str(event.payload.get("device") or device)
        after = int(event.payload.get("after_step") or 0)
    if running is None:
        running = rec.status == "running" and (ended is None or ended < start)
    if stop is None and running:
        segments.append(Segment(start, max(now, start), device, resumed, after))
    elif stop is None and ended is not None and ended >= start:
        segments.append(Segment(start, ended, device, resumed, after))
    else:
        close(None)
    return SessionTime(segments)


def _record_times(engine: Any, session_id: str, events: list[Any]) -> list[str]:
    """Every timestamp the session's steps and events left: where a silent stop ended a segment.
    A ``fast_forward`` event is the next segment's preparation (a resume restoring a simulated
    phone, before its ``resume`` event), not a sign of the stopped one being alive."""
    times = [e.created_at for e in events if e.created_at and e.kind != FAST_FORWARD_EVENT]
    for started_at, ended_at in engine.step_times(session_id):
        times += [t for t in (started_at, ended_at) if t]
    return times
