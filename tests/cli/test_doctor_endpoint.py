"""`artemis doctor --model openai:NAME --base-url URL` (and `--profile`): the real CLI in a
subprocess against the real FakeOpenAIServer, through the real openai SDK (no mocks)."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from artemis_cli.models.fakes.openai import FakeOpenAIReply, FakeOpenAIRequest, FakeOpenAIServer

REPO = Path(__file__).resolve().parents[2]
OPENAI_CHECKS = ("OpenAI endpoint", "OpenAI model", "OpenAI tool calls", "OpenAI cached tokens")
#: Rows that depend on this machine (adb, a phone), not on the endpoint.
MACHINE_CHECKS = {"adb binary", "adb server", "device"}
MODEL = "fake-operator"


@pytest.fixture(autouse=True)
def _no_openai_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for var in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "ARTEMIS_OPENAI_BASE_URL", "ARTEMIS_GEMINI_BASE_URL",
                "GOOGLE_GEMINI_BASE_URL"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("ANDROID_ADB_SERVER_PORT", "1")  # nothing listens there: adb rows fail fast


def call_the_tool(req: FakeOpenAIRequest) -> FakeOpenAIReply:
    """A model that calls the first tool it is given (or, in text mode, writes it as JSON)."""
    if req.tools:
        return FakeOpenAIReply.call(req.tool_names[0])
    if "report_ok" in req.system:
        return FakeOpenAIReply.text('I will report.\n{"name": "report_ok", "arguments": {}}')
    return FakeOpenAIReply.text("hello")


def artemis(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "artemis_cli", *args], cwd=REPO, env=dict(os.environ),
                          capture_output=True, text=True, timeout=300)


def doctor(*args: str) -> tuple[int, dict[str, Any]]:
    proc = artemis("doctor", "--json", *args)
    assert "Traceback" not in proc.stderr, proc.stderr
    payload = json.loads(proc.stdout)
    assert payload["ok"] is all(c["ok"] for c in payload["checks"])
    assert proc.returncode == (0 if payload["ok"] else 1)
    return proc.returncode, payload


def endpoint_rows(payload: dict[str, Any]) -> list[dict[str, Any]]:
    return [c for c in payload["checks"] if c["check"] in OPENAI_CHECKS]


def row(payload: dict[str, Any], check: str) -> dict[str, Any]:
    [found] = [c for c in payload["checks"] if c["check"] == check]
    return found


def fake(policy: Callable[[FakeOpenAIRequest], FakeOpenAIReply] = call_the_tool, **kw: Any) -> FakeOpenAIServer:
    return FakeOpenAIServer(policy, **kw)


def test_a_good_endpoint_passes_every_row_and_never_shows_the_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-very-secret-42")
    with fake(models=[MODEL, "other"], expected_api_key="sk-very-secret-42") as srv:
        url = srv.base_url
        code, payload = doctor("--model", f"openai:{MODEL}", "--base-url", srv.base_url)
        text = artemis("doctor", "--model", f"openai:{MODEL}", "--base-url", srv.base_url)
    assert srv.errors == []
    rows = endpoint_rows(payload)
    assert [r["check"] for r in rows] == list(OPENAI_CHECKS)
    assert all(r["level"] == "ok" for r in rows), rows
    assert url in rows[0]["detail"] and "2 models served" in rows[0]["detail"]
    assert "key from $OPENAI_API_KEY" in rows[0]["detail"]
    assert "returned a report_ok tool call" in rows[2]["detail"]
    assert "reports cached tokens" in rows[3]["detail"]
    # a Gemini key is not needed when every role runs on the endpoint
    assert row(payload, "API key")["ok"] is True and "none needed" in row(payload, "API key")["detail"]
    assert {c["check"] for c in payload["checks"] if not c["ok"]} <= MACHINE_CHECKS
    assert code == (0 if all(c["ok"] for c in payload["checks"]) else 1)
    # the round trip is shaped like a run's request: one tool, a tiny prompt
    assert all(r.tool_names == ["report_ok"] and r.last_user_text() == "Call the report_ok tool."
               for r in srv.requests)
    assert "✓ OpenAI tool calls:" in text.stdout and "✓ OpenAI endpoint:" in text.stdout
    for out in (json.dumps(payload), text.stdout, text.stderr):
        assert "sk-very-secret-42" not in out


def test_an_unreachable_port_says_start_the_server() -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # closed again below: nothing listens there
    code, payload = doctor("--model", f"openai:{MODEL}", "--base-url", f"http://127.0.0.1:{port}/v1")
    assert code == 1
    [problem] = endpoint_rows(payload)  # nothing further is asked of a server that is not there
    assert problem["check"] == "OpenAI endpoint" and problem["level"] == "error"
    assert "connection refused" in problem["detail"]
    assert "start the server" in problem["hint"]


def test_a_url_without_v1_says_to_check_it() -> None:
    with fake(models=[MODEL]) as srv:
        _, payload = doctor("--model", f"openai:{MODEL}", "--base-url", srv.base_url.removesuffix("/v1"))
    [problem] = endpoint_rows(payload)
    assert "HTTP 404" in problem["detail"] and "ends in /v1" in problem["hint"]


def test_a_model_the_server_does_not_list_names_what_it_serves() -> None:
    with fake(models=["other", "fake-operat0r"]) as srv:
        code, payload = doctor("--model", f"openai:{MODEL}", "--base-url", srv.base_url)
    assert code == 1
    rows = endpoint_rows(payload)
    assert [r["check"] for r in rows] == ["OpenAI endpoint", "OpenAI model"]  # its 404 says nothing more
    model = rows[1]
    assert model["level"] == "error" and MODEL in model["detail"]
    assert "it serves: fake-operat0r, other" in model["detail"]  # the closest name first
    assert "pass one of the served names" in model["hint"]


def test_an_unlisted_model_that_answers_anyway_is_a_warning() -> None:
    with fake() as srv:  # lists only the models it has seen: none yet (llama.cpp answers to any name)
        _, payload = doctor("--model", f"openai:{MODEL}", "--base-url", srv.base_url)
    rows = {r["check"]: r for r in endpoint_rows(payload)}
    assert rows["OpenAI model"]["level"] == "warning" and rows["OpenAI model"]["ok"] is True
    assert "answered a request for it" in rows["OpenAI model"]["detail"]
    assert rows["OpenAI tool calls"]["level"] == "ok"


def test_a_tool_call_written_in_the_text_says_to_use_text_mode() -> None:
    with fake(models=[MODEL]) as srv:
        srv.inject("text_only")
        _, payload = doctor("--model", f"openai:{MODEL}", "--base-url", srv.base_url)
    tools = row(payload, "OpenAI tool calls")
    assert tools["level"] == "warning"  # Artemis reads calls in the text, but the server does not parse them
    assert "wrote the call in its text" in tools["detail"]
    assert "tool_calls: text" in tools["hint"] and "--enable-auto-tool-choice" in tools["hint"]


def test_a_text_only_answer_is_an_error_with_the_fix() -> None:
    with fake(lambda req: FakeOpenAIReply.text("I cannot use tools, sorry."), models=[MODEL]) as srv:
        code, payload = doctor("--model", f"openai:{MODEL}", "--base-url", srv.base_url)
    assert code == 1
    tools = row(payload, "OpenAI tool calls")
    assert tools["level"] == "error" and "answered in text, not with a tool call" in tools["detail"]
    assert "I cannot use tools" in tools["detail"]
    assert "set `tool_calls: text` for the role in the profile" in tools["hint"]
    assert row(payload, "OpenAI cached tokens")["level"] == "ok"  # the answer still came back


def test_missing_usage_is_a_warning_not_an_error() -> None:
    with fake(models=[MODEL]) as srv:
        srv.inject("no_usage")
        _, payload = doctor("--model", f"openai:{MODEL}", "--base-url", srv.base_url)
    cache = row(payload, "OpenAI cached tokens")
    assert cache["level"] == "warning" and cache["ok"] is True
    assert "cache share will read 0" in cache["hint"]
    assert all(r["ok"] for r in endpoint_rows(payload))


def test_a_rejected_key_says_which_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "wrong-key-123")
    with fake(models=[MODEL], expected_api_key="k") as srv:
        code, payload = doctor("--model", f"openai:{MODEL}", "--base-url", srv.base_url)
        monkeypatch.delenv("OPENAI_API_KEY")
        _, without = doctor("--model", f"openai:{MODEL}", "--base-url", srv.base_url)
    assert code == 1
    [problem] = endpoint_rows(payload)
    assert "HTTP 401" in problem["detail"]
    assert "rejected the key in $OPENAI_API_KEY" in problem["hint"]
    assert "wrong-key-123" not in json.dumps(payload)
    [problem] = endpoint_rows(without)
    assert "export OPENAI_API_KEY=" in problem["hint"] and "api_key_env" in problem["hint"]


def test_a_profile_checks_each_role_endpoint_in_its_mode(tmp_path: Path) -> None:
    with fake(models=[MODEL, "fake-lens"]) as srv:
        profile = tmp_path / "local.yaml"
        profile.write_text(
            "extends: flash\n"
            "models:\n"
            f"  operator: {{provider: openai, model: {MODEL}, base_url: '{srv.base_url}'}}\n"
            f"  visual_lens: {{provider: openai, model: fake-lens, base_url: '{srv.base_url}', tool_calls: text}}\n"
            f"  chunk_lens: {{provider: openai, model: {MODEL}, base_url: '{srv.base_url}', fallback: [gone]}}\n")
        code, payload = doctor("--profile", str(profile))
    assert code == 1
    rows = endpoint_rows(payload)
    [endpoint] = [r for r in rows if r["check"] == "OpenAI endpoint"]  # one endpoint, asked once
    assert "operator, visual_lens, chunk_lens" in endpoint["detail"]
    tools = [r for r in rows if r["check"] == "OpenAI tool calls"]
    assert len(tools) == 2 and all(r["level"] == "ok" for r in tools), tools
    assert any("answered with a JSON action (report_ok) in its text" in r["detail"] and "fake-lens" in r["detail"] for r in tools)
    [gone] = [r for r in rows if r["check"] == "OpenAI model" and not r["ok"]]
    assert gone["detail"].startswith("gone (chunk_lens fallback) is not served")
    assert row(payload, "API key")["ok"] is True  # every role of this flash profile runs on the endpoint
    text_mode = [r for r in srv.requests if r.model == "fake-lens"]
    assert [r.tools for r in text_mode] == [[]] and "report_ok" in text_mode[0].system


def test_gemini_roles_beside_a_local_operator_need_the_gemini_key(tmp_path: Path) -> None:
    with fake(models=[MODEL]) as srv:
        profile = tmp_path / "mixed.yaml"
        profile.write_text(f"extends: flash\nmodels:\n  operator: {{provider: openai, model: {MODEL}, "
                           f"base_url: '{srv.base_url}'}}\n")
        _, payload = doctor("--profile", str(profile))
    key = row(payload, "API key")
    assert key["ok"] is False
    assert "visual_lens, chunk_lens roles run on Gemini" in key["hint"]
    assert all(r["ok"] for r in endpoint_rows(payload))


def test_a_gemini_profile_has_nothing_to_check_and_keeps_the_key_row() -> None:
    code, payload = doctor("--profile", "flash")
    assert code == 1
    [note] = endpoint_rows(payload)
    assert note["level"] == "ok" and "no role runs on an OpenAI-compatible endpoint" in note["detail"]
    assert row(payload, "API key")["ok"] is False


def test_without_the_options_doctor_asks_no_endpoint(monkeypatch: pytest.MonkeyPatch) -> None:
    with fake(models=[MODEL]) as srv:
        monkeypatch.setenv("ARTEMIS_OPENAI_BASE_URL", srv.base_url)
        _, payload = doctor()
    assert endpoint_rows(payload) == [] and srv.requests == []
    assert row(payload, "Gemini")["level"] == "n/a"  # nothing asked for needs the key


@pytest.mark.parametrize(("args", "message"), [
    (("--model", "heuristic"), "use --model openai:NAME or a Gemini model name"),
    (("--model", "openai:"), "needs the name the server serves"),
    (("--base-url", "ftp://example.com"), "not an http(s) endpoint URL"),
])
def test_bad_options_exit_2_before_any_check(args: tuple[str, ...], message: str) -> None:
    proc = artemis("doctor", *args)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert message in proc.stderr and proc.stdout == ""
