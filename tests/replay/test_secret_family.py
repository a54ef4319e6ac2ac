"""One secret family for resume's fast-forward and replay (issue 23 item 4): ARTEMIS_SECRET_<FIELD>,
ARTEMIS_SECRET, and the older ARTEMIS_REPLAY_SECRET[_<FIELD>] names, looked up in one place."""

from __future__ import annotations

import pytest

from artemis_cli.engine.records import StepRecord
from artemis_cli.errors import UsageError
from artemis_cli.operators.fastforward import planned_from_step
from artemis_cli.operators.secrets import env_names
from artemis_cli.replay.secrets import env_or_prompt

NAMES = ("ARTEMIS_SECRET_PASSWORD", "ARTEMIS_REPLAY_SECRET_PASSWORD", "ARTEMIS_SECRET", "ARTEMIS_REPLAY_SECRET")


def password_step() -> StepRecord:
    return StepRecord(session_id="s", number=4, action_type="type_text", action_args={"text": "***", "redacted": True},
                      target={"resource_id": "com.artemis.shop:id/password", "password": True})


@pytest.fixture(autouse=True)
def _no_secrets(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in NAMES:
        monkeypatch.delenv(name, raising=False)


def test_the_field_name_comes_first_then_the_generic_ones_new_before_old() -> None:
    assert env_names("com.artemis.shop:id/password") == list(NAMES)


@pytest.mark.parametrize("name", NAMES)
def test_resume_and_replay_read_every_name_of_the_family(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(name, f"from {name}")
    assert planned_from_step(password_step(), "shop-buy-one").secret == f"from {name}"
    assert env_or_prompt(task_id="shop-buy-one")(password_step()) == f"from {name}"


def test_a_field_name_beats_a_generic_one(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ARTEMIS_SECRET", "generic")
    monkeypatch.setenv("ARTEMIS_REPLAY_SECRET_PASSWORD", "the field's")
    assert planned_from_step(password_step(), "t").secret == "the field's"


def test_a_missing_secret_names_the_step_the_field_and_the_task(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("sys.stdin", None)  # no terminal: no prompt
    expected = ("step 4 typed into the password field (com.artemis.shop:id/password) of task shop-buy-one; "
                "its text is not stored: set ARTEMIS_SECRET_PASSWORD (or ARTEMIS_SECRET)")
    for call in (lambda: planned_from_step(password_step(), "shop-buy-one"),
                 lambda: env_or_prompt(task_id="shop-buy-one")(password_step())):
        with pytest.raises(UsageError) as info:
            call()
        assert str(info.value) == expected
        assert "ARTEMIS_REPLAY_SECRET" in (info.value.hint or "")
