"""Profiles and the registry for OpenAI-compatible roles: validation of the endpoint fields, Gemini
fallbacks not following a role to another provider, ``build_model`` / ``role_model`` choosing
endpoints, and the configuration errors a user meets (with what to do next)."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from artemis_cli.config.profile import Profile, load_profile
from artemis_cli.config.task import load_task
from artemis_cli.errors import ConfigError, ModelConfigError, UsageError
from artemis_cli.models.base import Message, ModelRequest, Part
from artemis_cli.models.fakes.openai import FakeOpenAIServer
from artemis_cli.models.gemini import GeminiModel
from artemis_cli.models.openai_provider import OpenAIModel
from artemis_cli.models.openai_wire import WireOptions
from artemis_cli.models.registry import build_model, default_model_name, role_model

REPO = Path(__file__).resolve().parents[2]
TASK = load_task(REPO / "tasks" / "demo.yaml")
LENS_REQUEST = ModelRequest(system="Describe the change.", messages=[Message("user", [Part(text="look")])],
                            role="lens")


@pytest.fixture(autouse=True)
def _no_openai_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for var in ("OPENAI_API_KEY", "ARTEMIS_OPENAI_BASE_URL", "ARTEMIS_OPENAI_TIMEOUT_S", "ARTEMIS_GEMINI_BASE_URL"):
        monkeypatch.delenv(var, raising=False)


@pytest.fixture
def server_a() -> Iterator[FakeOpenAIServer]:
    with FakeOpenAIServer() as srv:
        yield srv


@pytest.fixture
def server_b() -> Iterator[FakeOpenAIServer]:
    with FakeOpenAIServer() as srv:
        yield srv


def write_profile(folder: Path, text: str, name: str = "custom.yaml") -> Path:
    path = folder / name
    path.write_text(text, encoding="utf-8")
    return path


def profile_from(folder: Path, text: str) -> Profile:
    return load_profile(str(write_profile(folder, text)), search_dirs=[REPO])


def config_error(folder: Path, text: str) -> ConfigError:
    with pytest.raises(ConfigError) as info:
        profile_from(folder, text)
    return info.value


def openai_model(model: Any) -> OpenAIModel:
    assert isinstance(model, OpenAIModel), model
    return model


# --- profile validation ------------------------------------------------------------------------


def test_base_url_on_a_gemini_role_names_the_field(tmp_path: Path) -> None:
    error = config_error(tmp_path, "extends: flash\nmodels:\n  visual_lens: {model: x, base_url: http://127.0.0.1:8/v1}\n")
    assert error.field == "models.visual_lens.base_url" and error.line == 3
    assert "provider openai" in str(error)


def test_api_key_env_on_a_gemini_role_names_the_field(tmp_path: Path) -> None:
    error = config_error(tmp_path, "extends: flash\nmodels:\n  planner: {model: x, api_key_env: MY_KEY}\n")
    assert error.field == "models.planner.api_key_env"


def test_text_tool_calls_on_gemini_is_an_error(tmp_path: Path) -> None:
    error = config_error(tmp_path, "extends: flash\nmodels:\n  operator: {model: m, tool_calls: text}\n")
    assert error.field == "models.operator.tool_calls" and "provider openai" in str(error)


def test_max_image_side_on_gemini_is_an_error(tmp_path: Path) -> None:
    error = config_error(tmp_path, "extends: flash\nmodels:\n  operator: {model: m, max_image_side: 512}\n")
    assert error.field == "models.operator.max_image_side" and "screenshot.max_side" in str(error)


@pytest.mark.parametrize("value", ["9BAD", "MY-KEY", "MY KEY", "$OPENAI_API_KEY"])
def test_bad_api_key_env_pattern(tmp_path: Path, value: str) -> None:
    error = config_error(tmp_path, f"extends: flash\nmodels:\n  operator: {{provider: openai, model: m, "
                                   f"api_key_env: {json.dumps(value)}}}\n")
    assert error.field == "models.operator.api_key_env"


@pytest.mark.parametrize(("key", "value"), [("base_url", "127.0.0.1:8000/v1"), ("base_url", "ftp://host/v1"),
                                            ("tool_calls", "json"), ("max_image_side", 10)])
def test_bad_openai_role_values(tmp_path: Path, key: str, value: Any) -> None:
    error = config_error(tmp_path, f"extends: flash\nmodels:\n  operator: {{provider: openai, model: m, "
                                   f"{key}: {json.dumps(value)}}}\n")
    assert error.field == f"models.operator.{key}"


def test_unknown_provider(tmp_path: Path) -> None:
    error = config_error(tmp_path, "extends: flash\nmodels:\n  operator: {provider: anthropic, model: m}\n")
    assert error.field == "models.operator.provider"


def test_a_valid_openai_role(tmp_path: Path) -> None:
    profile = profile_from(tmp_path, "extends: flash\nmodels:\n  operator: {provider: openai, model: m, "
                                     "base_url: http://127.0.0.1:8000/v1, api_key_env: MY_KEY, tool_calls: text, "
                                     "max_image_side: 768}\n")
    op = profile.models.operator
    assert (op.provider, op.base_url, op.api_key_env, op.tool_calls, op.max_image_side) == (
        "openai", "http://127.0.0.1:8000/v1", "MY_KEY", "text", 768)


# --- fallbacks do not follow a role to another provider -------------------------------------------


def test_role_moved_to_openai_over_the_defaults_drops_the_gemini_fallback(tmp_path: Path) -> None:
    profile = profile_from(tmp_path, "loop: flash\nmodels:\n  operator: {provider: openai, model: m}\n")
    assert profile.models.operator.chain == ["m"]
    assert profile.models.planner.chain == ["gemini-2.5-flash", "gemini-2.0-flash"]  # untouched roles keep theirs
    direct = Profile.model_validate({"name": "x", "loop": "pro", "models": {"planner": {"provider": "openai",
                                                                                       "model": "p"}}})
    assert direct.models.planner.chain == ["p"]
    assert direct.models.operator.chain == ["gemini-2.5-pro", "gemini-2.5-flash"]


def test_role_moved_to_openai_over_a_parent_drops_the_parents_fallback(tmp_path: Path) -> None:
    profile = profile_from(tmp_path, "extends: flash\nmodels:\n  operator: {provider: openai, model: m}\n"
                                     "  visual_lens: {provider: openai, model: v, fallback: [v2]}\n")
    assert profile.models.operator.chain == ["m"]
    assert profile.models.visual_lens.chain == ["v", "v2"]  # a fallback of its own is kept
    assert profile.models.chunk_lens.chain == ["gemini-2.5-flash", "gemini-2.5-flash-lite"]
    # a grandchild changing only the model of an OpenAI role keeps that role's own fallback
    write_profile(tmp_path, "extends: flash\nmodels:\n  operator: {provider: openai, model: m, fallback: [m2]}\n",
                  "parent.yaml")
    child = profile_from(tmp_path, "extends: parent.yaml\nmodels:\n  operator: {model: m-big}\n")
    assert child.models.operator.provider == "openai" and child.models.operator.chain == ["m-big", "m2"]


# --- build_model / role_model --------------------------------------------------------------------


def test_openai_name_serves_every_role(server_a: FakeOpenAIServer) -> None:
    flash = load_profile("flash", search_dirs=[REPO])
    operator = openai_model(build_model("openai:NAME", task=TASK, profile=flash, base_url=server_a.base_url))
    assert (operator.name, operator.chain, operator.base_url) == ("NAME", ["NAME"], server_a.base_url)
    assert operator.serves_all_roles and "NAME" in operator.label
    for role in ("visual_lens", "chunk_lens", "planner", "validator"):
        model = openai_model(role_model(operator, flash, role))
        assert (model.chain, model.base_url) == (["NAME"], server_a.base_url)
        assert model._client is operator._client
    lens = openai_model(role_model(operator, flash, "visual_lens"))
    lens.generate(LENS_REQUEST)
    assert [r.model for r in server_a.requests] == ["NAME"]


def test_openai_name_uses_an_openai_roles_wire_options(tmp_path: Path, server_a: FakeOpenAIServer) -> None:
    profile = profile_from(tmp_path, "extends: flash\nmodels:\n  operator: {provider: openai, model: m, "
                                     "tool_calls: text}\n  visual_lens: {provider: openai, model: v, "
                                     "max_image_side: 256}\n")
    operator = openai_model(build_model("openai:NAME", task=TASK, profile=profile, base_url=server_a.base_url))
    assert operator.options == WireOptions(tool_calls="text") and operator.name == "NAME"
    lens = openai_model(role_model(operator, profile, "visual_lens"))
    assert lens.options == WireOptions(max_image_side=256) and lens.name == "NAME"
    assert openai_model(role_model(operator, profile, "planner")).options == operator.options  # a Gemini role


def test_roles_on_two_servers(tmp_path: Path, server_a: FakeOpenAIServer, server_b: FakeOpenAIServer) -> None:
    profile = profile_from(tmp_path, f"""extends: flash
