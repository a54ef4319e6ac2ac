"""The Flash loop driving the simulated phone with the gemini model through the real SDK.

The fake Gemini server plays the task's reference solution (scripted decisions) and accounts
usage like the service; every request crosses the real google-genai client and HTTP.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from artemis_cli.config.profile import load_profile
from artemis_cli.config.task import load_task
from artemis_cli.engine.db import DataEngine
from artemis_cli.models.fakes.gemini import FakeGeminiServer
from artemis_cli.models.gemini import GeminiModel
from artemis_cli.models.offline.scripted import script_policy
from artemis_cli.models.registry import reference_script
from artemis_cli.runner import run_task
from artemis_cli.sim.phone import SimPhone

REPO = Path(__file__).resolve().parents[2]
CHAIN = ["gemini-2.5-flash", "gemini-2.0-flash"]


@pytest.fixture
def demo_task():
    return load_task(REPO / "tasks" / "demo.yaml")


@pytest.fixture
def server(demo_task) -> Iterator[FakeGeminiServer]:
    with FakeGeminiServer(script_policy(reference_script(demo_task)), min_cacheable_tokens=256) as srv:
        yield srv


def _run(task, server: FakeGeminiServer, tmp_path: Path, **model_kw):
    model = GeminiModel(CHAIN, api_key="test-key", base_url=server.base_url, sleep=lambda s: None,
                        backoff_s=0.0, **model_kw)
    engine = DataEngine.open(tmp_path / "data")
    phone = SimPhone(world=task.sim.world, seed=task.sim.seed)
    result = run_task(task, load_profile("flash"), phone, model, engine, real_time=False)
    return result, engine


def test_gemini_run_completes_and_records_usage(demo_task, server, tmp_path: Path) -> None:
    result, engine = _run(demo_task, server, tmp_path)
    assert result.success and result.exit_code == 0
    assert not result.offline_model
    everything = engine.llm_calls(result.session_id)
    calls = [c for c in everything if c.role == "operator"]
    lens_calls = [c for c in everything if c.role == "lens"]
    assert len(calls) == result.steps
    assert len(everything) == len(server.requests)
    assert lens_calls and all(c.model == "gemini-2.5-flash-lite" for c in lens_calls)
    assert all(c.status == "ok" and c.model == CHAIN[0] for c in calls)
    assert all(c.prompt_tokens > 0 and c.completion_tokens > 0 for c in calls)
    # Later calls share the stable prefix and earlier turns with the first: the service caches them.
    assert calls[0].cached_tokens == 0
    assert all(c.cached_tokens > 0 for c in calls[1:])
    assert all(c.cached_tokens <= c.prompt_tokens for c in calls)
    # The stable prefix (system + tools) hashes the same on every call.
    assert len({c.prefix_hash for c in calls}) == 1
    assert len({c.request_hash for c in calls}) == len(calls)


def test_thought_signatures_are_echoed_unchanged(demo_task, server, tmp_path: Path) -> None:
    """Every signature the server issued comes back on the next request (else it answers 400)."""
    result, _ = _run(demo_task, server, tmp_path)
    assert result.success
    assert all(r.status == 200 for r in server.requests)
    later = [r for r in server.requests if r.tools][-1].contents
    echoed = [p for c in later if c.get("role") == "model" for p in c["parts"] if "functionCall" in p]
    assert echoed and all(p.get("thoughtSignature") or p.get("thought_signature") for p in echoed)


def test_503_falls_back_to_the_next_model_and_the_run_goes_on(demo_task, server, tmp_path: Path) -> None:
    server.inject("503", count=3, model=CHAIN[0])  # 1 try + 2 retries on the first model
    result, engine = _run(demo_task, server, tmp_path, max_retries=2)
    assert result.success
    calls = engine.llm_calls(result.session_id)
    first_step = [c for c in calls if c.step == 1 and c.role == "operator"]
    assert [(c.model, c.status, c.error_class) for c in first_step] == [
        (CHAIN[0], "error", "http_503"),
        (CHAIN[0], "error", "http_503"),
        (CHAIN[0], "error", "http_503"),
        (CHAIN[1], "ok", None),
    ]


def test_400_is_not_retried_into_a_weaker_model(demo_task, server, tmp_path: Path) -> None:
    server.inject("400", count=1, model=CHAIN[0])
    result, engine = _run(demo_task, server, tmp_path)
    assert not result.success
    assert result.exit_code == 3 and result.status == "aborted"
    assert {r.model for r in server.requests} == {CHAIN[0]}
    calls = [c for c in engine.llm_calls(result.session_id) if c.role == "operator"]
    assert [(c.model, c.status, c.error_class) for c in calls] == [(CHAIN[0], "error", "http_400")]
    assert engine.get_session(result.session_id).status == "aborted"


def test_api_key_is_never_stored(demo_task, server, tmp_path: Path) -> None:
    sentinel = "SENTINEL-KEY-7f3a9c"
    model = GeminiModel(CHAIN, api_key=sentinel, base_url=server.base_url, sleep=lambda s: None)
    engine = DataEngine.open(tmp_path / "data")
    result = run_task(demo_task, load_profile("flash"), SimPhone(seed=demo_task.sim.seed), model, engine,
                      real_time=False)
    assert result.success
    engine.close()
    for path in (tmp_path / "data").rglob("*"):
        if path.is_file():
            assert sentinel.encode() not in path.read_bytes(), path
