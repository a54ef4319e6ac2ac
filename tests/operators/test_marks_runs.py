"""Set-of-marks in whole runs: ``tasks/demo.yaml`` on the simulated phone, driven through the real
google-genai and openai SDKs against the fake servers.

What the model is sent is read off the wire (the fake server's recorded request) and compared with
the recorded screenshot: the image carries the marks (it is not the recorded screenshot scaled to
the same size, and it is exactly that screenshot with the step's stored marks drawn), the recorded
screenshot stays the device's bytes, and every turn still re-renders to its recorded hashes
(``sessions prompt --step N`` says ``match``), across a resume too. ``screenshot.marks: false``
sends the clean scaled image and stores no marks.
"""

from __future__ import annotations

import base64
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from artemis_cli.config.profile import Profile, load_profile
from artemis_cli.config.task import Task, load_task
from artemis_cli.engine.db import DataEngine
from artemis_cli.memory.turn_check import check_turn
from artemis_cli.models.fakes.gemini import FakeGeminiServer, FakeRequest
from artemis_cli.models.fakes.openai import FakeOpenAIRequest, FakeOpenAIServer
from artemis_cli.models.fakes.openai import script_policy as openai_script_policy
from artemis_cli.models.gemini import GeminiModel
from artemis_cli.models.offline.scripted import script_policy
from artemis_cli.models.registry import build_model, reference_script
from artemis_cli.perception.marks import draw_marks, marks_from_json
from artemis_cli.perception.model_image import scale_for_model
from artemis_cli.perception.png import png_size
from artemis_cli.resume import resume_session
from artemis_cli.runner import RunResult, run_task
from artemis_cli.sim.phone import SimPhone

REPO = Path(__file__).resolve().parents[2]
CHAIN = ["gemini-2.5-flash", "gemini-2.0-flash"]
MAX_SIDE = 1152


@pytest.fixture
def demo() -> Task:
    return load_task(REPO / "tasks" / "demo.yaml")


@pytest.fixture
def gemini_server(demo: Task) -> Iterator[FakeGeminiServer]:
    with FakeGeminiServer(script_policy(reference_script(demo)), min_cacheable_tokens=256) as srv:
        yield srv


def _phone(task: Task) -> SimPhone:
    assert task.sim is not None
    return SimPhone(world=task.sim.world, seed=task.sim.seed)


def _gemini(server: FakeGeminiServer) -> GeminiModel:
    return GeminiModel(CHAIN, api_key="test-key", base_url=server.base_url, sleep=lambda s: None, backoff_s=0.0)


def _profile(marks: bool) -> Profile:
    data = load_profile("flash").model_dump(mode="json")
    data["screenshot"]["marks"] = marks
    return Profile.model_validate(data)


def _gemini_images(req: FakeRequest) -> list[bytes]:
    """Every inline image of a request, in order (the SDK sends URL-safe base64)."""
    out = []
    for content in req.contents:
        for part in content.get("parts") or []:
            data = (part.get("inlineData") or part.get("inline_data") or {}).get("data")
            if data:
                out.append(base64.urlsafe_b64decode(data + "=" * (-len(data) % 4)))
    return out


def _openai_images(req: FakeOpenAIRequest) -> list[bytes]:
    out = []
    for message in req.messages:
        content = message.get("content")
        for item in content if isinstance(content, list) else []:
            url = (item.get("image_url") or {}).get("url", "") if item.get("type") == "image_url" else ""
            if url.startswith("data:image/png;base64,"):
                out.append(base64.b64decode(url.split(",", 1)[1]))
    return out


def _assert_every_step_re_renders(engine: DataEngine, sid: str, *, wire: bool = False) -> None:
    steps = engine.get_steps(sid)
    assert steps
    for step in steps:
        check = check_turn(engine, sid, step.number)
        assert check.match, (step.number, check.rows)
        if wire:
            assert all(r["wire_rendered"] == r["wire_recorded"] for r in check.rows), check.rows


def _assert_tail_images_are_marked(engine: DataEngine, sid: str, tails: list[bytes]) -> None:
    """The image each turn ended with (this step's screenshot) is the recorded screenshot with the
    step's stored marks drawn, and visibly not the recorded screenshot scaled to the same size."""
    steps = engine.get_steps(sid)
    assert len(tails) == len(steps)
    for step, sent in zip(steps, tails, strict=True):
        assert step.pre_screenshot is not None
        recorded = engine.blob(step.pre_screenshot)
        assert png_size(recorded) == (1080, 2400)  # the record stays the device's full-size, clean PNG
        marks = marks_from_json((step.meta or {}).get("marks"))
        assert marks, step.number  # the element list's boxes were stored with the step
        clean = scale_for_model(recorded, MAX_SIDE)
        assert png_size(sent) == png_size(clean) == (518, 1152)
        assert sent != clean
        assert sent == draw_marks(recorded, MAX_SIDE, marks)


def test_a_gemini_run_sends_the_marked_screenshot_and_re_renders(
    demo: Task, gemini_server: FakeGeminiServer, tmp_path: Path
) -> None:
    engine = DataEngine.open(tmp_path / "data")
    result = run_task(demo, load_profile("flash"), _phone(demo), _gemini(gemini_server), engine, real_time=False)
    assert result.success, result.message
    operator = [r for r in gemini_server.requests if r.tools]
    assert len(operator) == result.steps
    _assert_tail_images_are_marked(engine, result.session_id, [_gemini_images(r)[-1] for r in operator])
    # the earlier screenshots in the active window are the very bytes sent in their own turn
    first_tail = _gemini_images(operator[0])[-1]
    assert first_tail in _gemini_images(operator[1])[:-1]
    # the lenses (their requests declare no tools) get the clean screenshot
    lens_images = [img for r in gemini_server.requests if not r.tools for img in _gemini_images(r)]
    marked = {img for r in operator for img in _gemini_images(r)}
    assert lens_images and not marked & set(lens_images)
    _assert_every_step_re_renders(engine, result.session_id)


