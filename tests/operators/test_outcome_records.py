"""Action outcomes as records (SPEC §15, §5 invariant 4): stored on the step, shown by recall and
the report, re-rendered byte for byte, and replayed identically by a sim fast-forward."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import sqlite_utils
from outcome_support import record_storm, storm_task

from artemis_cli.engine.db import DataEngine
from artemis_cli.engine.migrations import MIGRATIONS, migrate
from artemis_cli.engine.records import SessionRecord, StepRecord
from artemis_cli.memory.recall import Recall
from artemis_cli.memory.turn_check import check_turn
from artemis_cli.operators.fastforward import fast_forward
from artemis_cli.report import build_report
from artemis_cli.sim.phone import SimPhone


def test_every_turn_of_a_storm_run_re_renders_to_its_recorded_request(tmp_path: Path) -> None:
    """The model saw each action's outcome in its function response; a rebuild from the DataEngine
    renders the same bytes (``artemis sessions prompt ID --step N``)."""
    with DataEngine.open(tmp_path / "data") as engine:
        result = record_storm(engine, seed=21)
        steps = engine.get_steps(result.session_id)
        replies = [r["response"] for s in steps for r in (s.meta or {}).get("replies_out", [])]
        assert any(r.get("status") == "failed" and "nothing was typed" in r.get("detail", "") for r in replies)
        assert any(r.get("observed", "").startswith('the field shows "6"') for r in replies)
        for s in steps:
            check = check_turn(engine, result.session_id, s.number)
            assert check.match, (s.number, check.rows)


def test_fast_forward_types_nothing_where_the_run_typed_nothing(tmp_path: Path) -> None:
    """A restored simulated phone takes the same focus decisions: the pop-up schedule (counted
    in actions) stays in step, and the phone ends where the run ended."""
    with DataEngine.open(tmp_path / "data") as engine:
        result = record_storm(engine, seed=21)
        steps = engine.get_steps(result.session_id)
    assert any("nothing was typed" in (s.result_detail or "") for s in steps)
    live = SimPhone(seed=21, popups=True, faults="popup_storm")
    fresh = SimPhone(seed=21, popups=True, faults="popup_storm")
    assert fast_forward(fresh, storm_task(21), steps) == 0
    record_storm_phone = fresh.snapshot_state()
    with DataEngine.open(tmp_path / "again") as engine:
        from artemis_cli.config.profile import load_profile
        from artemis_cli.models.offline.scripted import ScriptedModel
        from artemis_cli.models.registry import reference_script
        from artemis_cli.runner import run_task

        task = storm_task(21)
        run_task(task, load_profile("flash"), live, ScriptedModel(reference_script(task)), engine, real_time=False)
    state = live.snapshot_state()
    for key in ("actions", "popups_shown", "popup_visible", "foreground", "apps"):
        assert record_storm_phone[key] == state[key], key


def test_recall_and_the_report_show_outcomes(tmp_path: Path) -> None:
    with DataEngine.open(tmp_path / "data") as engine:
        result = record_storm(engine, seed=21)
        sid = result.session_id
        steps = engine.get_steps(sid)
        failed = [s.number for s in steps if s.result_status == "failed"]
        hits = Recall(engine).recall(sid, "nothing was typed").hits
        assert failed and {h.step for h in hits if h.kind == "step"} == set(failed)
        landed = {s.number for s in steps if s.action_type == "type_text" and s.result_status == "ok"}
        hits = Recall(engine).recall(sid, '"the field shows"', max_results=10).hits
        assert landed and landed <= {h.step for h in hits if h.kind == "step"}
        page = build_report(engine, sid)
    assert "class='result error'>failed" in page
    assert "observed: the field shows &quot;6&quot;" in page


def test_the_outcome_column_round_trips_and_older_steps_read_as_none(tmp_path: Path) -> None:
    data = tmp_path / "data"
    data.mkdir()
    db = sqlite_utils.Database(data / "artemis.db")
    migrate(db, MIGRATIONS[:5])  # a data dir written before action outcomes existed
    db.execute("INSERT INTO sessions (id, goal, started_at) VALUES ('old', 'g', '2026-11-01T00:00:00.000Z')")
    db.execute("INSERT INTO steps (session_id, number, started_at, action_type) "
               "VALUES ('old', 1, '2026-11-01T00:00:01.000Z', 'tap')")
    db.conn.commit()
    db.conn.close()
    with DataEngine.open(data) as engine:
        assert engine.get_step("old", 1).outcome is None
        sid = engine.create_session(SessionRecord(goal="g"))
        seen = {"status": "no_change", "detail": "no visible change", "summary": "", "screen_changed": False}
        engine.record_step(StepRecord(session_id=sid, number=1, action_type="wait", result_status="no_change",
                                      result_detail="no visible change", outcome=seen))
        assert engine.get_step(sid, 1).outcome == seen
    row = sqlite3.connect(data / "artemis.db").execute("SELECT outcome FROM steps WHERE session_id = ?", [sid]).fetchone()
    assert row[0] == '{"status": "no_change", "detail": "no visible change", "summary": "", "screen_changed": false}'
