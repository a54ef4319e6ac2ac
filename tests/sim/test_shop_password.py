"""The Shop's account password is configurable: ``SimPhone(shop_password=…)``, or the task's
``sim: {shop_password_env: NAME}`` naming the variable that holds it (the task and the session
store the name, never the password: SPEC §5 invariant 5)."""

from __future__ import annotations

from pathlib import Path

import pytest
from sim_helpers import node, tap

from artemis_cli.config.task import load_task
from artemis_cli.errors import ConfigError, UsageError
from artemis_cli.sim.phone import SimPhone

SESSION = "content query --uri content://com.artemis.shop/session"


def _log_in(phone: SimPhone, password: str) -> str:
    phone.launch("com.artemis.shop")
    tap(phone, resource_id="com.artemis.shop:id/username")
    phone.type_text("demo")
    tap(phone, resource_id="com.artemis.shop:id/password")
    phone.type_text(password)
    phone.key("enter")
    return phone.shell(SESSION)


@pytest.mark.parametrize("password", ["A", "7", "true"])
def test_only_the_configured_password_logs_in(password: str) -> None:
    phone = SimPhone(popups=False, shop_password=password)
    assert "logged_in" not in _log_in(phone, "artemis123")  # the demo default no longer works
    assert node(phone, resource_id="com.artemis.shop:id/error").get("text") == "Wrong username or password"
    tap(phone, resource_id="com.artemis.shop:id/password")
    phone.type_text(password)
    phone.key("enter")
    assert phone.shell(SESSION) == "Row: 0 username=demo, logged_in=1\n"


def test_the_default_is_the_demo_password() -> None:
    assert _log_in(SimPhone(popups=False), "artemis123") == "Row: 0 username=demo, logged_in=1\n"


def test_password_from_the_named_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("SHOP_PW", raising=False)
    with pytest.raises(UsageError, match=r"\$SHOP_PW, which is not set"):
        SimPhone(shop_password_env="SHOP_PW")
    monkeypatch.setenv("SHOP_PW", "")
    with pytest.raises(UsageError):
        SimPhone(shop_password_env="SHOP_PW")
    with pytest.raises(UsageError, match="not both"):
        SimPhone(shop_password="x", shop_password_env="SHOP_PW")
    monkeypatch.setenv("SHOP_PW", "7")
    assert "logged_in=1" in _log_in(SimPhone(popups=False, shop_password_env="SHOP_PW"), "7")


def test_task_option_is_validated_and_holds_only_a_name(tmp_path: Path) -> None:
    good = tmp_path / "good.yaml"
    good.write_text("goal: g\nsim: {shop_password_env: SHOP_PW}\n")
    task = load_task(good)
    assert task.sim is not None and task.sim.shop_password_env == "SHOP_PW"
    for bad, fragment in (("'my password'", "must be an environment variable name"),
                          ("7", "must be a string"), ("''", "must be an environment variable name")):
        path = tmp_path / "bad.yaml"
        path.write_text(f"goal: g\nsim:\n  shop_password_env: {bad}\n")
        with pytest.raises(ConfigError) as info:
            load_task(path)
        assert (info.value.line, info.value.field) == (3, "sim.shop_password_env"), str(info.value)
        assert fragment in str(info.value), str(info.value)
