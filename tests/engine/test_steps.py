from __future__ import annotations

import threading
from pathlib import Path

import pytest

from artemis_cli.engine import (
    REDACTED,
    BlobMissing,
    DataEngine,
    DataEngineError,
    DuplicateStep,
    EventRecord,
    LlmCallRecord,
    StepNotFound,
    StepRecord,
)
from artemis_cli.engine.health import missing_blobs
from artemis_cli.errors import SessionNotFound
from artemis_cli.models.base import CallAttempt, Message, ModelRequest, Part, Usage
from artemis_cli.perception.types import Target


def _counts(engine: DataEngine) -> tuple[int, int, int]:
    return (
        engine.db.table("steps").count,
        engine.db.table("events").count,
        engine.db.table("blobs").count,
    )


def test_step_round_trip_with_json_and_flattened_target(engine: DataEngine, session_id: str) -> None:
    target = Target(
        text="Wi-Fi",
        resource_id="com.android.settings:id/switch",
        class_name="android.widget.Switch",
        bounds=(0, 100, 1080, 200),
        label_source="hit_test",
    )
    stored = engine.record_step(
        StepRecord(
            session_id=session_id,
            number=1,
            action_type="tap",
            action_args={"index": 4, "nested": {"a": [1, 2]}},
            x=540,
            y=150,
            target=target.to_dict(),
            verdict={"ok": True, "reason": "switch flipped"},
            meta={"attempts": 1},
            thought="tap the Wi-Fi switch",
        ),
        blobs={"pre_screenshot": (b"pre", "screenshot"), "ui_xml": (b"<hierarchy/>", "ui_xml")},
    )
    assert stored.id is not None
    loaded = engine.get_step(session_id, 1)
    assert loaded == stored
    assert loaded.action_args == {"index": 4, "nested": {"a": [1, 2]}}
    assert loaded.verdict == {"ok": True, "reason": "switch flipped"}
    assert loaded.target_semantics() == target
    assert (loaded.label_source, loaded.target_text, loaded.target_resource_id, loaded.target_class) == (
        "hit_test",
        "Wi-Fi",
        "com.android.settings:id/switch",
        "android.widget.Switch",
    )
    assert loaded.summary_status == "pending" and loaded.summary_version == 0
    assert engine.blob(loaded.pre_screenshot or "") == b"pre"
    assert engine.blob(loaded.ui_xml or "") == b"<hierarchy/>"
    assert loaded.offset_ms is not None and loaded.offset_ms >= 0


def test_duplicate_step_leaves_nothing_behind(engine: DataEngine, session_id: str) -> None:
    engine.record_step(
        StepRecord(session_id=session_id, number=1, action_type="tap", thought="first"),
        events=[EventRecord(kind="retry")],
    )
    before = _counts(engine)
    with pytest.raises(DuplicateStep, match="already has a step 1"):
        engine.record_step(
            StepRecord(session_id=session_id, number=1, action_type="swipe", thought="second"),
            blobs={"pre_screenshot": (b"new bytes", "screenshot")},
            events=[EventRecord(kind="device_fault"), EventRecord(kind="retry")],
        )
    assert _counts(engine) == before
    assert engine.get_step(session_id, 1).thought == "first"
    assert [e.kind for e in engine.events(session_id)] == ["retry"]


def test_failure_mid_transaction_rolls_back_step_and_events(engine: DataEngine, session_id: str) -> None:
    before = _counts(engine)
    bad_event = EventRecord(kind="retry", session_id="some-other-session")
    with pytest.raises(DataEngineError, match="belongs to session"):
        engine.record_step(
            StepRecord(session_id=session_id, number=1, action_type="tap"),
            blobs={"marker": (b"marker png", "marker")},
            events=[EventRecord(kind="ok-event"), bad_event],  # fails after the step row insert
        )
    assert _counts(engine) == before
    assert engine.step_count(session_id) == 0
    # the next attempt with the same number succeeds
    engine.record_step(StepRecord(session_id=session_id, number=1, action_type="tap"))
    assert engine.last_step_number(session_id) == 1


