"""Issue 34 item 6: ``type_text`` on an element that is no text field and holds none (a contact
row, a label, a button) is refused before anything reaches the phone — no focusing tap opening
what the element opens — and the model is told what the element is."""

from __future__ import annotations

import json

import pytest

from artemis_cli.cli.prompt_cmd import render_request_text
from artemis_cli.config.profile import load_profile
from artemis_cli.config.task import Task
from artemis_cli.engine.db import DataEngine
from artemis_cli.memory.turn_check import check_turn
from artemis_cli.models.base import FunctionCall
from artemis_cli.models.offline.scripted import ScriptedModel
from artemis_cli.operators.act import plan_action
from artemis_cli.operators.observe import Observation
from artemis_cli.operators.tools import ToolCallError, validate_call
from artemis_cli.perception.coords import CoordinateSpace
from artemis_cli.perception.elements import index_elements
from artemis_cli.perception.hierarchy import parse_hierarchy
from artemis_cli.runner import run_task
from artemis_cli.sim.phone import SimPhone

REFUSED = ("[3] is a ViewGroup, not a text field; nothing was sent. Give type_text the index of a field "
           "(edit among its flags), or tap this element if you meant to open it")


def test_typing_into_a_contact_row_is_refused_and_the_phone_is_untouched(engine: DataEngine) -> None:
    """The issue's case: ``type_text`` on the row "Alice Anderson" used to tap it (opening the
    contact) and then say the field was gone. Now the call is answered with what the row is, no
    step is recorded for it, and the screen after the refusal is the screen before it."""
    script = [{"launch": "com.android.contacts"},
              {"type": {"text": "Priya", "into": {"text": "Alice Anderson"}}},
              {"finish": {"success": False, "answer": "the row is not a field"}}]
    task = Task.model_validate({"id": "type-into-a-row", "goal": "Type Priya", "max_steps": 5})
    phone = SimPhone(seed=31, popups=False)
    result = run_task(task, load_profile("flash"), phone, ScriptedModel(script), engine, real_time=False)
    assert phone.actions == 1  # the launch; no tap, no key, no text
    steps = engine.get_steps(result.session_id)
    assert [s.action_type for s in steps] == ["launch_app", "finish"]
    launched, finished = steps
    assert finished.pre_screenshot == launched.post_screenshot  # the same bytes: nothing moved
    assert finished.ui_xml == launched.post_ui_xml
    assert phone.foreground == "com.android.contacts" and "Alice Anderson" in phone.hierarchy()  # still the list
    check = check_turn(engine, result.session_id, 2)
    assert check.match, check.rows
    text = render_request_text(check.requests[-1])
    call = '[call type_text {"text": "Priya", "index": 3}]'
    assert call in text
    reply = text[text.index(call):].splitlines()[2]
    assert reply == f"[response type_text {json.dumps({'error': REFUSED})}]"


def _observation(xml: str) -> Observation:
    tree = parse_hierarchy(xml)
    return Observation(png=b"", xml=xml, tree=tree, elements=index_elements(tree), dhash="0" * 16,
                       foreground="com.example.app", space=CoordinateSpace(1080, 2400), captured_at=0.0)


def _node(cls: str, bounds: str, inner: str = "", text: str = "", **attrs: str) -> str:
    extra = "".join(f' {k.replace("_", "-")}="{v}"' for k, v in attrs.items())
    return (f'<node index="0" text="{text}" class="{cls}" package="com.example.app" bounds="{bounds}"{extra}>'
            f"{inner}</node>")


FORM = ("<?xml version='1.0' encoding='UTF-8' standalone='yes' ?><hierarchy rotation=\"0\">"
        + _node("android.widget.FrameLayout", "[0,0][1080,2400]",
                _node("android.widget.TextView", "[0,100][1080,200]", text="Name")
                + _node("com.google.android.material.textfield.TextInputLayout", "[0,200][1080,400]",
                        _node("android.widget.EditText", "[20,220][1060,380]", focusable="true",
                              clickable="true", resource_id="com.example.app:id/name"),
                        clickable="true", resource_id="com.example.app:id/name_layout")
                + _node("android.widget.SearchView$SearchAutoComplete", "[0,500][1080,600]", clickable="true",
                        focusable="true")
                + _node("android.view.View", "[0,700][1080,800]", clickable="true", focusable="true")
                + _node("android.widget.Button", "[0,900][1080,1000]", text="Save", clickable="true"))
        + "</hierarchy>")


def _index(obs: Observation, cls: str) -> int:
    return next(e.index for e in obs.elements if e.node.class_name == cls)


@pytest.mark.parametrize("cls", ["com.google.android.material.textfield.TextInputLayout", "android.widget.EditText",
                                 "android.widget.SearchView$SearchAutoComplete", "android.view.View"])
def test_a_field_a_layout_holding_one_a_search_box_or_bare_content_takes_text(cls: str) -> None:
    obs = _observation(FORM)
    planned = plan_action(validate_call(FunctionCall("type_text", {"text": "Ada", "index": _index(obs, cls)})), obs)
    assert planned.x is not None


@pytest.mark.parametrize(("cls", "kind"), [("android.widget.Button", "Button"), ("android.widget.TextView", "TextView")])
def test_a_button_or_a_label_is_no_text_field(cls: str, kind: str) -> None:
    obs = _observation(FORM)
    index = _index(obs, cls)
    with pytest.raises(ToolCallError, match=rf"^\[{index}\] is a {kind}, not a text field; nothing was sent"):
        plan_action(validate_call(FunctionCall("type_text", {"text": "Ada", "index": index})), obs)
