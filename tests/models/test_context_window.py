"""The server's context window, read at the wire from the fake OpenAI server playing vLLM
(``/v1/models`` ``max_model_len``), llama.cpp (``/props``) and Ollama (``/api/show``); the
effective budget it gives; and the fake refusing an over-long request as vLLM does, through the
real openai SDK."""

from __future__ import annotations

import openai
import pytest

from artemis_cli.config.profile import load_profile
from artemis_cli.models.context_window import OLLAMA_DEFAULT_NUM_CTX, read_window
from artemis_cli.models.fakes.openai import FakeOpenAIServer
from artemis_cli.models.openai_provider import OpenAIModel
from artemis_cli.operators.budget_floor import plan_budget


@pytest.mark.parametrize(("kind", "source"), [
    ("vllm", "vLLM GET /v1/models max_model_len"),
    ("llamacpp", "llama.cpp GET /props n_ctx"),
    ("ollama", "Ollama /api/show num_ctx"),
])
def test_each_server_kind_says_its_window(kind: str, source: str) -> None:
    with FakeOpenAIServer(max_model_len=8192, window_kind=kind) as server:
        assert read_window(server.base_url, "local-vl") == (8192, source)
        model = OpenAIModel(["local-vl"], base_url=server.base_url)
        assert model.context_window() == (8192, source)
        asked = len(server.requests)
        model.context_window()  # once per run: the answer is kept
        assert len(server.requests) == asked
    budget = plan_budget(load_profile("flash"), (1080, 2400), model, model.context_window())
    assert (budget.tokens, budget.source, budget.window_tokens) == (8192 - 1024, "server", 8192)
    assert "server window 8,192 from " + source in budget.text()


def test_ollama_without_num_ctx_serves_its_default_and_others_may_not_say() -> None:
    with FakeOpenAIServer(window_kind="ollama") as server:  # the model sets no num_ctx
        assert read_window(server.base_url, "m") == (OLLAMA_DEFAULT_NUM_CTX, "Ollama's default num_ctx (the model sets none)")
    with FakeOpenAIServer() as server:  # an OpenAI-compatible server that does not say
        assert read_window(server.base_url, "m") is None
        model = OpenAIModel(["m"], base_url=server.base_url)
        budget = plan_budget(load_profile("flash"), (1080, 2400), model, model.context_window())
        assert (budget.tokens, budget.source) == (80_000, "profile")
    assert read_window("http://127.0.0.1:9/v1", "m", timeout_s=0.5) is None  # nothing listening: never fatal


def test_the_fake_refuses_a_request_over_its_window_as_vllm_does() -> None:
    with FakeOpenAIServer(max_model_len=300) as server:
        client = openai.OpenAI(api_key="x", base_url=server.base_url, max_retries=0)
        ok = client.chat.completions.create(model="m", messages=[{"role": "user", "content": "hello"}], max_tokens=10)
        assert ok.usage is not None and ok.usage.prompt_tokens < 300
        with pytest.raises(openai.BadRequestError) as caught:
            client.chat.completions.create(model="m", messages=[{"role": "user", "content": "word " * 400}],
                                           max_tokens=50)
        body = caught.value.body
        assert isinstance(body, dict)
        assert body["type"] == "BadRequestError" and body["param"] == "messages"
        assert body["message"].startswith("This model's maximum context length is 300 tokens. However, you requested ")
        assert "in the messages, 50 in the completion). Please reduce the length of the messages or completion." \
            in body["message"]
        assert [m for _, m in server.overflows] == [50]
        listed = client.models.list().data
        assert listed and all(getattr(m, "max_model_len", None) == 300 for m in listed)
