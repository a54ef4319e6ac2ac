"""`artemis apps` on the in-process simulated phone: plain rows when stdout is not a terminal,
and usage errors exit 2 (the served, real-adb path is tests/adbd/test_apps_cli.py)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def artemis(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "artemis_cli", *args], cwd=REPO, capture_output=True, text=True,
                          timeout=120)


def test_apps_on_the_sim_lists_its_apps_and_resolves_names() -> None:
    listing = artemis("apps", "--device", "sim")
    assert listing.returncode == 0, listing.stderr
    assert listing.stdout.splitlines() == ["com.android.settings", "com.android.deskclock", "com.android.contacts",
                                           "com.artemis.notes", "com.artemis.shop"]
    res = artemis("apps", "--device", "sim", "--json", "Clock", "notes", "Gmail")
    doc = json.loads(res.stdout)
    assert doc["device"] == "sim"
    assert [(r["query"], r["package"], r["how"]) for r in doc["results"]] == [
        ("Clock", "com.android.deskclock", "alias"), ("notes", "com.artemis.notes", "fuzzy"), ("Gmail", None, "none")]


def test_apps_usage_errors_exit_2() -> None:
    res = artemis("apps", "--device", "", "Clock")
    assert res.returncode == 2 and "empty --device" in res.stderr
    res = artemis("apps", "--device", "sim:nowhere")
    assert res.returncode == 2 and "unknown sim world" in res.stderr
