"""JSONL and Maestro export, and `sessions list` filters / `sessions rm` on a real data dir."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml
from typer.testing import CliRunner

from artemis_cli.cli.app import app
from artemis_cli.engine.db import DataEngine
from artemis_cli.engine.health import integrity_problems, missing_blobs
from artemis_cli.export import JSONL_FIELDS, export_jsonl, maestro_flow
from artemis_cli.replay import replay_session

runner = CliRunner()


def _cli(data: Path, *args: str) -> Any:
    return runner.invoke(app, [*args, "--data-dir", str(data)])


def test_jsonl_has_one_documented_line_per_step(tmp_path: Path, record_task: Callable[..., Any]) -> None:
    engine = DataEngine.open(tmp_path / "data")
    run = record_task(engine, "shop-buy-one.yaml")
    n = export_jsonl(engine, run.session_id, tmp_path / "out.jsonl")
    lines = (tmp_path / "out.jsonl").read_text(encoding="utf-8").splitlines()
    assert n == len(lines) == engine.step_count(run.session_id) == run.steps
    rows = [json.loads(line) for line in lines]
    assert all(tuple(r) == JSONL_FIELDS for r in rows)
    assert [r["number"] for r in rows] == list(range(1, run.steps + 1))
    assert "artemis123" not in "".join(lines)  # the password was typed but is not stored
    assert any(r["action"]["args"].get("redacted") for r in rows)
    # the CLI writes the same lines, and documents the fields in --help
    res = _cli(tmp_path / "data", "sessions", "export", run.session_id, "--format", "jsonl")
    assert res.exit_code == 0 and res.stdout.splitlines() == lines
    help_text = runner.invoke(app, ["sessions", "export", "--help"]).stdout
    for name in ("number", "target", "post_dhash", "replay"):
        assert name in help_text


_MAESTRO_FOR = {"launch_app": "launchApp", "tap": "tapOn", "long_press": "longPressOn", "swipe": "swipe"}


def test_maestro_commands_match_the_recorded_actions_one_to_one(tmp_path: Path,
                                                                 record_task: Callable[..., Any]) -> None:
    engine = DataEngine.open(tmp_path / "data")
    run = record_task(engine, "settings-bluetooth-airplane.yaml")
    steps = engine.get_steps(run.session_id)
    flow = maestro_flow(engine, run.session_id)
    text = flow.to_yaml()
    header, commands = list(yaml.safe_load_all(text))
    assert header == {"appId": "com.android.settings"}
    assert commands[0] == {"stopApp": "com.android.settings"}  # the task's setup: am force-stop
    recorded = [c for s in flow.steps if s.step > 0 for c in s.commands]
    assert commands[len(commands) - len(recorded):] == recorded
    device_actions = [s for s in steps if s.action_type != "finish"]
    assert len(recorded) == len(device_actions)
    for step, command in zip(device_actions, recorded, strict=True):
        name = command if isinstance(command, str) else next(iter(command))
        assert name == _MAESTRO_FOR[step.action_type], (step.number, command)
        if name == "tapOn":
            rid, label = step.target_resource_id or "", step.target_text
            assert command["tapOn"] in ({"id": rid.rsplit("/", 1)[-1]}, {"text": label}), command
    assert recorded[0] == {"launchApp": {"appId": "com.android.settings", "stopApp": False}}
    assert {"tapOn": {"id": "airplane_switch"}} in commands
    assert {"tapOn": {"text": "Navigate up"}} in commands
    assert "# step 7: finish" in text  # unmappable actions become comments


def test_maestro_maps_keys_text_and_passwords(tmp_path: Path, record_task: Callable[..., Any]) -> None:
    engine = DataEngine.open(tmp_path / "data")
    run = record_task(engine, "shop-buy-one.yaml")
    text = maestro_flow(engine, run.session_id).to_yaml()
    commands = list(yaml.safe_load_all(text))[1]
    assert {"inputText": "demo"} in commands
    # the task's secret by its name, upper-cased as a Maestro variable: never the text
    assert {"inputText": "${SHOP_PASSWORD}"} in commands and "artemis123" not in text
    assert "# secret shop_password: run with -e SHOP_PASSWORD=" in text
    assert any(isinstance(c, dict) and "swipe" in c for c in commands)


def test_sessions_list_filters(tmp_path: Path, record_task: Callable[..., Any], phone_for: Callable[..., Any]) -> None:
    data = tmp_path / "data"
    engine = DataEngine.open(data)
    a = record_task(engine, "settings-dark-theme.yaml")
    b = record_task(engine, "settings-bluetooth-airplane.yaml")
    replay_session(engine, phone_for("settings-dark-theme.yaml", "variant"), a.session_id)

    def ids(*args: str) -> list[str]:
        res = _cli(data, "sessions", "list", "--json", *args)
        assert res.exit_code == 0, res.output
        return [r["id"] for r in json.loads(res.stdout)]

    assert len(ids()) == 3
    assert b.session_id not in ids("--task", "settings-dark-theme") and a.session_id in ids("--task", "settings-dark-theme")
    assert len(ids("--task", "settings-dark-theme")) == 2  # the run and its replay
    assert len(ids("--status", "succeeded")) == 3
    assert ids("--status", "failed") == []
    assert len(ids("--since", "1h")) == 3
    assert ids("--since", "2999-01-01T00:00") == []
    bad = _cli(data, "sessions", "list", "--since", "yesterday-ish")
    assert bad.exit_code != 0


def test_sessions_rm_keeps_blobs_other_sessions_use(tmp_path: Path, record_task: Callable[..., Any]) -> None:
    data = tmp_path / "data"
    engine = DataEngine.open(data)
    first = record_task(engine, "settings-dark-theme.yaml")
    second = record_task(engine, "settings-dark-theme.yaml")  # same world and seed: the same screenshots
    shared = {s.pre_screenshot for s in engine.get_steps(first.session_id)}
    assert shared <= {s.pre_screenshot for s in engine.get_steps(second.session_id)}

    res = _cli(data, "sessions", "rm", first.session_id, "--yes")
    assert res.exit_code == 0, res.output
    assert engine.list_sessions(limit=None)[0].id == second.session_id
    assert len(engine.list_sessions(limit=None)) == 1
    assert engine.db.execute("SELECT COUNT(*) FROM steps WHERE session_id = ?", [first.session_id]).fetchone()[0] == 0
    assert missing_blobs(engine) == []  # nothing the remaining session needs was deleted
    for sha in shared:
        assert sha is not None and engine.blobs.exists(sha)

    res = _cli(data, "sessions", "rm", second.session_id, "--yes")
    assert res.exit_code == 0, res.output
    assert engine.list_sessions(limit=None) == []
    assert not any(engine.blobs.exists(sha) for sha in shared if sha)
    assert integrity_problems(engine) == []


def test_sessions_rm_needs_confirmation_and_a_real_session(tmp_path: Path, record_task: Callable[..., Any]) -> None:
    data = tmp_path / "data"
    engine = DataEngine.open(data)
    run = record_task(engine, "settings-dark-theme.yaml")
    assert _cli(data, "sessions", "rm", run.session_id).exit_code != 0  # not a terminal, no --yes
    assert engine.get_session(run.session_id).id == run.session_id
    assert _cli(data, "sessions", "rm", "nope", "--yes").exit_code != 0


def test_maestro_keeps_the_tap_of_a_type_text_that_typed_nothing(tmp_path: Path) -> None:
    """A type_text whose field never took focus (the pop-up storm opens a window after the
    focusing tap: "nothing was typed") is exported as its tap alone, never as inputText (the
    flow would type it wherever the focus happens to be)."""
    from outcome_support import record_storm

    from artemis_cli.operators.typing import NOTHING_TYPED

    with DataEngine.open(tmp_path / "data") as engine:
        run = record_storm(engine, seed=21)
        lost = [s.number for s in engine.get_steps(run.session_id)
                if s.action_type == "type_text" and NOTHING_TYPED in (s.result_detail or "")]
        assert lost, "seed 21 opens the pop-up after a focusing tap"
        flow = maestro_flow(engine, run.session_id)
    for step in (s for s in flow.steps if s.step in lost):
        names = [c if isinstance(c, str) else next(iter(c)) for c in step.commands]
        assert names == ["tapOn"], (step.step, step.commands)
    typed = [s for s in flow.steps if any(isinstance(c, dict) and "inputText" in c for c in s.commands)]
    assert typed  # the type_texts that did type are exported as text
