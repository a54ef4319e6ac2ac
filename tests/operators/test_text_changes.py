"""Screen text that appeared or disappeared after an action (SPEC §15): in the stored outcome, in
the model's next function reply (through the real Gemini SDK and the fake server), and in ledger
lines only when short."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any, cast

import pytest
from outcome_support import act, look, tap, type_into

from artemis_cli.cli.prompt_cmd import render_request_text
from artemis_cli.config.profile import load_profile
from artemis_cli.config.task import load_task
from artemis_cli.engine.db import DataEngine
from artemis_cli.memory.ledger_lines import ledger_line
from artemis_cli.memory.turn_check import check_turn
from artemis_cli.models.fakes.gemini import FakeGeminiServer
from artemis_cli.models.gemini import GeminiModel
from artemis_cli.models.offline.scripted import script_policy
from artemis_cli.operators.outcome import ActionOutcome
from artemis_cli.perception.hierarchy import parse_hierarchy
from artemis_cli.perception.text_changes import (
    MAX_ITEM_CHARS,
    MAX_ITEMS,
    TextChanges,
    screen_texts,
    text_changes,
)
from artemis_cli.runner import RunResult, run_task
from artemis_cli.sim.phone import SimPhone

REPO = Path(__file__).resolve().parents[2]
ERROR = "Wrong username or password"


def _shop_login_screen() -> SimPhone:
    phone = SimPhone(popups=False)
    phone.launch("com.artemis.shop")
    return phone


def test_an_error_message_that_appears_is_named_and_short_enough_for_the_ledger() -> None:
    phone = _shop_login_screen()
    type_into(phone, "demo", "username")
    type_into(phone, "not-the-password", "password")
    done = tap(phone, rid="login")
    assert done.outcome.text.appeared == [ERROR]
    assert done.outcome.text.disappeared == []
    assert done.outcome.summary == f"text appeared {json.dumps(ERROR)}"
    assert done.outcome.reply_fields() == {"observed": done.outcome.summary}  # said once
    stored = done.outcome.to_dict()
    assert stored["text"] == {"appeared": [ERROR], "appeared_more": 0, "disappeared": [], "disappeared_more": 0}
    assert TextChanges.from_dict(stored["text"]) == done.outcome.text


def test_the_keyboard_and_the_status_bar_are_not_screen_text() -> None:
    phone = _shop_login_screen()
    while phone.actions % 10 != 9:  # the sim's clock moves a minute every 10 actions
        phone.key("home")
        phone.launch("com.artemis.shop")
    focused = tap(phone, rid="username")  # the keyboard comes up; the clock ticks
    assert phone.keyboard_visible()
    assert focused.pre.xml != focused.post.xml
    assert not focused.outcome.text, focused.outcome.text


def test_a_typed_password_never_shows_in_the_text_changes() -> None:
    phone = _shop_login_screen()
    type_into(phone, "demo", "username")
    done = type_into(phone, "artemis123", "password", submit=True)  # logs in: a whole new screen
    everything = json.dumps(done.outcome.to_dict())
    assert "artemis123" not in everything
    assert ERROR not in done.outcome.text.appeared


def test_a_scroll_reports_what_came_and_went_bounded_by_screen_position() -> None:
    phone = _shop_login_screen()
    type_into(phone, "demo", "username")
    type_into(phone, "artemis123", "password", submit=True)
    done = act(phone, "swipe", x1=540, y1=2000, x2=540, y2=700)
    text = done.outcome.text
    assert 0 < len(text.appeared) <= MAX_ITEMS and 0 < len(text.disappeared) <= MAX_ITEMS
    assert text.appeared_more > 0 and text.disappeared_more > 0  # a long catalogue: more than five went by
    assert all(len(t) <= MAX_ITEM_CHARS + 1 for t in [*text.appeared, *text.disappeared])
    # the first rows scrolled away, top first
    assert text.disappeared[0] == "Wireless Mouse"
    tops = {n.text: n.bounds.top for n in done.post.tree.nodes if n.text}
    assert [tops[t] for t in text.appeared] == sorted(tops[t] for t in text.appeared)
    reply = done.outcome.reply_fields()
    assert reply["text_appeared"].endswith(f"(+{text.appeared_more} more)")
    assert reply["text_disappeared"].startswith('"Wireless Mouse", ')
    assert "text appeared" not in done.outcome.summary  # too long for a ledger line


def test_an_outcome_stored_before_text_changes_reads_as_none() -> None:
    old = {"status": "ok", "summary": "app now com.artemis.shop", "screen_changed": True}
    assert TextChanges.from_dict(old.get("text")) == TextChanges()
    assert not TextChanges.from_dict({"appeared": "not a list", "appeared_more": -3})
    assert ActionOutcome("ok").to_dict()["text"]["appeared"] == []


def test_the_next_gemini_request_names_the_error_message(tmp_path: Path) -> None:
    """Through the real SDK: the function response that opens the turn after the failed login
    carries the error the screen showed, quoted."""
    task = load_task(REPO / "tasks" / "shop-buy-one.yaml")
    script = [
        {"launch": "com.artemis.shop"},
        {"type": {"text": "demo", "into": {"id": "username"}}},
        {"type": {"text": "hunter2", "into": {"id": "password"}}},
        {"tap": {"id": "login"}},
        {"finish": {"success": False, "answer": "could not log in"}},
    ]
    task = task.model_copy(update={"reference": [], "max_steps": 8})
    with FakeGeminiServer(script_policy(script), min_cacheable_tokens=256) as server:
        model = GeminiModel(["gemini-2.5-flash"], api_key="test-key", base_url=server.base_url,
                            sleep=lambda s: None, backoff_s=0.0)
        with DataEngine.open(tmp_path / "data") as engine:
            phone = SimPhone(world=task.sim.world, seed=task.sim.seed, popups=False)
            result = run_task(task, load_profile("flash"), phone, model, engine, real_time=False)
            steps = engine.get_steps(result.session_id)
            login = next(s for s in steps if s.action_type == "tap")
            assert (login.outcome or {})["text"]["appeared"] == [ERROR]
            assert f"text appeared {json.dumps(ERROR)}" in ledger_line(login)
        operator = [r for r in server.requests if r.tools]
        replies = [p["functionResponse"]["response"] for r in operator for c in r.contents
                   for p in c.get("parts", []) if "functionResponse" in p]
        assert any(r.get("observed") == f"text appeared {json.dumps(ERROR)}" for r in replies), replies
        assert "hunter2" not in json.dumps([r.body for r in server.requests])


def test_a_new_screen_is_said_to_be_replaced_not_listed_text_by_text() -> None:
    """Tapping into a page replaces nearly every text: the element list shows the new screen whole,
    so the answer does not repeat five of its texts as "appeared"."""
    phone = SimPhone(popups=False)
    phone.launch("com.android.settings")
    done = tap(phone, rid="network_row")
    assert done.outcome.status == "ok" and done.outcome.text.replaced
    assert not done.outcome.text.appeared and not done.outcome.text.disappeared
    reply = done.outcome.reply_fields()
    assert "text_appeared" not in reply and "text_disappeared" not in reply
    assert TextChanges.from_dict(done.outcome.to_dict()["text"]).replaced  # stored, read back


# --- issue 34 item 5: each text once, and none for a screen replaced by another ------------------


def _reply_after(engine: DataEngine, session_id: str, step: int) -> tuple[dict[str, Any], str]:
    """The function response to step ``step`` as the model reads it in the next turn's request,
    and that request as ``sessions prompt --show`` prints it."""
    check = check_turn(engine, session_id, step + 1)
    assert check.match, check.rows
    text = render_request_text(check.requests[0])
    replies = [line for line in text.splitlines() if line.startswith("[response ")]
    reply = replies[step - 1]
    return cast(dict[str, Any], json.loads(reply[reply.index("{"):-1])), text


@pytest.mark.parametrize(("task", "step", "title"), [
    ("contacts-add.yaml", 2, "Create contact"),  # the contact list, then the editor
    ("notes-new.yaml", 2, "New note"),  # the note list, then the editor
])
def test_a_list_replaced_by_its_editor_lists_no_text(
        engine: DataEngine, record_task: Callable[[DataEngine, str], RunResult], task: str, step: int,
        title: str) -> None:
    result = record_task(engine, task)
    tapped = engine.get_step(result.session_id, step)
    outcome = tapped.outcome or {}
    assert outcome["status"] == "ok" and outcome["screen_changed"]
    assert outcome["text"] == {"appeared": [], "appeared_more": 0, "disappeared": [], "disappeared_more": 0,
                               "replaced": True}
    reply, request = _reply_after(engine, result.session_id, step)
    assert reply["status"] == "ok"
    assert "text_appeared" not in reply and "text_disappeared" not in reply, reply
    assert "text appeared" not in reply.get("observed", "") and "text gone" not in reply.get("observed", "")
    screen = request[request.index("# CURRENT OBSERVATION"):]
    assert f'TextView "{title}"' in screen  # the editor: the element list shows it whole


def test_a_row_and_its_child_with_the_same_text_are_read_once() -> None:
    phone = SimPhone(seed=31, popups=False)
    phone.launch("com.android.contacts")
    texts = [t for _, t in screen_texts(look(phone).tree)]
    assert texts.count("Alice Anderson") == 1, texts  # the row's desc and its name's text
    type_into(phone, "Ben", "search_field", submit=True)
    found = type_into(phone, "David", "search_field", clear=True, submit=True)  # one row for another
    assert found.outcome.text.appeared == ["David Evans"] and found.outcome.text.disappeared == ["Ben Brooks"]
    assert found.outcome.summary.endswith('text appeared "David Evans"; text gone "Ben Brooks"')


def test_bare_punctuation_is_not_screen_text_and_a_dialog_is_named_not_read() -> None:
    """The time picker's ":" is nothing to read; the dialog that opened is named by its window
    note (its text is in the element list), and when it closes only what changed behind it is
    listed: the new alarm, not the dialog's buttons."""
    phone = SimPhone(popups=False)
    phone.launch("com.android.deskclock")
    opened = tap(phone, desc="Add alarm")
    assert ":" in [n.text for n in opened.post.tree.nodes]
    assert ":" not in [t for _, t in screen_texts(opened.post.tree)]
    assert opened.outcome.summary == 'new window "Set alarm" (com.android.deskclock)'
    assert not opened.outcome.text and not opened.outcome.text.replaced
    saved = tap(phone, text="OK")
    assert saved.outcome.notes[0] == 'window "Set alarm" (com.android.deskclock) closed'
    gone = saved.outcome.text.disappeared
    assert not gone, gone  # "Set alarm", "Cancel", "OK", … are the closed window's
    assert saved.outcome.text.appeared and saved.outcome.text.appeared[0].endswith(("AM", "PM"))


