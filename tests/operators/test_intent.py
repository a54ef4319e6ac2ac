"""`intent` on every action tool: declared, taken out of the args, stored with the step and shown
wherever the step is (reply, band ③ line, recall, report, JSONL, bundle, validator prompt).

The run is the demo task played through the fake Gemini server and the real google-genai SDK;
the fake model states an intent on every action but the first (a missing intent must still act).
"""

from __future__ import annotations

import io
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from run_support import demo_on_fake_gemini

from artemis_cli.engine.bundle import import_bundle, write_bundle
from artemis_cli.engine.db import DataEngine
from artemis_cli.engine.records import StepRecord
from artemis_cli.export.jsonl import write_jsonl
from artemis_cli.memory.ledger_lines import ledger_line
from artemis_cli.memory.recall import Recall
from artemis_cli.models.base import FunctionCall
from artemis_cli.models.fakes.gemini import FakeGeminiServer
from artemis_cli.operators.pro.validator import validator_request_text
from artemis_cli.operators.tools import ACTION_TOOLS, MAX_INTENT_CHARS, tool_declarations, validate_call
from artemis_cli.report.html import build_report

REPO = Path(__file__).resolve().parents[2]
INTENTS = {"tap": "opens the Wi-Fi row </screen> \"quoted\"", "finish": None}


# --- declarations and validation ------------------------------------------------------------


@pytest.mark.parametrize("coordinates", ["pixels", "normalized"])
def test_every_action_tool_but_finish_declares_intent_required(coordinates: str) -> None:
    decls = {d.name: d for d in tool_declarations(coordinates)}
    for name in ACTION_TOOLS:
        props = decls[name].parameters["properties"]
        if name == "finish":
            assert "intent" not in props
            continue
        assert props["intent"]["type"] == "string"
        assert "intent" in decls[name].parameters["required"]
    assert all("intent" not in d.parameters["properties"] for d in decls.values() if d.name not in ACTION_TOOLS)


def test_intent_leaves_the_args_and_a_missing_or_bad_one_never_rejects_the_call() -> None:
    tc = validate_call(FunctionCall("tap", {"index": 2, "intent": "  opens\nSettings  "}))
    assert tc.args == {"index": 2} and tc.intent == "opens Settings"
    assert validate_call(FunctionCall("tap", {"index": 2})).intent is None
    assert validate_call(FunctionCall("tap", {"index": 2, "intent": 7})).intent is None
    assert validate_call(FunctionCall("wait", {"seconds": 1, "intent": ""})).intent is None
    long = validate_call(FunctionCall("press_key", {"key": "back", "intent": "x" * 5000}))
    assert long.args == {"key": "back"} and long.intent == "x" * MAX_INTENT_CHARS + "…"
    # finish does not take one: its answer says it all
    assert validate_call(FunctionCall("finish", {"success": True, "intent": "done"})).intent is None


# --- a run ----------------------------------------------------------------------------------


def _with_intents(policy: Any) -> Any:
    """The reference script's calls, each given an intent except the first action's."""
    seen = {"actions": 0}

    def wrapped(request: Any) -> Any:
        reply = policy(request)
        for part in getattr(reply, "parts", []):
            call = part.get("functionCall")
            if call and call["name"] != "finish":
                seen["actions"] += 1
                if seen["actions"] > 1:
                    call["args"] = {**call["args"], "intent": f"{call['name']}: " + INTENTS.get(call["name"], "go on")}
        return reply

    return wrapped


@pytest.fixture
def run(tmp_path: Path) -> Iterator[tuple[Any, DataEngine, FakeGeminiServer]]:
    with demo_on_fake_gemini(tmp_path / "data", _with_intents) as (result, engine, srv):
        yield result, engine, srv


def test_intent_is_stored_replied_and_shown(run: tuple[Any, DataEngine, FakeGeminiServer], tmp_path: Path) -> None:
    result, engine, server = run
    assert result.success
    steps = engine.get_steps(result.session_id)
    assert steps[0].action_type == "launch_app" and steps[0].intent is None  # no intent: it still acted
    tap = next(s for s in steps if s.action_type == "tap")
    assert tap.intent == "tap: " + INTENTS["tap"]
    assert all("intent" not in s.action_args for s in steps)
    assert steps[-1].action_type == "finish" and steps[-1].intent is None

    # the tools the model was given carry intent
    declared = [f for r in server.requests if r.tools for t in r.tools for f in t.get("functionDeclarations", [])]
    taps = [f for f in declared if f["name"] == "tap"]
    schema = [f.get("parameters") or f.get("parametersJsonSchema") or f.get("parameters_json_schema") for f in taps]
    assert taps and all("intent" in s["properties"] for s in schema)

    # the action's answer in the next turn states the expected effect beside what was seen
    replies = [p["functionResponse"] for r in server.requests for c in r.contents for p in c.get("parts", [])
               if "functionResponse" in p and p["functionResponse"]["name"] == "tap"]
    assert replies and replies[-1]["response"]["intended"] == tap.intent

    # band ③: quoted (the fence cannot be closed), cut to the history cap
    line = ledger_line(tap)
    assert ' (intent "tap: opens the Wi-Fi row <\\/screen> \\"quoted\\"") -> ' in line
    assert "</screen>" not in line

    # recall finds the step by its intent and shows it
    found = Recall(engine).recall(result.session_id, "opens Wi-Fi row")
    assert any(h.step == tap.number and "(intent " in h.text() for h in found.hits)

    # JSONL export
    buf = io.StringIO()
    write_jsonl(engine, result.session_id, buf)
    lines = [json.loads(x) for x in buf.getvalue().splitlines()]
    assert [x["intent"] for x in lines] == [s.intent for s in steps]

    # report timeline (escaped)
    html = build_report(engine, result.session_id)
    assert "<span class='label'>intent</span> tap: opens the Wi-Fi row &lt;/screen&gt;" in html

    # bundle round trip into another data dir
    path = tmp_path / "s.zip"
    write_bundle(engine, result.session_id, path)
    other = DataEngine.open(tmp_path / "other")
    imported = import_bundle(other, path)
    assert [s.intent for s in other.get_steps(imported.session_id)] == [s.intent for s in steps]


def test_older_steps_read_no_intent(tmp_path: Path) -> None:
    engine = DataEngine.open(tmp_path / "data")
    from artemis_cli.engine.records import SessionRecord

    sid = engine.create_session(SessionRecord(goal="g"))
    engine.record_step(StepRecord(session_id=sid, number=1, action_type="wait", action_args={"seconds": 1}))
    step = engine.get_step(sid, 1)
    assert step.intent is None and "(intent" not in ledger_line(step)


def test_the_validator_is_given_the_intent() -> None:
    text = validator_request_text(["[0] Button \"Save\" @(1,1)"], "tap Button \"Save\"", ["[0] TextView \"Saved\" @(1,1)"],
                                  None, intent='saves the note "</screen>"')
    _, rest = text.split("# EXPECTED EFFECT (the agent's stated intent)\n", 1)
    assert rest.splitlines()[0] == '"saves the note \\"<\\/screen>\\""'
    assert "(not stated)" in validator_request_text([], "tap", [], None)
