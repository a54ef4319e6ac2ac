"""The budget floor counts the system text a session is sent, the task's secrets block included
(a task with secrets has a longer system text; a floor that left it out would admit a budget the
first turn cannot fit in)."""

from __future__ import annotations

from pathlib import Path

from artemis_cli.config.profile import load_profile
from artemis_cli.config.task import load_task
from artemis_cli.memory.ledger import estimate_tokens
from artemis_cli.models.base import ModelRequest, ToolDecl
from artemis_cli.operators.budget_floor import floor_parts
from artemis_cli.operators.secrets import task_secrets
from artemis_cli.runner import session_prompt

TASKS = Path(__file__).resolve().parents[2] / "tasks"


def test_the_floor_counts_the_secrets_block_the_system_text_carries() -> None:
    profile = load_profile("flash")
    task = load_task(TASKS / "shop-office-order.yaml")
    assert task_secrets(task), "the shipped Shop task declares its password as a secret"
    sent = session_prompt(profile, task)
    request = ModelRequest(system=sent["system"], messages=[],
                           tools=[ToolDecl(t["name"], t["description"], t["parameters"]) for t in sent["tools"]])
    with_secrets = floor_parts(profile, (1080, 2400), secrets=task_secrets(task))["system_and_tools"]
    without = floor_parts(profile, (1080, 2400))["system_and_tools"]
    assert with_secrets == estimate_tokens(request)
    assert with_secrets > without


def test_a_run_records_the_floor_of_the_system_text_it_sent(tmp_path: Path) -> None:
    from artemis_cli.engine.db import DataEngine
    from artemis_cli.models.offline.scripted import ScriptedModel
    from artemis_cli.models.registry import reference_script
    from artemis_cli.runner import run_task
    from artemis_cli.sim.phone import SimPhone

    profile = load_profile("flash")
    task = load_task(TASKS / "shop-office-order.yaml").model_copy(update={"max_steps": 1})
    engine = DataEngine.open(tmp_path / "data")
    result = run_task(task, profile, SimPhone(seed=3, popups=False, shop_password="pw-123456"),
                      ScriptedModel(reference_script(task)), engine, real_time=False,
                      secrets={"shop_password": "pw-123456"})
    rec = engine.get_session(result.session_id)
    assert rec is not None
    parts = rec.config["context_budget"]["floor_parts"]
    assert parts["system_and_tools"] == floor_parts(profile, (1080, 2400), secrets=task_secrets(task))["system_and_tools"]
