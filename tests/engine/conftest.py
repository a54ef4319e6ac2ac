"""Engine test fixtures: a real DataEngine in tmp_path (no mocks)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from artemis_cli.engine import DataEngine, SessionRecord


@pytest.fixture
def data_dir(tmp_path: Path) -> Path:
    return tmp_path / "data"


@pytest.fixture
def engine(data_dir: Path) -> Iterator[DataEngine]:
    eng = DataEngine.open(data_dir)
    try:
        yield eng
    finally:
        eng.close()


@pytest.fixture
def session_id(engine: DataEngine) -> str:
    return engine.create_session(SessionRecord(goal="Turn on Wi-Fi", task_id="settings-wifi-on"))
