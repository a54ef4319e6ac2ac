"""Step facts (issue 34 item 4): what a recorded step was observed to change, as short phrases.

The outcomes below have the shape ``operators.outcome.ActionOutcome.to_dict`` records (taken from
a recorded run of tasks/chore-new-phone-setup.yaml); the last test reads a real recorded run.
"""

from __future__ import annotations

from typing import Any

from artemis_cli.config.profile import load_profile
from artemis_cli.config.task import Task
from artemis_cli.engine.db import DataEngine
from artemis_cli.engine.records import StepRecord
from artemis_cli.memory.chunk_lens import ChunkJob, MechanicalChunkLens
from artemis_cli.memory.step_facts import facts_clause, merge_facts, range_facts, step_facts
from artemis_cli.models.offline.scripted import ScriptedModel
from artemis_cli.runner import run_task
from artemis_cli.sim.phone import SimPhone

NO_TEXT = {"appeared": [], "appeared_more": 0, "disappeared": [], "disappeared_more": 0}


def outcome(**kw: Any) -> dict[str, Any]:
    base: dict[str, Any] = {"status": "ok", "detail": "", "summary": "", "screen_changed": True, "ui_changed": True,
                            "states": [], "field": None, "windows_opened": [], "windows_closed": [],
                            "app_before": "com.android.settings", "app_after": "com.android.settings",
                            "text": dict(NO_TEXT)}
    base.update(kw)
    return base


def step(number: int, action: str, out: dict[str, Any] | None, *, status: str = "ok",
         target: dict[str, Any] | None = None, args: dict[str, Any] | None = None,
         observation: str = "") -> StepRecord:
    return StepRecord(session_id="s", number=number, action_type=action, action_args=args or {},
                      target=target, result_status=status, outcome=out,  # type: ignore[arg-type]
                      meta={"observation": observation} if observation else {})


def switch(number: int, label: str, rid: str, before: str, now: str) -> StepRecord:
    change = {"element": f'Switch "{label}" (id {rid})', "before": before, "now": now,
              "resource_id": f"com.android.settings:id/{rid}", "bounds": [892, 306, 1032, 390]}
    return step(number, "tap", outcome(states=[change]),
                target={"text": before, "content_desc": label, "resource_id": f"com.android.settings:id/{rid}",
                        "class_name": "android.widget.Switch", "label_source": "index"})


def texts(facts: Any) -> list[str]:
    return [f.text for f in facts]


FIELD_SCREEN = '[3] EditText hint="First name" id=first_name {click,long,edit} @(540,379)\n' \
               '[4] EditText hint="Password" id=password {click,long,edit,password} @(540,569)'


def typed(number: int, text: str, shows: str | None, *, index: int = 3, password: bool = False,
          args: dict[str, Any] | None = None, landed: bool = True) -> StepRecord:
    field = {"label": "field (id first_name)", "password": password, "shows": shows,
             "length": len(text), "cleared": False, "submitted": False, "landed": landed}
    return step(number, "type_text", outcome(field=field), args={"text": text, "index": index, **(args or {})},
                target={"text": "First name", "resource_id": "com.android.contacts:id/first_name",
                        "class_name": "android.widget.EditText", "element_index": index, "label_source": "index",
                        "password": password},
                observation=FIELD_SCREEN)


def test_a_switch_the_outcome_saw_flip_is_one_fact() -> None:
    assert texts(step_facts(switch(3, "Wi-Fi", "wifi_switch", "OFF", "ON"))) == ['"Wi-Fi" OFF→ON']


def test_no_change_error_finish_and_no_outcome_yield_nothing() -> None:
    flipped = switch(3, "Wi-Fi", "wifi_switch", "OFF", "ON")
    for status in ("no_change", "error", "finished"):
        s = step(3, "tap", flipped.outcome, status=status, target=flipped.target)
        assert step_facts(s) == [], status
    assert step_facts(step(4, "tap", None)) == []  # recorded before outcomes existed


def test_typed_text_names_its_field_by_hint_and_says_what_the_field_shows() -> None:
    assert texts(step_facts(typed(23, "Sofia", "Sofia"))) == ['typed "Sofia" into "First name"']
    # appended: the field holds more than what was typed, and the fact says what it holds
    assert texts(step_facts(typed(58, ", bananas", "Milk, eggs, bananas"))) == ['"First name" shows "Milk, eggs, bananas"']
    assert step_facts(typed(24, "Sofia", "Sofi", landed=False)) == []  # did not land: nothing seen typed


def test_a_secret_shows_its_name_and_a_password_shows_redacted_never_a_value() -> None:
    secret = typed(5, "‹secret shop_password›", None, index=4, password=True, args={"secret": "shop_password"})
    assert texts(step_facts(secret)) == ['typed ‹secret shop_password› into "Password"']
    plain = typed(6, "[redacted]", None, index=4, password=True, args={"redacted": True})
    assert texts(step_facts(plain)) == ['typed [redacted] into "Password"']
    # a field that shows a typed value but the record says password: still redacted
    leaked = typed(7, "hunter2", "hunter2", index=4, password=True)
    assert "hunter2" not in " ".join(texts(step_facts(leaked)))


