"""The Python API's steps without a model, on the simulated phone: each call is a recorded step
with its observed outcome, and a step that did not take effect raises."""

from __future__ import annotations

from pathlib import Path

import pytest

from artemis_cli import Phone, StepFailed, UsageError
from artemis_cli.engine.db import DataEngine
from artemis_cli.engine.records import LIBRARY_LOOP
from artemis_cli.errors import SessionNotFound


def _open(tmp_path: Path, **kw: object) -> Phone:
    return Phone.open("sim", data_dir=tmp_path, real_time=False, **kw)  # type: ignore[arg-type]


def test_steps_are_recorded_with_their_outcomes(tmp_path: Path) -> None:
    with _open(tmp_path, name="add Sofia") as phone:
        assert phone.session_id is None  # nothing done yet: no session
        assert phone.launch("Contacts").ok
        tap = phone.tap("Create contact")
        assert (tap.step, tap.action, tap.status, tap.target) == (2, "tap", "ok", "Create contact")
        assert phone.type("First name", "Sofia").status == "ok"
        assert phone.type("Last name", "Ortega").ok
        assert phone.tap("Save").ok
        assert phone.sees("Sofia Ortega") and not phone.sees("Nobody Here")
        screen = phone.screen()
        assert screen.app == "com.android.contacts" and screen.find("sofia") is not None
        sid = phone.session_id
    assert phone.stats().steps == 5 and phone.status == "succeeded"
    with DataEngine.open_for_reading(tmp_path) as engine:
        rec = engine.get_session(sid or "")
        assert (rec.loop, rec.status, rec.goal) == (LIBRARY_LOOP, "succeeded", "add Sofia")
        steps = engine.get_steps(rec.id)
        assert [s.action_type for s in steps] == ["launch_app", "tap", "type_text", "type_text", "tap"]
        assert all(s.result_status == "ok" and s.pre_dhash and s.post_dhash for s in steps)
        assert steps[2].target["text"] == "First name" and steps[2].action_args["text"] == "Sofia"
        looks = [e.payload["call"] for e in engine.events(rec.id, "library_call")]
        assert looks == ["sees", "sees", "screen"]


def test_a_target_not_on_screen_is_not_sent_and_names_what_is(tmp_path: Path) -> None:
    with _open(tmp_path) as phone:
        phone.launch("Contacts")
        with pytest.raises(StepFailed) as err:
            phone.tap("Create a unicorn")
        assert 'the element with text "Create a unicorn" is not on the screen' in str(err.value)
        assert '(com.android.contacts: "Contacts", "Alice Anderson"' in str(err.value) and err.value.hint
        assert phone.stats().steps == 1  # nothing was sent: no step
        with pytest.raises(UsageError):
            phone.tap()


def test_a_step_without_an_observed_effect_raises(tmp_path: Path) -> None:
    with pytest.raises(StepFailed) as err, _open(tmp_path) as phone:
        phone.launch("Contacts")
        phone.tap(id="clock")  # the status bar's clock: tapping it changes nothing
    assert "did not take effect" in str(err.value) and err.value.step == 2
    assert err.value.outcome is not None and err.value.outcome.status != "ok"
    with DataEngine.open_for_reading(tmp_path) as engine:  # the step is recorded all the same
        rec = engine.latest_session()
        assert rec is not None and rec.status == "failed" and "StepFailed" in str(rec.result)
        assert engine.get_step(rec.id, 2).result_status != "ok"


def test_wait_for_fails_with_what_is_on_screen(tmp_path: Path) -> None:
    with _open(tmp_path) as phone:
        phone.launch("Contacts")
        assert phone.wait_for("Create contact", timeout=0).app == "com.android.contacts"
        with pytest.raises(StepFailed, match=r'"Saved" did not appear within 0 s \(com.android.contacts: "Contacts", "Alice Anderson"'):
            phone.wait_for("Saved", timeout=0)


def test_ai_steps_without_a_model_or_key_refuse_with_a_hint(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("GEMINI_API_KEY", raising=False)
    monkeypatch.delenv("GOOGLE_API_KEY", raising=False)
    with _open(tmp_path) as phone:
        with pytest.raises(UsageError) as err:
            phone.act("add a contact")
        assert "needs a model" in str(err.value) and "model='heuristic'" in (err.value.hint or "")


def test_a_phone_that_did_nothing_keeps_no_session(tmp_path: Path) -> None:
    with _open(tmp_path) as phone:
        phone.screen()  # a look is not a step
        sid = phone.session_id
    assert sid is not None and phone.status == "none"
    with DataEngine.open_for_reading(tmp_path) as engine, pytest.raises(SessionNotFound):
        engine.get_session(sid)


def test_resume_refuses_a_library_session(tmp_path: Path) -> None:
    with pytest.raises(RuntimeError), _open(tmp_path) as phone:
        phone.launch("Contacts")
        raise RuntimeError("the test body failed")
    from artemis_cli.resume import ensure_resumable

    with DataEngine.open_for_reading(tmp_path) as engine:
        rec = engine.get_session(phone.session_id or "")
        assert rec.status == "failed"
        rec.status = "interrupted"
        with pytest.raises(UsageError) as err:
            ensure_resumable(rec)
    assert "Python program" in str(err.value) and "run the Python program or test again" in (err.value.hint or "")