def _one_window(activity: str, rows: list[str]) -> str:
    nodes = "".join(
        f'<node index="{k}" text="{row}" class="android.widget.TextView" package="com.example.app" '
        f'resource-id="com.example.app:id/title" bounds="[0,{200 + 100 * k}][1080,{300 + 100 * k}]" />'
        for k, row in enumerate(rows))
    return ("<?xml version='1.0' encoding='UTF-8' standalone='yes' ?><hierarchy rotation=\"0\">"
            f'<node index="0" text="" class="android.widget.FrameLayout" package="com.example.app" '
            f'bounds="[0,0][1080,2400]" window-title="{activity}" window-type="BASE_APPLICATION">{nodes}</node>'
            "</hierarchy>")


def test_another_activity_in_front_is_another_screen_even_built_alike() -> None:
    """A dump of the active window (``uiautomator dump`` over adb) names its activity: another one
    is another screen, however alike the two are built."""
    rows = ["Inbox", "Sent", "Drafts", "Spam"]
    same = text_changes(parse_hierarchy(_one_window("com.example.app/.ListActivity", rows)),
                        parse_hierarchy(_one_window("com.example.app/.ListActivity", [*rows, "Trash"])))
    assert same.appeared == ["Trash"] and not same.replaced
    other = text_changes(parse_hierarchy(_one_window("com.example.app/.ListActivity", rows)),
                         parse_hierarchy(_one_window("com.example.app/.FolderActivity", [*rows, "Trash"])))
    assert other.replaced and not other