def test_marks_off_sends_the_clean_scaled_screenshot(
    demo: Task, gemini_server: FakeGeminiServer, tmp_path: Path
) -> None:
    engine = DataEngine.open(tmp_path / "data")
    result = run_task(demo, _profile(False), _phone(demo), _gemini(gemini_server), engine, real_time=False)
    assert result.success, result.message
    operator = [r for r in gemini_server.requests if r.tools]
    steps = engine.get_steps(result.session_id)
    for step, req in zip(steps, operator, strict=True):
        assert "marks" not in (step.meta or {})
        assert step.pre_screenshot is not None
        assert _gemini_images(req)[-1] == scale_for_model(engine.blob(step.pre_screenshot), MAX_SIDE)
    _assert_every_step_re_renders(engine, result.session_id)


def test_a_resumed_session_keeps_its_marks_and_its_cached_prefix(
    demo: Task, gemini_server: FakeGeminiServer, tmp_path: Path
) -> None:
    seen = [0]

    def third_operator_call(req: FakeRequest) -> bool:
        seen[0] += bool(req.tools)
        return bool(req.tools) and seen[0] == 3

    gemini_server.inject("400", count=1, match=third_operator_call)
    phone = _phone(demo)
    engine = DataEngine.open(tmp_path / "data")
    result = run_task(demo, load_profile("flash"), phone, _gemini(gemini_server), engine, real_time=False)
    assert result.status == "aborted" and result.steps == 2, result.message
    before = [r for r in gemini_server.requests if r.tools and r.status == 200]
    resumed = resume_session(result.session_id, engine, device=phone, model=_gemini(gemini_server), real_time=False)
    assert resumed.success, resumed.message
    after = [r for r in gemini_server.requests if r.tools and r.status == 200][len(before):]
    assert after
    # the first request after the resume re-sends the earlier steps' marked screenshots unchanged
    earlier = _gemini_images(after[0])[:-1]
    assert earlier and all(img in _gemini_images(before[-1]) for img in earlier)
    operator = [*before, *after]
    _assert_tail_images_are_marked(engine, result.session_id, [_gemini_images(r)[-1] for r in operator])
    calls = [c for c in engine.llm_calls(result.session_id) if c.role == "operator" and c.status == "ok"]
    assert calls[len(before)].cached_tokens > 0  # the resumed call shared its prefix with the service
    _assert_every_step_re_renders(engine, result.session_id)


def _openai_profile(folder: Path, url: str) -> Profile:
    roles = ("operator", "planner", "validator", "visual_lens", "chunk_lens")
    lines = ["extends: flash", "models:"]
    lines += [f'  {role}: {{provider: openai, model: {role}, base_url: "{url}"}}' for role in roles]
    path = folder / "openai-flash.yaml"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return load_profile(str(path), search_dirs=[REPO])


def test_an_openai_run_sends_the_marked_screenshot_and_its_wire_hash_re_renders(demo: Task, tmp_path: Path) -> None:
    with FakeOpenAIServer(openai_script_policy(reference_script(demo))) as server:
        profile = _openai_profile(tmp_path, server.base_url)
        assert profile.screenshot.marks
        model = build_model(None, task=demo, profile=profile)
        engine = DataEngine.open(tmp_path / "data")
        result: RunResult = run_task(demo, profile, _phone(demo), model, engine, real_time=False,
                                     run_config={"model": "profile", "base_url": server.base_url})
    assert server.errors == []
    assert result.success, result.message
    operator = [r for r in server.requests if r.model == "operator"]
    assert len(operator) == result.steps
    tails: list[Any] = [_openai_images(r)[-1] for r in operator]
    _assert_tail_images_are_marked(engine, result.session_id, tails)
    _assert_every_step_re_renders(engine, result.session_id, wire=True)


def test_the_report_shows_the_clean_screenshot_or_with_marks_the_one_the_model_saw(
    demo: Task, gemini_server: FakeGeminiServer, tmp_path: Path
) -> None:
    from typer.testing import CliRunner

    from artemis_cli.cli.app import app

    engine = DataEngine.open(tmp_path / "data")
    result = run_task(demo, load_profile("flash"), _phone(demo), _gemini(gemini_server), engine, real_time=False)
    assert result.success, result.message
    sent = [_gemini_images(r)[-1] for r in gemini_server.requests if r.tools]
    engine.close()
    runner = CliRunner()
    for flag, folder in (([], "clean"), (["--marks"], "marked")):
        res = runner.invoke(app, ["report", result.session_id, "-o", str(tmp_path / f"{folder}.html"), "--assets",
                                  str(tmp_path / folder), "--data-dir", str(tmp_path / "data"), *flag])
        assert res.exit_code == 0, res.output
    clean = {p.read_bytes() for p in (tmp_path / "clean" / "full").iterdir()}
    marked = {p.read_bytes() for p in (tmp_path / "marked" / "full").iterdir()}
    with DataEngine.open_for_reading(tmp_path / "data") as reader:
        recorded = {reader.blob(s.pre_screenshot) for s in reader.get_steps(result.session_id) if s.pre_screenshot}
    assert clean == recorded  # default: the device's screenshots, untouched
    assert marked == set(sent)  # --marks: exactly the images the operator was sent
    page = (tmp_path / "marked.html").read_text(encoding="utf-8")
    assert "screenshots as the model saw them" in page
    assert "screenshots as the model saw them" not in (tmp_path / "clean.html").read_text(encoding="utf-8")
