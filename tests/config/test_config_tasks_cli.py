"""`artemis tasks validate` / `artemis tasks list` through the real Typer app and a real subprocess."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from config_cases import BAD, BROKEN_CASES, FULL
from typer.testing import CliRunner

from artemis_cli.cli.app import app

runner = CliRunner()


@pytest.mark.parametrize("name", sorted(BROKEN_CASES))
def test_validate_broken_file_exits_2_with_location(name: str) -> None:
    line, field, fragment = BROKEN_CASES[name]
    path = BAD / name
    result = runner.invoke(app, ["tasks", "validate", str(path)])
    assert result.exit_code == 2, result.output
    out = result.output.splitlines()
    assert out[0].startswith(f"✗ {path}")
    prefix = f"  {path}:{line}: {field}: " if field else f"  {path}:{line}: "
    assert out[1].startswith(prefix) and fragment in out[1], result.output


def test_validate_valid_file_and_directory(tmp_path: Path) -> None:
    result = runner.invoke(app, ["tasks", "validate", str(FULL)])
    assert result.exit_code == 0, result.output
    assert result.output == f"✓ {FULL} (settings-wifi-on, 15 reference steps)\n"

    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "one.yaml").write_text("goal: a\nreference: [{key: back}]\n")
    (tmp_path / "two.yaml").write_text("goal: b\n")
    (tmp_path / "notes.txt").write_text("ignored")
    result = runner.invoke(app, ["tasks", "validate", str(tmp_path)])
    assert result.exit_code == 0, result.output
    assert result.output.splitlines() == [
        f"✓ {tmp_path / 'sub' / 'one.yaml'} (one, 1 reference step)",
        f"✓ {tmp_path / 'two.yaml'} (two, 0 reference steps)",
        "2 valid, 0 invalid",
    ]


def test_validate_directory_of_bad_tasks_lists_every_error() -> None:
    result = runner.invoke(app, ["tasks", "validate", str(BAD)])
    assert result.exit_code == 2
    several = BAD / "several_errors.yaml"
    assert f"  {several}:7: inject[1].at_step: required key is missing" in result.output.splitlines()
    assert f"✗ {several} (7 errors)" in result.output
    assert result.output.splitlines()[-1] == f"0 valid, {len(list(BAD.glob('*.yaml')))} invalid"


def test_validate_mixed_exit_code_and_json(tmp_path: Path) -> None:
    missing = tmp_path / "missing.yaml"
    result = runner.invoke(app, ["tasks", "validate", "--json", str(FULL), str(BAD / "negative_max_steps.yaml"),
                                 str(missing)])
    assert result.exit_code == 2
    data = json.loads(result.output)
    assert data[0] == {"path": str(FULL), "ok": True, "errors": [], "id": "settings-wifi-on", "reference_steps": 15,
                       "warnings": []}
    assert data[1] == {"path": str(BAD / "negative_max_steps.yaml"), "ok": False,
                       "errors": [{"line": 4, "field": "max_steps", "message": "must be ≥ 1 (got -3)"}]}
    assert data[2] == {"path": str(missing), "ok": False,
                       "errors": [{"line": None, "field": None, "message": "file not found"}]}


def test_validate_empty_directory_is_an_input_error(tmp_path: Path) -> None:
    result = runner.invoke(app, ["tasks", "validate", str(tmp_path)])
    assert result.exit_code == 2
    assert "no task files" in result.output


def test_subprocess_validate_uses_the_real_entry_point() -> None:
    path = BAD / "unknown_key.yaml"
    proc = subprocess.run([sys.executable, "-m", "artemis_cli", "tasks", "validate", str(path)],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2, proc.stderr
    assert f"  {path}:3: mx_steps: unknown key 'mx_steps' (did you mean 'max_steps'?)" in proc.stdout


def test_list(tmp_path: Path) -> None:
    (tmp_path / "a.yaml").write_text("goal: a\napp: com.example.notes\ntags: [x, y]\nreference: [{key: back}]\n")
    result = runner.invoke(app, ["tasks", "list", "--json", str(tmp_path)])
    assert result.exit_code == 0, result.output
    assert json.loads(result.output) == [{"path": str(tmp_path / "a.yaml"), "id": "a", "app": "com.example.notes",
                                          "max_steps": 30, "reference_steps": 1, "tags": ["x", "y"]}]
    table = runner.invoke(app, ["tasks", "list", str(tmp_path)])
    assert table.exit_code == 0 and "com.example.notes" in table.output and "x, y" in table.output

    (tmp_path / "b.yaml").write_text("goal: b\nmax_steps: -1\n")
    result = runner.invoke(app, ["tasks", "list", str(tmp_path)])
    assert result.exit_code == 2
    assert "b.yaml:2: max_steps: must be ≥ 1 (got -1)" in result.output


UNFOCUSED = """goal: Write a note
reference:
  - launch: com.artemis.notes
  - tap: {id: new_note}
  - type: {text: Shopping}
  - key: back
  - wait: 1
  - type: {text: never focused}
  - type: {text: named, into: {id: title}}
  - type: {text: still focused}
"""


def test_validate_warns_on_type_that_no_step_focuses(tmp_path: Path) -> None:
    """A type with no into after a step that leaves nothing focused validates (exit 0) with a
    warning on stderr naming file, line and field; a type after a tap or another type does not."""
    path = tmp_path / "unfocused.yaml"
    path.write_text(UNFOCUSED)
    result = runner.invoke(app, ["tasks", "validate", str(path)])
    assert result.exit_code == 0, result.output
    assert result.stdout == f"✓ {path} (unfocused, 8 reference steps)\n"
    assert result.stderr.splitlines() == [f"warning: {path}:8: reference[5].type: no text field will be focused here "
                                          "(no earlier reference step taps one): add 'into: {id: …}' to name the "
                                          'field, or the run stops with "no text field is focused"']
    listed = json.loads(runner.invoke(app, ["tasks", "validate", "--json", str(path)]).stdout)
    assert [(w["line"], w["field"]) for w in listed[0]["warnings"]] == [(8, "reference[5].type")]


def test_shipped_tasks_validate_without_warnings() -> None:
    tasks = Path(__file__).resolve().parents[2] / "tasks"
    result = runner.invoke(app, ["tasks", "validate", str(tasks)])
    assert result.exit_code == 0 and result.stderr == "", result.stderr
