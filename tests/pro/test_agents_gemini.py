"""Each Pro agent through the real google-genai SDK against FakeGeminiServer: good JSON is
parsed, a malformed reply gets exactly one retry carrying the parse error, a second malformed
reply (or a failed call) ends in the agent's documented fallback — never a crash."""

from __future__ import annotations

import json
from typing import Any

from pro_helpers import Replies, ServeFn

from artemis_cli.models.base import ModelRequest, ModelResponse
from artemis_cli.models.fakes.gemini import FakeRequest
from artemis_cli.operators.pro import (
    Checker,
    FailureAnalyzer,
    Milestone,
    Plan,
    Planner,
    RecoveryAction,
    Validator,
    Verdict,
    milestone_id,
    role_of_system,
)

GOAL = "Turn on Wi-Fi and note the network name"
WIFI = Milestone(milestone_id("Turn on Wi-Fi"), "Turn on Wi-Fi")
PRE = ['[1] Switch "Wi-Fi" id=wifi_switch {checkable} @(962,348)']
POST = ['[1] Switch "Wi-Fi" id=wifi_switch {checkable, checked} @(962,348)']


def _user_texts(req: FakeRequest) -> list[str]:
    return [p["text"] for c in req.contents if c.get("role") == "user" for p in c["parts"] if "text" in p]


def _assert_aux_request(req: FakeRequest, role: str) -> None:
    assert req.tools == []
    assert role_of_system(req.system) == role
    assert req.system.split("\n", 1)[0] == f"You are the Artemis {role.replace('_', ' ')}."


# --- planner ---------------------------------------------------------------------------------


def test_planner_plans_and_revises_keeping_ids(serve: ServeFn) -> None:
    first = {"milestones": [{"title": "Open Settings"}, {"title": "Turn on Wi-Fi"}, {"title": "Note the name"}]}
    srv, model = serve(Replies(json.dumps(first)))
    calls: list[tuple[str, bool]] = []

    def record(req: ModelRequest, resp: ModelResponse | None, err: Exception | None) -> None:
        calls.append((req.role, resp is not None))

    planner = Planner(model, record_call=record)
    plan = planner.plan(GOAL, "# HISTORY\n(no steps yet)")
    assert [m.title for m in plan.milestones] == ["Open Settings", "Turn on Wi-Fi", "Note the name"]
    assert plan.version == 1 and plan.milestones[1].id == milestone_id("Turn on Wi-Fi")
    _assert_aux_request(srv.requests[0], "planner")
    assert "# GOAL\n" + GOAL in srv.requests[0].last_user_text()
    assert calls == [("planner", True)]

    a, b, c = plan.milestones
    revision = {
        "milestones": [
            {"id": a.id, "title": "Open the Settings app", "done": True},
            {"title": "Open Network & internet"},
            {"id": f"m:{b.id}", "title": "Switch Wi-Fi ON"},
            {"id": c.id, "title": "Note the name"},
        ]
    }
    srv.policy = Replies(json.dumps(revision))
    v2 = planner.revise(plan, GOAL, "# HISTORY (steps 1–3)\n…", "the same tap failed three times")
    assert v2.version == 2
    assert v2.ids[0] == a.id and v2.ids[2] == b.id and v2.ids[3] == c.id
    assert v2.ids[1] not in plan.ids
    assert v2.current() == v2.milestones[1]
    text = srv.requests[-1].last_user_text()
    assert f"[>] id={a.id} \"Open Settings\"" in text
    assert "# WHY A REVISION IS NEEDED\nthe same tap failed three times" in text


