"""The Pro validator and planner see the screen (issue 22, Feedback; Mobile-Agent-v3's reflector
compares the screenshots before and after an action): the validator gets the step's pre and post
screenshots, the planner the current screen, scaled like the operator's and without marks, as
the context-policy table says. Through the real SDK against the fake Gemini server."""

from __future__ import annotations

import base64
import sys
from pathlib import Path
from typing import Any

from artemis_cli.config.profile import load_profile
from artemis_cli.config.task import Task
from artemis_cli.engine.db import DataEngine
from artemis_cli.models.fakes.gemini import FakeGeminiServer, FakeRequest
from artemis_cli.models.gemini import GeminiModel
from artemis_cli.models.offline.scripted_roles import pro_script_policy, role_of_system
from artemis_cli.operators.pro.policies import CONTEXT_POLICIES, SCREENSHOT_LABELS
from artemis_cli.perception.model_image import scale_for_model
from artemis_cli.perception.png import png_size
from artemis_cli.runner import run_task
from artemis_cli.sim.phone import SimPhone

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
from long_run import chore_script


def _user_parts(req: FakeRequest) -> list[dict[str, Any]]:
    return [p for c in req.contents if c.get("role", "user") == "user" for p in c.get("parts", [])]


def _decode(data: str) -> bytes:
    """The SDK sends url-safe base64 without padding."""
    return base64.urlsafe_b64decode(data + "=" * (-len(data) % 4))


def _images(req: FakeRequest) -> list[bytes]:
    return [_decode(p["inlineData"]["data"]) for p in _user_parts(req) if "inlineData" in p]


def _labels(req: FakeRequest) -> list[str]:
    """The text part before each image."""
    parts = _user_parts(req)
    return [str(parts[i - 1].get("text")) for i, p in enumerate(parts) if "inlineData" in p and i > 0]


def test_the_table_says_which_agent_sees_which_screenshots() -> None:
    assert CONTEXT_POLICIES["validator"].screenshots == ("pre", "post")
    assert CONTEXT_POLICIES["planner"].screenshots == ("current",)
    assert CONTEXT_POLICIES["failure_analyzer"].screenshots == () == CONTEXT_POLICIES["checker"].screenshots


def test_validator_gets_before_and_after_and_planner_the_current_screen(tmp_path: Path) -> None:
    script, _ = chore_script(10)
    profile = load_profile("pro")
    max_side = profile.screenshot.max_side
    assert max_side is not None
    task = Task.model_validate({"id": "pro-shots", "goal": "Do the daily phone chores", "max_steps": 12})
    with DataEngine.open(tmp_path / "data") as engine, FakeGeminiServer(pro_script_policy(script)) as server:
        model = GeminiModel(["gemini-2.5-pro"], api_key="k", base_url=server.base_url)
        result = run_task(task, profile, SimPhone(seed=7, popups=False), model, engine, real_time=False)
        steps = [s for s in engine.get_steps(result.session_id) if s.action_type != "finish"]
        shots = {s.number: (engine.blob(s.pre_screenshot or ""), engine.blob(s.post_screenshot or "")) for s in steps}
    by_role: dict[str, list[FakeRequest]] = {}
    for req in server.requests:
        by_role.setdefault(("operator" if req.tools else role_of_system(req.system)) or "other", []).append(req)
    validators, planners = by_role["validator"], by_role["planner"]
    assert len(validators) == len(steps) and len(planners) == 1
    for req, step in zip(validators, steps, strict=True):
        pre, post = shots[step.number]
        assert _labels(req) == [SCREENSHOT_LABELS["pre"], SCREENSHOT_LABELS["post"]]
        sent = _images(req)
        # the recorded screenshots, scaled as the operator's are, and nothing drawn on them
        assert sent == [scale_for_model(pre, max_side), scale_for_model(post, max_side)], step.number
        assert all(max(png_size(img) or (0, 0)) <= max_side for img in sent)
        assert pre != post or step.result_status == "no_change"
    first_pre = shots[steps[0].number][0]
    assert _labels(planners[0]) == [SCREENSHOT_LABELS["current"]]
    assert _images(planners[0]) == [scale_for_model(first_pre, max_side)]
    assert all(not _images(r) for r in by_role.get("checker", []))
    # the agents' cached prefix (system instruction, no tools) is one and the same on every call
    assert len({r.system for r in validators}) == 1
