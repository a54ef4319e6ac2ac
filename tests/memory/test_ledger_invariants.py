"""Invariants of the transcript ledger (SPEC §10.2), each written from its sentence in the spec.

A scripted 60-step run through the fake Gemini server and the real SDK (operator and lens) is
recorded once; every one of its operator requests is re-rendered from the DataEngine and checked.
"""

from __future__ import annotations

import itertools
import json
import re
from typing import Any

import pytest

from artemis_cli.config.profile import Profile, load_profile
from artemis_cli.config.task import Task
from artemis_cli.engine.db import DataEngine
from artemis_cli.memory.ledger import (
    LedgerDecision,
    LedgerEntry,
    LedgerSettings,
    Tail,
    TokenMeter,
    TranscriptLedger,
    pending_placeholder,
    summary_text,
    unavailable_placeholder,
)
from artemis_cli.memory.restore import SessionSpec, rebuild_ledger, turn_requests
from artemis_cli.models.base import FunctionCall, FunctionResponse, Message, ModelRequest, Part
from artemis_cli.models.fakes.gemini import FakeGeminiServer
from artemis_cli.models.gemini import GeminiModel
from artemis_cli.models.offline.scripted import script_policy
from artemis_cli.runner import new_ledger, run_task
from artemis_cli.sim.phone import SimPhone

SCRIPT: list[dict[str, Any]] = []
for k in range(6):
    SCRIPT += [
        {"launch": "com.android.settings"},
        {"tap": {"text": "Network & internet"}},
        {"tap": {"id": "wifi_switch"}},
        {"key": "back"},
        {"key": "home"},
        {"launch": "com.artemis.notes"},
        {"tap": {"desc": "New note"}},
        {"type": {"text": f"Note {k}", "into": {"id": "title"}}},
        {"key": "back"},
        {"tap": {"desc": "Save note"}},
    ]
SCRIPT.append({"finish": {"success": True}})


def small_chunk_profile() -> Profile:
    data = load_profile("flash").model_dump(mode="json")
    data["memory"]["chunking"]["max_steps"] = 6
    return Profile.model_validate(data)


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> tuple[DataEngine, str]:
    data = tmp_path_factory.mktemp("ledger")
    with FakeGeminiServer(script_policy(SCRIPT)) as server:
        model = GeminiModel(["gemini-2.5-flash"], api_key="k", base_url=server.base_url)
        engine = DataEngine.open(data)
        task = Task.model_validate({"id": "chores", "goal": "Do chores", "max_steps": 80})
        result = run_task(task, small_chunk_profile(), SimPhone(popups=False), model, engine, real_time=False)
    assert result.success and result.steps == len(SCRIPT)
    return engine, result.session_id


def all_requests(engine: DataEngine, session_id: str) -> list[tuple[int, ModelRequest]]:
    spec = SessionSpec.load(engine, session_id)
    out = []
    for step in engine.get_steps(session_id):
        ledger = new_ledger(spec, spec.profile, engine, spec.max_steps)
        rebuild_ledger(engine, session_id, ledger, before_step=step.number)
        out += [(step.number, r) for r in turn_requests(engine, session_id, ledger, step)]
    return out


def test_resume_re_renders_every_recorded_request(recorded: tuple[DataEngine, str]) -> None:
    engine, sid = recorded
    recorded_hashes = [c.request_hash for c in engine.llm_calls(sid) if c.role == "operator"]
    assert [r.request_hash() for _, r in all_requests(engine, sid)] == recorded_hashes


def test_s_zone_is_byte_identical_all_session(recorded: tuple[DataEngine, str]) -> None:
    engine, sid = recorded
    assert len({c.prefix_hash for c in engine.llm_calls(sid) if c.role == "operator"}) == 1
    assert len({r.prefix_hash() for _, r in all_requests(engine, sid)}) == 1


def test_no_render_separates_a_call_from_its_response(recorded: tuple[DataEngine, str]) -> None:
    engine, sid = recorded
    for step, request in all_requests(engine, sid):
        msgs = request.messages
        for i, m in enumerate(msgs):
            calls = [p.function_call for p in m.parts if p.function_call]
            responses = [p.function_response for p in m.parts if p.function_response]
            if responses:  # every response answers a call in the message just before it
                prev = [p.function_call.name for p in msgs[i - 1].parts if p.function_call] if i else []
                assert [r.name for r in responses] == prev, f"orphan response in step {step}'s request"
            if calls and i + 1 < len(msgs):  # every call (but the one being made now) is answered
                nxt = [p.function_response.name for p in msgs[i + 1].parts if p.function_response]
                assert nxt == [c.name for c in calls], f"unanswered call in step {step}'s request"


