"""``artemis bench run --devices``: pairs on several devices at once, one worker process each; a
device that drops has its in-flight pair re-queued once on another device."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from artemis_cli.bench.parallel import DeviceSlot, parse_devices
from artemis_cli.bench.runner import BenchConfig, Progress, run_suite_on_devices
from artemis_cli.bench.suite import load_suite
from artemis_cli.bench.validate import validate_results
from artemis_cli.bench.worker import PairJob, jobs_for, run_pair_job
from artemis_cli.errors import UsageError
from artemis_cli.sim.adbd import free_port

REPO = Path(__file__).resolve().parents[2]
#: two short tasks (3 and 6 reference steps)
SHORT = ("notes-new.yaml", "settings-dark-theme.yaml")


@pytest.fixture
def suite(tmp_path: Path) -> Path:
    folder = tmp_path / "suite"
    folder.mkdir()
    for name in SHORT:
        shutil.copy(REPO / "tasks" / name, folder / name)
    return folder


def _bench(suite: Path, out: Path, devices: str, env: dict[str, str] | None = None,
           timeout: float = 120) -> subprocess.CompletedProcess[str]:
    cmd = [sys.executable, "-m", "artemis_cli", "bench", "run", str(suite), "--memory", "transcript",
           "--devices", devices, "--synthetic-steps", "20", "--recall-steps", "10", "--out", str(out)]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, cwd=out.parent,
                          env={**os.environ, "ARTEMIS_HOME": str(out.parent / "home"), "COLUMNS": "120",
                               **(env or {})})


def _no_adb_server() -> dict[str, str]:
    """An adb server port nothing listens on: a serial there is offline at once (and the
    developer's own adb server on 5037 is never touched)."""
    return {"ANDROID_ADB_SERVER_HOST": "127.0.0.1", "ANDROID_ADB_SERVER_PORT": str(free_port())}


def test_parse_devices() -> None:
    assert [d.name for d in parse_devices("sim*2")] == ["sim#1", "sim#2"]
    assert parse_devices("sim") == [DeviceSlot("sim", "sim")]
    assert [d.name for d in parse_devices(["sim", "127.0.0.1:7555", "sim*2"])] == [
        "sim#1", "127.0.0.1:7555", "sim#2", "sim#3"]
    for bad in ("", "sim*0", "sim*x", "sim:shop", "a,a"):
        with pytest.raises(UsageError):
            parse_devices(bad)


def test_sim_x2_runs_both_pairs_and_names_the_devices(suite: Path, tmp_path: Path) -> None:
    out = tmp_path / "r.json"
    res = _bench(suite, out, "sim*2")
    assert res.returncode == 0, res.stdout + res.stderr
    data = json.loads(out.read_text())
    validate_results(data)
    assert data["devices"] == ["sim#1", "sim#2"]
    rows = {r["task"]: r for r in data["tasks"]}
    assert set(rows) == {"notes-new-note", "settings-dark-theme"}
    assert {r["device"] for r in rows.values()} == {"sim#1", "sim#2"}  # one pair each: both idle at the start
    for r in rows.values():
        assert r["success"] and r["attempts"] == 1 and r["requeued_from"] is None
        assert r["session_id"] and Path(r["data_dir"]) == tmp_path / "r-sessions" / f"{r['task']}-transcript"
    assert data["unfinished"] == []
    assert all(s["pairs"] == 1 and s["dropped"] is None for s in data["device_stats"].values())
    # resume: both pairs come from the state file, and the results are the same
    again = _bench(suite, out, "sim*2")
    assert again.returncode == 0, again.stdout + again.stderr
    assert again.stdout.count("resumed:") == 2
    assert json.loads(out.read_text())["tasks"] == data["tasks"]


def test_a_dropped_device_has_its_pair_requeued_on_another(suite: Path, tmp_path: Path) -> None:
    out = tmp_path / "r.json"
    res = _bench(suite, out, "127.0.0.1:1,sim", env=_no_adb_server())
    assert res.returncode == 0, res.stdout + res.stderr
    data = json.loads(out.read_text())
    validate_results(data)
    assert data["devices"] == ["127.0.0.1:1", "sim"]
    rows = {r["task"]: r for r in data["tasks"]}
    moved = rows["notes-new-note"]  # the first pair, handed to the first device
    assert moved["device"] == "sim" and moved["success"]
    assert moved["attempts"] == 2 and moved["requeued_from"] == "127.0.0.1:1"
    assert moved["interruptions"][0]["device"] == "127.0.0.1:1"
    assert rows["settings-dark-theme"]["attempts"] == 1
    assert "offline" in (data["device_stats"]["127.0.0.1:1"]["dropped"] or "").lower()
    assert "re-queued" in res.stdout


def test_no_device_left_reports_the_pairs_and_exits_3(suite: Path, tmp_path: Path) -> None:
    out = tmp_path / "r.json"
    res = _bench(suite, out, "127.0.0.1:1,127.0.0.1:2", env=_no_adb_server())
    assert res.returncode == 3, res.stdout + res.stderr
    data = json.loads(out.read_text())
    assert data["tasks"] == [] and len(data["unfinished"]) == 2
    for u in data["unfinished"]:  # interrupted on its device; re-queued only while the other was up
        assert u["attempts"] in (1, 2) and u["interruptions"] and u["reason"]
    assert "did not finish" in res.stdout


def _dies_on_sim1(job: PairJob, device: str, work_dir: Path, on_step: Any = None) -> dict[str, Any]:
    """A runner whose worker process dies outright on device sim#1 (no exception, no goodbye)."""
    if device == "sim#1":
        os._exit(9)
    return run_pair_job(job, device, work_dir, on_step=on_step)


def test_a_worker_that_dies_on_its_first_pair_has_it_requeued(suite: Path, tmp_path: Path) -> None:
    config = BenchConfig(suite=suite, out=tmp_path / "r.json", modes=["transcript"], devices=["sim*2"])
    tasks = load_suite(suite)
    state: dict[str, Any] = {"pairs": {}, "synthetic": {}}
    notes: list[tuple[str, str]] = []
    extra = run_suite_on_devices(config, tasks, state, Progress(on_device_note=lambda d, t: notes.append((d, t))),
                                 save=lambda: None, runner=_dies_on_sim1)
    assert extra["unfinished"] == []
    rows = state["pairs"]
    assert set(rows) == {"notes-new-note|transcript", "settings-dark-theme|transcript"}
    assert all(r["device"] == "sim#2" for r in rows.values())
    moved = rows["notes-new-note|transcript"]
    assert moved["attempts"] == 2 and moved["requeued_from"] == "sim#1"
    assert "died" in extra["device_stats"]["sim#1"]["dropped"]
    assert any("re-queued" in text for _d, text in notes)


def test_jobs_for_and_run_pair_job_contract(suite: Path, tmp_path: Path) -> None:
    config = BenchConfig(suite=suite, out=tmp_path / "r.json", modes=["transcript", "naive"])
    jobs = jobs_for(config)
    assert [(Path(j.task_file).name, j.mode) for j in jobs] == [
        ("notes-new.yaml", "transcript"), ("notes-new.yaml", "naive"),
        ("settings-dark-theme.yaml", "transcript"), ("settings-dark-theme.yaml", "naive")]
    assert all(Path(j.task_file).is_absolute() and j.model_kind == "scripted" for j in jobs)
    row = run_pair_job(jobs[2], "sim", tmp_path / "pair")
    assert row["device"] == "sim" and row["session_id"] and row["success"]
    assert row["data_dir"] == str(tmp_path / "pair")
