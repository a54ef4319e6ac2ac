"""A replayed ``finish`` carries the recording's verdict only on the screen the recording finished
on: on the drifted Shop a checkout ends on a confirmation the update added, where the recording's
"ordered" is not true — that finish is a divergence, not a success."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from artemis_cli.engine.db import DataEngine
from artemis_cli.replay import ReplayOptions, replay_session
from artemis_cli.sim.phone import SimPhone


def test_a_finish_on_another_screen_diverges(tmp_path: Path, record_task: Callable[..., Any],
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ARTEMIS_SECRET", "artemis123")
    engine = DataEngine.open(tmp_path / "data")
    source = record_task(engine, "shop-buy-one.yaml").session_id
    same = replay_session(engine, SimPhone(seed=57), source)
    assert same.status == "succeeded" and same.steps[-1].status == "replayed"  # the recording's own world
    drift = replay_session(engine, SimPhone(world="drift", seed=57), source,
                           ReplayOptions(continue_on_divergence=True))
    last = drift.steps[-1]
    assert (last.action, last.status) == ("finish", "diverged"), [(s.action, s.status) for s in drift.steps]
    assert "not the one the recording finished on" in last.detail
    assert drift.status == "failed" and not drift.finished
    engine.close()
