"""A task's ``secrets:`` (name → one-line description) and reference steps that type one by name:
what loads, and file:line + field path for every broken case."""

from __future__ import annotations

from pathlib import Path

import pytest

from artemis_cli.config.task import load_task
from artemis_cli.errors import ConfigError

GOOD = """\
goal: Log in as user demo
secrets:
  shop_password: the demo account's password
  pin_2: "the card's PIN"
reference:
  - type: {text: demo, into: {id: username}}
  - type: {secret: shop_password, into: {id: password}, submit: true}
  - finish:
"""


def _load(tmp_path: Path, text: str) -> ConfigError:
    path = tmp_path / "t.yaml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ConfigError) as info:
        load_task(path)
    return info.value


def test_secrets_and_a_reference_typing_one_by_name_load(tmp_path: Path) -> None:
    path = tmp_path / "t.yaml"
    path.write_text(GOOD, encoding="utf-8")
    task = load_task(path)
    assert task.secrets == {"shop_password": "the demo account's password", "pin_2": "the card's PIN"}
    typed = task.reference[1].type
    assert typed is not None and typed.secret == "shop_password" and typed.text is None and typed.submit
    assert task.reference[0].type is not None and task.reference[0].type.secret is None


def test_a_task_without_secrets_has_none(tmp_path: Path) -> None:
    path = tmp_path / "t.yaml"
    path.write_text("goal: g\n", encoding="utf-8")
    assert load_task(path).secrets == {}


@pytest.mark.parametrize(("text", "line", "field", "says"), [
    ("goal: g\nsecrets:\n  shop-password: x\n", 3, "secrets.shop-password", "must be an identifier"),
    ("goal: g\nsecrets:\n  2fa: x\n", 3, "secrets.2fa", "must be an identifier"),
    ("goal: g\nsecrets:\n  pw: \"two\\nlines\"\n", 3, "secrets.pw", "must be one line"),
    ("goal: g\nsecrets:\n  pw: \"\"\n", 3, "secrets.pw", "needs a one-line description"),
    ("goal: g\nsecrets:\n  pw: " + "x" * 201 + "\n", 3, "secrets.pw", "at most 200 characters"),
    ("goal: g\nsecrets: [pw]\n", 2, "secrets", "must be a mapping"),
    ("goal: g\nsecrets:\n  pw: x\n  PW: y\n", 4, "secrets.PW", "one variable (ARTEMIS_SECRET_PW)"),
    ("goal: g\nsecrets: {pw: x}\nreference:\n  - launch: com.a.b\n  - type: {secret: nope}\n", 5,
     "reference[1].type.secret", "no secret named 'nope' (its secrets: pw)"),
    ("goal: g\nreference:\n  - type: {secret: pw}\n", 3, "reference[0].type.secret", "it declares none"),
    ("goal: g\nsecrets: {pw: x}\nreference:\n  - type: {text: a, secret: pw}\n", 4, "reference[0].type.secret",
     "'text' or 'secret', not both"),
    ("goal: g\nreference:\n  - type: {into: {id: password}}\n", 3, "reference[0].type", "needs 'text'"),
])
def test_a_broken_secret_names_its_file_line_and_field(tmp_path: Path, text: str, line: int, field: str,
                                                        says: str) -> None:
    error = _load(tmp_path, text)
    assert (error.line, error.field) == (line, field), str(error)
    assert says in error.detail, str(error)
