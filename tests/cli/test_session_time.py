"""Active time and wall time, with interruptions and resumes marked (issue 23 item 10).

A session recorded with fixed timestamps (two segments, 118 s stopped between them) pins the
rendering in ``sessions show`` and the report; a real run stopped by Ctrl-C and resumed shows that
the runner writes the segments' bounds and that ``RunResult.elapsed_s`` is the ACTIVE time."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from golden_files import assert_golden
from typer.testing import CliRunner

from artemis_cli.cli.app import app
from artemis_cli.config.profile import load_profile
from artemis_cli.config.task import load_task
from artemis_cli.engine.clock import to_iso
from artemis_cli.engine.db import DataEngine
from artemis_cli.engine.records import EventRecord, SessionRecord
from artemis_cli.engine.segments import session_time, stops
from artemis_cli.models.base import ModelRequest, ModelResponse
from artemis_cli.models.offline.scripted import ScriptedModel
from artemis_cli.models.registry import reference_script
from artemis_cli.resume import resume_session
from artemis_cli.runner import run_task
from artemis_cli.sim.phone import SimPhone
from artemis_cli.stopping import SessionInterrupted

REPO = Path(__file__).resolve().parents[2]
GOLDEN = Path(__file__).parent / "golden"
T0 = datetime(2026, 5, 1, 9, 30, 0, tzinfo=UTC)


def _at(seconds: float) -> str:
    return to_iso(T0 + timedelta(seconds=seconds))


def _two_segments(engine: DataEngine, *, finished: bool = True) -> str:
    """Run 0.3 s, Ctrl-C after step 1, resumed 118.1 s later on emulator-5554, 0.1 s more."""
    sid = engine.create_session(SessionRecord(id="20260501-093000-abcd", goal="Open the clock", task_id="demo",
                                              device_serial="sim", device_kind="sim", started_at=_at(0)))
    engine.record_event(EventRecord(session_id=sid, kind="interrupted", created_at=_at(0.3),
                                    payload={"after_step": 1, "reason": "SIGINT"}))
    engine.finish_session(sid, "interrupted", {"message": "stopped"})
    engine.update_session(sid, ended_at=_at(0.3))
    engine.record_event(EventRecord(session_id=sid, kind="resume", created_at=_at(118.4),
                                    payload={"after_step": 1, "entries": 1, "device": "emulator-5554"}))
    if finished:
        engine.finish_session(sid, "succeeded", {"message": "done"})
        engine.update_session(sid, ended_at=_at(118.5))
    return sid


def test_active_and_wall_time_of_two_segments(engine: DataEngine) -> None:
    timing = session_time(engine, engine.get_session(_two_segments(engine)))
    assert round(timing.active_s, 3) == 0.4 and round(timing.wall_s, 3) == 118.5
    assert timing.text() == "0.4s active · 118.5s wall (1 interruption)"
    [stop] = stops(timing)
    assert stop.text() == ("interrupted after step 1 (SIGINT) at 2026-05-01 09:30:00 UTC; "
                           "resumed 118.1s later on emulator-5554")


def test_marks_in_the_same_millisecond_keep_their_order(engine: DataEngine) -> None:
    """A resume stopped at once: its resume and interrupted events share a timestamp."""
    sid = _two_segments(engine, finished=False)
    engine.record_event(EventRecord(session_id=sid, kind="interrupted", created_at=_at(118.4),
                                    payload={"after_step": 1, "reason": "SIGINT"}))
    timing = session_time(engine, engine.get_session(sid), running=False)
    assert len(timing.segments) == 2 and round(timing.active_s, 3) == 0.3  # the resume lasted 0 s


def test_a_silent_stop_ends_its_segment_at_its_last_record(engine: DataEngine) -> None:
    """A process killed without a word (no ``interrupted`` event): its segment ends at its last
    record, not at the resume."""
    sid = engine.create_session(SessionRecord(id="s-killed", goal="g", device_serial="sim", started_at=_at(0)))
    engine.record_event(EventRecord(session_id=sid, kind="setup", created_at=_at(2), payload={}))
    engine.record_event(EventRecord(session_id=sid, kind="resume", created_at=_at(60), payload={"after_step": 3}))
    engine.finish_session(sid, "failed", {})
    engine.update_session(sid, ended_at=_at(61))
    timing = session_time(engine, engine.get_session(sid))
    assert (round(timing.active_s, 3), round(timing.wall_s, 3), timing.interruptions) == (3.0, 61.0, 1)
    assert stops(timing)[0].text().startswith("interrupted after step 3 (no stop recorded) at")


def _show(data: Path, *args: str) -> str:
    res = CliRunner().invoke(app, ["sessions", "show", *args, "--data-dir", str(data)],
                             env={"COLUMNS": "100", "NO_COLOR": "1"})
    assert res.exit_code == 0, res.output
    return res.output


def test_sessions_show_marks_the_interruption(tmp_path: Path) -> None:
    data = tmp_path / "data"
    with DataEngine.open(data) as engine:
        sid = _two_segments(engine)
    text = _show(data, sid)
    assert_golden(GOLDEN / "sessions_show_interrupted.txt", text)
    assert "time: 0.4s active · 118.5s wall (1 interruption)" in text
    timing = json.loads(_show(data, sid, "--json"))["time"]
    assert (timing["active_s"], timing["wall_s"], timing["interruptions"]) == (0.4, 118.5, 1)
    assert [s["device"] for s in timing["segments"]] == ["sim", "emulator-5554"]


def test_the_report_marks_the_interruption(tmp_path: Path) -> None:
    from artemis_cli.report.html import build_report

    with DataEngine.open(tmp_path / "data") as engine:
        html = build_report(engine, _two_segments(engine))
    assert "<dt>active time</dt><dd>0.4 s</dd>" in html and "<dt>wall time</dt><dd>1 min 58 s</dd>" in html
    assert "<dt>interruptions</dt><dd>1: after step 1 (SIGINT), resumed</dd>" in html
    band = html[html.index("<section class='band stop'"):]
    assert_golden(GOLDEN / "report_stop_band.html", band[:band.index("</section>") + len("</section>")] + "\n")


class StopOnce:
    """The scripted model; Ctrl-C once, when asked for call ``at``; the script goes on after it."""

    offline = True
    name = "scripted"
    label = "scripted"

    def __init__(self, inner: ScriptedModel, at: int) -> None:
        self.inner, self.at, self.calls = inner, at, 0

    def generate(self, request: ModelRequest) -> ModelResponse:
        self.calls += 1
        if self.calls == self.at:
            raise KeyboardInterrupt
        return self.inner.generate(request)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)


def _shift(engine: DataEngine, sid: str, seconds: float) -> None:
    """Move everything the session has recorded so far ``seconds`` into the past (time spent stopped)."""
    def back(text: str | None) -> str | None:
        return None if text is None else to_iso(datetime.fromisoformat(text) - timedelta(seconds=seconds))

    db = engine.db
    for table, owner, cols in (("sessions", "id", ("started_at", "ended_at")), ("events", "session_id", ("created_at",)),
                               ("steps", "session_id", ("started_at", "ended_at"))):
        for row in db.execute(f"SELECT id, {', '.join(cols)} FROM {table} WHERE {owner} = ?", [sid]).fetchall():
            sets = ", ".join(f"{c} = ?" for c in cols)
            db.execute(f"UPDATE {table} SET {sets} WHERE id = ?", [*(back(v) for v in row[1:]), row[0]])
    db.commit()


@pytest.mark.parametrize("at", [2])
def test_a_resumed_run_reports_active_time_not_the_time_stopped(engine: DataEngine, at: int,
                                                                capsys: pytest.CaptureFixture[str]) -> None:
    task = load_task(REPO / "tasks" / "demo.yaml")
    assert task.sim is not None
    phone = SimPhone(world=task.sim.world, seed=task.sim.seed, popups=task.sim.popups)
    model = StopOnce(ScriptedModel(reference_script(task)), at)
    with pytest.raises(SessionInterrupted) as info:
        run_task(task, load_profile("flash"), phone, model, engine, real_time=False)
    sid = info.value.session_id
    [stopped] = engine.events(sid, kind="interrupted")
    assert stopped.payload == {"after_step": 1, "reason": "SIGINT"}
    _shift(engine, sid, 100)
    result = resume_session(sid, engine, device=phone, model=model, real_time=False)
    assert result.status == "succeeded", result.message
    assert result.interruptions == 1 and result.wall_s >= 100 > 30 > result.elapsed_s > 0
    stored = engine.get_session(sid).result or {}
    assert (stored["elapsed_s"], stored["wall_s"], stored["interruptions"]) == (
        result.elapsed_s, result.wall_s, 1)
    [resumed] = engine.events(sid, kind="resume")
    assert resumed.payload["device"] == phone.info().serial
    from artemis_cli.cli.run_cmd import print_summary

    print_summary(result)
    row = next(line for line in capsys.readouterr().out.splitlines() if "│ time" in line)
    assert f"{result.elapsed_s:.1f}s active · {result.wall_s:.1f}s wall (1 interruption)" in row