def _entries(request: ModelRequest) -> tuple[str, dict[int, str], str]:
    """(F text, {step: serialised parts of that step's entry in A}, tail) of a request."""
    parts = [(m.role, p.to_dict()) for m in request.messages for p in m.parts]
    frozen = parts[0][1]["text"]
    groups: dict[int, list[Any]] = {}
    current: int | None = None
    for role, part in parts[1:]:
        text = part.get("text", "")
        head = re.match(r"# STEP (\d+) of at most", text) if role == "user" else None
        if head:  # an observation's head opens its step's group
            current = int(head.group(1))
        if current is not None:
            groups.setdefault(current, []).append((role, part))
    tail_step = max(groups)
    tail = json.dumps(groups.pop(tail_step))
    return frozen, {k: json.dumps(v) for k, v in groups.items()}, tail


def test_a_zone_is_append_only_but_for_the_scrub_edge_and_compression(recorded: tuple[DataEngine, str]) -> None:
    engine, sid = recorded
    decided: dict[int, list[dict[str, Any]]] = {}
    for ev in engine.events(sid, kind="ledger"):
        decided.setdefault(ev.step or 0, []).append(ev.payload)
    firsts: dict[int, ModelRequest] = {}
    for step, request in all_requests(engine, sid):
        firsts.setdefault(step, request)
    steps = sorted(firsts)
    checked = 0
    for a, b in itertools.pairwise(steps):
        f_a, a_entries, _ = _entries(firsts[a])
        f_b, b_entries, _ = _entries(firsts[b])
        if any(d["op"] == "frozen" for d in decided.get(b, [])):
            continue  # a compression event rewrites F and moves steps out of A (deep, sparse)
        assert f_a == f_b, f"F changed between turns {a} and {b} without a compression event"
        touched = {d["step"] for d in decided.get(b, []) if d["op"] in ("xml", "image")}
        for step, serialised in a_entries.items():
            if step not in touched:
                assert b_entries[step] == serialised, f"step {step} changed at turn {b} without a decision"
                checked += 1
        assert set(a_entries) <= set(b_entries)
    assert checked > 100


def test_times_in_frozen_text_never_change(recorded: tuple[DataEngine, str]) -> None:
    engine, sid = recorded
    seen: dict[int, str] = {}
    for _, request in all_requests(engine, sid):
        frozen = request.messages[0].parts[0].text or ""
        for line in frozen.splitlines():
            if line.startswith("- Step "):
                number = int(line.split()[2])
                assert seen.setdefault(number, line) == line


# -- the scrub edge, driven directly -----------------------------------------------------------


def _ledger(**settings: int) -> TranscriptLedger:
    return TranscriptLedger(system="sys", tools=[], task_text="# TASK", settings=LedgerSettings(**settings),
                            load_image=lambda sha: b"png:" + sha.encode())


def _entry(step: int) -> LedgerEntry:
    call = Message("model", [Part(function_call=FunctionCall("tap", {"index": 0}))])
    return LedgerEntry(step=step, observation=f"# CURRENT OBSERVATION [T+00:0{step}]\nStep {step}.\n<screen>x</screen>",
                       image_sha=f"sha{step}", replies_in=[FunctionResponse("tap", {"status": "ok"})] if step > 1 else [],
                       turn=[call])


def test_failed_summary_becomes_unavailable_at_once_and_pending_waits_its_grace() -> None:
    ledger = _ledger(image_scrub_depth=3, pending_grace_steps=2, min_active_steps=50)
    status = {1: ("failed", None), 2: ("pending", None), 3: ("ready", "a list of switches")}
    for step in range(1, 4):
        ledger.commit(_entry(step))
    ledger.begin_turn(4, lambda s: status.get(s, ("pending", None)))
    assert (ledger.entries[0].image_state, ledger.entries[0].image_text) == ("failed", unavailable_placeholder(1))
    ledger.commit(_entry(4))
    ledger.begin_turn(5, lambda s: status.get(s, ("pending", None)))
    assert ledger.entries[1].image_state == "image"  # pending, within its grace
    ledger.commit(_entry(5))
    ledger.begin_turn(6, lambda s: status.get(s, ("pending", None)))
    assert ledger.entries[2].image_text == summary_text(3, "a list of switches")
    ledger.commit(_entry(6))
    ledger.begin_turn(7, lambda s: status.get(s, ("pending", None)))
    assert ledger.entries[1].image_text == pending_placeholder(2)


