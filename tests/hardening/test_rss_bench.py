"""benchmarks/rss.py end to end: a short run of the Artemis CLI in a child process against the fake
Gemini server; the figures exist, are positive and the blob-dedup figures are consistent.
No RSS or speed thresholds here (SPEC §14: targets live in the benchmark's printout)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[2]
STEPS = 110  # past rss.py's step-100 mark, so that mark is read mid-run
EVERY = 50


@pytest.fixture(scope="module")
def figures(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    data_dir = tmp_path_factory.mktemp("rss")
    proc = subprocess.run(
        [sys.executable, str(REPO / "benchmarks" / "rss.py"), "--steps", str(STEPS), "--sample-every", str(EVERY),
         "--json", "--data-dir", str(data_dir)],
        capture_output=True, text=True, timeout=300, cwd=REPO,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    data: dict[str, Any] = json.loads(proc.stdout)
    return data


def test_run_reaches_every_step(figures: dict[str, Any]) -> None:
    assert figures["exit_code"] == 0, figures.get("stderr_tail")
    assert figures["status"] == "succeeded"
    assert figures["steps"] == STEPS
    assert figures["elapsed_s"] > 0 and figures["steps_per_s"] > 0


def test_rss_figures_exist_and_are_positive(figures: dict[str, Any]) -> None:
    for key in ("rss_mb_step100", "rss_mb_step1000", "rss_ratio", "rss_mb_peak_exit"):
        assert isinstance(figures[key], int | float) and figures[key] > 0, key
    # peak RSS never decreases; when the last figure came from wait4 (the child exited before the
    # poller read /proc), ru_maxrss is counted differently from VmHWM and is not compared
    if figures["rss_last_source"] != "wait4_ru_maxrss":
        assert figures["rss_mb_step1000"] >= figures["rss_mb_step100"]


def test_rss_series_every_n_steps(figures: dict[str, Any]) -> None:
    series = figures["rss_series"]
    expected = sorted({*range(EVERY, STEPS + 1, EVERY), STEPS})  # every N steps, and the last
    sampled = [s["step"] for s in series]
    # the last step can be committed just before the child exits: then /proc has nothing left to
    # read and the last figure is the lifetime peak from wait4, which the output says
    assert sampled == expected or (sampled == expected[:-1] and figures["rss_last_source"] == "wait4_ru_maxrss")
    for s in series:
        assert 0 < s["vmrss_mb"] <= s["vmhwm_mb"]
    peaks = [s["vmhwm_mb"] for s in series]
    assert peaks == sorted(peaks)


def test_dedup_figures_are_consistent(figures: dict[str, Any]) -> None:
    # every step records a pre and a post screenshot and UI dump (post = pre on the finish step)
    assert figures["screenshots_recorded"] == 2 * STEPS
    assert figures["xml_refs"] == 2 * STEPS
    # the chore revisits the home screen and the same app screens: identical bytes are stored once
    assert 0 < figures["screenshot_blobs"] < figures["screenshots_recorded"]
    assert 0 < figures["xml_blobs"] < figures["xml_refs"]
    assert figures["blob_rows_by_kind"]["screenshot"] == figures["screenshot_blobs"]
    assert figures["blob_rows_by_kind"]["ui_xml"] == figures["xml_blobs"]
    assert figures["blob_bytes_on_disk"] == figures["blob_bytes_recorded"] > 0
    refs = figures["screenshots_recorded"] + figures["xml_refs"]
    assert figures["dedup_ratio"] == round(refs / (figures["screenshot_blobs"] + figures["xml_blobs"]), 2)
    assert figures["dedup_ratio"] > 1


def test_every_cache_is_printed_within_its_bound(figures: dict[str, Any]) -> None:
    """The child's caches at exit (rss_child.py), last in the output with the ratio after them."""
    caches = figures["caches"]
    assert {"perception.ui_trees", "models.image_sha256", "sim.screen_pngs"} <= set(caches)
    for name, cache in caches.items():
        assert 0 <= cache["bytes"] <= cache["max_bytes"], name
        assert cache["entries"] >= 0 and (cache["bytes"] > 0) == (cache["entries"] > 0), name
    assert caches["perception.ui_trees"]["entries"] > 0 and caches["models.image_sha256"]["entries"] > 0
    assert list(figures)[-2:] == ["caches", "rss_ratio_last"]
    assert figures["rss_ratio_last"] == figures["rss_ratio"]
