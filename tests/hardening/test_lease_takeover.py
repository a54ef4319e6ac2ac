"""A process whose lease was taken over (its heartbeat had lapsed) stops before its next device
action and writes nothing more to the session (issue 23 item 15; SPEC §15).

Two DataEngines on one data dir: the run's own and the one that takes the session over, as a
second `artemis resume` would. The takeover lands between two steps (the progress callback) or
inside a step before the model is asked (the stdin inbox the loop reads each step), or after the
finish step, before the success checks and the session's final write."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from artemis_cli.config.profile import load_profile
from artemis_cli.config.task import load_task
from artemis_cli.engine.db import DataEngine
from artemis_cli.engine.errors import SessionTakenOver
from artemis_cli.engine.lease import Lease
from artemis_cli.models.offline.scripted import ScriptedModel
from artemis_cli.models.registry import reference_script
from artemis_cli.runner import run_task
from artemis_cli.sim.phone import SimPhone

REPO = Path(__file__).resolve().parents[2]
NINA = "content query --uri content://com.android.contacts/contacts --where \"display_name='Nina Petrova'\""


def _written(engine: DataEngine, sid: str) -> tuple[int, int, int]:
    return engine.step_count(sid), len(engine.events(sid)), len(engine.llm_calls(sid))


@pytest.mark.parametrize(("where", "at_step"), [("between steps", 2), ("inside a step", 2), ("after the finish", 6)])
def test_a_run_whose_lease_was_taken_over_stops_and_writes_nothing_more(
        where: str, at_step: int, tmp_path: Path, phone_for: Callable[..., SimPhone]) -> None:
    task = load_task(REPO / "tasks" / "contacts-delete.yaml")  # launch, search, open Nina, Delete, confirm
    phone = phone_for(task)
    engine, other = DataEngine.open(tmp_path / "data"), DataEngine.open(tmp_path / "data")
    state: dict[str, Any] = {}

    def take_over() -> None:
        state["theirs"] = other.acquire_lease(state["sid"], "resume")
        state["actions"], state["written"] = phone.actions, _written(engine, state["sid"])

    def on_step(rep: Any) -> None:
        if where != "inside a step" and rep.number == at_step:
            take_over()

    def inbox() -> list[str]:
        if where == "inside a step" and engine.step_count(state["sid"]) == at_step and "theirs" not in state:
            take_over()
        return []

    try:
        with pytest.raises(SessionTakenOver) as caught:
            run_task(task, load_profile("flash"), phone, ScriptedModel(reference_script(task)), engine,
                     real_time=False, on_start=lambda sid: state.update(sid=sid), on_step=on_step,
                     user_inbox=inbox)
        sid, theirs = state["sid"], state["theirs"]
        assert isinstance(theirs, Lease)
        assert f"session {sid} was taken over by process" in str(caught.value)
        assert caught.value.exit_code == 2 and f"artemis sessions show {sid}" in (caught.value.hint or "")
        assert _written(engine, sid) == state["written"] and state["written"][0] == at_step  # no step, event, call
        assert phone.actions == state["actions"]  # the device saw no further action (nor the success checks)
        if at_step < 5:
            assert phone.shell(NINA).strip() != "No result found."  # Nina was not deleted
        assert engine.get_session(sid).status == "running"  # the new owner's to finish, not ours
        owner = engine.lease_owner(sid)  # leaving did not release the new owner's lease
        assert owner is not None and owner.token == theirs.owner.token
        theirs.release()
    finally:
        engine.close()
        other.close()


def test_lease_check_sees_a_takeover_at_once_not_at_the_next_heartbeat(tmp_path: Path) -> None:
    from artemis_cli.engine.records import SessionRecord

    engine, other = DataEngine.open(tmp_path / "data"), DataEngine.open(tmp_path / "data")
    try:
        sid = engine.create_session(SessionRecord(id="", task_id="t", goal="g", status="running"))
        ours = engine.acquire_lease(sid, "run")
        ours.check()  # still ours: nothing raised
        theirs = other.acquire_lease(sid, "resume")
        with pytest.raises(SessionTakenOver, match=f"taken over by process {theirs.owner.pid} on this host"):
            ours.check()
        assert ours.lost and ours.taken_by is not None and ours.taken_by.token == theirs.owner.token
        with pytest.raises(SessionTakenOver):
            ours.check()  # and stays lost
        ours.release()
        theirs.release()
    finally:
        engine.close()
        other.close()