def test_a_decided_message_is_never_back_filled_by_a_late_summary() -> None:
    ledger = _ledger(image_scrub_depth=1, pending_grace_steps=0, min_active_steps=50)
    ledger.commit(_entry(1))
    ledger.begin_turn(2, lambda s: ("pending", None))
    assert ledger.entries[0].image_text == pending_placeholder(1)
    ledger.commit(_entry(2))
    ledger.begin_turn(3, lambda s: ("ready", "late summary"))  # it arrives after the decision
    assert ledger.entries[0].image_text == pending_placeholder(1)
    tail = Tail(step=3, replies_in=[], observation="# CURRENT OBSERVATION [T+00:03]", image_png=None)
    assert "visual summary of step 1" not in json.dumps([m.to_dict() for m in ledger.messages(tail, [])])


def test_lens_calls_never_move_the_operator_context_measurement() -> None:
    meter = TokenMeter()
    operator = ModelRequest(system="s" * 400, messages=[Message("user", [Part(text="x" * 4000)])], role="operator")
    meter.observe(operator, 5000)
    before = meter.context_tokens(operator)
    lens = ModelRequest(system="lens", messages=[Message("user", [Part(text="y" * 80000)])], role="lens")
    meter.observe(lens, 90000)
    assert meter.context_tokens(operator) == before == 5000


def test_screenshots_are_scrubbed_in_batches_and_a_pending_one_still_gets_its_grace() -> None:
    """image_scrub_batch=3: screenshots leave A only on turns whose step is a multiple of 3, so
    the calls between two batches share their prefix; a pending summary still waits until depth
    image_scrub_depth + pending_grace_steps, then becomes the placeholder on whatever turn that is."""
    ledger = _ledger(image_scrub_depth=3, pending_grace_steps=3, min_active_steps=50, image_scrub_batch=3)

    def summaries(step: int) -> tuple[str, str | None]:  # step 4's summary never arrives
        return ("pending", None) if step == 4 else ("ready", f"screen {step}")

    scrubbed_at: dict[int, int] = {}
    for turn in range(2, 12):
        ledger.commit(_entry(turn - 1))
        for d in ledger.begin_turn(turn, summaries):
            if d.op == "image":
                scrubbed_at[d.step or 0] = turn
    assert scrubbed_at[1] == scrubbed_at[2] == scrubbed_at[3] == 6  # depth 5, 4, 3 at the batch turn 6
    assert scrubbed_at[5] == scrubbed_at[6] == 9
    assert scrubbed_at[4] == 10  # pending at turns 6 and 9: placeholder at depth 6, off-batch
    assert ledger.entries[3].image_text == pending_placeholder(4)
    assert all(turn % 3 == 0 for step, turn in scrubbed_at.items() if step != 4)


def test_f_is_sent_one_part_per_block_so_an_appended_chunk_keeps_the_earlier_parts() -> None:
    ledger = _ledger()
    chunk1 = "[Chunk 1 | a | Steps 1–2 | T+00:00 → T+00:05]\nPurpose: x\n\nnot a block"
    ledger.apply(LedgerDecision("frozen", at=3, end=0, text=chunk1))
    tail = Tail(step=3, replies_in=[], observation="# STEP 3 of at most 9 [T+00:06]", image_png=None)
    before = ledger.messages(tail, [])[0].parts[:-1]  # F's parts, then the tail's head
    ledger.apply(LedgerDecision("frozen", at=6, end=0, text=chunk1 + "\n\n[Chunk 2 | b | Steps 3–4 | T+00:06 → T+00:09]"))
    after = ledger.messages(tail, [])[0].parts[:-1]
    assert after[: len(before)] == before and len(after) == len(before) + 1
    assert "\n\n".join(p.text or "" for p in after) == ledger.frozen_text()
