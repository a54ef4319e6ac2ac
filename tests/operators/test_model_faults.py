"""One odd model reply must not end a run (issue 11): malformed and empty replies are asked again,
then the next model of the chain; refusals and a rejected API key end the run with the right exit
code and a message that says what happened and what to do.

Every run is the short dark-theme task on the simulated phone, with GeminiModel (the real
google-genai SDK) talking to a FakeGeminiServer that plays the task's reference solution and
injects the faults. The invalid-key case goes through the real CLI as a subprocess.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from artemis_cli.config.profile import load_profile
from artemis_cli.config.task import Task, load_task
from artemis_cli.engine.db import DataEngine
from artemis_cli.memory.turn_check import check_turn
from artemis_cli.models.fakes.gemini import FakeGeminiServer, FakeReply, FakeRequest, model_fault_reply
from artemis_cli.models.gemini import GeminiModel
from artemis_cli.models.offline.scripted import script_policy
from artemis_cli.models.offline.scripted_roles import pro_script_policy
from artemis_cli.models.registry import reference_script
from artemis_cli.operators.turn import MAX_CORRECTIVE_RETRIES
from artemis_cli.resume import resume_session
from artemis_cli.runner import RunResult, run_task
from artemis_cli.sim.phone import SimPhone

REPO = Path(__file__).resolve().parents[2]
TASK_FILE = REPO / "tasks" / "settings-dark-theme.yaml"
CHAIN = ["gemini-2.5-flash", "gemini-2.0-flash"]  # profiles/flash.yaml: operator + fallback
PRO_CHAIN = ["gemini-2.5-pro", "gemini-2.5-flash"]  # profiles/pro.yaml
PER_MODEL = MAX_CORRECTIVE_RETRIES + 1  # attempts one model gets in a turn


def operator(req: FakeRequest) -> bool:
    """Operator requests declare the tools; lens and Pro-agent requests do not."""
    return bool(req.tools)


def nth_operator_request(n: int) -> Callable[[FakeRequest], bool]:
    """Operator requests from the ``n``-th on (the fault's count says how many it takes)."""
    seen = [0]

    def match(req: FakeRequest) -> bool:
        if req.tools:
            seen[0] += 1
        return bool(req.tools) and seen[0] >= n

    return match


@pytest.fixture
def task() -> Task:
    return load_task(TASK_FILE)


@pytest.fixture
def server(task: Task) -> Iterator[FakeGeminiServer]:
    with FakeGeminiServer(script_policy(reference_script(task)), min_cacheable_tokens=256) as srv:
        yield srv


def _model(server: FakeGeminiServer, chain: list[str] = CHAIN) -> GeminiModel:
    return GeminiModel(chain, api_key="test-key", base_url=server.base_url, timeout_s=10, sleep=lambda s: None,
                       backoff_s=0.0)


def _phone(task: Task) -> SimPhone:
    assert task.sim is not None
    return SimPhone(world=task.sim.world, seed=task.sim.seed, popups=task.sim.popups)


def _run(task: Task, server: FakeGeminiServer, tmp_path: Path, *, profile: str = "flash",
         chain: list[str] = CHAIN, phone: SimPhone | None = None) -> tuple[RunResult, DataEngine]:
    engine = DataEngine.open(tmp_path / "data")
    result = run_task(task, load_profile(profile), phone or _phone(task), _model(server, chain), engine,
                      real_time=False)
    return result, engine


def _operator_calls(engine: DataEngine, sid: str, step: int | None = None) -> list[tuple[str, str, str | None]]:
    return [(c.model, c.status, c.error_class) for c in engine.llm_calls(sid)
            if c.role == "operator" and (step is None or c.step == step)]


def _assert_every_step_re_renders(engine: DataEngine, sid: str) -> None:
    """What ``artemis sessions prompt --step N`` checks, for every committed step."""
    for step in engine.get_steps(sid):
        check = check_turn(engine, sid, step.number)
        assert check.match, (step.number, check.rows, check.recorded)


# --- transient faults: asked again, the run goes on ------------------------------------------


@pytest.mark.parametrize("count", [1, 2])
def test_malformed_function_calls_are_asked_again_and_the_run_succeeds(
    task: Task, server: FakeGeminiServer, tmp_path: Path, count: int
) -> None:
    server.inject("malformed_function_call", count=count, model=CHAIN[0], match=operator)
    result, engine = _run(task, server, tmp_path)
    assert result.success and result.exit_code == 0 and result.status == "succeeded", result.message
    assert _operator_calls(engine, result.session_id, 1) == [
        *[(CHAIN[0], "error", "MALFORMED_FUNCTION_CALL")] * count,
        (CHAIN[0], "ok", None),
    ]
    step_one = [c for c in engine.llm_calls(result.session_id) if c.role == "operator" and c.step == 1]
    assert all(c.prompt_tokens > 0 for c in step_one)  # the service billed the failed attempts
    assert len({c.request_hash for c in step_one}) == 1  # the identical request, asked again
    faults = engine.events(result.session_id, kind="model_fault")
    assert [(e.step, e.payload["reason"]) for e in faults] == [(1, "MALFORMED_FUNCTION_CALL")] * count
    _assert_every_step_re_renders(engine, result.session_id)


def test_a_model_that_keeps_failing_hands_the_turn_to_the_next_model(
    task: Task, server: FakeGeminiServer, tmp_path: Path
) -> None:
    server.inject("malformed_function_call", count=PER_MODEL, model=CHAIN[0], match=operator)
    result, engine = _run(task, server, tmp_path)
    assert result.success, result.message
    assert _operator_calls(engine, result.session_id, 1) == [
        *[(CHAIN[0], "error", "MALFORMED_FUNCTION_CALL")] * PER_MODEL,
        (CHAIN[1], "ok", None),
    ]
    # the next turn starts again with the first model of the chain
    assert _operator_calls(engine, result.session_id, 2) == [(CHAIN[0], "ok", None)]
    _assert_every_step_re_renders(engine, result.session_id)


def test_malformed_beyond_the_bound_on_the_whole_chain_ends_the_run_with_exit_1(
    task: Task, server: FakeGeminiServer, tmp_path: Path
) -> None:
    server.inject("malformed_function_call", count=PER_MODEL * len(CHAIN), match=nth_operator_request(2))
    result, engine = _run(task, server, tmp_path)
    assert result.exit_code == 1 and not result.success
    assert result.status == "aborted" and result.stop_reason == "model_no_action"
    assert "no usable action after 6 attempts" in result.message
    assert "finish reason MALFORMED_FUNCTION_CALL" in result.message
    assert f"artemis resume {result.session_id}" in result.message
    assert "unavailable" not in result.message
    assert result.steps == 1  # step 1 was done; step 2 got nothing usable from any model
    assert _operator_calls(engine, result.session_id, 2) == [
        *[(CHAIN[0], "error", "MALFORMED_FUNCTION_CALL")] * PER_MODEL,
        *[(CHAIN[1], "error", "MALFORMED_FUNCTION_CALL")] * PER_MODEL,
    ]
    assert engine.get_session(result.session_id).status == "aborted"


def test_a_session_aborted_for_malformed_replies_resumes_and_re_renders(
    task: Task, server: FakeGeminiServer, tmp_path: Path
) -> None:
    server.inject("malformed_function_call", count=PER_MODEL * len(CHAIN), match=nth_operator_request(2))
    phone = _phone(task)
    result, engine = _run(task, server, tmp_path, phone=phone)
    assert result.stop_reason == "model_no_action" and result.steps == 1
    resumed = resume_session(result.session_id, engine, device=phone, model=_model(server), real_time=False)
    assert resumed.success and resumed.exit_code == 0, resumed.message
    _assert_every_step_re_renders(engine, result.session_id)


def test_one_empty_candidate_is_asked_again(task: Task, server: FakeGeminiServer, tmp_path: Path) -> None:
    server.inject("empty_candidate", model=CHAIN[0], match=nth_operator_request(2))
    result, engine = _run(task, server, tmp_path)
    assert result.success and result.exit_code == 0, result.message
    assert _operator_calls(engine, result.session_id, 2) == [
        (CHAIN[0], "error", "EMPTY_CANDIDATE"),
        (CHAIN[0], "ok", None),
    ]
    # no empty model turn entered the transcript: every model content sent back has parts
    for req in server.requests:
        assert all(c.get("parts") for c in req.contents)
    _assert_every_step_re_renders(engine, result.session_id)


class Garbling:
    """The reference solution, except that the second operator turn first gets an unknown tool
    (answered with an error), then a MALFORMED_FUNCTION_CALL (asked again), and a reply without
    a tool call comes at the third turn (answered with a corrective text)."""

    def __init__(self, task: Task) -> None:
        self.base = script_policy(reference_script(task))
        self.n = 0

    def __call__(self, req: FakeRequest) -> FakeReply:
        if req.tools:
            self.n += 1
            if self.n == 2:
                return FakeReply.call("teleport", {"to": "Display"})
            if self.n == 3:
                return model_fault_reply("malformed_function_call", req)
            if self.n == 5:
                return FakeReply.text("Display is open; I will look for the switch.")
        return self.base(req)


def test_corrective_turns_re_render_to_their_recorded_hashes(task: Task, tmp_path: Path) -> None:
    with FakeGeminiServer(Garbling(task)) as server:
        result, engine = _run(task, server, tmp_path)
    assert result.success, result.message
    sid = result.session_id
    assert _operator_calls(engine, sid, 2) == [
        (CHAIN[0], "ok", None),  # the unknown tool: a reply with content, answered with an error
        (CHAIN[0], "error", "MALFORMED_FUNCTION_CALL"),
        (CHAIN[0], "ok", None),
    ]
    steps = engine.get_steps(sid)
    assert steps[1].meta["problems"] == ["invalid tool call", f"MALFORMED_FUNCTION_CALL from {CHAIN[0]}"]
    assert steps[2].meta["problems"] == ["no tool call"]
    assert [s.result_status for s in steps] == ["ok", "ok", "finished"]
    roles = [m["role"] for m in steps[1].meta["messages"]]
    assert roles == ["model", "user", "model"]  # the malformed reply left nothing in the transcript
    _assert_every_step_re_renders(engine, sid)


def test_replies_without_a_tool_call_hand_the_turn_to_the_next_model(task: Task, tmp_path: Path) -> None:
    base = script_policy(reference_script(task))

    def chatty_first_model(req: FakeRequest) -> FakeReply:
        if req.tools and req.model == CHAIN[0]:
            return FakeReply.text("Let me think about which setting to open.")
        return base(req)

    with FakeGeminiServer(chatty_first_model) as server:
        result, engine = _run(task, server, tmp_path)
    assert result.success, result.message
    assert _operator_calls(engine, result.session_id, 1) == [
        *[(CHAIN[0], "ok", None)] * PER_MODEL,
        (CHAIN[1], "ok", None),
    ]
    _assert_every_step_re_renders(engine, result.session_id)


# --- refusals: named, never retried, exit 1 --------------------------------------------------


@pytest.mark.parametrize(
    ("kind", "words", "error_class"),
    [
        ("safety", ["the model refused: finish reason SAFETY", "HARM_CATEGORY_DANGEROUS_CONTENT"], "SAFETY"),
        ("blocked_prompt", ["the model refused: the prompt was blocked", "block reason SAFETY"], "BLOCKED_SAFETY"),
    ],
)
def test_refusals_end_the_run_with_exit_1_and_say_refused(
    task: Task, server: FakeGeminiServer, tmp_path: Path, kind: str, words: list[str], error_class: str
) -> None:
    server.inject(kind, match=nth_operator_request(2))
    result, engine = _run(task, server, tmp_path)
    assert result.exit_code == 1 and result.status == "aborted" and result.stop_reason == "model_refused"
    assert all(w in result.message for w in words), result.message
    assert "unavailable" not in result.message
    assert _operator_calls(engine, result.session_id, 2) == [(CHAIN[0], "error", error_class)]  # not retried
    assert engine.get_session(result.session_id).status == "aborted"


# --- a rejected API key: a usage error (exit 2) with the fix ---------------------------------


def test_a_key_rejected_mid_run_saves_the_session_and_exits_2(
    task: Task, server: FakeGeminiServer, tmp_path: Path
) -> None:
    server.inject("invalid_key", match=nth_operator_request(2))
    result, engine = _run(task, server, tmp_path)
    assert result.exit_code == 2 and result.status == "interrupted" and result.stop_reason == "model_config"
    assert "API key not valid" in result.message and "set a valid GEMINI_API_KEY" in result.message
    assert f"artemis resume {result.session_id}" in result.message
    assert result.steps == 1
    assert _operator_calls(engine, result.session_id, 2) == [(CHAIN[0], "error", "api_key_rejected")]
    assert [r.model for r in server.requests if r.tools].count(CHAIN[1]) == 0  # never into the fallback
    assert engine.get_session(result.session_id).status == "interrupted"


def test_an_invalid_key_through_the_cli_exits_2_with_the_fix(task: Task, tmp_path: Path) -> None:
    with FakeGeminiServer(script_policy(reference_script(task)), expected_api_key="the-right-key") as server:
        env = {**os.environ, "ARTEMIS_HOME": str(tmp_path / "home"), "GEMINI_API_KEY": "not-the-key",
               "ARTEMIS_GEMINI_BASE_URL": server.base_url, "ARTEMIS_GEMINI_TIMEOUT_S": "10"}
        env.pop("GOOGLE_API_KEY", None)
        env.pop("ARTEMIS_DEBUG", None)
        done = subprocess.run(
            [sys.executable, "-m", "artemis_cli", "run", str(TASK_FILE), "--model", "gemini", "--json", "--no-live"],
            cwd=REPO, env=env, capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL,
        )
    assert done.returncode == 2, (done.stdout, done.stderr)
    assert "Traceback" not in done.stderr
    # the pre-flight check asked models.get: a usage error before any session exists; --json still
    # prints one document saying so
    failed = json.loads(done.stdout)
    assert (failed["status"], failed["exit_code"]) == ("error", 2) and "API key not valid" in failed["error"]
    assert not (tmp_path / "home" / "artemis.db").exists()
    assert "API key not valid" in done.stderr and "set a valid GEMINI_API_KEY" in done.stderr
    assert server.requests == []  # no generateContent was sent
    assert "not-the-key" not in done.stdout + done.stderr
    assert "became unavailable" not in done.stdout + done.stderr


# --- the Pro loop, and the auxiliary roles ---------------------------------------------------


def test_the_pro_loop_asks_again_after_a_malformed_function_call(task: Task, tmp_path: Path) -> None:
    with FakeGeminiServer(pro_script_policy(reference_script(task))) as server:
        server.inject("malformed_function_call", model=PRO_CHAIN[0], match=nth_operator_request(2))
        result, engine = _run(task, server, tmp_path, profile="pro", chain=PRO_CHAIN)
    assert result.success and result.exit_code == 0, result.message
    assert _operator_calls(engine, result.session_id, 2) == [
        (PRO_CHAIN[0], "error", "MALFORMED_FUNCTION_CALL"),
        (PRO_CHAIN[0], "ok", None),
    ]
    assert all(s.verdict for s in engine.get_steps(result.session_id)[:-1])  # the validator judged each
    _assert_every_step_re_renders(engine, result.session_id)


#: The error class each injected fault is recorded with in llm_calls.
ERROR_CLASS = {"malformed_function_call": "MALFORMED_FUNCTION_CALL", "empty_candidate": "EMPTY_CANDIDATE",
               "safety": "SAFETY", "blocked_prompt": "BLOCKED_SAFETY", "invalid_key": "api_key_rejected"}


@pytest.mark.parametrize("kind", sorted(ERROR_CLASS))
def test_lens_calls_survive_model_faults(task: Task, server: FakeGeminiServer, tmp_path: Path, kind: str) -> None:
    """The visual lens's first two calls get the fault; its own retries (retry_limit 3) recover."""
    lens_model = load_profile("flash").models.visual_lens.model
    server.inject(kind, count=2, model=lens_model)
    result, engine = _run(task, server, tmp_path)
    assert result.success and result.exit_code == 0, result.message
    assert server.pending_faults() == 0
    lens = [(c.status, c.error_class) for c in engine.llm_calls(result.session_id) if c.role == "lens"]
    assert lens.count(("error", ERROR_CLASS[kind])) == 2  # (jobs run concurrently: any order)
    assert all(s.summary_status == "ready" for s in engine.get_steps(result.session_id))


@pytest.mark.parametrize("kind", sorted(ERROR_CLASS))
def test_pro_agent_calls_survive_model_faults(task: Task, tmp_path: Path, kind: str) -> None:
    """The planner (first call of the run) and the validator get the fault and take their fallbacks."""
    pro = load_profile("pro").models
    with FakeGeminiServer(pro_script_policy(reference_script(task))) as server:
        server.inject(kind, model=pro.planner.model, match=lambda r: not r.tools)
        server.inject(kind, model=pro.validator.model, match=lambda r: not r.tools)
        result, engine = _run(task, server, tmp_path, profile="pro", chain=PRO_CHAIN)
        assert server.pending_faults() == 0
    assert result.success and result.exit_code == 0, result.message
    errors = [(c.role, c.error_class) for c in engine.llm_calls(result.session_id) if c.status == "error"]
    assert ("planner", ERROR_CLASS[kind]) in errors and ("validator", ERROR_CLASS[kind]) in errors
