"""SPEC §5 invariant 5: text typed into a password field never reaches the DataEngine."""

from __future__ import annotations

from pathlib import Path

import yaml

from artemis_cli.config.profile import load_profile
from artemis_cli.config.task import load_task
from artemis_cli.engine.db import DataEngine
from artemis_cli.models.offline.scripted import ScriptedModel
from artemis_cli.models.registry import reference_script
from artemis_cli.runner import run_task
from artemis_cli.sim.phone import SimPhone

PASSWORD = "artemis123"
LOGIN = [
    {"launch": "com.artemis.shop"},
    {"type": {"text": "demo", "into": {"id": "username"}}},
    {"type": {"text": PASSWORD, "into": {"id": "password"}, "submit": True}},
    {"finish": {"success": True}},
]


def test_password_is_typed_on_the_device_but_stored_redacted(tmp_path: Path) -> None:
    data = tmp_path / "data"
    engine = DataEngine.open(data)
    phone = SimPhone(popups=False)
    task_file = tmp_path / "login.yaml"
    task_file.write_text(yaml.safe_dump({"id": "login", "goal": "Log in to the Shop", "max_steps": 6,
                                         "reference": LOGIN}))
    task = load_task(task_file)  # the reference (with the password) is part of the task
    model = ScriptedModel(reference_script(task))
    result = run_task(task, load_profile("flash"), phone, model, engine, real_time=False)
    assert result.success
    # the device got the real password: the shop is logged in
    assert "logged_in=1" in phone.shell("content query --uri content://com.artemis.shop/session")
    steps = engine.get_steps(result.session_id)
    typed = [s for s in steps if s.action_type == "type_text"]
    assert typed[1].target["password"] is True
    assert PASSWORD not in str(typed[1].action_args)
    engine.close()
    for path in data.rglob("*"):
        if path.is_file():
            assert PASSWORD.encode() not in path.read_bytes(), f"password leaked into {path}"
