from __future__ import annotations

import re

import pytest

from artemis_cli.engine import DataEngine, DataEngineError, SessionRecord, new_session_id
from artemis_cli.errors import SessionNotFound, UsageError


def test_new_session_id_format() -> None:
    sid = new_session_id()
    assert re.fullmatch(r"\d{8}-\d{6}-[0-9a-f]{4}", sid)
    assert re.fullmatch(r"\d{8}-\d{6}-[0-9a-f]{4}", DataEngine.new_session_id())


def test_create_get_update_finish(engine: DataEngine) -> None:
    sid = engine.create_session(
        SessionRecord(
            goal="Add three items",
            task_id="shop-cart",
            profile="flash",
            loop="flash",
            device_serial="sim",
            device_kind="sim",
            screen_width=1080,
            screen_height=2400,
            models={"operator": "heuristic"},
            model_label="heuristic (offline baseline)",
            config={"memory": {"max_chunks": 8}},
        )
    )
    rec = engine.get_session(sid)
    assert rec.models == {"operator": "heuristic"} and rec.config == {"memory": {"max_chunks": 8}}
    assert rec.status == "running" and rec.result is None and rec.started_at
    engine.update_session(sid, device_serial="emulator-5554", config={"x": 1})
    engine.finish_session(sid, "succeeded", {"answer": "done", "steps": 3})
    rec = engine.get_session(sid)
    assert rec.device_serial == "emulator-5554" and rec.config == {"x": 1}
    assert rec.status == "succeeded" and rec.result == {"answer": "done", "steps": 3} and rec.ended_at
    with pytest.raises(DataEngineError, match="unknown session field"):
        engine.update_session(sid, colour="red")
    with pytest.raises(SessionNotFound):
        engine.update_session("nope", goal="x")
    with pytest.raises(DataEngineError, match="final session status"):
        engine.finish_session(sid, "running", {})


def test_prefix_lookup_unknown_and_ambiguous(engine: DataEngine) -> None:
    for sid in ("20240101-000000-aaaa", "20240101-000000-aaab", "20240202-120000-beef"):
        engine.create_session(SessionRecord(id=sid, goal="g", started_at="2024-01-01T00:00:00+00:00"))
    assert engine.get_session("20240202").id == "20240202-120000-beef"
    assert engine.get_session("20240101-000000-aaab").id == "20240101-000000-aaab"
    with pytest.raises(SessionNotFound) as unknown:
        engine.get_session("1999")
    assert unknown.value.hint and "artemis sessions list" in unknown.value.hint
    assert unknown.value.exit_code == 2
    with pytest.raises(SessionNotFound) as ambiguous:
        engine.get_session("20240101-000000-aa")
    assert "20240101-000000-aaaa" in str(ambiguous.value) and "20240101-000000-aaab" in str(ambiguous.value)
    with pytest.raises(SessionNotFound):
        engine.get_session("")
    with pytest.raises(DataEngineError, match="already exists"):
        engine.create_session(SessionRecord(id="20240101-000000-aaaa"))


def test_list_filters_and_latest(engine: DataEngine) -> None:
    assert engine.latest_session() is None
    with pytest.raises(SessionNotFound):
        engine.get_session("latest")
    specs = [
        ("20240101-090000-0001", "a", "succeeded", "2024-01-01T09:00:00+00:00"),
        ("20240102-090000-0002", "b", "failed", "2024-01-02T09:00:00+00:00"),
        ("20240103-090000-0003", "a", "failed", "2024-01-03T09:00:00+00:00"),
        ("20240104-090000-0004", "a", "running", "2024-01-04T09:00:00+00:00"),
    ]
    for sid, task, status, started in specs:
        engine.create_session(SessionRecord(id=sid, task_id=task, status=status, started_at=started))  # type: ignore[arg-type]
    ids = lambda recs: [r.id[-4:] for r in recs]  # noqa: E731
    assert ids(engine.list_sessions()) == ["0004", "0003", "0002", "0001"]
    assert ids(engine.list_sessions(limit=2)) == ["0004", "0003"]
    assert ids(engine.list_sessions(status="failed")) == ["0003", "0002"]
    assert ids(engine.list_sessions(task_id="a")) == ["0004", "0003", "0001"]
    assert ids(engine.list_sessions(task_id="a", status="failed")) == ["0003"]
    assert ids(engine.list_sessions(since="2024-01-03")) == ["0004", "0003"]
    assert ids(engine.list_sessions(since="2024-01-02T10:00:00+01:00")) == ["0004", "0003", "0002"]
    assert engine.latest_session().id.endswith("0004")  # type: ignore[union-attr]
    assert engine.get_session("latest").id.endswith("0004")
    with pytest.raises(UsageError, match="unknown session status"):
        engine.list_sessions(status="great")
    with pytest.raises(UsageError, match="invalid time"):
        engine.list_sessions(since="yesterday-ish")


def test_parent_session_must_exist(engine: DataEngine, session_id: str) -> None:
    child = engine.create_session(SessionRecord(goal="replay", parent_session=session_id))
    assert engine.get_session(child).parent_session == session_id
    with pytest.raises(SessionNotFound, match="parent session"):
        engine.create_session(SessionRecord(goal="replay", parent_session="missing"))
