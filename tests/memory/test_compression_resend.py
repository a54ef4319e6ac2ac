"""Compression never stalls (issue 13, SPEC §10.3): a segment whose chunk lens gives up keeps its
raw turns and is re-sent — to the fallback lens — at the next trigger (a segment closing) or under
soft pressure, at most once per event and ``max_resends`` times in all; swaps stay in order, so
the re-send is what lets the later ready segments swap. A stays bounded in the steady state.

A recorded offline chore gives real step records; the chunk lens is the real ``ChunkLens`` over
the real Gemini adapter talking to the fake Gemini server, whose injected faults make one
segment's first dispatch fail. F rewrites and the L3 snapshot gate are checked on the same
records.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from artemis_cli.config.profile import Profile, load_profile
from artemis_cli.config.task import Task
from artemis_cli.engine.db import DataEngine
from artemis_cli.memory.chunk_lens import ChunkLens, MechanicalChunkLens, nth_segment_match
from artemis_cli.memory.chunk_store import chunk_history
from artemis_cli.memory.frozen_chunk import PENDING_MARK
from artemis_cli.memory.restore import LEDGER_EVENT, SessionSpec, entry_from_step
from artemis_cli.models.fakes.gemini import FakeGeminiServer
from artemis_cli.models.gemini import GeminiModel
from artemis_cli.models.offline.scripted import ScriptedModel, script_policy
from artemis_cli.operators.compression import (
    RESEND_EVENT,
    SNAPSHOT_SKIPPED_EVENT,
    CompressionPolicy,
    Compressor,
    count_f_rewrites,
    session_f_rewrites,
)
from artemis_cli.runner import new_ledger, run_task
from artemis_cli.sim.phone import SimPhone

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
from long_run import chore_script

STEPS = 90
MAX_STEPS = 10
MIN_ACTIVE = 5
PRIMARY, FALLBACK = "gemini-2.5-flash", "gemini-2.5-flash-lite"


@pytest.fixture(scope="module")
def chore(tmp_path_factory: pytest.TempPathFactory) -> tuple[DataEngine, str]:
    """An offline 90-step chore (settings, notes, alarms), recorded with every step's records."""
    script, _ = chore_script(STEPS)
    task = Task.model_validate({"id": "chore", "goal": "Do the daily phone chores", "max_steps": STEPS + 5})
    engine = DataEngine.open(tmp_path_factory.mktemp("chore"))
    result = run_task(task, load_profile("flash"), SimPhone(seed=7, popups=False), ScriptedModel(script), engine,
                      real_time=False)
    assert result.success and result.steps == STEPS
    return engine, result.session_id


@pytest.fixture
def server() -> Iterator[FakeGeminiServer]:
    with FakeGeminiServer(script_policy([{"finish": {"success": True, "answer": ""}}])) as srv:
        yield srv


def gemini(server: FakeGeminiServer, name: str) -> GeminiModel:
    return GeminiModel([name], api_key="k", base_url=server.base_url, max_retries=0, backoff_s=0.0,
                       sleep=lambda s: None)


def compressor(engine: DataEngine, sid: str, lens: Any, fallback: Any = None, **policy: Any) -> Compressor:
    spec = SessionSpec.load(engine, sid)
    ledger = new_ledger(SimpleNamespace(goal=spec.goal, app=spec.app), spec.profile, engine, spec.max_steps)
    pol = CompressionPolicy(**{"max_steps": MAX_STEPS, "min_active_steps": MIN_ACTIVE, "budget_tokens": 100_000,
                               "max_chunks": 100, **policy})
    return Compressor(engine, sid, ledger, pol, lens, fallback, goal=spec.goal)


def drive(comp: Compressor, upto: int, context: int = 1_000, start: int = 1) -> list[int]:
    """Turns ``start..upto`` as the loop takes them: the turn's compression, the lens settling
    (a barrier on the lens thread), then the step's commit. Returns A's size at every render."""
    sizes = []
    for n in range(start, upto + 1):
        comp.on_turn(n, context, None)
        assert comp.flush(60)
        sizes.append(len(comp.ledger.entries))
        comp.ledger.commit(entry_from_step(comp.engine, comp.engine.get_step(comp.session_id, n)))
    return sizes


def a_bound(comp: Compressor) -> int:
    """A's steady-state bound: a segment closes at MAX_STEPS open turns and swaps once MIN_ACTIVE
    newer turns exist, on the next turn that scrubs screenshots (every image_scrub_batch turns)."""
    return MAX_STEPS + MIN_ACTIVE + comp.ledger.settings.image_scrub_batch - 1


def last_row_id(engine: DataEngine) -> int:
    """The newest chunk row (tests share the recorded session: each looks at its own rows)."""
    return int(next(iter(engine.db.query("SELECT coalesce(max(id), 0) AS m FROM history_chunks")))["m"])


