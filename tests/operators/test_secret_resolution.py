"""Where a task's secret values come from (``operators.secrets``): one rule for run, resume, replay
and heal — ``$ARTEMIS_SECRET_<NAME>``, then the ``ARTEMIS_SECRET*`` family, then a hidden prompt
only on a terminal; nothing: a usage error naming the variable to set."""

from __future__ import annotations

import io
import os

import pytest

from artemis_cli.engine.records import StepRecord
from artemis_cli.errors import UsageError
from artemis_cli.operators.fastforward import planned_from_step
from artemis_cli.operators.secrets import (
    env_names,
    missing_secret,
    resolve_secrets,
    secret_env_name,
    secret_from_env,
)
from artemis_cli.replay.secrets import env_or_prompt

SECRETS = {"shop_password": "the demo account's password", "card_pin": "the card's PIN"}


@pytest.fixture(autouse=True)
def _no_secrets(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in list(os.environ):
        if name.startswith(("ARTEMIS_SECRET", "ARTEMIS_REPLAY_SECRET")):
            monkeypatch.delenv(name)
    monkeypatch.setattr("sys.stdin", io.StringIO(""))  # not a terminal: never prompted


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def named_step(name: str = "shop_password") -> StepRecord:
    return StepRecord(session_id="s", number=3, action_type="type_text",
                      action_args={"text": f"‹secret {name}›", "secret": name, "redacted": True, "index": 4},
                      target={"resource_id": "com.artemis.shop:id/password", "password": True})


def test_the_variable_of_a_secret_is_its_name_upper_cased() -> None:
    assert secret_env_name("shop_password") == "ARTEMIS_SECRET_SHOP_PASSWORD"
    assert secret_env_name("pin2") == "ARTEMIS_SECRET_PIN2"


def test_its_own_variable_comes_first_then_the_generic_one(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ARTEMIS_SECRET", "generic")
    monkeypatch.setenv("ARTEMIS_SECRET_SHOP_PASSWORD", "own")
    assert resolve_secrets(SECRETS) == {"shop_password": "own", "card_pin": "generic"}


def test_an_empty_variable_counts_as_unset(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ARTEMIS_SECRET_SHOP_PASSWORD", "")
    monkeypatch.setenv("ARTEMIS_REPLAY_SECRET", "older")
    assert resolve_secrets({"shop_password": "pw"}) == {"shop_password": "older"}


def test_a_missing_secret_is_a_usage_error_naming_each_variable() -> None:
    with pytest.raises(UsageError) as info:
        resolve_secrets(SECRETS, task_id="shop-buy-one")
    text = str(info.value)
    assert text.startswith("task shop-buy-one needs secrets nothing supplies")
    assert "shop_password (the demo account's password): set ARTEMIS_SECRET_SHOP_PASSWORD" in text
    assert "card_pin (the card's PIN): set ARTEMIS_SECRET_CARD_PIN" in text
    assert info.value.exit_code == 2
    assert "ARTEMIS_SECRET is read" in (info.value.hint or "")


def test_only_a_terminal_is_prompted_and_only_for_what_is_missing(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ARTEMIS_SECRET_CARD_PIN", "1234")
    asked: list[str] = []

    def getpass(question: str) -> str:
        asked.append(question)
        return "typed at the prompt"

    monkeypatch.setattr("getpass.getpass", getpass)
    with pytest.raises(UsageError):
        resolve_secrets(SECRETS)  # stdin is a pipe here
    assert asked == []
    monkeypatch.setattr("sys.stdin", _Terminal(""))
    assert resolve_secrets(SECRETS) == {"shop_password": "typed at the prompt", "card_pin": "1234"}
    assert asked == ["Value of secret shop_password (the demo account's password; not echoed): "]


def test_values_already_known_are_not_asked_again(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ARTEMIS_SECRET_SHOP_PASSWORD", "from env")
    assert resolve_secrets({"shop_password": "pw"}, have={"shop_password": "known"}) == {"shop_password": "known"}


def test_a_recorded_step_reads_its_secrets_variable_before_its_fields(monkeypatch: pytest.MonkeyPatch) -> None:
    assert env_names("com.artemis.shop:id/password", "shop_password") == [
        "ARTEMIS_SECRET_SHOP_PASSWORD", "ARTEMIS_SECRET_PASSWORD", "ARTEMIS_REPLAY_SECRET_PASSWORD",
        "ARTEMIS_SECRET", "ARTEMIS_REPLAY_SECRET"]
    monkeypatch.setenv("ARTEMIS_SECRET_PASSWORD", "the field's")
    assert secret_from_env(named_step()) == "the field's"
    monkeypatch.setenv("ARTEMIS_SECRET_SHOP_PASSWORD", "the secret's")
    for value in (secret_from_env(named_step()), env_or_prompt(task_id="t")(named_step()),
                  planned_from_step(named_step(), "t").secret):
        assert value == "the secret's"


def test_resume_types_the_value_it_resolved_by_name(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ARTEMIS_SECRET", "generic")
    planned = planned_from_step(named_step(), "t", {"shop_password": "resolved"})
    assert planned.secret == "resolved"
    assert planned.args["text"] == "‹secret shop_password›"  # what is recorded stays the name


def test_a_named_step_with_no_value_names_the_secrets_variable() -> None:
    error = missing_secret(named_step(), "shop-buy-one")
    assert str(error) == ("step 3 typed secret shop_password into the password field (com.artemis.shop:id/password) "
                          "of task shop-buy-one; its text is not stored: set ARTEMIS_SECRET_SHOP_PASSWORD "
                          "(or ARTEMIS_SECRET)")
    with pytest.raises(UsageError, match="ARTEMIS_SECRET_SHOP_PASSWORD"):
        env_or_prompt(task_id="shop-buy-one")(named_step())
