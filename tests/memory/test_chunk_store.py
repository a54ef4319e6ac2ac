"""history_chunks (SPEC §5): append-only versions with the newest winning, recall indexing of ready
chunks, and `artemis sessions show --chunks`."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from artemis_cli.cli.app import app
from artemis_cli.engine import DataEngine, SessionRecord, StepRecord
from artemis_cli.errors import SessionNotFound
from artemis_cli.memory.chunk_lens import ChunkJob, MechanicalChunkLens
from artemis_cli.memory.chunk_store import (
    ChunkRow,
    ChunkStoreError,
    append_chunk_version,
    chunk_history,
    frozen_chunk_from_row,
    newest_chunks,
)
from artemis_cli.memory.frozen import FrozenHistory, build_chunk
from artemis_cli.memory.recall import Recall


@pytest.fixture
def data(tmp_path: Path) -> Path:
    return tmp_path / "data"


@pytest.fixture
def engine(data: Path) -> Iterator[DataEngine]:
    eng = DataEngine.open(data)
    try:
        yield eng
    finally:
        eng.close()


@pytest.fixture
def sid(engine: DataEngine) -> str:
    session_id = engine.create_session(SessionRecord(goal="Find the zebra setting"))
    for n in range(1, 9):
        engine.record_step(StepRecord(session_id=session_id, number=n, action_type="tap", offset_ms=n * 3000,
                                      x=n, y=n, foreground_app="com.android.settings",
                                      user_instruction="mind the zebra" if n == 3 else None))
    return session_id


def ready_row(engine: DataEngine, sid: str, a: int, b: int, index: int = 1) -> ChunkRow:
    steps = [s for s in engine.get_steps(sid) if a <= s.number <= b]
    bands = MechanicalChunkLens().summarize(ChunkJob(sid, a, b, "Zebra hunt", steps))
    chunk = build_chunk(steps, index=index, milestone="Zebra hunt", band1=bands.band1, band2=bands.band2)
    return ChunkRow(session_id=sid, start_step=a, end_step=b, status="ready", milestone="Zebra hunt",
                    band1=bands.band1, band2=bands.band2, band3="\n".join(chunk.band3), rendered=chunk.render(),
                    source=bands.source)


def test_versions_are_append_only_and_the_newest_wins(engine: DataEngine, sid: str) -> None:
    first = append_chunk_version(engine, ChunkRow(session_id=sid, start_step=1, end_step=4, status="pending"))
    assert first.version == 1 and first.id is not None and first.created_at
    second = append_chunk_version(engine, ready_row(engine, sid, 1, 4))
    third = append_chunk_version(engine, ChunkRow(**{**ready_row(engine, sid, 1, 4).to_dict(), "checker": {"verified": True}}))
    append_chunk_version(engine, ready_row(engine, sid, 5, 8))
    assert (second.version, third.version) == (2, 3)
    history = chunk_history(engine, sid, 1, 4)
    assert [r.version for r in history] == [1, 2, 3]
    assert history[0].status == "pending" and history[0].band1 is None  # the old row is untouched
    newest = newest_chunks(engine, sid)
    assert [(r.start_step, r.end_step, r.version) for r in newest] == [(1, 4, 3), (5, 8, 1)]
    assert newest[0].checker == {"verified": True}
    assert newest[0].band1 == second.band1


def test_ready_chunks_are_indexed_for_recall(engine: DataEngine, sid: str) -> None:
    append_chunk_version(engine, ChunkRow(session_id=sid, start_step=1, end_step=4, status="pending",
                                          rendered="pending text quokka"))
    assert not list(engine.db.query("SELECT * FROM chunk_fts WHERE chunk_fts MATCH 'quokka'"))
    append_chunk_version(engine, ready_row(engine, sid, 1, 4))
    rows = list(engine.db.query("SELECT start_step, end_step FROM chunk_fts WHERE chunk_fts MATCH 'zebra'"))
    assert rows == [{"start_step": 1, "end_step": 4}]
    result = Recall(engine).recall(sid, "zebra")
    assert result.hits


def test_bad_rows_are_refused(engine: DataEngine, sid: str) -> None:
    with pytest.raises(ChunkStoreError):
        append_chunk_version(engine, ChunkRow(session_id=sid, start_step=4, end_step=2, status="ready"))
    with pytest.raises(ChunkStoreError):
        append_chunk_version(engine, ChunkRow(session_id=sid, start_step=1, end_step=2, status="bogus"))  # type: ignore[arg-type]
    with pytest.raises(SessionNotFound):
        append_chunk_version(engine, ChunkRow(session_id="nope", start_step=1, end_step=2, status="ready"))


def test_rebuilt_chunk_renders_like_the_transcript(engine: DataEngine, sid: str) -> None:
    stored = append_chunk_version(engine, ready_row(engine, sid, 1, 4))
    history = FrozenHistory()
    history.add_chunk(frozen_chunk_from_row(engine, stored, 1))
    assert history.render() == stored.rendered


def test_sessions_show_chunks(engine: DataEngine, sid: str, data: Path) -> None:
    append_chunk_version(engine, ChunkRow(session_id=sid, start_step=1, end_step=4, status="pending",
                                          band3="- Step 1 (T+00:03): tap @(1,1) -> ok"))
    append_chunk_version(engine, ready_row(engine, sid, 1, 4))
    append_chunk_version(engine, ChunkRow(session_id=sid, start_step=5, end_step=8, status="ledger_only",
                                          band3="- Step 5 (T+00:15): tap @(5,5) -> ok"))
    runner = CliRunner()
    result = runner.invoke(app, ["sessions", "show", sid, "--chunks", "--data-dir", str(data)])
    assert result.exit_code == 0, result.output
    assert "[Chunk 1 | Zebra hunt | Steps 1–4 | T+00:03 → T+00:12]" in result.output
    assert 'User @ Step 3: "mind the zebra"' in result.output
    assert "version 2" in result.output and "version 1 · pending" not in result.output
    assert "[Chunk 2 | no milestone | Steps 5–8 | T+00:15 → T+00:24] [chunk lens pending" in result.output
    as_json = runner.invoke(app, ["sessions", "show", sid, "--chunks", "--json", "--data-dir", str(data)])
    rows = json.loads(as_json.output)
    assert [r["version"] for r in rows] == [2, 1] and rows[0]["text"].startswith("[Chunk 1 |")
