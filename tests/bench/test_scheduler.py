"""The one scheduler (artemis_cli.bench.scheduler) on its local backend, with a tiny runner and no
phone: idle handout, a dropped device's item re-queued once at the front, unfinished items when no
device is left, and Ctrl-C stopping every worker."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from artemis_cli.bench.parallel import DeviceSlot
from artemis_cli.bench.scheduler import SchedulerEvents, WorkItem, run_items
from artemis_cli.errors import DeviceOffline

HERE = Path(__file__).resolve().parent


def tiny(job: dict[str, Any], device: str, work_dir: Path, on_step: Any) -> dict[str, Any]:
    """A runner with no phone: ``job["steps"]`` steps of ``job["sleep"]`` s; drops on ``offline_on``."""
    if device in job.get("offline_on", ()):
        raise DeviceOffline(f"{device} went away")
    work_dir.mkdir(parents=True, exist_ok=True)
    for i in range(1, int(job.get("steps", 1)) + 1):
        time.sleep(float(job.get("sleep", 0.0)))
        on_step(i)
    return {"steps": int(job.get("steps", 1)), "pid": os.getpid()}


class Log(SchedulerEvents):
    def __init__(self) -> None:
        self.starts: list[tuple[str, str]] = []
        self.requeues: list[tuple[str, str]] = []
        self.notes: list[str] = []

    def start(self, item: WorkItem, device: str) -> None:
        self.starts.append((device, item.key))
        print(f"started {item.key} on {device}", flush=True)

    def requeued(self, item: WorkItem, device: str, why: str) -> None:
        self.requeues.append((device, item.key))

    def note(self, device: str, text: str) -> None:
        self.notes.append(text)


def _items(tmp: Path, jobs: list[dict[str, Any]]) -> list[WorkItem]:
    return [WorkItem(f"i{n}", f"item {n}", job, tmp / f"i{n}") for n, job in enumerate(jobs, 1)]


def test_idle_handout_and_a_dropped_devices_item_requeued_once_at_the_front(tmp_path: Path) -> None:
    log = Log()
    items = _items(tmp_path, [{"offline_on": ["a"]}, {"steps": 3, "sleep": 0.5}, {}])
    result = run_items(items, tiny, devices=[DeviceSlot("a", "a"), DeviceSlot("b", "b")], events=log)
    assert result.unfinished == [] and not result.interrupted
    assert sorted(log.starts[:2]) == [("a", "i1"), ("b", "i2")]  # each idle device got the next item
    assert [k for d, k in log.starts if d == "b"] == ["i2", "i1", "i3"]  # i1 jumped the queue, ahead of i3
    assert log.requeues == [("a", "i1")]
    moved = result.rows["i1"]
    assert moved["device"] == "b" and moved["attempts"] == 2 and moved["requeued_from"] == "a"
    assert moved["interruptions"][0]["device"] == "a" and "went away" in moved["interruptions"][0]["reason"]
    assert result.rows["i3"]["attempts"] == 1 and result.rows["i3"]["requeued_from"] is None
    assert result.devices["a"]["dropped"] and result.devices["a"]["items"] == 0
    assert result.devices["b"]["items"] == 3 and result.devices["b"]["dropped"] is None


def test_with_no_device_left_the_items_are_unfinished(tmp_path: Path) -> None:
    log = Log()
    items = _items(tmp_path, [{"offline_on": ["a"]}, {}])
    result = run_items(items, tiny, devices=[DeviceSlot("a", "a")], events=log)
    assert result.rows == {} and result.unfinished == ["i1", "i2"]
    assert "no other device" in result.unfinished_detail["i1"]["reason"]
    assert result.unfinished_detail["i1"]["attempts"] == 1
    assert result.unfinished_detail["i2"]["reason"] == "no device left"
    assert any("not finished" in n for n in log.notes)


CTRL_C = f"""
import json, multiprocessing, sys
sys.path.insert(0, {str(HERE)!r})
from pathlib import Path
from test_scheduler import Log, tiny
from artemis_cli.bench.parallel import DeviceSlot
from artemis_cli.bench.scheduler import WorkItem, run_items
items = [WorkItem(f"i{{n}}", f"item {{n}}", {{"steps": 100, "sleep": 0.1}}, Path(sys.argv[1]) / f"i{{n}}")
         for n in range(1, 4)]
res = run_items(items, tiny, devices=[DeviceSlot("a", "a"), DeviceSlot("b", "b")], events=Log())
print(json.dumps({{"unfinished": res.unfinished, "interrupted": res.interrupted, "rows": list(res.rows),
                  "reasons": [res.unfinished_detail[k]["reason"] for k in res.unfinished],
                  "workers_alive": [p.pid for p in multiprocessing.active_children()]}}), flush=True)
"""


def test_ctrl_c_stops_every_worker_and_reports_what_was_unfinished(tmp_path: Path) -> None:
    proc = subprocess.Popen([sys.executable, "-c", CTRL_C, str(tmp_path)], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    started = 0
    while started < 2:  # both workers are busy
        line = proc.stdout.readline()
        assert line, proc.stderr.read() if proc.stderr else ""
        started += line.startswith("started ")
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=30)
    assert proc.returncode == 0, err
    res = json.loads(out.strip().splitlines()[-1])
    assert res["interrupted"] is True and res["rows"] == []
    assert sorted(res["unfinished"]) == ["i1", "i2", "i3"]
    assert sum("while running" in r for r in res["reasons"]) == 2
    assert sum("before it started" in r for r in res["reasons"]) == 1
    assert res["workers_alive"] == []  # every worker process was stopped before run_items returned
