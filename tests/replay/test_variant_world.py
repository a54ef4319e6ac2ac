"""The variant world differs from the default one in the ways replay by semantics must survive."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from typer.testing import CliRunner

from artemis_cli.cli.app import app
from artemis_cli.device.select import list_devices, resolve_device
from artemis_cli.engine.db import DataEngine
from artemis_cli.perception.hierarchy import parse_hierarchy
from artemis_cli.sim.phone import SimPhone


def _nodes(phone: SimPhone) -> list[Any]:
    return list(parse_hierarchy(phone.hierarchy(), screen_size=(1080, 2400)).nodes)


def _titles(phone: SimPhone) -> list[str]:
    return [n.text for n in _nodes(phone) if n.resource_id == "android:id/title"]


def test_banner_reordered_rows_and_renamed_button() -> None:
    default, variant = SimPhone(), SimPhone(world="variant")
    for phone in (default, variant):
        phone.launch("com.android.settings")
    assert _titles(variant) == list(reversed(_titles(default)))  # reordered list items
    banner = [n for n in _nodes(variant) if n.resource_id.endswith(":id/variant_banner")]
    assert banner and not [n for n in _nodes(default) if "variant_banner" in n.resource_id]
    row = {p: next(n for n in _nodes(p) if n.resource_id.endswith("network_row")) for p in (default, variant)}
    assert row[variant].bounds.top != row[default].bounds.top  # content shifted

    def ok_button(phone: SimPhone) -> Any:
        phone.launch("com.android.deskclock")
        fab = next(n for n in _nodes(phone) if n.content_desc == "Add alarm")
        phone.tap(*fab.bounds.center)
        return next(n for n in _nodes(phone) if n.resource_id == "android:id/button1")

    assert ok_button(SimPhone()).text == "OK"
    assert ok_button(SimPhone(world="variant")).text == "Save"  # same resource-id, new label


def test_sim_world_device_spec_and_listing() -> None:
    assert resolve_device("sim:variant").info().serial == "sim:variant"
    assert {d.serial for d in list_devices() if d.kind == "sim"} >= {"sim", "sim:variant"}


def test_replay_cli_json_and_dry_run(tmp_path: Path, record_task: Callable[..., Any]) -> None:
    data = tmp_path / "data"
    engine = DataEngine.open(data)
    run = record_task(engine, "settings-bluetooth-airplane.yaml")
    runner = CliRunner()
    dry = runner.invoke(app, ["replay", run.session_id, "--dry-run", "--data-dir", str(data)])
    assert dry.exit_code == 0 and "airplane_switch" in dry.stdout
    ok = runner.invoke(app, ["replay", run.session_id, "--device", "sim:variant", "--json", "--data-dir", str(data)])
    assert ok.exit_code == 0, ok.output
    body = json.loads(ok.stdout)
    assert body["session_id"] and [s["number"] for s in body["steps"]] == list(range(1, run.steps + 1))
    assert {s["status"] for s in body["steps"]} <= {"replayed", "retargeted"}
    bad = runner.invoke(app, ["replay", run.session_id, "--device", "sim:variant", "--by", "coordinates", "--json",
                              "--data-dir", str(data)])
    assert bad.exit_code == 1
    failed = json.loads(bad.stdout)
    assert failed["status"] == "failed" and failed["steps"][-1]["status"] == "diverged"
    assert f"diverged at step {failed['first_divergence']}" in failed["message"]
