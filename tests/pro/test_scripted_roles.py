"""pro_script_policy through the real SDK: milestones from a script's launch segments, validator
completion at segment ends (read from the operator's [script k/n] marker), checker and failure
analyzer answers, and operator/lens requests still played by script_policy."""

from __future__ import annotations

from pro_helpers import ServeFn

from artemis_cli.models.base import Message, ModelRequest, Part
from artemis_cli.models.offline.scripted_roles import pro_script_policy, script_position, script_segments
from artemis_cli.operators.pro import Checker, FailureAnalyzer, Planner, RecoveryAction, Validator
from artemis_cli.operators.prompts import SYSTEM_PROMPT, observation_text
from artemis_cli.operators.tools import tool_declarations

SCRIPT: list[dict[str, object]] = [
    {"tap": {"text": "Search"}},  # 1  segment 1 (no launch yet)
    {"launch": "com.android.settings"},  # 2  segment 2
    {"tap": {"text": "Network & internet"}},  # 3
    {"tap": {"text": "Wi-Fi"}},  # 4  end of segment 2
    {"launch": "com.example.notes"},  # 5  segment 3
    {"type": {"text": "HomeNet"}},  # 6
    {"note": {"key": "ssid", "content": "HomeNet"}},  # 7
    {"finish": {"success": True, "answer": "done"}},  # 8  end of segment 3
]


def test_segments_split_at_launch_entries() -> None:
    segs = script_segments(SCRIPT)
    assert [(s.number, s.start, s.end, s.title) for s in segs] == [
        (1, 0, 0, "Work in the current app (#1)"),
        (2, 1, 3, "Work in com.android.settings (#2)"),
        (3, 4, 7, "Work in com.example.notes (#3)"),
    ]
    starting = script_segments(SCRIPT[1:])
    assert [s.title for s in starting] == ["Work in com.android.settings (#1)", "Work in com.example.notes (#2)"]
    assert script_segments([]) == []


def test_script_position_reads_only_the_operator_note() -> None:
    assert script_position("# OPERATOR'S NOTE (x)\n[script 4/8] tap\n\n# ACTION\ntap") == (4, False)
    assert script_position("# OPERATOR'S NOTE (x)\n[script 4/8 popup] dismiss\n") == (4, True)
    assert script_position("# HISTORY\n[script 4/8] tap\n# ACTION\ntap") is None


def test_pro_agents_get_scripted_answers_through_the_sdk(serve: ServeFn) -> None:
    srv, model = serve(pro_script_policy(SCRIPT))
    plan = Planner(model).plan("Note the Wi-Fi name")
    assert [m.title for m in plan.milestones] == [s.title for s in script_segments(SCRIPT)]
    revised = Planner(model).revise(plan, "Note the Wi-Fi name", "", "loop detected")
    assert revised.ids == plan.ids and revised.version == plan.version + 1

    validator = Validator(model)
    flags = []
    for k in range(1, len(SCRIPT) + 1):
        v = validator.judge("before", "an action", "after", plan.current(), operator_note=f"[script {k}/8] x")
        assert v.verdict == "progress" and not v.fallback
        flags.append(v.milestone_complete)
        if v.milestone_complete:
            current = plan.current()
            assert current is not None
            plan = plan.mark_done(current.id)
    assert [k for k, done in enumerate(flags, 1) if done] == [1, 4, 8]
    assert plan.current() is None  # every milestone completed at its segment's end
    popup = validator.judge("a", "tap", "b", None, operator_note="[script 4/8 popup] dismissing")
    assert popup.verdict == "progress" and not popup.milestone_complete
    assert validator.judge("a", "tap", "b", None, operator_note="no marker").verdict == "unclear"

    check = Checker(model).verify(plan.milestones[1], "# HISTORY (steps 1–4)")
    assert check.verified and "Work in com.android.settings (#2)" in check.evidence
    assert FailureAnalyzer(model).recover("", "", None) == [RecoveryAction("press_key", {"key": "back"})]
    assert all(r.status == 200 for r in srv.requests)


def test_operator_and_lens_requests_still_play_the_script(serve: ServeFn) -> None:
    _srv, model = serve(pro_script_policy(SCRIPT))
    obs = observation_text(
        step=1, max_steps=20, offset_ms=0, foreground_app="com.android.launcher", screen_size=(1080, 2400),
        coordinates="pixels", element_list='[1] TextView "Search" @(540,200)',
    )
    request = ModelRequest(system=SYSTEM_PROMPT, messages=[Message("user", [Part(text="# TASK\nGoal: x"),
                                                                            Part(text=obs)])],
                           tools=tool_declarations("pixels"))
    reply = model.generate(request).message
    assert reply.text().startswith("[script 1/8]")
    assert [(c.name, c.args) for c in reply.function_calls()] == [("tap", {"index": 1})]
    lens = model.generate(ModelRequest(system="You describe screenshots.", role="lens",
                                       messages=[Message("user", [Part(text="ACTION: tap @(540,200)")])]))
    assert lens.message.text().startswith("The screenshot shows an app screen")


def test_toolless_hook_takes_other_toolless_requests_only(serve: ServeFn) -> None:
    from artemis_cli.models.fakes.gemini import FakeReply

    _srv, model = serve(pro_script_policy(SCRIPT, toolless=lambda req: FakeReply.text('{"purpose": "p"}')))
    out = model.generate(ModelRequest(system="You compress a segment.", role="lens",
                                      messages=[Message("user", [Part(text="steps")])]))
    assert out.message.text() == '{"purpose": "p"}'
    assert FailureAnalyzer(model).recover("", "", None) == [RecoveryAction("press_key", {"key": "back"})]
