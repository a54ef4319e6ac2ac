"""A Pro run of a multi-milestone chore through the fake Gemini server and the real SDK (operator,
visual lens, chunk lens, planner, validator, checker), with small compression limits so chunks,
eras and period paragraphs all happen within 72 steps."""

from __future__ import annotations

import re
import sys
from pathlib import Path
from typing import Any

import pytest

from artemis_cli.config.profile import Profile, load_profile
from artemis_cli.config.task import Task
from artemis_cli.engine.db import DataEngine
from artemis_cli.memory.chunk_store import newest_chunks
from artemis_cli.memory.restore import SessionSpec, rebuild_ledger, turn_requests
from artemis_cli.models.fakes.gemini import FakeGeminiServer
from artemis_cli.models.gemini import GeminiModel
from artemis_cli.models.offline.scripted_roles import pro_script_policy
from artemis_cli.runner import new_ledger, run_task
from artemis_cli.sim.phone import SimPhone

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
import itertools

from long_run import chore_script

STEPS = 72
INJECTED = {5: 'Use the "quick" path where you can', 30: "Keep Wi-Fi as it is at the end"}


@pytest.fixture(scope="module")
def pro_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[DataEngine, str, Any]:
    data = load_profile("pro").model_dump(mode="json")
    data["memory"]["chunking"].update({"max_steps": 8, "max_chunks": 2, "max_eras": 1})
    profile = Profile.model_validate(data)
    script, _ = chore_script(STEPS)
    task = Task.model_validate({"id": "pro-chore", "goal": "Do the daily phone chores", "max_steps": STEPS + 10,
                                "inject": [{"at_step": k, "text": v} for k, v in INJECTED.items()]})
    engine = DataEngine.open(tmp_path_factory.mktemp("pro"))
    with FakeGeminiServer(pro_script_policy(script)) as server:
        model = GeminiModel(["gemini-2.5-pro"], api_key="k", base_url=server.base_url)
        result = run_task(task, profile, SimPhone(seed=7, popups=False), model, engine, real_time=False)
    assert result.success and result.steps == STEPS
    return engine, result.session_id, result


def final_request(engine: DataEngine, sid: str) -> str:
    spec = SessionSpec.load(engine, sid)
    ledger = new_ledger(spec, spec.profile, engine, spec.max_steps)
    rebuild_ledger(engine, sid, ledger, before_step=STEPS)
    request = turn_requests(engine, sid, ledger, engine.get_step(sid, STEPS))[0]
    assert request.request_hash() == [c.request_hash for c in engine.llm_calls(sid) if c.role == "operator"][-1]
    return "\n".join(p.text or "" for m in request.messages for p in m.parts)


def test_roles_all_spoke_through_the_sdk(pro_run: tuple[DataEngine, str, Any]) -> None:
    engine, sid, _ = pro_run
    roles = {c.role for c in engine.llm_calls(sid)}
    assert {"operator", "lens", "chunk_lens", "planner", "validator", "checker"} <= roles
    steps = engine.get_steps(sid)
    assert all(s.verdict for s in steps[:-1]) and all(s.subgoal_hash for s in steps)


def test_chunks_close_at_milestone_switches_with_one_ledger_line_per_step(pro_run: tuple[DataEngine, str, Any]) -> None:
    engine, sid, _ = pro_run
    steps = engine.get_steps(sid)
    switches = [b.number for a, b in itertools.pairwise(steps) if a.subgoal_hash != b.subgoal_hash]
    assert len(switches) >= 3
    rows = [r for r in newest_chunks(engine, sid) if r.status == "ready"]
    ends = {r.end_step for r in rows}
    closed = [s for s in switches if s - 1 <= max(ends)]
    assert closed and all(s - 1 in ends for s in closed), (switches, sorted(ends))
    for r in rows:
        numbers = [int(m) for m in re.findall(r"^- Step (\d+) \(T\+", r.band3 or "", flags=re.M)]
        assert numbers == list(range(r.start_step, r.end_step + 1))


def test_every_step_number_and_time_readable_at_every_level(pro_run: tuple[DataEngine, str, Any]) -> None:
    engine, sid, _ = pro_run
    text = final_request(engine, sid)
    assert "[Era " in text and "[Period " in text
    covered: set[int] = set()
    for a, b in re.findall(r"\[Period \d+ \| Steps (\d+)–(\d+) \| T\+\d\d:\d\d → T\+\d\d:\d\d\]", text):
        covered |= set(range(int(a), int(b) + 1))
    for n in re.findall(r"Step (\d+) \(T\+\d\d:\d\d\)", text):
        covered.add(int(n))
    for n in re.findall(r"# STEP (\d+) of at most \d+ \[T\+\d\d:\d\d\]", text):
        covered.add(int(n))
    assert set(range(1, STEPS)) <= covered | {STEPS - 1}


def test_user_lines_are_verbatim_in_the_final_transcript(pro_run: tuple[DataEngine, str, Any]) -> None:
    engine, sid, _ = pro_run
    text = final_request(engine, sid)
    import json

    for step, line in INJECTED.items():
        assert f"User @ Step {step}: {json.dumps(line, ensure_ascii=False)}" in text
