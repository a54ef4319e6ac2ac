"""What the Python API's tests share: fake-server policies that play one script per AI step."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from artemis_cli.models.offline.scripted import script_policy

#: Two AI steps on the default world's Shop after ``phone.launch("Shop")``: 3 + 5 steps.
LOGIN_GOAL = "log in to the Shop with the demo account (username demo)"
BUY_GOAL = "add a Desk Lamp to the cart and check out"
LOGIN = [{"type": {"text": "demo", "into": {"id": "username"}}},
         {"type": {"secret": "shop_password", "into": {"id": "password"}, "submit": True}},
         {"finish": {"success": True, "answer": "logged in"}}]
BUY = [{"swipe": {"from": [540, 2100], "to": [540, 700]}}, {"tap": {"desc": "Add Desk Lamp to cart"}},
       {"tap": {"id": "cart_button"}}, {"tap": {"text": "Checkout"}},
       {"finish": {"success": True, "answer": "ordered one Desk Lamp"}}]
SCRIPTS = {LOGIN_GOAL: LOGIN, BUY_GOAL: BUY}
SHOP_SECRETS = {"shop_password": "artemis123"}


def goal_policy(scripts: dict[str, list[dict[str, Any]]]) -> Callable[[Any], Any]:
    """A FakeGeminiServer policy that plays ``scripts[goal]`` for the AI step whose ``# TASK``
    names that goal (each act's transcript starts afresh, so one script per goal)."""
    policies = {goal: script_policy(script) for goal, script in scripts.items()}

    def policy(request: Any) -> Any:
        text = json.dumps(request.contents, ensure_ascii=False)
        for goal, play in policies.items():
            if f"Goal: {goal}" in text:
                return play(request)
        return next(iter(policies.values()))(request)  # a lens call (no task text): any stub will do

    return policy


def run_shop(phone: Any) -> None:
    """The 10-step test: launch the Shop, log in (AI), buy a lamp (AI), see the thanks."""
    phone.launch("Shop")
    phone.act(LOGIN_GOAL)
    phone.act(BUY_GOAL)
    phone.wait_for("Thank you for your order!", timeout=0)
