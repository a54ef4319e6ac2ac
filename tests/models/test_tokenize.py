"""The budget floor's S zone counted by the server's own tokenizer: vLLM's and llama.cpp's
``POST /tokenize`` on the fake OpenAI server, Gemini's ``countTokens`` on the fake Gemini server
(the real google-genai SDK); each fake counts as it charges a completion, answers as the real
server does for a bad body, and a server without the endpoint answers 404 so the budget falls
back to the estimate, saying so in ``measured_by``."""

from __future__ import annotations

import json
import math
import urllib.error
import urllib.request
from typing import Any

import openai
import pytest

from artemis_cli.config.profile import load_profile
from artemis_cli.models.base import ToolDecl
from artemis_cli.models.fakes.gemini import FakeGeminiServer, FakeReply
from artemis_cli.models.fakes.openai import FakeOpenAIServer
from artemis_cli.models.gemini import GeminiModel
from artemis_cli.models.openai_provider import OpenAIModel
from artemis_cli.models.openai_wire import tool_schema
from artemis_cli.operators.budget_floor import ESTIMATED
from artemis_cli.operators.prompts import system_prompt
from artemis_cli.operators.tools import tool_declarations
from artemis_cli.runner import fitted_context

SYSTEM = system_prompt()
TOOLS = [ToolDecl(d.name, d.description, d.parameters) for d in tool_declarations("pixels")]


def post(url: str, body: Any) -> tuple[int, Any]:
    request = urllib.request.Request(url, data=json.dumps(body).encode(), headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=5) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read() or b"null")


def root(server: FakeOpenAIServer) -> str:
    return server.base_url[: -len("/v1")]


def test_vllm_tokenize_counts_what_a_completion_of_the_same_prefix_is_charged() -> None:
    with FakeOpenAIServer(max_model_len=8192) as server:
        model = OpenAIModel(["local-vl"], base_url=server.base_url)
        measured = model.count_tokens(SYSTEM, TOOLS)
        client = openai.OpenAI(api_key="x", base_url=server.base_url, max_retries=0)
        charged = client.chat.completions.create(model="local-vl", messages=[{"role": "system", "content": SYSTEM}],
                                                 tools=tool_schema(TOOLS), max_tokens=5)  # type: ignore[arg-type]
        assert charged.usage is not None and measured == (charged.usage.prompt_tokens, "vLLM POST /tokenize")
        assert post(root(server) + "/tokenize", {"model": "m", "prompt": "abcdefgh"}) == (
            200, {"count": 2, "max_model_len": 8192, "tokens": [0, 1]})
        status, body = post(root(server) + "/tokenize", {"model": "m"})  # neither prompt nor messages
        assert status == 400 and "prompt or messages" in body["error"]["message"]
        status, _ = post(root(server) + "/tokenize", {"model": "m", "messages": [{"role": "wizard", "content": "x"}]})
        assert status == 400
    with FakeOpenAIServer(max_model_len=8192, models=["served"]) as server:
        assert post(root(server) + "/tokenize", {"model": "other", "prompt": "x"})[0] == 404


def test_llamacpp_tokenize_counts_the_text_and_answers_nothing_for_no_content() -> None:
    with FakeOpenAIServer(max_model_len=8192, window_kind="llamacpp") as server:
        model = OpenAIModel(["local-vl"], base_url=server.base_url)
        count, how = model.count_tokens(SYSTEM, TOOLS) or (0, "")
        sent = server.tokenize_log[-1]["content"]
        assert how == "llama.cpp POST /tokenize" and count == math.ceil(len(sent) / 4)
        assert sent.startswith(SYSTEM) and json.loads(sent[len(SYSTEM) + 1:]) == tool_schema(TOOLS)
        assert post(root(server) + "/tokenize", {"model": "m", "prompt": "x"}) == (200, {"tokens": []})


@pytest.mark.parametrize(("kind", "tokenize"), [("vllm", False), ("llamacpp", False), ("ollama", True)])
def test_a_server_without_a_tokenizer_answers_404_and_the_budget_estimates(kind: str, tokenize: bool) -> None:
    with FakeOpenAIServer(max_model_len=8192, window_kind=kind, tokenize=tokenize) as server:
        assert post(root(server) + "/tokenize", {"model": "m", "content": "x", "prompt": "x"})[0] == 404
        model = OpenAIModel(["local-vl"], base_url=server.base_url)
        assert model.count_tokens(SYSTEM, TOOLS) is None
        _, budget = fitted_context(load_profile("flash"), model, (1080, 2400))
    assert budget.measured_by == ESTIMATED and server.errors == []


def test_the_budget_says_the_servers_count_was_used() -> None:
    with FakeOpenAIServer(max_model_len=8192) as server:
        model = OpenAIModel(["local-vl"], base_url=server.base_url)
        profile, budget = fitted_context(load_profile("flash"), model, (1080, 2400))
        measured = model.count_tokens(system_prompt(knowhow=profile.knowhow), TOOLS)
    assert budget.measured_by == "vLLM POST /tokenize"
    assert measured is not None and budget.floor_parts["system_and_tools"] == measured[0]
    assert len(server.tokenize_log) == 3  # full and short know-how once each (plus the check above)


def never(req: Any) -> FakeReply:
    raise AssertionError("no generateContent expected")


def test_gemini_count_tokens_through_the_sdk_and_its_fallback() -> None:
    with FakeGeminiServer(never) as server:
        model = GeminiModel(["gemini-2.5-flash"], api_key="k", base_url=server.base_url)
        count, how = model.count_tokens(SYSTEM, TOOLS) or (0, "")
        declarations = json.dumps([{"name": t.name, "description": t.description, "parameters": t.parameters}
                                   for t in TOOLS], separators=(",", ":"))
        assert how == "Gemini models.countTokens"
        assert count == math.ceil(len(SYSTEM) / 4) + math.ceil(len(declarations) / 4)
        _, budget = fitted_context(load_profile("flash"), model, (1080, 2400))
        assert budget.measured_by == how and server.count_log == ["gemini-2.5-flash"] * 2
        status, body = post(server.base_url.rstrip("/") + "/v1beta/models/gemini-2.5-flash:countTokens?key=k", {})
        assert status == 400 and body["error"]["status"] == "INVALID_ARGUMENT"
        assert post(server.base_url.rstrip("/") + "/v1beta/models/nope:countTokens?key=k",
                    {"contents": [{"parts": [{"text": "x"}]}]})[0] == 404
        assert server.requests == [] and server.errors == []
    with FakeGeminiServer(never, count_tokens=False) as server:
        model = GeminiModel(["gemini-2.5-flash"], api_key="k", base_url=server.base_url)
        assert model.count_tokens(SYSTEM, TOOLS) is None
        assert fitted_context(load_profile("flash"), model, (1080, 2400))[1].measured_by == ESTIMATED
