"""Screen text that appeared or disappeared after an action (SPEC §15): in the stored outcome, in
the model's next function reply (through the real Gemini SDK and the fake server), and in ledger
lines only when short."""

from __future__ import annotations

import json
from pathlib import Path

from outcome_support import act, tap, type_into

from artemis_cli.config.profile import load_profile
from artemis_cli.config.task import load_task
from artemis_cli.engine.db import DataEngine
from artemis_cli.memory.ledger_lines import ledger_line
from artemis_cli.models.fake_gemini import FakeGeminiServer
from artemis_cli.models.gemini import GeminiModel
from artemis_cli.models.scripted import script_policy
from artemis_cli.operators.outcome import ActionOutcome
from artemis_cli.perception.text_changes import MAX_ITEM_CHARS, MAX_ITEMS, TextChanges
from artemis_cli.runner import run_task
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
