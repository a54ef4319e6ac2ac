"""Runs the tests share: the demo task on the fake Gemini server through the real SDK."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from artemis_cli.config.profile import load_profile
from artemis_cli.config.task import SimOptions, load_task
from artemis_cli.device.select import sim_for
from artemis_cli.engine.db import DataEngine
from artemis_cli.models.fake_gemini import FakeGeminiServer
from artemis_cli.models.gemini import GeminiModel
from artemis_cli.models.registry import reference_script
from artemis_cli.models.scripted import script_policy
from artemis_cli.runner import RunResult, run_task

REPO = Path(__file__).resolve().parent.parent


@contextlib.contextmanager
def demo_on_fake_gemini(data: Path, wrap: Callable[[Any], Any]) -> Iterator[tuple[RunResult, DataEngine, FakeGeminiServer]]:
    """tasks/demo.yaml run on the fake Gemini server through the real SDK, the server playing the
    task's reference solution through ``wrap(policy)``: (result, engine, server) while it is up."""
    task = load_task(REPO / "tasks" / "demo.yaml")
    with FakeGeminiServer(wrap(script_policy(reference_script(task))), min_cacheable_tokens=256) as srv:
        model = GeminiModel(["gemini-2.5-flash"], api_key="k", base_url=srv.base_url, sleep=lambda s: None,
                            backoff_s=0.0)
        engine = DataEngine.open(data)
        result = run_task(task, load_profile("flash"), sim_for(SimOptions(world=task.sim.world, seed=task.sim.seed)), model, engine, real_time=False)
        yield result, engine, srv
