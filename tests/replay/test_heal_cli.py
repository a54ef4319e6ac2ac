"""`artemis replay --heal --device sim:drift` through the real CLI on a short Shop recording.

The drifted Shop breaks the recording four ways (a "What's new" dialog, the cart moved into a
"More options" menu, Checkout renamed, a new "Confirm your order" screen); the offline healer,
chosen because no --model and no API key are given, heals them and the replay rejoins. The healed
session, once promoted, replays plain (no model) on sim:drift with zero healed steps.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from artemis_cli.cli.app import app

TASK = Path(__file__).parents[2] / "tasks" / "shop-buy-one.yaml"


def _json(runner: CliRunner, args: list[str]) -> dict:
    res = runner.invoke(app, args)
    assert res.stdout.strip(), f"exit {res.exit_code}: {res.output}"
    return json.loads(res.stdout)


def test_replay_heal_on_drift_then_promoted_plain_replay(tmp_path: Path, data_home: Path,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    for key in ("GEMINI_API_KEY", "GOOGLE_API_KEY"):
        monkeypatch.delenv(key, raising=False)
    monkeypatch.setenv("ARTEMIS_SECRET", "artemis123")
    data = ["--data-dir", str(tmp_path / "data")]
    runner = CliRunner()
    rec = _json(runner, ["run", str(TASK), "--model", "scripted", "--json", *data])
    assert rec["success"], rec["message"]

    healed = _json(runner, ["replay", rec["session_id"], "--heal", "--device", "sim:drift", "--json", *data])
    assert healed["success"], healed["message"]
    assert healed["healed"] > 0 and healed["model_calls"] > 0 and healed["replayed"] > 0
    assert "healer (offline, follows a plan; not an LLM)" in healed["model_label"]
    assert all(c["passed"] for c in healed["checks"])

    promoted = runner.invoke(app, ["sessions", "promote", healed["session_id"], *data])
    assert promoted.exit_code == 0, promoted.output
    plain = _json(runner, ["replay", rec["session_id"], "--device", "sim:drift", "--json", *data])
    assert plain["success"], plain["message"]
    assert plain["healed"] == 0 and plain["model_calls"] == 0
    assert plain["baseline_of"] == rec["session_id"] and plain["source_session"] == healed["session_id"]
