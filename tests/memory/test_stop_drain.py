"""A stop drains the step memory service (issue 35): a summary job a stop cuts off writes nothing
(neither its summary nor its model call) even when its answer comes back after the engine is
closed, logs nothing, stays ``pending``, and is made on resume with its call recorded once.
The real VisualTransitionLens through the real google-genai SDK against FakeGeminiServer, whose
lens answer is held on an event the test controls; real SQLite."""

from __future__ import annotations

import io
import logging
import threading
from pathlib import Path

import pytest
from PIL import Image
from run_support import stop_begun

from artemis_cli.engine import DataEngine, SessionRecord, StepRecord
from artemis_cli.errors import debug_enabled
from artemis_cli.memory import StepMemoryService, VisualTransitionLens
from artemis_cli.models.fakes.gemini import FakeGeminiServer, FakeReply, FakeRequest
from artemis_cli.models.gemini import GeminiModel
from artemis_cli.operators.recording import pending_lens_jobs
from artemis_cli.operators.roles import call_recorder

SUMMARY = 'Settings list; the red ring sits on the "Wi-Fi" row, which now reads "ON".'
XML = '<hierarchy rotation="0"><node text="Wi-Fi" bounds="[0,0][1080,200]"/></hierarchy>'


def _png(color: tuple[int, int, int]) -> bytes:
    buf = io.BytesIO()
    Image.new("RGB", (540, 1200), color).save(buf, format="PNG")
    return buf.getvalue()


class HeldLens:
    """Fake-server policy: every lens request is announced (``entered``) and answered only once
    ``release`` is set."""

    def __init__(self) -> None:
        self.entered = threading.Event()
        self.release = threading.Event()

    def __call__(self, request: FakeRequest) -> FakeReply:
        self.entered.set()
        assert self.release.wait(30), "the test never released the lens"
        return FakeReply.text(SUMMARY)


def _session(data: Path) -> tuple[DataEngine, str]:
    engine = DataEngine.open(data)
    sid = engine.create_session(SessionRecord(goal="Turn on Wi-Fi", task_id="t"))
    blobs = {"pre_screenshot": (_png((230, 230, 230)), "screenshot"), "ui_xml": (XML.encode(), "ui_xml"),
             "post_screenshot": (_png((40, 40, 120)), "screenshot"), "post_ui_xml": (XML.encode(), "ui_xml")}
    engine.record_step(StepRecord(session_id=sid, number=1, action_type="tap", action_args={"index": 2}, x=500, y=100,
                                  target={"text": "Wi-Fi", "label_source": "text"}, meta={"post_observed": True}),
                       blobs=blobs)
    return engine, sid


def _service(engine: DataEngine, sid: str, server: FakeGeminiServer) -> StepMemoryService:
    model = GeminiModel(["gemini-2.5-flash-lite"], api_key="k", base_url=server.base_url, timeout_s=60,
                        max_retries=0, sleep=lambda s: None)
    return StepMemoryService(engine, VisualTransitionLens(model, record_call=call_recorder(engine, sid)))


def test_a_cut_off_summary_writes_nothing_logs_nothing_and_is_made_once_on_resume(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    data = tmp_path / "data"
    engine, sid = _session(data)
    held = HeldLens()
    with FakeGeminiServer(held) as server, caplog.at_level(logging.DEBUG):
        svc = _service(engine, sid, server)
        (job,) = pending_lens_jobs(engine, engine.get_steps(sid))  # the job as a resume rebuilds it
        assert job.post_png is not None and job.action_phrase.startswith("tap")
        svc.submit(job)
        assert held.entered.wait(30)  # the lens call is in flight
        assert svc.stop(0.05) == [f"step {sid}/1: summary job"]  # not back within the bound: cut off
        engine.close()  # what the stop path does next (after the final status)
        held.release.set()  # the answer comes back to a closed engine
        assert svc.flush(30)  # the worker has ended
        assert len(server.requests) == 1 and server.requests[0].status == 200
    assert [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING] == []
    assert not debug_enabled()

    with DataEngine.open(data) as reopened:
        assert reopened.get_step(sid, 1).summary_status == "pending"
        assert reopened.llm_calls(sid) == []  # the cut-off call is not half-recorded
        done = HeldLens()
        done.release.set()
        with FakeGeminiServer(done) as server:
            svc = _service(reopened, sid, server)
            for again in pending_lens_jobs(reopened, reopened.get_steps(sid)):  # what `artemis resume` does
                svc.submit(again)
            assert svc.flush(30)
            svc.stop(0)
        step = reopened.get_step(sid, 1)
        assert (step.summary_status, step.summary) == ("ready", SUMMARY)
        calls = reopened.llm_calls(sid)
        assert [(c.role, c.status) for c in calls] == [("lens", "ok")]  # recorded once
        assert pending_lens_jobs(reopened, reopened.get_steps(sid)) == []


def test_a_summary_back_within_the_bound_is_written_with_its_call(tmp_path: Path) -> None:
    engine, sid = _session(tmp_path / "data")
    held = HeldLens()
    with engine, FakeGeminiServer(held) as server:
        svc = _service(engine, sid, server)
        svc.submit(pending_lens_jobs(engine, engine.get_steps(sid))[0])
        assert held.entered.wait(30)
        stopper = stop_begun(svc, 60)  # the stop has begun and waits for the job
        held.release.set()
        stopper.join(60)
        assert not stopper.is_alive()
        assert engine.get_step(sid, 1).summary_status == "ready"
        assert [c.role for c in engine.llm_calls(sid)] == ["lens"]
