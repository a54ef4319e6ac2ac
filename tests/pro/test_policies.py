"""The context-policy table and compiled history views (golden), from a real DataEngine."""

from __future__ import annotations

import pytest
from pro_helpers import check_golden

from artemis_cli.engine import DataEngine, EventRecord, SessionRecord, StepRecord
from artemis_cli.memory.notes import save_note
from artemis_cli.operators.pro import (
    CONTEXT_POLICIES,
    RECOVERY_EVENT,
    ContextPolicy,
    RecoveryAction,
    compile_view,
)
from artemis_cli.operators.pro.policies import digest_ranges, policy_for

SETTINGS = "Open Settings"
WIFI = "Turn on Wi-Fi"
M1, M2 = "b32422ef63", "5f73c88185"
SWITCH = {
    "text": "Wi-Fi",
    "content_desc": "",
    "resource_id": "com.android.settings:id/wifi_switch",
    "class_name": "android.widget.Switch",
    "bounds": [900, 300, 1024, 396],
    "label_source": "index",
}
CHUNK_1_4 = (
    f"[Chunk 1 | {SETTINGS} | Steps 1–4 | T+00:00 → T+00:40]\n"
    "Purpose: open Settings. Done: launched Settings, scrolled to Network. Left: note \"plan\"."
)


def _session(engine: DataEngine) -> str:
    sid = engine.create_session(SessionRecord(goal="Turn on Wi-Fi", loop="pro", started_at="2024-01-01T00:00:00Z"))
    for n in range(1, 11):
        milestone, mid = (SETTINGS, M1) if n <= 5 else (WIFI, M2)
        kw: dict[str, object] = {}
        events: list[EventRecord] = []
        if n == 1:
            kw = {"action_type": "launch_app", "action_args": {"app": "com.android.settings"}}
        elif n == 8:
            kw = {"action_type": "tap", "x": 962, "y": 348, "target": SWITCH, "result_status": "error",
                  "result_detail": "DeviceError: tap timed out"}
            events = [EventRecord(kind=RECOVERY_EVENT, payload=RecoveryAction("press_key", {"key": "back"}).to_payload())]
        elif n == 9:
            kw = {"action_type": "tap", "x": 962, "y": 348, "target": SWITCH, "user_instruction": "Also check Bluetooth"}
        else:
            kw = {"action_type": "swipe", "action_args": {"direction": "up"}, "x": 540, "y": 1600, "x2": 540, "y2": 700}
        verdict = {"verdict": "progress" if n != 8 else "no_effect", "milestone_complete": n == 5,
                   "reason": f"evidence of step {n}"}
        engine.record_step(
            StepRecord(
                session_id=sid, number=n, offset_ms=n * 10_000, thought=f"[script {n}/10] step {n}\nnext line",
                subgoal_hash=mid, milestone=milestone, verdict=verdict,
                summary=f"Screen after step {n}." if n != 10 else None,
                summary_status="ready" if n != 10 else "pending",
                **kw,  # type: ignore[arg-type]
            ),
            events=events,
        )
    save_note(engine, sid, "plan", "go to Network first", 3)
    save_note(engine, sid, "ssid", "HomeNet", 9)
    save_note(engine, sid, "late", "written after the view's step", 10)
    return sid


def test_one_policy_per_agent() -> None:
    assert set(CONTEXT_POLICIES) == {"planner", "validator", "failure_analyzer", "checker"}
    assert all(isinstance(p, ContextPolicy) for p in CONTEXT_POLICIES.values())
    assert policy_for("checker") is CONTEXT_POLICIES["checker"]
    with pytest.raises(KeyError):
        policy_for("operator")


def test_digest_ranges() -> None:
    assert digest_ranges([CHUNK_1_4, "[Chunk 2 | x | Steps 5-7 | …]", "[Chunk 3 | y | Step 9 | …]", "junk"]) == [
        (1, 4), (5, 7), (9, 9)]


def test_compiled_views_golden(engine: DataEngine) -> None:
    sid = _session(engine)
    for role, policy in CONTEXT_POLICIES.items():
        view = compile_view(engine, sid, policy, 9, [CHUNK_1_4])
        check_golden(f"compiled_{role}.txt", view + "\n")
    planner = compile_view(engine, sid, CONTEXT_POLICIES["planner"], 9, [CHUNK_1_4])
    # the digest covers 1–4: those steps are not repeated; step 5 (older, uncovered) is a ledger line
    assert "- Step 1 (" not in planner and CHUNK_1_4 in planner
    assert "## Earlier steps" not in planner  # recent steps 2–9 in full; step 1 only via the digest
    # notes up to the view's step only; user lines verbatim; recovery sub-lines under their step
    assert '"ssid" (Step 9): "HomeNet"' in planner and "late" not in planner
    assert 'User @ Step 9: "Also check Bluetooth"' in planner
    assert '-> error: DeviceError: tap timed out; validator: no_effect "evidence of step 8"\n  - recovery: press_key back' in planner


def test_every_step_stays_readable_without_digests(engine: DataEngine) -> None:
    sid = _session(engine)
    checker = CONTEXT_POLICIES["checker"]
    narrow = ContextPolicy(recent_steps=2, chunk_digests=True, older_ledger=True, include_notes=False,
                           include_summaries=False)
    view = compile_view(engine, sid, narrow, 10, [])
    for n in range(1, 11):
        assert f"Step {n} (T+{n * 10 // 60:02d}:{n * 10 % 60:02d})" in view
    assert "## Recent steps 9–10" in view and "summary:" not in view
    with_digest = compile_view(engine, sid, narrow, 10, [CHUNK_1_4])
    older = with_digest.split("## Earlier steps (ledger)\n", 1)[1].split("\n\n", 1)[0]
    assert [ln.split(" (")[0] for ln in older.splitlines()] == [f"- Step {n}" for n in range(5, 9)]
    # a pending summary is not shown; no steps -> explicit empty view
    assert "Screen after step 10" not in compile_view(engine, sid, checker, 10, [])
    assert compile_view(engine, sid, checker, 0, []) == "# HISTORY\n(no steps yet)"
