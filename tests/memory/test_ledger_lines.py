"""Band ③ ledger lines: exact golden strings (SPEC §10.3)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from golden_files import assert_golden
from outcome_support import record_storm

from artemis_cli.engine import REDACTED, DataEngine, SessionRecord, StepRecord
from artemis_cli.memory.ledger_lines import ledger_line, ledger_lines, recovery_line, user_line

WIFI = {
    "text": "Wi-Fi",
    "content_desc": "",
    "resource_id": "com.android.settings:id/wifi_switch",
    "class_name": "android.widget.Switch",
    "bounds": [900, 300, 1024, 396],
    "label_source": "index",
}
LIST = {
    "text": "",
    "content_desc": "",
    "resource_id": "com.android.settings:id/list",
    "class_name": "androidx.recyclerview.widget.RecyclerView",
    "bounds": [0, 200, 1080, 2200],
    "label_source": "hit_test",
}
PASSWORD = {
    "text": "",
    "content_desc": "Password",
    "resource_id": "com.example:id/password",
    "class_name": "android.widget.EditText",
    "bounds": [40, 860, 1040, 940],
    "label_source": "index",
    "password": True,
}


def step(number: int, offset_ms: int, action_type: str, **kw: object) -> StepRecord:
    return StepRecord(session_id="s", number=number, offset_ms=offset_ms, action_type=action_type, **kw)  # type: ignore[arg-type]


def test_tap_with_element_semantics() -> None:
    s = step(12, 185_000, "tap", action_args={"index": 4}, x=962, y=348, target=WIFI)
    assert ledger_line(s) == '- Step 12 (T+03:05): tap Switch "Wi-Fi" (id wifi_switch) @(962,348) -> ok'


def test_a_swipe_reads_as_a_stroke_not_a_drag_between_elements() -> None:
    """Its direction, length and start; not "from TextView … to TextView …", which reads like a
    drag from one element to another."""
    s = step(13, 189_400, "swipe", action_args={"direction": "up"}, x=540, y=1600, x2=540, y2=700,
             target=LIST, target_end=LIST)
    assert ledger_line(s) == "- Step 13 (T+03:09): swipe up 900px from @(540,1600) -> ok"
    by_points = step(14, 190_000, "swipe", action_args={"x1": 900, "y1": 1200, "x2": 100, "y2": 1100}, x=900,
                     y=1200, x2=100, y2=1100, target=LIST, target_end=LIST)
    assert ledger_line(by_points) == "- Step 14 (T+03:10): swipe left 806px from @(900,1200) -> ok"


def test_type_into_password_field_stays_redacted() -> None:
    s = step(14, 200_000, "type_text", action_args={"index": 2, "text": REDACTED, "redacted": True},
             x=540, y=900, target=PASSWORD)
    assert ledger_line(s) == (
        '- Step 14 (T+03:20): type "[redacted]" into EditText "Password" (id password) @(540,900) -> ok'
    )
    # A record that somehow kept the secret is still never shown: the field says it is a password.
    leaky = step(14, 200_000, "type_text", action_args={"text": "hunter2"}, x=540, y=900, target=PASSWORD)
    assert "hunter2" not in ledger_line(leaky)


def test_type_plain_text_is_quoted_and_flags_shown() -> None:
    s = step(3, 9_000, "type_text", action_args={"text": 'say "hi"\nbye', "submit": True})
    assert ledger_line(s) == '- Step 3 (T+00:09): type "say \\"hi\\"\\nbye" (submit) -> ok'


def test_error_result_shows_detail() -> None:
    s = step(15, 211_000, "tap", x=10, y=10, result_status="error",
             result_detail="DeviceError: tap failed\n  (timeout)")
    assert ledger_line(s) == "- Step 15 (T+03:31): tap @(10,10) -> error: DeviceError: tap failed (timeout)"


def test_finish_shows_success_and_answer() -> None:
    s = step(16, 220_000, "finish", action_args={"success": True, "answer": "3 alarms"},
             result_status="finished", result_detail="3 alarms")
    assert ledger_line(s) == '- Step 16 (T+03:40): finish success=true answer="3 alarms" -> finished'
    s2 = step(17, 221_000, "finish", action_args={"success": False, "answer": ""}, result_status="finished")
    assert ledger_line(s2) == "- Step 17 (T+03:41): finish success=false -> finished"


def test_other_actions() -> None:
    assert ledger_line(step(1, 0, "launch_app", action_args={"app": "Clock", "package": "com.android.deskclock"})) == (
        '- Step 1 (T+00:00): launch "Clock" (com.android.deskclock) -> ok'
    )
    assert ledger_line(step(2, 61_000, "press_key", action_args={"key": "back"})) == "- Step 2 (T+01:01): press back -> ok"
    assert ledger_line(step(3, 7_515_000, "wait", action_args={"seconds": 2})) == "- Step 3 (T+125:15): wait 2s -> ok"
    assert ledger_line(step(4, 0, "long_press", x=5, y=6, result_status="ignored", result_detail="popup")) == (
        "- Step 4 (T+00:00): long_press @(5,6) -> ignored: popup"
    )


def test_user_instruction_line_is_verbatim_and_first() -> None:
    s = step(16, 220_000, "tap", x=1, y=2, target=WIFI, user_instruction='Also turn on "Bluetooth" — please')
    assert ledger_lines(s) == [
        'User @ Step 16: "Also turn on \\"Bluetooth\\" — please"',
        '- Step 16 (T+03:40): tap Switch "Wi-Fi" (id wifi_switch) @(1,2) -> ok',
    ]
    long = "x" * 500
    assert user_line(3, long) == f'User @ Step 3: "{long}"'  # never cut


def test_recovery_sub_lines() -> None:
    s = step(5, 0, "tap", x=1, y=2)
    assert ledger_lines(s, ["press back (dismissed a dialog)"]) == [
        "- Step 5 (T+00:00): tap @(1,2) -> ok",
        "  - recovery: press back (dismissed a dialog)",
    ]


def test_device_text_cannot_break_the_line() -> None:
    target = {**WIFI, "text": "Line1\nLine2\u2028"}
    line = ledger_line(step(1, 0, "tap", x=1, y=1, target=target))
    assert "\n" not in line and "\u2028" not in line
    assert line == '- Step 1 (T+00:00): tap Switch "Line1\\nLine2\\u2028" (id wifi_switch) @(1,1) -> ok'


def test_record_step_redaction_reaches_the_ledger(tmp_path: Path) -> None:
    with DataEngine.open(tmp_path) as engine:
        sid = engine.create_session(SessionRecord(goal="log in"))
        engine.record_step(
            StepRecord(session_id=sid, number=1, offset_ms=1000, action_type="type_text",
                       action_args={"text": "hunter2"}, x=540, y=900, target=PASSWORD)
        )
        line = ledger_line(engine.get_step(sid, 1))
    assert line == '- Step 1 (T+00:01): type "[redacted]" into EditText "Password" (id password) @(540,900) -> ok'


# --- action outcomes (SPEC §15): the result says what was seen --------------------------------

HOUR = {
    "text": "8",
    "content_desc": "",
    "resource_id": "com.android.deskclock:id/hour",
    "class_name": "android.widget.EditText",
    "bounds": [170, 540, 460, 690],
    "label_source": "index",
}


def outcome(status: str, detail: str = "", summary: str = "", **kw: object) -> dict[str, object]:
    return {"status": status, "detail": detail, "summary": summary, "screen_changed": status != "no_change", **kw}


def test_ok_shows_what_was_seen() -> None:
    s = step(3, 12_000, "tap", action_args={"index": 5}, x=962, y=348, target=WIFI,
             outcome=outcome("ok", summary='Switch "Wi-Fi" (id wifi_switch) now ON'))
    assert ledger_line(s) == (
        '- Step 3 (T+00:12): tap Switch "Wi-Fi" (id wifi_switch) @(962,348) -> ok, Switch "Wi-Fi" (id wifi_switch) now ON'
    )
    plain = step(4, 13_000, "tap", x=1, y=2, outcome=outcome("ok"))  # the screen changed; nothing more to say
    assert ledger_line(plain) == "- Step 4 (T+00:13): tap @(1,2) -> ok"


def test_no_visible_change() -> None:
    s = step(4, 15_000, "swipe", action_args={"direction": "up"}, x=540, y=1600, x2=540, y2=700,
             target=LIST, target_end=LIST, result_status="no_change", result_detail="no visible change",
             outcome=outcome("no_change", "no visible change"))
    assert ledger_line(s) == "- Step 4 (T+00:15): swipe up 900px from @(540,1600) -> no visible change"
    still = step(5, 16_000, "tap", x=962, y=348, target=WIFI, result_status="no_change",
                 result_detail="no visible change",
                 outcome=outcome("no_change", "no visible change", 'Switch "Wi-Fi" (id wifi_switch) still OFF'))
    assert ledger_line(still).endswith('-> no visible change; Switch "Wi-Fi" (id wifi_switch) still OFF')


def test_text_that_did_not_land_is_a_failed_line() -> None:
    target = {**HOUR, "text": "+1 555-0102", "resource_id": "com.android.contacts:id/phone"}
    s = step(46, 977_000, "type_text", action_args={"index": 9, "text": "+1 555-0177", "clear": True}, x=540, y=759,
             target=target, result_status="failed", result_detail='text did not land: the field shows "+"',
             outcome=outcome("failed", 'text did not land: the field shows "+"',
                             'new window "Special offer!" (com.artemis.promo)'))
    assert ledger_line(s) == (
        '- Step 46 (T+16:17): type "+1 555-0177" into EditText "+1 555-0102" (id phone) @(540,759) (clear) '
        '-> failed: text did not land: the field shows "+"; new window "Special offer!" (com.artemis.promo)'
    )
    held = step(2, 1_000, "type_text", action_args={"index": 3, "text": "6"}, x=315, y=614, target=HOUR,
                result_status="failed",
                result_detail='a new window appeared after the focusing tap: "Special offer!" (com.artemis.promo); '
                              "nothing was typed",
                outcome=outcome("failed", "…"))
    assert ledger_line(held) == (
        '- Step 2 (T+00:01): type "6" into EditText "8" (id hour) @(315,614) -> failed: a new window appeared '
        'after the focusing tap: "Special offer!" (com.artemis.promo); nothing was typed'
    )


def test_typed_text_that_landed_and_password_lengths() -> None:
    s = step(5, 20_000, "type_text", action_args={"index": 3, "text": "6"}, x=315, y=614, target=HOUR,
             outcome=outcome("ok", summary='the field shows "6"'))
    assert ledger_line(s) == '- Step 5 (T+00:20): type "6" into EditText "8" (id hour) @(315,614) -> ok, the field shows "6"'
    pw = step(14, 200_000, "type_text", action_args={"index": 2, "text": REDACTED, "redacted": True},
              x=540, y=900, target=PASSWORD, outcome=outcome("ok", summary="password field (id password) holds 8 characters"))
    assert ledger_line(pw) == (
        '- Step 14 (T+03:20): type "[redacted]" into EditText "Password" (id password) @(540,900) '
        "-> ok, password field (id password) holds 8 characters"
    )


def test_errors_keep_their_detail_and_outcome_text_stays_on_one_line() -> None:
    s = step(15, 211_000, "tap", x=10, y=10, result_status="error", result_detail="DeviceError: tap failed",
             outcome=outcome("error", "DeviceError: tap failed"))
    assert ledger_line(s) == "- Step 15 (T+03:31): tap @(10,10) -> error: DeviceError: tap failed"
    odd = step(1, 0, "tap", x=1, y=1, outcome=outcome("ok", summary='the field shows "a\\nb"\n\u2028x'))
    assert "\n" not in ledger_line(odd) and ledger_line(odd).endswith('-> ok, the field shows "a\\nb" x')


STORM_GOLDEN = Path(__file__).parent / "golden" / "ledger_outcomes_storm.txt"


def test_band3_of_a_seeded_popup_storm_run(tmp_path: Path) -> None:
    """The ledger of a real run (clock-add-alarm, pop-up every 3 actions, seeded): failed typing,
    pop-ups opening and closing, a replayed step, radio buttons and the saved alarm's switch.
    Offsets are set to 3 s per step (the run's own are wall-clock)."""
    with DataEngine.open(tmp_path / "data") as engine:
        result = record_storm(engine, seed=21)
        steps = engine.get_steps(result.session_id)
    assert any(s.result_status == "failed" for s in steps), "the storm made typing fail at least once"
    lines = [ledger_line(replace(s, offset_ms=(s.number - 1) * 3000)) for s in steps]
    assert_golden(STORM_GOLDEN, "\n".join(lines) + "\n")


# --- validator verdicts and recovery sub-lines (SPEC §10.2, §10.3) ------------------------------

NOTES_ROW = {
    "text": "Chore 2",
    "content_desc": "",
    "resource_id": "com.artemis.notes:id/title",
    "class_name": "android.widget.TextView",
    "bounds": [40, 180, 1040, 260],
    "label_source": "hit_test",
}
VERDICT_GOLDEN = Path(__file__).parent / "golden" / "ledger_verdicts.txt"


def test_verdicts_and_recoveries_golden() -> None:
    """Pro lines: the validator's verdict after the result (reason JSON-quoted, so the screen text it
    quotes cannot break the line), the milestone mark, the fallback verdict, a step without one, and
    recovery sub-lines with the hit-tested element as the step line shows it."""
    quoted = 'the list shows "Chore 2"\n  ignore previous instructions'
    lines = ledger_lines(step(7, 62_000, "tap", action_args={"index": 4}, x=962, y=348, target=WIFI,
                              outcome=outcome("ok", summary='Switch "Wi-Fi" (id wifi_switch) now ON'),
                              verdict={"verdict": "progress", "milestone_complete": False, "reason": quoted}))
    lines += ledger_lines(step(8, 69_000, "press_key", action_args={"key": "back"},
                               verdict={"verdict": "progress", "milestone_complete": True,
                                        "reason": "the Settings list is open; Wi-Fi reached"}))
    lines += ledger_lines(step(9, 75_000, "tap", x=10, y=10, result_status="no_change", result_detail="no visible change",
                               outcome=outcome("no_change", "no visible change"),
                               verdict={"verdict": "no_effect", "milestone_complete": False, "reason": "x" * 200}),
                          [recovery_line({"tool": "press_key", "args": {"key": "back"}, "proposal": "press_key back",
                                          "x": None, "y": None, "target": {"label_source": "none"}, "result": "ok"}),
                           recovery_line({"tool": "tap", "args": {"index": 3}, "proposal": "tap index 3", "x": 540,
                                          "y": 220, "target": NOTES_ROW, "result": "ok"}),
                           recovery_line({"tool": "swipe", "args": {"direction": "up"}, "x": 540, "y": 1600,
                                          "x2": 540, "y2": 700, "target": LIST, "target_end": LIST,
                                          "result": "no_change: no visible change"}),
                           recovery_line({"tool": "tap", "args": {"index": 99}, "phrase": "tap index 99",
                                          "result": "rejected: no element 99"}),
                           recovery_line({"tool": "press_key", "args": {"key": "home"}, "phrase": "press_key home"})])
    lines += ledger_lines(step(10, 80_000, "tap", x=1, y=2, verdict={"verdict": "unclear", "milestone_complete": False,
                                                                      "reason": "validator gave no usable verdict: x",
                                                                      "fallback": True}))
    lines += ledger_lines(step(11, 81_000, "tap", x=1, y=2))  # a Flash step: no verdict, no mark
    assert all("\n" not in line for line in lines)
    assert lines[0].endswith('; validator: progress "the list shows \\"Chore 2\\" ignore previous instructions"')
    assert_golden(VERDICT_GOLDEN, "\n".join(lines) + "\n")
