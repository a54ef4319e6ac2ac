"""Option values without pydantic (cli/plain_values.py, issue 38 start-up): a value taken on the
plain path is what Typer's own adapter makes of it, and every other value still goes to Typer's
adapter (its conversion, its error)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from artemis_cli.cli.app import COMMANDS, load_command
from artemis_cli.cli.plain_values import _NOT_PLAIN, plain_value

typer_core = pytest.importorskip("typer.core")
if not hasattr(getattr(typer_core, "_TyperParameter", None), "get_runtime_param"):
    pytest.skip("this Typer converts values without pydantic", allow_module_level=True)

from typer._coercion import build_runtime_param  # noqa: E402  # Typer 0.26+ only

SAMPLES: tuple[Any, ...] = (None, 0, 1, 20, 10**6, True, "0", "1", "7", "007", "20", "-1", "+3", " 5", "1_0",
                            "1.5", "abc", "", "x y", "--json", "ü", b"raw")


def _params() -> list[Any]:
    found: list[Any] = []

    def walk(command: Any) -> None:
        found.extend(p for p in command.params if hasattr(p, "type_descriptor"))
        for sub in (getattr(command, "commands", None) or {}).values():
            walk(sub)

    for name in COMMANDS:
        walk(load_command(name))
    return found


def _typers(value: Any, param: Any) -> Any:
    try:
        return ("ok", build_runtime_param(param.type_descriptor).coerce(value, param=param, ctx=None))
    except Exception as exc:  # Typer's refusal, whatever its class
        return ("error", type(exc).__name__)


def test_every_plain_value_of_every_option_is_what_typer_makes_of_it() -> None:
    params = _params()
    taken = 0
    assert {p.type_descriptor.annotation for p in params} >= {int, str, Path, bool}
    for param in params:
        for value in SAMPLES:
            plain = plain_value(value, param)
            if plain is _NOT_PLAIN:
                continue
            taken += 1
            assert _typers(value, param) == ("ok", plain), (param.name, value)
            assert type(plain) is type(_typers(value, param)[1]), (param.name, value)
    assert taken > 100  # the plain path is taken, not passed over


def _artemis(*argv: str, home: Path) -> subprocess.CompletedProcess[str]:
    code = ("import sys, runpy; sys.argv = ['artemis', *sys.argv[1:]]\n"
            "try:\n    runpy.run_module('artemis_cli', run_name='__main__', alter_sys=True)\n"
            "finally:\n    print('PYDANTIC', 'pydantic' in sys.modules, file=sys.stderr)\n")
    return subprocess.run([sys.executable, "-c", code, *argv], capture_output=True, text=True, timeout=60,
                          env={"ARTEMIS_HOME": str(home), "COLUMNS": "100", "PATH": "/usr/bin:/bin"})


@pytest.mark.parametrize(("value", "error"), [("0", "Input should be greater than or equal to 1"),
                                              ("abc", "Input should be a valid integer")])
def test_a_value_that_is_not_plain_gets_typers_own_error(tmp_path: Path, value: str, error: str) -> None:
    proc = _artemis("sessions", "list", "--limit", value, home=tmp_path / "home")
    assert proc.returncode == 2
    assert f"Invalid value for '--limit' / '-n': {error}" in proc.stderr
    assert "PYDANTIC True" in proc.stderr  # Typer's adapter was built for it


def test_plain_values_need_no_pydantic(tmp_path: Path) -> None:
    proc = _artemis("sessions", "list", "--limit", "3", "--task", "demo", "--since", "7d", home=tmp_path / "home")
    assert proc.returncode == 0, proc.stderr
    assert "PYDANTIC False" in proc.stderr
