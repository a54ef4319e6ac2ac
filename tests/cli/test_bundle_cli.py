"""A recorded session handed to a colleague: `sessions export --format bundle`, then
`sessions import` into their data dir, where it can be shown, re-rendered and replayed."""

from __future__ import annotations

import json
import subprocess
import sys
import zipfile
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[2]


def artemis(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "artemis_cli", *args], cwd=REPO, capture_output=True,
                          text=True, timeout=300)


def ok(proc: subprocess.CompletedProcess[str]) -> subprocess.CompletedProcess[str]:
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return proc


def shown(session: str, data_dir: Path | None = None) -> dict[str, Any]:
    extra = ("--data-dir", str(data_dir)) if data_dir else ()
    data: dict[str, Any] = json.loads(ok(artemis("sessions", "show", session, "--json", *extra)).stdout)
    for step in data["steps"]:  # blob paths name the data dir; the hashes must match
        for key in ("pre_screenshot", "post_screenshot", "ui_xml", "post_ui_xml"):
            if step[key]:
                assert step[key].pop("exists") is True
                step[key].pop("path")
    return data


@pytest.fixture
def recorded(data_home: Path) -> str:
    result = json.loads(ok(artemis("run", "tasks/demo.yaml", "--model", "scripted", "--json")).stdout)
    return str(result["session_id"])


def test_a_colleague_imports_shows_rerenders_and_replays_a_session(recorded: str, tmp_path: Path) -> None:
    bundle = tmp_path / "share" / "run.artemis"
    bundle.parent.mkdir()  # -o never creates directories
    proc = ok(artemis("sessions", "export", recorded[:15], "--format", "bundle", "-o", str(bundle)))
    assert f"Wrote session {recorded}" in proc.stderr and bundle.is_file()

    theirs = tmp_path / "colleague"
    proc = ok(artemis("sessions", "import", str(bundle), "--data-dir", str(theirs)))
    assert f"Imported session {recorded}" in proc.stdout
    assert shown(recorded, theirs) == shown(recorded)

    prompt = ok(artemis("sessions", "prompt", recorded, "--step", "1", "--data-dir", str(theirs)))
    assert "match" in prompt.stdout and "MISMATCH" not in prompt.stdout
    prompt = json.loads(ok(artemis("sessions", "prompt", recorded, "--step", "3", "--json",
                                   "--data-dir", str(theirs))).stdout)
    assert prompt["match"] is True

    replay = json.loads(ok(artemis("replay", recorded, "--device", "sim", "--json", "--data-dir", str(theirs))).stdout)
    assert replay["status"] == "succeeded" and replay["success"] is True
    assert {s["status"] for s in replay["steps"]} == {"replayed"}

    again = json.loads(ok(artemis("sessions", "import", str(bundle), "--data-dir", str(theirs), "--json")).stdout)
    assert again["session_id"] == recorded and again["imported"] is False and again["already_present"] is True
    assert again["rows"] > 0 and again["blobs"] > 0
    assert "already present" in ok(artemis("sessions", "import", str(bundle), "--data-dir", str(theirs))).stdout


def test_a_tampered_bundle_exits_2_naming_the_member(recorded: str, tmp_path: Path) -> None:
    bundle = tmp_path / "run.artemis"
    ok(artemis("sessions", "export", recorded, "--format", "bundle", "-o", str(bundle)))
    with zipfile.ZipFile(bundle) as zf:
        content = {n: zf.read(n) for n in zf.namelist()}
    member = next(n for n in content if n.startswith("blobs/"))
    content[member] = content[member][:-1] + bytes([content[member][-1] ^ 1])
    bad = tmp_path / "bad.artemis"
    with zipfile.ZipFile(bad, "w") as zf:
        for name, data in content.items():
            zf.writestr(name, data)
    theirs = tmp_path / "colleague"
    proc = artemis("sessions", "import", str(bad), "--data-dir", str(theirs))
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert f"member {member} does not match its SHA-256" in proc.stderr
    assert json.loads(ok(artemis("sessions", "list", "--json", "--data-dir", str(theirs))).stdout) == []


def test_export_needs_a_file_and_import_a_bundle(recorded: str, tmp_path: Path) -> None:
    proc = artemis("sessions", "export", recorded, "--format", "bundle")
    assert proc.returncode == 2 and "pass -o FILE" in proc.stderr
    text = tmp_path / "steps.jsonl"
    ok(artemis("sessions", "export", recorded, "-o", str(text)))
    proc = artemis("sessions", "import", str(text), "--data-dir", str(tmp_path / "x"))
    assert proc.returncode == 2 and "not an Artemis session bundle" in proc.stderr
    proc = artemis("sessions", "export", recorded, "--format", "tar")
    assert proc.returncode == 2 and "bundle" in proc.stderr


def test_same_id_different_content_is_refused(recorded: str, tmp_path: Path) -> None:
    bundle = tmp_path / "run.artemis"
    ok(artemis("sessions", "export", recorded, "--format", "bundle", "-o", str(bundle)))
    from artemis_cli.engine import DataEngine, SessionRecord

    theirs = tmp_path / "colleague"
    with DataEngine.open(theirs) as engine:
        engine.create_session(SessionRecord(id=recorded, goal="another run that got the same id"))
    proc = artemis("sessions", "import", str(bundle), "--data-dir", str(theirs))
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert f"session {recorded} already exists" in proc.stderr and "not merged" in proc.stderr
    assert "artemis sessions rm" in proc.stderr
