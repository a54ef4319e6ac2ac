"""The operator sees what its actions came to (issue 13; SPEC §10.2: validator results are in A and
on every band ③ line), and recovery sub-actions carry element semantics (SPEC §10.3).

Through the real SDK against the fake Gemini server, on the simulated phone:
- Pro: the action's function reply (it opens the next step) carries the action outcome and the
  validator's verdict (word + quoted reason); band ③ lines of the swapped chunks carry it too;
  a failure-analyzer recovery ``tap index N`` is recorded and rendered with the hit-tested
  element (``tap <Class> "<label>" (id …) @(x,y) -> ok``), as a normal step line would be.
- Flash: the function reply carries the outcome (no validator in that loop).
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any

from artemis_cli.config.profile import Profile, load_profile
from artemis_cli.config.task import Task
from artemis_cli.engine.db import DataEngine
from artemis_cli.memory.chunk_store import newest_chunks
from artemis_cli.memory.ledger_lines import ledger_line, recovery_line, verdict_phrase
from artemis_cli.models.fakes.gemini import FakeGeminiServer, FakeReply, FakeRequest
from artemis_cli.models.gemini import GeminiModel
from artemis_cli.models.offline.scripted import script_policy
from artemis_cli.models.offline.scripted_roles import (
    first_user_text,
    pro_script_policy,
    role_of_system,
    script_position,
)
from artemis_cli.operators.flash import MAX_REPLY_REASON_CHARS
from artemis_cli.operators.pro.failure_analyzer import RECOVERY_EVENT
from artemis_cli.runner import run_task
from artemis_cli.sim.phone import SimPhone

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
from long_run import chore_script

STEPS = 20
NO_EFFECT_AT = (3, 4)  # script entries the validator calls no_effect: the analyzer steps in after the second
_LABELLED = re.compile(r'^\[(\d+)\] (?:TextView|Switch) "')


def pro_policy(script: list[dict[str, Any]], proposals: list[str]) -> Any:
    base = pro_script_policy(script)

    def policy(req: FakeRequest) -> FakeReply:
        role = None if req.tools else role_of_system(req.system)
        if role == "validator":
            pos = script_position(first_user_text(req))
            if pos is not None and pos[0] in NO_EFFECT_AT:
                return FakeReply.text(json.dumps({"verdict": "no_effect", "milestone_complete": False,
                                                  "reason": 'the screen still shows "Internet"'}))
        if role == "failure_analyzer":  # tap the first labelled text or switch of the current screen, by index
            screen = first_user_text(req).split("# CURRENT SCREEN", 1)[1]
            index = next(int(m.group(1)) for line in screen.splitlines() if (m := _LABELLED.match(line.strip())))
            proposals.append(f"tap index {index}")
            return FakeReply.text(json.dumps({"actions": [{"tool": "tap", "args": {"index": index}}],
                                              "reason": "try the labelled row"}))
        reply: FakeReply = base(req)
        return reply

    return policy


def action_reply(step: Any) -> dict[str, Any]:
    replies = step.meta["replies_out"]
    assert replies, step.number
    return dict(replies[-1]["response"])


def operator_replies(server: FakeGeminiServer) -> list[dict[str, Any]]:
    """Every function response the operator was sent (in A or opening its turn)."""
    out = []
    for req in server.requests:
        if not req.tools:
            continue
        for content in req.contents:
            for part in content.get("parts", []):
                fr = part.get("functionResponse") if isinstance(part, dict) else None
                if isinstance(fr, dict):
                    out.append(fr.get("response") or {})
    return out


def test_pro_verdicts_reach_the_operator_and_band3_and_recoveries_have_element_semantics(tmp_path: Path) -> None:
    data = load_profile("pro").model_dump(mode="json")
    data["memory"]["chunking"].update({"max_steps": 6})
    script, _ = chore_script(STEPS)
    task = Task.model_validate({"id": "pro-verdicts", "goal": "Do the daily phone chores", "max_steps": STEPS + 4})
    engine = DataEngine.open(tmp_path / "data")
    proposals: list[str] = []
    with FakeGeminiServer(pro_policy(script, proposals)) as server:
        model = GeminiModel(["gemini-2.5-pro"], api_key="k", base_url=server.base_url)
        result = run_task(task, Profile.model_validate(data), SimPhone(seed=7, popups=False), model, engine,
                          real_time=False)
        sent = operator_replies(server)
    sid = result.session_id
    steps = engine.get_steps(sid)
    judged = [s for s in steps if s.verdict]
    assert len(judged) >= STEPS // 2
    # A: the action's reply carries the outcome and the verdict, and the operator was sent it
    for s in judged:
        reply = action_reply(s)
        assert reply["status"] == s.result_status
        assert reply["validator"] == verdict_phrase(s.verdict, MAX_REPLY_REASON_CHARS)
        assert reply["validator"].startswith(str((s.verdict or {})["verdict"]))
    assert any(r.get("validator") == 'no_effect "the screen still shows \\"Internet\\""' for r in sent)
    assert sum(1 for r in sent if "validator" in r) >= len(judged) - 1
    # band ③: every step line of a swapped chunk carries its verdict
    rows = [r for r in newest_chunks(engine, sid) if r.status == "ready"]
    assert rows
    by_number = {s.number: s for s in steps}
    for row in rows:
        for line in (row.band3 or "").splitlines():
            m = re.match(r"- Step (\d+) ", line)
            if m and by_number[int(m.group(1))].verdict:
                assert "; validator: " in line and line == ledger_line(by_number[int(m.group(1))])
    # the recovery: proposed by index, recorded with the element it hit, rendered like a step line
    events = engine.events(sid, kind=RECOVERY_EVENT)
    assert proposals and events
    payload = events[0].payload
    assert payload["proposal"] == proposals[0]
    assert payload["target"]["label_source"] != "none" and payload["x"] is not None
    assert re.fullmatch(r'tap (TextView|Switch) "[^"]+"( \(id \w+\))? @\(\d+,\d+\)', payload["phrase"]), payload["phrase"]
    # its result is what the screen showed afterwards: tapping a plain label changes nothing here, so
    # it is no_change, never an unobserved "ok"
    assert payload["result"] == "no_change: no visible change"
    sub_line = f"  - recovery: {recovery_line(payload)}"
    assert sub_line == f"  - recovery: {payload['phrase']} -> no_change: no visible change"
    at = events[0].step
    assert at is not None
    holding = [r for r in rows if r.start_step <= at <= r.end_step]
    assert holding and sub_line in (holding[0].band3 or "").splitlines()


def test_flash_replies_carry_the_outcome_and_no_verdict(tmp_path: Path) -> None:
    script, _ = chore_script(12)
    task = Task.model_validate({"id": "flash-outcome", "goal": "Do the daily phone chores", "max_steps": 14})
    engine = DataEngine.open(tmp_path / "data")
    with FakeGeminiServer(script_policy(script)) as server:
        model = GeminiModel(["gemini-2.5-flash"], api_key="k", base_url=server.base_url)
        result = run_task(task, load_profile("flash"), SimPhone(seed=7, popups=False), model, engine, real_time=False)
        sent = operator_replies(server)
    steps = [s for s in engine.get_steps(result.session_id) if s.action_type != "finish"]
    assert len(steps) == 11
    for s in steps:
        reply = action_reply(s)
        assert reply["status"] == s.result_status and "validator" not in reply
        summary = (s.outcome or {}).get("summary")
        if summary:
            assert reply["observed"] == summary
            assert any(r.get("observed") == summary for r in sent)  # the operator saw what it came to
    assert any("screen_changed" in r for r in sent)
