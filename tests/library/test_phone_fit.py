"""``phone.act`` on a small local window: the session's AI steps are fitted to the server's window
as ``artemis run`` is (stored in the session, no request over the window), or refused with
``fit=False``."""

from __future__ import annotations

from pathlib import Path

import pytest
from library_support import LOGIN, LOGIN_GOAL, SHOP_SECRETS

from artemis_cli import Phone, UsageError
from artemis_cli.engine.db import DataEngine
from artemis_cli.models.fakes.openai import FakeOpenAIServer, script_policy
from artemis_cli.models.openai_provider import OpenAIModel


def _model(server: FakeOpenAIServer) -> OpenAIModel:
    return OpenAIModel(["local-vl"], base_url=server.base_url, max_retries=0, sleep=lambda s: None, timeout_s=10)


def test_ai_steps_fit_an_8k_window(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with FakeOpenAIServer(script_policy(LOGIN), max_model_len=8192) as server:
        with Phone.open("sim", data_dir=tmp_path, model="openai:local-vl", base_url=server.base_url,
                        secrets=SHOP_SECRETS, real_time=False) as phone:
            phone.launch("Shop")
            assert phone.act(LOGIN_GOAL).success
        assert server.overflows == [] and not any(r.status == 400 for r in server.requests)
    with DataEngine.open_for_reading(tmp_path) as engine:
        config = engine.get_session(phone.session_id or "").config or {}
    budget = config["context_budget"]
    assert budget["fitted"] and budget["floor_tokens"] <= budget["tokens"] == 8192 - 1024
    assert config["profile"]["screenshot"]["max_side"] < 1152  # the loops ran with the fitted profile


def test_fit_false_refuses_below_the_floor(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with FakeOpenAIServer(script_policy(LOGIN), max_model_len=8192) as server, \
            Phone.open("sim", data_dir=tmp_path, model=_model(server), secrets=SHOP_SECRETS, real_time=False,
                       fit=False) as phone:
        phone.launch("Shop")
        with pytest.raises(UsageError, match="below its floor"):
            phone.act(LOGIN_GOAL)
        assert not [r for r in server.requests if r.path.endswith("/chat/completions")]
