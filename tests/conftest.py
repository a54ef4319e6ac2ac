"""Shared fixtures. Every test gets its own data dir (never the user's real one)."""

from __future__ import annotations

from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
SHARED = REPO.parent / "shared"


@pytest.fixture(autouse=True)
def _isolated_data_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "artemis-home"
    monkeypatch.setenv("ARTEMIS_HOME", str(home))
    for key in ("GEMINI_API_KEY", "GOOGLE_API_KEY", "ANDROID_SERIAL", "ARTEMIS_DEBUG"):
        monkeypatch.delenv(key, raising=False)
    return home


@pytest.fixture
def data_home(_isolated_data_dir: Path) -> Path:
    return _isolated_data_dir


@pytest.fixture(scope="session")
def real_dumps_dir() -> Path:
    """UI dumps from real apps: ../shared/fixtures/real-dumps (copied into fixtures/ too)."""
    local = REPO / "fixtures" / "real-dumps"
    return local if local.is_dir() else SHARED / "fixtures" / "real-dumps"
