from __future__ import annotations

from artemis_cli.engine import DataEngine, StepRecord
from artemis_cli.engine.health import integrity_problems, missing_blobs


def test_integrity_check_clean(engine: DataEngine, session_id: str) -> None:
    engine.record_step(
        StepRecord(session_id=session_id, number=1, action_type="tap"), blobs={"ui_xml": (b"<x/>", "ui_xml")}
    )
    assert integrity_problems(engine) == []


def test_integrity_check_reports_foreign_key_violations(engine: DataEngine) -> None:
    engine.db.execute("PRAGMA foreign_keys = OFF")
    engine.db.execute(
        "INSERT INTO events (session_id, kind, created_at) VALUES ('ghost', 'x', '2024-01-01T00:00:00+00:00')"
    )
    engine.db.execute("PRAGMA foreign_keys = ON")
    problems = integrity_problems(engine)
    assert len(problems) == 1 and "events" in problems[0] and "sessions" in problems[0]


def test_missing_blobs_finds_a_deleted_file(engine: DataEngine, session_id: str) -> None:
    stored = engine.record_step(
        StepRecord(session_id=session_id, number=1, action_type="tap"),
        blobs={"pre_screenshot": (b"pre", "screenshot"), "post_screenshot": (b"post", "screenshot")},
    )
    assert missing_blobs(engine) == []
    assert stored.post_screenshot is not None
    engine.blobs.path(stored.post_screenshot).unlink()
    assert missing_blobs(engine) == [stored.post_screenshot]
