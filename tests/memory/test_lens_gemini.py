"""VisualTransitionLens through the real google-genai SDK against FakeGeminiServer, driven by the
StepMemoryService on a real DataEngine: the request the server receives (sections, images, red
marker) and the output checks (degenerate and verdict outputs are failed attempts)."""

from __future__ import annotations

import base64
import binascii
import io
from typing import Any

import pytest
from PIL import Image

from artemis_cli.engine import DataEngine, SessionRecord, StepRecord
from artemis_cli.engine.records import LlmCallRecord
from artemis_cli.errors import ModelRequestError
from artemis_cli.memory import LENS_SYSTEM_PROMPT, LensJob, StepMemoryService, VisualTransitionLens
from artemis_cli.models.base import ModelRequest, ModelResponse
from artemis_cli.models.fakes.gemini import FakeGeminiServer, FakeReply, FakeRequest
from artemis_cli.models.gemini import GeminiModel

NEUTRAL = 'Settings screen with a "Network & internet" row; the red ring sits on the "Wi-Fi" switch, which now reads "ON".'
TAP = (700, 500)


def solid_png(color: tuple[int, int, int], size: tuple[int, int] = (1080, 2400)) -> bytes:
    buf = io.BytesIO()
    Image.new("RGB", size, color).save(buf, format="PNG")
    return buf.getvalue()


PRE = solid_png((235, 235, 235))
POST = solid_png((40, 40, 120))


class Replies:
    """Policy: the next text of a list (the last one repeats)."""

    def __init__(self, *texts: str) -> None:
        self.texts = list(texts)

    def __call__(self, req: FakeRequest) -> FakeReply:
        text = self.texts.pop(0) if len(self.texts) > 1 else self.texts[0]
        return FakeReply.text(text)


@pytest.fixture
def sid(engine: DataEngine) -> str:
    session_id = engine.create_session(SessionRecord(goal="Turn on Wi-Fi"))
    for n in (1, 2, 3):
        engine.record_step(StepRecord(session_id=session_id, number=n, action_type="tap"))
    return session_id


def make_job(sid: str, step: int = 1, *, post: bool = True, kind: str = "tap",
             points: list[tuple[int, int]] | None = None) -> LensJob:
    return LensJob(
        session_id=sid, step=step, pre_png=PRE, post_png=POST if post else None, action_kind=kind,
        points=[TAP] if points is None else points, action_phrase='tap Switch "Wi-Fi" (id wifi_switch)',
        pre_xml="<hierarchy/>", post_xml="<hierarchy/>" if post else None,
    )


def run_lens(engine: DataEngine, server: FakeGeminiServer, job: LensJob, *, retry_limit: int = 3) -> list[LlmCallRecord]:
    """Summarise one job through the service; returns the llm_calls rows the lens produced."""

    def record(request: ModelRequest, response: ModelResponse | None, error: Exception | None) -> None:
        attempts = response.attempts if response is not None else getattr(error, "attempts", [])
        for i, attempt in enumerate(attempts, 1):
            engine.record_llm_call(LlmCallRecord.from_attempt(
                session_id=job.session_id, step=job.step, request=request, attempt=attempt, attempt_number=i))

    model = GeminiModel(["gemini-2.5-flash-lite"], api_key="test-key", base_url=server.base_url,
                        timeout_s=5, max_retries=0, sleep=lambda s: None)
    with StepMemoryService(engine, VisualTransitionLens(model, record_call=record), retry_limit=retry_limit) as svc:
        svc.submit(job)
        assert svc.flush(30)
    return engine.llm_calls(job.session_id)


def texts(req: FakeRequest) -> list[str]:
    return [p["text"] for c in req.contents for p in c["parts"] if "text" in p]


def images(req: FakeRequest) -> list[bytes]:
    out = []
    for c in req.contents:
        for p in c["parts"]:
            inline: dict[str, Any] | None = p.get("inlineData") or p.get("inline_data")
            if inline:
                data = inline["data"]
                try:
                    out.append(base64.b64decode(data, validate=True))
                except binascii.Error:
                    out.append(base64.urlsafe_b64decode(data + "=" * (-len(data) % 4)))
    return out


def red_pixels_near(png: bytes, point: tuple[int, int], radius: int = 60) -> int:
    image = Image.open(io.BytesIO(png)).convert("RGB")
    x0, y0 = point
    count = 0
    for y in range(y0 - radius, y0 + radius):
        for x in range(x0 - radius, x0 + radius):
            r, g, b = image.getpixel((x, y))  # type: ignore[misc]
            if r > 200 and g < 80 and b < 80:
                count += 1
    return count


def test_neutral_text_becomes_ready_and_the_call_is_metered_as_lens(engine: DataEngine, sid: str) -> None:
    with FakeGeminiServer(Replies(NEUTRAL)) as server:
        calls = run_lens(engine, server, make_job(sid))
        (req,) = server.requests
    step = engine.get_step(sid, 1)
    assert (step.summary_status, step.summary, step.summary_source, step.summary_model) == (
        "ready", NEUTRAL, "visual_lens", "gemini-2.5-flash-lite")
    assert req.model == "gemini-2.5-flash-lite"
    assert req.system == LENS_SYSTEM_PROMPT
    assert req.tools == []
    assert [(c.role, c.status) for c in calls] == [("lens", "ok")]


