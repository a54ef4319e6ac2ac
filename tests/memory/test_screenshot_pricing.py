"""Images priced on purpose (issue 13): the screenshot the model sees is scaled per the profile,
the fake Gemini server prices images per model family as the service does, Gemini 3 models get
the profile's media resolution, and each screenshot is paid for once — the image sent in a
turn's tail is byte-identical in the next turn's active window and inside its cached prefix."""

from __future__ import annotations

import base64
import io
import threading
import time
from collections.abc import Callable
from typing import Any

import pytest
from PIL import Image

from artemis_cli.config.profile import Profile, load_profile
from artemis_cli.config.task import Task
from artemis_cli.engine.db import DataEngine
from artemis_cli.models.base import Message, ModelRequest, Part
from artemis_cli.models.fakes.gemini import FakeGeminiServer, FakeReply, FakeRequest, image_tokens_for
from artemis_cli.models.gemini import GeminiModel
from artemis_cli.models.offline.scripted import script_policy
from artemis_cli.perception.model_image import scale_for_model, scaled_size
from artemis_cli.perception.png import png_size
from artemis_cli.runner import run_task
from artemis_cli.sim.phone import SimPhone


def png(size: tuple[int, int] = (1080, 2400)) -> bytes:
    buf = io.BytesIO()
    Image.new("RGB", size, (200, 60, 60)).save(buf, format="PNG")
    return buf.getvalue()


def decode(data: str) -> bytes:
    """The SDK sends inline data URL-safe base64 encoded."""
    return base64.urlsafe_b64decode(data + "=" * (-len(data) % 4))


def inline(data: bytes) -> dict[str, Any]:
    return {"mimeType": "image/png", "data": base64.b64encode(data).decode("ascii")}


# -- scaling ------------------------------------------------------------------------------------


def test_scaling_keeps_the_aspect_and_is_deterministic() -> None:
    full = png()
    once, twice = scale_for_model(full, 1152), scale_for_model(full, 1152)
    assert once == twice  # same bytes in, same bytes out: the prefix cache can hold it
    assert png_size(once) == (518, 1152) == scaled_size(1080, 2400, 1152)
    assert scale_for_model(full, None) == full and scale_for_model(full, 4000) == full
    assert scale_for_model(b"not a png", 512) == b"not a png"


def test_the_default_profile_at_least_halves_image_tokens_on_a_1080x2400_phone() -> None:
    for name in ("flash", "pro"):
        profile = load_profile(name)
        model = profile.models.operator.model
        sent = scale_for_model(png(), profile.screenshot.max_side)
        full = image_tokens_for(inline(png()), model)
        assert image_tokens_for(inline(sent), model) * 2 <= full, name


# -- the fake server prices per family --------------------------------------------------------


def _answer(_: FakeRequest) -> FakeReply:
    return FakeReply.text("ok")


def _prompt_tokens(model: str, image: bytes, media_resolution: str | None) -> tuple[int, FakeRequest]:
    with FakeGeminiServer(_answer) as server:
        client = GeminiModel([model], api_key="fake-key", base_url=server.base_url, max_retries=0)
        text_only = client.generate(ModelRequest(system="s", messages=[Message("user", [Part(text="x")])], role="lens"))
        request = ModelRequest(system="s", messages=[Message("user", [Part(text="x"), Part(image_png=image)])],
                               role="lens", media_resolution=media_resolution)
        with_image = client.generate(request)
        return with_image.usage.prompt_tokens - text_only.usage.prompt_tokens, server.requests[-1]


def test_gemini_2_images_cost_258_per_768_tile() -> None:
    tokens, sent = _prompt_tokens("gemini-2.5-flash", png(), "medium")
    assert tokens == 2064  # 2 x 4 tiles
    assert "mediaResolution" not in (sent.body.get("generationConfig") or {})  # 2.x is not sent it
    assert _prompt_tokens("gemini-2.5-flash", png((518, 1152)), None)[0] == 516
    assert _prompt_tokens("gemini-2.5-flash", png((300, 300)), None)[0] == 258


@pytest.mark.parametrize(("setting", "expected"), [(None, 1120), ("low", 280), ("medium", 560), ("high", 1120)])
def test_gemini_3_images_cost_what_their_media_resolution_says(setting: str | None, expected: int) -> None:
    tokens, sent = _prompt_tokens("gemini-3-flash-preview", png(), setting)
    assert tokens == expected
    config = sent.body.get("generationConfig") or {}
    assert config.get("mediaResolution") == (f"MEDIA_RESOLUTION_{setting.upper()}" if setting else None)


# -- each screenshot paid once ------------------------------------------------------------------


