"""A replay of a default-world Shop recording on ``sim:drift`` diverges for real at the step the
update changed, and replay types only into a field that took focus: the recorded ``type`` into
the username field, covered on drift by the "What's new" dialog, is a divergence, not blind typing."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from sim_helpers import tap
from typer.testing import CliRunner

from artemis_cli.cli.app import app
from artemis_cli.config.task import Task, load_task
from artemis_cli.engine.db import DataEngine
from artemis_cli.replay import ReplayOptions, replay_session
from artemis_cli.sim import SimPhone

SHOP = "com.artemis.shop"
# A short Shop order (7 steps) that crosses every change of the drift world.
TASK = """\
id: drift-short-order
goal: Log in to the Shop with the demo account and order one phone case.
device: sim
sim: {world: default, seed: 0, popups: false}
setup:
  - shell: am force-stop com.artemis.shop
success:
  - shell: content query --uri content://com.artemis.shop/orders
    contains: "items=1, total=14.99, products=Phone Case x1"
  - visible: Thank you for your order!
reference:
  - launch: com.artemis.shop
  - type: {text: demo, into: {id: username}}
  - type: {text: artemis123, into: {id: password}, submit: true}
  - tap: {desc: Add Phone Case to cart}
  - tap: {id: cart_button}
  - tap: {text: Checkout}
  - finish: {success: true, answer: Ordered one phone case}
"""


@pytest.fixture(autouse=True)
def _password(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ARTEMIS_SECRET_PASSWORD", "artemis123")  # a typed password is never stored


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory,
             record_task: Callable[[DataEngine, str | Task], Any]) -> Iterator[tuple[Path, str]]:
    root = tmp_path_factory.mktemp("drift")
    (root / "task.yaml").write_text(TASK, encoding="utf-8")
    data = root / "data"
    with DataEngine.open(data) as engine:
        run = record_task(engine, load_task(root / "task.yaml"))
        assert run.status == "succeeded", run
        yield data, run.session_id


def test_the_recording_replays_on_the_default_world(recorded: tuple[Path, str]) -> None:
    data, sid = recorded
    with DataEngine.open(data) as engine:
        result = replay_session(engine, SimPhone(popups=False), sid, ReplayOptions())
    assert result.status == "succeeded" and result.first_divergence is None, result.message


def test_type_into_a_covered_field_diverges_instead_of_typing_blind(recorded: tuple[Path, str]) -> None:
    data, sid = recorded
    phone = SimPhone(world="drift", popups=False)
    with DataEngine.open(data) as engine:
        result = replay_session(engine, phone, sid, ReplayOptions())
    assert result.status == "failed" and result.first_divergence == 2, result.message
    # nothing was typed anywhere: no keystrokes sent to a phone with no focused field
    assert not [i for i in phone.ignored if i.startswith("type_text")], phone.ignored
    step = result.steps[-1]
    assert step.action == "type_text" and step.status == "diverged"
    assert "the action failed" in step.detail and "focus" in step.detail, step.detail
    assert phone.snapshot_state()["apps"][SHOP]["fields"].get("username", "") == ""


def test_past_the_dialog_the_moved_cart_button_is_a_divergence(recorded: tuple[Path, str]) -> None:
    data, sid = recorded
    phone = SimPhone(world="drift", popups=False)
    phone.launch(SHOP)
    tap(phone, text="Got it")  # the first run is over: the next change is the overflow menu
    phone.key("home")
    with DataEngine.open(data) as engine:
        result = replay_session(engine, phone, sid, ReplayOptions())
    assert result.status == "failed" and result.first_divergence == 5, result.message
    assert [s.status for s in result.steps][:4] != ["diverged"] * 4
    assert result.steps[-1].action == "tap" and result.steps[-1].status == "diverged"
    assert phone.snapshot_state()["apps"][SHOP]["ui"]["screen"] == "catalogue"  # the cart never opened


def test_replay_cli_on_sim_drift_names_the_diverged_step(recorded: tuple[Path, str]) -> None:
    data, sid = recorded
    out = CliRunner().invoke(app, ["replay", sid, "--device", "sim:drift", "--json", "--data-dir", str(data)])
    assert out.exit_code == 1, out.output
    body = json.loads(out.stdout)
    assert body["status"] == "failed" and body["first_divergence"] == 2
    assert body["steps"][-1]["status"] == "diverged" and "diverged at step 2" in body["message"]
