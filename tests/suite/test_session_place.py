"""``artemis replay`` and ``artemis test`` agree on where a recorded session runs after a promote
(issue 36 A.6): a Shop recording healed on ``sim:drift`` and promoted replays, in both, on
``sim:drift`` (the baseline's world), and both say so on stderr; ``--devices sim:<world>``
chooses the world; a missing secret is named by the recording's step number, not the baseline's.
Real CLI (subprocesses), real SQLite, the simulated phone."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from junitparser import JUnitXml

ROOT = Path(__file__).resolve().parents[2]
BUY = ROOT / "tasks" / "shop-buy-one.yaml"


def _cli(*args: str, home: Path, secret: bool = True) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "ARTEMIS_HOME": str(home), "COLUMNS": "200"}
    for key in ("GEMINI_API_KEY", "GOOGLE_API_KEY", "ARTEMIS_DEBUG", "ARTEMIS_SECRET", "ARTEMIS_REPLAY_SECRET"):
        env.pop(key, None)
    if not secret:
        env.pop("ARTEMIS_SECRET_SHOP_PASSWORD", None)
    return subprocess.run([sys.executable, "-m", "artemis_cli", *args], capture_output=True, text=True, env=env,
                          cwd=home.parent, timeout=300, stdin=subprocess.DEVNULL)


@pytest.fixture(scope="module")
def promoted(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str, str]:
    """(home, recording, promoted healed replay): recorded on the default world, healed on drift."""
    home = tmp_path_factory.mktemp("place") / "home"
    rec = _cli("run", str(BUY), "--model", "scripted", "--json", "--no-live", home=home)
    assert rec.returncode == 0, rec.stderr
    sid = json.loads(rec.stdout)["session_id"]
    healed = _cli("replay", sid, "--heal", "--device", "sim:drift", "--json", home=home)
    assert healed.returncode == 0, healed.stderr
    hid = json.loads(healed.stdout)["session_id"]
    assert _cli("sessions", "promote", hid, home=home).returncode == 0
    return home, sid, hid


def test_replay_and_test_run_a_promoted_recording_in_the_baselines_world(promoted: tuple) -> None:
    home, sid, hid = promoted
    said = f"replaying {hid}, the promoted baseline of {sid}, on sim:drift (the baseline's world)"
    replay = _cli("replay", sid, "--json", home=home)
    assert replay.returncode == 0, replay.stderr
    assert said in replay.stderr
    xml = home.parent / "place.xml"
    test = _cli("test", sid, "--json", "--junit", str(xml), home=home)
    assert test.returncode == 0, test.stderr
    assert said in test.stderr
    # no task cases: no model named for them; the healing model is, with why
    assert "session cases heal with healer (no --model and no GEMINI_API_KEY" in test.stderr
    (ts,) = list(JUnitXml.fromfile(str(xml)))
    props = {p.name: p.value for p in ts.properties()}
    assert props["healing_model"] == "healer" and "offline healer" in props["healing_model.why"]
    assert "model" not in props
    (case,) = json.loads(test.stdout)["cases"]
    assert case["status"] == "passed" and case["replay"]["healed"] == 0, case


def test_devices_takes_sim_world_entries(promoted: tuple) -> None:
    home, sid, _hid = promoted
    res = _cli("test", sid, sid, "--devices", "sim:drift,sim:drift", "--json", home=home)
    assert res.returncode == 0, res.stderr
    assert {c["device"] for c in json.loads(res.stdout)["cases"]} == {"sim:drift", "sim:drift#2"}
    # the world of the device wins: the drift baseline on the default world has to heal back
    default = _cli("test", sid, "--devices", "sim:default", "--json", home=home)
    (case,) = json.loads(default.stdout)["cases"]
    assert case["device"] == "sim:default" and case["status"] == "failed", case
    # its steps are named as the user's recording numbers them, the baseline's only beside them
    assert case["failure"].startswith("diverged at the promoted baseline's step 8 (a healed step, not in the "
                                      "recording)"), case["failure"]
    assert "last matched step 5 (the promoted baseline's step 7)" in case["failure"], case["failure"]
    bad = _cli("test", sid, "--devices", "sim:nope", home=home)
    assert bad.returncode == 2 and "bad --devices entry 'sim:nope': no sim world 'nope'" in bad.stderr
    assert "Hint: worlds:" in bad.stderr and "drift" in bad.stderr


def test_a_missing_secret_names_the_recordings_step(promoted: tuple) -> None:
    """The recording typed the password at its step 3; the promoted baseline at its step 5 (a heal
    step dismissed a dialog before it). The user knows the recording."""
    home, sid, _hid = promoted
    res = _cli("test", sid, "--json", home=home, secret=False)
    assert res.returncode == 1, res.stderr
    (case,) = json.loads(res.stdout)["cases"]
    assert "step 3 typed secret shop_password" in case["failure"], case["failure"]
    replay = _cli("replay", sid, home=home, secret=False)
    assert replay.returncode == 2 and "step 3 typed secret shop_password" in replay.stderr, replay.stderr
