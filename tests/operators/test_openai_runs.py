"""Whole runs on an OpenAI-compatible endpoint: the real openai SDK talking to FakeOpenAIServer on
the simulated phone, through the CLI and through ``run_task`` — native and text-mode tool calls,
the Pro loop's roles, model faults — and the wire-hash invariant ``sessions prompt`` checks."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from artemis_cli.config.profile import Profile, load_profile
from artemis_cli.config.task import Task, load_task
from artemis_cli.engine.db import DataEngine
from artemis_cli.memory.turn_check import check_turn
from artemis_cli.models.endpoint_check import PING_TOOL
from artemis_cli.models.fakes.openai import (
    FakeOpenAIRequest,
    FakeOpenAIServer,
    heuristic_policy,
    script_policy,
)
from artemis_cli.models.fakes.openai_policies import gemini_policy
from artemis_cli.models.offline.scripted_roles import pro_script_policy
from artemis_cli.models.openai_provider import OpenAIModel
from artemis_cli.models.openai_wire import MALFORMED_ARGUMENTS, TEXT_MODE_HEADING
from artemis_cli.models.registry import build_model, reference_script
from artemis_cli.runner import RunResult, run_task
from artemis_cli.sim.phone import SimPhone

REPO = Path(__file__).resolve().parents[2]
DEMO = REPO / "tasks" / "demo.yaml"
DARK = REPO / "tasks" / "settings-dark-theme.yaml"
ROLES = ("operator", "planner", "validator", "visual_lens", "chunk_lens")


@pytest.fixture(autouse=True)
def _no_openai_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for var in ("OPENAI_API_KEY", "ARTEMIS_OPENAI_BASE_URL", "ARTEMIS_OPENAI_TIMEOUT_S"):
        monkeypatch.delenv(var, raising=False)


def artemis(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "artemis_cli", *args], cwd=REPO, capture_output=True, text=True,
                          timeout=180, stdin=subprocess.DEVNULL)


def phone(task: Task) -> SimPhone:
    assert task.sim is not None
    return SimPhone(world=task.sim.world, seed=task.sim.seed, popups=task.sim.popups)


def openai_profile(folder: Path, url: str, parent: str, **operator: Any) -> Profile:
    """``extends: parent`` with every role on the fake server (model = the role's name)."""
    lines = [f"extends: {parent}", "models:"]
    for role in ROLES:
        extra = "".join(f", {k}: {v}" for k, v in operator.items()) if role == "operator" else ""
        lines.append(f'  {role}: {{provider: openai, model: {role}, base_url: "{url}"{extra}}}')
    path = folder / f"openai-{parent}.yaml"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return load_profile(str(path), search_dirs=[REPO])


def run_profile(task: Task, profile: Profile, engine: DataEngine) -> RunResult:
    """What ``artemis run --profile P`` does for a profile whose operator is OpenAI-compatible."""
    model = build_model(None, task=task, profile=profile)
    assert isinstance(model, OpenAIModel) and not model.serves_all_roles
    return run_task(task, profile, phone(task), model, engine, real_time=False,
                    run_config={"model": "profile", "base_url": model.base_url})


def assert_every_step_re_renders_on_the_wire(engine: DataEngine, sid: str) -> None:
    """``sessions prompt --step N`` for every step: request and wire hashes both match."""
    steps = engine.get_steps(sid)
    assert steps
    for step in steps:
        check = check_turn(engine, sid, step.number)
        assert check.match, (step.number, check.rows)
        assert check.rows and all(r["wire_rendered"] == r["wire_recorded"] for r in check.rows), check.rows


def calls(engine: DataEngine, sid: str, role: str = "operator", step: int | None = None) -> list[tuple[Any, ...]]:
    return [(c.model, c.status, c.error_class) for c in engine.llm_calls(sid)
            if c.role == role and (step is None or c.step == step)]


# --- (a) the CLI ---------------------------------------------------------------------------------


def test_cli_run_on_an_openai_server_then_sessions_prompt_matches(data_home: Path) -> None:
    with FakeOpenAIServer(heuristic_policy()) as server:
        url = server.base_url
        proc = artemis("run", "tasks/demo.yaml", "--model", "openai:fake-operator", "--base-url", url, "--json")
    assert server.errors == []
    assert proc.returncode == 0, proc.stdout + proc.stderr
    result = json.loads(proc.stdout)
    assert result["success"] is True and result["offline_model"] is False
    assert "fake-operator" in result["model_label"] and url.split("/")[2] in result["model_label"]
    # before the session, the pre-flight check asked once (its ping declares only report_ok)
    pings = [r for r in server.requests if r.tool_names == [PING_TOOL]]
    assert len(pings) == 1 and server.requests[0] is pings[0]
    operator_requests = [r for r in server.requests if r.tools and r not in pings]
    assert len(operator_requests) == result["steps"] >= 3
    assert {r.model for r in server.requests} == {"fake-operator"}  # openai:NAME serves every role
    assert any(not r.tools for r in server.requests)  # the visual lens spoke too

    sid = result["session_id"]
    for step in (1, result["steps"]):
        shown = artemis("sessions", "prompt", sid, "--step", str(step), "--json")
        assert shown.returncode == 0, shown.stdout + shown.stderr
        data = json.loads(shown.stdout)
        assert data["match"] is True and data["step"] == step
        (row,) = data["calls"]
        assert row["match"] is True and row["rendered"] == row["recorded"]
        assert row["wire_rendered"] == row["wire_recorded"] and row["wire_recorded"].startswith("v2:")
        assert len(row["wire_recorded"]) == 3 + 64

    with DataEngine.open(data_home) as engine:
        recorded = [c for c in engine.llm_calls(sid) if c.role == "operator"]
        assert recorded and all(c.wire_hash for c in recorded)
        assert engine.get_session(sid).config["run"]["base_url"] == url


# --- (b) text mode ---------------------------------------------------------------------------------


@pytest.fixture
def demo() -> Task:
    return load_task(DEMO)


def test_flash_run_in_text_mode(demo: Task, tmp_path: Path) -> None:
    with FakeOpenAIServer(script_policy(reference_script(demo))) as server:
        profile = openai_profile(tmp_path, server.base_url, "flash", tool_calls="text")
        assert profile.models.operator.tool_calls == "text"
        engine = DataEngine.open(tmp_path / "data")
        result = run_profile(demo, profile, engine)
    assert server.errors == []
    assert result.success and result.exit_code == 0, result.message
    assert result.steps == len(demo.reference)
    operator_requests = [r for r in server.requests if r.model == "operator"]
    assert len(operator_requests) == result.steps
    for req in operator_requests:
        assert "tools" not in req.body and not req.tools
        assert TEXT_MODE_HEADING in req.system
        assert all(m["role"] != "tool" and "tool_calls" not in m for m in req.messages)
    # the model's earlier actions went back as JSON text, their results as "Result of" user text
    last = operator_requests[-1].messages
    assert any(m["role"] == "assistant" and '"name": "tap"' in str(m["content"]) for m in last)
    assert any(m["role"] == "user" and "Result of tap: " in json.dumps(m["content"]) for m in last)
    assert {r.model for r in server.requests} >= {"operator", "visual_lens"}
    assert calls(engine, result.session_id) == [("operator", "ok", None)] * result.steps
    assert_every_step_re_renders_on_the_wire(engine, result.session_id)


# --- (c) the Pro loop -----------------------------------------------------------------------------


def test_pro_run_with_every_role_on_the_server(tmp_path: Path) -> None:
    task = load_task(DARK)
    script = reference_script(task)
    assert script
    with FakeOpenAIServer(gemini_policy(pro_script_policy(script))) as server:
        profile = openai_profile(tmp_path, server.base_url, "pro")
        assert profile.loop == "pro" and all(getattr(profile.models, r).chain == [r] for r in ROLES)
        engine = DataEngine.open(tmp_path / "data")
        result = run_profile(task, profile, engine)
    assert server.errors == []
    assert result.success and result.exit_code == 0, result.message
    sid = result.session_id
    recorded = engine.llm_calls(sid)
    roles = {c.role for c in recorded}
    assert {"operator", "planner", "validator"} <= roles, roles
    assert all(c.status == "ok" for c in recorded)
    assert {c.model for c in recorded if c.role == "planner"} == {"planner"}
    assert {c.model for c in recorded if c.role == "validator"} == {"validator"}
    assert {"operator", "planner", "validator"} <= {r.model for r in server.requests}

    def images(req: Any) -> int:
        return sum(1 for m in req.messages if m.get("role") == "user" and isinstance(m.get("content"), list)
                   for part in m["content"] if part.get("type") == "image_url")

    # the validator compares the screenshots before and after; the planner sees the current screen
    assert {images(r) for r in server.requests if r.model == "validator"} == {2}
    assert {images(r) for r in server.requests if r.model == "planner"} == {1}
    steps = engine.get_steps(sid)
    assert all(s.verdict for s in steps[:-1])  # the validator judged every action before finish
    assert all(c.wire_hash for c in recorded if c.role == "operator")
    assert_every_step_re_renders_on_the_wire(engine, sid)


# --- (d) the invariant catches a wrong wire hash ---------------------------------------------------


@pytest.fixture
def heuristic_run(demo: Task, tmp_path: Path) -> Iterator[tuple[DataEngine, str]]:
    with FakeOpenAIServer(heuristic_policy()) as server:
        flash = load_profile("flash", search_dirs=[REPO])
        model = build_model("openai:fake-operator", task=demo, profile=flash, base_url=server.base_url)
        engine = DataEngine.open(tmp_path / "data")
        result = run_task(demo, flash, phone(demo), model, engine, real_time=False,
                          run_config={"model": "openai:fake-operator", "base_url": server.base_url})
    assert result.success and result.steps >= 3, result.message
    yield engine, result.session_id
    engine.close()


def test_a_corrupted_wire_hash_fails_the_turn_check(heuristic_run: tuple[DataEngine, str]) -> None:
    engine, sid = heuristic_run
    assert_every_step_re_renders_on_the_wire(engine, sid)
    (row,) = [c for c in engine.llm_calls(sid) if c.role == "operator" and c.step == 2]
    engine.db.execute("UPDATE llm_calls SET wire_hash = ? WHERE id = ?", ["0" * 64, row.id])
    engine.db.conn.commit()
    check = check_turn(engine, sid, 2)
    assert check.match is False
    (bad,) = check.rows
    # the provider-neutral request still matches: it is the wire rendering that no longer does
    assert bad["rendered"] == bad["recorded"] and bad["wire_recorded"] == "0" * 64
    assert bad["wire_rendered"] != bad["wire_recorded"] and bad["match"] is False
    assert check_turn(engine, sid, 1).match and check_turn(engine, sid, 3).match


def test_a_wire_hash_of_another_rendering_fails_the_turn_check(heuristic_run: tuple[DataEngine, str]) -> None:
    """The recorded hash of step 3 replaced by step 2's: a real hash, of the wrong body."""
    engine, sid = heuristic_run
    by_step = {c.step: c for c in engine.llm_calls(sid) if c.role == "operator"}
    engine.db.execute("UPDATE llm_calls SET wire_hash = ? WHERE id = ?", [by_step[2].wire_hash, by_step[3].id])
    engine.db.conn.commit()
    assert check_turn(engine, sid, 3).match is False
    assert check_turn(engine, sid, 2).match is True


# --- (e) model faults on the wire ------------------------------------------------------------------


def operator(req: FakeOpenAIRequest) -> bool:
    return bool(req.tools)


def test_malformed_arguments_and_text_only_replies_do_not_end_the_run(demo: Task, tmp_path: Path) -> None:
    with FakeOpenAIServer(script_policy(reference_script(demo))) as server:
        server.inject("malformed_arguments", match=operator)
        server.inject("text_only", match=operator)
        flash = load_profile("flash", search_dirs=[REPO])
        model = build_model("openai:op", task=demo, profile=flash, base_url=server.base_url)
        engine = DataEngine.open(tmp_path / "data")
        result = run_task(demo, flash, phone(demo), model, engine, real_time=False,
                          run_config={"model": "openai:op", "base_url": server.base_url})
        assert server.pending_faults() == 0
    assert server.errors == []
    assert result.success and result.exit_code == 0, result.message
    sid = result.session_id
    # step 1: the malformed reply was asked again, and the answer written as text was taken as the call
    assert calls(engine, sid, step=1) == [("op", "error", MALFORMED_ARGUMENTS), ("op", "ok", None)]
    assert [r.fault for r in server.requests if r.tools][:2] == ["malformed_arguments", "text_only"]
    faults = engine.events(sid, kind="model_fault")
    assert [(e.step, e.payload["reason"]) for e in faults] == [(1, MALFORMED_ARGUMENTS)]
    # the id-less call parsed from text went back with a derived id, answered by its tool message
    second_turn = [r for r in server.requests if r.tools][2].messages
    (assistant,) = [m for m in second_turn if m["role"] == "assistant"]
    call_id = assistant["tool_calls"][0]["id"]
    assert any(m["role"] == "tool" and m["tool_call_id"] == call_id for m in second_turn)
    assert_every_step_re_renders_on_the_wire(engine, sid)


def test_a_session_recorded_with_the_v1_wire_hash_still_checks(heuristic_run: tuple[DataEngine, str]) -> None:
    """Rows written before the v2 hash hold the unprefixed v1 hash of the body with its base64
    images: they are re-rendered and checked with v1; a wrong v1 hash still fails."""
    from artemis_cli.memory.turn_check import recorded_turn_calls
    from artemis_cli.models.openai_wire import WireOptions, render_body, wire_hash_v1

    engine, sid = heuristic_run
    calls = [c for c in engine.llm_calls(sid) if c.role == "operator"]
    assert calls and all((c.wire_hash or "").startswith("v2:") for c in calls)
    for step in engine.get_steps(sid):
        check = check_turn(engine, sid, step.number)
        for request, call in zip(check.requests, recorded_turn_calls(engine, sid, step.number), strict=True):
            engine.db.execute("UPDATE llm_calls SET wire_hash = ? WHERE id = ?",
                              [wire_hash_v1(render_body(request, "", WireOptions())), call.id])
    engine.db.conn.commit()
    assert all(not (c.wire_hash or "").startswith("v2:") for c in engine.llm_calls(sid) if c.role == "operator")
    assert_every_step_re_renders_on_the_wire(engine, sid)
    (row,) = [c for c in engine.llm_calls(sid) if c.role == "operator" and c.step == 2]
    engine.db.execute("UPDATE llm_calls SET wire_hash = ? WHERE id = ?", ["1" * 64, row.id])
    engine.db.conn.commit()
    assert check_turn(engine, sid, 2).match is False
