"""``artemis profiles validate|list`` and the profile hint of ``artemis tasks validate``."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]

GOOD = """\
name: local
extends: flash
loop: pro
models:
  operator: {provider: openai, model: qwen2.5-vl-7b, base_url: "http://127.0.0.1:8000/v1"}
"""
BAD_LOOP = "name: bad\nloop: turbo\n"
BAD_MODEL = "name: bad2\nloop: flash\nmodels:\n  operator: {model: ''}\n"


def cli(*args: str | Path, cwd: Path = REPO) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "COLUMNS": "80"}
    env.pop("ARTEMIS_DEBUG", None)
    return subprocess.run([sys.executable, "-m", "artemis_cli", *map(str, args)], capture_output=True, text=True,
                          env=env, cwd=cwd, timeout=120, stdin=subprocess.DEVNULL)


def test_validate_a_good_profile(tmp_path: Path) -> None:
    (tmp_path / "local.yaml").write_text(GOOD, encoding="utf-8")
    res = cli("profiles", "validate", "local.yaml", cwd=tmp_path)
    assert res.returncode == 0, res.stderr
    assert res.stdout == "ok: local.yaml (loop pro, operator openai:qwen2.5-vl-7b)\n"
    shipped = cli("profiles", "validate", "profiles/flash.yaml", "profiles/pro.yaml")
    assert shipped.returncode == 0, shipped.stdout + shipped.stderr
    assert shipped.stdout.splitlines() == ["ok: profiles/flash.yaml (loop flash, operator gemini:gemini-2.5-flash)",
                                           "ok: profiles/pro.yaml (loop pro, operator gemini:gemini-2.5-pro)",
                                           "2 valid, 0 invalid"]


def test_validate_bad_profiles_prints_one_line_each_and_exits_2(tmp_path: Path) -> None:
    (tmp_path / "bad.yaml").write_text(BAD_LOOP, encoding="utf-8")
    (tmp_path / "bad2.yaml").write_text(BAD_MODEL, encoding="utf-8")
    (tmp_path / "good.yaml").write_text(GOOD, encoding="utf-8")
    res = cli("profiles", "validate", "bad.yaml", "bad2.yaml", "good.yaml", cwd=tmp_path)
    assert res.returncode == 2, res.stderr
    assert res.stdout.splitlines() == [
        "error: bad.yaml:2: loop: must be one of 'flash' or 'pro' (got 'turbo')",
        "error: bad2.yaml:4: models.operator.model: must not be empty",
        "ok: good.yaml (loop pro, operator openai:qwen2.5-vl-7b)",
        "1 valid, 2 invalid",
    ]
    as_json = cli("profiles", "validate", "bad.yaml", "good.yaml", "--json", cwd=tmp_path)
    assert as_json.returncode == 2
    data = json.loads(as_json.stdout)
    assert data[0]["ok"] is False and data[0]["errors"] == [
        {"path": "bad.yaml", "line": 2, "field": "loop", "message": "must be one of 'flash' or 'pro' (got 'turbo')"}]
    assert data[1]["ok"] is True and data[1]["loop"] == "pro" and data[1]["operator"] == "openai:qwen2.5-vl-7b"


def test_validate_a_task_or_a_missing_file(tmp_path: Path) -> None:
    res = cli("profiles", "validate", "tasks/demo.yaml", "nothere.yaml")
    assert res.returncode == 2
    lines = res.stdout.splitlines()
    errors = json.loads(cli("profiles", "validate", "tasks/demo.yaml", "--json").stdout)[0]["errors"]
    assert len(errors) > 1
    # every error, each with file:line and field, under one head line
    assert lines[0] == f"error: tasks/demo.yaml: {len(errors)} errors"
    assert lines[1:1 + len(errors)] == [f"  tasks/demo.yaml:{e['line']}: {e['field']}: {e['message']}" for e in errors]
    assert "  tasks/demo.yaml:2: loop: required key is missing" in lines
    rest = lines[1 + len(errors):]
    assert rest[0] == "  hint: this looks like a task: artemis tasks validate tasks/demo.yaml"
    assert rest[1] == "error: nothere.yaml: profile file 'nothere.yaml' not found"
    assert "Traceback" not in res.stderr


def test_a_bare_file_name_is_a_file_not_a_profile_name(tmp_path: Path) -> None:
    (tmp_path / "mine").write_text(GOOD, encoding="utf-8")
    res = cli("profiles", "validate", "mine", cwd=tmp_path)
    assert res.returncode == 0, res.stdout + res.stderr
    assert res.stdout.startswith("ok: mine (loop pro")


def test_list_shows_the_available_profiles(tmp_path: Path) -> None:
    (tmp_path / "profiles").mkdir()
    (tmp_path / "profiles" / "local.yaml").write_text(GOOD, encoding="utf-8")
    (tmp_path / "profiles" / "broken.yaml").write_text(BAD_LOOP, encoding="utf-8")
    res = cli("profiles", "list", "--json", cwd=tmp_path)
    assert res.returncode == 0, res.stderr
    rows = {r["path"]: r for r in json.loads(res.stdout)}
    assert {"flash", "pro", "local", "broken"} <= set(rows)
    assert rows["local"]["ok"] is True and rows["local"]["file"] == "profiles/local.yaml"
    assert rows["broken"]["ok"] is False
    table = cli("profiles", "list", cwd=tmp_path)
    assert table.returncode == 0, table.stderr
    # stdout is a pipe: plain rows on stdout, the hint on stderr
    assert "broken\tinvalid\t" in table.stdout and "local\tpro\topenai:qwen2.5-vl-7b\t" in table.stdout
    assert "artemis profiles validate" in table.stderr


def test_list_leaves_out_yaml_files_that_are_not_profiles(tmp_path: Path) -> None:
    """In a directory of tasks (or any YAML), only profiles are listed: every file of ./profiles,
    and a file beside them only when it is written as a profile."""
    (tmp_path / "demo.yaml").write_text((REPO / "tasks" / "demo.yaml").read_text(), encoding="utf-8")
    (tmp_path / "compose.yaml").write_text("services: {web: {image: nginx}}\n", encoding="utf-8")
    (tmp_path / "mine.yaml").write_text(GOOD, encoding="utf-8")
    (tmp_path / "profiles").mkdir()
    (tmp_path / "profiles" / "broken.yaml").write_text(BAD_LOOP, encoding="utf-8")
    res = cli("profiles", "list", "--json", cwd=tmp_path)
    assert res.returncode == 0, res.stderr
    names = [r["path"] for r in json.loads(res.stdout)]
    assert names == ["broken", "flash", "mine", "pro"]


def test_tasks_validate_says_when_a_file_looks_like_a_profile() -> None:
    res = cli("tasks", "validate", "profiles/flash.yaml")
    assert res.returncode == 2
    assert res.stdout.splitlines()[-1] == "  hint: this looks like a profile: artemis profiles validate profiles/flash.yaml"
    data = json.loads(cli("tasks", "validate", "profiles/flash.yaml", "--json").stdout)
    assert data[0]["hint"] == "this looks like a profile: artemis profiles validate profiles/flash.yaml"
    task = cli("tasks", "validate", "tasks/demo.yaml", "--json")
    assert task.returncode == 0 and "hint" not in json.loads(task.stdout)[0]