models:
  operator:    {{provider: openai, model: op, base_url: "{server_a.base_url}"}}
  planner:     {{provider: openai, model: plan, base_url: "{server_a.base_url}", tool_calls: text}}
  visual_lens: {{provider: openai, model: lens, base_url: "{server_b.base_url}", max_image_side: 512}}
""")
    assert default_model_name(profile) == "profile"
    operator = openai_model(build_model(None, task=TASK, profile=profile))
    assert (operator.name, operator.base_url, operator.serves_all_roles) == ("op", server_a.base_url, False)
    lens = openai_model(role_model(operator, profile, "visual_lens"))
    assert (lens.name, lens.base_url, lens.options) == ("lens", server_b.base_url, WireOptions(max_image_side=512))
    assert lens._client is not operator._client
    planner = openai_model(role_model(operator, profile, "planner"))  # same endpoint: the operator's client
    assert (planner.name, planner._client, planner.options) == ("plan", operator._client,
                                                                WireOptions(tool_calls="text"))
    lens.generate(LENS_REQUEST)
    assert [r.model for r in server_b.requests] == ["lens"] and server_a.requests == []


def test_a_gemini_role_without_a_gemini_key(tmp_path: Path, server_a: FakeOpenAIServer,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    for var in ("GEMINI_API_KEY", "GOOGLE_API_KEY"):
        monkeypatch.delenv(var, raising=False)
    profile = profile_from(tmp_path, f'extends: flash\nmodels:\n  operator: {{provider: openai, model: op, '
                                     f'base_url: "{server_a.base_url}"}}\n')
    operator = build_model(None, task=TASK, profile=profile)
    with pytest.raises(ModelConfigError) as info:
        role_model(operator, profile, "visual_lens")
    assert "visual_lens" in str(info.value) and "gemini-2.5-flash-lite" in str(info.value)
    hint = info.value.hint or ""
    assert "GEMINI_API_KEY" in hint and "models.visual_lens.provider: openai" in hint and "openai:NAME" in hint
    # with a key the role runs on Gemini, its own chain
    monkeypatch.setenv("GEMINI_API_KEY", "test-key")
    lens = role_model(operator, profile, "visual_lens")
    assert isinstance(lens, GeminiModel) and lens.chain == ["gemini-2.5-flash-lite", "gemini-2.0-flash-lite"]


def test_offline_operators_have_no_role_models(server_a: FakeOpenAIServer) -> None:
    flash = load_profile("flash", search_dirs=[REPO])
    assert role_model(build_model("heuristic", task=TASK, profile=flash), flash, "visual_lens") is None


# --- configuration errors ------------------------------------------------------------------------


def test_base_url_with_a_non_openai_model_is_a_usage_error() -> None:
    flash = load_profile("flash", search_dirs=[REPO])
    for name in ("heuristic", "gemini", "gemini-2.5-flash", "scripted"):
        with pytest.raises(UsageError) as info:
            build_model(name, task=TASK, profile=flash, base_url="http://127.0.0.1:8000/v1")
        assert "--base-url" in str(info.value) and "openai:NAME" in (info.value.hint or "")


def test_base_url_with_a_non_openai_model_on_the_command_line(data_home: Path) -> None:
    proc = subprocess.run([sys.executable, "-m", "artemis_cli", "run", "tasks/demo.yaml", "--model", "heuristic",
                           "--base-url", "http://127.0.0.1:8000/v1", "--no-live"], cwd=REPO, capture_output=True,
                          text=True, timeout=120, stdin=subprocess.DEVNULL)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "--base-url applies to OpenAI-compatible models" in proc.stderr
    assert "--model openai:NAME --base-url URL" in proc.stderr  # the hint
    assert not list(data_home.glob("**/*.db"))  # refused before any session was created


def test_other_model_name_errors(server_a: FakeOpenAIServer) -> None:
    flash = load_profile("flash", search_dirs=[REPO])
    with pytest.raises(UsageError, match="needs the name"):
        build_model("openai:", task=TASK, profile=flash, base_url=server_a.base_url)
    with pytest.raises(UsageError, match="provider: openai"):
        build_model("profile", task=TASK, profile=flash)


def test_a_named_key_variable_that_is_unset(tmp_path: Path) -> None:
    profile = profile_from(tmp_path, "extends: flash\nmodels:\n  operator: {provider: openai, model: m, "
                                     "base_url: http://127.0.0.1:8000/v1, api_key_env: ARTEMIS_TEST_UNSET_KEY}\n")
    with pytest.raises(ModelConfigError) as info:
        build_model(None, task=TASK, profile=profile)
    assert "ARTEMIS_TEST_UNSET_KEY" in str(info.value) and "export ARTEMIS_TEST_UNSET_KEY" in (info.value.hint or "")
    assert info.value.exit_code == 2


def test_no_endpoint_and_no_openai_key(monkeypatch: pytest.MonkeyPatch) -> None:
    flash = load_profile("flash", search_dirs=[REPO])
    with pytest.raises(ModelConfigError) as info:
        build_model("openai:m", task=TASK, profile=flash)
    assert "OPENAI_API_KEY" in str(info.value)
    assert "--base-url" in (info.value.hint or "") and "ARTEMIS_OPENAI_BASE_URL" in (info.value.hint or "")
    # the environment's endpoint is the default for --base-url
    monkeypatch.setenv("ARTEMIS_OPENAI_BASE_URL", "http://127.0.0.1:8123/v1")
    assert openai_model(build_model("openai:m", task=TASK, profile=flash)).base_url == "http://127.0.0.1:8123/v1"
    # with a key and no endpoint, api.openai.com
    monkeypatch.delenv("ARTEMIS_OPENAI_BASE_URL")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    model = openai_model(build_model("openai:m", task=TASK, profile=flash))
    assert model.base_url is None and "api.openai.com" in model.label


def test_default_model_name(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for var in ("GEMINI_API_KEY", "GOOGLE_API_KEY"):
        monkeypatch.delenv(var, raising=False)
    flash = load_profile("flash", search_dirs=[REPO])
    assert default_model_name(flash) == default_model_name() == "heuristic"
    openai_profile = profile_from(tmp_path, "extends: flash\nmodels:\n  operator: {provider: openai, model: m}\n")
    assert default_model_name(openai_profile) == "profile"
    monkeypatch.setenv("GEMINI_API_KEY", "k")
    assert default_model_name(flash) == "gemini" and default_model_name(openai_profile) == "profile"


def test_timeout_from_the_environment(server_a: FakeOpenAIServer, monkeypatch: pytest.MonkeyPatch) -> None:
    flash = load_profile("flash", search_dirs=[REPO])
    monkeypatch.setenv("ARTEMIS_OPENAI_TIMEOUT_S", "7.5")
    assert openai_model(build_model("openai:m", task=TASK, profile=flash, base_url=server_a.base_url)).timeout_s == 7.5
    monkeypatch.setenv("ARTEMIS_OPENAI_TIMEOUT_S", "-1")
    with pytest.raises(ModelConfigError, match="ARTEMIS_OPENAI_TIMEOUT_S"):
        build_model("openai:m", task=TASK, profile=flash, base_url=server_a.base_url)
