"""The Pro validator never gets the typed password (SPEC §5 invariant 5): the operator's note it
judges from is the stored, redacted one, so a validator that quotes the note in its reason (real
models do) cannot carry the password into ``steps.verdict``.

Through the real SDK against the fake Gemini server: the operator's thoughts name the password it
is about to type, and the validator answers with a reason that quotes the whole note."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from artemis_cli.config.profile import load_profile
from artemis_cli.config.task import Task
from artemis_cli.engine.db import DataEngine
from artemis_cli.models.fakes.gemini import FakeGeminiServer, FakeReply, FakeRequest
from artemis_cli.models.gemini import GeminiModel
from artemis_cli.models.offline.scripted_roles import pro_script_policy, role_of_system
from artemis_cli.models.registry import reference_script
from artemis_cli.runner import run_task
from artemis_cli.sim.phone import SimPhone

PASSWORD = "hunter2secret"


def _task() -> Task:
    return Task.model_validate({
        "id": "pro-shop-login", "goal": "Log in to the Shop with the demo account", "max_steps": 6,
        "sim": {"world": "default", "seed": 57, "popups": False},
        "reference": [
            {"launch": "com.artemis.shop"},
            {"type": {"text": "demo", "into": {"id": "username"}}},
            {"type": {"text": PASSWORD, "into": {"id": "password"}, "submit": True}},
            {"finish": {"success": True, "answer": "Logged in"}},
        ],
    })


def test_a_validator_quoting_the_operator_note_stores_no_password(tmp_path: Path) -> None:
    task = _task()
    base = pro_script_policy(reference_script(task))
    notes: list[str] = []

    def policy(request: FakeRequest) -> FakeReply:
        if request.tools:  # the operator says what it is about to type, as models do
            reply = base(request)
            typing = any(p.get("functionCall", {}).get("args", {}).get("text") == PASSWORD for p in reply.parts)
            if typing:
                return FakeReply(parts=[{"text": f"Now I type {PASSWORD} into the password field."}, *reply.parts])
            return reply
        if role_of_system(request.system) == "validator":
            text = "\n".join(p.get("text", "") for c in request.contents for p in c.get("parts", [])
                             if isinstance(p, dict))
            notes.append(text)
            return FakeReply.text(json.dumps({"verdict": "progress", "milestone_complete": False,
                                              "reason": "the agent said: " + text[-600:]}))
        return base(request)

    engine = DataEngine.open(tmp_path / "data")
    with FakeGeminiServer(policy) as server:
        model = GeminiModel(["gemini-2.5-pro"], api_key="k", base_url=server.base_url)
        result = run_task(task, load_profile("pro"), SimPhone(seed=57, popups=False, shop_password=PASSWORD),
                          model, engine, real_time=False)
    assert result.steps >= 3, result.message
    assert notes and any("OPERATOR'S NOTE" in n for n in notes)  # the validator was asked, with a note
    assert all(PASSWORD not in n for n in notes)
    verdicts: list[Any] = [s.verdict for s in engine.get_steps(result.session_id) if s.verdict]
    assert verdicts and all(PASSWORD not in json.dumps(v) for v in verdicts)
    dump = "\n".join(engine.db.conn.iterdump())
    assert PASSWORD not in dump


def test_the_planner_is_told_the_secrets_names_never_their_values(tmp_path: Path) -> None:
    """A plan can say "log in" knowing the agent types the password by name: the planner's request
    names each secret with its description, as the operator's system text does; no value."""
    task = Task.model_validate({
        "id": "pro-shop-secret", "goal": "Log in to the Shop as demo", "max_steps": 5,
        "secrets": {"shop_password": "the demo account's password"},
        "sim": {"world": "default", "seed": 57, "popups": False},
        "reference": [
            {"launch": "com.artemis.shop"},
            {"type": {"text": "demo", "into": {"id": "username"}}},
            {"type": {"secret": "shop_password", "into": {"id": "password"}, "submit": True}},
            {"finish": {"success": True, "answer": "Logged in"}},
        ],
    })
    base = pro_script_policy(reference_script(task))
    planner: list[str] = []

    def policy(request: FakeRequest) -> FakeReply:
        if not request.tools and role_of_system(request.system) == "planner":
            planner.append("\n".join(p.get("text", "") for c in request.contents for p in c.get("parts", [])
                                     if isinstance(p, dict)))
        return base(request)

    engine = DataEngine.open(tmp_path / "data")
    with FakeGeminiServer(policy) as server:
        model = GeminiModel(["gemini-2.5-pro"], api_key="k", base_url=server.base_url)
        result = run_task(task, load_profile("pro"), SimPhone(seed=57, popups=False, shop_password=PASSWORD),
                          model, engine, real_time=False, secrets={"shop_password": PASSWORD})
    assert result.steps >= 3, result.message
    assert planner, "the planner was never asked"
    assert "# SECRETS" in planner[0] and "- shop_password: the demo account's password" in planner[0], planner[0]
    assert all(PASSWORD not in text for text in planner)
