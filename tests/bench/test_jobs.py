"""``bench run --jobs N``: the pairs and the synthetic runs go through the one scheduler to N
worker processes, the longest first, and land where the one-process bench puts them."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from artemis_cli.bench.runner import BenchConfig, Progress, run_suite_on_devices
from artemis_cli.bench.suite import load_suite
from artemis_cli.bench.worker import SyntheticJob

SUITE = Path(__file__).resolve().parents[2] / "tasks" / "bench"


def instant(job: Any, device: str, work_dir: Path, on_step: Any = None) -> dict[str, Any]:
    """A runner with no phone (module level: the spawned workers import it)."""
    if isinstance(job, SyntheticJob):
        return {"kind": job.kind, "steps": job.steps, "wall_s": 0.0, "device": device}
    return {"session_id": "s", "mode": job.mode, "success": True, "steps": 1, "wall_s": 0.0, "device": device}


def test_jobs_run_pairs_and_synthetic_runs_in_workers_longest_first(tmp_path: Path) -> None:
    config = BenchConfig(suite=SUITE, out=tmp_path / "r.json", modes=["transcript", "naive"], jobs=2,
                         tasks=["bench-fact-recall", "bench-shop-restock"], synthetic_steps=50, recall_steps=10)
    assert config.local_devices() == ["sim*2"]
    state: dict[str, Any] = {"pairs": {}, "synthetic": {"recall|10": {"kept": True}}}  # resumed: not run again
    started: dict[str, list[str]] = {}
    extra = run_suite_on_devices(config, load_suite(SUITE, only=config.tasks), state,
                                 Progress(on_device_start=lambda dev, task, mode, n: started.setdefault(dev, []).append(
                                     f"{task}|{mode}")),
                                 save=lambda: None, runner=instant)
    assert extra["unfinished"] == [] and len(extra["device_stats"]) == 2
    assert set(state["pairs"]) == {f"{t}|{m}" for t in config.tasks or [] for m in config.modes}
    assert set(state["synthetic"]) == {"overhead|transcript|50", "recall|10"}
    assert state["synthetic"]["overhead|transcript|50"]["kind"] == "overhead"
    assert state["synthetic"]["recall|10"] == {"kept": True}
    # handed out longest first: the 530-step naive pair (it re-sends every screenshot), the
    # 530-step transcript pair, the 62-step naive and transcript pairs, the 50-step synthetic run
    order = ["bench-fact-recall|naive", "bench-fact-recall|transcript", "bench-shop-restock|naive",
             "bench-shop-restock|transcript", "synthetic 50-step run (transcript)|transcript"]
    assert sorted(run for runs in started.values() for run in runs) == sorted(order)
    firsts = {runs[0] for runs in started.values()}
    assert "bench-fact-recall|naive" in firsts or "bench-fact-recall|transcript" in firsts, started
    for runs in started.values():  # each worker took its items in queue order
        assert runs == sorted(runs, key=order.index), started
