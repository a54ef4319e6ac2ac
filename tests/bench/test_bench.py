"""artemis bench on a tiny two-task suite: schema-valid JSON, compare ratios, resume, mode growth."""

from __future__ import annotations

import itertools
import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from typer.testing import CliRunner

from artemis_cli.bench.runner import BenchConfig, run_bench
from artemis_cli.bench.validate import errors, schema, validate_results
from artemis_cli.cli.app import app
from artemis_cli.errors import UsageError

SETTINGS_ROUND = [
    {"tap": {"text": "Network & internet"}},
    {"tap": {"id": "wifi_switch"}},
    {"key": "back"},
    {"tap": {"text": "Display"}},
    {"tap": {"id": "dark_theme_switch"}},
    {"key": "back"},
]


def _write_suite(root: Path) -> Path:
    suite = root / "suite"
    suite.mkdir()
    toggles = {
        "id": "tiny-toggles", "goal": "Toggle Wi-Fi and dark theme three times", "app": "com.android.settings",
        "max_steps": 40, "sim": {"world": "default", "seed": 1, "popups": False},
        "success": [{"shell": "settings get global wifi_on", "equals": "0"}],
        "reference": [*SETTINGS_ROUND * 3, {"finish": {"success": True}}],
    }
    note = {
        "id": "tiny-note", "goal": "Write a note", "app": "com.artemis.notes", "max_steps": 20,
        "sim": {"world": "default", "seed": 2, "popups": False},
        "success": [{"shell": "content query --uri content://com.artemis.notes/notes --where \"title='Heron'\"",
                     "contains": "body=Blue heron at the pond"}],
        "reference": [{"tap": {"text": "New note"}}, {"type": {"text": "Heron", "into": {"id": "title"}}},
                      {"type": {"text": "Blue heron at the pond", "into": {"id": "body"}}},
                      {"note": {"key": "bird", "content": "Blue heron at the pond"}},
                      {"tap": {"desc": "Save note"}}, {"finish": {"success": True}}],
    }
    for t in (toggles, note):
        (suite / f"{t['id']}.yaml").write_text(yaml.safe_dump(t, sort_keys=False), encoding="utf-8")
    return suite


@pytest.fixture(scope="module")
def bench(tmp_path_factory: pytest.TempPathFactory) -> tuple[BenchConfig, dict[str, Any]]:
    root = tmp_path_factory.mktemp("bench")
    config = BenchConfig(suite=_write_suite(root), out=root / "r.json", synthetic_steps=25, recall_steps=60)
    return config, run_bench(config)


def test_results_validate_and_have_the_mode_figures(bench: tuple[BenchConfig, dict[str, Any]]) -> None:
    _config, results = bench
    validate_results(results)
    assert set(results["modes"]) == {"transcript", "legacy", "naive"}
    for mode, agg in results["modes"].items():
        assert agg["success_share"] == 1.0, mode
        assert agg["fidelity_share"] == 1.0, mode  # the note and the typed texts are all answerable
        assert agg["recall_ms_p50_10k"] is not None and agg["recall_ms_p50_10k"] > 0
    assert results["modes"]["transcript"]["overhead_ms_p50_step1000"] is not None
    assert len(results["tasks"]) == 6


def test_schema_rejects_a_broken_file(bench: tuple[BenchConfig, dict[str, Any]]) -> None:
    _config, results = bench
    broken = json.loads(json.dumps(results))
    del broken["modes"]["naive"]["cached_token_share"]
    broken["modes"]["legacy"]["success_share"] = 2
    problems = errors(broken, schema())
    assert any("naive" in p and "cached_token_share" in p for p in problems)
    assert any("legacy.success_share" in p for p in problems)
    with pytest.raises(UsageError):
        validate_results(broken)


def test_naive_keeps_every_image_while_transcript_stays_bounded(bench: tuple[BenchConfig, dict[str, Any]]) -> None:
    _config, results = bench
    rows = {(t["task"], t["mode"]): t for t in results["tasks"]}
    naive = [p for _, p in rows[("tiny-toggles", "naive")]["prompt_tokens_per_step"]]
    transcript = [p for _, p in rows[("tiny-toggles", "transcript")]["prompt_tokens_per_step"]]
    # every naive step adds at least one more screenshot (258+ tokens) to the prompt
    assert all(b - a >= 258 for a, b in itertools.pairwise(naive))
    assert naive[-1] > 3 * transcript[-1]
    # transcript: the later steps are no bigger than 1.5x the prompt at step 5 (scrubbed images)
    assert max(transcript[5:]) < 1.5 * transcript[4]


def test_resume_skips_finished_pairs(bench: tuple[BenchConfig, dict[str, Any]]) -> None:
    config, first = bench
    seen: list[tuple[str, str, bool]] = []
    from artemis_cli.bench.runner import Progress

    again = run_bench(config, Progress(on_pair_done=lambda t, m, row: seen.append((t, m, row is None))))
    assert len(seen) == 6 and all(resumed for *_, resumed in seen)
    assert again["tasks"] == first["tasks"]


def test_cli_writes_json_and_svg_and_compare_prints_ratios(bench: tuple[BenchConfig, dict[str, Any]],
                                                           tmp_path: Path) -> None:
    config, _results = bench
    runner = CliRunner()
    out = config.out  # its state file holds every pair: the CLI run resumes them all
    res = runner.invoke(app, ["bench", "run", str(config.suite), "--out", str(out), "--synthetic-steps", "25",
                              "--recall-steps", "60"])
    assert res.exit_code == 0, res.output
    assert "steady-state" in res.output and "≥ 90%" in res.output
    data = json.loads(out.read_text())
    validate_results(data)
    svg = out.with_suffix(".svg").read_text()
    assert svg.startswith("<svg") and svg.count("<polyline") == 3
    other = json.loads(json.dumps(data))
    other["modes"]["transcript"]["prompt_tokens_max"] = data["modes"]["transcript"]["prompt_tokens_max"] * 2
    b = tmp_path / "b.json"
    b.write_text(json.dumps(other))
    res = runner.invoke(app, ["bench", "compare", str(out), str(b)])
    assert res.exit_code == 0, res.output
    assert "2.000×" in res.output and "1.000×" in res.output


def test_unknown_mode_is_a_usage_error(tmp_path: Path) -> None:
    with pytest.raises(UsageError):
        BenchConfig(suite=tmp_path, out=tmp_path / "r.json", modes=["transcript", "bogus"]).check()