def test_a_dialog_answered_an_item_gone_and_an_app_opened() -> None:
    answered = step(51, "tap", outcome(windows_closed=['"Delete this contact?" (com.android.contacts)'],
                                       text={**NO_TEXT, "replaced": True}),
                    target={"text": "Delete", "resource_id": "android:id/button1", "class_name": "android.widget.Button"})
    assert texts(step_facts(answered)) == ['answered "Delete this contact?" with "Delete"']
    gone = step(62, "tap", outcome(text={**NO_TEXT, "disappeared": ["Ideas"]}),
                target={"text": "Delete", "class_name": "android.widget.Button"})
    assert '"Ideas" gone' in texts(step_facts(gone))
    value = step(14, "tap", outcome(text={**NO_TEXT, "appeared": ["40%", "40%"], "disappeared": ["50%", "50%"]}),
                 target={"content_desc": "Decrease brightness", "class_name": "android.widget.ImageButton"})
    assert texts(step_facts(value)) == ['"50%" → "40%"']  # each text once
    launched = step(1, "launch_app", outcome(app_before="com.android.launcher3", text={**NO_TEXT, "replaced": True}),
                    args={"app": "com.android.settings"})
    assert texts(step_facts(launched)) == ["opened com.android.settings"]
    row = step(2, "tap", outcome(text={**NO_TEXT, "replaced": True}),
               target={"text": "Network & internet · Wi-Fi, mobile data", "class_name": "android.widget.LinearLayout"})
    assert texts(step_facts(row)) == ['opened "Network & internet"']
    saved = step(27, "tap", outcome(text={**NO_TEXT, "replaced": True}),
                 target={"text": "Save", "class_name": "android.widget.Button"})
    assert texts(step_facts(saved)) == ['pressed "Save"']


def test_merged_facts_keep_the_latest_state_each_fact_once_navigation_last() -> None:
    steps = [
        step(1, "launch_app", outcome(app_before="com.android.launcher3"), args={"app": "com.android.settings"}),
        switch(2, "Wi-Fi", "wifi_switch", "OFF", "ON"),
        switch(3, "Bluetooth", "bluetooth_switch", "OFF", "ON"),
        switch(4, "Wi-Fi", "wifi_switch", "ON", "OFF"),
        switch(5, "Bluetooth", "bluetooth_switch", "ON", "OFF"),
        switch(6, "Bluetooth", "bluetooth_switch", "OFF", "ON"),
        typed(7, "Sofia", "Sofia"),
    ]
    assert texts(range_facts(steps)) == ['"Wi-Fi" back to OFF', '"Bluetooth" OFF→ON', 'typed "Sofia" into "First name"',
                                         "opened com.android.settings"]
    assert texts(merge_facts([*step_facts(typed(7, "Sofia", "Sofia")), *step_facts(typed(9, "Sofia", "Sofia"))])) == [
        'typed "Sofia" into "First name"']


def test_the_clause_is_bounded_and_counts_what_did_not_fit() -> None:
    facts = range_facts([switch(n, f"Switch number {n}", f"s{n}", "OFF", "ON") for n in range(1, 30)])
    clause = facts_clause(facts, 120)
    assert len(clause) <= 120 and clause.endswith(" more)") and '"Switch number 1" OFF→ON' in clause
    assert facts_clause([], 120) == ""


def test_the_mechanical_chunk_lens_says_what_was_done_from_the_facts() -> None:
    steps = [step(1, "launch_app", outcome(app_before="com.android.launcher3"), args={"app": "com.android.settings"}),
             switch(2, "Wi-Fi", "wifi_switch", "OFF", "ON"), switch(3, "Dark theme", "dark_theme_switch", "OFF", "ON")]
    for s in steps:
        s.foreground_app = "com.android.settings"
    bands = MechanicalChunkLens().summarize(ChunkJob("s", 1, 3, None, steps))
    assert bands.band1["done"] == ('"Wi-Fi" OFF→ON, "Dark theme" OFF→ON, opened com.android.settings; '
                                   '3 action(s): 1× "launch_app", 2× "tap".')
    assert bands.band2 == ('Steps 1–3: "com.android.settings" — "Wi-Fi" OFF→ON, "Dark theme" OFF→ON, '
                           "opened com.android.settings; 3 action(s)")


def test_facts_of_a_recorded_sim_run(engine: DataEngine) -> None:
    script = [{"launch": "com.android.settings"}, {"tap": {"text": "Network & internet"}},
              {"tap": {"id": "wifi_switch"}}, {"tap": {"id": "wifi_switch"}}, {"tap": {"id": "wifi_switch"}},
              {"finish": {"success": True}}]
    task = Task.model_validate({"id": "facts", "goal": "Turn Wi-Fi off", "max_steps": 8})
    result = run_task(task, load_profile("flash"), SimPhone(seed=3, popups=False), ScriptedModel(script), engine,
                      real_time=False)
    steps = engine.get_steps(result.session_id)
    assert [texts(step_facts(s)) for s in steps[2:5]] == [['"Wi-Fi" ON→OFF'], ['"Wi-Fi" OFF→ON'], ['"Wi-Fi" ON→OFF']]
    # the latest state wins; navigation last
    assert texts(range_facts(steps)) == ['"Wi-Fi" ON→OFF', "opened com.android.settings", 'opened "Network & internet"']
