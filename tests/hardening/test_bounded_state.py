"""Per-step state held in RAM stays bounded over long runs (issue 8, benchmarks/rss.py): the
DataEngine is the memory, so the runner keeps only what it reads back. Real objects throughout."""

from __future__ import annotations

import json
from pathlib import Path

from artemis_cli.engine import DataEngine, SessionRecord, StepRecord
from artemis_cli.memory import LensJob, LensResult, StepMemoryService
from artemis_cli.memory.ledger import LedgerDecision, TranscriptLedger
from artemis_cli.memory.recall import Recall
from artemis_cli.memory.similarity import SCAN_STEPS
from artemis_cli.operators.act import ActionResult, PlannedAction
from artemis_cli.operators.observe import observe
from artemis_cli.operators.recording import HISTORY_STEPS, StepWriter
from artemis_cli.operators.turn import TurnResult
from artemis_cli.sim.phone import SimPhone


class EchoLens:
    """The smallest Lens: describes every step the same way."""

    source = "visual_lens"
    model_name = "echo"

    def describe(self, job: LensJob) -> LensResult:
        return LensResult(text=f"Home screen with app icons (step {job.step}).", source=self.source,
                          model=self.model_name)


def _job(sid: str, step: int) -> LensJob:
    return LensJob(session_id=sid, step=step, pre_png=b"pre", post_png=None, action_kind="tap", points=[],
                   action_phrase="tap", pre_xml="<hierarchy/>", post_xml=None)


def test_memory_service_holds_only_jobs_in_flight(tmp_path: Path) -> None:
    engine = DataEngine.open(tmp_path / "data")
    sid = engine.create_session(SessionRecord(goal="g"))
    steps = 300
    with StepMemoryService(engine, EchoLens()) as service:
        for n in range(1, steps + 1):
            engine.record_step(StepRecord(session_id=sid, number=n, action_type="tap"))
            service.submit(_job(sid, n))
        assert service.flush(30)
        assert service._jobs == {}  # finished jobs are not kept (was: one Future per step)
        # a repeated submit of a decided step is still ignored (the DataEngine rejects its pending write)
        service.submit(_job(sid, 1))
        assert service._jobs == {}
        assert service.state(sid, 1)[0] == "ready"
    assert sum(1 for s in engine.get_steps(sid) if s.summary_status == "ready") == steps
    engine.close()


def test_ledger_decision_log_is_bounded_and_keeps_what_resume_reads() -> None:
    ledger = TranscriptLedger(system="s", tools=[], task_text="task")
    frozen = 0
    for turn in range(2, 10_002):
        ledger.apply(LedgerDecision("xml", at=turn, step=turn - 1))
        ledger.apply(LedgerDecision("image", at=turn, step=turn - 3, state="pending", text="[pending]"))
        if turn % 12 == 0:
            frozen += 1
            ops = json.dumps([{"op": "chunk", "n": frozen}])
            ledger.apply(LedgerDecision("frozen", at=turn, text=f"F text {frozen} " * 200, end=turn - 5, ops=ops))
        ledger.apply(LedgerDecision("turn", at=turn))
    log = ledger.decisions
    assert [d for d in log if d.op != "frozen"] == [
        LedgerDecision("xml", at=10_001, step=10_000),
        LedgerDecision("image", at=10_001, step=9998, state="pending", text="[pending]"),
        LedgerDecision("turn", at=10_001),
    ]
    kept = [d for d in log if d.op == "frozen"]
    assert [json.loads(d.ops or "")[0]["n"] for d in kept] == list(range(1, frozen + 1))  # every F op, in order
    assert all(d.text is None for d in kept[:-1]) and kept[-1].text == f"F text {frozen} " * 200
    assert ledger.f_body == kept[-1].text


def test_step_writer_keeps_the_similarity_scan_window_only(tmp_path: Path) -> None:
    assert HISTORY_STEPS >= SCAN_STEPS
    engine = DataEngine.open(tmp_path / "data")
    sid = engine.create_session(SessionRecord(goal="g"))
    phone = SimPhone(seed=1, popups=False)
    info = phone.info()
    obs = observe(phone, (info.width, info.height), "pixels")
    writer = StepWriter(engine, sid, Recall(engine))
    total = HISTORY_STEPS + 40
    action = PlannedAction("press_key", {"key": "home"})
    for n in range(1, total + 1):
        writer.write(number=n, started_at="2025-01-01T00:00:00.000Z", offset_ms=n * 1000, pre=obs, post=obs,
                     action=action, result=ActionResult("ok"),
                     turn=TurnResult(action, None), users=[], observation="obs", replies_in=[], replies_out=[])
    assert len(writer.history) == HISTORY_STEPS
    assert [t.step for t in writer.history] == list(range(total - HISTORY_STEPS + 1, total + 1))
    assert engine.last_step_number(sid) == total  # every step is still recorded
    engine.close()