def statuses(engine: DataEngine, sid: str, start: int, end: int, after: int) -> list[str]:
    return [r.status for r in chunk_history(engine, sid, start, end) if (r.id or 0) > after]


def f_ranges(comp: Compressor) -> list[tuple[int, int]]:
    return [(c.start, c.end) for c in comp.frozen.chunks]


def test_steady_state_a_stays_bounded(chore: tuple[DataEngine, str], server: FakeGeminiServer) -> None:
    engine, sid = chore
    comp = compressor(engine, sid, ChunkLens(gemini(server, PRIMARY)), ChunkLens(gemini(server, FALLBACK)),
                      frozen_budget_tokens=100_000)
    try:
        sizes = drive(comp, STEPS)
    finally:
        comp.stop(0)
    assert max(sizes) <= a_bound(comp)
    assert f_ranges(comp)[:3] == [(1, 10), (11, 20), (21, 30)]
    assert comp.resends == 0 and comp.f_rewrites == 0  # appends only (no fold in these limits)


def test_a_failed_segment_is_re_sent_to_the_fallback_and_unblocks_the_later_swaps(
    chore: tuple[DataEngine, str], server: FakeGeminiServer
) -> None:
    engine, sid = chore
    # segment 2 (steps 11-20): every attempt of its first dispatch fails (3 on the lens, 3 on the fallback)
    server.inject("empty_candidate", 6, match=nth_segment_match(2))
    mark = last_row_id(engine)
    events_before = len(engine.events(sid, kind=RESEND_EVENT))
    comp = compressor(engine, sid, ChunkLens(gemini(server, PRIMARY)), ChunkLens(gemini(server, FALLBACK)),
                      frozen_budget_tokens=100_000)
    try:
        sizes = drive(comp, 30)
        assert statuses(engine, sid, 11, 20, mark) == ["pending", "failed"]
        assert f_ranges(comp) == [(1, 10)]  # in order: the failed segment holds back nothing yet
        assert comp.resends == 0  # not re-sent every turn: only at a trigger
        assert max(sizes) > a_bound(comp)  # A grows while it waits
        sizes += drive(comp, STEPS, start=31)
    finally:
        comp.stop(0)
    # the next close (steps 21-30, at turn 31) re-sent it, once, to the fallback model, and it swapped
    assert statuses(engine, sid, 11, 20, mark) == ["pending", "failed", "pending", "ready"]
    segment_2 = [r for r in server.requests if "SEGMENT: steps 11–20" in r.last_user_text()]
    assert [(r.model, r.fault) for r in segment_2] == [(PRIMARY, "empty_candidate")] * 3 + [
        (FALLBACK, "empty_candidate")] * 3 + [(FALLBACK, None)]  # the re-send: one call, to the fallback
    events = engine.events(sid, kind=RESEND_EVENT)[events_before:]
    assert [(e.step, e.payload["start"], e.payload["end"], e.payload["resend"], e.payload["why"]) for e in events] == [
        (31, 11, 20, 1, "segment closed")]
    assert comp.resends == 1 and server.pending_faults() == 0
    assert f_ranges(comp)[:4] == [(1, 10), (11, 20), (21, 30), (31, 40)]
    assert PENDING_MARK not in comp.ledger.f_body
    # A is back to its steady-state bound once the re-send landed, and was never more than one segment over it
    assert max(sizes) <= a_bound(comp) + MAX_STEPS
    assert max(sizes[40:]) <= a_bound(comp)


def test_re_sends_are_one_per_event_and_capped_then_only_the_hard_ratio_forces_it_out(
    chore: tuple[DataEngine, str], server: FakeGeminiServer
) -> None:
    engine, sid = chore
    server.inject("empty_candidate", 10_000, match=nth_segment_match(2))  # segment 2 never gets bands
    mark = last_row_id(engine)
    comp = compressor(engine, sid, ChunkLens(gemini(server, PRIMARY)), ChunkLens(gemini(server, FALLBACK)),
                      max_resends=3, frozen_budget_tokens=100_000)
    try:
        drive(comp, 25)
        assert statuses(engine, sid, 11, 20, mark) == ["pending", "failed"]
        soft = 75_000  # at the soft ratio every turn: one re-send per turn, while re-sends are left
        for n in (26, 27, 28, 29, 30):
            before = comp.resends
            drive(comp, n, context=soft, start=n)
            assert comp.resends - before <= 1
        assert comp.resends == 3
        assert statuses(engine, sid, 11, 20, mark) == ["pending", "failed"] + ["pending", "failed"] * 3
        assert f_ranges(comp) == [(1, 10)] and comp.ledger.entries[0].step == 11  # raw turns stay
        drive(comp, 45, context=soft, start=31)
        assert comp.resends == 3  # the cap holds under sustained pressure
        assert comp.ledger.entries[0].step == 11
        comp.on_turn(46, 95_000, None)  # the hard ratio forces it out, ledger-only
    finally:
        comp.stop(0)
    assert comp.ledger.entries[0].step > 20
    frozen = comp.frozen
    held = [c for c in frozen.chunks if (c.start, c.end) == (11, 20)]
    if frozen.snapshot_block is None:
        assert held and held[0].status == "ledger_only"
    else:
        assert frozen.snapshot_block.end >= 20