def test_planner_retries_once_then_keeps_the_old_plan(serve: ServeFn) -> None:
    good = json.dumps({"milestones": [{"title": "Open Settings"}, {"title": "Turn on Wi-Fi"}]})
    srv, model = serve(Replies("Sure! Here is the plan: open settings", good))
    planner = Planner(model)
    plan = planner.plan(GOAL)
    assert len(srv.requests) == 2
    retry = srv.requests[1]
    texts = _user_texts(retry)
    assert "Your reply could not be used: the reply is not valid JSON" in texts[-1]
    assert retry.contents[1]["role"] == "model"
    assert [m.title for m in plan.milestones] == ["Open Settings", "Turn on Wi-Fi"]
    assert planner.last_outcome is not None and planner.last_outcome.attempts == 2

    srv.policy = Replies("not json", '{"milestones": []}')
    kept = planner.revise(plan, GOAL, "", "stuck")
    assert kept is plan  # fallback: the old plan, unchanged
    assert len(srv.requests) == 4  # exactly one retry
    assert planner.last_outcome is not None and not planner.last_outcome.ok
    assert "at least one milestone" in planner.last_outcome.error

    # a first plan that never parses falls back to the goal as the only milestone
    srv.policy = Replies("```\nnope\n```")
    fallback = planner.plan(GOAL)
    assert fallback == Plan.from_titles([GOAL])


# --- validator -------------------------------------------------------------------------------


def test_validator_parses_a_verdict_from_pre_post_evidence(serve: ServeFn) -> None:
    reply = {"verdict": "progress", "milestone_complete": True, "reason": "the Wi-Fi switch is now checked"}
    srv, model = serve(Replies("```json\n" + json.dumps(reply) + "\n```"))
    verdict = Validator(model).judge(
        PRE, 'tap Switch "Wi-Fi" (id wifi_switch) @(962,348)', POST, WIFI, operator_note="[script 3/9] tap"
    )
    assert verdict == Verdict("progress", True, "the Wi-Fi switch is now checked")
    assert verdict.to_dict() == reply and Verdict.from_dict(verdict.to_dict()) == verdict
    req = srv.requests[0]
    _assert_aux_request(req, "validator")
    text = req.last_user_text()
    assert text.index(PRE[0]) < text.index("# AFTER THE ACTION") < text.index(POST[0])
    assert f"Turn on Wi-Fi (m:{WIFI.id})" in text and "[script 3/9] tap" in text


def test_validator_falls_back_to_unclear(serve: ServeFn) -> None:
    srv, model = serve(Replies('{"verdict": "great", "milestone_complete": false, "reason": "x"}',
                               '{"verdict": "progress", "milestone_complete": "yes", "reason": "x"}'))
    verdict = Validator(model).judge("Settings list", "press back", "Home screen", None)
    assert verdict.verdict == "unclear" and not verdict.milestone_complete and verdict.fallback
    assert "milestone_complete" in verdict.reason
    assert len(srv.requests) == 2
    assert '"verdict" must be one of progress, no_effect, regress, unclear' in _user_texts(srv.requests[1])[-1]

    # a retry that succeeds is taken
    srv.policy = Replies("{oops", '{"verdict": "no_effect", "milestone_complete": false, "reason": "same"}')
    assert Validator(model).judge("a", "tap", "a", WIFI) == Verdict("no_effect", False, "same")


def test_model_errors_end_in_fallbacks_not_crashes(serve: ServeFn) -> None:
    srv, model = serve(Replies("{}"))
    srv.inject("400", count=4)
    assert Validator(model).judge("a", "tap", "b", WIFI).verdict == "unclear"
    assert FailureAnalyzer(model).recover("", [], WIFI) == []
    verdict = Checker(model).verify(WIFI, "")
    assert not verdict.verified and verdict.fallback and "model call failed" in verdict.evidence
    plan = Plan.from_titles(["A"])
    assert Planner(model).revise(plan, GOAL, "", "x") is plan
    assert srv.pending_faults() == 0 and len(srv.requests) == 4  # no retry after a failed call


# --- failure analyzer ------------------------------------------------------------------------


