"""The tool set as a model meets it (issue 34 item 8): every parameter of every tool described,
arguments a tool does not take refused, and open_url, stop_app and the wider keys working on the
simulated phone (tests/adbd/test_gesture_backends.py runs the same check over adb and u2)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from outcome_support import check_links_stops_and_keys

from artemis_cli.config.profile import load_profile
from artemis_cli.config.task import load_task
from artemis_cli.device.protocol import KEY_NAMES, KEYCODES
from artemis_cli.engine.db import DataEngine
from artemis_cli.export import maestro_flow
from artemis_cli.mcp_server.tools import mcp_tools
from artemis_cli.memory.ledger_lines import action_phrase
from artemis_cli.models.base import FunctionCall
from artemis_cli.models.offline.scripted import ScriptedModel
from artemis_cli.models.registry import reference_script
from artemis_cli.operators.tools import MAX_WAIT_S, ToolCallError, tool_declarations, validate_call
from artemis_cli.replay.replayer import replay_session
from artemis_cli.runner import run_task
from artemis_cli.sim.phone import SimPhone


def _undescribed(schema: dict[str, Any], path: str) -> list[str]:
    missing = []
    for name, prop in schema.get("properties", {}).items():
        if not str(prop.get("description", "")).strip():
            missing.append(f"{path}.{name}")
        if prop.get("type") == "object":
            missing += _undescribed(prop, f"{path}.{name}")
        if isinstance(prop.get("items"), dict) and prop["items"].get("type") == "object":
            missing += _undescribed(prop["items"], f"{path}.{name}[]")
    return missing


@pytest.mark.parametrize("coordinates", ["pixels", "normalized"])
def test_every_parameter_of_every_operator_tool_is_described(coordinates: str) -> None:
    missing = [m for d in tool_declarations(coordinates) for m in _undescribed(d.parameters, d.name)]
    assert missing == []


def test_every_parameter_of_every_mcp_tool_is_described() -> None:
    assert [m for t in mcp_tools() for m in _undescribed(t.input_schema, t.name)] == []


def test_the_undescribed_walk_finds_a_missing_description() -> None:
    assert _undescribed({"properties": {"a": {"type": "string"}, "b": {"type": "integer", "description": "x"}}},
                        "t") == ["t.a"]


def test_tap_says_index_or_x_and_y_and_wait_carries_its_maximum() -> None:
    decls = {d.name: d for d in tool_declarations()}
    assert "`index` (preferred), or x and y" in decls["tap"].description
    assert f"{MAX_WAIT_S:g}" in decls["wait"].parameters["properties"]["seconds"]["description"]
    assert decls["press_key"].parameters["properties"]["key"]["enum"] == list(KEY_NAMES)
    assert set(KEY_NAMES) == set(KEYCODES)  # every key the model may press has a code on every backend


@pytest.mark.parametrize(("name", "args", "message"), [
    ("tap", {"index": 3, "element": 4}, "tap takes no `element`; its arguments are: index, intent, x, y"),
    ("finish", {"success": True, "reason": "done"}, "finish takes no `reason`"),
    ("open_url", {"url": "example.com"}, "`url`: a URL starts with a scheme"),
    ("open_url", {"url": "https://a b"}, "`url`: a URL starts with a scheme"),
    ("stop_app", {}, "`package` is required"),
])
def test_what_a_tool_does_not_take_is_refused(name: str, args: dict[str, Any], message: str) -> None:
    with pytest.raises(ToolCallError) as err:
        validate_call(FunctionCall(name, args))
    assert message in str(err.value)


def test_intent_is_never_refused_even_where_it_is_dropped() -> None:
    call = validate_call(FunctionCall("finish", {"success": True, "intent": "the task is done"}))
    assert call.args == {"success": True, "answer": ""} and call.intent is None


def test_links_stops_and_keys_on_the_sim() -> None:
    phone = SimPhone(popups=False)
    check_links_stops_and_keys(phone, phone)


def test_a_run_with_links_stops_and_keys_records_replays_and_exports(tmp_path: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """A scripted run of open_url, stop_app and volume_up: its ledger lines, its Maestro flow
    (openLink, stopApp, pressKey) and a replay of it on a fresh sim that matches every step."""
    monkeypatch.setenv("ARTEMIS_HOME", str(tmp_path / "home"))
    path = tmp_path / "links.yaml"
    path.write_text(
        "id: links\ngoal: Open the Shop from its link, then stop it\nmax_steps: 6\n"
        "sim: {popups: false}\n"
        "reference:\n  - open_url: artemis-shop://catalog\n  - key: volume_up\n  - stop: com.artemis.shop\n"
        "  - finish: {success: true}\n", encoding="utf-8")
    task = load_task(path)
    engine = DataEngine.open(tmp_path / "data")
    try:
        run = run_task(task, load_profile("flash"), SimPhone(popups=False), ScriptedModel(reference_script(task)),
                       engine, real_time=False)
        steps = engine.get_steps(run.session_id)
        assert [(s.action_type, s.result_status) for s in steps] == [
            ("open_url", "ok"), ("press_key", "no_change"), ("stop_app", "ok"), ("finish", "finished")]
        assert [action_phrase(s) for s in steps[:3]] == [
            'open "artemis-shop://catalog"', "press volume_up", "stop com.artemis.shop"]
        commands = [c for st in maestro_flow(engine, run.session_id).steps for c in st.commands]
        assert {"openLink": "artemis-shop://catalog"} in commands and {"stopApp": "com.artemis.shop"} in commands
        assert {"pressKey": "Volume Up"} in commands
        replay = replay_session(engine, SimPhone(popups=False), run.session_id)
        assert [r.status for r in replay.steps] == ["replayed"] * 4, replay.steps
    finally:
        engine.close()
