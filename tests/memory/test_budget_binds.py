"""The budget binds once the run has started (SPEC §10.3, "Budgets"): the mechanical emergency
level keeps the turn's request within ``budget_tokens`` even when a chunk lens fails and raw turns
stay; the snapshot fires at most once per ``emergency_interval_steps``; below the floor it says so
in a ``budget_floor`` event.

A recorded offline session gives real step records; the compressor runs against a ledger rebuilt
from it (as in test_compression_invariants), the request measured by the ledger's own estimate.
"""

from __future__ import annotations

import itertools
import json
from pathlib import Path
from types import SimpleNamespace

import pytest

from artemis_cli.config.profile import load_profile
from artemis_cli.config.task import load_task
from artemis_cli.engine.db import DataEngine
from artemis_cli.memory.chunk_lens import ChunkBands, ChunkJob, ChunkLensError
from artemis_cli.memory.frozen_chunk import PENDING_MARK
from artemis_cli.memory.ledger import Tail, estimate_tokens
from artemis_cli.memory.restore import SessionSpec, entry_from_step
from artemis_cli.models.offline.scripted import ScriptedModel
from artemis_cli.models.registry import reference_script
from artemis_cli.operators.compression import (
    BUDGET_FLOOR_EVENT,
    SNAPSHOT_SKIPPED_EVENT,
    CompressionPolicy,
    Compressor,
)
from artemis_cli.runner import new_ledger, run_task
from artemis_cli.sim.phone import SimPhone

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def session(tmp_path_factory: pytest.TempPathFactory) -> tuple[DataEngine, str]:
    task = load_task(REPO / "tasks" / "clock-ten-alarms.yaml")
    engine = DataEngine.open(tmp_path_factory.mktemp("budget"))
    result = run_task(task, load_profile("flash"), SimPhone(world=task.sim.world, seed=task.sim.seed,
                                                             popups=task.sim.popups),
                      ScriptedModel(reference_script(task)), engine, real_time=False)
    assert result.success and result.steps >= 40
    return engine, result.session_id


class FailingLens:
    """A chunk lens that fails every attempt (the raw turns must stay: correctness over tokens)."""

    source = "failing"

    def summarize(self, job: ChunkJob) -> ChunkBands:
        raise ChunkLensError("the lens gave up")


def compressor(engine: DataEngine, sid: str, steps: int = 30, **policy: object) -> Compressor:
    spec = SessionSpec.load(engine, sid)
    ledger = new_ledger(SimpleNamespace(goal=spec.goal, app=spec.app), spec.profile, engine, spec.max_steps)
    for step in engine.get_steps(sid, 1, steps):
        ledger.commit(entry_from_step(engine, step))
    pol = CompressionPolicy(**{"max_steps": 10, "min_active_steps": 5, "budget_tokens": 100_000,  # type: ignore[arg-type]
                               "max_resends": 0, **policy})
    return Compressor(engine, sid, ledger, pol, FailingLens(), goal=spec.goal)  # type: ignore[arg-type]


def measure_of(comp: Compressor, step: int) -> object:
    tail = Tail(step=step, replies_in=[], observation=f"# CURRENT OBSERVATION (step {step})", image_png=None)
    return lambda: estimate_tokens(comp.ledger.request(tail, []))


def settle(comp: Compressor) -> None:
    assert comp.flush(60)  # let the background lens calls end


def test_the_budget_holds_when_the_chunk_lens_fails_and_raw_turns_stay(session: tuple[DataEngine, str]) -> None:
    engine, sid = session
    probe = compressor(engine, sid)
    full = measure_of(probe, 31)()  # type: ignore[operator]
    probe.stop(0)
    budget = int(full * 0.6)  # A's 30 raw steps do not fit; 5 of them do
    comp = compressor(engine, sid, budget_tokens=budget)
    try:
        measure = measure_of(comp, 31)
        comp.on_turn(31, 1_000, None)  # segments close; their lens fails in the background
        settle(comp)
        assert comp.segments and all(s.status == "failed" for s in comp.segments)
        assert measure() > budget  # type: ignore[operator]  # nothing was swapped: the raw turns stayed
        decisions = comp.on_turn(32, 1_000, None, measure=measure)  # type: ignore[arg-type]
        assert measure() <= budget  # type: ignore[operator]
        assert decisions and decisions[0].op == "frozen"
        assert PENDING_MARK in comp.ledger.f_body  # forced out ledger-only, with the pending mark
        assert len(comp.ledger.entries) == 5  # the minimum active window stays
        assert engine.events(sid, kind=BUDGET_FLOOR_EVENT) == []  # no need to go below it
    finally:
        comp.stop(0)


def test_the_snapshot_fires_at_most_once_per_emergency_interval(session: tuple[DataEngine, str]) -> None:
    engine, sid = session
    comp = compressor(engine, sid, steps=10, budget_tokens=200, emergency_interval_steps=4)  # always over
    before = {e.id for e in engine.events(sid, kind=SNAPSHOT_SKIPPED_EVENT)}
    attempts: list[int] = []
    try:
        for step in range(11, 31):
            comp.ledger.commit(entry_from_step(engine, engine.get_step(sid, step)))
            decisions = comp.on_turn(step + 1, 1_000, None, measure=measure_of(comp, step + 1))  # type: ignore[arg-type]
            ops = [op for d in decisions if d.op == "frozen" for op in json.loads(d.ops or "[]")]
            if any(op["op"] == "snapshot" for op in ops):
                attempts.append(step + 1)
        attempts += [e.step for e in engine.events(sid, kind=SNAPSHOT_SKIPPED_EVENT)
                     if e.id not in before and e.step is not None]
        attempts.sort()
        assert len(attempts) >= 3
        assert all(b - a >= 4 for a, b in itertools.pairwise(attempts)), attempts
        assert comp.snapshots >= 1
    finally:
        comp.stop(0)


def test_below_the_floor_it_shrinks_what_it_can_and_records_an_event(session: tuple[DataEngine, str]) -> None:
    engine, sid = session
    comp = compressor(engine, sid, steps=12, budget_tokens=300)  # below S + F: cannot fit
    floor_events = len(engine.events(sid, kind=BUDGET_FLOOR_EVENT))
    try:
        comp.on_turn(13, 1_000, None, measure=measure_of(comp, 13))  # type: ignore[arg-type]
        events = engine.events(sid, kind=BUDGET_FLOOR_EVENT)
        assert len(events) == floor_events + 1
        payload = events[-1].payload
        assert payload["budget_tokens"] == 300 and payload["over"] is True  # it says it could not
        assert any("active window down to" in s for s in payload["shrunk"])
        assert len(comp.ledger.entries) < 5  # below the minimum window: the floor case
    finally:
        comp.stop(0)
