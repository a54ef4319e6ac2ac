"""The scripted fake-server policy's lens answers, through the real google-genai SDK: the visual-lens stub
reads the request's ``ACTION TAKEN:`` line (so each step gets its own text, which says it is stub text),
passes the lens output checks, and is sent with a ``stub-…`` model version."""

from __future__ import annotations

import io
from collections.abc import Iterator

import pytest
from PIL import Image

from artemis_cli.memory.lens import ACTION_MARKER, LensJob, VisualTransitionLens, build_lens_request
from artemis_cli.models.fakes.gemini import FakeGeminiServer
from artemis_cli.models.gemini import GeminiModel
from artemis_cli.models.offline.scripted import (
    STUB_CHUNK_LENS_MODEL,
    STUB_LENS_MODEL,
    StubReply,
    script_policy,
)


def _png(color: tuple[int, int, int]) -> bytes:
    buf = io.BytesIO()
    Image.new("RGB", (540, 1200), color).save(buf, format="PNG")
    return buf.getvalue()


def _job(step: int, phrase: str, *, kind: str = "tap", points: list[tuple[int, int]] | None = None,
         post: bool = True) -> LensJob:
    return LensJob(session_id="s", step=step, pre_png=_png((230, 230, 230)), post_png=_png((20, 20, 90)) if post else None,
                   action_kind=kind, points=[(300, 400)] if points is None else points, action_phrase=phrase,
                   pre_xml="<hierarchy/>", post_xml="<hierarchy/>" if post else None)


@pytest.fixture
def server() -> Iterator[FakeGeminiServer]:
    with FakeGeminiServer(script_policy([{"key": "back"}])) as srv:
        yield srv


def _lens(server: FakeGeminiServer) -> VisualTransitionLens:
    return VisualTransitionLens(GeminiModel(["gemini-2.5-flash-lite"], api_key="test-key", base_url=server.base_url,
                                            timeout_s=5, max_retries=0, sleep=lambda s: None))


def test_stub_description_is_derived_from_the_action_taken_line(server: FakeGeminiServer) -> None:
    lens = _lens(server)
    assert ACTION_MARKER in "\n".join(p.text or "" for p in build_lens_request(_job(1, "x")).messages[0].parts)
    wifi = lens.describe(_job(1, 'tap Switch "Wi-Fi" (id wifi_switch)')).text
    back = lens.describe(_job(2, "press_key back", kind="press_key", points=[], post=False)).text
    assert 'tap Switch "Wi-Fi" (id wifi_switch)' in wifi and "red ring and dot at (300,400)" in wifi
    assert "An after-screenshot was sent too." in wifi
    assert "press_key back" in back and "No after-screenshot was sent." in back
    assert wifi != back
    for text in (wifi, back):
        assert "Stub text from the fake server: no image was analysed." in text
        assert ACTION_MARKER not in text  # not an echo of the prompt (the lens checks would fail it)


def test_stub_description_keeps_verdict_words_quoted(server: FakeGeminiServer) -> None:
    # the action phrase is data: a verdict word in it (unquoted, or cut mid-quote) must not fail the lens
    text = _lens(server).describe(_job(3, "finish success=true answer=done " + '"x' * 200)).text
    assert '"success"' in text and '"done"' in text


def test_stub_replies_carry_a_stub_model_version(server: FakeGeminiServer) -> None:
    reply = StubReply(parts=[{"text": "some description of a screen"}])
    assert reply.model_version == STUB_LENS_MODEL
    assert STUB_LENS_MODEL.startswith("stub-") and STUB_CHUNK_LENS_MODEL.startswith("stub-")
    assert "gemini" not in STUB_LENS_MODEL and "gemini" not in STUB_CHUNK_LENS_MODEL
