"""Compression invariants (SPEC §10.3), each written from its sentence in the spec.

A recorded offline session gives real step records; the compressor runs against a ledger rebuilt
from it, with lenses that are ready, never ready, or ready on cue.
"""

from __future__ import annotations

import json
import threading
from pathlib import Path
from types import SimpleNamespace

import pytest

from artemis_cli.config.profile import load_profile
from artemis_cli.config.task import load_task
from artemis_cli.engine.db import DataEngine
from artemis_cli.memory.chunk_lens import ChunkBands, ChunkJob, MechanicalChunkLens
from artemis_cli.memory.chunk_store import ChunkRow, append_chunk_version, newest_chunks
from artemis_cli.memory.restore import SessionSpec
from artemis_cli.models.offline.scripted import ScriptedModel
from artemis_cli.models.registry import reference_script
from artemis_cli.operators.compression import CompressionPolicy, Compressor
from artemis_cli.runner import new_ledger, run_task
from artemis_cli.sim.phone import SimPhone

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def session(tmp_path_factory: pytest.TempPathFactory) -> tuple[DataEngine, str]:
    task = load_task(REPO / "tasks" / "clock-ten-alarms.yaml")
    engine = DataEngine.open(tmp_path_factory.mktemp("compress"))
    result = run_task(task, load_profile("flash"), SimPhone(world=task.sim.world, seed=task.sim.seed, popups=task.sim.popups),
                      ScriptedModel(reference_script(task)), engine, real_time=False)
    assert result.success
    return engine, result.session_id


class NeverReady:
    """A chunk lens whose answer never comes (a stuck model call)."""

    source = "stuck"

    def __init__(self) -> None:
        self.release = threading.Event()

    def summarize(self, job: ChunkJob) -> ChunkBands:
        self.release.wait(30)
        raise RuntimeError("released")


def _compressor(engine: DataEngine, sid: str, lens: object, **policy: int) -> Compressor:
    spec = SessionSpec.load(engine, sid)
    ledger = new_ledger(SimpleNamespace(goal=spec.goal, app=spec.app), spec.profile, engine, spec.max_steps)
    # a fresh A zone holding steps 1-30 verbatim, as if no compression had happened yet
    events = {e.id for e in engine.events(sid, kind="ledger") if e.payload.get("op") == "frozen"}
    assert events  # the recorded run did compress; here we start over from raw steps
    from artemis_cli.memory.restore import entry_from_step

    for step in engine.get_steps(sid, 1, 30):
        ledger.commit(entry_from_step(engine, step))
    pol = CompressionPolicy(**{"max_steps": 10, "min_active_steps": 5, "budget_tokens": 100_000, **policy})
    return Compressor(engine, f"{sid}", ledger, pol, lens, goal=spec.goal)  # type: ignore[arg-type]


def test_a_pending_chunk_is_never_swapped_except_by_the_hard_threshold(session: tuple[DataEngine, str]) -> None:
    engine, sid = session
    lens = NeverReady()
    comp = _compressor(engine, sid, lens)
    try:
        assert comp.on_turn(31, 1_000, None) == []  # segments close, nothing is ready: no swap
        assert comp.segments and all(s.status == "pending" for s in comp.segments)
        assert comp.on_turn(32, 60_000, None) == []  # over the soft ratio: still no swap
        assert [e.step for e in comp.ledger.entries][:1] == [1]
        forced = comp.on_turn(33, 95_000, None)  # the hard ratio forces them out, into a snapshot
        assert len(forced) == 1 and comp.snapshots == 1
        # the snapshot's step index: per-step lines for the newest steps, a ranged line before them
        assert "Session snapshot" in comp.ledger.f_body and "\nSteps 1–10 (T+00:00" in comp.ledger.f_body
        assert "\nStep 25 (T+" in comp.ledger.f_body
        assert len(comp.ledger.entries) == 5
    finally:
        lens.release.set()
        comp.stop(0)


def test_a_checker_verdict_shows_in_f_only_at_the_next_compression_event(session: tuple[DataEngine, str]) -> None:
    engine, sid = session
    comp = _compressor(engine, sid, MechanicalChunkLens())
    try:
        first = comp.on_turn(31, 1_000, None)
        assert comp.flush(60)  # let the background lens finish
        first += comp.on_turn(33, 1_000, None)  # swaps happen on screenshot-scrub (batch) turns
        assert first and "[Chunk 1 " in comp.ledger.f_body and "Checker:" not in comp.ledger.f_body
        swapped = newest_chunks(engine, sid)
        row = next(r for r in swapped if r.status == "ready" and r.start_step == 1)
        append_chunk_version(engine, ChunkRow(session_id=sid, start_step=row.start_step, end_step=row.end_step,
                                              status="ready", milestone=row.milestone, band1=row.band1,
                                              band2=row.band2, band3=row.band3, rendered=row.rendered,
                                              source=row.source, checker={"verified": True}))
        before = comp.ledger.f_body
        assert comp.on_turn(36, 1_000, None) == [] and comp.ledger.f_body == before  # no event, no change
        for step in engine.get_steps(sid, 31, 45):  # enough new steps for the next segment
            from artemis_cli.memory.restore import entry_from_step

            comp.ledger.commit(entry_from_step(engine, step))
        later = comp.on_turn(46, 1_000, None)
        assert comp.flush(60)
        later += comp.on_turn(48, 1_000, None)
        assert later
        assert 'Checker: {"verified": true}' in comp.ledger.f_body
        ops = [op for d in comp.ledger.decisions if d.op == "frozen" for op in json.loads(d.ops or "[]")]
        assert {"op": "checker", "start": 1, "end": row.end_step, "checker": {"verified": True}} in ops
    finally:
        comp.stop(0)


def test_a_plan_write_alone_never_closes_a_segment() -> None:
    from artemis_cli.operators.pro.loop import ProLoop
    from artemis_cli.operators.pro.plan import Plan

    loop = ProLoop.__new__(ProLoop)  # only the stamp logic is exercised here
    plan = Plan.from_titles(["Open Settings", "Turn on Wi-Fi"])
    first, second = plan.milestones
    loop.stamps = {1: (first.id, first.title), 2: (first.id, first.title)}
    loop.plan = plan.mark_done(first.id)  # a plan write…
    assert loop.milestone_switch(3) is None  # …is not a switch: no executed step served the next one
    loop.plan = plan  # rolled back by a revision
    loop.stamps[3] = (first.id, first.title)
    assert loop.milestone_switch(4) is None
    loop.stamps[4] = (second.id, second.title)  # a stamped step that served the next milestone
    assert loop.milestone_switch(5) == (4, first.title)
