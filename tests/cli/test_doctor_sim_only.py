"""``artemis doctor`` for a setup that only uses the simulated phone (issue 23 item 12): with no adb
binary and no API key it exits 0 and says which checks do not apply; ``--device SERIAL`` still
needs adb and ``--model gemini…`` still needs the key. The real CLI in a subprocess whose PATH
holds no adb; adb rows point at a port where nothing listens (never the default server)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from artemis_cli.models.fakes.gemini import FakeGeminiServer
from artemis_cli.models.offline.scripted import script_policy

REPO = Path(__file__).resolve().parents[2]
KEYS = ("GEMINI_API_KEY", "GOOGLE_API_KEY", "OPENAI_API_KEY", "ARTEMIS_GEMINI_BASE_URL", "GOOGLE_GEMINI_BASE_URL",
        "ARTEMIS_OPENAI_BASE_URL", "ANDROID_SERIAL")


def doctor(tmp_path: Path, *args: str, adb: bool = False, text: bool = False,
           **extra: str) -> tuple[subprocess.CompletedProcess[str], dict[str, Any]]:
    """``doctor --json`` (and, with ``text``, the same doctor's printed rows; else an empty stdout)."""
    env = {k: v for k, v in os.environ.items() if k not in KEYS}
    empty = tmp_path / "bin"
    empty.mkdir(exist_ok=True)
    env["PATH"] = os.environ["PATH"] if adb else str(empty)  # no adb on PATH unless asked
    env["ANDROID_ADB_SERVER_PORT"] = "1"  # nothing listens there
    env["ARTEMIS_HOME"] = str(tmp_path / "home")
    env.update(extra)
    run = [sys.executable, "-m", "artemis_cli", "doctor", *args]
    data = subprocess.run([*run, "--json"], cwd=REPO, env=env, capture_output=True, text=True, timeout=120)
    printed = subprocess.run(run, cwd=REPO, env=env, capture_output=True, text=True, timeout=120) if text \
        else subprocess.CompletedProcess(run, data.returncode, "", "")
    assert "Traceback" not in printed.stderr + data.stderr, printed.stderr + data.stderr
    payload = json.loads(data.stdout)
    assert data.returncode == printed.returncode == (0 if payload["ok"] else 1)
    return printed, payload


def rows(payload: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {c["check"]: c for c in payload["checks"]}


def test_no_adb_and_no_key_is_fine_for_the_simulated_phone(tmp_path: Path) -> None:
    text, payload = doctor(tmp_path, text=True)
    assert text.returncode == 0, text.stdout
    got = rows(payload)
    assert got["real devices"]["level"] == "n/a" and got["real devices"]["ok"] is True
    assert got["Gemini"]["level"] == "n/a" and "API key" not in got and "adb binary" not in got
    assert "– real devices: adb not installed — not needed for the simulated phone" in text.stdout
    assert "– Gemini: no GEMINI_API_KEY — offline models only" in text.stdout
    assert text.stdout.rstrip().endswith("All good. Not needed here: real devices, Gemini.")
    assert doctor(tmp_path, "--device", "sim")[0].returncode == 0


def test_a_serial_still_needs_adb(tmp_path: Path) -> None:
    text, payload = doctor(tmp_path, "--device", "emulator-5554")
    assert text.returncode == 1
    failed = [c["check"] for c in payload["checks"] if not c["ok"]]
    assert failed == ["adb binary"] and "emulator-5554" in rows(payload)["adb binary"]["detail"]


def test_a_serial_with_no_adb_server_says_the_fix_once(tmp_path: Path) -> None:
    text, payload = doctor(tmp_path, "--device", "emulator-5554", adb=True, text=True)
    assert text.returncode == 1
    assert [c["check"] for c in payload["checks"] if not c["ok"]] == ["adb server"]
    assert text.stdout.count("adb start-server") == 1, text.stdout  # the fix line, printed once
    # without --device the same machine is fine: the server is not needed for the simulated phone
    text, payload = doctor(tmp_path, adb=True, text=True)
    assert text.returncode == 0 and rows(payload)["adb server"]["level"] == "n/a"
    assert text.stdout.count("adb start-server") == 1, text.stdout


def test_a_gemini_model_still_needs_the_key(tmp_path: Path) -> None:
    text, payload = doctor(tmp_path, "--model", "gemini-2.5-flash")
    assert text.returncode == 1
    assert [c["check"] for c in payload["checks"] if not c["ok"]] == ["API key"]


@pytest.mark.parametrize(("name", "ok"), [("gemini-2.5-flash", True), ("gemini-nosuch", False)])
def test_a_gemini_model_is_asked_for_with_the_key(tmp_path: Path, name: str, ok: bool) -> None:
    with FakeGeminiServer(script_policy([]), models=["gemini-2.5-flash"]) as server:
        text, payload = doctor(tmp_path, "--model", name, GEMINI_API_KEY="test-key",
                               ARTEMIS_GEMINI_BASE_URL=server.base_url)
    row = rows(payload)["Gemini model"]
    assert row["ok"] is ok and text.returncode == (0 if ok else 1), text.stdout
    if not ok:
        assert "does not serve 'gemini-nosuch'" in row["detail"] and "NOT_FOUND" not in row["hint"]
    assert server.requests == []  # models.get only: no generateContent was spent
