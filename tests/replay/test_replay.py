"""Replay of recorded sessions on a fresh simulated phone and on the variant world."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from artemis_cli.engine.db import DataEngine
from artemis_cli.errors import UsageError
from artemis_cli.replay import REPLAY_MODEL_LABEL, ReplayOptions, ReplayResult, plan, replay_session
from artemis_cli.sim.phone import SimPhone


@dataclass
class Recorded:
    engine: DataEngine
    session_id: str
    steps: int


@pytest.fixture(scope="module")
def long_session(tmp_path_factory: pytest.TempPathFactory, record_task: Callable[..., Any]) -> Iterator[Recorded]:
    engine = DataEngine.open(tmp_path_factory.mktemp("replay-long"))
    result = record_task(engine, "clock-ten-alarms.yaml")
    yield Recorded(engine, result.session_id, result.steps)
    engine.close()


def _phone(world: str = "default") -> SimPhone:
    return SimPhone(world=world, seed=22, popups=False)  # clock-ten-alarms.yaml's sim options


def _replay(rec: Recorded, world: str = "default", **opts: object) -> ReplayResult:
    return replay_session(rec.engine, _phone(world), rec.session_id, ReplayOptions(**opts))  # type: ignore[arg-type]


def test_fresh_phone_every_step_matched_and_recorded_as_a_linked_session(long_session: Recorded) -> None:
    assert long_session.steps >= 60
    result = _replay(long_session)
    counts = Counter(s.status for s in result.steps)
    print(f"\nfresh sim: {len(result.steps)} steps, {dict(counts)}")
    assert counts == {"replayed": long_session.steps}
    assert result.status == "succeeded" and result.first_divergence is None

    engine = long_session.engine
    rec = engine.get_session(result.session_id)
    assert rec.parent_session == long_session.session_id
    assert rec.loop == "replay" and rec.model_label == REPLAY_MODEL_LABEL and rec.status == "succeeded"
    assert engine.llm_calls(result.session_id) == []  # no model was called
    steps = engine.get_steps(result.session_id)
    source = engine.get_steps(long_session.session_id)
    assert [s.number for s in steps] == list(range(1, len(source) + 1))
    for mine, theirs in zip(steps, source, strict=True):
        assert mine.action_type == theirs.action_type
        assert mine.pre_screenshot and mine.post_screenshot and mine.ui_xml and mine.post_ui_xml
        assert mine.pre_dhash and mine.post_dhash
        assert mine.meta["replay"]["status"] == "replayed"
        assert mine.meta["replay"]["source_step"] == theirs.number
        # same world, same actions: the same screens, byte for byte
        assert mine.post_screenshot == theirs.post_screenshot
        if theirs.target and theirs.target.get("label_source") != "none":
            assert mine.target is not None
            assert mine.target["resource_id"] == theirs.target["resource_id"]
    events = engine.events(result.session_id, kind="replay_step")
    assert [e.payload["status"] for e in events] == ["replayed"] * len(steps)


def test_variant_world_by_semantics_matches_or_retargets_every_step(long_session: Recorded) -> None:
    result = _replay(long_session, "variant")
    counts = Counter(s.status for s in result.steps)
    print(f"\nsim:variant by semantics: {len(result.steps)} steps, {dict(counts)}")
    assert len(result.steps) == long_session.steps
    assert set(counts) <= {"replayed", "retargeted"}
    assert counts["retargeted"] > 0  # the layout really differs
    assert result.status == "succeeded"
    # the renamed "OK" button (same resource-id) was found: it reads "Save" in the variant world
    saves = [s for s in long_session.engine.get_steps(result.session_id) if (s.target or {}).get("text") == "Save"]
    assert saves and all(s.target and s.target["resource_id"] == "android:id/button1" for s in saves)


def test_variant_world_by_coordinates_diverges_and_says_where(long_session: Recorded) -> None:
    result = _replay(long_session, "variant", by="coordinates")
    print(f"\nsim:variant by coordinates: {result.status}: {result.message}")
    assert result.status == "failed"
    assert result.first_divergence is not None
    assert f"diverged at step {result.first_divergence}" in result.message
    assert result.steps[-1].status == "diverged" and result.steps[-1].source_step == result.first_divergence
    assert result.steps[-1].detail  # why
    assert len(result.steps) < long_session.steps  # stopped at the divergence
    assert long_session.engine.get_session(result.session_id).status == "failed"


def test_continue_on_divergence_goes_on(long_session: Recorded) -> None:
    result = _replay(long_session, "variant", by="coordinates", continue_on_divergence=True)
    assert len(result.steps) == long_session.steps
    assert result.count("diverged") >= 1


def test_from_step_replays_the_rest_without_setup(long_session: Recorded) -> None:
    phone = _phone()
    phone.launch("com.android.deskclock")
    result = replay_session(long_session.engine, phone, long_session.session_id, ReplayOptions(from_step=57))
    assert result.steps[0].source_step == 57 and result.steps[0].number == 1
    assert result.steps[0].status != "diverged"  # "Add alarm" is on this screen too
    assert long_session.engine.events(result.session_id, kind="setup") == []


def test_dry_run_plan_touches_nothing(long_session: Recorded) -> None:
    before = len(long_session.engine.list_sessions(limit=None))
    steps = plan(long_session.engine, long_session.session_id)
    assert len(steps) == long_session.steps
    assert "id='onoff'" in steps[0].locate and "desc='7:30 AM alarm'" in steps[0].locate
    coords = plan(long_session.engine, long_session.session_id, ReplayOptions(by="coordinates"))
    assert coords[0].locate.startswith("at (")
    assert len(long_session.engine.list_sessions(limit=None)) == before


def test_bad_options_are_usage_errors(long_session: Recorded) -> None:
    with pytest.raises(UsageError):
        _replay(long_session, by="pixels")
    with pytest.raises(UsageError):
        _replay(long_session, from_step=10_000)


def test_password_text_comes_from_the_environment_never_the_db(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, record_task: Callable[..., Any], phone_for: Callable[..., SimPhone]
) -> None:
    engine = DataEngine.open(tmp_path / "data")
    source = record_task(engine, "shop-buy-one.yaml")
    secret_steps = [s for s in engine.get_steps(source.session_id) if s.action_args.get("redacted")]
    assert secret_steps, "the task logs in with a password"

    def phone() -> SimPhone:
        return phone_for("shop-buy-one.yaml")

    # no variable and no terminal: a clear usage error, not a replay with wrong text (the step
    # typed secret shop_password: its own variable first, then the field's)
    monkeypatch.delenv("ARTEMIS_SECRET_SHOP_PASSWORD", raising=False)
    monkeypatch.delenv("ARTEMIS_REPLAY_SECRET", raising=False)
    monkeypatch.delenv("ARTEMIS_REPLAY_SECRET_PASSWORD", raising=False)
    with pytest.raises(UsageError, match="password"):
        replay_session(engine, phone(), source.session_id)

    monkeypatch.setenv("ARTEMIS_REPLAY_SECRET_PASSWORD", "wrong-password")
    wrong = replay_session(engine, phone(), source.session_id)
    assert wrong.status == "failed"  # the login screen stays: the next step diverges

    monkeypatch.setenv("ARTEMIS_REPLAY_SECRET_PASSWORD", "artemis123")
    good = replay_session(engine, phone(), source.session_id)
    assert good.status == "succeeded", good.message
    engine.close()
    raw = b"".join(p.read_bytes() for p in (tmp_path / "data").rglob("*") if p.is_file())
    assert b"artemis123" not in raw
