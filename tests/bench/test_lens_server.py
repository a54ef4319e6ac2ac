"""``bench run --lens server``: lens calls go to the fake server, whose stub policy answers them with
text derived from each request, and the stored summaries are labelled as stub text — never with a
real model's name. The default (mechanical) is covered in test_bench.py."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from artemis_cli.bench.runner import run_pair
from artemis_cli.config.profile import load_profile
from artemis_cli.config.task import Task
from artemis_cli.engine.db import DataEngine
from artemis_cli.memory.chunk_store import newest_chunks
from artemis_cli.memory.lens import check_lens_output
from artemis_cli.models.offline.scripted import STUB_CHUNK_LENS_MODEL, STUB_LENS_MODEL

ROUND = [{"tap": {"text": "Network & internet"}}, {"tap": {"id": "wifi_switch"}}, {"key": "back"},
         {"tap": {"text": "Display"}}, {"tap": {"id": "dark_theme_switch"}}, {"key": "back"}]


@pytest.fixture(scope="module")
def server_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict[str, Any], Path]:
    task = Task.model_validate({
        "id": "lens-server", "goal": "Toggle Wi-Fi and dark theme three times", "app": "com.android.settings",
        "max_steps": 40, "sim": {"world": "default", "seed": 3, "popups": False},
        "reference": [*ROUND * 3, {"finish": {"success": True}}],
    })
    data = tmp_path_factory.mktemp("lens-server") / "d"
    row = run_pair(task, "transcript", load_profile("flash"), "scripted", data, lens="server")
    return row, data


def _steps(row: dict[str, Any]) -> list[Any]:
    with DataEngine.open_for_reading(row["data_dir"]) as reader:
        return reader.get_steps(row["session_id"])


def test_server_lens_summaries_are_stub_text_derived_from_each_request(
        server_run: tuple[dict[str, Any], Path]) -> None:
    row, _ = server_run
    assert row["success"] and row["lens"] == "server (fake-server stub text)"
    ready = [s for s in _steps(row) if s.summary_status == "ready"]
    assert len(ready) >= 15
    for step in ready:
        assert step.summary_source == "visual_lens"
        assert check_lens_output(step.summary or "") == step.summary
        assert "Stub text from the fake server" in (step.summary or "")
        # the recorded action reaches the stub (the request says "ACTION TAKEN:", not "ACTION:")
        assert "for the recorded action" in (step.summary or ""), step.summary
    taps = [s for s in ready if s.action_type == "tap"]
    assert any("wifi_switch" in (s.summary or "") for s in taps)
    # not one canned sentence for every step: the six different actions of a round (and the
    # finish) each get their own text; the three rounds repeat them
    assert len({s.summary for s in ready}) >= 7
    with DataEngine.open_for_reading(row["data_dir"]) as reader:
        roles = {c.role for c in reader.llm_calls(row["session_id"])}
        chunks = [c for c in newest_chunks(reader, row["session_id"]) if c.status == "ready"]
    assert {"operator", "lens", "chunk_lens"} <= roles
    assert chunks and all("Stub chunk summary" in (c.band1 or {}).get("purpose", "") for c in chunks)
    assert all("from tap" in (c.band2 or "") or "from press" in (c.band2 or "") for c in chunks), chunks[0].band2


def test_server_lens_summaries_never_carry_a_real_model_name(server_run: tuple[dict[str, Any], Path]) -> None:
    row, _ = server_run
    ready = [s for s in _steps(row) if s.summary_status == "ready"]
    assert ready and {s.summary_model for s in ready} == {STUB_LENS_MODEL}
    with DataEngine.open_for_reading(row["data_dir"]) as reader:
        chunks = [c for c in newest_chunks(reader, row["session_id"]) if c.status == "ready"]
    assert chunks and {c.source for c in chunks} == {f"chunk_lens:{STUB_CHUNK_LENS_MODEL}"}
