"""Cached AI steps: the first passing run is the baseline, a second run of the unchanged test makes
no model call, and drift (``sim:drift``) is healed with fewer model calls than a fresh run."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from library_support import BUY_GOAL, LOGIN_GOAL, SCRIPTS, SHOP_SECRETS, run_shop

from artemis_cli import Phone, StepFailed
from artemis_cli.engine.db import DataEngine
from artemis_cli.library.cache import baseline_for
from artemis_cli.models.fakes.gemini import FakeGeminiServer
from artemis_cli.models.gemini import GeminiModel
from artemis_cli.models.offline.healer import HealerModel
from artemis_cli.models.offline.scripted import GoalScriptedModel, goal_policy


def _shop(data: Path, model: Any, device: str = "sim", **kw: Any) -> Phone:
    with Phone.open(device, data_dir=data, model=model, cache="shop", secrets=SHOP_SECRETS, real_time=False,
                    name="test_shop", **kw) as phone:
        run_shop(phone)
    return phone


def test_a_second_run_makes_no_model_call(tmp_path: Path) -> None:
    with FakeGeminiServer(goal_policy(SCRIPTS)) as srv:
        model = GeminiModel(["gemini-2.5-flash"], api_key="k", base_url=srv.base_url, sleep=lambda s: None,
                            backoff_s=0.0)
        first = _shop(tmp_path, model).stats()
        sent = len(srv.requests)
        second = _shop(tmp_path, model).stats()
        assert len(srv.requests) == sent  # not one request reached the server
    assert first.model_calls >= 8 and sent >= 8  # 8 operator turns (and the lens's) recorded
    assert (second.model_calls, second.steps, second.replayed_steps, second.healed_steps) == (0, 9, 8, 0)
    with DataEngine.open_for_reading(tmp_path) as engine:
        assert baseline_for(engine, "shop") == first.session_id  # a plain replay keeps the baseline
        how = [e.payload.get("how") for e in engine.events(second.session_id or "", "library_call")]
        assert how == ["cache", "cache", None]  # the two AI steps, then wait_for (a look)


def test_update_rerecords_and_another_goal_runs_the_model(tmp_path: Path) -> None:
    model = GoalScriptedModel(SCRIPTS)
    first = _shop(tmp_path, model).stats()
    again = _shop(tmp_path, model, update=True).stats()
    assert again.model_calls == first.model_calls == 8  # update: the model decided every step again
    with DataEngine.open_for_reading(tmp_path) as engine:
        assert baseline_for(engine, "shop") == again.session_id
    other = GoalScriptedModel({**SCRIPTS, "log in as demo": SCRIPTS[LOGIN_GOAL]})
    with Phone.open("sim", data_dir=tmp_path, model=other, cache="shop", secrets=SHOP_SECRETS,
                    real_time=False) as phone:
        phone.launch("Shop")
        assert phone.act("log in as demo").how == "model"  # the test changed: not the baseline's step
        assert phone.act(BUY_GOAL).how == "cache"  # the second AI step is still the baseline's second


def test_drift_heals_and_becomes_the_baseline(tmp_path: Path) -> None:
    recorded = _shop(tmp_path, GoalScriptedModel(SCRIPTS)).stats()
    healed = _shop(tmp_path, "heuristic", device="sim:drift").stats()  # heals with the offline healer
    assert healed.status == "succeeded" and healed.healed_steps > 0 and healed.replayed_steps > 0
    fresh = _shop(tmp_path / "fresh", GoalScriptedModel(SCRIPTS, make=HealerModel), device="sim:drift").stats()
    # a short test that drift touches in four places: fewer calls than a fresh run, not a quarter
    # (benchmarks/library_cache.py measures the ratio on the 60-step office order)
    assert 0 < healed.model_calls < fresh.model_calls, (healed.model_calls, fresh.model_calls)
    with DataEngine.open_for_reading(tmp_path) as engine:
        assert baseline_for(engine, "shop") == healed.session_id != recorded.session_id
        how = [e.payload.get("how") for e in engine.events(healed.session_id or "", "library_call")]
        assert how == ["healed", "healed", None]
    after = _shop(tmp_path, "heuristic", device="sim:drift").stats()  # the healed run replays as it is
    assert (after.model_calls, after.healed_steps) == (0, 0)


def test_a_failed_run_does_not_become_the_baseline(tmp_path: Path) -> None:
    model = GoalScriptedModel(SCRIPTS)
    with pytest.raises(StepFailed), Phone.open("sim", data_dir=tmp_path, model=model, cache="shop",
                                                secrets=SHOP_SECRETS, real_time=False) as phone:
        phone.launch("Shop")
        phone.act(LOGIN_GOAL)
        phone.tap("Not a button")
    with DataEngine.open_for_reading(tmp_path) as engine:
        assert baseline_for(engine, "shop") is None
