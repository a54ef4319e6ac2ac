"""What each `artemis mcp` call asks of the device (issue 38): a screenshot says whether the screen
is still the one the client saw, and only a screen that is not gets a hierarchy dump. Counted on
the simulated phone in-process through a proxy that forwards every device call and counts it
(counts, not times); the answers are read as a client reads them."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from artemis_cli.config.profile import load_profile
from artemis_cli.device.select import resolve_device
from artemis_cli.engine.db import DataEngine
from artemis_cli.mcp_server.answers import StepAnswer, ViewAnswer
from artemis_cli.mcp_server.session import OBSERVE_EVENT, ClientInfo, DrivenSession
from artemis_cli.perception.dhash import dhash_hex


class Counted:
    """The device, every method call forwarded and counted by name."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.calls: Counter[str] = Counter()

    def __getattr__(self, name: str) -> Any:
        attr = getattr(self.inner, name)
        if not callable(attr):
            return attr

        def counted(*args: Any, **kwargs: Any) -> Any:
            self.calls[name] += 1
            return attr(*args, **kwargs)

        return counted

    def since(self) -> Counter[str]:
        """The calls since the last time this was asked."""
        calls, self.calls = self.calls, Counter()
        return calls


@pytest.fixture
def driven(tmp_path: Path) -> Iterator[tuple[DrivenSession, Any, Counted]]:
    engine = DataEngine.open(tmp_path / "data")
    phone = resolve_device("sim", sim_options={"popups": False})
    device = Counted(phone)
    # real time: the step settles by watching the screen, as `artemis mcp` does on a phone
    session = DrivenSession(engine, device, load_profile("flash"), goal="test", run_config={"device": "sim"},
                            real_time=True)
    session.start(ClientInfo("counting-client", "1"))
    try:
        yield session, phone, device
    finally:
        session.interrupt("the test ended")
        engine.close()


def index(view: ViewAnswer, label: str) -> int:
    return next(e.index for e in view.obs.elements if label in (e.label, e.node.hint))


def contacts_form(session: DrivenSession) -> ViewAnswer:
    launched = session.act("launch_app", {"app": "Contacts"})
    assert isinstance(launched, StepAnswer)
    form = session.act("tap", {"index": index(launched.view, "Create contact")})
    assert isinstance(form, StepAnswer) and form.outcome.status == "ok"
    return form.view


def test_a_tap_on_the_screen_the_client_saw_dumps_the_hierarchy_once(
        driven: tuple[DrivenSession, Any, Counted]) -> None:
    session, _, device = driven
    home = session.observe()
    device.since()
    done = session.act("tap", {"index": index(home, "Contacts")})
    assert isinstance(done, StepAnswer) and done.outcome.status == "ok", done.text()
    calls = device.since()
    # the screen before: one screenshot, equal to what the client saw; after: one observation,
    # kept as it showed the tap's effect (the client's next call looks first: no capture only to
    # confirm it still)
    assert calls["hierarchy"] == 1, calls
    assert calls["screenshot"] == 2, calls
    assert done.view.obs.settle_mode == "observed"
    (step,) = session.engine.get_steps(session.session_id or "")
    observed = step.meta["observe_ms"]
    assert set(observed) == {"screenshot", "total", "dump_age"}, observed  # the record says so
    assert step.pre_dhash == home.obs.dhash


def test_an_observe_after_an_answer_dumps_nothing_when_the_screen_is_unchanged(
        driven: tuple[DrivenSession, Any, Counted]) -> None:
    session, _, device = driven
    form = contacts_form(session)
    device.since()
    again = session.observe()
    assert device.since() == Counter(screenshot=1)
    assert again.obs.element_list == form.obs.element_list and again.obs.png == form.obs.png
    event = session.engine.events(session.session_id or "", kind=OBSERVE_EVENT)[-1]
    assert event.payload.get("unchanged") is True


def test_a_change_the_dhash_does_not_see_is_observed_in_full(driven: tuple[DrivenSession, Any, Counted]) -> None:
    session, phone, device = driven
    form = contacts_form(session)
    typed = session.act("tap", {"index": index(form, "First name")})
    assert isinstance(typed, StepAnswer)
    phone.type_text("x")  # one letter behind the client's back: the 64-bit dHash stays the same
    phone.invalidate()
    assert dhash_hex(phone.screenshot()) == typed.view.obs.dhash
    device.since()
    now = session.observe()
    assert device.since()["hierarchy"] == 1
    assert any(e.node.text == "x" for e in now.obs.elements), now.obs.element_list


def test_a_screen_changed_behind_the_client_is_observed_and_its_target_refused(
        driven: tuple[DrivenSession, Any, Counted]) -> None:
    session, phone, device = driven
    home = session.observe()
    phone.do_launch("com.android.settings")  # the screen changes behind the client's back
    phone.invalidate()
    device.since()
    refused = session.act("tap", {"index": index(home, "Contacts")})
    assert isinstance(refused, ViewAnswer) and refused.refused, refused.text()
    calls = device.since()
    assert calls["hierarchy"] == 1 and not calls["tap"], calls
    assert refused.obs.foreground == "com.android.settings"


def test_an_observe_after_an_observe_looks_in_full(driven: tuple[DrivenSession, Any, Counted]) -> None:
    session, _, device = driven
    contacts_form(session)
    session.observe()  # after the answer: the screenshot is enough
    device.since()
    session.observe()  # asked again: the client is waiting for a change, the dump may show it
    calls = device.since()
    assert calls["hierarchy"] == 1 and calls["screenshot"] == 1, calls


def test_a_screen_that_moved_on_after_an_answer_is_its_late_change(
        driven: tuple[DrivenSession, Any, Counted]) -> None:
    """An answer kept on a first sight of its effect is confirmed by the client's next call: the
    screen moved on behind it (here the editor closed), so the step's outcome is measured again
    on the screen now, kept as a ``late_change`` event on that step (its record unchanged), and
    the client is told what the step came to."""
    from artemis_cli.operators.settling import LATE_EVENT

    session, phone, _ = driven
    launched = session.act("launch_app", {"app": "Contacts"})
    assert isinstance(launched, StepAnswer)
    form = session.act("tap", {"index": index(launched.view, "Create contact")})
    assert isinstance(form, StepAnswer) and form.outcome.status == "ok" and form.view.obs.settle_mode == "observed"
    phone.key("back")  # behind the client's back: the editor closes, the list is back
    seen = session.observe()
    (late,) = session.engine.events(session.session_id or "", LATE_EVENT)
    assert late.step == form.number and late.payload["post_dhash"] == form.view.obs.dhash
    assert late.payload["later_dhash"] == seen.obs.dhash
    assert late.payload["amended"] and late.payload["now"]["status"] != "ok", late.payload
    assert f"The screen changed again after step {form.number}'s action was assessed" in seen.text()
    assert session.engine.get_step(session.session_id or "", form.number).result_status == "ok"  # as judged
    # confirmed once: the next look has nothing left to confirm
    session.observe()
    assert len(session.engine.events(session.session_id or "", LATE_EVENT)) == 1
