"""Agent notes: versioned rows, newest wins, indexed for recall (SPEC §10.5)."""

from __future__ import annotations

from typing import Any

import pytest

from artemis_cli.engine import DataEngine, SessionRecord, StepRecord
from artemis_cli.errors import SessionNotFound, UsageError
from artemis_cli.memory.notes import (
    MAX_CONTENT_CHARS,
    READ_MAX_CHARS,
    NoteError,
    list_notes,
    notes_written,
    read_note,
    save_note,
)
from artemis_cli.memory.recall import Recall


@pytest.fixture
def sid(engine: DataEngine) -> str:
    session_id = engine.create_session(SessionRecord(goal="order office supplies"))
    for n in range(1, 11):
        engine.record_step(StepRecord(session_id=session_id, number=n, offset_ms=n * 7000, action_type="wait",
                                      action_args={"seconds": 1}))
    return session_id


def test_save_and_read_versions(engine: DataEngine, sid: str) -> None:
    assert read_note(engine, sid, "order") is None
    assert save_note(engine, sid, "order", "cart has 2 pens", 3) == 1
    assert save_note(engine, sid, "order", "cart has 2 pens and 1 stapler", 6) == 2
    assert save_note(engine, sid, "other", "x", 6) == 1
    note = read_note(engine, sid, " order ")
    assert note is not None
    assert (note.key, note.content, note.step, note.version) == ("order", "cart has 2 pens and 1 stapler", 6, 2)
    # append-only rows: both versions stored
    rows = list(engine.db.query("SELECT version, content FROM notes WHERE key = 'order' ORDER BY version"))
    assert [r["version"] for r in rows] == [1, 2]
    assert [n.key for n in list_notes(engine, sid)] == ["order", "other"]


def test_notes_are_per_session(engine: DataEngine, sid: str) -> None:
    other = engine.create_session(SessionRecord(goal="g"))
    save_note(engine, sid, "k", "mine", 1)
    assert read_note(engine, other, "k") is None
    assert save_note(engine, other, "k", "theirs", 1) == 1


def test_notes_written_in_range(engine: DataEngine, sid: str) -> None:
    save_note(engine, sid, "a", "one", 2)
    save_note(engine, sid, "b", "two", 5)
    save_note(engine, sid, "a", "three", 9)
    assert [(n.key, n.version) for n in notes_written(engine, sid, 1, 5)] == [("a", 1), ("b", 1)]
    assert [(n.key, n.version) for n in notes_written(engine, sid, 6, 12)] == [("a", 2)]
    assert notes_written(engine, sid, 6, 8) == []


def test_bad_keys_and_sessions(engine: DataEngine, sid: str) -> None:
    with pytest.raises(NoteError) as info:
        save_note(engine, sid, "  ", "x", 1)
    assert isinstance(info.value, UsageError) and info.value.exit_code == 2
    with pytest.raises(NoteError):
        save_note(engine, sid, "k" * 201, "x", 1)
    with pytest.raises(SessionNotFound):
        save_note(engine, "no-such-session", "k", "x", 1)
    assert next(iter(engine.db.query("SELECT count(*) AS n FROM notes")))["n"] == 0


def test_recall_finds_newest_note_version_only(engine: DataEngine, sid: str) -> None:
    save_note(engine, sid, "voucher", "code is PELICAN42", 4)
    save_note(engine, sid, "voucher", "code is FLAMINGO7 (PELICAN expired)", 8)
    recall = Recall(engine)
    result = recall.recall(sid, "flamingo7")
    assert [(h.kind, h.step, h.note_key) for h in result.hits] == [("note", 8, "voucher")]
    assert result.hits[0].text() == '- Note "voucher" v2 @ Step 8 (T+00:56): "code is FLAMINGO7 (PELICAN expired)"'
    old = recall.recall(sid, "PELICAN42")
    assert old.hits == []  # the overwritten content is no longer recalled
    ranged = recall.recall(sid, "flamingo7", step_range="1-5")
    assert ranged.hits == []


def test_cjk_note_is_recalled(engine: DataEngine, sid: str) -> None:
    save_note(engine, sid, "地址", "收货地址是北京市海淀区", 2)
    result = Recall(engine).recall(sid, "海淀")
    assert [h.step for h in result.hits] == [2]
    assert "北京市海淀区" in result.render()


# --- what read_note hands the model -------------------------------------------------------------


def _tools(engine: DataEngine, sid: str) -> Any:
    from artemis_cli.models.base import FunctionCall
    from artemis_cli.operators.memory_tools import MemoryTools
    from artemis_cli.operators.tools import validate_call

    handler = MemoryTools(engine, sid, Recall(engine)).handler(10)
    return lambda name, **args: handler(validate_call(FunctionCall(name, args)))


def test_read_note_returns_at_most_about_2000_tokens_and_says_what_was_cut(engine: DataEngine, sid: str) -> None:
    call = _tools(engine, sid)
    lines = [f"Line {i}: order #A-{10000 + i} costs ${i}.99 and ships to +1 555-{i:04d}" for i in range(1, 480)]
    big = "\n".join(lines)
    assert READ_MAX_CHARS < len(big) <= MAX_CONTENT_CHARS
    assert call("save_note", key="orders", content=big) == {"saved": "orders", "version": 1}
    reply = call("read_note", key="orders")
    content = reply["content"]
    assert len(content) <= READ_MAX_CHARS and reply["truncated"] is True and reply["total_chars"] == len(big)
    head, last = content.rsplit("\n", 1)
    assert big.startswith(head) and head.split("\n")[-1] in lines  # cut at a line: no value halved
    assert last == f"[note cut: showing the first {len(head)} of {len(big)} characters; {len(big) - len(head)} more are not shown]"
    stored = read_note(engine, sid, "orders")
    assert stored is not None and stored.content == big  # the note itself is kept whole
    one_line = "value " * 3000
    call("save_note", key="blob", content=one_line)
    text = call("read_note", key="blob")["content"]
    assert len(text) <= READ_MAX_CHARS and text.split("\n")[0].endswith("value")
    call("save_note", key="pin", content="4711")
    assert call("read_note", key="pin") == {"key": "pin", "content": "4711", "written_at_step": 10, "version": 1}


def test_an_oversized_note_is_refused_with_an_error_the_model_reads(engine: DataEngine, sid: str) -> None:
    call = _tools(engine, sid)
    reply = call("save_note", key="dump", content="x" * (MAX_CONTENT_CHARS + 1))
    assert set(reply) == {"error"} and f"at most {MAX_CONTENT_CHARS} characters" in reply["error"]
    assert read_note(engine, sid, "dump") is None  # nothing stored, nothing indexed
    with pytest.raises(NoteError):
        save_note(engine, sid, "dump", "y" * (MAX_CONTENT_CHARS + 1), 3)
    assert call("save_note", key="dump", content="x" * MAX_CONTENT_CHARS) == {"saved": "dump", "version": 1}