def test_concurrent_duplicate_from_two_connections(data_dir: Path, session_id: str) -> None:
    engines = [DataEngine.open(data_dir) for _ in range(4)]
    outcomes: list[str] = []
    barrier = threading.Barrier(len(engines))

    def worker(eng: DataEngine, n: int) -> None:
        barrier.wait()
        try:
            eng.record_step(
                StepRecord(session_id=session_id, number=7, action_type="tap", thought=f"w{n}"),
                events=[EventRecord(kind=f"event-{n}")],
            )
            outcomes.append("ok")
        except DuplicateStep:
            outcomes.append("dup")

    threads = [threading.Thread(target=worker, args=(e, i)) for i, e in enumerate(engines)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(outcomes) == ["dup", "dup", "dup", "ok"]
    with DataEngine.open(data_dir) as eng:
        step = eng.get_step(session_id, 7)
        assert [e.kind for e in eng.events(session_id)] == [f"event-{step.thought[1:]}"]  # type: ignore[index]
    for e in engines:
        e.close()


def test_every_step_blob_exists_on_disk(engine: DataEngine, session_id: str) -> None:
    for n in range(1, 6):
        engine.record_step(
            StepRecord(session_id=session_id, number=n, action_type="tap"),
            blobs={
                "pre_screenshot": (f"pre {n}".encode(), "screenshot"),
                "post_screenshot": (f"post {n}".encode(), "screenshot"),
                "ui_xml": (b"<hierarchy/>", "ui_xml"),
                "marker": (f"marker {n}".encode(), "marker"),
            },
        )
    steps = engine.get_steps(session_id)
    assert [s.number for s in steps] == [1, 2, 3, 4, 5]
    for step in steps:
        assert set(step.blob_refs()) == {"pre_screenshot", "post_screenshot", "ui_xml", "marker"}
        for sha in step.blob_refs().values():
            assert engine.blobs.verify(sha)
    rows = {r["sha256"] for r in engine.db.query("SELECT sha256 FROM blobs")}
    assert {sha for s in steps for sha in s.blob_refs().values()} == rows


def test_referencing_an_unstored_blob_is_refused(engine: DataEngine, session_id: str) -> None:
    with pytest.raises(BlobMissing):
        engine.record_step(
            StepRecord(session_id=session_id, number=1, action_type="tap", pre_screenshot="ab" * 32)
        )
    with pytest.raises(DataEngineError, match="not a SHA-256"):
        engine.record_step(StepRecord(session_id=session_id, number=1, action_type="tap", marker="xyz"))
    with pytest.raises(DataEngineError, match="not a blob field"):
        engine.record_step(
            StepRecord(session_id=session_id, number=1, action_type="tap"), blobs={"thought": (b"x", "text")}
        )
    assert engine.step_count(session_id) == 0
    # an existing blob may be referenced directly (e.g. the previous step's post screenshot)
    sha = engine.blobs.put(b"already stored")
    stored = engine.record_step(
        StepRecord(session_id=session_id, number=1, action_type="tap", pre_screenshot=sha)
    )
    assert stored.pre_screenshot == sha and missing_blobs(engine) == []


def test_bad_steps_are_clear_errors(engine: DataEngine, session_id: str) -> None:
    with pytest.raises(SessionNotFound):
        engine.record_step(StepRecord(session_id="nope", number=1, action_type="tap"))
    with pytest.raises(DataEngineError, match=">= 1"):
        engine.record_step(StepRecord(session_id=session_id, number=0, action_type="tap"))
    with pytest.raises(DataEngineError, match="result status"):
        engine.record_step(
            StepRecord(session_id=session_id, number=1, action_type="tap", result_status="great")  # type: ignore[arg-type]
        )
    with pytest.raises(StepNotFound):
        engine.get_step(session_id, 3)


def test_password_text_is_redacted(engine: DataEngine, session_id: str) -> None:
    field = Target(
        text="", resource_id="shop:id/password", class_name="android.widget.EditText", password=True
    )
    stored = engine.record_step(
        StepRecord(
            session_id=session_id,
            number=1,
            action_type="type_text",
            action_args={"text": "hunter2", "index": 3},
            target=field.to_dict(),
        )
    )
    assert stored.action_args == {"text": REDACTED, "index": 3}
    raw = engine.db.execute("SELECT action_args FROM steps").fetchone()[0]
    assert "hunter2" not in raw


def test_step_ranges_and_counts(engine: DataEngine, session_id: str) -> None:
    assert engine.step_count(session_id) == 0 and engine.last_step_number(session_id) == 0
    for n in range(1, 11):
        engine.record_step(StepRecord(session_id=session_id, number=n, action_type="wait"))
    assert [s.number for s in engine.get_steps(session_id, 3, 5)] == [3, 4, 5]
    assert [s.number for s in engine.get_steps(session_id, start=9)] == [9, 10]
    assert [s.number for s in engine.get_steps(session_id, end=2)] == [1, 2]
    assert engine.step_count(session_id) == 10 and engine.last_step_number(session_id) == 10


def test_llm_calls_and_events(engine: DataEngine, session_id: str) -> None:
    request = ModelRequest(
        system="sys", messages=[Message(role="user", parts=[Part(text="hi")])], role="lens"
    )
    attempt = CallAttempt(
        model="gemini-flash", status="ok", latency_ms=812.5, usage=Usage(2000, 1024, 50, 10)
    )
    call_id = engine.record_llm_call(
        LlmCallRecord.from_attempt(session_id=session_id, step=3, request=request, attempt=attempt)
    )
    engine.record_llm_call(
        LlmCallRecord(session_id=session_id, role="operator", model="m", status="error", error_class="429")
    )
    calls = engine.llm_calls(session_id)
    assert calls[0].id == call_id
    assert (calls[0].role, calls[0].prompt_tokens, calls[0].cached_tokens, calls[0].latency_ms) == (
        "lens",
        2000,
        1024,
        812.5,
    )
    assert calls[0].prefix_hash == request.prefix_hash() and calls[0].created_at
    assert calls[1].error_class == "429"
    engine.record_event(
        EventRecord(session_id=session_id, step=2, kind="user_instruction", payload={"t": "x"})
    )
    engine.record_event(EventRecord(session_id=session_id, kind="device_fault", payload={"err": ["a", 1]}))
    assert [e.payload for e in engine.events(session_id)] == [{"t": "x"}, {"err": ["a", 1]}]
    assert [e.step for e in engine.events(session_id, kind="device_fault")] == [None]
    with pytest.raises(SessionNotFound):
        engine.record_event(EventRecord(session_id="missing", kind="x"))
    with pytest.raises(SessionNotFound):
        engine.record_llm_call(LlmCallRecord(session_id="missing", role="operator", model="m"))