def _chore(steps: int) -> list[dict[str, Any]]:
    block = [{"launch": "com.android.settings"}, {"tap": {"text": "Network & internet"}},
             {"tap": {"id": "wifi_switch"}}, {"key": "back"}, {"key": "home"}]
    script = (block * steps)[: steps - 1]
    return [*script, {"finish": {"success": True, "answer": "done"}}]


def _summaries_first(engine: DataEngine, policy: Callable[[FakeRequest], Any]) -> Callable[[FakeRequest], Any]:
    """``policy``, answering an operator turn only once every step recorded so far has its lens
    summary back: the turns a screenshot is scrubbed on then do not depend on how fast background
    lens calls return (under load a late summary postpones its scrub past the batch turn)."""

    def decided() -> bool:
        latest = engine.latest_session()
        return latest is None or all(s.summary_status != "pending" for s in engine.get_steps(latest.id))

    def answer(request: FakeRequest) -> Any:
        if request.tools:
            pause = threading.Event()
            deadline = time.monotonic() + 60
            while not decided():  # the lens calls are answered by other server threads meanwhile
                assert time.monotonic() < deadline, "a lens summary never came back"
                pause.wait(0.005)
        return policy(request)

    return answer


def _run(engine: DataEngine, settings: dict[str, Any], steps: int,
         lenses: str = "auto") -> tuple[FakeGeminiServer, str]:
    profile = Profile.model_validate(settings)
    task = Task.model_validate({"id": "prefix", "goal": "Toggle Wi-Fi a few times", "max_steps": steps + 5})
    server = FakeGeminiServer(_summaries_first(engine, script_policy(_chore(steps))))
    with server:
        op = profile.models.operator
        model = GeminiModel([op.model, *op.fallback], api_key="fake-key", base_url=server.base_url)
        result = run_task(task, profile, SimPhone(seed=3, popups=False), model, engine, real_time=False,
                          lenses=lenses)
    assert result.success
    return server, result.session_id


def _operator_images(req: FakeRequest) -> list[tuple[int, str]]:
    """(block index, base64) of every image in an operator request (blocks: system, tools, parts)."""
    out, index = [], 2
    for content in req.contents:
        for part in content.get("parts") or []:
            data = (part.get("inlineData") or {}).get("data")
            if data:
                out.append((index, data))
            index += 1
    return out


def test_every_screenshot_is_sent_scaled_and_paid_once(engine: DataEngine) -> None:
    settings = load_profile("flash").model_dump(mode="json")
    server, sid = _run(engine, settings, 16)
    requests = [r for r in server.requests if r.tools]
    logs = [c for c in server.cache_log if c.tools]
    assert len(requests) == len(logs) == 16
    batch = settings["memory"]["transcript"]["image_scrub_batch"]
    paid_twice, scrubs = [], []
    for step, (req, log) in enumerate(zip(requests, logs, strict=True), start=1):
        images = _operator_images(req)
        for _, data in images:
            assert png_size(decode(data)) == (518, 1152)  # scaled, never the device's 1080x2400
        if step == 1:
            continue
        earlier = images[:-1]  # every screenshot but this turn's own was sent before ...
        previous = [data for _, data in _operator_images(requests[step - 2])]
        assert all(data in previous for _, data in earlier)
        if len(earlier) < len(previous):  # (a list: two identical screens are two images)
            scrubs.append(step)  # a scrub batch may break the prefix, on a multiple of the batch only
            continue
        # ... and lies inside the prefix the service had cached: it is not billed again
        paid_twice += [step for index, _ in earlier if index >= log.shared_blocks]
    assert paid_twice == []
    assert scrubs and all(step % batch == 0 for step in scrubs), scrubs  # batched: not one scrub per turn
    recorded = engine.get_step(sid, 1)
    assert recorded is not None and recorded.pre_screenshot is not None
    assert png_size(engine.blobs.get(recorded.pre_screenshot)) == (1080, 2400)  # the record stays full size


def test_without_batching_the_scrub_edge_breaks_the_prefix_every_turn(engine: DataEngine) -> None:
    """The measurement that motivated batching (and proof the test above can fail): scrubbing
    one screenshot per turn re-bills the kept screenshots on every call."""
    settings = load_profile("flash").model_dump(mode="json")
    settings["memory"]["transcript"]["image_scrub_batch"] = 1
    # mechanical lenses: a summary is ready at once, so which turns scrub does not depend on how
    # fast background lens calls come back (under load, a late summary postpones its scrub)
    server, _ = _run(engine, settings, 12, lenses="mechanical")
    logs = [c for c in server.cache_log if c.tools]
    requests = [r for r in server.requests if r.tools]
    rebilled = [step for step, (req, log) in enumerate(zip(requests, logs, strict=True), start=1)
                if any(index >= log.shared_blocks for index, _ in _operator_images(req)[:-1])]
    assert len(rebilled) >= 6, rebilled