def test_failure_analyzer_returns_validated_recovery_actions(serve: ServeFn) -> None:
    reply = {
        "actions": [
            {"tool": "press_key", "args": {"key": "back"}},
            {"tool": "tap", "args": {"index": 4}},
            {"tool": "swipe", "args": {"direction": "up"}},
        ],
        "reason": "a dialog covers the list",
    }
    srv, model = serve(Replies(json.dumps(reply)))
    actions = FailureAnalyzer(model).recover("# HISTORY (steps 1–5)\n…", POST, WIFI)
    assert actions == [
        RecoveryAction("press_key", {"key": "back"}),
        RecoveryAction("tap", {"index": 4}),
        RecoveryAction("swipe", {"direction": "up"}),
    ]
    assert [a.phrase() for a in actions] == ["press_key back", "tap index 4", "swipe up"]
    assert actions[0].to_call().name == "press_key"
    assert RecoveryAction.from_payload(actions[1].to_payload()) == actions[1]
    _assert_aux_request(srv.requests[0], "failure_analyzer")
    assert "<screen>\n" + POST[0] + "\n</screen>" in srv.requests[0].last_user_text()


def test_failure_analyzer_refuses_bad_actions_then_falls_back_to_none(serve: ServeFn) -> None:
    bad_tool = {"actions": [{"tool": "finish", "args": {"success": True}}]}
    bad_args = {"actions": [{"tool": "press_key", "args": {"key": "power"}}]}
    srv, model = serve(Replies(json.dumps(bad_tool), json.dumps(bad_args)))
    analyzer = FailureAnalyzer(model)
    assert analyzer.recover("", "", None) == []
    assert len(srv.requests) == 2
    assert "'finish' is not a recovery action" in _user_texts(srv.requests[1])[-1]
    assert analyzer.last_outcome is not None and "volume_up" in analyzer.last_outcome.error
    # an empty list is a valid answer ("nothing would help"), not a failure
    srv.policy = Replies('{"actions": [], "reason": "nothing to do"}')
    assert analyzer.recover("", "", None) == []
    assert analyzer.last_outcome is not None and analyzer.last_outcome.ok


# --- checker ---------------------------------------------------------------------------------


def test_checker_verifies_with_evidence_and_falls_back_unverified(serve: ServeFn) -> None:
    srv, model = serve(Replies('{"verified": true, "evidence": "Step 7 summary shows the switch ON"}'))
    checker = Checker(model)
    verdict = checker.verify(WIFI, "# HISTORY (steps 1–7)\n…")
    assert (verdict.milestone_id, verdict.verified, verdict.evidence) == (
        WIFI.id, True, "Step 7 summary shows the switch ON")
    assert verdict.line() == f"Checker: verified (m:{WIFI.id}) — Step 7 summary shows the switch ON"
    _assert_aux_request(srv.requests[0], "checker")
    assert f"# MILESTONE TO VERIFY\nTurn on Wi-Fi (m:{WIFI.id})" in srv.requests[0].last_user_text()

    srv.policy = Replies('{"verified": true, "evidence": ""}', "[1, 2]")
    verdict = checker.verify(WIFI, "")
    assert not verdict.verified and verdict.fallback and verdict.milestone_id == WIFI.id
    assert len(srv.requests) == 3
    assert "needs \"evidence\"" in _user_texts(srv.requests[2])[-1]


def _roles(srv: Any) -> list[str | None]:
    return [role_of_system(r.system) for r in srv.requests]


def test_every_agent_names_its_role_on_the_first_line(serve: ServeFn) -> None:
    srv, model = serve(Replies("{}"))
    Planner(model).plan(GOAL)
    Validator(model).judge("a", "tap", "b", WIFI)
    FailureAnalyzer(model).recover("", "", WIFI)
    Checker(model).verify(WIFI, "")
    assert _roles(srv) == ["planner"] * 2 + ["validator"] * 2 + ["failure_analyzer"] * 2 + ["checker"] * 2