def test_f_rewrites_are_the_decisions_that_do_not_append(chore: tuple[DataEngine, str]) -> None:
    """A small F budget makes F fold: each fold is a rewrite, each plain swap an append."""
    engine, sid = chore
    comp = compressor(engine, sid, MechanicalChunkLens(), frozen_budget_tokens=1_200)
    try:
        drive(comp, STEPS)
    finally:
        comp.stop(0)
    frozen = [d for d in comp.ledger.decisions if d.op == "frozen"]
    ops = [[op["op"] for op in json.loads(d.ops or "[]")] for d in frozen]
    assert comp.f_rewrites == sum(1 for o in ops if "fold" in o) > 0
    assert comp.f_rewrites < len(frozen)  # most swaps append
    assert comp.frozen.tokens() <= 1_200


def test_session_f_rewrites_match_the_recorded_decisions(tmp_path: Path) -> None:
    """From the record: a run with tight limits folds; each recorded F text that does not start
    with the previous one is a rewrite, and those are exactly the decisions that folded."""
    data = load_profile("flash").model_dump(mode="json")
    data["memory"]["chunking"].update({"max_steps": 6, "max_chunks": 2, "max_eras": 1})
    script, _ = chore_script(60)
    task = Task.model_validate({"id": "chore60", "goal": "Do the daily phone chores", "max_steps": 65})
    engine = DataEngine.open(tmp_path / "data")
    result = run_task(task, Profile.model_validate(data), SimPhone(seed=7, popups=False), ScriptedModel(script),
                      engine, real_time=False)
    payloads = [e.payload for e in engine.events(result.session_id, kind=LEDGER_EVENT) if e.payload.get("op") == "frozen"]
    texts = [str(p["text"]) for p in payloads]
    folded = [any(op["op"] in ("fold", "snapshot", "checker") for op in json.loads(p["ops"])) for p in payloads]
    assert session_f_rewrites(engine, result.session_id) == count_f_rewrites(texts) == sum(folded) > 0
    pairs = list(zip(texts, texts[1:], folded[1:], strict=False))
    appended = [(prev, text) for prev, text, fold in pairs if not fold]
    assert appended and all(text.startswith(prev + "\n\n[Chunk ") for prev, text in appended)


def test_a_snapshot_that_would_not_shrink_f_is_not_taken(chore: tuple[DataEngine, str]) -> None:
    """At the hard ratio every turn (the context stays above it whatever F does), the snapshot is
    taken when it makes F clearly smaller and skipped — counted, recorded — when it would not; it
    never re-fires every max_steps turns as a rewrite."""
    engine, sid = chore
    comp = compressor(engine, sid, MechanicalChunkLens())
    skipped_before = len(engine.events(sid, kind=SNAPSHOT_SKIPPED_EVENT))
    hard = 95_000
    try:
        drive(comp, 60)  # F holds chunks; then the context stays at the hard ratio for 30 turns
        decisions_before = len([d for d in comp.ledger.decisions if d.op == "frozen"])
        rewrites_before = comp.f_rewrites
        drive(comp, STEPS, context=hard, start=61)
    finally:
        comp.stop(0)
    assert comp.snapshots == 1  # taken once; the context stayed above the hard ratio, so no re-fire
    assert comp.snapshots_skipped >= 1
    skipped = engine.events(sid, kind=SNAPSHOT_SKIPPED_EVENT)[skipped_before:]
    assert len(skipped) == comp.snapshots_skipped
    for ev in skipped:  # each skipped one would not have saved what it needed: its share, or
        # (after a snapshot that left the context above the hard ratio) the whole overshoot
        assert ev.payload["f_tokens"] - ev.payload["snapshot_tokens"] < ev.payload["needed"]
        assert ev.payload["needed"] >= max(200, 0.1 * ev.payload["f_tokens"])
    # one rewrite (the snapshot); the hard ratio's forced segments after it are appends
    assert comp.f_rewrites - rewrites_before == 1
    assert len([d for d in comp.ledger.decisions if d.op == "frozen"]) > decisions_before