def test_transition_request_has_before_with_marker_then_after(engine: DataEngine, sid: str) -> None:
    with FakeGeminiServer(Replies(NEUTRAL)) as server:
        run_lens(engine, server, make_job(sid))
        (req,) = server.requests
    sent = texts(req)
    assert "BEFORE ACTION:" in sent and "AFTER ACTION:" in sent
    assert sent.index("BEFORE ACTION:") < sent.index("AFTER ACTION:")
    before, after = images(req)
    assert red_pixels_near(before, TAP) > 200  # ring + dot drawn where the tap landed
    assert red_pixels_near(PRE, TAP) == 0
    assert red_pixels_near(before, (200, 2000)) == 0  # and nowhere else
    assert after == POST  # the after-image goes as it is


def test_single_image_variant_has_no_after_section(engine: DataEngine, sid: str) -> None:
    with FakeGeminiServer(Replies(NEUTRAL)) as server:
        run_lens(engine, server, make_job(sid, 2, post=False))
        (req,) = server.requests
    joined = "\n".join(texts(req))
    assert "AFTER" not in joined and "BEFORE" not in joined
    (only,) = images(req)
    assert red_pixels_near(only, TAP) > 200
    assert engine.get_step(sid, 2).summary_status == "ready"


def test_swipe_marker_is_an_arrow_between_the_points(engine: DataEngine, sid: str) -> None:
    start, end = (540, 1800), (540, 600)
    with FakeGeminiServer(Replies(NEUTRAL)) as server:
        run_lens(engine, server, make_job(sid, 3, kind="swipe", points=[start, end]))
        (req,) = server.requests
    before = images(req)[0]
    assert red_pixels_near(before, start, 20) > 50
    assert red_pixels_near(before, (540, 1200), 20) > 50  # the shaft
    assert "arrow from (540,1800) to (540,600)" in "\n".join(texts(req))


@pytest.mark.parametrize(
    ("reply", "reason"),
    [
        ("ok", "too_short"),
        ("The screen shows a list. " * 80, "too_long"),
        ('The "Wi-Fi" switch was turned on successfully.', "verdict_word"),
        ("The agent navigated to the network page.", "verdict_word"),
        ("AFTER ACTION: the screen shows the network page.", "echo"),
        ("   ", "empty"),
    ],
)
def test_degenerate_or_verdict_outputs_fail_every_attempt(engine: DataEngine, sid: str, reply: str, reason: str) -> None:
    with FakeGeminiServer(Replies(reply)) as server:
        calls = run_lens(engine, server, make_job(sid))
        assert len(server.requests) == 3  # bounded: retry_limit attempts, then failed
    step = engine.get_step(sid, 1)
    assert (step.summary_status, step.summary) == ("failed", None)
    (event,) = engine.events(sid, kind="lens_failure")
    assert event.payload["attempts"] == 3
    assert event.payload["error_class"] == "LensError"
    assert event.payload["reason"] == reason
    assert len(calls) == 3 and all(c.role == "lens" for c in calls)


def test_a_bad_first_output_is_retried_into_a_good_one(engine: DataEngine, sid: str) -> None:
    with FakeGeminiServer(Replies("done", NEUTRAL)) as server:
        run_lens(engine, server, make_job(sid))
        assert len(server.requests) == 2
    assert engine.get_step(sid, 1).summary == NEUTRAL


def test_quoted_screen_text_with_a_verdict_word_is_an_observation(engine: DataEngine, sid: str) -> None:
    reply = 'Checkout screen; the red ring is on the "Done" button and a "Payment successful" banner appeared.'
    with FakeGeminiServer(Replies(reply)) as server:
        run_lens(engine, server, make_job(sid))
    assert engine.get_step(sid, 1).summary_status == "ready"


def test_model_errors_count_as_attempts_and_are_recorded(engine: DataEngine, sid: str) -> None:
    seen: list[type[BaseException] | None] = []
    with FakeGeminiServer(Replies(NEUTRAL)) as server:
        server.inject("400", count=2)
        model = GeminiModel(["gemini-2.5-flash-lite"], api_key="test-key", base_url=server.base_url,
                            timeout_s=5, max_retries=0, sleep=lambda s: None)
        lens = VisualTransitionLens(model, record_call=lambda r, resp, err: seen.append(type(err) if err else None))
        with StepMemoryService(engine, lens) as svc:
            svc.submit(make_job(sid))
            assert svc.flush(30)
    assert seen == [ModelRequestError, ModelRequestError, None]
    assert engine.get_step(sid, 1).summary_status == "ready"


def test_model_errors_exhaust_into_failed(engine: DataEngine, sid: str) -> None:
    with FakeGeminiServer(Replies(NEUTRAL)) as server:
        server.inject("400", count=5)
        calls = run_lens(engine, server, make_job(sid), retry_limit=2)
    assert engine.get_step(sid, 1).summary_status == "failed"
    (event,) = engine.events(sid, kind="lens_failure")
    assert (event.payload["attempts"], event.payload["error_class"]) == (2, "ModelRequestError")
    assert [c.status for c in calls] == ["error", "error"]
